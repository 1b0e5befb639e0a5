#!/usr/bin/env python3
"""test_doctor.py - `fanyi doctor --clients` run against three `fanyi serve`
replicas behind a real nginx running deploy/lb/nginx.conf (only its
addresses rewritten), as an operator checks a deployment from outside:
every client of web/clients.json is named and passes (exit 0); with
--api-token on the replicas it passes with the token and fails without it
(exit 1, the token check named), and with a wrong token the token
check says the server does not take it; with the replicas gone it says the proxy
answers 502 (exit 1)."""
import json
import os
import re
import subprocess
import sys

from lblib import SOURCE, Proxy, Replica, free_ports
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from fylib import BIN, T  # noqa: E402

TOKEN = "doctor-token"


def doctor(url, *args, token=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FANYI_")}
    if token:
        env["FANYI_API_TOKEN"] = token
    p = subprocess.run([BIN, "doctor", *args, url], env=env, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_ids():
    """Every client setup of the table, as doctor names them."""
    with open(os.path.join(SOURCE, "web", "clients.json"), encoding="utf-8") as f:
        table = json.load(f)
    return [f"{c['id']}/{s['id']}" for c in table["clients"] for s in c["setups"]]


def replicas(ports, args=()):
    return [Replica(p, f"doctor{i}", args).start() for i, p in enumerate(ports)]


def stop(reps):
    for r in reps:
        r.stop()


def main():
    lb_port, *ports = free_ports(4)
    url = f"http://127.0.0.1:{lb_port}"
    ids = check_ids()
    reps = replicas(ports)
    proxy = Proxy("nginx", lb_port, ports).start()
    try:
        code, out, err = doctor(url, "--clients")
        named = [i for i in ids if re.search(rf"^ok +{re.escape(i)} ", out, re.M)]
        T.eq(code, 0, f"doctor --clients through nginx: exit 0\n{out}{err}")
        T.eq(named, ids, "every client of web/clients.json is named and passes")
        T.ok(re.search(rf"^{len(ids) + 5} of {len(ids) + 5} checks passed$", out, re.M),
             f"the count: server, ready, version, token, direction and {len(ids)} clients")
        T.ok(re.search(r"^ok +version +fanyi \S+, 1 directions: zh->en$", out, re.M),
             "the directions through the proxy")

        stop(reps)
        reps = replicas(ports, ["--api-token", TOKEN])
        code, out, _ = doctor(url, "--clients", token=TOKEN)
        T.eq(code, 0, f"with --api-token and FANYI_API_TOKEN: exit 0\n{out}")
        T.ok(re.search(r"^ok +token +required, given$", out, re.M), "the token: required, given")
        code, out, _ = doctor(url, "--clients")
        T.eq(code, 1, "without the token: exit 1")
        T.ok(re.search(r"^FAIL +token +this server requires an API token", out, re.M),
             f"the token check names what is missing\n{out}")
        code, out, _ = doctor(url, "--clients", "--token", "wrong")
        T.ok(code == 1 and re.search(r"^FAIL +token +required, the one given is not taken: "
                                     r"HTTP 403: the API token is not valid$", out, re.M),
             f"a wrong token: the token check says the server does not take it\n{out}")
        T.ok(not re.search(r"^(ok|FAIL) +(direction|\w+/\w+) ", out, re.M) and
             "(the plug-in checks need a token the server takes)" in out,
             f"and the plug-in checks are not run with it\n{out}")

        stop(reps)
        reps = []
        code, out, _ = doctor(url)
        T.ok(code == 1 and re.search(rf"^FAIL +server +{re.escape(url)}/health answered 502$",
                                     out, re.M), f"no replica: nginx's 502 named\n{out}")
    finally:
        stop(reps)
        proxy.close()
    T.finish()


if __name__ == "__main__":
    main()
