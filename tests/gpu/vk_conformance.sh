#!/usr/bin/env bash
# vk_conformance.sh ARGS... - tests/conformance/conformance.js with fanyi
# translating on the first usable Vulkan device (--device vulkan:N): the
# Vulkan backend against the reference engine (WASM) on the same lines and
# the same pass rule as the CPU's conformance tests. Exits 77 (a skip) when
# there is no usable Vulkan device; CI installs lavapipe, where it runs.
set -euo pipefail
dev=$("$FANYI_BIN" devices --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["kind"] == "vulkan" and d.get("usable"):
        print(d["name"]); break')
if [ -z "$dev" ]; then
    echo "SKIP: no usable Vulkan device (fanyi devices)"
    exit 77
fi
exec node "$FANYI_SOURCE_DIR/tests/conformance/conformance.js" "$@" \
    --fanyi-arg --device --fanyi-arg "$dev" --tag vulkan
