"""fylib.py - helpers for the server tests: start the real `fanyi serve` on
a free loopback port with the synthetic model, talk HTTP to it, check.

Every test script does:
    from fylib import Server, T
    with Server(extra_args) as s:
        st, hdrs, body = s.post("/translate", {"text": "你好"})
        T.eq(st, 200, "native status")
    T.finish()
"""
import http.client
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import T  # noqa: E402,F401  (the tests' counted checks, here for every server test)

BIN = os.environ.get("FANYI_BIN")
BUILD = os.environ.get("FANYI_BUILD_DIR")
if not BIN or not BUILD:
    sys.exit("FANYI_BIN and FANYI_BUILD_DIR must be set (run through ctest)")
MODEL = os.environ.get("FANYI_TEST_MODEL") or os.path.join(BUILD, "models", "tiny-int8-sl")

# Sentences for tests: ordinary Chinese text. The synthetic model turns some
# sentences into control characters only, which the clean-up drops (an empty
# translation): none of these is one of them, greedy or beam.
ZH = [
    "请问去火车站怎么走？",
    "这本书我已经看了三遍，每次都有新的收获。",
    "明天早上九点，我们在学校门口见面。",
    "他把钥匙忘在办公室了，只好打电话给同事。",
    "这家饭馆的饺子又便宜又好吃。",
    "天气预报说今天下午有雷阵雨。",
    "我们公司明年打算在上海开一家分店。",
    "孩子们在公园里放风筝。",
]


# 64 short, distinct texts (fast to translate even in sanitizer builds).
# Some of them the synthetic model turns into nothing (test_controls.py
# wants those): a test comparing their translations takes the others.
WORDS = ["你好", "谢谢", "再见", "朋友", "学校", "火车站", "饺子", "天气"]
SHORT = [f"{a}，{b}。" for a in WORDS for b in WORDS]




