#!/usr/bin/env bash
# synth_models_setup.sh - CTest fixture "synth_models": synthetic models under
# $FANYI_BUILD_DIR/models/ for every test that needs a model (see README.md).
#
# Vocabularies are trained once (spm_train, the slow part); everything is
# skipped when all files exist and the generator's sources did not change
# (stamp = sha256 of the synth sources and this script).
set -euo pipefail
: "${FANYI_BIN:?}" "${FANYI_BUILD_DIR:?}" "${FANYI_SOURCE_DIR:?}"
M="$FANYI_BUILD_DIR/models"
mkdir -p "$M"

stamp=$(cd "$FANYI_SOURCE_DIR" && cat src/model/synth.c src/model/synth.h \
    src/model/shortlist.c src/cli/cmd_model_synth.c tests/model/synth_models_setup.sh |
    sha256sum | cut -c1-64)
want=(vocab.zhen.spm srcvocab.zhen.spm trgvocab.zhen.spm vocab64.zhen.spm vocab.deen.spm
    tiny-f32/model.zhen.bin tiny-f32/vocab.zhen.spm
    tiny-int8/model.zhen.intgemm.alphas.bin tiny-int8/vocab.zhen.spm
    tiny-int8-sl/model.zhen.intgemm.alphas.bin tiny-int8-sl/lex.50.50.zhen.s2t.bin
    tiny-int8-sl/vocab.zhen.spm
    tiny-int8-sep/model.zhen.intgemm.alphas.bin tiny-int8-sep/lex.50.50.zhen.s2t.bin
    tiny-int8-sep/srcvocab.zhen.spm tiny-int8-sep/trgvocab.zhen.spm
    base-memory-int8-sl/model.zhen.intgemm.alphas.bin
    base-memory-int8-sl/lex.50.50.zhen.s2t.bin base-memory-int8-sl/vocab.zhen.spm
    firefox-zh-en/model.zhen.intgemm.alphas.bin firefox-zh-en/lex.50.50.zhen.s2t.bin
    firefox-zh-en/vocab.zhen.spm
    firefox-en-zh/model.enzh.intgemm.alphas.bin firefox-en-zh/lex.50.50.enzh.s2t.bin
    firefox-en-zh/srcvocab.enzh.spm firefox-en-zh/trgvocab.enzh.spm
    firefox-zh-en-trained/model.zhen.intgemm.alphas.bin
    firefox-en-zh-trained/model.enzh.intgemm.alphas.bin
    tiny-de-en/model.deen.intgemm.alphas.bin tiny-de-en/lex.50.50.deen.s2t.bin
    tiny-de-en/vocab.deen.spm
    tiny-en-de/model.ende.intgemm.alphas.bin tiny-en-de/lex.50.50.ende.s2t.bin
    tiny-en-de/vocab.ende.spm)
complete=1
for f in "${want[@]}"; do [ -s "$M/$f" ] || complete=0; done
if [ "$complete" = 1 ] && [ "$(cat "$M/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "synthetic models up to date in $M"
    exit 0
fi
rm -f "$M/.stamp"

synth() { "$FANYI_BIN" model synth --seed 1 "$@"; }
# One model directory, written next to its final place and renamed into it.
make_model() {
    local name=$1
    shift
    rm -rf "$M/$name.tmp"
    synth --out "$M/$name.tmp" "$@"
    rm -rf "$M/$name"
    mv "$M/$name.tmp" "$M/$name"
}

# Vocabularies: trained only when missing or when the corpus generator
# (cmd_model_synth.c) or the texts it adds (tests/data/text) changed. The Chinese and the English 32000-piece
# vocabularies of tiny-int8-sep are also firefox-en-zh's (same corpora,
# same seed: spm_train would write the same pieces again).
vocabs=(vocab.zhen.spm srcvocab.zhen.spm trgvocab.zhen.spm vocab64.zhen.spm vocab.deen.spm)
vstamp=$(cd "$FANYI_SOURCE_DIR" && cat src/cli/cmd_model_synth.c tests/data/text/*.txt |
    sha256sum | cut -c1-64)
vfresh=1
for v in "${vocabs[@]}"; do [ -s "$M/$v" ] || vfresh=0; done
if [ "$vfresh" = 0 ] || [ "$(cat "$M/.stamp-vocab" 2>/dev/null)" != "$vstamp" ]; then
    T="$M/.vocab.tmp"
    rm -rf "$T"
    start=$SECONDS
    synth --preset tiny --out "$T/shared"
    synth --preset tiny --separate-vocab --out "$T/sep"
    synth --preset tiny --out "$T/deen" --name deen
    t64=$SECONDS
    synth --preset firefox-zh-en --out "$T/v64"
    echo "spm_train: 64000 pieces (zh + en) in $((SECONDS - t64)) s; all five vocabularies in $((SECONDS - start)) s"
    mv "$T/shared/vocab.zhen.spm" "$M/vocab.zhen.spm"
    mv "$T/sep/srcvocab.zhen.spm" "$M/srcvocab.zhen.spm"
    mv "$T/sep/trgvocab.zhen.spm" "$M/trgvocab.zhen.spm"
    mv "$T/v64/vocab.zhen.spm" "$M/vocab64.zhen.spm"
    mv "$T/deen/vocab.deen.spm" "$M/vocab.deen.spm"
    rm -rf "$T"
    echo "$vstamp" >"$M/.stamp-vocab"
fi

V=(--vocab "$M/vocab.zhen.spm")
S=(--src-vocab "$M/srcvocab.zhen.spm" --trg-vocab "$M/trgvocab.zhen.spm")
make_model tiny-f32 --preset tiny "${V[@]}"
make_model tiny-int8 --preset tiny --int8 "${V[@]}"
make_model tiny-int8-sl --preset tiny --int8 --shortlist "${V[@]}"
make_model tiny-int8-sep --preset tiny --int8 --shortlist --separate-vocab "${S[@]}"
make_model base-memory-int8-sl --preset base-memory --int8 --shortlist "${V[@]}"
# The two real shapes of the zh/en directions (int8 is part of the preset).
make_model firefox-zh-en --preset firefox-zh-en --shortlist --vocab "$M/vocab64.zhen.spm"
make_model firefox-en-zh --preset firefox-en-zh --shortlist \
    --src-vocab "$M/trgvocab.zhen.spm" --trg-vocab "$M/srcvocab.zhen.spm"
# The same shapes with weights that look trained (near-Gaussian, rare
# outliers: few int8 pairs can saturate int16, so VNNI paths take vpdpbusd
# with saturation fixes; see gemm.h).
make_model firefox-zh-en-trained --preset firefox-zh-en --shortlist --weights trained \
    --vocab "$M/vocab64.zhen.spm"
make_model firefox-en-zh-trained --preset firefox-en-zh --shortlist --weights trained \
    --src-vocab "$M/trgvocab.zhen.spm" --trg-vocab "$M/srcvocab.zhen.spm"
# A third language, for pivot tests (de -> en -> zh): Latin-script vocabulary.
make_model tiny-de-en --preset tiny --int8 --shortlist --name deen --vocab "$M/vocab.deen.spm"
make_model tiny-en-de --preset tiny --int8 --shortlist --name ende --vocab "$M/vocab.deen.spm" \
    --seed 2
echo "$stamp" >"$M/.stamp"
echo "synthetic models written to $M"
