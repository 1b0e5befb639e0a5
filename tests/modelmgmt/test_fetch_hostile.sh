#!/usr/bin/env bash
# `fanyi model fetch` against attacks on the disk and hostile mirrors: links
# and hard links planted where fetch writes (refused, nothing outside is
# written, nothing installed), the free-space check with a partial download
# on disk (FANYI_TEST_FETCH_FREE_BYTES fakes the free space), and mirrors that
# never answer, drip, stall or drop after 1 KiB every time, are slow past
# --max-time, or send too much: each ends with its own message and status,
# in bounded time and requests.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
. "$FANYI_SOURCE_DIR/tests/modelmgmt/fetch_lib.sh"
F="$FANYI_BIN"
export FANYI_TEST_FETCH_RETRY_DELAY_MS=50

absent() { [ ! -e "$1" ] && [ ! -L "$1" ] && ok || bad "$1 should not exist"; }
unchanged() { # unchanged FILE COPY
    cmp -s "$1" "$2" && ok || bad "$1 was written to"
}
requests() { tail -n +$((BEFORE + 1)) "$LOG" | grep -c "^$1 "; }
elapsed() { echo $(($(date +%s) - T0)); }

SRV="$FY_TMP/srv"
mkdir -p "$SRV/m"
head -c 700001 /dev/urandom >"$SRV/m/model.t.bin"
head -c 90017 /dev/urandom >"$SRV/m/lex.t.s2t.bin"
head -c 13009 /dev/urandom >"$SRV/m/vocab.t.spm"
M="$FY_TMP/m.json"
write_manifest "$M" zh-en 9.9 "$SRV/m" m model.t.bin lex.t.s2t.bin vocab.t.spm
start_mirror "$SRV"
fetch() { run "$F" model fetch --manifest "$M" "$@"; }
# leave_part D: a fetch cut at 350000 of model.t.bin's 700001 bytes (its part stays).
leave_part() {
    fetch --mirror "$U/cutalways/" --dir "$1" --retries 0 --quiet
    [ "$FY_STATUS" = 3 ] && [ "$(size "$(part_of "$1" model.t.bin)")" = 350000 ] || bad "setup: no part"
}
echo "precious" >"$FY_TMP/precious"
cp "$FY_TMP/precious" "$FY_TMP/precious.orig"

# --- a link planted at the partial download's path is refused, never followed:
# to an existing file (would be appended to), to a missing one (would be created)
for target in "$FY_TMP/precious" "$FY_TMP/created-outside"; do
    D="$FY_TMP/link-$(basename "$target")/zh-en"
    leave_part "$D"
    part=$(part_of "$D" model.t.bin)
    rm "$part"
    ln -s "$target" "$part"
    fetch --mirror "$U/ok/" --dir "$D"
    expect_status 1
    expect_err "^fanyi model fetch: model.t.bin: $part is a symbolic link; refusing to follow it \(remove it and run fetch again\)$"
    absent "$D"
done
unchanged "$FY_TMP/precious" "$FY_TMP/precious.orig"
absent "$FY_TMP/created-outside"

# A hard link to a file elsewhere at that path: refused as well.
D="$FY_TMP/hardlink/zh-en"
leave_part "$D"
part=$(part_of "$D" model.t.bin)
rm "$part"
ln "$FY_TMP/precious" "$part"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 1
expect_err "^fanyi model fetch: model.t.bin: $part is a file with other hard links; refusing to write to it"
unchanged "$FY_TMP/precious" "$FY_TMP/precious.orig"
absent "$D"

# A link at a downloaded file's name in the staging directory: refused.
D="$FY_TMP/staged-link/zh-en"
leave_part "$D"
ln -s "$FY_TMP/precious" "$(staging_of "$D")/lex.t.s2t.bin"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 1
expect_err "^fanyi model fetch: $(staging_of "$D")/lex.t.s2t.bin is not a regular file \(a symbolic link\?\); refusing to use it"
unchanged "$FY_TMP/precious" "$FY_TMP/precious.orig"

# The staging directory, or the store itself, replaced by a link to a directory elsewhere.
mkdir "$FY_TMP/elsewhere"
D="$FY_TMP/staging-link/zh-en"
leave_part "$D"
st=$(staging_of "$D")
mv "$st" "$FY_TMP/moved-staging"
ln -s "$FY_TMP/elsewhere" "$st"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 1
expect_err "^fanyi model fetch: $st is not a directory \(a symbolic link\?\); refusing to use it$"
D="$FY_TMP/store-link/zh-en"
mkdir -p "$FY_TMP/store-link"
ln -s "$FY_TMP/elsewhere" "$FY_TMP/store-link/.fanyi-versions"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 1
expect_err "^fanyi model fetch: $FY_TMP/store-link/\.fanyi-versions is not a directory \(a symbolic link\?\); refusing to use it$"
[ -z "$(ls -A "$FY_TMP/elsewhere")" ] && ok || bad "written elsewhere: $(ls -A "$FY_TMP/elsewhere")"
absent "$D"

