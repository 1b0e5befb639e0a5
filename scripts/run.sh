#!/usr/bin/env bash
# run.sh [--synth] [serve options...] - set up, build, get the zh-en and en-zh
# models (unless installed), and serve every direction in the models directory.
set -euo pipefail
cd "$(dirname "$0")/.."
synth=0
if [ "${1:-}" = "--synth" ]; then synth=1; shift; fi
scripts/setup.sh
scripts/build.sh build
bin=build/src/fanyi
if [ "$synth" = 1 ]; then
    # Synthetic test models (gibberish translations, real everything else).
    root=${FANYI_MODELS_DIR:-$PWD/build/models/run-synth}
    for pair in zh-en en-zh; do
        [ -d "$root/$pair" ] || "$bin" model synth --preset tiny --int8 --shortlist --seed 1 \
            --name "${pair/-/}" --out "$root/$pair"
    done
else
    root=${FANYI_MODELS_DIR:-$HOME/.local/share/fanyi/models}
    for pair in zh-en en-zh; do
        "$bin" model verify "$root/$pair" >/dev/null 2>&1 || "$bin" model fetch "$pair" --dir "$root/$pair"
    done
fi
exec "$bin" serve --models "$root" "$@"
