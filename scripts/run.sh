#!/usr/bin/env bash
# run.sh [--synth] [serve options...] - set up, build, get a model, start the service.
set -euo pipefail
cd "$(dirname "$0")/.."
synth=0
if [ "${1:-}" = "--synth" ]; then synth=1; shift; fi
scripts/setup.sh
scripts/build.sh build
bin=build/src/fanyi
if [ "$synth" = 1 ]; then
    model=${FANYI_MODEL_DIR:-$PWD/build/models/run-synth}
    [ -d "$model" ] || "$bin" model synth --preset tiny --int8 --shortlist --seed 1 --out "$model"
else
    model=${FANYI_MODEL_DIR:-$HOME/.local/share/fanyi/models/zh-en}
    "$bin" model verify "$model" >/dev/null 2>&1 || "$bin" model fetch zh-en --dir "$model"
fi
exec "$bin" serve --model "$model" "$@"
