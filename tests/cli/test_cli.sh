#!/usr/bin/env bash
# The top-level CLI contract: help, version, unknown commands and options.
. "$FANYI_SOURCE_DIR/tests/lib.sh"

run "$FANYI_BIN" --help
expect_status 0
expect_out '^usage: fanyi <command>'
for c in serve translate model spm bench devices doctor version; do expect_out "^  $c "; done

run "$FANYI_BIN"
expect_status 2
expect_err '^usage: fanyi'
expect_empty_out

run "$FANYI_BIN" version
expect_status 0
expect_out '^fanyi [0-9]+\.[0-9]+\.[0-9]+$'
expect_out '^license AGPL-3.0-or-later: '
expect_out '^kernel (ref|avx2|avxvnni|avx512vnni)$'
expect_out '^supported ref( avx2)?( avxvnni)?( avx512vnni)?$'
run env FANYI_KERNEL=ref "$FANYI_BIN" version
expect_out '^kernel ref$'

run "$FANYI_BIN" --version
expect_status 0
expect_out '^fanyi [0-9]+\.[0-9]+\.[0-9]+$'

run "$FANYI_BIN" version --help
expect_status 0
expect_out '^usage: fanyi version'

run "$FANYI_BIN" frobnicate
expect_status 2
expect_err "^fanyi: unknown command 'frobnicate'"
expect_err_lines 1

run "$FANYI_BIN" --frobnicate
expect_status 2
expect_err "^fanyi: unknown option '--frobnicate'"
expect_err_lines 1

run "$FANYI_BIN" version --bogus
expect_status 2
expect_err "^fanyi version: unknown option '--bogus'"
expect_err_lines 1

run "$FANYI_BIN" version extra
expect_status 2
expect_err "unexpected argument 'extra'"

# Every subcommand answers --help with its own usage and exit status 0, and
# rejects an unknown option with one line and exit status 2.
for c in serve translate model spm bench devices doctor; do
    run "$FANYI_BIN" "$c" --help
    expect_status 0
    expect_out "^usage: fanyi $c"
    run "$FANYI_BIN" "$c" --no-such-option
    expect_status 2
    expect_err "^fanyi $c: unknown option '--no-such-option'"
    expect_err_lines 1
done

# doctor: its usage errors, and a server that is not there (tests/lb/test_doctor.py
# and tests/ui/follow_test.js check a real one, directly and behind nginx).
run "$FANYI_BIN" doctor --from zh
expect_status 2
expect_err "^fanyi doctor: --from and --to go together"
run "$FANYI_BIN" doctor --timeout 0
expect_status 2
expect_err "^fanyi doctor: --timeout expects a whole number from 1 to 3600"
run "$FANYI_BIN" doctor --clients http://127.0.0.1:9/
expect_status 1
expect_out "^FAIL  server +no answer from http://127.0.0.1:9/health: "
expect_out "^0 of 1 checks passed$"

finish
