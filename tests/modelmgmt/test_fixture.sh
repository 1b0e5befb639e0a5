#!/usr/bin/env bash
# Model management on the project's synth_models fixture (full-size 32000-piece
# vocabularies, Firefox file names): info reads each architecture, verify
# passes structurally but rejects them against the real zh-en manifest, list
# shows them, and a fixture model goes through fetch (with a cut connection)
# and verify end to end.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
F="$FANYI_BIN"
B="$FANYI_BUILD_DIR/models"
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT

# dir: dim_emb dim_ffn enc dec int8 shortlist shared
expect_arch() {
    local d=$1
    shift
    run "$F" model info --json "$B/$d"
    expect_status 0
    python3 - "$FY_TMP/out" "$@" <<'PY' && ok || bad "$d: info --json does not match $*"
import json, sys
o = json.load(open(sys.argv[1]))
want = [int(x) for x in sys.argv[2:]]
a, v, q = o["architecture"], o["vocabulary"], o["quantisation"]
got = [a["dim_emb"], a["dim_ffn"], a["enc_depth"], a["dec_depth"],
       int(q["type"] == "intgemm8"), int(o["shortlist"] is not None), int(v["shared"])]
assert got == want, (got, want)
assert v["src_size"] == 32000 and v["trg_size"] == 32000 and a["heads"] == 8
PY
}
expect_arch tiny-f32 256 1536 6 2 0 0 1
expect_arch tiny-int8 256 1536 6 2 1 0 1
expect_arch tiny-int8-sl 256 1536 6 2 1 1 1
expect_arch tiny-int8-sep 256 1536 6 2 1 1 0
expect_arch base-memory-int8-sl 384 1536 6 4 1 1 1

for d in tiny-f32 tiny-int8 tiny-int8-sl tiny-int8-sep base-memory-int8-sl; do
    run "$F" model verify --no-manifest "$B/$d"
    expect_status 0
    expect_out "^$B/$d: ok$"
done
# Same names as the real zh-en files, other contents: a synthetic model says
# what it is (its model.yml) and is not held against the catalogue; the same
# bytes without that mark are not the official model.
run "$F" model verify "$B/tiny-int8-sl"
expect_status 0
expect_out "^note  $B/tiny-int8-sl: a synthetic model \(fanyi model synth\): sizes and sha256 not checked$"
mkdir -p "$FY_TMP/zh-en"
cp "$B/tiny-int8-sl/"* "$FY_TMP/zh-en/"
sed -i 's/fanyi-synthetic/not-a-synthetic/' "$FY_TMP/zh-en/model.zhen.intgemm.alphas.bin"
run "$F" model verify "$FY_TMP/zh-en"
expect_status 4
expect_err "^fanyi model verify: $FY_TMP/zh-en/model.zhen.intgemm.alphas.bin: wrong size: [0-9]+ bytes, the zh-en 3.0 manifest says 59504955$"

run "$F" model list "$B"
expect_status 0
for d in tiny-f32 tiny-int8 tiny-int8-sl tiny-int8-sep base-memory-int8-sl; do
    expect_out "^$d +ok +- +[0-9.]+ MiB +$B/$d$"
done

# Fetch a fixture model from the test server, through one dropped connection.
S="$B/tiny-int8-sl"
M="$FY_TMP/m.json"
{
    echo '{"schema": 1, "models": {"zh-en": {"version": "synth", "files": ['
    sep=""
    for p in "$S"/*; do
        n=$(basename "$p")
        printf '%s{"name": "%s", "location": "%s", "size": %s, "sha256": "%s"}\n' \
            "$sep" "$n" "$n" "$(stat -c %s "$p")" "$(sha256sum "$p" | cut -d' ' -f1)"
        sep=","
    done
    echo ']}}}'
} >"$M"
LOG="$FY_TMP/server.log"
python3 "$FANYI_SOURCE_DIR/tests/modelmgmt/test_server.py" --root "$S" --port-file "$FY_TMP/port" \
    --log "$LOG" --lifetime 300 &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$FY_TMP/port" ] && break; sleep 0.05; done
D="$FY_TMP/fetched"
run "$F" model fetch --manifest "$M" --mirror "http://127.0.0.1:$(cat "$FY_TMP/port")/cut/" --dir "$D"
expect_status 0
expect_err 'model.zhen.intgemm.alphas.bin: .*resuming at [0-9]+ bytes \(retry 1 of 5\)'
grep -q '^cut model.zhen.intgemm.alphas.bin bytes=[0-9]*- 206$' "$LOG" && ok || bad "no resumed request"
run "$F" model verify --manifest "$M" "$D"
expect_status 0
expect_out "^ok    model.zhen.intgemm.alphas.bin: [0-9]+ bytes, sha256 matches the zh-en synth manifest"
expect_out "^$D: ok$"

finish
