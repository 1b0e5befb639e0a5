# lib.sh - tiny assertion helpers for shell tests run by CTest.
# Usage: . "$FANYI_SOURCE_DIR/tests/lib.sh"; run CMD...; expect_status N; expect_out PATTERN; finish
set -u
: "${FANYI_BIN:?FANYI_BIN must point at the fanyi binary}"
FY_PASS=0
FY_FAIL=0
FY_TMP=$(mktemp -d)
trap 'rm -rf "$FY_TMP"' EXIT

# run CMD...: runs a command with stdin from /dev/null unless FY_STDIN names a file.
run() {
    FY_LAST="$*"
    "$@" <"${FY_STDIN:-/dev/null}" >"$FY_TMP/out" 2>"$FY_TMP/err"
    FY_STATUS=$?
}
ok() { FY_PASS=$((FY_PASS + 1)); }
bad() {
    FY_FAIL=$((FY_FAIL + 1))
    echo "FAIL: $FY_LAST: $*" >&2
    echo "  stdout: $(head -c 400 "$FY_TMP/out")" >&2
    echo "  stderr: $(head -c 400 "$FY_TMP/err")" >&2
}
expect_status() { if [ "$FY_STATUS" = "$1" ]; then ok; else bad "exit status $FY_STATUS, expected $1"; fi; }
expect_out() { if grep -Eq -- "$1" "$FY_TMP/out"; then ok; else bad "stdout lacks /$1/"; fi; }
expect_err() { if grep -Eq -- "$1" "$FY_TMP/err"; then ok; else bad "stderr lacks /$1/"; fi; }
expect_err_lines() {
    local n; n=$(wc -l <"$FY_TMP/err")
    if [ "$n" = "$1" ]; then ok; else bad "stderr has $n lines, expected $1"; fi
}
expect_empty_out() { if [ ! -s "$FY_TMP/out" ]; then ok; else bad "stdout not empty"; fi; }
finish() {
    echo "$FY_PASS passed, $FY_FAIL failed"
    [ "$FY_FAIL" = 0 ]
}
