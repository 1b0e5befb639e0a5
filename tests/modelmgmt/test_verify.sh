#!/usr/bin/env bash
# `fanyi model verify / info / list` on small synthetic models (fanyi model synth
# with tiny vocabularies trained here), good and damaged, plus a fetch through a
# file:// mirror and a damaged model given to `fanyi translate`.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
F="$FANYI_BIN"
T="$FY_TMP"
sha() { sha256sum "$1" | cut -d' ' -f1; }
fail_if() { if "$@"; then bad "unexpected: $*"; else ok; fi; }

# --- fixtures: two small vocabularies (1000 and 1100 pieces), two models
python3 - "$T/corpus.txt" <<'PY'
import random, sys
r = random.Random(7)
han = [chr(0x4E00 + i * 7) for i in range(300)]
words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 8))) for _ in range(400)]
with open(sys.argv[1], "w") as f:
    for _ in range(3000):
        f.write("".join(r.choice(han) for _ in range(r.randint(5, 30))) + "\n")
        f.write(" ".join(r.choice(words) for _ in range(r.randint(3, 15))) + "\n")
PY
for v in 1000 1100; do
    spm_train --input="$T/corpus.txt" --model_prefix="$T/v$v" \
        --vocab_size=$v --model_type=unigram --character_coverage=0.98 --byte_fallback=true \
        --minloglevel=2 >/dev/null 2>&1 || { echo "spm_train failed"; exit 1; }
done
mkdir -p "$T/models"
G="$T/models/good"
run "$F" model synth --preset tiny --seed 3 --out "$G" --int8 --shortlist --vocab "$T/v1000.model" --name t
expect_status 0
S="$T/models/sep"
run "$F" model synth --preset tiny --seed 4 --out "$S" --separate-vocab \
    --src-vocab "$T/v1000.model" --trg-vocab "$T/v1100.model" --name t
