#!/usr/bin/env python3
"""test_messages.py - errors are written for people: a size is given in
KiB/MiB (with as many decimals as it takes to read as more than the limit)
and names the option that sets the limit; every document endpoint and form
(LibreTranslate's /translate_file, the native /translate/document as a
multipart part or as the raw body) has one rule for an empty file."""
import json
import socket

from fylib import T, Server, ZH, multipart


def message(body):
    if isinstance(body, str):  # NDJSON or text
        try:
            body = json.loads(body.splitlines()[-1])
        except (ValueError, IndexError):
            return body
    e = body.get("error", body.get("message"))
    return e.get("message", "") if isinstance(e, dict) else (e or "")


def header_only(s, head):
    """The answer to a request's headers alone (a refused Content-Length)."""
    c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    c.sendall(head)
    out = b""
    while b"\r\n\r\n" not in out or not out.rstrip().endswith(b"}"):
        d = c.recv(65536)
        if not d:
            break
        out += d
    c.close()
    return out.decode("utf-8", "replace")


with Server(["--max-chars", "50", "--max-batch-items", "4", "--max-document-mb", "1"]) as s:
    # Content-Length over a text route's limit (6 × 50 + 16 × 4 + 64 KiB).
    got = header_only(s, b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                         b"\r\nContent-Length: 1300000\r\n\r\n")
    T.ok("the request body is 1.2 MiB, over the limit of 64.4 KiB that --max-chars 50 and "
         "--max-batch-items 4 set" in got, f"JSON body over the limit: {got[-200:]!r}")
    # A document route's upload over --max-document-mb (+ 64 KiB for the form).
    got = header_only(s, b"POST /translate/document?target=en HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Type: text/plain\r\nContent-Length: 22000000\r\n\r\n")
    T.ok("the upload is 21.0 MiB, over the limit of --max-document-mb 1 (1.0 MiB per document)"
         in got, f"upload over --max-document-mb: {got[-200:]!r}")
    # A document within the upload limit but over the document limit: the
    # size read as more than the limit, however close.
    doc = ("你好。" * 400000).encode()[:(1 << 20) + 1]
    st, _, b = s.post("/translate/document?filename=a.txt&target=en", doc,
                      {"Content-Type": "text/plain"})
    T.eq((st, message(b)),
         (413, "the document is 1048577 bytes, over the limit of --max-document-mb 1 (1.0 MiB)"),
         "document 1 byte over --max-document-mb")
    doc = ("你好。" * 400000).encode()[:1100000]
    body, h = multipart({"target": "en"}, [("file", "a.txt", doc, "text/plain")])
    st, _, b = s.post("/translate_file", body, h)
    T.eq((st, message(b)), (413, "the document is 1.05 MiB, over the limit of --max-document-mb 1 "
                                 "(1.0 MiB)"), "translate_file over --max-document-mb")
    # Texts: characters and items name their options.
    st, _, b = s.post("/translate", {"text": "好" * 51})
    T.eq((st, message(b)), (413, "text has 51 characters; the limit is 50 characters per request "
                                 "(--max-chars)"), "characters")
    st, _, b = s.post("/translate", {"text": ["a"] * 5})
    T.eq((st, message(b)), (413, "field 'text' has 5 items; the limit is 4 per request "
                                 "(--max-batch-items)"), "items")

    # One rule for an empty document, whichever endpoint and form.
    EMPTY = "the document is empty (0 bytes): there is nothing to translate"
    body, h = multipart({"target": "en"}, [("file", "a.txt", b"", "text/plain")])
    for path in ("/translate_file", "/translate/document"):
        st, _, b = s.post(path, body, h)
        T.eq((st, message(b)), (400, EMPTY), f"{path}: an empty multipart file")
    st, _, b = s.post("/translate/document?filename=a.txt&target=en", b"",
                      {"Content-Type": "text/plain"})
    T.eq((st, message(b)), (400, EMPTY), "/translate/document: an empty body")
    body, h = multipart({"target": "en"}, [("file", "a.docx", b"", "text/plain")])
    st, _, b = s.post("/translate_file", body, h)
    T.eq((st, message(b)), (400, EMPTY), "an empty .docx: the same rule before the format's")
    # A document with bytes but no text to translate comes back unchanged.
    body, h = multipart({"target": "en"}, [("file", "a.txt", b"  \n\n 42\n", "text/plain")])
    st, _, b = s.post("/translate_file", body, h)
    T.ok(st == 200 and "translatedFileUrl" in b, f"no text to translate: 200 ({st} {b})")
    st, _, b = s.post("/translate/document?filename=a.txt&target=en&inline=1", b"  \n\n 42\n",
                      {"Content-Type": "text/plain"})
    last = json.loads(b.splitlines()[-1]) if isinstance(b, str) else b
    T.eq((st, last.get("event"), last.get("bytes")), (200, "done", 8),
         "no text to translate: done, the same bytes")
    st, _, b = s.post("/translate", {"text": ZH[0]})
    T.eq(st, 200, "still translating")
T.finish()
