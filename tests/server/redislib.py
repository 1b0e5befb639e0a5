"""redislib.py - a redis-server of the test's own on a free loopback port, a
minimal RESP client to look inside it, and a server that accepts
connections but never answers.

    with RedisServer() as r:          # redis-server --bind 127.0.0.1 --port P --save '' ...
        r.command("DBSIZE")
        r.kill9()                     # as a crash would; r.start() brings it back on P
    with SilentServer() as s:         # accepts, reads, never replies
        ... s.port ...

Only 127.0.0.1; every process and socket started here is stopped on exit.
"""
import os
import socket
import subprocess
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read_reply(f):
    """One RESP2 reply from the file object f (errors come back as
    RuntimeError instances, not raised)."""
    line = f.readline()
    if not line:
        raise ConnectionError("redis closed the connection")
    kind, rest = line[:1], line[1:].rstrip(b"\r\n")
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        return RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:n]
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise ValueError(f"bad RESP line {line!r}")


class RedisServer:
    def __init__(self, port=None):
        self.port = port or free_port()
        self.proc = None
        self.log_path = f"/tmp/fanyi-redis-{os.getpid()}-{self.port}.log"

    def start(self, timeout=10):
        self.logf = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no"], stdout=self.logf, stderr=subprocess.STDOUT)
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            try:
                if self.command("PING") == "PONG":
                    return self
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def command(self, *args):
        """Sends one command on a fresh connection and returns its reply."""
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"".join(parts))
            with s.makefile("rb") as f:
                return _read_reply(f)

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.logf.close()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.logf.closed:
            self.logf.close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass


class SilentServer:
    """Listens on a free loopback port, accepts every connection and reads
    from it, and never writes a byte: a Redis that hangs."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.accepted = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.stopping:  # each pass waits at most 0.1 s
            try:
                c, _ = self.sock.accept()
                c.setblocking(False)
                self.conns.append(c)
                self.accepted += 1
            except socket.timeout:
                pass
            for c in self.conns:
                try:
                    c.recv(65536)
                except (BlockingIOError, OSError):
                    pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.thread.join(timeout=5)
        for c in self.conns:
            c.close()
        self.sock.close()
