#!/usr/bin/env python3
"""test_memory.py - request memory is bounded: bodies that cannot be a valid
request (arrays or objects of zeros, 10,000 strings, a form of 10,000
fields, deep nesting) are refused before a document is built, requests
that fit still work in every shape, --request-memory answers 503 when the
requests in progress hold it all, and the memory of a burst goes back to
the system afterwards.

The RSS figures are read from outside (/proc/PID/status) and checked only
in builds without a sanitizer (ASan and TSan keep freed memory on purpose);
the refusals are checked in every build."""
import json
import socket
import threading
import time

from fylib import T, Server, wait_for

ZEROS = 45000  # a padded body of ~90 KB, within the 97 KB body limit


def padded_array():
    return b'{"text":"\xe4\xbd\xa0\xe5\xa5\xbd","pad":[' + b",".join([b"0"] * ZEROS) + b"]}"


def padded_object():
    return (b'{"text":"\xe4\xbd\xa0\xe5\xa5\xbd","pad":{' +
            b",".join(b'"%06d":0' % i for i in range(8000)) + b"}}")


def post_bytes(path, body, ctype="application/json"):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n\r\n" % (path.encode(), ctype.encode(), len(body)) + body)


def read_all(c):
    out = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            out += d
    except OSError:
        pass
    c.close()
    return out


