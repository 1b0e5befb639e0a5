#!/usr/bin/env python3
"""test_failover.py nginx|haproxy - three `fanyi serve` replicas behind a
real load balancer running deploy/lb/'s configuration, under a bounded
load of kept-alive clients: one replica killed with SIGKILL mid-request,
brought back, then all three restarted one after another with SIGTERM.
With the shipped settings the clients see no error and every answer is the
right translation; the same run with the retry settings taken out must show
errors (so this test can fail), and the draining replicas exit 0."""
import sys
import time

from lblib import Load, Proxy, Replica, free_ports
sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..",
                                               "server"))
from fylib import T, ZH  # noqa: E402

KIND = sys.argv[1] if len(sys.argv) > 1 else "nginx"
# Four-sentence texts: each request keeps a replica busy for a while, so
# the killed one has requests in flight.
TEXTS = [ZH[i % 8] + ZH[(i + 3) % 8] + ZH[(i + 5) % 8] + ZH[(i + 6) % 8] for i in range(8)]
# How long a rolling restart waits after a replica is back before stopping
# the next one, as docs/deploy.md tells operators to: haproxy's health check
# (inter 1s, rise 2) takes a replica back after about 2 s; nginx's passive
# check leaves a replica that failed (503 while draining) alone for
# fail_timeout (2 s). Faster, every replica can be marked down at once and
# nginx answers 502 "no live upstreams".
REJOIN_S = 2.5


def kill_busy(rep):
    """SIGKILL rep while it is translating (polled for at most 5 s)."""
    until = time.monotonic() + 5
    while rep.in_flight() == 0 and time.monotonic() < until:
        time.sleep(0.005)
    rep.kill()


def scenario(reps, load):
    """Kill one replica mid-load and bring it back, then a rolling SIGTERM
    restart. Returns the exit statuses of the SIGTERMed replicas."""
    time.sleep(1.5)
    kill_busy(reps[0])
    time.sleep(1.0)
    reps[0].start()
    time.sleep(REJOIN_S)
    codes = []
    for r in reps:
        codes.append(r.stop())
        r.start()
        time.sleep(REJOIN_S)
    time.sleep(1.0)
    return codes


def run(reps, lb_port, ports, cases, retries):
    proxy = Proxy(KIND, lb_port, ports, retries).start()
    load = Load(lb_port, cases).start()
    try:
        codes = scenario(reps, load)
    finally:
        load.stop()
        proxy.close()
    print(f"{KIND} {'with' if retries else 'without'} retry settings: {load.ok()} ok, "
          f"{load.failed()} failed {dict(load.status)}")
    return load, codes


def main():
    *ports, lb_port = free_ports(4)
    reps = [Replica(p, f"r{i}").start() for i, p in enumerate(ports)]
    try:
        cases = []
        import http.client
        import json
        for t in TEXTS:
            c = http.client.HTTPConnection("127.0.0.1", ports[0], timeout=600)
            c.request("POST", "/translate", body=json.dumps({"text": t}).encode(),
                      headers={"Content-Type": "application/json"})
            cases.append((t, json.loads(c.getresponse().read())["translation"]))
            c.close()

        load, codes = run(reps, lb_port, ports, cases, retries=True)
        T.eq(load.failed(), 0, f"{KIND}: failed requests with the shipped settings "
                               f"{load.errors[:5]}")
        T.eq(load.wrong, 0, f"{KIND}: wrong translations")
        T.ok(load.ok() >= 50, f"{KIND}: requests answered under load ({load.ok()})")
        T.eq(codes, [0, 0, 0], f"{KIND}: exit status of the drained replicas")

        load, codes = run(reps, lb_port, ports, cases, retries=False)
        T.ok(load.failed() > 0, f"{KIND}: without the retry settings clients see errors "
                                f"({dict(load.status)})")
        T.eq(load.wrong, 0, f"{KIND}: wrong translations without retries")
        T.eq(codes, [0, 0, 0], f"{KIND}: exit status of the drained replicas (control run)")
    finally:
        for r in reps:
            r.stop()
    T.finish()


main()
