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

# Presets of the real models: what they fix cannot be changed.
run "$FANYI_BIN" model synth --preset firefox-zh-en --separate-vocab --seed 1 --out "$T/x"
expect_status 2
expect_err "preset firefox-zh-en has a shared vocabulary"
run "$FANYI_BIN" model synth --preset firefox-en-zh --seed 1 --out "$T/x" --vocab "$M/vocab.zhen.spm"
expect_status 2
expect_err "preset firefox-en-zh has separate vocabularies"
run "$FANYI_BIN" model synth --preset firefox-zh-en --seed 1 --out "$T/x" --vocab "$M/vocab.zhen.spm"
expect_status 1
expect_err "preset firefox-zh-en needs vocabularies of 64000 and 64000 pieces, not 32000 and 32000"
expect_err_lines 1
run "$FANYI_BIN" model synth --preset tiny --int8 --seed 1 --out "$T/x" --vocab "$M/vocab.zhen.spm" \
    --output-scales none,bogus
expect_status 2
expect_err "--output-scales: 'bogus' is not none or wemb"
run "$FANYI_BIN" model synth --preset tiny --int8 --seed 1 --out "$T/x" --vocab "$M/vocab.zhen.spm" \
    --output-scales wemb=-1
expect_status 2
expect_err "--output-scales expects a number"

# The real file names and sizes (Mozilla's: firefox-models JSON); int8 is implied.
run "$FANYI_BIN" model synth --preset firefox-en-zh --shortlist --seed 1 --out "$T/enzh" \
    --src-vocab "$M/trgvocab.zhen.spm" --trg-vocab "$M/srcvocab.zhen.spm"
expect_status 0
[ "$(cd "$T/enzh" && ls | tr '\n' ' ')" = \
    "lex.50.50.enzh.s2t.bin model.enzh.intgemm.alphas.bin srcvocab.enzh.spm trgvocab.enzh.spm " ] &&
    ok || bad "firefox-en-zh file names: $(ls "$T/enzh")"
[ "$(stat -c %s "$T/enzh/model.enzh.intgemm.alphas.bin")" = 43849787 ] && ok ||
    bad "firefox-en-zh model size $(stat -c %s "$T/enzh/model.enzh.intgemm.alphas.bin")"
run "$FANYI_BIN" model verify --no-manifest "$T/enzh"
expect_status 0
run "$FANYI_BIN" model info "$T/enzh"
expect_status 0
expect_out "source srcvocab.enzh.spm: 32000 pieces"
[ "$(stat -c %s "$M/firefox-zh-en/model.zhen.intgemm.alphas.bin")" = 59504955 ] && ok ||
    bad "firefox-zh-en model size"
run "$FANYI_BIN" model verify --no-manifest "$M/firefox-zh-en"
expect_status 0
run "$FANYI_BIN" model info "$M/firefox-zh-en"
expect_status 0
expect_out "vocab.zhen.spm, shared: 64000 pieces"

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

# Shortlist ids drawn as a trained lexicon's: the same model, another
# shortlist, one the verifier accepts (test_model checks how its ids fall).
run "$FANYI_BIN" model synth --preset tiny --int8 --shortlist --shortlist-ids zipf --seed 5 \
    --out "$T/z" --vocab "$M/vocab.zhen.spm"
expect_status 0
run cmp "$T/a/model.zhen.intgemm.alphas.bin" "$T/z/model.zhen.intgemm.alphas.bin"
expect_status 0
run cmp -s "$T/a/lex.50.50.zhen.s2t.bin" "$T/z/lex.50.50.zhen.s2t.bin"
expect_status 1
run "$FANYI_BIN" model verify --no-manifest "$T/z"
expect_status 0
run "$FANYI_BIN" model synth --preset tiny --shortlist --shortlist-ids zipfian --seed 5 --out "$T/y"
expect_status 2
expect_err "--shortlist-ids: 'zipfian' is not uniform or zipf"
run "$FANYI_BIN" model synth --preset tiny --shortlist-ids zipf --seed 5 --out "$T/y"
expect_status 2
expect_err "--shortlist-ids needs --shortlist"
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
