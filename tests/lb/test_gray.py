#!/usr/bin/env python3
"""test_gray.py - the gray release of deploy/lb/nginx-gray.conf, for real.

Two CPU replicas (`--device cpu`) and one GPU replica (`--device vulkan:N`,
lavapipe in CI) behind nginx running the shipped gray configuration with
GPU_SHARE=50 (as envsubst would write it), only its addresses rewritten:
  - every request is answered 200 and carries X-Fanyi-Pool (the pool nginx
    drew) and X-Fanyi-Device (the device that translated it): both pools
    serve, the CPU pool on the CPU, the GPU pool on the Vulkan device;
  - the GPU pool's answers are the CPU's, string for string (the same texts
    translated by a CPU replica directly);
  - the GPU replica killed: requests drawn for the GPU pool go to its CPU
    backups, still 200 and still the same translations.
Skipped (77) without a usable Vulkan device.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lblib import DEPLOY, Proxy, Replica, free_ports  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))
from fylib import BIN, SHORT, T  # noqa: E402
import http.client  # noqa: E402


def vulkan_device():
    out = subprocess.run([BIN, "devices", "--json"], capture_output=True, text=True,
                         check=True).stdout
    for d in json.loads(out)["devices"]:
        if d["kind"] == "vulkan" and d.get("usable"):
            return d["name"]
    return None


def post(port, text):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        body = json.dumps({"text": text}, ensure_ascii=False).encode()
        c.request("POST", "/translate", body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        tr = json.loads(body).get("translation") if r.status == 200 else body[:200]
        return r.status, tr, r.getheader("X-Fanyi-Pool"), r.getheader("X-Fanyi-Device")
    finally:
        c.close()


def gray_conf(lb, cpu_ports, gpu_port):
    with open(os.path.join(DEPLOY, "nginx-gray.conf")) as f:
        text = f.read()
    text = text.replace("${GPU_SHARE}", "50")
    text = text.replace("127.0.0.1:8989", f"127.0.0.1:{lb}")
    text = text.replace("127.0.0.1:8991", f"127.0.0.1:{gpu_port}")
    for i, p in enumerate(cpu_ports):
        text = text.replace(f"127.0.0.1:898{i + 1}", f"127.0.0.1:{p}")
    return text


def main():
    dev = vulkan_device()
    if not dev:
        print("SKIP: no usable Vulkan device")
        sys.exit(77)
    lb, c1, c2, g = free_ports(4)
    reps = [Replica(c1, "cpu1", ["--device", "cpu"]), Replica(c2, "cpu2", ["--device", "cpu"]),
            Replica(g, "gpu", ["--device", dev])]
    proxy = None
    try:
        for r in reps:
            r.start()
        proxy = Proxy("nginx", lb, [], conf=gray_conf(lb, [c1, c2], g)).start()
        # Only texts with visible output: an empty translation matches whatever is answered.
        want = {t: post(c1, t)[1] for t in SHORT[:48]}
        texts = [t for t in SHORT[:48] if want[t]][:32]
        T.eq(len(texts), 32, "32 short texts the CPU translates to visible text")
        got = [post(lb, t) for t in texts]
        T.ok(all(st == 200 for st, _, _, _ in got), f"every request 200: {got}")
        pools = {pool for _, _, pool, _ in got}
        T.eq(pools, {"fanyi_cpu", "fanyi_gpu"}, "both pools drawn at GPU_SHARE=50")
        T.ok(all(d == ("cpu" if pool == "fanyi_cpu" else dev) for _, _, pool, d in got),
             f"the CPU pool on the CPU, the GPU pool on {dev}: {got}")
        T.ok(all(tr == want[t] for t, (_, tr, _, _) in zip(texts, got)),
             "the GPU pool's answers are the CPU's, string for string")
        reps[2].kill()
        after = [post(lb, t) for t in texts[:16]]
        T.ok(all(st == 200 for st, _, _, _ in after), f"GPU replica down: still 200: {after}")
        T.ok(all(d == "cpu" for _, _, _, d in after), "its share served by the CPU backups")
        T.ok(all(tr == want[t] for t, (_, tr, _, _) in zip(texts, after)), "same translations")
    finally:
        if proxy:
            proxy.close()
        for r in reps:
            r.stop()
    T.finish()


if __name__ == "__main__":
    main()
