#!/usr/bin/env bash
# device_check.sh [BUILD_DIR] - the one script to run on a machine with a
# real GPU (docs/gpu.md, "On a GPU"), well under 10 minutes:
#   1. what the device offers (fanyi devices, vulkaninfo's float controls,
#      dot products, cooperative matrices);
#   2. every op against the CPU bit for bit, in the three variants;
#   3. the whole engine against the CPU (test_vk_engine: logits, picks, beam
#      candidates, greedy and beam-4 translations) on the tiny model and
#      both real shapes;
#   4. the speed: vk_bench (the int8 products) and bench/gpu (throughput and
#      latency by batch size, the GPU beside the CPU with two threads).
# Build here first (scripts/build.sh build, which also makes the synthetic
# models of the synth_models fixture: ctest -R synth_models_setup), carry
# the build directory, run this from the repository root there. Prints
# everything, keeps the JSON in $OUT (or /tmp); exits non-zero when an
# identity test fails.
set -uo pipefail
build=${1:-build}
out=${OUT:-/tmp}
status=0
step() { echo "== $* ($(date +%T))"; }
step "fanyi devices"
"$build/src/fanyi" devices || status=1
"$build/src/fanyi" devices --json > "$out/devices.json" 2>/dev/null
if command -v vulkaninfo >/dev/null; then
    step "vulkaninfo (float controls, dot products, cooperative matrices)"
    vulkaninfo 2>/dev/null | grep -E 'deviceName|driverInfo|shaderDenorm(Preserve|FlushToZero)Float(32|64)|shaderRoundingModeRTEFloat(32|64)|shaderSignedZeroInfNanPreserveFloat32|roundingModeIndependence|denormBehaviorIndependence|integerDotProduct4x8BitPacked.*Accelerated|VK_KHR_cooperative_matrix|VK_NV_cooperative_matrix|subgroupSize ' | sort -u
fi
for variant in "" --skew staging; do
    step "test_vk_ops $variant"
    if [ "$variant" = staging ]; then
        FANYI_VK_STAGING=1 timeout 300 "$build/tests/gpu/test_vk_ops" || status=1
    else
        timeout 300 "$build/tests/gpu/test_vk_ops" $variant || status=1
    fi
done
step "test_vk_engine: the engine against the CPU, 32 lines per model"
FANYI_SOURCE_DIR=$PWD FANYI_VK_LINES=32 timeout 300 "$build/tests/gpu/test_vk_engine" \
    "$build/models/tiny-int8-sl" "$build/models/firefox-zh-en" "$build/models/firefox-en-zh" ||
    status=1
step "vk_bench"
timeout 120 "$build/tests/gpu/vk_bench" || status=1
step "bench/gpu: batch sizes, the GPU beside two CPU threads"
gpu=$(python3 -c 'import json,sys; print(next((d["name"] for d in json.load(open(sys.argv[1]))["devices"] if d["kind"] == "vulkan" and d.get("usable")), ""))' "$out/devices.json")
if [ -n "$gpu" ]; then
    timeout 240 bench/gpu --fanyi "$build/src/fanyi" --device "$gpu" --batches 1,32,128,256,512 \
        --sentences 1024 --max-length-factor 1.2 --json | tee "$out/bench_gpu.json" || status=1
    timeout 90 bench/gpu --fanyi "$build/src/fanyi" --device cpu --threads 2 --batches 32 \
        --sentences 128 --max-length-factor 1.2 --json | tee "$out/bench_cpu.json" || status=1
else
    echo "no usable Vulkan device: no GPU bench"
    status=1
fi
step "done (status $status)"
exit $status
