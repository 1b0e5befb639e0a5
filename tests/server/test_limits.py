#!/usr/bin/env python3
"""test_limits.py - back-pressure and deadlines: a full queue answers 503
with Retry-After (in every dialect's shape), a request larger than the whole
queue 413, a request past --timeout-ms answers 504, and the server stays
healthy; the exit status without a model."""
import os
import glob
import subprocess
import threading

from fylib import BIN, T, Server, ZH, wait_for

five = "".join(ZH[:5])  # five sentences


QUEUE = 40
# QUEUE two-clause sentences (8 distinct ones; the cache is off, so each is
# translated): a worker batch holds at most 32 of them, which keeps the one
# worker busy far longer than a sentence or two would, whatever the model.
MANY = [ZH[i % 8].rstrip("。？") + "，" + ZH[(3 * i + 1) % 8] for i in range(QUEUE)]


def wait_metric(s, ok, limit=5.0):
    """Polls /metrics until ok(metrics); the metrics then, or None."""
    def met():
        m = s.metrics()
        return m if ok(m) else None
    return wait_for(met, limit, 0.002)


def while_full(s, call):
    """Runs call() while the queue (--queue QUEUE, one worker, no cache) is
    full: A (QUEUE sentences) gives the worker a batch and leaves the rest
    waiting, B tops the queue up to exactly QUEUE; /metrics says when.
    Retries a few times in case the worker got through too early; returns
    call()'s answer from the last try."""
    got = (0, {}, {})  # never full: the checks below fail
    for _ in range(8):
        a = threading.Thread(target=s.post, args=("/translate", {"text": "".join(MANY)}))
        a.start()
        m = wait_metric(s, lambda m: m.get("fanyi_sentences_in_flight", 0) > 0 and
                        m.get("fanyi_queue_depth", 0) > 0)
        b = None
        if m:
            free = QUEUE - int(m["fanyi_queue_depth"])
            b = threading.Thread(target=s.post,
                                 args=("/translate", {"text": "".join(MANY[:free])}))
            b.start()
            if wait_metric(s, lambda m: m.get("fanyi_queue_depth") == QUEUE and
                           m.get("fanyi_sentences_in_flight", 0) > 0):
                got = call()
        a.join()
        if b:
            b.join()
        if got[0] == 503:
            break
    return got


with Server(["--threads", "1", "--queue", "2", "--cache-mb", "0"]) as s:
    st, h, b = s.post("/translate", {"text": five})
    T.eq(st, 413, "more sentences than --queue can ever hold: 413, not a 503 to retry")
    T.ok("--queue" in b["error"]["message"] and "5 sentences" in b["error"]["message"],
         f"413 names the sentences and --queue: {b}")

with Server(["--threads", "1", "--queue", str(QUEUE), "--cache-mb", "0"]) as s:
    st, h, b = while_full(s, lambda: s.post("/translate", {"text": ZH[0]}))
    T.eq(st, 503, "queue full: 503")
    T.eq(h.get("retry-after"), "1", "503 has Retry-After")
    T.eq(b["error"]["code"], "unavailable", "503 native shape")
    T.ok("queue" in b["error"]["message"], "503 says the queue is full")
    st, _, b = while_full(s, lambda: s.post("/v2/translate", {"text": [ZH[1]],
                                                              "target_lang": "EN"}))
    T.eq((st, list(b)), (503, ["message"]), "503 DeepL shape")
    st, _, b = while_full(s, lambda: s.post("/translate/stream", {"text": ZH[2]}))
    T.eq(st, 503, "503 for a stream too")
    st, _, _ = s.post("/translate", {"text": ZH[0] + ZH[1]})
    T.eq(st, 200, "a request that fits is served")
    m = s.metrics()
    T.ok(m["fanyi_jobs_rejected_total"] >= 3.0, "rejections counted")
    T.ok(m['fanyi_requests_total{endpoint="translate",status="503"}'] >= 1.0, "503 by endpoint")

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
# Helper threads: the ready line says how many; they translate as the
# workers alone do (the same bits: tests/nn/test_par.c).
with Server(["--helper-threads", "2"]) as s:
    T.ok("helpers=2 devices=" in s.ready_line, "--helper-threads in the ready line")
    st, _, b = s.post("/translate", {"text": "今天天气很好。"})
    helped = b.get("translatedText")
    T.eq(st, 200, "translated with helpers")
    m = s.metrics()
    T.eq(m["fanyi_helper_threads"], 2.0, "fanyi_helper_threads")
    T.ok("fanyi_helper_products_total" in m and "fanyi_helper_backoffs_total" in m,
         "helper counters in the metrics")
with Server([], env={"FANYI_HELPER_THREADS": "0"}) as s:
    T.ok("helpers=0 devices=" in s.ready_line, "FANYI_HELPER_THREADS=0")
    T.eq(s.metrics()["fanyi_helper_threads"], 0.0, "no helper in the metrics")
    st, _, b = s.post("/translate", {"text": "今天天气很好。"})
    T.eq((st, b.get("translatedText")), (200, helped), "the same translation without helpers")
# --device auto asks Vulkan only on a machine that shows a GPU device node:
# without one, no Vulkan driver is loaded (Mesa's cost ~50 MiB for nothing).
gpu_nodes = glob.glob("/dev/dri/renderD*") + glob.glob("/dev/nvidiactl") + glob.glob("/dev/dxg")
if not gpu_nodes:
    with Server([]) as s:
        with open(f"/proc/{s.proc.pid}/maps") as f:
            drivers = {line.split()[-1] for line in f if "libvulkan_" in line}
        T.eq(sorted(drivers), [], "auto without a GPU node: no Vulkan driver loaded")
        T.ok("devices=cpu" in s.ready_line, "auto without a GPU node: the CPU")
r = subprocess.run([BIN, "serve", "--helper-threads", "4", "--port", "0"], capture_output=True,
                   text=True, timeout=30)
T.ok(r.returncode == 2 and "--helper-threads" in r.stderr, "--helper-threads 4: usage error")
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
