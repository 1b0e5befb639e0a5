#!/usr/bin/env python3
"""test_jobs.py - document jobs through the native API (docs/api.md,
"Document jobs") on the real `fanyi serve`:

  submit (raw body, multipart), poll to done, download: the same file as
  /translate/document makes; progress, pages, list by client tag, the
  whole list only with the API token; a DeepL job unseen without its key;
  refusals (a bad target, an unknown type, output_format, bilingual on txt,
  bad ids, methods); DELETE of a finished job deletes it
  cancel: a big job cancelled while it translates stops at once (its
  sentences leave the queue, its progress stops) and an interactive
  request right after is answered; the job stays, canceled
  a full store: 507 with the option to raise; a finished job expires
  after --download-ttl, its files deleted from the data directory
"""
import base64
import json
import os
import time

from fylib import SHORT, T, Server, WORDS, multipart

DISTINCT = [f"{a}{b}，{c}。" for a in WORDS for b in WORDS for c in WORDS]  # 512 sentences
SMALL = "\n\n".join(SHORT[:6]).encode()


def submit(s, data, query="filename=a.txt&target=en", headers=None):
    return s.request("POST", f"/documents?{query}", data, headers or {})


def wait_state(s, jid, states, timeout=300, headers=None):
    """The job once its state is one of states (polled), or the last seen."""
    until = time.monotonic() + timeout
    while True:
        st, _, job = s.request("GET", f"/documents/{jid}", None, headers or {})
        if st != 200 or job["state"] in states or time.monotonic() > until:
            return job
        time.sleep(0.05)


def check_api(s):
    st, h, job = submit(s, SMALL, "filename=notes.txt&target=en&client=tab-1")
    T.eq(st, 202, f"POST /documents: 202 {job}")
    T.eq(h.get("location"), f"/documents/{job['id']}", "Location: the job")
    T.eq((job["state"], job["name"], job["format"], job["source"], job["target"], job["client"]),
         ("queued", "notes.en.txt", "txt", "zh", "en", "tab-1"), "the job as submitted")
    T.eq(job["progress"]["total"], 6, "progress: sentences to translate")
    jid = job["id"]
    job = wait_state(s, jid, ("done", "error"))
    T.eq((job["state"], job["progress"]["done"], job["progress"]["percent"]), ("done", 6, 100),
         f"done: {job}")
    T.ok(job["result"] == f"/documents/{jid}/result" and job["finished"] and job["expires"],
         "done: its result URL, finished, expires")
    st, h, out = s.raw("GET", job["result"])
    T.eq((st, h.get("content-type")), (200, "text/plain"), "GET result")
    T.ok('filename="notes.en.txt"' in h.get("content-disposition", ""), "result's name")
    # The same file as the stream endpoint makes.
    st, _, nd = s.raw("POST", "/translate/document?filename=notes.txt&target=en", SMALL,
                    {"Content-Type": "text/plain"})
    done = json.loads(nd.decode().splitlines()[-1])
    T.eq(base64.b64decode(done.get("data", "")), out, "the result is /translate/document's")
    # multipart, auto target, a client's list
    body, hh = multipart({"client": "tab-1"}, [("file", "b.md", f"# {SHORT[7]}\n\n{SHORT[8]}\n".encode())])
    st, _, job2 = s.request("POST", "/documents", body, hh)
    T.ok(st == 202 and job2["format"] == "md" and job2["target"] == "en", f"multipart: {job2}")
    wait_state(s, job2["id"], ("done", "error"))
    st, _, lst = s.get("/documents?client=tab-1")
    ids = [j["id"] for j in lst.get("documents", [])]
    T.eq(ids, [job2["id"], jid], "?client=: its jobs, newest first")
    st, _, lst = s.get("/documents?client=someone-else")
    T.eq((st, lst), (200, {"documents": []}), "another client's list is empty")
    st, _, b = s.get("/documents")
    T.ok(st == 403 and "--api-token" in b["error"]["message"],
         f"the whole list needs a token to be set: {st} {b}")
    # refusals
    for q, want, says in [("filename=a.txt&target=xx-!", 400, "target"),
                          ("filename=a.exe&target=en", 415, ".docx"),
                          ("filename=a.txt&target=en&output_format=docx", 400, "output_format"),
                          ("filename=a.txt&target=en&bilingual=1", 415, "PDF"),
                          ("filename=a.txt&target=en&bilingual=maybe", 400, "bilingual"),
                          ("filename=a.txt&target=en&client=a%20b", 400, "client")]:
        st, _, b = submit(s, SMALL if "exe" not in q else b"MZ\x90\x00", q)
        T.ok(st == want and says in b.get("error", {}).get("message", ""),
             f"{q}: {want} naming {says}: {st} {b}")
    st, _, b = submit(s, b"", "filename=a.txt&target=en")
    T.ok(st == 400 and "empty" in b["error"]["message"], f"empty file: {st} {b}")
    for path in ("/documents/xyz", "/documents/" + "0" * 32, "/documents/" + "0" * 32 + "/other"):
        st, _, b = s.get(path)
        T.eq(st, 404, f"GET {path}")
    st, h, b = s.request("PUT", f"/documents/{jid}", b"")
    T.eq((st, h.get("allow")), (405, "GET, HEAD, DELETE, OPTIONS"), "PUT on a job: 405")
    st, h, b = s.request("DELETE", "/documents", None)
    T.eq(st, 404, "DELETE /documents (no id)")
    # result before done: 409 (a job still queued behind the big one is not needed:
    # a job in error is not downloadable either)
    st, _, b = s.get(f"/documents/{jid}/result?x=1")
    T.eq(st, 200, "result again (downloads are repeatable until it expires)")
    # DELETE of a finished job deletes it
    st, _, b = s.request("DELETE", f"/documents/{jid}", None)
    T.eq((st, b), (200, {"id": jid, "state": "done", "deleted": True}), "DELETE a finished job")
    T.eq(s.get(f"/documents/{jid}")[0], 404, "deleted: gone")
    T.ok(not os.path.exists(os.path.join(s.data_dir, "jobs", jid)), "its files deleted")


