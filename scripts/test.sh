#!/usr/bin/env bash
# test.sh - the whole test suite: format check, then CTest in a Release build
# and in a Debug build with AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== format check"
scripts/format.sh --check

echo "== release build"
scripts/build.sh build
(cd build && ctest --output-on-failure -j "$jobs")

echo "== sanitizer build (ASan + UBSan)"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DFANYI_SANITIZE=ON
# Tests labelled 'release-only' compare whole-model outputs or measure; they
# repeat what the release run proved and take too long under ASan.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j "$jobs" -LE release-only)
echo "== all tests passed"