expect_status 0
MODEL=model.t.intgemm.alphas.bin
LEX=lex.50.50.t.s2t.bin
VOCAB=vocab.t.spm
M="$T/m.json"
{
    echo '{"schema": 1, "base_url": "file:///nonexistent/", "models": {"t-en": {"version": "0.1", "files": ['
    sep=""
    for n in $MODEL $LEX $VOCAB; do
        printf '%s{"name": "%s", "location": "%s", "size": %s, "sha256": "%s"}\n' \
            "$sep" "$n" "$n" "$(stat -c %s "$G/$n")" "$(sha "$G/$n")"
        sep=","
    done
    echo ']}}}'
} >"$M"
damaged() { rm -rf "$T/d"; cp -r "$G" "$T/d"; echo "$T/d"; }
flip() { # flip FILE OFFSET
    local b; b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "$(printf '\\%03o' $(((b + 1) % 256)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# --- usage
for verb in verify info list; do
    run "$F" model $verb --help
    expect_status 0
    expect_out "^usage: fanyi model $verb"
    run "$F" model $verb --frob
    expect_status 2
    expect_err "^fanyi model $verb: unknown option '--frob'"
    expect_err_lines 1
done

# --- verify a good model: with its manifest every digest is checked
run "$F" model verify "$G" --manifest "$M"
expect_status 0
expect_out "^ok    $MODEL: [0-9]+ bytes, sha256 matches the t-en 0.1 manifest"
expect_out "^ok    $LEX: .*sha256 matches"
expect_out "^ok    $VOCAB: .*sha256 matches"
expect_out '^ok    structure: model, vocabularies and shortlist load and agree \(256-dim, 6\+2 layers, vocab 1000\)'
expect_out "^$G: ok$"
# Synthetic (model.yml says so): not held against the built-in catalogue, said so.
run "$F" model verify "$G"
expect_status 0
expect_out "^note  $G: a synthetic model \(fanyi model synth\): sizes and sha256 not checked$"
expect_out "$MODEL: [0-9]+ bytes, size and sha256 not checked"
FANYI_MODEL_DIR="$G" run "$F" model verify --quiet
expect_status 0
expect_out "^$G: ok$"
n=$(wc -l <"$FY_TMP/out"); [ "$n" = 1 ] && ok || bad "--quiet printed $n lines"

# --- info reads the architecture from the files
run "$F" model info "$G"
expect_status 0
expect_out '^encoder +6 layers, transformer'
expect_out '^decoder +2 layers, ssru'
expect_out '^dimensions +emb 256, ffn 1536 \(relu, depth 2 enc / 2 dec\), heads 8'
expect_out '^embeddings +tied \(one Wemb'
expect_out '^quantisation +int8 \(intgemm8\) with activation scales'
expect_out "^vocabulary +$VOCAB, shared: 1000 pieces"
expect_out "^shortlist +$LEX: frequent 50, best 50, 1000 source ids"
run "$F" model info --json "$G"
expect_status 0
python3 - "$FY_TMP/out" <<'PY' && ok || bad "info --json fields"
import json, sys
o = json.load(open(sys.argv[1]))
a = o["architecture"]
assert (a["dim_emb"], a["dim_ffn"], a["enc_depth"], a["dec_depth"], a["heads"]) == (256, 1536, 6, 2, 8), a
assert a["decoder_cell"] == "ssru" and a["tied_embeddings_all"] is True
assert o["vocabulary"] ["shared"] is True and o["vocabulary"]["src_size"] == 1000
assert o["quantisation"]["type"] == "intgemm8" and o["quantisation"]["activation_scales"] > 0
assert o["shortlist"]["frequent"] == 50 and o["shortlist"]["best"] == 50
assert o["model"]["name"] == "model.t.intgemm.alphas.bin" and o["model"]["bytes"] > 0
PY
run "$F" model info "$S"
expect_status 0
expect_out '^quantisation +float32'
expect_out '^vocabulary +source srcvocab.t.spm: 1000 pieces .*target trgvocab.t.spm: 1100 pieces'
expect_out '^shortlist +none'
run "$F" model verify "$S"
expect_status 0

# --- damaged models: each failure names the file, exit status 4
D=$(damaged); truncate -s 100000 "$D/$MODEL"
run "$F" model verify "$D" --manifest "$M"
expect_status 4
expect_out "^FAIL  $MODEL: $D/$MODEL: wrong size: 100000 bytes, the t-en 0.1 manifest says"
expect_out "^FAIL  structure: $D/$MODEL: "
expect_err "^fanyi model verify: $D/$MODEL: wrong size"
expect_err_lines 1
run "$F" model verify "$D"
expect_status 4
expect_err "^fanyi model verify: $D/$MODEL: "
run "$F" model info "$D"
expect_status 1
expect_err "^fanyi model info: $D/$MODEL: "
expect_err_lines 1

D=$(damaged); flip "$D/$MODEL" 5000000
run "$F" model verify "$D" --manifest "$M"
expect_status 4
expect_err "^fanyi model verify: $D/$MODEL: sha256 mismatch: [0-9a-f]{16}\.\.\., the t-en 0.1 manifest says [0-9a-f]{16}\.\.\.$"

D=$(damaged); flip "$D/$MODEL" 9 # the tensor count
run "$F" model verify "$D"
expect_status 4
expect_err "^fanyi model verify: $D/$MODEL: "

D=$(damaged); truncate -s 5000 "$D/$VOCAB"
run "$F" model verify "$D"
expect_status 4
expect_err "^fanyi model verify: $D/$VOCAB: "

D=$(damaged); flip "$D/$LEX" 100000
run "$F" model verify "$D"
expect_status 4
expect_err "^fanyi model verify: $D/$LEX: .*checksum"

D=$(damaged); cp "$T/v1100.model" "$D/$VOCAB"
run "$F" model verify "$D"
expect_status 4
expect_err "^fanyi model verify: $D/$VOCAB: vocabulary has 1100 pieces but the source embedding of $MODEL has 1000 rows$"

D=$(damaged); rm "$D/$LEX"
run "$F" model verify "$D" --manifest "$M"
expect_status 4
expect_err "^fanyi model verify: $D/$LEX: missing \(the t-en 0.1 manifest lists it\)$"
run "$F" model verify "$D"
expect_status 0

mkdir -p "$T/empty"
run "$F" model verify "$T/empty"
expect_status 4
expect_err "^fanyi model verify: $T/empty: .*model"
run "$F" model verify "$T/nonexistent"
expect_status 4
expect_err "nonexistent"
run "$F" model verify "$G" --manifest "$T/nope.json"
expect_status 1
expect_err 'nope.json: cannot open'

# --- list: ok and broken models under the root
D=$(damaged); truncate -s 100000 "$D/$VOCAB"
mv "$D" "$T/models/broken"
run "$F" model list "$T/models"
expect_status 0
expect_out "^broken +broken +$T/models/broken/$VOCAB: "
expect_out "^good +ok +- +[0-9.]+ MiB +$T/models/good$"
expect_out "^sep +ok "
FANYI_MODEL_DIR="$T/models/good/" run "$F" model list
expect_status 0
expect_out "^good +ok "
run "$F" model list "$T/empty"
expect_status 0
expect_out "^no models installed in $T/empty"
HOME="$T/home" run env -u FANYI_MODEL_DIR HOME="$T/home" "$F" model list
expect_status 0
expect_out "^no models installed in $T/home/.local/share/fanyi/models "

# --- fetch the synthetic model through a file:// mirror, then verify it
run "$F" model fetch t-en --manifest "$M" --mirror "file://$G/" --dir "$T/fetched" --quiet
expect_status 0
run "$F" model verify "$T/fetched" --manifest "$M"
expect_status 0
n=$(grep -c '^ok ' "$FY_TMP/out"); [ "$n" = 4 ] && ok || bad "expected 4 ok lines, got $n"

# --- a float tensor that is not a number (a layer-norm scale set to NaN):
# verify, info and translate all refuse it, naming the tensor
D=$(damaged)
python3 - "$D/$MODEL" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack_from("<Q", b, 8)[0]
heads = [struct.unpack_from("<4Q", b, 16 + 32 * i) for i in range(n)]
at = 16 + 32 * n
names = []
for ln, _, _, _ in heads:
    names.append(b[at:at + ln - 1].decode()); at += ln
at += 4 * sum(h[2] for h in heads)
pad = struct.unpack_from("<Q", b, at)[0]; at += 8 + pad
for name, (ln, typ, nd, size) in zip(names, heads):
    if name == "encoder_l1_ffn_ffn_ln_scale":
        struct.pack_into("<f", b, at + 4, float("nan"))
    at += size
open(p, "wb").write(b)
PY
run "$F" model verify --no-manifest "$D"
expect_status 4
expect_out "encoder_l1_ffn_ffn_ln_scale.*element 1 is nan"
printf '你好\n' >"$T/in.txt"
FY_STDIN="$T/in.txt" run "$F" translate --model "$D"
expect_status 1
expect_err "encoder_l1_ffn_ffn_ln_scale"

# --- a vocabulary piece that is not valid UTF-8 (the last byte of the first
# piece written in a multi-byte character turned into 0xFF): refused at
# load, naming the file and the piece
D=$(damaged)
python3 - "$D/$VOCAB" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7F) << s; s += 7
        if c < 0x80: return v, i
