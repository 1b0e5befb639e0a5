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
want=(vocab.zhen.spm srcvocab.zhen.spm trgvocab.zhen.spm
    tiny-f32/model.zhen.bin tiny-f32/vocab.zhen.spm
    tiny-int8/model.zhen.intgemm.alphas.bin tiny-int8/vocab.zhen.spm
    tiny-int8-sl/model.zhen.intgemm.alphas.bin tiny-int8-sl/lex.50.50.zhen.s2t.bin
    tiny-int8-sl/vocab.zhen.spm
    tiny-int8-sep/model.zhen.intgemm.alphas.bin tiny-int8-sep/lex.50.50.zhen.s2t.bin
    tiny-int8-sep/srcvocab.zhen.spm tiny-int8-sep/trgvocab.zhen.spm
    base-memory-int8-sl/model.zhen.intgemm.alphas.bin
    base-memory-int8-sl/lex.50.50.zhen.s2t.bin base-memory-int8-sl/vocab.zhen.spm)
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
# (cmd_model_synth.c) changed.
vstamp=$(sha256sum <"$FANYI_SOURCE_DIR/src/cli/cmd_model_synth.c" | cut -c1-64)
if [ ! -s "$M/vocab.zhen.spm" ] || [ ! -s "$M/srcvocab.zhen.spm" ] ||
    [ ! -s "$M/trgvocab.zhen.spm" ] || [ "$(cat "$M/.stamp-vocab" 2>/dev/null)" != "$vstamp" ]; then
    rm -rf "$M/.vocab.tmp"
    synth --preset tiny --out "$M/.vocab.tmp"
    synth --preset tiny --separate-vocab --out "$M/.vocab.tmp"
    mv "$M/.vocab.tmp/vocab.zhen.spm" "$M/vocab.zhen.spm"
    mv "$M/.vocab.tmp/srcvocab.zhen.spm" "$M/srcvocab.zhen.spm"
    mv "$M/.vocab.tmp/trgvocab.zhen.spm" "$M/trgvocab.zhen.spm"
    rm -rf "$M/.vocab.tmp"
    echo "$vstamp" >"$M/.stamp-vocab"
fi

V=(--vocab "$M/vocab.zhen.spm")
S=(--src-vocab "$M/srcvocab.zhen.spm" --trg-vocab "$M/trgvocab.zhen.spm")
make_model tiny-f32 --preset tiny "${V[@]}"
make_model tiny-int8 --preset tiny --int8 "${V[@]}"
make_model tiny-int8-sl --preset tiny --int8 --shortlist "${V[@]}"
make_model tiny-int8-sep --preset tiny --int8 --shortlist --separate-vocab "${S[@]}"
make_model base-memory-int8-sl --preset base-memory --int8 --shortlist "${V[@]}"
echo "$stamp" >"$M/.stamp"
echo "synthetic models written to $M"
