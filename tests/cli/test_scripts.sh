#!/usr/bin/env bash
# The newcomer's scripts (issue 24): serving never needs Node (run.sh's setup
# installs the build's Debian packages only; the full setup skips `npm ci`
# when node_modules matches the lock file), run.sh offline says what to do
# (--synth, the files to copy and where, --mirror), --mirror reaches fetch,
# and install.sh / cmake --install put fanyi in PREFIX/bin.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
S="$FANYI_SOURCE_DIR"
SRV_PID=
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT
unset FANYI_MODEL_DIR FANYI_MODELS_DIR
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# Stand-ins for the package tools: dpkg-query says every package is
# installed; npm, node, apt-get and sudo record that they were called.
SHIM="$FY_TMP/shim"
mkdir -p "$SHIM"
cat >"$SHIM/dpkg-query" <<EOF
#!/bin/sh
echo "dpkg-query \$*" >>"$FY_TMP/calls"
printf 'install ok installed'
EOF
for t in npm node apt-get sudo; do
    printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$t" "$FY_TMP" >"$SHIM/$t"
done
chmod +x "$SHIM"/*

# setup.sh --serve: the build's packages, nothing of Node or the test tools.
: >"$FY_TMP/calls"
PATH="$SHIM:$PATH" run "$S/scripts/setup.sh" --serve
expect_status 0
expect_out "^setup: build dependencies installed$"
grep -q 'dpkg-query .* libmicrohttpd-dev$' "$FY_TMP/calls" && ok || bad "libmicrohttpd-dev not checked"
grep -q 'dpkg-query .* sentencepiece$' "$FY_TMP/calls" && ok || bad "sentencepiece (spm_train, --synth) not checked"
if grep -qE '^(npm|node|apt-get|sudo) |nodejs|chromium|redis-server' "$FY_TMP/calls"; then
    bad "setup.sh --serve went beyond the build: $(grep -E 'npm|node|chromium|redis' "$FY_TMP/calls" | head -3)"
else
    ok
fi
grep -q 'scripts/setup.sh --serve' "$S/scripts/run.sh" && ok || bad "run.sh does not use setup.sh --serve"

# The full setup in a copy of the repository's lock file: npm ci is skipped
# when node_modules/.package-lock.json (npm's record) matches, run otherwise.
R="$FY_TMP/repo"
mkdir -p "$R/scripts" "$R/node_modules"
cp "$S/scripts/setup.sh" "$R/scripts/"
cp "$S/package-lock.json" "$R/"
python3 - "$R" <<'PY'
import json, sys
lock = json.load(open(sys.argv[1] + "/package-lock.json"))
hidden = {"name": lock.get("name"), "lockfileVersion": 3,
          "packages": {k: v for k, v in lock["packages"].items() if k}}
json.dump(hidden, open(sys.argv[1] + "/node_modules/.package-lock.json", "w"))
PY
: >"$FY_TMP/calls"
PATH="$SHIM:$PATH" run "$R/scripts/setup.sh"
expect_status 0
expect_out "npm ci skipped"
if grep -q '^npm ' "$FY_TMP/calls"; then bad "npm ran: $(grep '^npm ' "$FY_TMP/calls")"; else ok; fi
grep -q 'dpkg-query .* chromium$' "$FY_TMP/calls" && ok || bad "the full setup did not check the test packages"
python3 - "$R/node_modules/.package-lock.json" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
name = next(k for k, v in h["packages"].items() if not v.get("optional"))
h["packages"][name]["version"] = "0.0.0-stale"
json.dump(h, open(sys.argv[1], "w"))
PY
: >"$FY_TMP/calls"
PATH="$SHIM:$PATH" run "$R/scripts/setup.sh"
expect_status 0
grep -q '^npm ci ' "$FY_TMP/calls" && ok || bad "npm ci did not run for a stale node_modules"

# run.sh offline: the fetch's message, then what to do.
export HOME="$FY_TMP/home"
offline=(env https_proxy="http://127.0.0.1:$closed" HTTPS_PROXY="http://127.0.0.1:$closed"
    no_proxy= NO_PROXY= FANYI_PREBUILT="$FANYI_BIN")
run "${offline[@]}" "$S/scripts/run.sh"
expect_status 3
M="$HOME/.local/share/fanyi/models"
expect_err "cannot reach firefox-settings-attachments.cdn.mozilla.net"
expect_err "^run.sh: cannot download the zh-en model \(no network access\?\)"
expect_err "^        \./scripts/run\.sh --synth$"
expect_err "copy the files named above"
expect_err "^    $M/zh-en/$"
expect_err "^        \./scripts/run\.sh --mirror URL"
expect_err "model\.zhen\.intgemm\.alphas\.bin, lex\.50\.50\.zhen\.s2t\.bin and vocab\.zhen\.spm"

# A synthetic model in the way: fetch would replace it; offline, it stays.
mkdir -p "$M/zh-en"
cp "$FANYI_BUILD_DIR/models/tiny-int8-sl/"* "$M/zh-en/"
run "${offline[@]}" "$S/scripts/run.sh"
expect_status 3
expect_err "$M/zh-en holds a synthetic model \(fanyi model synth\): replacing it"
cmp -s "$M/zh-en/model.zhen.intgemm.alphas.bin" "$FANYI_BUILD_DIR/models/tiny-int8-sl/model.zhen.intgemm.alphas.bin" &&
    ok || bad "the synthetic model was lost"
rm -rf "$M"

# run.sh --mirror URL reaches fetch: the loopback mirror is asked for the
# catalogue's path (and has nothing: fetch fails, run.sh with it).
mkdir -p "$FY_TMP/srv"
python3 "$S/tests/modelmgmt/test_server.py" --root "$FY_TMP/srv" --port-file "$FY_TMP/port" \
    --log "$FY_TMP/srv.log" --lifetime 120 &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$FY_TMP/port" ] && break; sleep 0.05; done
run env FANYI_PREBUILT="$FANYI_BIN" "$S/scripts/run.sh" --mirror "http://127.0.0.1:$(cat "$FY_TMP/port")/ok/"
[ "$FY_STATUS" != 0 ] && ok || bad "run.sh served without models"
grep -q '^ok main-workspace/translations-models/[0-9a-f-]*\.bin - 404$' "$FY_TMP/srv.log" && ok ||
    bad "the mirror was not asked: $(cat "$FY_TMP/srv.log")"
run env FANYI_PREBUILT="$FANYI_BIN" "$S/scripts/run.sh" --mirror
expect_status 2
expect_err "run.sh: --mirror needs a URL"

# install.sh and cmake --install: PREFIX/bin/fanyi, and what to do about PATH.
run env FANYI_PREBUILT="$FANYI_BIN" PATH=/usr/bin:/bin "$S/scripts/install.sh" "$FY_TMP/prefix"
expect_status 0
expect_out "^install: $FY_TMP/prefix/bin/fanyi$"
expect_out "export PATH=\"$FY_TMP/prefix/bin:\\\$PATH\""
run "$FY_TMP/prefix/bin/fanyi" version
expect_status 0
run cmake --install "$FANYI_BUILD_DIR" --prefix "$FY_TMP/p2"
expect_status 0
run "$FY_TMP/p2/bin/fanyi" --version
expect_status 0
finish
