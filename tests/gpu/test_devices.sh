#!/usr/bin/env bash
# test_devices.sh - `fanyi devices`: lists the CPU and the Vulkan devices
# (text and --json); with no loader (FANYI_VULKAN_LIBRARY naming a missing
# one) or no driver (VK_DRIVER_FILES naming a missing one) it still lists
# the CPU and says why Vulkan is unavailable; bad usage exits 2.
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
bin=$FANYI_BIN

out=$("$bin" devices)
echo "$out"
grep -q '^cpu: kernel ' <<<"$out" || fail "no cpu line"
grep -qE '^vulkan(:0: |: )' <<<"$out" || fail "no vulkan line"

json=$("$bin" devices --json)
python3 - "$json" <<'PY' || fail "bad --json output"
import json, sys
o = json.loads(sys.argv[1])
devs = o["devices"]
assert devs[0]["name"] == "cpu" and devs[0]["kernel"], devs[0]
v = o["vulkan"]
assert isinstance(v["available"], bool)
for d in devs[1:]:
    assert d["name"].startswith("vulkan:") and d["kind"] == "vulkan", d
    for key in ("device", "type", "memory_bytes", "float64", "integer_dot_product",
                "cooperative_matrix_khr", "subgroup_size", "fp32_denorm_preserve", "usable"):
        assert key in d, key
    assert d["usable"] or d["why_not"], d
print("json ok:", [d["name"] for d in devs], v)
PY

out=$(FANYI_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1 "$bin" devices)
echo "$out"
grep -q '^cpu: kernel ' <<<"$out" || fail "no cpu line without a loader"
if ! grep -q 'vulkan: unavailable: this build has no Vulkan support' <<<"$out"; then
    grep -q 'vulkan: unavailable: no Vulkan loader (/nonexistent/libvulkan.so.1)' <<<"$out" ||
        fail "no loader: not reported"
    out=$(FANYI_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1 "$bin" devices --json)
    grep -q '"available": false' <<<"$out" || fail "no loader: json available"
    out=$(VK_DRIVER_FILES=/nonexistent.json VK_ICD_FILENAMES=/nonexistent.json "$bin" devices)
    echo "$out"
    grep -qE 'vulkan: (unavailable: no Vulkan driver|no device)' <<<"$out" ||
        fail "no driver: not reported"
fi

set +e
"$bin" devices --bogus 2>/dev/null
rc=$?
set -e
[ "$rc" = 2 ] || fail "bad option exits $rc, not 2"
echo "devices ok"
