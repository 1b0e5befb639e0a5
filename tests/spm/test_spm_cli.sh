#!/usr/bin/env bash
# `fanyi spm`: help, usage errors, load errors and a round trip.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
model="$FANYI_BUILD_DIR/tests/spm/models/nfkc_bf.model"

run "$FANYI_BIN" spm --help
expect_status 0
expect_out '^usage: fanyi spm encode'
for v in encode decode; do
    run "$FANYI_BIN" spm $v --help
    expect_status 0
    expect_out "^usage: fanyi spm $v --vocab FILE"
    run "$FANYI_BIN" spm $v --bogus
    expect_status 2
    expect_err "^fanyi spm $v: unknown option '--bogus'"
    expect_err_lines 1
    run "$FANYI_BIN" spm $v
    expect_status 2
    expect_err "^fanyi spm $v: --vocab FILE is required"
    expect_err_lines 1
    run "$FANYI_BIN" spm $v --vocab
    expect_status 2
    expect_err_lines 1
done
run "$FANYI_BIN" spm encode --vocab "$model" --output-format nbest
expect_status 2
expect_err "format must be id or piece"
expect_err_lines 1
run "$FANYI_BIN" spm decode --vocab "$model" --output-format id
expect_status 2
expect_err_lines 1
run "$FANYI_BIN" spm
expect_status 2
expect_err_lines 1
run "$FANYI_BIN" spm frob
expect_status 2
expect_err "^fanyi spm: unknown command 'frob'"
expect_err_lines 1

# Load errors name the file.
run "$FANYI_BIN" spm encode --vocab "$FY_TMP/missing.spm"
expect_status 1
expect_err "missing.spm"
expect_err_lines 1
: >"$FY_TMP/empty.spm"
run "$FANYI_BIN" spm encode --vocab "$FY_TMP/empty.spm"
expect_status 1
expect_err "empty.spm: empty file"
expect_err_lines 1
head -c 1000 "$model" >"$FY_TMP/cut.spm"
run "$FANYI_BIN" spm decode --vocab "$FY_TMP/cut.spm"
expect_status 1
expect_err "cut.spm: corrupt model"
expect_err_lines 1

# Round trip and a bad id.
printf '今天天气很好。 Hello, world!\n\n  ＡＢＣ１２３  \n' >"$FY_TMP/in.txt"
FY_STDIN="$FY_TMP/in.txt" run "$FANYI_BIN" spm encode --vocab "$model" --output-format id
expect_status 0
expect_out '^[0-9]+( [0-9]+)*$'
cp "$FY_TMP/out" "$FY_TMP/ids.txt"
FY_STDIN="$FY_TMP/ids.txt" run "$FANYI_BIN" spm decode --vocab "$model" --input-format id
expect_status 0
expect_out '^今天天气很好。 Hello, world!$'
expect_out '^ABC123$'
printf '5 999999\n' >"$FY_TMP/bad.txt"
FY_STDIN="$FY_TMP/bad.txt" run "$FANYI_BIN" spm decode --vocab "$model" --input-format id
expect_status 1
expect_err "line 1: .*invalid id 999999"
finish
