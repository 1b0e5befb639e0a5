#!/usr/bin/env bash
# build.sh SRC BUILD - builds native bergamot-translator's app/bergamot and,
# beside it, bergamot-peer (bergamot_peer.cpp: one line, one request),
# the peers of `bench/peer --native BUILD/app/bergamot`. SRC is a
# bergamot-translator checkout with its submodules; it is never a dependency
# of Fanyi and nothing of it is committed here. See README.md.
set -euo pipefail
[ $# = 2 ] || { echo "usage: bench/native/build.sh BERGAMOT_SOURCE BUILD_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
[ -f "$src/app/CMakeLists.txt" ] || { echo "$src: not a bergamot-translator source tree" >&2; exit 1; }
cp "$here/bergamot_peer.cpp" "$src/app/"
grep -q 'bergamot-peer' "$src/app/CMakeLists.txt" || cat >>"$src/app/CMakeLists.txt" <<'CMAKE'
add_executable(bergamot-peer bergamot_peer.cpp)
target_link_libraries(bergamot-peer PRIVATE bergamot-translator)
CMAKE
mkdir -p "$2"
cmake -S "$src" -B "$2" -DCMAKE_BUILD_TYPE=Release -DCOMPILE_WASM=OFF -DUSE_INTGEMM=ON \
    -DUSE_FBGEMM=OFF -DCOMPILE_CUDA=OFF -DCOMPILE_TESTS=OFF -DCOMPILE_UNIT_TESTS=OFF -DUSE_DOXYGEN=OFF
cmake --build "$2" -j"$(nproc)" --target bergamot bergamot-peer
echo "built: $2/app/bergamot and $2/app/bergamot-peer"