def status(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


def rss_kib(s, key="VmRSS"):
    with open(f"/proc/{s.proc.pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def sanitized(s):
    with open(f"/proc/{s.proc.pid}/maps") as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps or "libubsan" in maps


def refusals(s):
    for name, body, ctype, want, word in [
        ("array of 45,000 zeros", padded_array(), "application/json", 413, "values"),
        ("object of 8,000 zeros", padded_object(), "application/json", 413, "values"),
        ("10,000 strings", json.dumps({"text": ["a"] * 10000}).encode(), "application/json",
         413, "values"),
        ("a form of 10,000 fields", b"&".join([b"q=a"] * 10000) + b"&target=en",
         "application/x-www-form-urlencoded", 413, "fields"),
        ("9 levels deep", b'{"text":"a","x":' + b"[" * 8 + b"]" * 8 + b"}", "application/json",
         400, "deeper"),
    ]:
        st, _, b = s.post("/translate", body, {"Content-Type": ctype})
        msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else ""
        T.ok(st == want and word in msg, f"{name}: {want} naming the bound: {st} {msg!r}")
    # What fits still works: 8 levels, the most texts, every option.
    st, _, b = s.post("/translate", b'{"text":"\xe4\xbd\xa0\xe5\xa5\xbd","x":' + b"[" * 7 +
                      b"]" * 7 + b"}", {"Content-Type": "application/json"})
    T.eq(st, 200, "8 levels deep is fine")
    texts = ["你好"] * 128
    st, _, b = s.post("/translate", {"text": texts, "source": "zh", "target": "en"})
    T.ok(st == 200 and len(b.get("translation", [])) == 128, f"128 texts (native): {st}")
    st, _, b = s.post("/v2/translate", {"text": texts, "target_lang": "EN", "source_lang": "ZH",
                                        "tag_handling": "html", "split_sentences": "1",
                                        "preserve_formatting": "0", "formality": "default"})
    T.ok(st == 200 and len(b.get("translations", [])) == 128, f"128 texts (DeepL): {st}")
    form = "&".join(["text=%E4%BD%A0"] * 128) + "&target_lang=EN"
    st, _, b = s.post("/v2/translate", form.encode(),
                      {"Content-Type": "application/x-www-form-urlencoded"})
    T.ok(st == 200 and len(b.get("translations", [])) == 128, f"128 texts (DeepL form): {st}")


def burst(s):
    """480 padded bodies at once, then the same bodies all held in the server
    at once: RSS against the bytes sent, and after."""
    bodies = [post_bytes("/translate", padded_array() if i % 2 else padded_object())
              for i in range(480)]
    sent = sum(len(b) for b in bodies)
    check_rss = not sanitized(s)
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.wait(0.02):
            peak[0] = max(peak[0], rss_kib(s))
    before = rss_kib(s)
    sampler = threading.Thread(target=sample)
    sampler.start()
    socks = [socket.create_connection(("127.0.0.1", s.port), timeout=120) for _ in bodies]
    for c, data in zip(socks, bodies):
        c.sendall(data)
    got = [status(read_all(c)) for c in socks]
    T.eq(got.count(413), 480, "480 padded bodies at once: all 413")
    sent_peak = max(peak[0], before)
    # Held: every body but its last byte, then the last bytes.
    socks = [socket.create_connection(("127.0.0.1", s.port), timeout=120) for _ in bodies]
    for c, data in zip(socks, bodies):
        c.sendall(data[:-1])
    time.sleep(0.5)
    for c, data in zip(socks, bodies):
        c.sendall(data[-1:])
    got = [status(read_all(c)) for c in socks]
    T.eq(got.count(413), 480, "480 padded bodies held at once: all 413")
    stop.set()
    sampler.join()
    if check_rss:  # the watcher trims at most once a second: a loaded machine's takes longer
        wait_for(lambda: rss_kib(s) < before * 1.25, 10, 0.1)
    else:
        time.sleep(2.0)
    after = rss_kib(s)
    factor = (sent_peak - before) * 1024 / sent
    held_factor = (peak[0] - before) * 1024 / sent
    print(f"memory: {sent / 2**20:.1f} MiB sent by 480 clients at once: RSS {before / 1024:.1f} "
          f"-> peak {sent_peak / 1024:.1f} MiB (factor {factor:.2f}); held at once: peak "
          f"{peak[0] / 1024:.1f} MiB (factor {held_factor:.2f}); then {after / 1024:.1f} MiB"
          + ("" if check_rss else " (sanitizer build: not checked)"))
    if check_rss:
        T.ok(held_factor < 2.0, f"peak RSS growth / bytes sent {held_factor:.2f} < 2")
        T.ok(after < before * 1.25, f"RSS back within 25%: {before} -> {after} KiB")


def budget():
    # 1 MiB: a 90 KB body reserves 4 x 90 KB + 16 KiB, so two fit, not three.
    with Server(["--threads", "1", "--request-memory", "1"]) as s:
        body = padded_array()
        held = []
        for _ in range(2):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=30)
            c.sendall(post_bytes("/translate", body)[:-100])
            held.append(c)
        # Both have reserved their share (when their headers are read).
        wait_for(lambda: s.metrics().get("fanyi_request_memory_bytes", 0) >= 2 * 4 * len(body), 30)
        st, h, b = s.post("/translate", body, {"Content-Type": "application/json"})
        msg = b.get("error", {}).get("message", "") if isinstance(b, dict) else ""
        T.ok(st == 503 and "--request-memory" in msg, f"budget full: 503 {st} {msg!r}")
        T.eq(h.get("retry-after"), "1", "503 has Retry-After")
        st, _, b = s.get("/health")
        T.eq(st, 200, "a request without a body is not refused")
        m = s.metrics()
        T.ok(m.get("fanyi_request_memory_bytes", 0) > 0, "held bodies counted")
        T.ok(m.get("fanyi_request_memory_refused_total") == 1.0, "the refusal counted")
        for c in held:
            c.sendall(post_bytes("/translate", body)[-100:])
        T.eq([status(read_all(c)) for c in held], [413, 413], "the held requests are answered")
        st, _, b = s.post("/translate", {"text": "你好"})
        T.eq(st, 200, "served again once they are done")
        wait_for(lambda: s.metrics().get("fanyi_request_memory_bytes") == 0, 10, 0.05)
        T.eq(s.metrics().get("fanyi_request_memory_bytes"), 0.0, "every reservation released")


with Server(["--threads", "1", "--max-connections", "2048", "--max-connections-per-ip", "0"]) as s:
    t0 = time.monotonic()
    refusals(s)
    burst(s)
    print(f"refusals and burst in {time.monotonic() - t0:.1f} s")
budget()
T.finish()
