#!/usr/bin/env bash
# Every subcommand reads the same models directory (issue 24): --models ROOT,
# else $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models; a command that
# needs one model takes $FANYI_MODEL_DIR, else that directory's zh-en, else
# its only model. And `model fetch` replaces a synthetic model (what
# ./scripts/run.sh --synth leaves) with the catalogue's without --force.
# Usage: test_models_dir.sh MODELS_DIR (the synth_models fixture)
. "$FANYI_SOURCE_DIR/tests/lib.sh"
B=$(cd "$1" && pwd)
F="$FANYI_BIN"
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT
unset FANYI_MODEL_DIR FANYI_MODELS_DIR

A="$FY_TMP/a"     # $FANYI_MODELS_DIR: zh-en and en-zh
C="$FY_TMP/c"     # --models: zh-en only
H="$FY_TMP/home"  # $HOME: de-en only, in the default place
D="$H/.local/share/fanyi/models"
mkdir -p "$A" "$C" "$D"
ln -s "$B/tiny-int8-sl" "$A/zh-en"
ln -s "$B/firefox-en-zh" "$A/en-zh"
ln -s "$B/tiny-int8" "$C/zh-en"
ln -s "$B/tiny-de-en" "$D/de-en"
printf '今天天气很好。\n北京是中国的首都。\n' >"$FY_TMP/in.zh"
export HOME="$H"

# Which model directory each one-model command takes, with the environment
# given (VAR=VALUE ...) and options after --.
expect_dir() {
    local want=$1
    shift
    local envs=() opts=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    run env "${envs[@]}" "$F" model info --json "${opts[@]}" "$@"
    expect_status 0
    expect_out "\"directory\": \"$want\""
    run env "${envs[@]}" "$F" model verify --quiet "$@"
    expect_status 0
    expect_out "^$want: ok$"
    run env "${envs[@]}" "$F" bench --sentences 2 --threads 1 --input "$FY_TMP/in.zh" --json "$@"
    expect_status 0
    expect_out "^\{\"model\":\"$want\""
}

# $FANYI_MODELS_DIR: every command, its zh-en.
expect_dir "$A/zh-en" FANYI_MODELS_DIR="$A" --
FANYI_MODELS_DIR="$A" run "$F" model list
expect_out "^en-zh +ok .*$A/en-zh$"
expect_out "^zh-en +ok .*$A/zh-en$"
FANYI_MODELS_DIR="$A" FY_STDIN="$FY_TMP/in.zh" run "$F" translate
expect_status 0
[ "$(wc -l <"$FY_TMP/out")" = 2 ] && ok || bad "translate: 2 lines expected"
FANYI_MODELS_DIR="$A" run "$F" serve --port 0 --help
expect_out "FANYI_MODELS_DIR"
# Where fetch would install (an unreachable mirror on a closed loopback port).
FANYI_MODELS_DIR="$A" run "$F" model fetch de-en --mirror http://127.0.0.1:9/ --retries 0 --timeout 2
expect_status 3
expect_err "^fetching de-en .* into $A/de-en$"

# --models ROOT beats $FANYI_MODELS_DIR.
expect_dir "$C/zh-en" FANYI_MODELS_DIR="$A" -- --models "$C"
FANYI_MODELS_DIR="$A" FY_STDIN="$FY_TMP/in.zh" run "$F" translate --models "$C"
expect_status 0

# Neither: the default directory under $HOME, whose only model is de-en.
expect_dir "$D/de-en" HOME="$H" --
run "$F" model list
expect_out "^de-en +ok .*$D/de-en$"

# $FANYI_MODEL_DIR names the model itself.
expect_dir "$B/tiny-int8" FANYI_MODEL_DIR="$B/tiny-int8" FANYI_MODELS_DIR="$A" --

# A models directory without zh-en and several models: its zh-en is named,
# and missing.
mkdir -p "$FY_TMP/two"
ln -s "$B/tiny-de-en" "$FY_TMP/two/de-en"
ln -s "$B/tiny-en-de" "$FY_TMP/two/en-de"
run "$F" model info --models "$FY_TMP/two"
expect_status 1
expect_err "$FY_TMP/two/zh-en"
run "$F" model info "$B/tiny-int8" --models "$A"
expect_status 2
expect_err "DIR and --models exclude each other"

# --- fetch replaces a synthetic model (random weights, made again at will).
S="$FY_TMP/s"
mkdir -p "$S/zh-en" "$FY_TMP/srv"
cp "$B/tiny-int8-sl/"* "$S/zh-en/"
# The "catalogue's" zh-en: other weights (seed 2), no shortlist.
"$F" model synth --preset tiny --int8 --seed 2 --vocab "$B/vocab.zhen.spm" --out "$FY_TMP/real"
python3 - "$FY_TMP/real" "$FY_TMP/srv" "$FY_TMP/manifest.json" <<'PY'
import hashlib, json, os, shutil, sys
src, srv, out = sys.argv[1:4]
files = []
for n in sorted(os.listdir(src)):
    shutil.copy(os.path.join(src, n), os.path.join(srv, n))
    data = open(os.path.join(src, n), "rb").read()
    files.append({"name": n, "location": n, "size": len(data),
                  "sha256": hashlib.sha256(data).hexdigest()})
json.dump({"schema": 1, "models": {"zh-en": {"version": "9.9", "files": files}}}, open(out, "w"))
PY
python3 "$FANYI_SOURCE_DIR/tests/modelmgmt/test_server.py" --root "$FY_TMP/srv" \
    --port-file "$FY_TMP/port" --log "$FY_TMP/srv.log" --lifetime 120 &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$FY_TMP/port" ] && break; sleep 0.05; done
FANYI_MODELS_DIR="$S" run "$F" model fetch zh-en --manifest "$FY_TMP/manifest.json" \
    --mirror "http://127.0.0.1:$(cat "$FY_TMP/port")/ok/" --quiet
expect_status 0
expect_err "^$S/zh-en holds a synthetic model \(fanyi model synth\): replacing it$"
expect_out "^installed zh-en 9.9 into $S/zh-en"
# Fetched again: installed already, nothing replaced.
FANYI_MODELS_DIR="$S" run "$F" model fetch zh-en --manifest "$FY_TMP/manifest.json" \
    --mirror "http://127.0.0.1:$(cat "$FY_TMP/port")/ok/" --quiet
expect_status 0
expect_out "^zh-en 9.9 is already installed in $S/zh-en"
cmp -s "$S/zh-en/model.zhen.intgemm.alphas.bin" "$FY_TMP/real/model.zhen.intgemm.alphas.bin" &&
    ok || bad "the fetched model is not in place"
[ ! -e "$S/zh-en/lex.50.50.zhen.s2t.bin" ] && ok || bad "the synthetic shortlist is still in the model"
finish
