#!/usr/bin/env bash
# test.sh - the whole test suite: format check, then CTest in a Release build,
# again under AddressSanitizer + UndefinedBehaviorSanitizer, the scheduler and
# server tests under ThreadSanitizer, and every fuzz harness for a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# The server tests measure drains and disconnects in real time; on a loaded
# 2-core machine one of them can miss its moment. A test that fails twice in
# a row fails the suite.
ctest_run() { ctest --output-on-failure -j "$jobs" --repeat until-pass:2 "$@"; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

# Synthetic models are plain files: a sanitizer build reuses the release
# build's (its fixture sees them up to date) instead of training vocabularies again.
share_models() {
    if [ -d build/models ] && [ ! -e "$1/models" ]; then cp -al build/models "$1/models"; fi
}

echo "== format check"
scripts/format.sh --check

echo "== release build"
scripts/build.sh build
(cd build && ctest_run)

echo "== sanitizer build (ASan + UBSan)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DFANYI_SANITIZE=ON
share_models build-asan
# Tests labelled 'release-only' compare whole-model outputs or load the server
# heavily; they repeat what the release run proved and take too long under ASan.
(cd build-asan && ctest_run -LE release-only)

echo "== thread sanitizer (scheduler, cache, server)"
scripts/build.sh build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFANYI_TSAN=ON
share_models build-tsan
(cd build-tsan && ctest_run -L server)

echo "== fuzzing (libFuzzer + ASan + UBSan, 60 s per harness)"
tests/fuzz/run.sh 60

echo "== all tests passed"
