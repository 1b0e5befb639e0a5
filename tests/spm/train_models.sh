#!/bin/bash
# train_models.sh - CTest fixture: trains the small unigram models the
# SentencePiece parity tests compare against, into $FANYI_BUILD_DIR/tests/spm/models.
# Corpus: the project's own mixed.txt, plus the first few hundred KB of the
# WMT test sets when ../shared has them (a more realistic vocabulary).
set -eu
: "${FANYI_SOURCE_DIR:?}" "${FANYI_BUILD_DIR:?}"
out="$FANYI_BUILD_DIR/tests/spm/models"
mkdir -p "$out"
cd "$out"
command -v spm_train >/dev/null || { echo "spm_train not found (apt-get install sentencepiece)" >&2; exit 1; }
cp "$FANYI_SOURCE_DIR/tests/data/text/mixed.txt" corpus.txt
wmt="${FANYI_SHARED_DIR:-}/data/wmt"
if [ -d "$wmt" ]; then
    for f in wmt18.zh wmt18.en; do [ -f "$wmt/$f" ] && head -c 200000 "$wmt/$f" >>corpus.txt; done
fi
# The denormaliser model maps "OK" back to "ok" and U+FF01 to "!" when decoding.
printf '4F 4B\t6F 6B\nFF01\t21\n' >denorm.tsv

common=(--input=corpus.txt --model_type=unigram --num_threads=1 --hard_vocab_limit=false
        --shuffle_input_sentence=false --minloglevel=2)
train() {
    local name=$1
    shift
    spm_train "${common[@]}" --model_prefix="$name" "$@" >"$name.log" 2>&1 ||
        { cat "$name.log" >&2; exit 1; }
}
pair() { # runs two trainings at once (two cores), failing if either fails
    eval "train $1" &
    local pid=$!
    eval "train $2"
    wait "$pid"
}
pair "nfkc_bf --vocab_size=4000 --normalization_rule_name=nmt_nfkc --byte_fallback=true" \
     "identity --vocab_size=4000 --normalization_rule_name=identity"
pair "nfkc_uds --vocab_size=3000 --character_coverage=0.99 --normalization_rule_name=nfkc \
        --add_dummy_prefix=false --user_defined_symbols='<sep>,中国,ab,ＡＢＣ,😀,▁▁,a b' \
        --control_symbols='<ctl>' --pad_id=3" \
     "keepws --vocab_size=3000 --normalization_rule_name=nmt_nfkc --remove_extra_whitespaces=false \
        --byte_fallback=true --split_digits=true"
pair "suffix --vocab_size=2000 --character_coverage=0.98 --normalization_rule_name=identity \
        --treat_whitespace_as_suffix=true --denormalization_rule_tsv=denorm.tsv --unk_surface='<?>'" \
     "small --vocab_size=2500 --character_coverage=0.98 --normalization_rule_name=nmt_nfkc"
# bytepath: nfkc_bf plus two pieces that are not whole characters ("\xe4\xb8",
# the first two bytes of many CJK characters, and "\xff"), appended as extra
# repeated fields. Such pieces make our encoder use its byte-level trie instead
# of the character-level one, so the parity test covers both paths.
{ cat nfkc_bf.model
  printf '\x0a\x09\x0a\x02\xe4\xb8\x15\x00\x00\x80\xbf'
  printf '\x0a\x08\x0a\x01\xff\x15\x00\x00\x00\xc0'; } >bytepath.model
ls ./*.model