# A plain model directory with a link at the old partial path (fanyi before
# the version store wrote there): fetch does not use it, installs regular
# files, and removes the link with the replaced directory.
D="$FY_TMP/plain-link/zh-en"
mkdir -p "$D"
ln -s "$FY_TMP/precious" "$D/.model.t.bin.$(sha "$SRV/m/model.t.bin" | cut -c1-12).part"
fetch --mirror "$U/ok/" --dir "$D" --quiet
expect_status 0
unchanged "$FY_TMP/precious" "$FY_TMP/precious.orig"
for n in model.t.bin lex.t.s2t.bin vocab.t.spm; do
    [ -f "$D/$n" ] && [ ! -L "$D/$n" ] && cmp -s "$SRV/m/$n" "$D/$n" && ok || bad "$D/$n: $(ls -l "$D/$n")"
done
tidy "$D"

# An installed file replaced by a link (to a file with the right bytes): in the
# way (status 5); --force installs a regular file and leaves the target alone.
ln -sf "$SRV/m/vocab.t.spm" "$D/vocab.t.spm"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 5
expect_err "vocab.t.spm exists but is not a regular file \(a symbolic link\?\) \(not the manifest's zh-en 9\.9\); use --force"
fetch --mirror "$U/ok/" --dir "$D" --force --quiet
expect_status 0
[ -f "$D/vocab.t.spm" ] && [ ! -L "$D/vocab.t.spm" ] && [ -f "$SRV/m/vocab.t.spm" ] && ok || bad "vocab.t.spm"
tidy "$D"

# A link of fetch's renamed by hand is the user's own link, to a version:
# fetch does not install into a version.
mv "$D" "$FY_TMP/plain-link/renamed"
fetch --mirror "$U/ok/" --dir "$FY_TMP/plain-link/renamed"
expect_status 1
expect_err "^fanyi model fetch: $FY_TMP/plain-link/renamed is inside a version store \($FY_TMP/plain-link/\.fanyi-versions/zh-en/9\.9-[0-9a-f]{12}\.[0-9]+\); fetch into the model directory that links to it$"
mv "$FY_TMP/plain-link/renamed" "$D"

# --- free space: what a partial download holds is not needed again
# (350000 of 700001 bytes on disk: 350001 + 90017 + 13009 = 453027 still needed)
D="$FY_TMP/space/zh-en"
leave_part "$D"
run env FANYI_TEST_FETCH_FREE_BYTES=453026 "$F" model fetch --manifest "$M" --mirror "$U/ok/" --dir "$D"
expect_status 1
expect_err "^fanyi model fetch: not enough space in $D: the download needs 453027 bytes \(0\.4 MiB\) more, 453026 bytes \(0\.4 MiB\) free$"
run env FANYI_TEST_FETCH_FREE_BYTES=453027 "$F" model fetch --manifest "$M" --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_err "model.t.bin: resuming a previous download at 350000 of 700001 bytes"
tidy "$D"

# --- a mirror that never answers: ended after --timeout, retried, then given up
BEFORE=$(wc -l <"$LOG")
T0=$(date +%s)
fetch --mirror "$U/mute/" --dir "$FY_TMP/mute" --timeout 1 --retries 1
expect_status 3
expect_err "^model.t.bin: 127.0.0.1:[0-9]+ stopped sending data \(nothing for 1 s\) at 0 of 700001 bytes; resuming at 0 bytes \(retry 1 of 1\)$"
expect_err "^fanyi model fetch: model.t.bin: 127.0.0.1:[0-9]+ stopped sending data \(nothing for 1 s\) at 0 of 700001 bytes$"
[ "$(requests mute)" = 2 ] && ok || bad "$(requests mute) requests to the mute mirror"
[ "$(elapsed)" -le 6 ] && ok || bad "took $(elapsed) s"

