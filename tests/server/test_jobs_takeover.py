#!/usr/bin/env python3
"""test_jobs_takeover.py - a replica that stalls past its lease loses its
job and, when it wakes up, leaves it alone: two `fanyi serve` replicas
share a Redis job store with a lease of 1 s (--jobs-lease-s 1); replica A
takes a PDF job and is stopped (SIGSTOP) at once, B takes the job up when
A's lease runs out and finishes it; then A goes on (SIGCONT). A must not
store anything more: the job stays done (its state never goes back to
translating), its result is B's, byte for byte the file a lone server
makes, and A's log says it let the job go.

The PDF is tests/docs/make_pdfs.py's English report of 40 pages (560
sentences; A is stopped milliseconds after its 202), translated en->de by
the synthetic tiny-en-de model with no cache."""
import http.client
import os
import signal
import subprocess
import tempfile
import time

from fylib import BUILD, T, Server
from redislib import RedisServer

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(BUILD, "models", "tiny-en-de")
ARGS = ["--threads", "1", "--express-threads", "0", "--cache-mb", "0", "--jobs-parallel", "1",
        "--jobs-batch-chars", "500"]
QUERY = "filename=long.pdf&source=en&target=de"

tmp = tempfile.mkdtemp(prefix="fanyi-takeover-")
subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "docs", "make_pdfs.py"), tmp,
                "--pages", "40"], check=True)
pdf = open(os.path.join(tmp, "long.pdf"), "rb").read()


def finish(s, jid, timeout=600):
    until = time.monotonic() + timeout
    j = s.get(f"/documents/{jid}")[2]
    while j.get("state") in ("queued", "translating") and time.monotonic() < until:
        time.sleep(0.05)
        j = s.get(f"/documents/{jid}")[2]
    return j


def result(s, jid):
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=600)
    c.request("GET", f"/documents/{jid}/result")
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


with Server(ARGS, model=MODEL) as s:
    st, _, j = s.post(f"/documents?{QUERY}", pdf, {"Content-Type": "application/pdf"})
    T.eq(finish(s, j["id"]).get("state"), "done", "a lone server: done")
    st, want = result(s, j["id"])
    T.ok(st == 200 and want.startswith(b"%PDF"), "a lone server: a PDF")

with RedisServer() as redis:
    args = ARGS + ["--redis", f"redis://127.0.0.1:{redis.port}", "--jobs-lease-s", "1"]
    a = Server(args, model=MODEL).start()
    b = Server(args, model=MODEL).start()
    try:
        st, _, j = a.post(f"/documents?{QUERY}", pdf, {"Content-Type": "application/pdf"})
        a.proc.send_signal(signal.SIGSTOP)
        jid = j.get("id", "")
        T.eq(st, 202, f"A took the job: {j}")
        first = b.get(f"/documents/{jid}")[2]
        T.ok(first.get("state") in ("queued", "translating"),
             f"A stopped in the middle of the job ({first.get('state')} {first.get('progress')})")
        j = finish(b, jid)
        T.eq(j.get("state"), "done", f"B took the job up and finished it ({j.get('progress')})")
        T.ok(f"document job {jid} taken up" in b.log(), "B's log says it took the job up")
        st, got = result(b, jid)
        T.ok(st == 200 and got == want,
             f"B's result: a lone server's bytes ({len(got)} and {len(want)} bytes)")
        a.proc.send_signal(signal.SIGCONT)
        states = []
        line = f"document job {jid}: it ended elsewhere; this run stops without storing anything"
        until = time.monotonic() + 120
        while line not in a.log() and time.monotonic() < until:
            states.append(b.get(f"/documents/{jid}")[2].get("state"))
            time.sleep(0.05)
        T.ok(line in a.log(), f"A's log says it let the job go: {a.log()[-400:]!r}")
        for _ in range(20):  # and nothing after it
            states.append(b.get(f"/documents/{jid}")[2].get("state"))
            time.sleep(0.05)
        T.ok(set(states) == {"done"}, f"the job stayed done while A went on: {sorted(set(states))}")
        st, got = result(b, jid)
        T.ok(st == 200 and got == want, "the result is still B's")
    finally:
        a.proc.send_signal(signal.SIGCONT)
        T.eq(a.stop(), 0, "A exits 0 after SIGTERM")
        T.eq(b.stop(), 0, "B exits 0 after SIGTERM")

import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
T.finish()
