#!/usr/bin/env bash
# build.sh [DIR [cmake options...]] - configures and builds fanyi (default: build/, Release).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)"
