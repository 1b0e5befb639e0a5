#!/usr/bin/env python3
"""test_chunked.py - chunked request bodies (docs/reliability.md, "Chunked
request bodies"): the clients that send them (curl -T -, Python requests
with a generator, http.client and urllib with an iterable, Node's fetch
with a stream) are served; libmicrohttpd's decoding is strict where it
matters (hexadecimal sizes only, no overflow, a malformed chunk closes the
connection, so nothing after it is run as a request: no smuggling);
extensions and trailers are ignored, and trailers are bounded; the body
limits and the request memory apply as to a body with a Content-Length."""
import http.client
import json
import socket
import subprocess
import time
import urllib.request

import requests

from fylib import T, Server, ZH, responses, wait_for

HEAD = (b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n")
BODY = json.dumps({"text": ZH[0]}).encode()
NEXT = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"  # pipelined after the request
SMUGGLED = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


def exchange(port, data, until=2, wait=10.0):
    """Sends data; reads until `until` answers came or the server closed.
    Returns ([(status, headers, body)], closed, seconds)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=wait)
    t0 = time.monotonic()
    out, closed = b"", False
    try:
        c.sendall(data)
        while len(responses(out)) < until:
            d = c.recv(65536)
            if not d:
                closed = True
                break
            out += d
    except socket.timeout:
        pass
    except OSError:
        closed = True
    finally:
        c.close()
    return responses(out), closed, time.monotonic() - t0


def translation(body):
    try:
        return json.loads(body)["translation"]
    except (ValueError, KeyError, TypeError):
        return None


def clients(s, want):
    url = f"http://127.0.0.1:{s.port}/translate"
    pieces = [BODY[:7], BODY[7:]]
    r = subprocess.run(["curl", "-s", "-T", "-", "-X", "POST", "-H",
                        "Content-Type: application/json", url], input=BODY,
                       capture_output=True, timeout=60)
    T.eq(translation(r.stdout), want, f"curl -T - (chunked, Expect: 100-continue): {r.stdout[:80]!r}")
    r = requests.post(url, data=iter(pieces), headers={"Content-Type": "application/json"},
                      timeout=60)
    T.eq((r.request.headers.get("Transfer-Encoding"), r.status_code, translation(r.content)),
         ("chunked", 200, want), "requests with a generator")
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate", body=iter(pieces), encode_chunked=True,
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    T.eq((r.status, translation(r.read())), (200, want), "http.client, encode_chunked")
    c.close()
    req = urllib.request.Request(url, data=iter(pieces), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        T.eq((r.status, translation(r.read())), (200, want), "urllib with an iterable")
    node = ("const body = new ReadableStream({start(c) {"
            f"c.enqueue(Buffer.from({json.dumps(BODY[:7].decode())}));"
            f"c.enqueue(Buffer.from({json.dumps(BODY[7:].decode())})); c.close();}}}});"
            f"fetch('{url}', {{method: 'POST', body, duplex: 'half',"
            "headers: {'Content-Type': 'application/json'}})"
            ".then(async r => console.log(JSON.stringify([r.status, await r.text()])))"
            ".catch(e => console.log(JSON.stringify(['error ' + e.message, ''])));")
    r = subprocess.run(["node", "-e", node], capture_output=True, text=True, timeout=60)
    st, b = json.loads(r.stdout or '["no output", ""]')
    T.eq((st, translation(b)), (200, want), "Node fetch with a ReadableStream body")


def framing(s, want):
    ok = [  # name, the request's chunks: served, and the pipelined request too
        ("one chunk", chunk(BODY) + b"0\r\n\r\n"),
        ("one byte per chunk", b"".join(chunk(BODY[i:i + 1]) for i in range(len(BODY))) +
         b"0\r\n\r\n"),
        ("upper-case hex", b"%X\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)),
        ("leading zeros", b"000000000000000000000000%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)),
        ("extensions ignored", b"%x;name=value;q=\"a b\"\r\n%s\r\n0;x=1\r\n\r\n" % (len(BODY), BODY)),
        ("trailers ignored (a Content-Length among them changes nothing)",
         chunk(BODY) + b"0\r\nX-Trailer: 1\r\nContent-Length: 1000\r\n\r\n"),
        ("bare LF line ends (as nginx)", b"%x\n%s\n0\n\n" % (len(BODY), BODY)),
    ]
    for name, body in ok:
        a, _, _ = exchange(s.port, HEAD + body + NEXT)
        T.eq([(st, translation(b) if st == 200 and b.startswith(b"{\"tr") else b[:15])
              for st, b in [(x[0], x[2]) for x in a]],
             [(200, want), (200, b'{"status":"ok"}')], f"{name}: served, then the next request")
    bad = [  # name, chunks, status: libmicrohttpd's own answer, then it closes
        ("0x prefix", b"0x%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY), 400),
        ("space after the size", b"%x \r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY), 400),
        ("a negative size", b"-1\r\n%s\r\n0\r\n\r\n" % BODY, 400),
        ("size shorter than the data (smuggling)", b"3\r\n%s\r\n0\r\n\r\n" % BODY, 400),
        ("no CRLF after the data", b"%x\r\n%sXY0\r\n\r\n" % (len(BODY), BODY), 400),
        ("size past 64 bits", b"10000000000000000\r\n%s\r\n0\r\n\r\n" % BODY, 413),
        ("a 100 KiB trailer", chunk(BODY) + b"0\r\nX: " + b"a" * 100000 + b"\r\n\r\n", 431),
        ("5,000 trailers", chunk(BODY) + b"0\r\n" +
         b"".join(b"X%d: y\r\n" % i for i in range(5000)) + b"\r\n", 431),
    ]
    for name, body, want_st in bad:
        a, closed, dt = exchange(s.port, HEAD + body + SMUGGLED)
        T.ok(len(a) == 1 and a[0][0] == want_st and a[0][1].get("connection") == "close",
             f"{name}: {want_st} and Connection: close ({[(x[0], x[2][:60]) for x in a]})")
        T.ok(closed and dt < 2, f"{name}: closed at once ({dt:.2f} s), nothing after it run")


def limits():
    with Server(["--max-chars", "100", "--read-timeout", "2", "--request-memory", "1"]) as s:
        # Over the body limit (100 chars allow 6 × 100 + 128 × 16 + 64 KiB):
        # read to its end and dropped, then 413, and the connection goes on.
        big = b"".join(chunk(b"a" * 65536) for _ in range(4)) + b"0\r\n\r\n"
        a, _, _ = exchange(s.port, HEAD + big + NEXT)
        T.ok([x[0] for x in a] == [413, 200] and b"--max-chars 100" in a[0][2],
             f"256 KiB chunked over the limit: 413 naming --max-chars, then the next request "
             f"({[(x[0], x[2][:120]) for x in a]})")
        # Past the limit by more than 32 MiB: cut, not read on and on.
        c = socket.create_connection(("127.0.0.1", s.port), timeout=20)
        c.sendall(HEAD)
        piece, sent = chunk(b"a" * 65536), 0
        try:
            while sent < 100 << 20:
                c.sendall(piece)
                sent += 65536
        except OSError:
            pass
        c.close()
        T.ok(sent < 40 << 20, f"endless chunked body: cut after {sent >> 20} MiB")
        print(f"endless chunked body: cut after {sent >> 20} MiB sent")
        # A chunk that never ends (2^63 bytes announced): the connection is
        # closed by --read-timeout (2 s here) like any body that stalls.
        a, closed, dt = exchange(s.port, HEAD + b"8000000000000000\r\nabc", until=1, wait=15)
        T.ok(not a and closed and dt < 6, f"2^63-byte chunk: closed after {dt:.1f} s, no answer")
        T.eq(s.get("/health")[0], 200, "healthy after the hostile bodies")
    # The request memory is reserved as a chunked body grows: past it, 503.
    with Server(["--max-chars", "400000", "--request-memory", "1"]) as s:
        body = json.dumps({"text": "好" * 200000}).encode()  # 1.2 MB: 4 × that is over 1 MiB
        a, _, _ = exchange(s.port, HEAD + chunk(body) + b"0\r\n\r\n", until=1)
        T.ok(a and a[0][0] == 503 and b"--request-memory" in a[0][2] and
             a[0][1].get("retry-after") == "1",
             f"chunked body past --request-memory: 503 ({[(x[0], x[2][:100]) for x in a]})")
        # Returned when the request is freed, just after its answer went out.
        wait_for(lambda: not s.metrics().get("fanyi_request_memory_bytes"), 10)
        T.eq(s.metrics().get("fanyi_request_memory_bytes"), 0.0, "its reservation is returned")


with Server([]) as s:
    want = s.translate(ZH[0])
    clients(s, want)
    framing(s, want)
    # A document can come chunked too (curl -T - < file.txt).
    c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
    c.request("POST", "/translate/document?filename=a.txt&target=en&inline=1",
              body=iter([ZH[1].encode()]), encode_chunked=True,
              headers={"Content-Type": "text/plain"})
    r = c.getresponse()
    lines = [json.loads(x) for x in r.read().splitlines()]
    T.ok(r.status == 200 and lines and lines[-1].get("event") == "done",
         f"chunked document upload: translated ({r.status} {lines[-1:]})")
    c.close()
limits()
T.finish()