# --- a mirror dripping 2 bytes/s: under --min-rate; every request that ends so
# is no progress, so the retries run out (before: an ETA of days)
BEFORE=$(wc -l <"$LOG")
T0=$(date +%s)
fetch --mirror "$U/drip/" --dir "$FY_TMP/drip" --timeout 1 --min-rate 1000 --retries 2
expect_status 3
expect_err "^fanyi model fetch: model.t.bin: 127.0.0.1:[0-9]+ is too slow: [0-9] bytes in 1 s, under the minimum of 1000 bytes/s \(--min-rate\), at [0-9]+ of 700001 bytes$"
expect_err "resuming at [0-9]+ bytes \(retry 2 of 2\)$"
[ "$(requests drip)" = 3 ] && ok || bad "$(requests drip) requests to the dripping mirror"
[ "$(elapsed)" -le 8 ] && ok || bad "took $(elapsed) s"

# --- 1 KiB then a stall, every time: the same (each request brings 1 KiB,
# which used to reset the retries: it looped for ever)
BEFORE=$(wc -l <"$LOG")
T0=$(date +%s)
fetch --mirror "$U/stall1k/" --dir "$FY_TMP/stall1k" --timeout 1 --retries 3
expect_status 3
expect_err "^fanyi model fetch: model.t.bin: 127.0.0.1:[0-9]+ is too slow: 1024 bytes in 1 s, under the minimum of 1024 bytes/s \(--min-rate\), at 4096 of 700001 bytes$"
[ "$(requests stall1k)" = 4 ] && ok || bad "$(requests stall1k) requests to the stalling mirror"
[ "$(elapsed)" -le 10 ] && ok || bad "took $(elapsed) s"

# --- 1 KiB then a dropped connection, every time: progress each time, so only
# --max-attempts ends it
BEFORE=$(wc -l <"$LOG")
T0=$(date +%s)
fetch --mirror "$U/drop1k/" --dir "$FY_TMP/drop1k" --retries 2 --max-attempts 6
expect_status 3
expect_err "^fanyi model fetch: model.t.bin: download from 127.0.0.1:[0-9]+ failed at 6144 of 700001 bytes: .*; gave up after 6 requests \(--max-attempts\)$"
[ "$(requests drop1k)" = 6 ] && ok || bad "$(requests drop1k) requests to the dropping mirror"
[ "$(elapsed)" -le 5 ] && ok || bad "took $(elapsed) s"

# --- fast enough but too long: --max-time ends the whole fetch; a rerun resumes
D="$FY_TMP/maxtime/zh-en"
T0=$(date +%s)
fetch --mirror "$U/slow/" --dir "$D" --max-time 2
expect_status 3
expect_err "^fanyi model fetch: model.t.bin: the fetch took longer than 2 s \(--max-time\), at [0-9]+ of 700001 bytes; run it again to resume$"
[ "$(elapsed)" -le 4 ] && ok || bad "took $(elapsed) s"
fetch --mirror "$U/ok/" --dir "$D"
expect_status 0
expect_err "model.t.bin: resuming a previous download at [1-9][0-9]* of 700001 bytes"
tidy "$D"

# --- more bytes than the file has, without a length: stopped at the size
fetch --mirror "$U/toolong/" --dir "$FY_TMP/toolong"
expect_status 4
expect_err "^fanyi model fetch: model.t.bin: size mismatch: the server sent more than 700001 bytes \(nothing installed\)$"
absent "$FY_TMP/toolong"

# --- a models root fetch may not write to (as another user): the installed
# model is still checked; anything else fails with the reason
RO="$FY_TMP/ro"
mkdir -p "$RO/zh-en"
cp "$SRV/m/"* "$RO/zh-en/"
chmod 755 "$FY_TMP"
chmod a-w "$RO"
as_reader() {
    if [ "$(id -u)" != 0 ]; then "$@"; else setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; fi
}
if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
    run as_reader "$F" model fetch --manifest "$M" --mirror "$U/ok/" --dir "$RO/zh-en"
    expect_status 0
    expect_out "^zh-en 9\.9 is already installed in $RO/zh-en"
    chmod u+w "$RO" && rm "$RO/zh-en/vocab.t.spm" && chmod a-w "$RO"
    run as_reader "$F" model fetch --manifest "$M" --mirror "$U/ok/" --dir "$RO/zh-en"
    expect_status 1
    expect_err "^fanyi model fetch: cannot create directory $RO/\.fanyi-versions: Permission denied$"
    absent "$RO/.fanyi-versions"
else
    echo "note: running as root without setpriv: the read-only models root is not checked"
fi
chmod u+w "$RO"

# --- the limits are checked as options
for o in "--min-rate 0" "--max-attempts 0" "--max-time 0" "--timeout 0"; do
    # shellcheck disable=SC2086
    run "$F" model fetch --manifest "$M" $o
    expect_status 2
    expect_err "^fanyi model fetch: ${o% *}"
done

finish
