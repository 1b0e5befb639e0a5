#!/usr/bin/env bash
# test_translate_cli.sh - `fanyi translate` on the synthetic models (fixture
# synth_models): usage errors (exit 2), missing/broken models (exit 1, one
# line), one output line per input line with empty lines kept, --raw keeping
# surrounding whitespace, --min-gap, and identical output whatever the
# batch size and thread count.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M="$FANYI_BUILD_DIR/models"

run "$FANYI_BIN" translate --help
expect_status 0
expect_out '^usage: fanyi translate'
run "$FANYI_BIN" translate --bogus
expect_status 2
expect_err_lines 1
run "$FANYI_BIN" translate --threads 0
expect_status 2
run "$FANYI_BIN" translate --max-length-factor abc
expect_status 2
run "$FANYI_BIN" translate --model "$M/tiny-int8" extra
expect_status 2

run "$FANYI_BIN" translate --model "$FY_TMP/no-such-model"
expect_status 1
expect_err 'no-such-model'
expect_err_lines 1
mkdir -p "$FY_TMP/broken"
cp "$M/tiny-int8/vocab.zhen.spm" "$FY_TMP/broken/"
head -c 5000 "$M/tiny-int8/model.zhen.intgemm.alphas.bin" >"$FY_TMP/broken/model.zhen.intgemm.alphas.bin"
run "$FANYI_BIN" translate --model "$FY_TMP/broken"
expect_status 1
expect_err 'model.zhen.intgemm.alphas.bin'
expect_err_lines 1

# Input: the project's Chinese text plus an empty and a whitespace-only line.
{
    head -n 40 "$FANYI_SOURCE_DIR/tests/data/text/zh_conformance.txt"
    echo
    echo "   "
    echo "  你好。  "
} >"$FY_TMP/in.txt"
n_in=$(wc -l <"$FY_TMP/in.txt")

for model in tiny-int8-sl tiny-int8-sep; do
    FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$M/$model" --raw --batch 1
    expect_status 0
    cp "$FY_TMP/out" "$FY_TMP/one.txt"
    if [ "$(wc -l <"$FY_TMP/one.txt")" = "$n_in" ]; then ok; else bad "$model: line count"; fi
    if [ "$(sed -n "$((n_in - 2))p" "$FY_TMP/one.txt")" = "" ]; then ok; else bad "$model: empty line not kept"; fi
    if [ "$(sed -n "$((n_in - 1))p" "$FY_TMP/one.txt")" = "" ]; then ok; else bad "$model: blank line not empty"; fi
    if sed -n "${n_in}p" "$FY_TMP/one.txt" | grep -Eq '^  [^ ].*[^ ]  $'; then ok; else bad "$model: --raw whitespace"; fi

    FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$M/$model" --raw --batch 7 --threads 2
    expect_status 0
    if cmp -s "$FY_TMP/out" "$FY_TMP/one.txt"; then ok; else bad "$model: --threads 2 --batch 7 differs from --batch 1"; fi

    FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$M/$model" --raw --min-gap
    expect_status 0
    if cut -f1 "$FY_TMP/out" | cmp -s - "$FY_TMP/one.txt"; then ok; else bad "$model: --min-gap changes the text"; fi
    if head -n 1 "$FY_TMP/out" | grep -Eq $'\t[0-9.e+-]+$'; then ok; else bad "$model: --min-gap column"; fi
done

# --no-shortlist works and a smaller max-length-factor gives shorter output.
FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$M/tiny-int8-sl" --raw --no-shortlist
expect_status 0
FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" translate --model "$M/tiny-int8-sl" --raw --max-length-factor 0.5
expect_status 0
short=$(wc -c <"$FY_TMP/out")
long=$(wc -c <"$FY_TMP/one.txt")
if [ "$short" -le "$long" ]; then ok; else bad "max-length-factor 0.5 output longer than 2.0"; fi
finish
