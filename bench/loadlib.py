"""loadlib.py - what bench/http, bench/soak and bench/overload share: find
the fanyi binary and a model, start `fanyi serve` on a free loopback port and
stop it, talk HTTP to it (http.client, one keep-alive connection per client),
read its RSS and /metrics, and pick input sentences.

Python 3 standard library only; the HTTP parsing is http.client's.
"""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CJK = re.compile(r"[\u4e00-\u9fff]")


def die(tool, msg):
    print(f"{tool}: {msg}", file=sys.stderr)
    sys.exit(2)


def find_fanyi(tool, arg):
    """--fanyi BIN, else $FANYI_BIN (set by CTest), else build/src/fanyi."""
    b = arg or os.environ.get("FANYI_BIN") or os.path.join(ROOT, "build/src/fanyi")
    if not os.access(b, os.X_OK):
        die(tool, f"{b}: no fanyi binary (build it: scripts/build.sh build, or pass --fanyi BIN)")
    return b


def find_model(tool, arg, name="base-memory-int8-sl"):
    """--model DIR, else NAME from the synth_models fixture of $FANYI_BUILD_DIR
    (CTest) or of build/."""
    if arg:
        d = arg
    else:
        bd = os.environ.get("FANYI_BUILD_DIR") or os.path.join(ROOT, "build")
        d = os.path.join(bd, "models", name)
    if not os.path.isdir(d):
        die(tool, f"{d}: no model directory (pass --model DIR; to write one: fanyi model synth "
            f"--preset base-memory --int8 --shortlist --seed 1 --out DIR)")
    return d


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def own_sentences(limit=None, max_chars=None):
    """Distinct one-line Chinese texts: the WMT19 test set when the shared data
    is there, else the project's own tests/data/text (zh_conformance, mixed)."""
    shared = os.environ.get("FANYI_SHARED_DIR") or os.path.join(ROOT, "..", "shared")
    wmt = os.path.join(shared, "data/wmt/wmt19.zh")
    if os.path.exists(wmt):
        files, source = [wmt], "wmt19.zh"
    else:
        own = os.path.join(ROOT, "tests/data/text")
        files = [os.path.join(own, n) for n in ("zh_conformance.txt", "mixed.txt")]
        source = "tests/data/text"
    out, seen = [], set()
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line or line.startswith("#") or not CJK.search(line) or line in seen:
                    continue
                if max_chars and len(line) > max_chars:
                    continue
                seen.add(line)
                out.append(line)
                if limit and len(out) >= limit:
                    return out, source
    return out, source


def percentile(values, p):
    """Nearest-rank percentile of a list (0 for an empty one)."""
    if not values:
        return 0.0
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


class Server:
    """`fanyi serve --port P --model DIR ARGS` (flag "--models" for a models
    directory) on a free loopback port.

    start() records two times from the exec: until the ready line on stdout
    ("listening on ...") and until GET /ready answers 200."""

    def __init__(self, binary, model, args=(), log=None, flag="--model"):
        self.binary, self.model, self.args, self.flag = binary, model, list(args), flag
        self.log_path = log
        self.proc = None
        self.ready_line_s = None
        self.ready_s = None

    def start(self, timeout=60):
        for attempt in range(3):
            self.port = free_port()
            if self._start(timeout):
                return self
        raise RuntimeError(f"fanyi serve did not start: {self.tail()}")

    def _start(self, timeout):
        cmd = [self.binary, "serve", "--port", str(self.port), self.flag, self.model] + self.args
        if not self.log_path:
            fd, self.log_path = tempfile.mkstemp(prefix="fanyi-load-", suffix=".log")
            os.close(fd)
            self.own_log = True
        else:
            self.own_log = False
        self.errf = open(self.log_path, "w+")
        env = {k: v for k, v in os.environ.items() if not k.startswith("FANYI_")}
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.errf, env=env)
        self.ready_line_s = None

        def read_stdout():
            for line in self.proc.stdout:
                if b"listening on" in line and self.ready_line_s is None:
                    self.ready_line_s = time.monotonic() - t0

        threading.Thread(target=read_stdout, daemon=True).start()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                return False  # e.g. the port was taken meanwhile
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/ready")
                st = c.getresponse().status
                c.close()
                if st == 200:
                    self.ready_s = time.monotonic() - t0
                    return True
            except OSError:
                pass
            time.sleep(0.002)
        self.stop()
        return False

    def rss_kib(self, field="VmRSS"):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=30):
        """SIGTERM, wait; returns the exit status (SIGKILL after timeout)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.errf.close()
        return rc

    def tail(self, n=2000):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def cleanup(self, keep=False):
        if self.own_log and not keep:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def metrics(self):
        c = Client(self.port, timeout=10)
        st, _, body = c.request("GET", "/metrics")
        c.close()
        out = {}
        for line in body.decode().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
        return out


class Client:
    """One keep-alive HTTP/1.1 connection; request() returns (status,
    headers with lower-case names, body bytes) and raises OSError /
    http.client.HTTPException on a socket or protocol error."""

    def __init__(self, port, timeout=120):
        self.port, self.timeout = port, timeout
        self.conn = None

    def request(self, method, path, body=None, headers=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=body, headers=headers or {})
            r = self.conn.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def json_body(obj):
    return json.dumps(obj, ensure_ascii=False).encode()


JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


# ---- wrk ---------------------------------------------------------------------

WRK_LUA = r"""
-- wrk script written by bench/loadlib.py: POST %s with bodies from a set.
local bodies = {
%s
}
local n = 0
local id = 0
function setup(thread)
  thread:set("id", n)
  n = n + 1
end
function init(args)
  id = tonumber(wrk.thread:get("id")) or 0
  i = (id * 37) %% #bodies
end
function request()
  i = i %% #bodies + 1
  return wrk.format("POST", "%s", {["Content-Type"] = "application/json"}, bodies[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,' ..
    '"write":%%d,"status":%%d,"timeout":%%d,"p50_us":%%d,"p90_us":%%d,"p99_us":%%d,"max_us":%%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
"""


def lua_string(s):
    """A Lua long-bracket literal that cannot end early."""
    level = 0
    while "]" + "=" * level + "]" in s:
        level += 1
    eq = "=" * level
    return f"[{eq}[{s}]{eq}]"


def wrk_script(bodies, path="/translate"):
    """A wrk Lua script POSTing the JSON bodies (objects) to path in turn
    and printing one WRKJSON line of figures at the end."""
    return WRK_LUA % (path, ",\n".join(lua_string(json.dumps(b, ensure_ascii=False))
                                       for b in bodies), path)


def run_wrk(tool, port, script, conns, threads, duration, path="/translate"):
    """wrk with conns keep-alive connections for duration seconds; its
    WRKJSON figures (requests, duration_us, error counts, p50/p90/p99/max)."""
    cmd = ["wrk", "-c", str(conns), "-t", str(min(threads, conns)), "-d", f"{max(1, round(duration))}s",
           "--timeout", "60s", "-s", script, f"http://127.0.0.1:{port}{path}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("WRKJSON "):
            return json.loads(line[8:])
    die(tool, f"wrk failed: {r.stdout[-500:]} {r.stderr[-500:]}")
