#!/usr/bin/env python3
"""test_tls.py - `fanyi serve --tls-cert FILE --tls-key FILE` (HTTPS through
libmicrohttpd's GnuTLS) with a CA and a certificate for 127.0.0.1 made by
openssl here: answers over TLS to a client trusting the CA, keep-alive, a
large body, a stream; no answer in plain HTTP; a client that does not trust
the certificate refuses it; and the start-up errors (certificate without a
key, a key that does not match, not PEM, a missing file), each exit 2 with
a message naming the files. The options also come from FANYI_TLS_CERT and
FANYI_TLS_KEY."""
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile

from fylib import BIN, MODEL, T, Server, ZH, sse_events

tmp = tempfile.mkdtemp(prefix="fanyi-tls-")


def openssl(*args):
    subprocess.run(["openssl", *args], cwd=tmp, check=True, capture_output=True, timeout=60)


openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem",
        "-days", "2", "-subj", "/CN=Fanyi test CA")
openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.csr", "-subj",
        "/CN=127.0.0.1")
with open(os.path.join(tmp, "ext.cnf"), "w") as f:
    f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
openssl("x509", "-req", "-in", "cert.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem",
        "-CAcreateserial", "-out", "cert.pem", "-days", "2", "-extfile", "ext.cnf")
CERT, KEY, CA = (os.path.join(tmp, n) for n in ("cert.pem", "key.pem", "ca.pem"))
TRUST = ssl.create_default_context(cafile=CA)


def https(port, method, path, body=None, ctx=TRUST, conn=None):
    """(status, parsed body) over TLS; conn: reuse a connection (keep-alive)."""
    c = conn or http.client.HTTPSConnection("127.0.0.1", port, timeout=300, context=ctx)
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    c.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    r = c.getresponse()
    raw = r.read()
    if not conn:
        c.close()
    return r.status, json.loads(raw) if raw else None


with Server(["--threads", "1", "--tls-cert", CERT, "--tls-key", KEY]) as s:
    T.ok("listening on https://127.0.0.1:" in s.ready_line, f"ready line says https: {s.ready_line}")
    st, b = https(s.port, "GET", "/health")
    T.eq((st, b), (200, {"status": "ok"}), "GET /health over TLS")
    st, b = https(s.port, "POST", "/translate", {"text": ZH[0]})
    T.ok(st == 200 and b["translation"], f"POST /translate over TLS: {st} {b}")
    want = b["translation"]
    c = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=300, context=TRUST)
    for i in range(3):
        st, b = https(s.port, "POST", "/translate", {"text": ZH[0]}, conn=c)
        T.eq((st, b.get("translation")), (200, want), f"keep-alive request {i} on one TLS connection")
    c.close()
    # A body of many TLS records (the limit is 5000 characters: 413 past it).
    big = ("这家饭馆的饺子又便宜又好吃，" * 20 + "。") * 15
    st, b = https(s.port, "POST", "/translate", {"text": big})
    T.ok(st == 200 and b["translation"], f"a 12 KB body over TLS: {st} {b}")
    st, b = https(s.port, "POST", "/translate", {"text": big * 2})
    T.eq(st, 413, "over --max-chars over TLS: 413")
    # Server-sent events.
    c = http.client.HTTPSConnection("127.0.0.1", s.port, timeout=300, context=TRUST)
    c.request("POST", "/translate/stream", body=json.dumps({"text": ZH[0] + ZH[1]}).encode(),
              headers={"Content-Type": "application/json"})
    events = sse_events(c.getresponse())
    c.close()
    T.eq([e for e, _ in events], ["sentence", "sentence", "done"], "a stream over TLS")
    # Plain HTTP gets no HTTP answer.
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        reply = sock.recv(4096)
    except OSError:
        reply = b""
    sock.close()
    T.ok(not reply.startswith(b"HTTP/"), f"plain HTTP on the TLS port: no HTTP answer {reply[:40]!r}")
    # A client that does not trust the certificate refuses the server.
    try:
        https(s.port, "GET", "/health", ctx=ssl.create_default_context())
        T.ok(False, "an untrusted certificate was accepted")
    except ssl.SSLCertVerificationError:
        T.ok(True, "a client without the CA refuses the certificate")

with Server(["--threads", "1"], env={"FANYI_TLS_CERT": CERT, "FANYI_TLS_KEY": KEY}) as s:
    st, b = https(s.port, "GET", "/health")
    T.eq(st, 200, "FANYI_TLS_CERT and FANYI_TLS_KEY")

# Start-up errors: exit 2, the reason and the files named.
other_key = os.path.join(tmp, "ca-key.pem")
junk = os.path.join(tmp, "ext.cnf")
missing = os.path.join(tmp, "nope.pem")
for args, want, what in [
    (["--tls-cert", CERT], "--tls-cert and --tls-key go together", "certificate without key"),
    (["--tls-key", KEY], "--tls-cert and --tls-key go together", "key without certificate"),
    (["--tls-cert", CERT, "--tls-key", other_key], "do not match", "a key of another certificate"),
    (["--tls-cert", junk, "--tls-key", KEY], "cannot be used", "a certificate that is not PEM"),
    (["--tls-cert", missing, "--tls-key", KEY], "nope.pem: cannot use it as the TLS certificate",
     "a missing certificate file"),
    (["--tls-cert", CERT, "--tls-key", tmp], "cannot use it as the TLS key", "a directory as the key"),
]:
    p = subprocess.run([BIN, "serve", "--port", "0", "--model", MODEL, *args], capture_output=True,
                       text=True, timeout=60)
    T.ok(p.returncode == 2 and want in p.stderr, f"{what}: exit 2 with {want!r} ({p.returncode} "
         f"{p.stderr.strip()!r})")
    if "do not match" in want or "cannot be used" in want:
        T.ok(CERT in p.stderr or junk in p.stderr, f"{what}: the message names the files")

shutil.rmtree(tmp)
T.finish()
