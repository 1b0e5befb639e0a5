"""lblib.py - replicas of `fanyi serve` on fixed loopback ports, a real
nginx or haproxy in front of them running the configuration shipped in
deploy/lb/ (only its addresses rewritten), and a bounded load generator.

Every process started here is stopped by stop()/close(); nothing leaves
127.0.0.1."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from fylib import BIN, MODEL  # noqa: E402

SOURCE = os.environ.get("FANYI_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
DEPLOY = os.path.join(SOURCE, "deploy", "lb")


def free_ports(n):
    """n distinct ports free now on 127.0.0.1 (bound, read, released)."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_port(port, timeout=10.0):
    """True once something accepts connections on 127.0.0.1:port."""
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


class Replica:
    """`fanyi serve --port PORT` with the test model, one worker thread."""

    def __init__(self, port, name, args=(), quiet=True):
        self.port, self.name, self.args, self.quiet = port, name, list(args), quiet
        self.proc = None
        self.log = open(os.path.join(tempfile.gettempdir(), f"fanyi-lb-{os.getpid()}-{name}.log"),
                        "w+")

    def start(self):
        cmd = [BIN, "serve", "--port", str(self.port), "--model", MODEL, "--threads", "1",
               "--cache-mb", "0", "--timeout-ms", "600000"] + (["--quiet"] if self.quiet else [])
        cmd += self.args
        env = {k: v for k, v in os.environ.items() if not k.startswith("FANYI_")}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.wait(timeout=10)
            raise RuntimeError(f"{self.name} did not start: {line!r}")
        return self

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout=30):
        """SIGTERM; the exit status (None if it had to be killed)."""
        if not self.proc or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def in_flight(self):
        """Sentences queued or being translated now (0 when unreachable)."""
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            c.close()
        except OSError:
            return 0
        total = 0.0
        for name in ("fanyi_sentences_in_flight", "fanyi_queue_depth"):
            m = re.search(rf"^{name} (\S+)$", text, re.M)
            if m:
                total += float(m.group(1))
        return total


def render(text, lb_port, ports, retries=True):
    """The shipped configuration with its listen address and replicas
    replaced; without retries, the retry settings taken out (the control
    run that must show errors)."""
    text = re.sub(r"127\.0\.0\.1:8989", f"127.0.0.1:{lb_port}", text)
    for i, p in enumerate(ports):
        text = text.replace(f"127.0.0.1:898{i + 1}", f"127.0.0.1:{p}")
    # Fewer replicas than the shipped three: the rest of its list goes.
    text = re.sub(r"^.*127\.0\.0\.1:898[1-9]\b.*\n", "", text, flags=re.M)
    if not retries:
        text = re.sub(r"^\s*(proxy_next_upstream|retry-on|retries|option redispatch)\b.*$", "",
                      text, flags=re.M)
    return text


class Proxy:
    """nginx or haproxy on lb_port in front of ports, from deploy/lb/."""

    def __init__(self, kind, lb_port, ports, retries=True, conf=None):
        """conf: an nginx snippet to run instead of deploy/lb's (already
        rendered for its ports)."""
        self.kind, self.port = kind, lb_port
        self.dir = tempfile.mkdtemp(prefix=f"fanyi-{kind}-")
        name = "nginx.conf" if kind == "nginx" else "haproxy.cfg"
        if conf is None:
            with open(os.path.join(DEPLOY, name)) as f:
                conf = render(f.read(), lb_port, ports, retries)
        self.log = open(os.path.join(self.dir, "out.log"), "w+")
        if kind == "nginx":
            self.cmd = self._nginx(conf)
        else:
            path = os.path.join(self.dir, "haproxy.cfg")
            with open(path, "w") as f:
                f.write(conf)
            self.cmd = ["haproxy", "-db", "-f", path]
        self.proc = None

    def _nginx(self, snippet):
        d = self.dir
        with open(os.path.join(d, "fanyi.conf"), "w") as f:
            f.write(snippet)
        user = "user root root;\n" if os.geteuid() == 0 else ""
        main = (f"{user}daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\n"
                f"error_log {d}/error.log warn;\nevents {{ worker_connections 1024; }}\n"
                "http {\n    access_log off;\n"
                f"    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n"
                f"    fastcgi_temp_path {d}/fcgi;\n    uwsgi_temp_path {d}/uwsgi;\n"
                f"    scgi_temp_path {d}/scgi;\n    include {d}/fanyi.conf;\n}}\n")
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(main)
        return ["nginx", "-p", d, "-e", f"{d}/error.log", "-c", f"{d}/nginx.conf"]

    def start(self):
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=self.log)
        if not wait_port(self.port):
            self.close()
            raise RuntimeError(f"{self.kind} did not start: {self.output()}")
        return self

    def output(self):
        self.log.flush()
        with open(self.log.name) as f:
            out = f.read()
        err = os.path.join(self.dir, "error.log")
        if os.path.exists(err):
            with open(err) as f:
                out += f.read()
        return out

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Load:
    """conc clients sending POST /translate to port over kept-alive
    connections until stop(): counts answers by status and checks every
    200 against the expected translation."""

    def __init__(self, port, cases, conc=6):
        self.port, self.cases, self.conc = port, cases, conc
        self.lock = threading.Lock()
        self.status = {}
        self.errors = []  # (what, detail) of every failed request
        self.wrong = 0
        self.done = threading.Event()
        self.threads = [threading.Thread(target=self._client, args=(i,)) for i in range(conc)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def _count(self, key, detail=None):
        with self.lock:
            self.status[key] = self.status.get(key, 0) + 1
            if detail is not None:
                self.errors.append((key, detail))

    def _client(self, k):
        conn, i = None, k
        while not self.done.is_set():
            text, want = self.cases[i % len(self.cases)]
            i += self.conc
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                body = json.dumps({"text": text}, ensure_ascii=False).encode()
                conn.request("POST", "/translate", body=body,
                             headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                raw = r.read()
                if r.status != 200:
                    self._count(r.status, raw[:200])
                elif json.loads(raw).get("translation") != want:
                    with self.lock:
                        self.wrong += 1
                    self._count("wrong", raw[:200])
                else:
                    self._count(200)
                if (r.getheader("Connection") or "").lower() == "close":
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException, ValueError) as e:
                self._count("exception", repr(e))
                if conn:
                    conn.close()
                conn = None
        if conn:
            conn.close()

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(timeout=60)
        return self

    def ok(self):
        return self.status.get(200, 0)

    def failed(self):
        return sum(v for k, v in self.status.items() if k != 200)
