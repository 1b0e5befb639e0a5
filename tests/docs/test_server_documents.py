"""test_server_documents.py - documents through the real `fanyi serve` (the
synthetic zh->en model): LibreTranslate's /translate_file + /download_file
and the native /translate/document (NDJSON), for txt, srt, html, md and
docx; what is kept (timings, structure, styles) and what is refused
(unsupported types, limits, zip bombs, missing fields, tokens); the
download store's TTL; the document metrics; `fanyi translate --file`.
"""
import base64
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from fylib import BIN, MODEL, Server, T, ZH, multipart  # noqa: E402

HAN = re.compile(r"[\u4e00-\u9fff]")


def translate_file(s, name, data, **fields):
    fields.setdefault("target", "en")
    body, h = multipart(fields, [("file", name, data)])
    return s.post("/translate_file", body, h)


def download(s, url):
    path = url[url.index("/download_file/"):]
    return s.raw("GET", path)


def make_docx():
    import docx
    d = docx.Document()
    d.add_heading(ZH[0], level=1)
    p = d.add_paragraph(ZH[1][:6])
    r = p.add_run(ZH[1][6:10])
    r.bold = True
    p.add_run(ZH[1][10:])
    d.add_paragraph(ZH[2], style="List Bullet")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def check_libre(s):
    srt = f"1\n00:00:01,000 --> 00:00:02,500\n{ZH[0]}\n\n2\n00:00:03,000 --> 00:00:04,000\n{ZH[4]}\n"
    cases = [("notes.txt", f"{ZH[0]}\n\n{ZH[1]}\n".encode()), ("movie.zh.srt", srt.encode()),
             ("page.html", f"<p>{ZH[3]}</p><pre>{ZH[5]}</pre>".encode()),
             ("readme.md", f"# {ZH[6]}\n\n`code` {ZH[7]}\n".encode())]
    want_names = {"notes.txt": "notes.en.txt", "movie.zh.srt": "movie.en.srt",
                  "page.html": "page.en.html", "readme.md": "readme.en.md"}
    for name, data in cases:
        st, _, body = translate_file(s, name, data, source="zh")
        if not T.eq(st, 200, f"/translate_file {name}: {body}"):
            continue
        url = body["translatedFileUrl"]
        T.ok(url.startswith(f"http://127.0.0.1:{s.port}/download_file/"), f"download URL {url}")
        T.ok(url.endswith("." + want_names[name]), f"{name}: named {want_names[name]}: {url}")
        dst, h, out = download(s, url)
        T.eq(dst, 200, f"download {name}")
        T.ok(f'filename="{want_names[name]}"' in h.get("content-disposition", ""),
             f"Content-Disposition of {name}: {h.get('content-disposition')}")
        text = out.decode()
        T.ok(text != data.decode(), f"{name} was translated")
        if name.endswith(".srt"):
            T.eq(re.findall(r"^\d+$|^[\d:,]+ --> [\d:,]+$", text, re.M),
                 ["1", "00:00:01,000 --> 00:00:02,500", "2", "00:00:03,000 --> 00:00:04,000"],
                 "srt numbering and timings kept")
        if name.endswith(".html"):
            T.ok(f"<pre>{ZH[5]}</pre>" in text and text.startswith("<p>"), "html: <pre> kept")
        if name.endswith(".md"):
            T.ok(text.startswith("# ") and "`code`" in text, f"md: heading and code kept: {text!r}")
    # docx with its styles
    src = make_docx()
    st, _, body = translate_file(s, "report.docx", src)
    if T.eq(st, 200, f"/translate_file docx: {body}"):
        dst, h, out = download(s, body["translatedFileUrl"])
        T.eq(h.get("content-type"),
             "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
             "docx Content-Type")
        import docx
        o = docx.Document(io.BytesIO(out))
        T.eq([p.style.name for p in o.paragraphs], ["Heading 1", "Normal", "List Bullet"],
             "docx paragraph styles kept")
        T.ok(all(p.text and p.text != q for p, q in zip(o.paragraphs, [ZH[0], ZH[1], ZH[2]])),
             "docx paragraphs translated")


