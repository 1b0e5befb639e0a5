#!/usr/bin/env bash
# device_check.sh [BUILD_DIR] - the one script to run on a machine with a
# real GPU (docs/gpu.md, "On a GPU"): what the device offers, every op
# against the CPU bit for bit in the three variants, and the speed of the
# int8 products. Build here first (scripts/build.sh build), carry the build
# directory, run this from the repository root there. Prints everything;
# exits non-zero when an identity test fails. Well under 10 minutes.
set -uo pipefail
build=${1:-build}
status=0
echo "== fanyi devices"
"$build/src/fanyi" devices || status=1
"$build/src/fanyi" devices --json > "${OUT:-/tmp}/devices.json" 2>/dev/null
if command -v vulkaninfo >/dev/null; then
    echo "== vulkaninfo (float controls, dot products, cooperative matrices)"
    vulkaninfo 2>/dev/null | grep -E 'deviceName|driverInfo|shaderDenorm(Preserve|FlushToZero)Float(32|64)|shaderRoundingModeRTEFloat(32|64)|shaderSignedZeroInfNanPreserveFloat32|roundingModeIndependence|denormBehaviorIndependence|integerDotProduct4x8BitPacked.*Accelerated|VK_KHR_cooperative_matrix|VK_NV_cooperative_matrix|subgroupSize ' | sort -u
fi
for variant in "" --skew staging; do
    echo "== test_vk_ops $variant"
    if [ "$variant" = staging ]; then
        FANYI_VK_STAGING=1 timeout 300 "$build/tests/gpu/test_vk_ops" || status=1
    else
        timeout 300 "$build/tests/gpu/test_vk_ops" $variant || status=1
    fi
done
echo "== vk_bench"
timeout 300 "$build/tests/gpu/vk_bench" || status=1
exit $status
