#!/usr/bin/env bash
# test_synth_cli.sh - `fanyi model synth`: usage errors, vocab reuse, determinism.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M="$FANYI_BUILD_DIR/models"
T="$FY_TMP"

run "$FANYI_BIN" model synth --help
expect_status 0
expect_out "usage: fanyi model synth"

run "$FANYI_BIN" model synth --seed 1 --out "$T/x"
expect_status 2
expect_err "--preset is required"
expect_err_lines 1

run "$FANYI_BIN" model synth --preset huge --seed 1 --out "$T/x"
expect_status 2
expect_err "unknown preset 'huge'"

run "$FANYI_BIN" model synth --preset tiny --seed -3 --out "$T/x"
expect_status 2
expect_err "--seed"

run "$FANYI_BIN" model synth --preset tiny --seed 1 --out "$T/x" --bogus
expect_status 2
expect_err "unknown option '--bogus'"

run "$FANYI_BIN" model synth --preset tiny --seed 1 --out "$T/x" --src-vocab a.spm --trg-vocab b.spm
expect_status 2
expect_err "need --separate-vocab"

run "$FANYI_BIN" model synth --preset tiny --seed 1 --out "$T/x" --vocab "$T/missing.spm"
expect_status 1
expect_err "missing.spm"
expect_err_lines 1

printf 'not a sentencepiece model' >"$T/junk.spm"
run "$FANYI_BIN" model synth --preset tiny --seed 1 --out "$T/x" --vocab "$T/junk.spm"
expect_status 1
expect_err "not a SentencePiece model"

# Same seed and vocab: identical bytes; another seed: different weights.
for d in a b; do
    run "$FANYI_BIN" model synth --preset tiny --int8 --shortlist --seed 5 --out "$T/$d" \
        --vocab "$M/vocab.zhen.spm"
    expect_status 0
done
run cmp "$T/a/model.zhen.intgemm.alphas.bin" "$T/b/model.zhen.intgemm.alphas.bin"
expect_status 0
run cmp "$T/a/lex.50.50.zhen.s2t.bin" "$T/b/lex.50.50.zhen.s2t.bin"
expect_status 0
run cmp "$T/a/vocab.zhen.spm" "$M/vocab.zhen.spm"
expect_status 0
run "$FANYI_BIN" model synth --preset tiny --int8 --seed 6 --out "$T/c" --vocab "$M/vocab.zhen.spm"
expect_status 0
run cmp -s "$T/a/model.zhen.intgemm.alphas.bin" "$T/c/model.zhen.intgemm.alphas.bin"
expect_status 1
[ -z "$(find "$T" -name '*.tmp.*')" ] && ok || bad "temporary files left behind"

# The trained vocabulary really has 32000 pieces with Marian's special ids.
if command -v spm_export_vocab >/dev/null; then
    run spm_export_vocab --model="$M/vocab.zhen.spm"
    expect_status 0
    [ "$(wc -l <"$FY_TMP/out")" = 32000 ] && ok || bad "vocab size $(wc -l <"$FY_TMP/out")"
    [ "$(head -1 "$FY_TMP/out" | cut -f1)" = "</s>" ] && ok || bad "id 0 is not </s>"
    [ "$(sed -n 2p "$FY_TMP/out" | cut -f1)" = "<unk>" ] && ok || bad "id 1 is not <unk>"
    grep -q '^<0xFF>' "$FY_TMP/out" && ok || bad "no byte fallback pieces"
fi
finish
