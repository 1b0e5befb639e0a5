#!/usr/bin/env python3
"""test_server.py - a loopback HTTP file server with faults, for `fanyi model fetch` tests.

Serves the files of --root under a mode prefix chosen by the URL path
(NAME may have directories, as the catalogue's locations do:
main-workspace/translations-models/UUID.bin; no component starts with "."):
  /ok/NAME         normal; honours "Range: bytes=N-" / "bytes=N-M" with 206
  /norange/NAME    ignores Range (always 200 with the whole file)
  /cut/NAME        the first request for NAME announces the full length but
                   sends only half the body, then drops the connection;
                   later requests are served normally
  /cutalways/NAME  every response stops halfway through its body
  /corrupt/NAME    the whole file with one byte in the middle flipped
  /stall/NAME      sends headers and a few bytes, then nothing (until killed)
  /e500/NAME       answers 500
Hostile mirrors (each honours Range like /ok/):
  /mute/NAME       reads the request and never answers
  /drip/NAME       sends the body at 2 bytes/s
  /stall1k/NAME    sends 1 KiB of the body, then nothing, every time
  /drop1k/NAME     sends 1 KiB of the body, then drops the connection, every time
  /slow/NAME       sends the body at about 100 KiB/s
  /delay/NAME      waits 0.3 s (--delay) before answering, then as /ok/
  /hold/NAME       waits 1 s before answering, then as /ok/
  /toolong/NAME    no Content-Length: the file and 100 bytes more, then closes
Anything else is 404. It binds 127.0.0.1 on a free port, writes the port to
--port-file once listening, and appends "MODE NAME RANGE STATUS" per request
to --log. Stop it with SIGTERM; it also exits by itself after --lifetime
seconds (default 600) so a killed test cannot leave it running.
"""
import argparse
import http.server
import os
import re
import signal
import sys
import threading
import time

MODES = ("ok", "norange", "cut", "cutalways", "corrupt", "stall", "mute", "drip", "stall1k",
         "drop1k", "slow", "delay", "hold", "toolong")
cut_done = set()
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def record(self, mode, name, rng, status):
        with lock, open(self.server.log_path, "a") as f:
            f.write(f"{mode} {name} {rng or '-'} {status}\n")

    def do_GET(self):
        try:
            self.get()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away (a killed or impatient fetch): nothing to report

    def get(self):
        m = re.fullmatch(r"/([a-z0-9]+)/((?:[A-Za-z0-9_+-][A-Za-z0-9._+-]*/)*[A-Za-z0-9_+-][A-Za-z0-9._+-]*)", self.path)
        if not m:
            return self.fail("?", self.path, 404)
        mode, name = m.group(1), m.group(2)
        path = os.path.join(self.server.root, name)
        rng = self.headers.get("Range")
        if mode == "e500":
            return self.fail(mode, name, 500)
        if mode not in MODES or not os.path.isfile(path):
            return self.fail(mode, name, 404)
        if mode == "mute":
            self.record(mode, name, rng, "-")
            time.sleep(3600)
            return
        if mode in ("delay", "hold"):
            time.sleep(self.server.delay if mode == "delay" else 1.0)
        with open(path, "rb") as f:
            data = bytearray(f.read())
        if mode == "corrupt":
            data[len(data) // 2] ^= 0x55
        start = 0
        status = 200
        if rng and mode != "norange":
            r = re.fullmatch(r"bytes=(\d+)-(\d*)", rng)
            if not r:
                return self.fail(mode, name, 416)
            start = int(r.group(1))
            end = int(r.group(2)) if r.group(2) else len(data) - 1
            if start >= len(data) or end < start:
                return self.fail(mode, name, 416, len(data))
            data_range = (start, min(end, len(data) - 1))
            status = 206
        else:
            data_range = (0, len(data) - 1)
        body = bytes(data[data_range[0] : data_range[1] + 1])
        self.record(mode, name, rng, status)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if mode == "toolong":
            body += b"x" * 100
        else:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "none" if mode == "norange" else "bytes")
        if status == 206:
            self.send_header("Content-Range", f"bytes {data_range[0]}-{data_range[1]}/{len(data)}")
        self.send_header("Connection", "close")
        self.end_headers()
        cut = mode == "cutalways"
        if mode == "cut":
            with lock:
                cut = name not in cut_done
                cut_done.add(name)
        if mode == "stall":
            self.wfile.write(body[:16])
            self.wfile.flush()
            time.sleep(3600)
        if mode in ("stall1k", "drop1k"):
            self.wfile.write(body[:1024])
            self.wfile.flush()
            if mode == "stall1k":
                time.sleep(3600)
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if mode in ("drip", "slow"):
            step, pause = (2, 1.0) if mode == "drip" else (10240, 0.1)
            for i in range(0, len(body), step):
                self.wfile.write(body[i : i + step])
                self.wfile.flush()
                time.sleep(pause)
            return
        if cut:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        self.wfile.write(body)

    def fail(self, mode, name, status, size=None):
        self.record(mode, name, self.headers.get("Range"), status)
        self.send_response(status)
        if size is not None:
            self.send_header("Content-Range", f"bytes */{size}")
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--lifetime", type=float, default=600)
    ap.add_argument("--delay", type=float, default=0.3)
    a = ap.parse_args()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.root = a.root
    srv.log_path = a.log
    srv.delay = a.delay
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Timer(a.lifetime, lambda: os._exit(0)).start()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
