#!/usr/bin/env bash
# test_kernel_env.sh MODEL_DIR - FANYI_KERNEL forces the kernel path of the
# real binary, and every path translates byte for byte alike.
#
# For each of ref, avx2, avxvnni, avx512vnni: a supported one (by the
# "supported" line of `fanyi version`) runs silently and the
# output (translations and logit gaps, --raw --min-gap) equals the automatic
# run's; an unsupported one gets the one-line fallback notice naming the
# automatic choice; an unknown value the "unknown kernel" notice. The
# "kernel" line of `fanyi version` names the forced path; and when this test
# itself runs with FANYI_KERNEL set (the portable-kernel stage of
# scripts/test.sh), the binary honours it.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
model=${1:?usage: test_kernel_env.sh MODEL_DIR}
inherited=${FANYI_KERNEL:-}
unset FANYI_KERNEL

printf '%s\n' '这款手机很贵' '公共交通特别便宜' '请问去火车站怎么走？' '我们公司今年的营业收入比去年增长了12.5%。' \
    >"$FY_TMP/in.txt"
translate() { FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$model" --raw --min-gap; }

# version_kernel NAME: `fanyi version` (with the caller's FANYI_KERNEL) names NAME.
version_kernel() {
    run "$FANYI_BIN" version
    expect_status 0
    expect_out "^kernel $1\$"
}

# The automatic choice, as the fallback notice of an impossible request names it.
FANYI_KERNEL=bogus run "$FANYI_BIN" translate --model "$model"
expect_status 0
expect_err_lines 1
auto=$(sed -n 's/.*FANYI_KERNEL=bogus: unknown kernel (ref, avx2, avxvnni, avx512vnni); using \([a-z0-9]*\)$/\1/p' "$FY_TMP/err")
case "$auto" in
ref | avx2 | avxvnni | avx512vnni) ok ;;
*) bad "no automatic choice in the FANYI_KERNEL=bogus notice" ;;
esac
echo "automatic kernel: $auto"
version_kernel "$auto"
expect_out "^supported (.* )?$auto\$" # the automatic choice is the best supported path
# The supported paths, as `fanyi version` lists them (a CPU may have
# avx512vnni without avxvnni, or the other way round).
supported=" $(sed -n 's/^supported //p' "$FY_TMP/out") "

translate
expect_status 0
cp "$FY_TMP/out" "$FY_TMP/auto.txt"
[ "$(wc -l <"$FY_TMP/auto.txt")" = 4 ] && ok || bad "automatic run: not 4 output lines"

for k in ref avx2 avxvnni avx512vnni; do
    FANYI_KERNEL=$k translate
    expect_status 0
    if [ "${supported#* "$k" }" != "$supported" ]; then
        if [ -s "$FY_TMP/err" ]; then bad "FANYI_KERNEL=$k: unexpected notice"; else ok; fi
        if cmp -s "$FY_TMP/out" "$FY_TMP/auto.txt"; then ok; else bad "FANYI_KERNEL=$k output differs"; fi
        FANYI_KERNEL=$k version_kernel "$k"
    else
        expect_err "^fanyi: FANYI_KERNEL=$k: this CPU does not support it; using $auto\$"
        expect_err_lines 1
        if cmp -s "$FY_TMP/out" "$FY_TMP/auto.txt"; then ok; else bad "FANYI_KERNEL=$k fallback output differs"; fi
    fi
done

# Run by the portable-kernel stage: the inherited request is in force.
if [ -n "$inherited" ]; then
    echo "inherited FANYI_KERNEL=$inherited"
    FANYI_KERNEL=$inherited translate
    expect_status 0
    if [ -s "$FY_TMP/err" ]; then bad "inherited FANYI_KERNEL=$inherited: $(head -c 200 "$FY_TMP/err")"; else ok; fi
    FANYI_KERNEL=$inherited version_kernel "$inherited"
fi
finish
