#!/usr/bin/env python3
"""test_stream.py - POST /translate/stream: server-sent events parsed one
by one as they arrive: one "sentence" event per sentence in order, then
"done" with the same translation POST /translate gives."""
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
