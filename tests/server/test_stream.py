#!/usr/bin/env python3
"""test_stream.py - POST /translate/stream: server-sent events parsed one
by one as they arrive: one "sentence" event per sentence in order, then
"done" with the same translation POST /translate gives. With "spans": true
(both endpoints): where each sentence is in the source and the translation
in UTF-16 code units, and per event the text before it, so that the events
so far are always a prefix of the final translation."""
import http.client
import json

from fylib import T, Server, ZH, sse_events

text = ZH[0] + ZH[1] + "\n\n" + ZH[2]
with Server(["--threads", "2"]) as s:
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/stream", body=json.dumps({"text": text}).encode(),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    T.eq(r.status, 200, "stream status")
    T.ok(r.getheader("Content-Type", "").startswith("text/event-stream"), "event-stream type")
    T.ok(r.getheader("X-Request-Id"), "stream has X-Request-Id")
    events = sse_events(r)
    c.close()
    names = [e for e, _ in events]
    T.eq(names, ["sentence"] * 3 + ["done"], "three sentences then done")
    for i, (_, d) in enumerate(events[:3]):
        T.eq(sorted(d), ["index", "sentence", "source", "text", "translation"], f"event {i} fields")
        T.eq((d["index"], d["text"], d["sentence"]), (i, 0, i), f"event {i} in order")
        T.eq(d["source"], ZH[i], f"event {i} source sentence")
        T.ok(isinstance(d["translation"], str) and d["translation"], f"event {i} translation")
    whole = s.translate(text)
    T.eq(events[-1][1], {"translation": whole, "alternatives": [], "source": "zh", "target": "en"},
         "done carries the joined translation")
    # The sentences as streamed stand in the result, in order, with only the
    # text between sentences (spaces, the blank line) around them.
    at, rest = 0, whole
    for _, d in events[:3]:
        k = whole.find(d["translation"], at)
        T.ok(k >= 0 and not whole[at:k].strip(), f"streamed sentence at {at}: {d['translation']!r}")
        at = k + len(d["translation"]) if k >= 0 else at
    T.eq(at, len(whole), "nothing after the last streamed sentence")
    T.eq(events[0][1]["translation"], s.translate(ZH[0]), "sentence event = its translation")
    # An array streams with indexes across all texts, done with an array.
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/stream", body=json.dumps({"text": [ZH[3], ZH[4]]}).encode())
    ev = sse_events(c.getresponse())
    T.eq([e for e, _ in ev], ["sentence", "sentence", "done"], "array stream")
    T.eq(ev[-1][1]["translation"], [s.translate(ZH[3]), s.translate(ZH[4])], "array done")
    T.eq([(d["index"], d["text"], d["sentence"]) for _, d in ev[:2]], [(0, 0, 0), (1, 1, 0)],
         "array events: index across texts, text and sentence within it")
    # Nothing to translate: just done.
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/stream", body=json.dumps({"text": "Hello."}).encode())
    ev = sse_events(c.getresponse())
    T.eq(ev, [("done", {"translation": "Hello.", "alternatives": [], "source": "en",
                        "target": "en"})],
         "English only: done at once")
    # Spans, in UTF-16 code units (the emoji is two), and what stands
    # between sentences (a blank line, a number left as it is).
    text2 = ZH[0] + "\U0001F600" + ZH[1] + "\n\n  42\n" + ZH[2] + "\n"
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/stream", body=json.dumps({"text": text2, "spans": True}).encode())
    ev = sse_events(c.getresponse())
    done = ev[-1][1]
    whole = s.translate(text2)
    T.eq(done["translation"], whole, "spans change nothing in the translation")
    u16 = text2.encode("utf-16-le")

    def src_of(span):
        return u16[2 * span[0]:2 * (span[0] + span[1])].decode("utf-16-le")

    shown = ""
    for i, (_, d) in enumerate(ev[:-1]):
        T.eq(sorted(d), ["before", "index", "sentence", "source", "source_span", "text",
                         "translation"], f"spans event {i} fields")
        T.eq(src_of(d["source_span"]).strip(), d["source"], f"event {i} source span")
        shown += d["before"] + d["translation"]
        T.ok(whole.startswith(shown), f"after event {i} the stream is a prefix: {shown!r}")
    T.eq(whole[len(shown):], "\n", "the stream and the rest after it are the translation")
    T.ok("\n\n  42\n" in [d["before"] for _, d in ev[:-1]], "the blank line streams in place")
    w16 = whole.encode("utf-16-le")
    sents = done["sentences"]
    T.eq(len(sents), len(ev) - 1, "done: one span pair per sentence")
    for k, sp in enumerate(sents):
        T.eq(src_of(sp["source"]), src_of(ev[k][1]["source_span"]), f"done source span {k}")
        got = w16[2 * sp["translation"][0]:2 * sum(sp["translation"])].decode("utf-16-le")
        T.eq(got, ev[k][1]["translation"], f"done translation span {k}")
    st, _, b = s.post("/translate", {"text": text2, "spans": True})
    T.eq((st, b["translation"], b["sentences"]), (200, whole, sents),
         "POST /translate gives the same spans")
    st, _, b = s.post("/translate", {"text": [ZH[0], "Hello."], "spans": True})
    T.eq((st, len(b["sentences"]), b["sentences"][1]), (200, 2, []),
         "an array: a list per text, empty for a text passed through")
    st, _, b = s.post("/translate", {"text": ZH[0], "spans": "yes"})
    T.eq(st, 400, "spans must be a boolean")
    # Errors before the stream starts are ordinary JSON.
    st, _, b = s.post("/translate/stream", {"text": 1})
    T.eq((st, b["error"]["code"]), (400, "invalid_request"), "stream 400 is JSON")
with Server(["--threads", "1", "--timeout-ms", "1", "--cache-mb", "0"]) as s:
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/stream", body=json.dumps({"text": "".join(ZH[:5])}).encode())
    ev = sse_events(c.getresponse())
    T.ok(ev and ev[-1][0] == "error" and ev[-1][1]["error"]["code"] == "timeout",
         f"stream past its deadline ends with an error event: {ev[-1:]}")
T.finish()
