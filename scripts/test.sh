#!/usr/bin/env bash
# test.sh - the whole test suite: format check, then CTest in a Release build,
# again under AddressSanitizer + UndefinedBehaviorSanitizer, the scheduler and
# server tests under ThreadSanitizer, and every fuzz harness for a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# One try: a test that fails fails the suite (tests wait on events, not on
# fixed sleeps, so a loaded machine makes them slower, not wrong).
ctest_run() { ctest --output-on-failure -j "$jobs" "$@"; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# Each stage's time, printed as it ends and again at the end (the CI budget
# is 60 minutes on 2 cores: docs/reliability.md, "The test suite's time").
stages=()
suite_start=$SECONDS
stage_start=$SECONDS
stage_name=""
stage() {
    stage_end
    stage_name=$1
    stage_start=$SECONDS
    echo "== $stage_name ($(date +%T))"
}
stage_end() {
    [ -n "$stage_name" ] || return 0
    local t=$((SECONDS - stage_start))
    stages+=("$(printf '%-44s %4d:%02d' "$stage_name" $((t / 60)) $((t % 60)))")
    echo "== $stage_name: $((t / 60)) min $((t % 60)) s"
    stage_name=""
}
summary() {
    stage_end
    local t=$((SECONDS - suite_start))
    echo "== stage times"
    printf '   %s\n' "${stages[@]}"
    printf '   %-44s %4d:%02d\n' "total" $((t / 60)) $((t % 60))
}
trap 'summary' EXIT

# Synthetic models are plain files: a sanitizer build reuses the release
# build's (its fixture sees them up to date) instead of training vocabularies again.
share_models() {
    if [ -d build/models ] && [ ! -e "$1/models" ]; then cp -al build/models "$1/models"; fi
}

# The Debian packages and the pinned npm packages (reference engine,
# playwright-core) the tests use: quick when they are already there.
stage "setup"
# The synthetic models' vocabularies are trained on the WMT test sets beside
# the repository (FANYI_SHARED_DIR in the tests), and the tests pick their
# sentences by what those models make of them: without the data every
# vocabulary differs and a few tests fail for no fault of the code.
if [ ! -d ../shared/data/wmt ]; then
    echo "test.sh: $(cd .. && pwd)/shared/data/wmt is missing: the suite needs the WMT test sets there" >&2
    exit 1
fi
scripts/setup.sh

stage "format check"
scripts/format.sh --check

stage "release build"
scripts/build.sh build
stage "release tests"
(cd build && ctest_run)

stage "portable kernels (FANYI_KERNEL=ref)"
# The release build's suite again with the portable C kernels forced, as on
# a CPU without AVX2 (issue 10). Tests that force each path themselves
# (test_nn_gemm, test_nn_kernel_env_*) still test every path the CPU has;
# portability_kernel_env checks that the binary honours the inherited
# FANYI_KERNEL. The ref kernels make translation ~10-30x slower, so each
# conformance variant compares 150 of its 520 lines (FANYI_CONFORMANCE_LINES;
# the reference outputs the release run cached are reused). Skipped as
# redundant, because FANYI_KERNEL cannot change what they execute: the
# spm, text and unit labels (SentencePiece, text, scheduler and cache: no
# model math), lb, clients, deploy, server, ui, load, docs and modelmgmt
# (proxies, client packages, containers, HTTP, the browser, load shapes,
# documents, model files: what they check does not depend on how the model
# math is done, and the release run proved it), cli (line handling, files,
# progress and messages of the command line: input and output around the
# engine, which test_engine_cli and test_translate_io run on these kernels;
# cli_translate_lines alone took 142-300 s here with the ref kernels), gpu (the Vulkan backend's
# shaders do not use the CPU kernels; test_nn_gemm covers every CPU path),
# readme (the README's
# commands from a fresh copy: scripts and CLI, not kernels), conformance_harness (the
# reference engine only), conformance_output_scale (which of a file's scales
# the model reader picks, 40 lines through the reference for 8 models each
# run: 5 minutes here for what the tiny-int8 variants already prove of the
# portable int8 path),
# portability_qemu / portability_isa_audit (they set their own kernels or
# read the binary), and the beam-search conformance tests (the search is the
# same C code on every kernel; the greedy variants prove the kernels' logits).
# Measured: +8 min on the shared 2-core machine, 490 CPU s
# (docs/reliability.md, "Portability").
(cd build && FANYI_KERNEL=ref FANYI_CONFORMANCE_LINES=150 ctest_run -LE '^(spm|text|unit|lb|clients|deploy|server|ui|load|docs|modelmgmt|readme|gpu|cli)$' \
    -E '^(conformance_harness|conformance_output_scale|portability_qemu|portability_isa_audit|conformance_beam4_.*|beam_eos_model)$')

stage "sanitizer build (ASan + UBSan)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DFANYI_SANITIZE=ON
share_models build-asan
stage "sanitizer tests (ASan + UBSan)"
# Tests labelled 'release-only' compare whole-model outputs or load the server
# heavily; they repeat what the release run proved and take too long under ASan.
(cd build-asan && ctest_run -LE release-only)

stage "thread sanitizer build"
scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFANYI_TSAN=ON
share_models build-tsan
stage "thread sanitizer tests (scheduler, cache, server, helper threads)"
(cd build-tsan && ctest_run -L '^(server|threads)$')

stage "fuzzing (libFuzzer + ASan + UBSan, 60 s per harness)"
tests/fuzz/run.sh 60

stage_end
echo "== all tests passed"
