#!/usr/bin/env bash
# run.sh [--synth] [--mirror URL] [serve options...] - installs what building
# and serving need (Debian packages; no Node), builds build/src/fanyi, gets the
# zh-en and en-zh models unless they are installed, says where everything is,
# and serves every direction in the models directory.
#
#   --synth       no network needed: synthetic zh-en, en-zh and de-en models
#                 (random weights: gibberish translations, everything else real)
#                 for each of those directions that has no model yet; a real
#                 model is never replaced (a later run without --synth does
#                 replace the synthetic ones)
#   --mirror URL  fetch the models from URL instead of Mozilla's CDN
#                 (docs/models.md, "Without network access")
#   anything else goes to `fanyi serve` (--port 8990, --threads 2, ...)
#
# The models directory is $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models:
# where every fanyi command looks. FANYI_PREBUILT=BIN uses that binary instead
# of installing packages and building (the README test does).
set -euo pipefail
cd "$(dirname "$0")/.."
synth=0
mirror=()
while [ $# -gt 0 ]; do
    case "$1" in
    --synth) synth=1 ;;
    --mirror) [ $# -ge 2 ] || { echo "run.sh: --mirror needs a URL" >&2; exit 2; }
        mirror=(--mirror "$2"); shift ;;
    --mirror=*) mirror=(--mirror "${1#--mirror=}") ;;
    *) break ;;
    esac
    shift
done

if [ -n "${FANYI_PREBUILT:-}" ]; then
    bin=$(realpath "$FANYI_PREBUILT")
else
    scripts/setup.sh --serve
    scripts/build.sh --target fanyi build
    bin=$PWD/build/src/fanyi
fi
default_root=$HOME/.local/share/fanyi/models
root=${FANYI_MODELS_DIR:-$default_root}
mkdir -p "$root"

is_synthetic() { "$bin" model info "$1" --json 2>/dev/null | grep -q '"synthetic": true'; }
installed() { "$bin" model verify --quiet "$1" >/dev/null 2>&1; }

# Offline: what to do instead, with the files fetch named above.
offline_help() {
    cat >&2 <<EOF

run.sh: cannot download the $1 model (no network access?). Either
  - run fanyi with synthetic test models, which need no network (their
    translations are gibberish; everything else is real):
        ./scripts/run.sh --synth
  - or copy the files named above from a machine that has them (its
    $default_root/$1) into
    $root/$1/
    and run ./scripts/run.sh again;
  - or fetch from a mirror that holds the catalogue's paths:
        ./scripts/run.sh --mirror URL     (http://, https:// or file:///PATH/)
EOF
}

if [ "$synth" = 1 ]; then
    # One vocabulary, trained once on a small corpus (seconds, not a minute),
    # serves the three: synthetic translations are gibberish either way.
    vocab=
    for pair in zh-en en-zh de-en; do
        dir=$root/$pair
        if installed "$dir"; then
            is_synthetic "$dir" || echo "run.sh: $dir holds a real model: kept"
            continue
        fi
        [ -z "$(ls -A "$dir" 2>/dev/null)" ] ||
            { echo "run.sh: $dir is in the way (not a model): move it away" >&2; exit 1; }
        opts=(--preset tiny --int8 --shortlist --seed 1 --name "${pair/-/}" --out "$dir")
        if [ -n "$vocab" ]; then opts+=(--vocab "$vocab"); else opts+=(--corpus-lines 5000); fi
        echo "run.sh: writing a synthetic $pair model into $dir"
        "$bin" model synth "${opts[@]}"
        [ -n "$vocab" ] || vocab=$dir/vocab.${pair/-/}.spm
    done
    kind="synthetic models: gibberish translations"
else
    for pair in zh-en en-zh; do
        dir=$root/$pair
        # fetch replaces a synthetic model (from --synth) with the real one.
        if installed "$dir" && ! is_synthetic "$dir"; then continue; fi
        status=0
        "$bin" model fetch "$pair" --dir "$dir" "${mirror[@]}" || status=$?
        if [ "$status" = 3 ]; then offline_help "$pair"; fi
        [ "$status" = 0 ] || exit "$status"
    done
    kind="Firefox Translations models"
fi

models=$(cd "$root" && for d in */; do [ -d "$d" ] && printf '%s ' "${d%/}"; done)
on_path=$(command -v fanyi || true)
if [ -n "$on_path" ]; then
    where="on your PATH as $on_path (scripts/install.sh updates it)"
    use="fanyi translate"
else
    where="not on your PATH: scripts/install.sh copies it to ~/.local/bin/fanyi"
    use="$bin translate"
fi
[ "$root" = "$default_root" ] || use="FANYI_MODELS_DIR=$root $use"
cat <<EOF

fanyi:   $bin
         $where
models:  $root: ${models% } ($kind)
use:     echo '今天天气很好。' | $use
serving: every direction in $root (Ctrl-C stops it)

EOF
exec "$bin" serve --models "$root" "$@"
