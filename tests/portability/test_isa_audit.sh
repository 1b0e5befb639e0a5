#!/usr/bin/env bash
# test_isa_audit.sh AVX2_PROBE OBJECTS - the static half of "never executes
# an instruction the CPU lacks": isa_audit.py finds every instruction beyond
# SSE2 in $FANYI_BIN inside the dispatched kernel files' functions, and
# rejects the probe, whose AVX2 instruction lies outside them (so the audit
# can fail), and a direct call into a kernel function. OBJECTS: the kernel library's object files, ';'-separated.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
probe=${1:?usage: test_isa_audit.sh AVX2_PROBE OBJECTS}
IFS=';' read -r -a objects <<<"${2:?usage: test_isa_audit.sh AVX2_PROBE OBJECTS}"
audit=$FANYI_SOURCE_DIR/tests/portability/isa_audit.py

run python3 "$audit" "$FANYI_BIN" "${objects[@]}"
expect_status 0
expect_out '^  kernel function .*avx2'
cat "$FY_TMP/out"

run python3 "$audit" "$probe"
expect_status 1
expect_out '^FAIL: avx2_outside_kernels \(not a kernel file.s function\) needs more than SSE2'

# Taking the probe's file as a kernel file, its main calls a kernel function
# directly: that bypass of the dispatch tables is refused too.
run python3 "$audit" --kernel-files avx2_probe.c "$probe"
expect_status 1
expect_out '^FAIL: main branches into a kernel function directly'
finish