def check_native(s):
    src = make_docx()
    st, h, out = s.raw("POST", "/translate/document?filename=report.docx&source=zh&target=en",
                     src, {"Content-Type": "application/octet-stream"})
    T.eq(st, 200, "/translate/document status")
    T.ok(h.get("content-type", "").startswith("application/x-ndjson"), "NDJSON Content-Type")
    events = [json.loads(line) for line in out.decode().splitlines()]
    T.eq(events[0]["event"], "start", "first event is start")
    T.eq((events[0]["format"], events[0]["filename"], events[0]["source"], events[0]["target"]),
         ("docx", "report.en.docx", "zh", "en"), "start event fields")
    total = events[0]["sentences"]
    prog = [e["done"] for e in events if e["event"] == "progress"]
    T.ok(prog == sorted(prog) and prog and prog[-1] == total, f"progress to {total}: {prog}")
    done = events[-1]
    T.eq(done["event"], "done", "last event is done")
    data = base64.b64decode(done.get("data", ""))
    T.eq(len(data), done.get("bytes"), "inline data has the announced size")
    T.ok(zipfile.is_zipfile(io.BytesIO(data)), "inline data is the docx")
    dst, _, dl = s.raw("GET", done["url"])
    T.eq((dst, dl), (200, data), "the URL serves the same file")
    # multipart works too, and auto-detects the source
    body, hh = multipart({}, [("file", "a.txt", ZH[3].encode())])
    st, _, out = s.raw("POST", "/translate/document?inline=0", body, hh)
    ev = [json.loads(line) for line in out.decode().splitlines()]
    T.eq((st, ev[0]["source"], ev[-1]["event"], "data" in ev[-1]), (200, "zh", "done", False),
         "multipart upload, detected source, inline=0")


def check_refusals(s):
    st, _, body = translate_file(s, "prog.exe", b"MZ\x90\x00")
    T.ok(st == 415 and ".docx" in body.get("error", ""), f"unsupported type 415: {st} {body}")
    st, _, body = translate_file(s, "fake.docx", b"plain text")
    T.ok(st == 415 and "not a zip" in body.get("error", ""), f"mislabelled 415: {st} {body}")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", b"\0" * (50 << 20))
    st, _, body = translate_file(s, "bomb.docx", bomb.getvalue())
    T.ok(st == 413 and "zip bomb" in body.get("error", ""), f"zip bomb 413: {st} {body}")
    trav = io.BytesIO()
    with zipfile.ZipFile(trav, "w") as z:
        z.writestr("word/document.xml", "<x/>")
        z.writestr("../../etc/passwd", "x")
    st, _, body = translate_file(s, "trav.docx", trav.getvalue())
    T.ok(st == 400 and "'..'" in body.get("error", ""), f"traversal 400: {st} {body}")
    body, h = multipart({"target": "en"}, [])
    st, _, out = s.post("/translate_file", body, h)
    T.ok(st == 400 and "missing file" in out.get("error", ""), f"no file 400: {st} {out}")
    body, h = multipart({}, [("file", "a.txt", b"x")])
    st, _, out = s.post("/translate_file", body, h)
    T.ok(st == 400 and "target" in out.get("error", ""), f"no target 400: {st} {out}")
    st, _, out = translate_file(s, "a.txt", ZH[0].encode(), target="xx-!")
    T.eq(st, 400, f"bad target code: {out}")
    # Over --max-document-mb 1: refused from the Content-Length, before the body.
    import socket
    with socket.create_connection(("127.0.0.1", s.port), timeout=60) as c:
        c.sendall(b"POST /translate_file HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data;"
                  b" boundary=b\r\nContent-Length: 3000000\r\n\r\n")
        head = c.recv(4096).decode("utf-8", "replace")
    T.ok(head.startswith("HTTP/1.1 413"), f"over --max-document-mb: {head[:200]!r}")
    st, _, out = translate_file(s, "long.txt", ((ZH[1] + "\n") * 400).encode())  # ~8000 characters
    T.ok(st == 413 and "characters" in out.get("error", ""),
         f"over --max-document-chars: {st} {str(out)[:200]}")
    st, _, out = s.raw("GET", "/download_file/" + "0" * 32 + ".x.txt")
    T.eq(st, 404, "unknown download id")
    st, _, out = s.raw("GET", "/download_file/..")
    T.ok(st == 400 and b"Invalid filename" in out, f"download '..': {st} {out}")
    for bare in ("/download_file", "/download_file/"):  # the route's prefix alone
        st, _, out = s.raw("GET", bare)
        T.ok(st == 400 and b"Invalid filename" in out, f"download {bare}: {st} {out}")
    st, _, out = s.raw("POST", "/translate/document?filename=x.txt", b"",
                     {"Content-Type": "text/plain"})
    T.eq(st, 400, "native: empty body")


