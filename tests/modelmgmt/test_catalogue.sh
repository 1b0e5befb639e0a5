#!/usr/bin/env bash
# The built-in catalogue of Firefox Translations directions: the generated
# file is what scripts/gen-catalogue.py makes of ../shared's records (when
# they are there) and what the binary carries; `model list --available`;
# unknown directions; `model fetch` of a non-zh direction from a loopback
# mirror, with the built-in catalogue (the right URLs, nothing installed from
# bytes that are not Mozilla's) and with a manifest in the same schema (a
# synthetic de-en installed under $FANYI_MODELS_DIR/de-en); where fetch
# installs by default. Needs the synth_models fixture (tiny-de-en).
. "$FANYI_SOURCE_DIR/tests/lib.sh"
F="$FANYI_BIN"
B="$FANYI_BUILD_DIR/models"
GEN="$FANYI_SOURCE_DIR/scripts/gen-catalogue.py"
RECORDS="${FANYI_SHARED_DIR:-$FANYI_SOURCE_DIR/../shared}/data/firefox-models-2025-10-17.json"
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT

# --- the generated file is up to date, and is what the binary carries
if [ -f "$RECORDS" ]; then
    run python3 "$GEN" --input "$RECORDS" --check
    expect_status 0
    expect_out "up to date \(90 directions\)"
    run python3 "$GEN" --input "$RECORDS" --json
    expect_status 0
    cp "$FY_TMP/out" "$FY_TMP/catalogue.json"
    # A stale copy is caught.
    cp "$FANYI_SOURCE_DIR/src/model/catalogue.c" "$FY_TMP/stale.c"
    sed -i '0,/31561787/s//31561788/' "$FY_TMP/stale.c"
    run python3 "$GEN" --input "$RECORDS" --check --output "$FY_TMP/stale.c"
    expect_status 1
    expect_err "stale.c is not what .* gives; run scripts/gen-catalogue.py"
else
    echo "note: $RECORDS missing: the generated catalogue is not compared with its source"
    # Without the records, the JSON the C file holds is the reference.
    python3 - "$FANYI_SOURCE_DIR/src/model/catalogue.c" >"$FY_TMP/catalogue.json" <<'PY'
import ast, re, sys
src = open(sys.argv[1], encoding="utf-8").read()
body = src[src.index("fy_catalogue_json[] =") + len("fy_catalogue_json[] ="):src.index("/* clang-format on */")]
print("".join(ast.literal_eval(s) for s in re.findall(r'^\s*(".*");?$', body, re.M)), end="")
PY
fi
run "$F" model list --available --json
expect_status 0
python3 - "$FY_TMP/catalogue.json" "$FY_TMP/out" <<'PY' && ok || bad "the binary's catalogue differs from the generated one"
import json, sys
cat = json.load(open(sys.argv[1]))["models"]
got = {m["name"]: m for m in json.load(open(sys.argv[2]))}
assert sorted(cat) == sorted(got), (len(cat), len(got))
for name, m in cat.items():
    g = got[name]
    for k in ("source", "target", "version", "architecture", "channel"):
        assert g[k] == m[k], (name, k, g[k], m[k])
    assert g["bytes"] == sum(f["size"] for f in m["files"]) and g["files"] == len(m["files"]), name
assert got["zh-en"]["bytes"] == 59504955 + 9220016 + 1359697
assert got["en-zh"]["files"] == 4 and got["en-zh"]["architecture"] == "base-memory"
assert sum(m["channel"] == "nightly" for m in got.values()) == 5
PY

# --- model list --available: languages in English, nightly marked, installed state
export FANYI_MODELS_DIR="$FY_TMP/models"
run "$F" model list --available
expect_status 0
expect_out "^en-zh +English -> Chinese +3\.0 +base-memory +49\.5 MiB +-$"
expect_out "^zh-en +Chinese -> English +3\.0 +base +66\.8 MiB +-$"
expect_out "^az-en +Azerbaijani -> English \(nightly\) +3\.0a1 +tiny "
expect_out "^90 directions; install one with 'fanyi model fetch DIRECTION' into $FY_TMP/models/DIRECTION$"
run "$F" model list --json
expect_status 2
expect_err "--json goes with --available"

# --- unknown directions: usage error with the closest names
run "$F" model fetch de-fr
expect_status 2
expect_err "^fanyi model fetch: no model 'de-fr' in the catalogue; closest: de-en, en-fr, "
expect_err_lines 1
run "$F" model fetch klingon
expect_status 2
expect_err "no model 'klingon' in the catalogue; closest: "

# --- the loopback mirror
SRV="$FY_TMP/srv"
mkdir -p "$SRV"
LOG="$FY_TMP/server.log"
python3 "$FANYI_SOURCE_DIR/tests/modelmgmt/test_server.py" --root "$SRV" --port-file "$FY_TMP/port" \
    --log "$LOG" --lifetime 300 &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$FY_TMP/port" ] && break; sleep 0.05; done
U="http://127.0.0.1:$(cat "$FY_TMP/port")"