i = 0
while i < len(b):  # top-level fields: 1 = a SentencePiece (tag 0x0A)
    key, i = varint(i)
    if key & 7 != 2: sys.exit("unexpected field")
    n, i = varint(i)
    if key >> 3 == 1 and b[i] == 0x0A:  # its field 1, the piece text
        ln, j = varint(i + 1)
        if any(c >= 0x80 for c in b[j:j + ln]):
            b[j + ln - 1] = 0xFF
            break
    i += n
else:
    sys.exit("no multi-byte piece")
open(p, "wb").write(b)
PY
run "$F" model verify --no-manifest "$D"
expect_status 4
expect_out "$VOCAB: piece [0-9]+ is not valid UTF-8"

# --- a truncated model given to translate: one clear line, no crash
D=$(damaged); truncate -s 100000 "$D/$MODEL"
printf '你好世界\n' >"$T/in.txt"
FY_STDIN="$T/in.txt" run "$F" translate --model "$D"
expect_status 1
expect_err "$D/$MODEL"
expect_err_lines 1

# --- and to serve: it refuses to start, naming the file, without crashing
run timeout 20 "$F" serve --model "$D" --port 0 --quiet
[ "$FY_STATUS" -ne 0 ] && [ "$FY_STATUS" -lt 124 ] && ok || bad "serve exit status $FY_STATUS"
expect_err "$D/$MODEL"

finish
