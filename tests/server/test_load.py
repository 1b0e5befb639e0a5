#!/usr/bin/env python3
"""test_load.py - 64 parallel clients: every answer equals the answer the
same request gets alone, while the scheduler really batches them together
(mean batch size > 1 in /metrics); and the cache: a repeated sentence is a
hit and skips the engine."""
import sys
import threading

from fylib import SHORT, T, Server, ZH

# 64 different requests: one or two short sentences each. Every fourth is
# one sentence alone, one the synthetic model translates to something (some
# SHORT ones it turns into nothing; s.translate checks that none is empty).
texts = [SHORT[i] + (SHORT[(i * 7 + 3) % 64] if i % 4 else "") for i in range(64)]

with Server(["--threads", "2", "--cache-mb", "0", "--timeout-ms", "600000"]) as s:
    alone = [s.translate(t) for t in texts]
    m0 = s.metrics()
    got = [None] * len(texts)
    start = threading.Barrier(len(texts))

    def client(i):
        start.wait()
        try:
            got[i] = s.translate(texts[i])
        except Exception as e:  # reported as a mismatch below
            got[i] = f"error: {e}"

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(texts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Requests are counted when MHD reports them complete, just after the
    # answer went out: wait for the last few.
    m1 = s.settled_metrics()
    bad = [g for g, a in zip(got, alone) if g != a]
    if bad:
        print("mismatches:", bad[:3], file=sys.stderr)
    same = sum(g == a for g, a in zip(got, alone))
    T.eq(same, len(texts), "answers in a crowd equal answers alone")
    batches = m1["fanyi_batch_size_count"] - m0["fanyi_batch_size_count"]
    sents = m1["fanyi_batch_size_sum"] - m0["fanyi_batch_size_sum"]
    mean = sents / batches if batches else 0
    print(f"64 clients: {sents:.0f} sentences in {batches:.0f} batches, mean batch size {mean:.2f}")
    T.ok(mean > 1, f"mean batch size {mean:.2f} > 1")
    T.eq(m1.get('fanyi_requests_total{endpoint="translate",status="200"}'), 128.0,
         "all requests counted as 200")
    T.eq(m1["fanyi_cache_hits_total"], 0.0, "cache off: no hits")

with Server(["--threads", "1", "--cache-mb", "8"]) as s:
    first = s.translate(ZH[5])
    m0 = s.metrics()
    again = s.translate(ZH[5])
    m1 = s.metrics()
    T.eq(again, first, "cached answer equals the first")
    T.eq(m1["fanyi_cache_hits_total"] - m0["fanyi_cache_hits_total"], 1.0, "one cache hit")
    T.eq(m1["fanyi_sentences_translated_total"], m0["fanyi_sentences_translated_total"],
         "a hit skips the engine")
    T.eq(m1["fanyi_sentences_cached_total"] - m0["fanyi_sentences_cached_total"], 1.0,
         "counted as cached")
    # Inside a longer text, the known sentence hits and the new one misses.
    both = s.translate(ZH[5] + ZH[6])
    m2 = s.metrics()
    T.eq(m2["fanyi_cache_hits_total"] - m1["fanyi_cache_hits_total"], 1.0, "hit inside a text")
    T.eq(m2["fanyi_sentences_translated_total"] - m1["fanyi_sentences_translated_total"], 1.0,
         "only the new sentence translated")
    T.ok(both.startswith(first), "joined text starts with the cached sentence")
    T.ok(m2["fanyi_cache_entries"] >= 2, "entries counted")
T.finish()
