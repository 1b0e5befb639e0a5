#!/usr/bin/env bash
# `fanyi model fetch` is safe to race and to interrupt: the version store and
# its link (docs/models.md), two fetches into one directory (10 trials, and a
# second one that starts while the first works: --no-wait refuses, the
# default waits), an upgrade killed with SIGKILL at every stage or failing
# with EIO at each rename (the old model or the new one, checked by `fanyi
# model verify`; a plain rerun completes it), a plain model directory turned
# into the link, a user's own link followed, and a running server whose model
# is upgraded under it. Two small loadable de-en models (version 1 and 2,
# same vocabulary) are made here.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/modelmgmt/fetch_lib.sh"
F="$FANYI_BIN"
export FANYI_TEST_FETCH_RETRY_DELAY_MS=50
SERVE_PID=
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; rm -rf "$FY_TMP"' EXIT

SRV="$FY_TMP/srv"
for v in 1 2; do
    "$F" model synth --preset tiny --seed $((v + 2)) --out "$SRV/v$v" --int8 --shortlist \
        --vocab "$FANYI_SOURCE_DIR/tests/fuzz/models/tiny_bf.spm" --name t >/dev/null ||
        { echo "model synth failed"; exit 1; }
    write_manifest "$FY_TMP/m$v.json" de-en "$v.0" "$SRV/v$v" "v$v"
done
cmp -s "$SRV/v1/vocab.t.spm" "$SRV/v2/vocab.t.spm" && ! cmp -s "$SRV/v1/lex.50.50.t.s2t.bin" \
    "$SRV/v2/lex.50.50.t.s2t.bin" || { echo "fixture: versions should share only the vocabulary"; exit 1; }
start_mirror "$SRV" --delay 0.1

fetch() { # fetch VERSION DIR [options]: version VERSION's manifest
    local v=$1 d=$2
    shift 2
    run "$F" model fetch de-en --manifest "$FY_TMP/m$v.json" --dir "$d" "$@"
}
# expect_version DIR N: `fanyi model verify` passes with version N's manifest.
expect_version() {
    if "$F" model verify --manifest "$FY_TMP/m$2.json" "$1" >"$FY_TMP/verify" 2>&1; then
        ok
    else
        bad "$1 is not version $2: $(grep -v '^ok' "$FY_TMP/verify" | head -3)"
    fi
}
# run_killed CMD...: run, for a command expected to die of SIGKILL (its shell's
# "Killed" line goes to $FY_TMP/err, not the test's output).
run_killed() { run bash -c '"$@"; exit $?' _ "$@"; }
fresh() { # fresh NAME: D=$FY_TMP/NAME/de-en with version 1 installed
    D="$FY_TMP/$1/de-en"
    fetch 1 "$D" --mirror "$U/ok/" --quiet
    [ "$FY_STATUS" = 0 ] || bad "setup: version 1 not installed"
}

# --- the layout: the model directory is a link into the store beside it
D="$FY_TMP/layout/de-en"
fetch 1 "$D" --mirror "$U/ok/"
expect_status 0
expect_out "^installed de-en 1\.0 into $D \(3 downloaded, 0 already present\)$"
[[ "$(readlink "$D")" =~ ^\.fanyi-versions/de-en/1\.0-[0-9a-f]{12}\.1$ ]] && ok || bad "layout: $(ls -l "$D")"
tidy "$D"
expect_version "$D" 1
FANYI_MODELS_DIR="$FY_TMP/layout" run "$F" model list
expect_status 0
expect_out "^de-en +ok "
grep -q '^\.fanyi' "$FY_TMP/out" && bad "model list shows the store" || ok
# An upgrade reuses the unchanged vocabulary (a hard link) and retires version 1.
v1=$(readlink "$D")
fetch 2 "$D" --mirror "$U/ok/" --force
expect_status 0
expect_out "^installed de-en 2\.0 into $D \(3 downloaded, 0 already present\)$"
expect_version "$D" 2
tidy "$D"
[ ! -e "$(dirname "$D")/$v1" ] && ok || bad "version 1 was not removed"
fetch 1 "$D" --mirror "$U/ok/"
expect_status 5 # version 2's files are in the way of version 1's
expect_err "de-en/lex.50.50.t.s2t.bin exists but is of the wrong size \(not the manifest's de-en 1\.0\); use --force"
before=$(wc -l <"$LOG")
fetch 1 "$D" --mirror "$U/ok/" --force --quiet
expect_status 0
[ "$(grep -c ' v1/vocab.t.spm ' <(tail -n +$((before + 1)) "$LOG"))" = 1 ] && ok ||
    bad "--force did not download the vocabulary again"
expect_version "$D" 1
tidy "$D"