def check_metrics(s):
    m = s.settled_metrics()
    T.ok(m.get('fanyi_documents_total{format="docx",status="200"}', 0) >= 2, "docx counted")
    T.ok(m.get('fanyi_documents_total{format="docx",status="413"}', 0) >= 1, "zip bomb counted")
    T.ok(m.get('fanyi_document_bytes_total{direction="in"}', 0) > 0, "bytes in counted")
    T.ok(m.get("fanyi_download_store_entries", 0) >= 1, "store entries gauge")


def check_ttl_and_auth():
    # --download-ttl 3: the download right after the translation comes
    # within it even in a slow build.
    with Server(["--download-ttl", "3", "--api-token", "sekret"]) as s:
        st, _, body = translate_file(s, "a.txt", ZH[0].encode())
        T.eq(st, 401, f"no token: {body}")
        st, _, body = translate_file(s, "a.txt", ZH[0].encode(), api_key="wrong")
        T.eq(st, 403, "wrong token")
        st, _, body = translate_file(s, "a.txt", ZH[0].encode(), api_key="sekret")
        if T.eq(st, 200, f"token in api_key: {body}"):
            T.eq(download(s, body["translatedFileUrl"])[0], 200, "download needs no token")
            until = time.monotonic() + 30
            while download(s, body["translatedFileUrl"])[0] == 200 and time.monotonic() < until:
                time.sleep(0.1)
            T.eq(download(s, body["translatedFileUrl"])[0], 404, "gone after --download-ttl")


def check_cli():
    d = tempfile.mkdtemp(prefix="fanyi-doc-cli-")
    src = os.path.join(d, "report.docx")
    open(src, "wb").write(make_docx())
    r = subprocess.run([BIN, "translate", "--model", MODEL, "--file", src], capture_output=True,
                       text=True, timeout=600)
    T.eq(r.returncode, 0, f"fanyi translate --file: {r.stderr}")
    out = os.path.join(d, "report.en.docx")
    T.ok(os.path.exists(out) and zipfile.is_zipfile(out), "report.en.docx written")
    r = subprocess.run([BIN, "translate", "--model", MODEL, "--file", os.path.join(d, "x.exe")],
                       capture_output=True, text=True, timeout=60)
    T.eq(r.returncode, 1, "a missing file fails")
    r = subprocess.run([BIN, "translate", "-o", "x"], capture_output=True, text=True, timeout=60)
    T.eq(r.returncode, 2, "-o without --file is a usage error")


with Server(["--max-document-mb", "1", "--max-document-chars", "5000"]) as s:
    check_libre(s)
    check_native(s)
    check_refusals(s)
    check_metrics(s)
check_ttl_and_auth()
check_cli()
T.finish()