# Built-in catalogue, de-en: the mirror holds other bytes at Mozilla's paths.
# fetch asks for the catalogue's uncompressed locations and refuses them.
python3 - "$FY_TMP/catalogue.json" "$SRV" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))["models"]["de-en"]
for f in m["files"]:
    p = os.path.join(sys.argv[2], f["location"])
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p, "wb").write(b"not Mozilla's file\n" * 100)
PY
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["models"]["de-en"]["files"][0]["location"])' "$FY_TMP/catalogue.json")
run "$F" model fetch de-en --mirror "$U/ok/" --quiet
expect_status 4
expect_err "^fanyi model fetch: model\.deen\.intgemm\.alphas\.bin: "
grep -q "^ok $first - 200$" "$LOG" && ok || bad "no request for $first: $(cat "$LOG")"
[ -z "$(ls -A "$FANYI_MODELS_DIR/de-en" 2>/dev/null | grep -v '^\.')" ] && ok ||
    bad "something was installed: $(ls -A "$FANYI_MODELS_DIR/de-en")"

# A mirror manifest in the catalogue's schema, de-en = the fixture's
# tiny-de-en, nested locations: installed under $FANYI_MODELS_DIR/de-en
# whatever the spelling of the direction.
M="$FY_TMP/mirror.json"
python3 - "$B/tiny-de-en" "$SRV" "$M" <<'PY'
import hashlib, json, os, shutil, sys
src, srv, out = sys.argv[1:4]
files = []
for n in sorted(os.listdir(src)):
    loc = f"main-workspace/translations-models/synth-{n}"
    os.makedirs(os.path.join(srv, os.path.dirname(loc)), exist_ok=True)
    shutil.copy(os.path.join(src, n), os.path.join(srv, loc))
    data = open(os.path.join(src, n), "rb").read()
    files.append({"name": n, "location": loc, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
json.dump({"schema": 1, "base_url": "http://127.0.0.1:1/unused/", "models": {"de-en": {
    "version": "synth", "source": "de", "target": "en", "architecture": "tiny",
    "channel": "release", "files": files}}}, open(out, "w"))
PY
run "$F" model fetch DE-EN --manifest "$M" --mirror "$U/ok/"
expect_status 0
expect_out "^installed de-en synth into $FANYI_MODELS_DIR/de-en \(3 downloaded, 0 already present\)$"
for n in model.deen.intgemm.alphas.bin lex.50.50.deen.s2t.bin vocab.deen.spm; do
    cmp -s "$B/tiny-de-en/$n" "$FANYI_MODELS_DIR/de-en/$n" && ok || bad "$n differs"
done
run "$F" model verify --manifest "$M" "$FANYI_MODELS_DIR/de-en"
expect_status 0
expect_out "^$FANYI_MODELS_DIR/de-en: ok$"
run "$F" model fetch de-en --manifest "$M" --mirror "$U/ok/"
expect_status 0
expect_out "de-en synth is already installed in $FANYI_MODELS_DIR/de-en"
run "$F" model list
expect_status 0
expect_out "^de-en +ok +- +[0-9.]+ MiB +$FANYI_MODELS_DIR/de-en$"
run "$F" model list --available
expect_out "^de-en +German -> English +3\.0 +base-memory +35\.6 MiB +differs$"
run "$F" model fetch xx-en --manifest "$M"
expect_status 2
expect_err "the manifest $M has no model 'xx-en'; closest: de-en"

# --- default install directories (an unreachable mirror: only the line that
# names the directory matters)
unset FANYI_MODELS_DIR
HOME="$FY_TMP/home" run env -u FANYI_MODEL_DIR -u FANYI_MODELS_DIR HOME="$FY_TMP/home" \
    "$F" model fetch en-zh-Hans --mirror http://127.0.0.1:1/ --retries 0 --timeout 2
expect_status 3
expect_err "^fetching en-zh 3\.0 \(4 files, 49\.5 MiB\) into $FY_TMP/home/\.local/share/fanyi/models/en-zh$"
FANYI_MODELS_DIR="$FY_TMP/m2" run "$F" model fetch zh-Hans-en --mirror http://127.0.0.1:1/ \
    --retries 0 --timeout 2
expect_status 3
expect_err "^fetching zh-en 3\.0 \(3 files, 66\.8 MiB\) into $FY_TMP/m2/zh-en$"
# zh-en keeps its old home when only FANYI_MODEL_DIR is set; others go beside it.
FANYI_MODEL_DIR="$FY_TMP/one/zh" run env -u FANYI_MODELS_DIR FANYI_MODEL_DIR="$FY_TMP/one/zh" \
    "$F" model fetch zh-en --mirror http://127.0.0.1:1/ --retries 0 --timeout 2
expect_err "into $FY_TMP/one/zh$"
FANYI_MODEL_DIR="$FY_TMP/one/zh" run env -u FANYI_MODELS_DIR FANYI_MODEL_DIR="$FY_TMP/one/zh" \
    "$F" model fetch en-zh --mirror http://127.0.0.1:1/ --retries 0 --timeout 2
expect_err "into $FY_TMP/one/en-zh$"
finish
