#!/bin/bash
# run.sh - builds the libFuzzer harnesses (clang, ASan+UBSan) and runs each
# for SECONDS (default 60), FANYI_FUZZ_JOBS (2) at a time.
#
#   tests/fuzz/run.sh [SECONDS] [HARNESS...]
#
# Harnesses run FANYI_FUZZ_JOBS at a time (default 2: one per core of a CI
# machine). Build dir: $FANYI_FUZZ_BUILD or <repo>/build-fuzz (configured here, so this
# works from a clean clone). Each harness starts from its committed seeds in
# tests/fuzz/corpus/<harness>/ plus what earlier runs found in
# build-fuzz/fuzz-corpus/<harness>/ (new inputs go there, never into the
# repo). A crash, leak, timeout (> 10 s for one input) or out-of-memory
# (> 2048 MB) fails the harness; its input is saved in build-fuzz/crashes/.
# Prints one line per harness and "N passed, N failed"; exits 1 on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-60}
shift || true
case $secs in
'' | *[!0-9]*) echo "usage: tests/fuzz/run.sh [SECONDS] [HARNESS...]" >&2; exit 2 ;;
esac
build=${FANYI_FUZZ_BUILD:-$root/build-fuzz}
all=(fuzz_marian fuzz_config fuzz_shortlist fuzz_spm_load fuzz_spm_encode fuzz_segment fuzz_cleanup
     fuzz_document fuzz_http fuzz_prompt)
harnesses=("$@")
[ $# -gt 0 ] || harnesses=("${all[@]}")
jobs=${FANYI_FUZZ_JOBS:-2}

command -v clang >/dev/null || { echo "run.sh: clang not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
mkdir -p "$build"
if ! CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS_DEBUG="-O1 -g" -DFANYI_FUZZ=ON >"$build/fuzz-configure.log" 2>&1; then
    cat "$build/fuzz-configure.log" >&2
    echo "run.sh: configure failed" >&2
    exit 1
fi
if ! cmake --build "$build" -j"$jobs" --target "${harnesses[@]}" >"$build/fuzz-build.log" 2>&1; then
    tail -n 40 "$build/fuzz-build.log" >&2
    echo "run.sh: build failed" >&2
    exit 1
fi

mkdir -p "$build/crashes"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$here/ubsan.supp
# One harness: runs it, then prints its verdict line (and exits 1 on failure).
fuzz_one() {
    local h=$1 work="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" maxlen=65536 dict=()
    mkdir -p "$work"
    [ "$h" = fuzz_spm_load ] && maxlen=300000 # the nmt_nfkc seed model is 250 KB
    [ -f "$here/$h.dict" ] && dict=(-dict="$here/$h.dict")
    local start rc took execs cov art
    start=$(date +%s)
    (cd "$build/crashes" && "$build/tests/fuzz/$h" "$work" "$here/corpus/$h" "${dict[@]}" \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -detect_leaks=1 \
        -max_len="$maxlen" -print_final_stats=1 -artifact_prefix="$build/crashes/$h-" \
        >"$log" 2>&1)
    rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ]; then
        printf 'PASS %-16s %5ss %10s execs  %s\n' "$h" "$took" "${execs:-?}" "${cov:-}"
        return 0
    fi
    art=$(grep -oE "(crash|leak|timeout|oom|slow-unit)-[0-9a-f]+" "$log" | tail -n 1)
    printf 'FAIL %-16s %5ss %10s execs  rc=%s %s (log: %s)\n' "$h" "$took" "${execs:-?}" "$rc" \
        "${art:+input: $build/crashes/$h-$art}" "$log"
    grep -m 3 -E "ERROR|runtime error|SUMMARY" "$log" | sed 's/^/    /'
    return 1
}

# Harnesses run $jobs at a time (each is one process on one core, so each
# still fuzzes for the full SECONDS; on two cores the stage takes half the
# wall time). Each verdict is printed as a whole when its harness ends.
passed=0
failed=0
pids=()
reap() {
    local rc=0
    wait "${pids[0]}" || rc=$?
    if [ "$rc" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
    pids=("${pids[@]:1}")
}
for h in "${harnesses[@]}"; do
    [ "${#pids[@]}" -lt "$jobs" ] || reap
    fuzz_one "$h" &
    pids+=($!)
done
while [ "${#pids[@]}" -gt 0 ]; do reap; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