class Server:
    """`fanyi serve --port 0 ARGS` running while the with-block runs."""

    def __init__(self, args=(), env=None, model=MODEL, models=None):
        self.args = list(args)
        # Document jobs are kept under a data directory: each server gets
        # its own (removed with it) unless the test names one.
        self.data_dir = None
        if "--data-dir" not in self.args and "FANYI_DATA_DIR" not in (env or {}):
            self.data_dir = tempfile.mkdtemp(prefix="fanyi-data-")
            self.args += ["--data-dir", self.data_dir]
        # Sanitizer builds translate slowly: a generous deadline unless the
        # test is about deadlines.
        if "--timeout-ms" not in self.args and "FANYI_TIMEOUT_MS" not in (env or {}):
            self.args += ["--timeout-ms", "600000"]
        self.env = dict(os.environ)
        self.env.update(env or {})
        for k in list(self.env):
            if k.startswith("FANYI_") and k not in ("FANYI_BIN", "FANYI_BUILD_DIR",
                                                    "FANYI_SOURCE_DIR", "FANYI_SHARED_DIR") \
                    and k not in (env or {}):
                del self.env[k]
        self.model = None if models else model
        self.models = models
        self.proc = None
        self.port = None
        self.ready_line = ""

    def start(self):
        cmd = [BIN, "serve", "--port", "0"]
        if self.model:
            cmd += ["--model", self.model]
        if self.models:
            cmd += ["--models", self.models]
        cmd += self.args
        self.stderr_path = f"/tmp/fanyi-serve-{os.getpid()}-{id(self)}.log"
        self.errf = open(self.stderr_path, "w+")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.errf, env=self.env,
                                     text=True)
        self.ready_line = self.proc.stdout.readline()
        if "listening on" not in self.ready_line:
            self.proc.wait(timeout=10)
            self.errf.seek(0)
            raise RuntimeError(f"server did not start: {self.ready_line!r} {self.errf.read()}")
        self.port = int(re.search(r":(\d+) models=", self.ready_line).group(1))
        return self

    def stop(self, timeout=60):
        """SIGTERM and wait; returns the exit status."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.errf.close()
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
        return rc

    def log(self):
        with open(self.stderr_path) as f:
            return f.read()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        rc = self.stop()
        # Sanitizer builds report leaks and races through the exit status.
        if not T.eq(rc, 0, "server exit status after SIGTERM"):
            print(self.log()[-3000:], file=sys.stderr)
        try:
            os.unlink(self.stderr_path)
        except OSError:
            pass

    # ---- HTTP ----
    def request(self, method, path, body=None, headers=None, timeout=600):
        """Returns (status, headers dict with lower-case names, parsed body
        (JSON when it parses, else text))."""
        h = dict(headers or {})
        if isinstance(body, (dict, list)):
            body = json.dumps(body, ensure_ascii=False).encode()
            h.setdefault("Content-Type", "application/json")
        elif isinstance(body, str):
            body = body.encode()
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            raw = r.read()
            hdrs = {k.lower(): v for k, v in r.getheaders()}
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw.decode("utf-8", "replace")
            return r.status, hdrs, data
        finally:
            c.close()

    def raw(self, method, path, body=None, headers=None):
        """(status, headers dict with lower-case names, the body's bytes undecoded)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def post(self, path, body, headers=None, timeout=600):
        return self.request("POST", path, body, headers, timeout)

    def get(self, path, headers=None):
        return self.request("GET", path, None, headers)

    def metrics(self):
        st, _, text = self.get("/metrics")
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
        return out

    def settled_metrics(self, limit=20.0):
        """/metrics once every earlier request is recorded: the server counts
        a request after its answer has gone out (or its client has gone), so
        a client can be faster than the count, slow sanitizer builds
        especially. Only the /metrics request itself is then in progress;
        after limit seconds that fails a check, and the last scrape is
        returned. (Requests whose bytes the server has not read yet are
        not seen.)"""
        end = time.monotonic() + limit
        while True:
            m = self.metrics()
            if m.get("fanyi_http_requests_in_progress") == 1.0:
                return m
            if time.monotonic() > end:
                T.ok(False, f"requests still in progress after {limit:.0f} s: "
                            f"{m.get('fanyi_http_requests_in_progress')}")
                return m
            time.sleep(0.02)

    def translate(self, text, **langs):
        """The server's translation of text: what the tests compare other
        answers with. An empty one would make such a comparison pass whatever
        the server answers (a sentence the synthetic model turns into control
        characters only): it is a failed check, naming the sentence."""
        st, _, body = self.post("/translate", dict(text=text, **langs))
        if st != 200:
            raise RuntimeError(f"/translate {st}: {body}")
        out = body["translation"]
        T.ok(out != "" or not text.strip(),
             f"the translation of {text!r} is empty: pick a sentence with visible output")
        return out


def multipart(fields, files):
    """A multipart/form-data body and its headers: fields {name: value}, files
    [(field, filename, bytes)] or [(field, filename, bytes, content type)]
    (application/octet-stream when not given)."""
    b = "fanyiboundary7f3a"
    out = io.BytesIO()
    for k, v in fields.items():
        out.write(f'--{b}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode())
    for field, name, data, *ctype in files:
        out.write(f'--{b}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
                  f'Content-Type: {ctype[0] if ctype else "application/octet-stream"}\r\n\r\n'.encode())
        out.write(data)
        out.write(b"\r\n")
    out.write(f"--{b}--\r\n".encode())
    return out.getvalue(), {"Content-Type": f"multipart/form-data; boundary={b}"}


def responses(data):
    """[(status, headers lower-cased, body)] of the complete HTTP responses at
    the start of a byte stream read from a connection (interim 100 Continue
    skipped; a response whose body has not all arrived is not counted)."""
    out = []
    while data.startswith(b"HTTP/"):
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        lines = head.split(b"\r\n")
        h = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(b":")
            h[k.strip().lower().decode()] = v.strip().decode("latin-1")
        if int(lines[0].split()[1]) == 100:
            data = rest
            continue
        n = int(h.get("content-length", "0"))
        if len(rest) < n:
            break
        out.append((int(lines[0].split()[1]), h, rest[:n]))
        data = rest[n:]
    return out


def sse_events(resp):
    """Parses a text/event-stream response into [(event, data-json)], reading
    it line by line as it arrives."""
    events = []
    event, data = "message", []
    while True:
        line = resp.readline()
        if not line:
            break
        line = line.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                events.append((event, json.loads("\n".join(data))))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    return events


def now():
    return time.monotonic()


class ReadyWatch:
    """Kept-alive connections, opened before a SIGTERM, that ask /ready until
    the server says it is draining (a loaded machine may take a while to
    run the server's main thread at the signal). An answer made as the
    signal lands can be one that is not yet "draining" but closes its
    connection (the server looked before and after): the next connection
    then asks, so the last answer is the draining server's own."""

    def __init__(self, server, count=2):
        self.conns = []
        for _ in range(count):
            c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
            status, connection, body = self._ask(c)
            if connection == "close" or body.get("status") == "draining":
                raise RuntimeError(f"/ready before the signal: {status} {body}")
            self.conns.append(c)

    @staticmethod
    def _ask(c):
        c.request("GET", "/ready")
        r = c.getresponse()
        return r.status, r.getheader("Connection", "").lower(), json.loads(r.read())

    def until_draining(self, secs=10):
        """(status, Connection header, body) of the first answer that says
        "draining" or closes its connection, or of the last one after secs."""
        until = now() + secs
        while True:
            status, connection, body = self._ask(self.conns[0])
            draining = body.get("status") == "draining"
            if connection == "close" and not draining and len(self.conns) > 1:
                self.conns.pop(0).close()
                continue
            if draining or connection == "close" or now() > until:
                return status, connection, body
            time.sleep(0.01)

    def close(self):
        for c in self.conns:
            c.close()


def accept_queue(port):
    """Connections to `port` waiting in the kernel for the server's accept()
    (its listening socket's queue, from /proc/net/tcp*); None if no such
    socket. Zero: the server has taken in every connection made so far,
    which a loaded machine may take a while to do. Asking the server itself
    would take a connection of its own."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                p = line.split()
                if p[3] == "0A" and int(p[1].rsplit(":", 1)[1], 16) == port:
                    return int(p[4].split(":")[1], 16)
    return None


def wait_accepted(port, secs=20):
    """Whether the server on `port` took in every connection made so far
    within secs (its accept queue empty)."""
    return wait_for(lambda: accept_queue(port) == 0, secs)


def wait_for(cond, secs, step=0.01):
    """Polls cond every step seconds until it is true or secs have passed;
    returns its last value. For states a loaded machine reaches late: the
    check that follows says what was expected."""
    until = now() + secs
    while True:
        v = cond()
        if v or now() > until:
            return v
        time.sleep(step)
