#!/usr/bin/env bash
# test_qemu.sh MODEL_DIR AVX2_PROBE - the real binary on emulated older CPUs.
#
# qemu-user (Debian qemu-user, TCG) runs ./fanyi with the CPUID of a chosen
# CPU model and raises SIGILL for any instruction that model lacks (checked
# 2026-11-30 with qemu 7.2: AVX, AVX2, FMA, XGETBV trap under Nehalem; SSE4.1
# too under core2duo; AVX-512 traps everywhere because TCG has none). So a run
# that exits 0 has executed nothing the CPU lacks, on the paths it took.
# Needs qemu >= 7.2 (the first whose TCG emulates AVX2; Debian 12 has 7.2).
#   core2duo  SSSE3, no SSE4/AVX/OSXSAVE   -> the portable (ref) kernels
#   Nehalem   SSE4.2, no AVX/AVX2/FMA      -> ref
#   Haswell   AVX2 + FMA, no AVX-512       -> avx2
# Each must translate byte for byte (translations and logit gaps) what the
# native run prints. The kernel a process picks is read from the "kernel"
# and "supported" lines of `fanyi version` and from its FANYI_KERNEL=avx512vnni
# fallback line ("this CPU does not support it; using X": the automatic choice).
. "$FANYI_SOURCE_DIR/tests/lib.sh"
model=${1:?usage: test_qemu.sh MODEL_DIR AVX2_PROBE}
probe=${2:?usage: test_qemu.sh MODEL_DIR AVX2_PROBE}
qemu=$(command -v qemu-x86_64) || {
    echo "FAIL: qemu-x86_64 not found (Debian package qemu-user; scripts/setup.sh installs it)" >&2
    exit 1
}
# The portable-kernel stage of scripts/test.sh exports FANYI_KERNEL=ref; every
# run here states its own choice.
unset FANYI_KERNEL

# Short lines: TCG is ~10-50x slower than the host.
printf '%s\n' '这款手机很贵' '公共交通特别便宜' '请问去火车站怎么走？' >"$FY_TMP/in.txt"
translate() { # translate [qemu -cpu MODEL]: the raw output with gaps into $FY_TMP/out
    FY_STDIN="$FY_TMP/in.txt" run "$@" "$FANYI_BIN" translate --model "$model" --raw --min-gap
}

# expect_kernel NAME SUPPORTED [qemu -cpu MODEL]: the automatic choice is
# NAME and the supported paths are SUPPORTED, by `fanyi version` and by the
# fallback line of an impossible request.
expect_kernel() {
    local want=$1 supported=$2
    shift 2
    run "$@" "$FANYI_BIN" version
    expect_status 0
    expect_out "^kernel $want\$"
    expect_out "^supported $supported\$"
    FANYI_KERNEL=avx512vnni run "$@" "$FANYI_BIN" translate --model "$model"
    expect_status 0
    expect_err "FANYI_KERNEL=avx512vnni: this CPU does not support it; using $want\$"
}

translate
expect_status 0
cp "$FY_TMP/out" "$FY_TMP/native.txt"
[ "$(wc -l <"$FY_TMP/native.txt")" -ge 3 ] && ok || bad "native run: fewer than 3 output lines"

for cpu in core2duo Nehalem Haswell; do
    if [ "$cpu" = Haswell ]; then
        expect_kernel avx2 "ref avx2" "$qemu" -cpu "$cpu"
    else
        expect_kernel ref ref "$qemu" -cpu "$cpu"
    fi
    translate "$qemu" -cpu "$cpu"
    expect_status 0 # 132 would be SIGILL
    if cmp -s "$FY_TMP/out" "$FY_TMP/native.txt"; then ok; else bad "-cpu $cpu output differs from the native run"; fi
    # The start-up self-check of a fast path ran on the emulated CPU and agreed.
    if grep -q 'disagree' "$FY_TMP/err"; then bad "-cpu $cpu: kernel self-check failed"; else ok; fi
done

# The emulator really traps what a model lacks (else the runs above would
# prove nothing): the probe's one AVX2 instruction kills it under Nehalem
# and runs under Haswell.
echo "(an \"Illegal instruction\" report from bash just below is expected)"
run "$qemu" -cpu Nehalem "$probe"
expect_status 132
run "$qemu" -cpu Haswell "$probe"
expect_status 0
# fanyi itself refuses the AVX2 path where cpuid denies it.
FANYI_KERNEL=avx2 run "$qemu" -cpu Nehalem "$FANYI_BIN" translate --model "$model"
expect_status 0
expect_err "FANYI_KERNEL=avx2: this CPU does not support it; using ref\$"
finish
