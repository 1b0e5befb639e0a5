#!/usr/bin/env python3
"""test_jobs_replicas.py - document jobs shared by two `fanyi serve`
replicas through a real Redis (--redis), behind a real nginx running the
repository's configuration (deploy/lb/nginx.conf, its addresses rewritten):

  one DeepL client (deepl-node, deepl_documents.js) translates a txt, a
  docx and a PDF with translateDocument, then makes the three calls one by
  one (upload, polls, download): its requests land on both replicas (each
  replica's log says which it answered), and every file is byte for byte
  what a replica makes of it through the native jobs API
  a replica killed with SIGKILL holding a job: the other takes
  the job over once the lease (--jobs-lease-s 2) has run out, and finishes
  it; the job's state, polled through nginx, goes to done
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time

from lblib import Proxy, Replica, free_ports

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from fylib import T, WORDS  # noqa: E402
from redislib import RedisServer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.environ.get("FANYI_NODE", "node")
DISTINCT = [f"{a}{b}，{c}。" for a in WORDS for b in WORDS for c in WORDS]


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, data
    finally:
        c.close()


WHY = {}  # path -> why native() has no file: the job's end, for the failure's message


def native(port, path):
    """The file a replica makes of path through the native jobs API."""
    name = os.path.basename(path)
    with open(path, "rb") as f:
        st, job = request(port, "POST", f"/documents?filename={name}&target=en", f.read())
    while st == 202 or job.get("state") in ("queued", "translating"):
        time.sleep(0.05)
        st, job = request(port, "GET", f"/documents/{job['id']}")
    st, data = request(port, "GET", f"/documents/{job['id']}/result")
    if st != 200:
        WHY[path] = f"native job: {st} {str(job)[:600]}"
    return data if st == 200 else None


def client(lb_port, d, phase):
    r = subprocess.run([NODE, os.path.join(HERE, "deepl_documents.js"),
                        f"http://127.0.0.1:{lb_port}", d, phase], capture_output=True, text=True,
                       timeout=600)
    if not T.eq(r.returncode, 0, f"deepl-node {phase}: {r.stderr[-2000:]}"):
        return {}
    return json.loads(r.stdout.strip().splitlines()[-1])


def deepl_lines(rep, since):
    """The replica's log lines of DeepL's document API after byte since."""
    rep.log.flush()
    with open(rep.log.name) as f:
        f.seek(since)
        return [line for line in f if "endpoint=deepl_document" in line]


def log_size(rep):
    rep.log.flush()
    return os.path.getsize(rep.log.name)


d = tempfile.mkdtemp(prefix="fanyi-lb-jobs-")
subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "clients", "make_documents.py"), d],
               check=True)
with open(os.path.join(d, "big.txt"), "w") as f:
    f.write("\n\n".join(DISTINCT[:300]))

lb_port, p1, p2 = free_ports(3)
with RedisServer() as redis:
    url = f"redis://127.0.0.1:{redis.port}"
    args = ["--redis", url, "--jobs-lease-s", "2", "--data-dir", os.path.join(d, "unused")]
    reps = [Replica(p1, "jobs-a", args, quiet=False).start(),
            Replica(p2, "jobs-b", args, quiet=False).start()]
    proxy = Proxy("nginx", lb_port, [p1, p2]).start()
    try:
        # translateDocument: every file the one a replica makes natively.
        seen = client(lb_port, d, "formats")
        for f in ("txt", "docx", "pdf"):
            T.eq(seen.get(f, {}).get("status"), "done", f"translateDocument {f} through nginx")
            with open(os.path.join(d, f"lb.{f}"), "rb") as fh:
                got = fh.read()
            want = native(p2, os.path.join(d, f"doc.{f}"))
            T.ok(got == want, f"{f}: the same bytes as a replica's own job ({len(got)} and "
                 f"{len(want or b'')} bytes{'; ' + WHY.get(os.path.join(d, f'doc.{f}'), '')})")
        # The three calls: both replicas answer some of them.
        since = [log_size(r) for r in reps]
        seen = client(lb_port, d, "calls")
        T.ok(seen.get("last") == "done" and seen.get("polls", 0) >= 2,
             f"upload, {seen.get('polls')} polls ({seen.get('statuses')}), download")
        lines = [deepl_lines(r, s) for r, s in zip(reps, since)]
        uploads = [sum(" chars=0 " not in x and "status=200" in x for x in ls) for ls in lines]
        others = [sum(" chars=0 " in x for x in ls) for ls in lines]
        T.eq(sum(uploads), 1, f"one upload: {uploads}")
        up = uploads.index(1) if 1 in uploads else 0
        T.ok(others[1 - up] > 0,
             f"polls or the download answered by the replica that did not take the upload "
             f"(status/result per replica: {others})")
        with open(os.path.join(d, "lb-big.txt"), "rb") as fh:
            T.ok(fh.read() == native(p1, os.path.join(d, "big.txt")), "the big file's bytes")
        # A replica killed holding a job: the other takes it over and finishes
        # it. The job is given to one replica itself, whose 202 says it holds
        # the job's lease (an idle replica starts a job as it stores it), so
        # it is killed before the job can end however slow the machine.
        big = "\n\n".join(DISTINCT[300:]).encode()  # 212 paragraphs
        busy = reps[0]
        st, job = request(busy.port, "POST", "/documents?filename=huge.txt&target=en", big)
        T.eq(st, 202, f"a big job on {busy.name}: {job}")
        if st == 202:
            busy.kill()
            other = reps[1 - reps.index(busy)]
            st, job = request(other.port, "GET", f"/documents/{job['id']}")
            until = time.monotonic() + 300
            while job.get("state") in ("queued", "translating") and time.monotonic() < until:
                time.sleep(0.1)
                st, job = request(lb_port, "GET", f"/documents/{job['id']}")
            T.eq(job.get("state"), "done", f"taken over and finished: {job.get('progress')}")
            other.log.flush()
            with open(other.log.name) as f:
                T.ok(f"document job {job['id']} taken up" in f.read(),
                     f"{other.name}'s log says it took the job up")
            busy.start()
    finally:
        proxy.close()
        for r in reps:
            T.eq(r.stop(), 0, f"{r.name} exits 0 after SIGTERM")
import shutil  # noqa: E402
shutil.rmtree(d, ignore_errors=True)
T.finish()
