#!/usr/bin/env python3
"""load.py - bounded translation load against one loopback URL.

  load.py URL [--clients N] [--requests N] [--seconds S] [--pause S]

Each client sends POST URL/translate with a distinct short Chinese text
(the cache cannot answer them all), one request at a time, until it has
sent --requests or --seconds have passed. Prints one line:
  sent N ok N errors N codes {CODE: COUNT, ...}
and exits 0 (the caller judges the counts). Only 127.0.0.1 is allowed.
"""
import argparse
import collections
import http.client
import json
import sys
import threading
import time
import urllib.parse


def client(host, port, idx, args, codes, lock, deadline):
    conn = None
    for i in range(args.requests):
        if time.monotonic() > deadline:
            break
        body = json.dumps({"text": f"第{idx}位客人的第{i}个问题：今天天气怎么样？"}).encode()
        code = "000"
        try:
            if conn is None:
                conn = http.client.HTTPConnection(host, port, timeout=20)
            conn.request("POST", "/translate", body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            code = str(resp.status)
            if resp.status == 200 and b'"translation"' not in data:
                code = "200-bad-body"
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            code = type(e).__name__
            if conn is not None:
                conn.close()
            conn = None
        with lock:
            codes[code] += 1
        if args.pause:
            time.sleep(args.pause)
    if conn is not None:
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--pause", type=float, default=0.0)
    args = ap.parse_args()
    u = urllib.parse.urlsplit(args.url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit("load.py: loopback addresses only")
    codes = collections.Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + args.seconds
    threads = [threading.Thread(target=client, args=(u.hostname, u.port, i, args, codes, lock, deadline))
               for i in range(args.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sent = sum(codes.values())
    ok = codes.get("200", 0)
    print(f"sent {sent} ok {ok} errors {sent - ok} codes {dict(codes)}")


if __name__ == "__main__":
    main()
