#!/usr/bin/env bash
# build.sh [--target T] [DIR [cmake options...]] - configures and builds fanyi
# (default: build/, Release; every target, or only T: scripts/run.sh builds
# just the `fanyi` binary, not the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
target=()
if [ "${1:-}" = "--target" ]; then
    target=(--target "$2")
    shift 2
fi
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)" "${target[@]}"