# --- two fetches started together, 10 trials: one installs, the other waits
# for it and finds the model installed; nothing else is left
for trial in $(seq 10); do
    D="$FY_TMP/race$trial/de-en"
    "$F" model fetch de-en --manifest "$FY_TMP/m1.json" --mirror "$U/delay/" --dir "$D" \
        >"$FY_TMP/a.out" 2>"$FY_TMP/a.err" &
    A=$!
    "$F" model fetch de-en --manifest "$FY_TMP/m1.json" --mirror "$U/delay/" --dir "$D" \
        >"$FY_TMP/b.out" 2>"$FY_TMP/b.err" &
    B=$!
    wait $A
    sa=$?
    wait $B
    sb=$?
    FY_LAST="race trial $trial"
    [ "$sa$sb" = 00 ] && ok || bad "exit status $sa and $sb: $(cat "$FY_TMP/a.err" "$FY_TMP/b.err")"
    [ "$(cat "$FY_TMP/a.out" "$FY_TMP/b.out" | grep -c "^installed de-en 1\.0 into $D (3 downloaded")" = 1 ] &&
        [ "$(cat "$FY_TMP/a.out" "$FY_TMP/b.out" | grep -c "^de-en 1\.0 is already installed in $D")" = 1 ] &&
        ok || bad "not one install and one 'already installed': $(cat "$FY_TMP/a.out" "$FY_TMP/b.out")"
    expect_version "$D" 1
    tidy "$D"
done

# --- a fetch that starts while another works on the directory: --no-wait
# refuses at once, naming its pid; by default it waits (bounded by
# --max-time), then finds the model installed; the first is not disturbed
D="$FY_TMP/wait/de-en"
before=$(wc -l <"$LOG")
"$F" model fetch de-en --manifest "$FY_TMP/m1.json" --mirror "$U/hold/" --dir "$D" --quiet \
    >"$FY_TMP/bg.out" 2>"$FY_TMP/bg.err" &
BG=$!
wait_requests "$before" || bad "the first fetch made no request"
fetch 1 "$D" --mirror "$U/ok/" --no-wait
expect_status 1
expect_err "^fanyi model fetch: another fetch \(pid $BG\) is installing into $D; wait for it to finish, or run without --no-wait to wait for it$"
t0=$(date +%s)
fetch 1 "$D" --mirror "$U/ok/" --max-time 1
expect_status 1
expect_err "^fanyi model fetch: another fetch \(pid $BG\) is still installing into $D; gave up waiting for it \(--max-time\)$"
[ $(($(date +%s) - t0)) -le 3 ] && ok || bad "--max-time 1 waited $(($(date +%s) - t0)) s"
fetch 1 "$D" --mirror "$U/ok/"
expect_status 0
expect_err "^waiting for another fetch \(pid $BG\) installing into $D$"
expect_out "^de-en 1\.0 is already installed in $D"
wait $BG
st=$?
FY_LAST="the first fetch"
[ "$st" = 0 ] && grep -q "^installed de-en 1\.0 into $D" "$FY_TMP/bg.out" && ok ||
    bad "the first fetch: status $st: $(cat "$FY_TMP/bg.err")"
expect_version "$D" 1
tidy "$D"

# --- an upgrade killed with SIGKILL at each stage leaves version 1 (before the
# switch) or version 2 (after it); a plain rerun, without --force, completes it
for stage in downloaded staged committed switched; do
    fresh "kill-$stage"
    run_killed env FANYI_TEST_FETCH_KILL=$stage "$F" model fetch de-en --manifest "$FY_TMP/m2.json" \
        --mirror "$U/ok/" --dir "$D" --force --quiet
    expect_status 137
    if [ $stage = switched ]; then expect_version "$D" 2; else expect_version "$D" 1; fi
    fetch 2 "$D" --mirror "$U/ok/"
    expect_status 0
    case $stage in
    downloaded) # the shortlist was in the staging directory; the vocabulary is version 1's
        expect_out "^installed de-en 2\.0 into $D \(2 downloaded, 1 already present\)$" ;;
    staged) expect_out "^installed de-en 2\.0 into $D \(3 downloaded, 0 already present\)$" ;;
    committed)
        expect_out "^installed de-en 2\.0 into $D \(3 downloaded, 0 already present\)$"
        expect_err "^completing the install of de-en 2\.0 that an interrupted fetch left in $(store_of "$D")/2\.0-[0-9a-f]{12}\.1$"
        ;;
    switched) expect_out "^de-en 2\.0 is already installed in $D" ;;
    esac
    expect_version "$D" 2
    tidy "$D"
done

# Killed from outside in the middle of a transfer: the same; the rerun resumes.
fresh kill-transfer
before=$(wc -l <"$LOG")
"$F" model fetch de-en --manifest "$FY_TMP/m2.json" --mirror "$U/slow/" --dir "$D" --force --quiet &
BG=$!
wait_requests "$before" || bad "the fetch made no request"
for _ in $(seq 200); do # until its partial file holds data (at most 10 s)
    p=$(part_of "$D" lex.50.50.t.s2t.bin)
    [ -n "$p" ] && [ "$(size "$p")" -gt 0 ] && break
    sleep 0.05
