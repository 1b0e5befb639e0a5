#!/usr/bin/env python3
"""test_jobs_resume.py - a document job survives its server: `fanyi serve`
killed with SIGKILL in the middle of a PDF job (once its first checkpoint
is stored: the server stops itself there, FANYI_TEST_JOBS_STOP_AFTER, so
that the job cannot end first on a slow machine), started again on the
same --data-dir, takes the job up from its checkpoints (not from the
start) and finishes it; the translated file is
byte for byte the one an uninterrupted server makes. A job with a
glossary_id compiles its glossary when it is taken up: one whose glossary
was deleted meanwhile fails with an error naming it.

The PDF is tests/docs/make_pdfs.py's generated English report of 3
pages, translated en->de by the synthetic tiny-en-de model with no cache
(every sentence is translated, one worker); the interrupted server takes it
in batches of 500 characters (--jobs-batch-chars), a checkpoint each, the
reference in the default 4,000: the file does not depend on the batches.

The same job is also resumed from every prefix of its checkpoints (as
a run taken over after 1, 2, ... checkpointed paragraphs, the real
checkpoint boundaries among them): one job directory each, made from the
killed job's stored state and an uninterrupted run's checkpoints, taken
up by one server; every result must be the reference's bytes (MuPDF's
random instance id once made only some of them differ)."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time

from fylib import BUILD, T, Server, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(BUILD, "models", "tiny-en-de")
ARGS = ["--threads", "1", "--express-threads", "0", "--cache-mb", "0", "--jobs-parallel", "1"]
PAGES = 3

tmp = tempfile.mkdtemp(prefix="fanyi-resume-")
subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "docs", "make_pdfs.py"), tmp,
                "--pages", str(PAGES)], check=True)
pdf = open(os.path.join(tmp, "long.pdf"), "rb").read()
QUERY = "filename=long.pdf&source=en&target=de"


# The killed servers stop themselves once their first checkpoint is stored.
STOP = {"FANYI_TEST_JOBS_STOP_AFTER": "1"}


def kill_when_stopped(s):
    """SIGKILL once the server has stopped itself (the test hook)."""
    def stopped():
        with open(f"/proc/{s.proc.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"
    T.ok(wait_for(stopped, 600), "the server stopped itself after its first checkpoint")
    s.proc.send_signal(signal.SIGKILL)
    s.proc.wait()
    s.errf.close()
    os.unlink(s.stderr_path)


def job(s, jid):
    return s.get(f"/documents/{jid}")[2]


def finish(s, jid, timeout=600):
    until = time.monotonic() + timeout
    j = job(s, jid)
    while j.get("state") in ("queued", "translating") and time.monotonic() < until:
        time.sleep(0.1)
        j = job(s, jid)
    return j


def result(s, jid):
    st, _, _ = s.get(f"/documents/{jid}")
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=600)
    c.request("GET", f"/documents/{jid}/result")
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


# The uninterrupted run.
with Server(ARGS, model=MODEL) as s:
    st, _, j = s.post(f"/documents?{QUERY}", pdf, {"Content-Type": "application/pdf"})
    T.eq(st, 202, f"submitted: {j}")
    j = finish(s, j["id"])
    T.eq((j["state"], j["progress"]["pages"], j["progress"]["pages_done"]), ("done", PAGES, PAGES),
         f"uninterrupted: done, every page ({j['state']} {j['progress']})")
    st, want = result(s, j["id"])
    T.ok(st == 200 and want.startswith(b"%PDF"), "uninterrupted: a PDF")

# Uninterrupted again, in small batches: the same bytes; its checkpoints
# (every paragraph's translation, in the order they were stored) kept.
SMALL = ["--jobs-batch-chars", "500"]
data = os.path.join(tmp, "data-ref")
with Server(ARGS + SMALL + ["--data-dir", data], model=MODEL) as s:
    st, _, j = s.post(f"/documents?{QUERY}", pdf, {"Content-Type": "application/pdf"})
    j = finish(s, j["id"])
    st, got = result(s, j["id"])
    T.ok(st == 200 and got == want,
         f"batches of 500 characters: the same bytes ({len(got)} and {len(want)} bytes)")
    with open(os.path.join(data, "jobs", j["id"], "units.jsonl"), "rb") as f:
        all_units = [line + b"\n" for line in f.read().split(b"\n") if line]
T.ok(len(all_units) > 2, f"the reference checkpointed every paragraph ({len(all_units)})")

# Killed half way.
data = os.path.join(tmp, "data")
s = Server(ARGS + SMALL + ["--data-dir", data], model=MODEL, env=STOP).start()
st, _, j = s.post(f"/documents?{QUERY}", pdf, {"Content-Type": "application/pdf"})
jid = j["id"]
units = os.path.join(data, "jobs", jid, "units.jsonl")
kill_when_stopped(s)
with open(units, "rb") as f:
    checkpointed = len([line for line in f.read().split(b"\n") if line])
state = open(os.path.join(data, "jobs", jid, "state.json")).read()
T.ok('"state":"translating"' in state and 0 < checkpointed < j["progress"]["total"],
     f"killed half way: translating, {checkpointed} paragraphs checkpointed of more")

# Started again on the same data directory: taken up, finished, the same bytes.
with Server(ARGS + SMALL + ["--data-dir", data], model=MODEL) as s2:
    j = finish(s2, jid)
    T.eq((j["state"], j["progress"]["pages_done"]), ("done", PAGES), f"resumed: done ({j})")
    st, got = result(s2, jid)
    T.ok(st == 200 and got == want, f"the same bytes as the uninterrupted run "
                                    f"({len(got)} and {len(want)} bytes)")
    m = re.search(r"document job %s taken up: (\d+) of (\d+) paragraphs" % jid, s2.log())
    T.ok(m and int(m.group(1)) >= checkpointed > 0,
         f"taken up from its checkpoints, not from the start: {m and m.group(0)}")
    T.eq(s2.metrics().get('fanyi_document_job_events_total{event="resumed"}'), 1.0,
         "counted as resumed")

# Resumed from every prefix of the checkpoints: the killed job's stored
# state under a new id, its upload, and the first k paragraphs' checkpoints.
killed_state = json.loads(state)
each = os.path.join(tmp, "data-each")
ids = {}
for k in range(1, len(all_units)):
    kid = "%032x" % (0xc0ffee000 + k)
    d = os.path.join(each, "jobs", kid)
    os.makedirs(d)
    with open(os.path.join(d, "source"), "wb") as f:
        f.write(pdf)
    with open(os.path.join(d, "units.jsonl"), "wb") as f:
        f.write(b"".join(all_units[:k]))
    with open(os.path.join(d, "state.json"), "w") as f:
        f.write(json.dumps(dict(killed_state, id=kid), separators=(",", ":")))
    ids[k] = kid
# Four at a time (a quarter of the queue's share each, other batches).
FOUR = ["--threads", "1", "--express-threads", "0", "--cache-mb", "0", "--jobs-parallel", "4"]
with Server(FOUR + SMALL + ["--data-dir", each], model=MODEL) as s4:
    differ = []
    for k, kid in ids.items():
        j = finish(s4, kid)
        st, got = result(s4, kid)
        if j.get("state") != "done" or st != 200 or got != want:
            differ.append(f"{k}: {j.get('state')} {st} {len(got)} bytes")
    T.ok(not differ, f"resumed after each of 1..{len(all_units) - 1} checkpointed paragraphs: "
                     f"the reference's bytes every time (not: {differ})")
    m = re.findall(r"document job (\w+) taken up: (\d+) of", s4.log())
    T.ok(sorted((i, int(n)) for i, n in m) == sorted((v, k) for k, v in ids.items()),
         f"each taken up from its own checkpoints ({len(m)} of {len(ids)})")

# A job with a glossary, killed the same way; its glossary deleted while no
# server runs: the job taken up fails, naming the glossary.
data = os.path.join(tmp, "data-glossary")
s = Server(ARGS + SMALL + ["--data-dir", data], model=MODEL, env=STOP).start()
st, _, g = s.post("/glossaries", {"name": "g", "source": "en", "target": "de",
                                  "entries": {"report": "Bericht"}})
gid = g.get("id", "") if isinstance(g, dict) else ""
T.eq(st, 201, f"glossary created: {g}")
st, _, j = s.post(f"/documents?{QUERY}&glossary_id={gid}", pdf, {"Content-Type": "application/pdf"})
T.eq(st, 202, f"submitted with glossary_id: {j}")
jid = j.get("id", "")
kill_when_stopped(s)
state = open(os.path.join(data, "jobs", jid, "state.json")).read()
T.ok('"state":"translating"' in state and f'"glossary":"{gid}"' in state,
     f"killed half way, the glossary id in its stored state: {state[:300]}")
os.unlink(os.path.join(data, "glossaries", f"{gid}.glossary"))
with Server(ARGS + SMALL + ["--data-dir", data], model=MODEL) as s3:
    j = finish(s3, jid)
    err = j.get("error") or {}
    T.ok(j.get("state") == "error" and f"glossary_id: no glossary '{gid}'" in err.get("message", ""),
         f"taken up without its glossary: the job fails naming it ({j.get('state')} {err})")

import shutil  # noqa: E402
shutil.rmtree(tmp, ignore_errors=True)
T.finish()
