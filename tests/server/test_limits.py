#!/usr/bin/env python3
"""test_limits.py - back-pressure and deadlines: a full queue answers 503
with Retry-After (in every dialect's shape), a request past --timeout-ms
answers 504, and the server stays healthy; the exit status without a model."""
import os
import subprocess

from fylib import BIN, T, Server, ZH

five = "".join(ZH[:5])  # five sentences

with Server(["--threads", "1", "--queue", "2", "--cache-mb", "0"]) as s:
    st, h, b = s.post("/translate", {"text": five})
    T.eq(st, 503, "more sentences than --queue: 503")
    T.eq(h.get("retry-after"), "1", "503 has Retry-After")
    T.eq(b["error"]["code"], "unavailable", "503 native shape")
    T.ok("queue" in b["error"]["message"], "503 says the queue is full")
    st, _, b = s.post("/v2/translate", {"text": [five], "target_lang": "EN"})
    T.eq((st, list(b)), (503, ["message"]), "503 DeepL shape")
    st, _, b = s.post("/translate/stream", {"text": five})
    T.eq(st, 503, "503 for a stream too")
    st, _, _ = s.post("/translate", {"text": ZH[0] + ZH[1]})
    T.eq(st, 200, "a request that fits is served")
    m = s.metrics()
    T.eq(m["fanyi_jobs_rejected_total"], 3.0, "rejections counted")
    T.eq(m['fanyi_requests_total{endpoint="translate",status="503"}'], 1.0, "503 by endpoint")

with Server(["--threads", "1", "--timeout-ms", "1", "--cache-mb", "0"]) as s:
    st, h, b = s.post("/translate", {"text": five})
    T.eq(st, 504, "past --timeout-ms: 504")
    T.eq(b["error"]["code"], "timeout", "504 native shape")
    T.ok("1 ms" in b["error"]["message"], "504 names the deadline")
    st, _, b = s.post("/language/translate/v2", {"q": five, "target": "en"})
    T.eq((st, b["error"]["status"]), (504, "DEADLINE_EXCEEDED"), "504 Google shape")
    st, _, b = s.get("/health")
    T.eq(st, 200, "healthy after timeouts")
    T.ok(s.metrics()["fanyi_jobs_timeout_total"] >= 2, "timeouts counted")

# Environment variables configure it as the flags do.
with Server([], env={"FANYI_THREADS": "3", "FANYI_MAX_CHARS": "10", "FANYI_QUEUE": "7"}) as s:
    T.ok("threads=3" in s.ready_line, "FANYI_THREADS")
    st, _, _ = s.post("/translate", {"text": "字" * 11})
    T.eq(st, 413, "FANYI_MAX_CHARS")
    T.eq(s.metrics()["fanyi_queue_capacity"], 7.0, "FANYI_QUEUE")
with Server(["--max-chars", "12"], env={"FANYI_MAX_CHARS": "10"}) as s:
    st, _, _ = s.post("/translate", {"text": "字" * 11})
    T.eq(st, 200, "a flag overrides the environment")

# No model: exit 2 with how to get one.
r = subprocess.run([BIN, "serve", "--model", "/nonexistent/model", "--port", "0"],
                   capture_output=True, text=True, timeout=30)
T.eq(r.returncode, 2, "no model: exit 2")
T.ok("fanyi model fetch zh-en" in r.stderr and "fanyi model synth" in r.stderr,
     f"no model: says how to get one: {r.stderr!r}")
env = dict(os.environ, FANYI_MODEL_DIR="/nonexistent/env-model")
r = subprocess.run([BIN, "serve", "--port", "0"], capture_output=True, text=True, timeout=30,
                   env=env)
T.ok(r.returncode == 2 and "/nonexistent/env-model" in r.stderr, "FANYI_MODEL_DIR is used")
r = subprocess.run([BIN, "serve", "--port", "99999"], capture_output=True, text=True, timeout=30)
T.eq(r.returncode, 2, "bad --port: exit 2")
r = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, timeout=30)
T.ok(r.returncode == 0 and r.stdout.startswith("usage: fanyi serve"), "--help")
T.finish()
