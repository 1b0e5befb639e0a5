#!/usr/bin/env bash
# update_reference.sh BUILD_DIR - replaces tests/conformance/reference/ with
# the full-set reference outputs in BUILD_DIR/conformance-cache (what the
# conformance tests of a build with an empty cache computed; README.md).
set -euo pipefail
build=${1:?usage: update_reference.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$here/reference"
mkdir -p "$here/reference"
n=0
for f in "$build"/conformance-cache/*.json; do
    # Subsets (the portable stage's, the Vulkan variants') come from the full sets.
    if python3 -c 'import json, sys; sys.exit(len(json.load(open(sys.argv[1]))["outputs"]) < 500)' "$f"; then
        cp "$f" "$here/reference/"
        n=$((n + 1))
    fi
done
echo "update_reference: $n full sets in $here/reference"
