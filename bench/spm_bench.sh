#!/bin/bash
# spm_bench.sh - SentencePiece encoding speed, ours vs Google's spm_encode.
# Text: wmt18.zh + wmt19.zh repeated REPEAT times; one core (taskset -c 0);
# ids to /dev/null; best of RUNS runs; reports MB/s of input text for both,
# by CPU time (user + sys, whole process incl. model load) and by wall time.
# usage: bench/spm_bench.sh [--model FILE] [--fanyi BIN]
#   Without --model, a 16k nmt_nfkc unigram model (like the Firefox zh-en
#   vocabularies) is trained once on the WMT text and cached in $CACHE.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
shared="${FANYI_SHARED_DIR:-$here/../shared}"
wmt="$shared/data/wmt"
fanyi="${FANYI_BIN:-}"
model=""
REPEAT="${REPEAT:-4}"
RUNS="${RUNS:-3}"
CACHE="${CACHE:-${TMPDIR:-/tmp}/fanyi-spm-bench}"
while [ $# -gt 0 ]; do
    case "$1" in
    --model) model=$2; shift 2 ;;
    --fanyi) fanyi=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "spm_bench.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
if [ -z "$fanyi" ]; then
    fanyi=$(ls -t "$here"/build*/src/fanyi 2>/dev/null | head -n 1 || true)
fi
[ -x "$fanyi" ] || { echo "spm_bench.sh: no fanyi binary (use --fanyi BIN)" >&2; exit 1; }
for f in wmt18.zh wmt19.zh; do
    [ -f "$wmt/$f" ] || { echo "spm_bench.sh: $wmt/$f not found" >&2; exit 1; }
done
mkdir -p "$CACHE"
if [ -z "$model" ]; then
    model="$CACHE/zh16k.model"
    if [ ! -f "$model" ]; then
        echo "training $model (once) ..."
        cat "$wmt/wmt18.zh" "$wmt/wmt19.zh" "$wmt/wmt18.en" "$wmt/wmt19.en" >"$CACHE/train.txt"
        spm_train --input="$CACHE/train.txt" --model_prefix="$CACHE/zh16k" --vocab_size=16000 \
            --model_type=unigram --normalization_rule_name=nmt_nfkc --byte_fallback=true \
            --num_threads=2 --hard_vocab_limit=false --minloglevel=2 >/dev/null 2>&1
    fi
fi
text="$CACHE/bench.zh"
: >"$text"
for _ in $(seq "$REPEAT"); do cat "$wmt/wmt18.zh" "$wmt/wmt19.zh" >>"$text"; done
bytes=$(wc -c <"$text")
lines=$(wc -l <"$text")

# best_time CMD...: "wall cpu" seconds of the run with the least CPU time
# (user + sys) over RUNS runs. CPU time is the figure that counts on a
# shared machine, where wall time includes waiting for the core.
best_time() {
    local best="" wall=""
    for _ in $(seq "$RUNS"); do
        local t
        t=$( { TIMEFORMAT='%R %U %S'; time taskset -c 0 "$@" <"$text" >/dev/null; } 2>&1 )
        local w c
        w=$(echo "$t" | awk '{ print $1 }')
        c=$(echo "$t" | awk '{ printf "%.3f", $2 + $3 }')
        if [ -z "$best" ] || awk -v t="$c" -v b="$best" 'BEGIN { exit !(t < b) }'; then
            best=$c
            wall=$w
        fi
    done
    echo "$wall $best"
}
# Same output first: a benchmark of a wrong result means nothing.
if ! cmp -s <(spm_encode --model="$model" --output_format=id <"$text") \
            <("$fanyi" spm encode --vocab "$model" --output-format id <"$text"); then
    echo "spm_bench.sh: outputs differ from spm_encode" >&2
    exit 1
fi
ref=$(best_time spm_encode --model="$model" --output_format=id)
ours=$(best_time "$fanyi" spm encode --vocab "$model" --output-format id)
printf 'text: %s bytes, %s lines (wmt18.zh + wmt19.zh x %s); model: %s; one core, best of %s\n' \
    "$bytes" "$lines" "$REPEAT" "$(basename "$model")" "$RUNS"
awk -v b="$bytes" -v r="$ref" -v o="$ours" 'BEGIN {
    split(r, R, " "); split(o, O, " ")
    printf "             wall s   cpu s   MB/s (cpu)   MB/s (wall)\n"
    printf "spm_encode:  %6.3f  %6.3f  %9.2f  %11.2f\n", R[1], R[2], b / 1e6 / R[2], b / 1e6 / R[1]
    printf "fanyi spm:   %6.3f  %6.3f  %9.2f  %11.2f\n", O[1], O[2], b / 1e6 / O[2], b / 1e6 / O[1]
    printf "speed-up (cpu): %.2fx\n", R[2] / O[2]
}'