done
kill -KILL $BG
wait $BG 2>/dev/null # (background: the shell reports no "Killed" line)
expect_version "$D" 1
fetch 2 "$D" --mirror "$U/ok/"
expect_status 0
expect_err "^lex\.50\.50\.t\.s2t\.bin: resuming a previous download at [1-9][0-9]* of $(size "$SRV/v2/lex.50.50.t.s2t.bin") bytes$"
expect_version "$D" 2
tidy "$D"

# --- an upgrade failing (EIO) at either rename changes nothing; a rerun completes it
for stage in commit switch; do
    fresh "fail-$stage"
    run env FANYI_TEST_FETCH_FAIL=$stage "$F" model fetch de-en --manifest "$FY_TMP/m2.json" \
        --mirror "$U/ok/" --dir "$D" --force --quiet
    expect_status 1
    if [ $stage = commit ]; then
        expect_err "^fanyi model fetch: cannot rename $(store_of "$D")/2\.0-[0-9a-f]{12}\.staging to 2\.0-[0-9a-f]{12}\.1: Input/output error$"
    else
        expect_err "^fanyi model fetch: cannot switch $D to $(store_of "$D")/2\.0-[0-9a-f]{12}\.1: Input/output error$"
    fi
    expect_version "$D" 1
    fetch 2 "$D" --mirror "$U/ok/"
    expect_status 0
    expect_out "^installed de-en 2\.0 into $D"
    expect_version "$D" 2
    tidy "$D"
done

# --- a plain model directory (copied by hand, or from an older fanyi): left as
# it is while it is good; an upgrade exchanges it for the link in one rename
# (killed right after it, version 2 is there); files that are not the model's
# are kept in retired.1
D="$FY_TMP/plain/de-en"
mkdir -p "$D"
cp "$SRV/v1/"* "$D/"
echo "my notes" >"$D/NOTES.txt"
fetch 1 "$D" --mirror "$U/ok/"
expect_status 0
expect_out "^de-en 1\.0 is already installed in $D"
[ -d "$D" ] && [ ! -L "$D" ] && [ ! -e "$(store_of "$D")" ] && ok || bad "the plain directory was changed"
run_killed env FANYI_TEST_FETCH_KILL=switched "$F" model fetch de-en --manifest "$FY_TMP/m2.json" \
    --mirror "$U/ok/" --dir "$D" --force --quiet
expect_status 137
[ -L "$D" ] && ok || bad "$D is not the link"
expect_version "$D" 2
fetch 2 "$D" --mirror "$U/ok/"
expect_status 0
expect_err "^kept the other files of a replaced $D in $(store_of "$D")/retired\.1$"
[ "$(ls -A "$(store_of "$D")/retired.1")" = NOTES.txt ] && ok || bad "retired.1: $(ls -A "$(store_of "$D")/retired.1")"
expect_version "$D" 2
tidy "$D"

# --- a model directory that is the user's own link: fetch installs where it points
mkdir -p "$FY_TMP/ulink" "$FY_TMP/data"
ln -s "$FY_TMP/data/de-en" "$FY_TMP/ulink/de-en"
fetch 1 "$FY_TMP/ulink/de-en" --mirror "$U/ok/" --quiet
expect_status 0
[ "$(readlink "$FY_TMP/ulink/de-en")" = "$FY_TMP/data/de-en" ] && ok || bad "the user's link was replaced"
tidy "$FY_TMP/data/de-en"
expect_version "$FY_TMP/ulink/de-en" 1

# --- a running server keeps answering while its model is upgraded under it
fresh serve
"$F" serve --models "$FY_TMP/serve" --port 0 --threads 1 --quiet >"$FY_TMP/serve.out" \
    2>"$FY_TMP/serve.err" &
SERVE_PID=$!
for _ in $(seq 200); do grep -q 'listening on' "$FY_TMP/serve.out" && break; sleep 0.05; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\) models=.*/\1/p' "$FY_TMP/serve.out")
translate() {
    curl -s -m 10 -o "$FY_TMP/tr.json" -w '%{http_code}' "http://127.0.0.1:$port/translate" \
        -H 'Content-Type: application/json' -d '{"text": "Hallo Welt.", "source": "de", "target": "en"}'
}
FY_LAST="serve before the upgrade"
[ "$(translate)" = 200 ] && ok || bad "no translation: $(cat "$FY_TMP/tr.json" "$FY_TMP/serve.err")"
fetch 2 "$D" --mirror "$U/ok/" --force --quiet
expect_status 0
tidy "$D" # version 1's files are gone from the disk while the server has them mapped
FY_LAST="serve after the upgrade"
for _ in 1 2 3; do
    [ "$(translate)" = 200 ] && ok || bad "no translation: $(cat "$FY_TMP/tr.json" "$FY_TMP/serve.err")"
done
kill "$SERVE_PID"
wait "$SERVE_PID"
SERVE_PID=

finish
