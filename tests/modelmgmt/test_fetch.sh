#!/usr/bin/env bash
# `fanyi model fetch` against a loopback test server (test_server.py): success,
# skip/--force, resume after a cut connection (same run and next run), servers
# that ignore Range, corruption, HTTP errors, unreachable and stalled servers.
# Locking, atomic install and hostile mirrors: test_fetch_atomic.sh and
# test_fetch_hostile.sh.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/modelmgmt/fetch_lib.sh"
F="$FANYI_BIN"

same() { cmp -s "$1" "$2" && ok || bad "$2 differs from $1"; }
absent() { [ ! -e "$1" ] && ok || bad "$1 should not exist"; }
no_parts() {
    local n; n=$(find "$1/" "$(store_of "$1")" -name '*.part' 2>/dev/null | wc -l)
    [ "$n" = 0 ] && ok || bad "$1 has $n .part files"
    [ -z "$(staging_of "$1")" ] && ok || bad "$1 has a staging directory left: $(staging_of "$1")"
}
log_has() { grep -Eq -- "$1" "$LOG" && ok || bad "server log lacks /$1/: $(tail -5 "$LOG")"; }

# Fixture: three files shaped like a model's (contents need not be a model here).
SRV="$FY_TMP/srv"
mkdir -p "$SRV"
head -c 700001 /dev/urandom >"$SRV/model.t.bin"
head -c 90017 /dev/urandom >"$SRV/lex.t.s2t.bin"
head -c 13009 /dev/urandom >"$SRV/vocab.t.spm"
manifest() { # manifest FILE [extra JSON file entries]
    {
        echo '{"schema": 1, "base_url": "http://127.0.0.1:1/unused/", "models": {"zh-en": {"version": "9.9", "files": ['
        local sep=""
        for n in model.t.bin lex.t.s2t.bin vocab.t.spm; do
            printf '%s{"name": "%s", "location": "%s", "size": %s, "sha256": "%s"}\n' \
                "$sep" "$n" "$n" "$(size "$SRV/$n")" "$(sha "$SRV/$n")"
            sep=","
        done
        [ $# -gt 1 ] && echo ",$2"
        echo ']}}}'
    } >"$1"
}
M="$FY_TMP/m.json"
manifest "$M"

start_mirror "$SRV"
fetch() { run "$F" model fetch --manifest "$M" "$@"; }
installed_ok() {
    for n in model.t.bin lex.t.s2t.bin vocab.t.spm; do same "$SRV/$n" "$1/$n"; done
    no_parts "$1"
    # The model directory is the link fetch switches (docs/models.md).
    [[ "$(readlink "$1")" =~ ^\.fanyi-versions/$(basename "$1")/9\.9-[0-9a-f]{12}\.[0-9]+$ ]] && ok ||
        bad "$1 is not a link to a version: $(ls -ld "$1")"
}

# --- usage
run "$F" model fetch --help
expect_status 0
expect_out '^usage: fanyi model fetch'
run "$F" model fetch --bogus
expect_status 2
expect_err "^fanyi model fetch: unknown option '--bogus'"
expect_err_lines 1
fetch --mirror "$U/ok/" --dir "$FY_TMP/x" en-xx
expect_status 2
expect_err "no model 'en-xx'"
run "$F" model fetch --manifest "$FY_TMP/nope.json"
expect_status 1
expect_err 'nope.json: cannot open'
echo '{"schema": 1, "models": ' >"$FY_TMP/bad.json"
run "$F" model fetch --manifest "$FY_TMP/bad.json"
expect_status 1
expect_err 'bad.json: invalid JSON'

sed 's#"base_url": "[^"]*", ##' "$M" >"$FY_TMP/nobase.json"
run "$F" model fetch --manifest "$FY_TMP/nobase.json" --dir "$FY_TMP/x"
expect_status 1
expect_err '^fanyi model fetch: model.t.bin: the manifest has no base_url; use --mirror URL$'

# --- plain success, progress lines (not a terminal), nothing left behind
D="$FY_TMP/d1"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_out "^installed zh-en 9.9 into $D"
expect_err '\[1/3\] model.t.bin: done'
expect_err '\[3/3\] vocab.t.spm: done'
installed_ok "$D"
n=$(wc -l <"$FY_TMP/err"); [ "$n" -le 8 ] && ok || bad "progress too chatty: $n lines"

# --- already installed: no request at all; --force downloads again
before=$(wc -l <"$LOG")
fetch --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_out 'already installed'
expect_err 'model.t.bin: already installed'
[ "$(wc -l <"$LOG")" = "$before" ] && ok || bad "an installed model caused requests"
fetch --mirror "$U/ok/" --dir "$D" --force --quiet
expect_status 0
expect_out 'installed zh-en'
[ "$(wc -l <"$LOG")" = $((before + 3)) ] && ok || bad "--force did not download 3 files"
installed_ok "$D"

# --- a differing file in the way is not overwritten without --force
# (a byte other than the one there: the file is random, so a fixed 'X'
# left it unchanged once in 256 runs)
b=$(od -An -tu1 -j 100 -N1 "$D/vocab.t.spm" | tr -d ' ')
printf "$(printf '\\%03o' $(((b + 1) % 256)))" | dd of="$D/vocab.t.spm" bs=1 seek=100 conv=notrunc 2>/dev/null
cp "$D/vocab.t.spm" "$FY_TMP/vocab.mine"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 5
expect_err "vocab.t.spm exists but is corrupt.*--force"
expect_err_lines 4 # the "fetching" line, two "already installed" notes, the error
same "$FY_TMP/vocab.mine" "$D/vocab.t.spm"
fetch --mirror "$U/ok/" --dir "$D" --force
expect_status 0
installed_ok "$D"

# --- default directory: $FANYI_MODEL_DIR unset -> ~/.local/share/fanyi/models/zh-en
HOME="$FY_TMP/home" FANYI_MODEL_DIR= run env -u FANYI_MODEL_DIR HOME="$FY_TMP/home" \
    "$F" model fetch --manifest "$M" --mirror "$U/ok/" --quiet
expect_status 0
installed_ok "$FY_TMP/home/.local/share/fanyi/models/zh-en"

# --- a connection cut mid-file is resumed with a Range request in the same run
D="$FY_TMP/d2"
fetch --mirror "$U/cut/" --dir "$D"
expect_status 0
expect_err 'model.t.bin: .*resuming at 350000 bytes \(retry 1 of 5\)'
log_has '^cut model.t.bin bytes=350000- 206$'
installed_ok "$D"

# --- a download that keeps failing leaves its part (nothing installed); the next run resumes
D="$FY_TMP/d3"
fetch --mirror "$U/cutalways/" --dir "$D" --retries 0
expect_status 3
expect_err 'model.t.bin: download from 127.0.0.1.* failed at 350000 of 700001 bytes'
expect_err_lines 2
absent "$D"
part=$(part_of "$D" model.t.bin)
[ -n "$part" ] && [ "$(size "$part")" = 350000 ] && ok || bad "no 350000-byte part file: $(ls -la "$D")"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_err 'model.t.bin: resuming a previous download at 350000 of 700001 bytes'
log_has '^ok model.t.bin bytes=350000- 206$'
installed_ok "$D"

# --- a server that ignores Range: start over from its 200 answer
D="$FY_TMP/d4"
fetch --mirror "$U/cutalways/" --dir "$D" --retries 0 --quiet
expect_status 3
fetch --mirror "$U/norange/" --dir "$D"
expect_status 0
log_has '^norange model.t.bin bytes=350000- 200$'
installed_ok "$D"

# --- a stale part that is no prefix of the file: hash mismatch, then one fresh download
D="$FY_TMP/d5"
fetch --mirror "$U/cutalways/" --dir "$D" --retries 0 --quiet
expect_status 3
head -c 5000 /dev/urandom >"$(part_of "$D" model.t.bin)"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_err 'sha256 mismatch after resuming; downloading again'
installed_ok "$D"

# --- a corrupted byte: hash mismatch, nothing installed, no part kept
D="$FY_TMP/d6"
fetch --mirror "$U/corrupt/" --dir "$D"
expect_status 4
expect_err '^fanyi model fetch: model.t.bin: sha256 mismatch: got [0-9a-f]{16}\.\.\., expected [0-9a-f]{16}\.\.\. \(nothing installed\)$'
absent "$D"
no_parts "$D"

# --- the server's file has another size than the manifest says
M2="$FY_TMP/m2.json"
sed "s/\"size\": 13009/\"size\": 13010/" "$M" >"$M2"
run "$F" model fetch --manifest "$M2" --mirror "$U/ok/" --dir "$FY_TMP/d7"
expect_status 4
expect_err 'vocab.t.spm: size mismatch: the server has 13009 bytes, the manifest says 13010'
for n in model.t.bin lex.t.s2t.bin vocab.t.spm; do absent "$FY_TMP/d7/$n"; done

# --- HTTP errors name the file and the status
manifest "$M2" '{"name": "extra.t.bin", "location": "extra.t.bin", "size": 5, "sha256": "'"$(printf '%064d' 0)"'"}'
run "$F" model fetch --manifest "$M2" --mirror "$U/ok/" --dir "$FY_TMP/d8"
expect_status 3
expect_err "^fanyi model fetch: extra.t.bin: HTTP 404 from $U/ok/extra.t.bin$"
for n in model.t.bin lex.t.s2t.bin vocab.t.spm; do absent "$FY_TMP/d8/$n"; done
expect_err_lines 5 # fetching, 3 x done, the error
absent "$FY_TMP/d8"
[ "$(ls "$(staging_of "$FY_TMP/d8")" | tr '\n' ' ')" = "lex.t.s2t.bin model.t.bin vocab.t.spm " ] && ok ||
    bad "the good downloads were not kept for the next run: $(ls -a "$(staging_of "$FY_TMP/d8")")"
fetch --mirror "$U/e500/" --dir "$FY_TMP/d8b"
expect_status 3
expect_err 'model.t.bin: HTTP 500 from'

# --- an unreachable server fails fast with the advice
FREE=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t0=$(date +%s)
fetch --mirror "http://127.0.0.1:$FREE/" --dir "$FY_TMP/d9"
t1=$(date +%s)
expect_status 3
expect_err "^fanyi model fetch: model.t.bin: cannot reach 127.0.0.1:$FREE \(.*\) — copy the files into $FY_TMP/d9, or use --mirror URL$"
[ $((t1 - t0)) -le 5 ] && ok || bad "unreachable server took $((t1 - t0)) s"
absent "$FY_TMP/d9"
absent "$(store_of "$FY_TMP/d9")" # the store made for the fetch is removed again when it holds nothing

# --- a server that stops sending: --timeout gives up
t0=$(date +%s)
fetch --mirror "$U/stall/" --dir "$FY_TMP/d10" --timeout 2 --retries 0
t1=$(date +%s)
expect_status 3
expect_err '^fanyi model fetch: model.t.bin: 127.0.0.1:[0-9]+ is too slow: 16 bytes in 2 s, under the minimum of 1024 bytes/s \(--min-rate\), at 16 of 700001 bytes$'
[ $((t1 - t0)) -le 10 ] && ok || bad "stalled server took $((t1 - t0)) s"

# --- a local mirror (file://) works like a server
D="$FY_TMP/d11"
fetch --mirror "file://$SRV/" --dir "$D" --quiet
expect_status 0
installed_ok "$D"

# --- a disk error while writing (a file size limit stands in for a full disk)
D="$FY_TMP/d13"
(trap '' XFSZ; ulimit -f 200; fetch --mirror "$U/ok/" --dir "$D"; echo "$FY_STATUS" >"$FY_TMP/st")
FY_STATUS=$(cat "$FY_TMP/st")
expect_status 1
expect_err "^fanyi model fetch: model.t.bin: cannot write $FY_TMP/\.fanyi-versions/d13/9\.9-[0-9a-f]{12}\.staging/\.model\.t\.bin\.[0-9a-f]{12}\.part: File too large$"
absent "$D"

# --- a directory that cannot be created
touch "$FY_TMP/plainfile"
fetch --mirror "$U/ok/" --dir "$FY_TMP/plainfile/sub"
expect_status 1
expect_err 'cannot create directory .*plainfile/sub'

finish