def check_cancel(s):
    doc = "\n\n".join(DISTINCT * 2).encode()  # 1,024 paragraphs, no two alike per 512
    st, _, job = submit(s, doc, "filename=long.txt&target=en")
    T.eq(st, 202, f"big job submitted: {job}")
    jid = job["id"]
    until = time.monotonic() + 300
    while time.monotonic() < until:
        job = s.get(f"/documents/{jid}")[2]
        if job["state"] != "queued" and job["progress"]["done"] > 0:
            break
        time.sleep(0.02)
    T.ok(job["state"] == "translating" and 0 < job["progress"]["done"] < job["progress"]["total"],
         f"the big job is translating: {job['state']} {job['progress']}")
    st, _, c = s.request("DELETE", f"/documents/{jid}", None)
    T.eq((st, c.get("state")), (200, "canceled"), f"DELETE: canceled at once ({c})")
    m = s.metrics()
    T.eq((m["fanyi_queue_depth"], m['fanyi_document_jobs{state="running"}']), (0, 0),
         "its sentences left the queue; no job runs")
    t0 = time.monotonic()
    T.eq(s.post("/translate", {"text": SHORT[40]})[0], 200, "an interactive request right after")
    took = time.monotonic() - t0
    done = c["progress"]["done"]
    time.sleep(0.3)
    job = s.get(f"/documents/{jid}")[2]
    T.eq((job["state"], job["progress"]["done"]), ("canceled", done), "no progress after the cancel")
    st, _, b = s.get(f"/documents/{jid}/result")
    T.ok(st == 409 and "canceled" in b["error"]["message"], f"no result: {st} {b}")
    print(f"interactive request after the cancel: {took * 1000:.0f} ms")


def check_token():
    with Server(["--threads", "1", "--api-token", "tok"]) as s:
        st, _, b = submit(s, SMALL)
        T.eq(st, 401, f"no token: 401 {b}")
        auth = {"Authorization": "Bearer tok"}
        st, _, job = submit(s, SMALL, headers=auth)
        T.eq(st, 202, "with the token")
        T.eq(s.request("GET", f"/documents/{job['id']}", None)[0], 401, "GET needs it too")
        wait_state(s, job["id"], ("done", "error"), headers=auth)
        st, _, lst = s.request("GET", "/documents", None, auth)
        T.eq([j["id"] for j in lst.get("documents", [])], [job["id"]],
             "GET /documents with the token: every job")
        # A job made through DeepL's API is its key holder's.
        body, hh = multipart({"target_lang": "EN-US"}, [("file", "d.txt", SMALL)])
        hh["Authorization"] = "DeepL-Auth-Key tok"
        st, _, d = s.request("POST", "/v2/document", body, hh)
        T.eq(st, 200, f"DeepL upload: {d}")
        did = d.get("document_id", "").lower()
        T.eq(s.request("GET", f"/documents/{did}", None, auth)[0], 404, "without its key: 404")
        st, _, j = s.request("GET", f"/documents/{did}?key={d.get('document_key')}", None, auth)
        T.eq((st, j.get("id")), (200, did), "with ?key=: the job")


def check_store():
    # 1 MiB: a 400 KB document fits with its result; a second does not.
    # --download-ttl 10: long enough that the second submission (400 KB sent
    # and split) comes before the first job expires even in a sanitizer
    # build on a loaded machine.
    with Server(["--threads", "1", "--jobs-store-mb", "1", "--download-ttl", "10",
                 "--max-document-mb", "2"]) as s:
        digits = ("0123456789" * 40000).encode()
        st, _, job = submit(s, digits, "filename=n.txt&target=en")
        T.eq(st, 202, f"400 KB fits: {job}")
        job = wait_state(s, job["id"], ("done", "error"))
        T.eq(job["state"], "done", "done (nothing to translate: unchanged)")
        st, _, b = submit(s, digits, "filename=m.txt&target=en")
        T.ok(st == 507 and "--jobs-store-mb" in b["error"]["message"]
             and b["error"]["code"] == "insufficient_storage", f"full: 507 {st} {b}")
        # Gone from the API once --download-ttl has passed, from the disk soon after.
        until = time.monotonic() + 30
        while s.get(f"/documents/{job['id']}")[0] == 200 and time.monotonic() < until:
            time.sleep(0.1)
        T.eq(s.get(f"/documents/{job['id']}")[0], 404, "expired after --download-ttl")
        path = os.path.join(s.data_dir, "jobs", job["id"])
        # The sweep deletes the files, then counts: wait for both.
        def expired():
            return s.metrics()['fanyi_document_job_events_total{event="expired"}']
        until = time.monotonic() + 30
        while (os.path.exists(path) or expired() < 1) and time.monotonic() < until:
            time.sleep(0.1)
        T.ok(not os.path.exists(path), "its files are deleted")
        T.ok(expired() >= 1, "counted as expired")
        st, _, job = submit(s, digits, "filename=m.txt&target=en")
        T.eq(st, 202, f"room again once it expired: {st} {job}")


with Server(["--threads", "1", "--express-threads", "0", "--cache-mb", "0",
             "--jobs-parallel", "1"]) as s:
    check_api(s)
    check_cancel(s)
check_token()
check_store()
T.finish()
