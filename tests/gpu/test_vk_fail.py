#!/usr/bin/env python3
"""test_vk_fail.py - a GPU lost while serving: nothing lost or answered wrong.

`fanyi serve --device cpu,vulkan:0` with the Vulkan device made to fail at
its 3rd decoder step (FANYI_VK_FAIL_AFTER, the backend's test hook for a lost
device): concurrent requests all get 200 with the same translations a
CPU-only server gives, the failure is logged once, /metrics shows the
device failed and the sentences it gave back, /health stays 200 and /ready
names the failed device (the CPU serves on) and the X-Fanyi-Device header names the CPU for what came after.
Then with the Vulkan device alone: the requests fail with a clear 503 and
/health and /ready turn 503 (no device left: a restart is what helps). Skipped (77)
without a usable Vulkan device (CI installs lavapipe).
"""
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.environ["FANYI_SOURCE_DIR"], "tests", "server"))
from fylib import SHORT, Server, T  # noqa: E402


def vulkan_device():
    out = subprocess.run([os.environ["FANYI_BIN"], "devices", "--json"], capture_output=True,
                         text=True, check=True).stdout
    for d in json.loads(out)["devices"]:
        if d["kind"] == "vulkan" and d.get("usable"):
            return d["name"]
    return None


def translate_all(s, texts):
    """Each text in its own request, eight at a time; (status, translation, device) each."""
    out = [None] * len(texts)

    def one(i):
        st, hdrs, body = s.post("/translate", {"text": texts[i]})
        tr = body.get("translation") if st == 200 else json.dumps(body, ensure_ascii=False)
        out[i] = (st, tr, hdrs.get("x-fanyi-device"))

    for k in range(0, len(texts), 8):
        threads = [threading.Thread(target=one, args=(i,)) for i in range(k, min(k + 8, len(texts)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return out


def metric(m, name, device):
    return m.get(f'{name}{{device="{device}"}}')


def main():
    dev = vulkan_device()
    if not dev:
        print("SKIP: no usable Vulkan device")
        sys.exit(77)
    with Server(["--device", "cpu", "--cache-mb", "0"]) as s:
        ref = translate_all(s, SHORT[:40])
    # Only texts with visible output: an empty translation matches whatever is answered.
    texts = [t for t, (st, tr, _) in zip(SHORT, ref) if st == 200 and tr][:24]
    T.eq(len(texts), 24, "24 short texts the CPU translates to visible text")
    want = [tr for st, tr, _ in ref if st == 200 and tr][:24]
    env = {"FANYI_VK_FAIL_AFTER": "3"}
    with Server(["--device", f"cpu,{dev}", "--cache-mb", "0", "--threads", "1"], env=env) as s:
        got = translate_all(s, texts)
        T.ok(all(st == 200 for st, _, _ in got), f"every request answered 200: {got}")
        T.eq([tr for _, tr, _ in got], want, "the CPU's translations, every one")
        m = s.metrics()
        T.eq(metric(m, "fanyi_device_failed", dev), 1.0, "the device is marked failed")
        T.ok((metric(m, "fanyi_device_given_back_total", dev) or 0) >= 1,
             "its batch was given back")
        T.eq(metric(m, "fanyi_device_sentences_total", "cpu"), float(len(texts)),
             "the CPU translated every sentence")
        st, _, h = s.get("/health")
        T.eq((st, h), (200, {"status": "ok"}), "alive: the CPU serves on")
        st, _, r = s.get("/ready")
        T.eq(st, 200, "ready: the CPU serves on")
        T.eq([d["status"] for d in r["devices"]], ["ok", "failed"], "/ready names the failure")
        after = translate_all(s, ["谢谢，朋友。"])
        T.eq(after[0][2], "cpu", "X-Fanyi-Device names the CPU afterwards")
        T.eq(s.log().count("failed (device lost"), 1, "the failure is logged once")
    with Server(["--device", dev, "--cache-mb", "0"], env={"FANYI_VK_FAIL_AFTER": "1"}) as s:
        got = translate_all(s, texts[:4])
        T.ok(all(st == 503 for st, _, _ in got), f"503 with no device left: {got}")
        T.ok(all("no compute device" in tr for _, tr, _ in got), "the error says why")
        st, _, h = s.get("/health")
        T.eq(st, 503, "/health says no device is left")
        T.ok("no compute device" in h.get("error", ""), f"and why: {h}")
        st, _, _ = s.get("/ready")
        T.eq(st, 503, "not ready either")
    T.finish()


if __name__ == "__main__":
    main()
