#!/usr/bin/env python3
"""test_beam.py - beam search through `fanyi serve` (native API):

- "beam" per request: the translation equals `fanyi translate --beam N`;
- "alternatives": per text a list, distinct from the translation and from
  each other, at most the number asked (default: beam - 1, so none with
  beam 1); asking N makes the beam at least N + 1; an array of texts gets a
  list per text; the stream's "done" event carries them too;
- --beam sets the default, --max-beam the bound: beyond it a 400 naming
  the field; bad values are 400s; --beam above --max-beam does not start;
- a repeated request is answered from the cache, alternatives included.
"""
import http.client
import json
import subprocess

from fylib import BIN, MODEL, T, Server, ZH, sse_events

TEXT = ZH[0] + ZH[1]  # two sentences


def cli(text, beam):
    r = subprocess.run([BIN, "translate", "--model", MODEL, "--beam", str(beam)], input=text + "\n",
                       capture_output=True, text=True, timeout=600)
    T.eq(r.returncode, 0, f"fanyi translate --beam {beam}: {r.stderr}")
    return r.stdout.rstrip("\n")


def distinct(alts, main, what):
    T.ok(isinstance(alts, list) and all(isinstance(a, str) for a in alts), f"{what}: a list")
    T.ok(main not in alts and len(set(alts)) == len(alts),
         f"{what}: distinct from the translation and each other: {alts!r}")


def per_request(s):
    st, _, b = s.post("/translate", {"text": TEXT, "beam": 4})
    T.eq(st, 200, "beam 4 status")
    T.eq(b.get("translation"), cli(TEXT, 4), "beam 4 = fanyi translate --beam 4")
    alts = b.get("alternatives")
    distinct(alts, b.get("translation"), "beam 4 alternatives")
    T.ok(1 <= len(alts) <= 3, f"beam 4: 1 to 3 alternatives by default, got {len(alts)}")
    st, _, b1 = s.post("/translate", {"text": TEXT})
    T.eq((st, b1.get("alternatives")), (200, []), "the default beam 1: no alternatives")
    T.eq(b1.get("translation"), cli(TEXT, 1), "beam 1 = greedy")
    # Two alternatives: beam 3 at least.
    st, _, b = s.post("/translate", {"text": TEXT, "alternatives": 2})
    T.eq((st, b.get("translation")), (200, cli(TEXT, 3)), "alternatives 2 searches with beam 3")
    T.ok(len(b["alternatives"]) <= 2, "at most 2 alternatives")
    distinct(b["alternatives"], b["translation"], "alternatives 2")
    st, _, b = s.post("/translate", {"text": TEXT, "beam": 4, "alternatives": 0})
    T.eq((st, b.get("alternatives")), (200, []), "alternatives 0: none")
    # An array: a list per text; English passes through with none.
    st, _, b = s.post("/translate", {"text": [ZH[2], "hello", ZH[3]], "beam": 3})
    T.eq(st, 200, "array status")
    T.ok(isinstance(b["alternatives"], list) and len(b["alternatives"]) == 3, "a list per text")
    T.eq(b["alternatives"][1], [], "a text passed through has none")
    for i in (0, 2):
        distinct(b["alternatives"][i], b["translation"][i], f"array text {i}")
    # Form fields carry numbers as text.
    st, _, b = s.post("/translate", "text=" + ZH[2] + "&beam=3",
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.eq((st, b.get("translation")), (200, cli(ZH[2], 3)), "form beam=3")


def errors(s):
    for body, field in [({"beam": 5}, "beam"), ({"beam": 0}, "beam"), ({"beam": "x"}, "beam"),
                        ({"beam": 2.5}, "beam"), ({"alternatives": 4}, "alternatives"),
                        ({"alternatives": -1}, "alternatives")]:
        st, _, b = s.post("/translate", dict(text=ZH[0], **body))
        msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else ""
        T.ok(st == 400 and f"field '{field}'" in msg, f"{body}: 400 naming the field: {st} {b}")
    st, _, b = s.post("/translate", {"text": ZH[0], "beam": 5})
    T.ok("from 1 to 4" in b["error"]["message"], "the message gives the bound")


def stream_and_cache(s):
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=600)
    c.request("POST", "/translate/stream", body=json.dumps({"text": TEXT, "beam": 4}).encode())
    ev = sse_events(c.getresponse())
    c.close()
    st, _, b = s.post("/translate", {"text": TEXT, "beam": 4})
    T.eq(ev[-1], ("done", b), "the stream's done event = the answer, alternatives included")
    hits = s.metrics().get("fanyi_cache_hits_total", 0)
    st, _, again = s.post("/translate", {"text": TEXT, "beam": 4})
    T.eq(again, b, "a repeated beam-4 request: the same answer")
    T.ok(s.metrics().get("fanyi_cache_hits_total", 0) >= hits + 2, "...from the cache")


with Server(["--threads", "2"]) as s:
    per_request(s)
    errors(s)
    stream_and_cache(s)

with Server(["--beam", "3", "--max-beam", "3"]) as s:
    st, _, b = s.post("/translate", {"text": TEXT})
    T.eq((st, b.get("translation")), (200, cli(TEXT, 3)), "--beam 3 is the default")
    T.ok(1 <= len(b["alternatives"]) <= 2, "its default alternatives: up to beam - 1")
    st, _, b = s.post("/translate", {"text": TEXT, "beam": 4})
    T.ok(st == 400 and "from 1 to 3" in b["error"]["message"], "--max-beam 3 bounds requests")

r = subprocess.run([BIN, "serve", "--model", MODEL, "--port", "0", "--beam", "5", "--max-beam", "4"],
                   capture_output=True, text=True, timeout=60)
T.ok(r.returncode == 2 and "--max-beam" in r.stderr, f"--beam above --max-beam: {r.stderr!r}")
T.finish()
