#!/usr/bin/env bash
# test_shader_checks.sh GLSLC GLSLANG SPIRV_DIS DUMP - the float-rule guards.
#   1. shader_lint.py passes on every shader of src/nn/vk/shaders;
#   2. spirv_check.py passes on every module embedded in the binary (all
#      variants, written out by vk_spirv_dump);
#   3. each deliberately bad shader in tests/gpu/bad fails the lint and/or
#      the SPIR-V check with the message its "expect-lint:" and
#      "expect-spirv:" lines name: each check can fail.
set -euo pipefail
glslc=$1 glslang=$2 dis=$3 dump=$4
here=$(cd "$(dirname "$0")" && pwd)
src=$FANYI_SOURCE_DIR/src/nn/vk/shaders
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

python3 "$here/shader_lint.py" --glslang "$glslang" -I "$src" "$src"/*.comp "$src"/*.glsl
"$dump" "$tmp" >/dev/null
python3 "$here/spirv_check.py" --spirv-dis "$dis" "$tmp"/*.spv

# The bad shaders: one lint and one SPIR-V check over all of them, then
# each one's expected message, naming it.
bad=("$here"/bad/*.comp)
mkdir "$tmp/bad"
for f in "${bad[@]}"; do
    "$glslc" --target-env=vulkan1.3 -O -I "$src" -DFY_DENORM_PRESERVE=0 -DFY_SZINP=1 \
        "$f" -o "$tmp/bad/$(basename "$f" .comp).spv"
done
lint=$(python3 "$here/shader_lint.py" --glslang "$glslang" -I "$src" "${bad[@]}" || true)
spirv=$(python3 "$here/spirv_check.py" --spirv-dis "$dis" "$tmp"/bad/*.spv 2>&1 || true)
for f in "${bad[@]}"; do
    name=$(basename "$f" .comp)
    want=$(sed -n 's|^// expect-lint: ||p' "$f")
    if [ -n "$want" ] && ! grep -F -- "$f:" <<<"$lint" | grep -qF -- "$want"; then
        echo "FAIL: $name: the lint did not report '$want'"; fail=1
    fi
    want=$(sed -n 's|^// expect-spirv: ||p' "$f")
    if [ -n "$want" ] && ! grep -F -- "$tmp/bad/$name.spv:" <<<"$spirv" | grep -qF -- "$want"; then
        echo "FAIL: $name: the SPIR-V check did not report '$want'"; fail=1
    fi
done
[ $fail = 0 ] && echo "ok: all ${#bad[@]} bad shaders rejected"
exit $fail
