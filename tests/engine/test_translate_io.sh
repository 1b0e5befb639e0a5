#!/usr/bin/env bash
# test_translate_io.sh - `fanyi translate` never fails silently and keeps
# memory bounded (issue 18): a NUL in the input is an error naming the line
# and byte, write errors (closed stdout, a full disk, a reader that went
# away with SIGPIPE ignored) end it with a message and a non-zero status,
# and a line longer than a piece is translated in pieces with the same
# result as whole (FANYI_TRANSLATE_PIECE makes pieces small), a 50 MB line
# within a few MB more than an empty run.
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M="$FANYI_BUILD_DIR/models"
ZE="$M/tiny-int8-sl"
EZ="$M/firefox-en-zh"

# NUL bytes: inside a line, at its start, 1 MB of them.
printf '你好。\nab\000cd\n' >"$FY_TMP/nul.txt"
FY_STDIN="$FY_TMP/nul.txt" run "$FANYI_BIN" translate --model "$ZE"
expect_status 1
expect_err '^fanyi translate: line 2: NUL byte at byte 2$'
printf '\000你好\n' >"$FY_TMP/nul0.txt"
FY_STDIN="$FY_TMP/nul0.txt" run "$FANYI_BIN" translate --model "$ZE"
expect_status 1
expect_err 'line 1: NUL byte at byte 0'
head -c 1000000 /dev/zero >"$FY_TMP/zero.bin"
FY_STDIN="$FY_TMP/zero.bin" run "$FANYI_BIN" translate --model "$ZE"
expect_status 1
expect_err 'NUL byte at byte 0'
expect_empty_out

# Write errors.
echo '你好。' >"$FY_TMP/one.txt"
"$FANYI_BIN" translate --model "$ZE" <"$FY_TMP/one.txt" >&- 2>"$FY_TMP/err"
FY_STATUS=$? FY_LAST="translate >&-"
expect_status 1
expect_err 'write error: Bad file descriptor'
"$FANYI_BIN" translate --model "$ZE" <"$FY_TMP/one.txt" >/dev/full 2>"$FY_TMP/err"
FY_STATUS=$? FY_LAST="translate >/dev/full"
expect_status 1
expect_err 'write error: No space left on device'
for i in $(seq 3000); do echo "第${i}句话。"; done >"$FY_TMP/many.txt"
(
    trap '' PIPE
    "$FANYI_BIN" translate --model "$ZE" <"$FY_TMP/many.txt" 2>"$FY_TMP/err" | head -c 1 >/dev/null
    echo "${PIPESTATUS[0]}" >"$FY_TMP/status"
)
FY_STATUS=$(cat "$FY_TMP/status") FY_LAST="translate | head -c 1, SIGPIPE ignored"
expect_status 1
expect_err 'write error: Broken pipe'

# A long line in pieces gives what it gives whole: Chinese (cut where the
# splitter ends a sentence, after 。！？) and English (at the white space
# after a sentence), plus a line after it.
python3 - "$FY_TMP" <<'PY'
import random, sys
random.seed(7)
zh = ["今天", "天气", "很好", "我们", "公园", "这本书", "已经", "看了", "三遍", "每次", "收获"]
en = ["the", "weather", "is", "nice", "today", "we", "walk", "in", "the", "park", "again"]
cap = lambda w: w[0].upper() + w[1:]
line = "".join("".join(random.choice(zh) for _ in range(random.randint(3, 8))) +
               random.choice("。！？，") for _ in range(250))
open(sys.argv[1] + "/long_zh.txt", "w").write(line + "\n第二行。\n")
line = " ".join(cap(" ".join(random.choice(en) for _ in range(random.randint(3, 8)))) +
                random.choice([".", "!", "?", ", and", ":"]) for _ in range(250))
open(sys.argv[1] + "/long_en.txt", "w").write(line + "\nThe second line.\n")
PY
for case in "zh $ZE" "en $EZ"; do
    set -- $case
    FY_STDIN="$FY_TMP/long_$1.txt" run "$FANYI_BIN" translate --model "$2"
    expect_status 0
    cp "$FY_TMP/out" "$FY_TMP/whole.txt"
    FANYI_TRANSLATE_PIECE=700 FY_STDIN="$FY_TMP/long_$1.txt" run "$FANYI_BIN" translate --model "$2" --min-gap
    expect_status 0
    if [ "$(wc -l <"$FY_TMP/out")" = 2 ]; then ok; else bad "$1: two lines out"; fi
    if [ "$(cut -f1 "$FY_TMP/out")" = "$(cat "$FY_TMP/whole.txt")" ]; then ok; else bad "$1: pieces differ from the whole line"; fi
done

# Memory: a 50 MB line (nothing to translate in it, so it is quick) takes
# a few MB more than no input at all, not a multiple of the line.
python3 -c "import sys; sys.stdout.write('12345 67890, ' * 4000000 + '\n')" >"$FY_TMP/big.txt"
# ASan's quarantine keeps up to 256 MB of freed memory: off, to measure ours.
peak() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" /usr/bin/time -f %M "$FANYI_BIN" translate --model "$ZE" <"$1" 2>&1 >"$FY_TMP/big.out" | tail -n 1; }
base=$(peak /dev/null)
big=$(peak "$FY_TMP/big.txt")
if cmp -s "$FY_TMP/big.txt" "$FY_TMP/big.out"; then ok; else bad "the 50 MB line did not come back"; fi
if [ $((big - base)) -lt 32768 ]; then ok; else bad "a 50 MB line took $((big - base)) KiB more than no input"; fi
echo "peak RSS: no input ${base} KiB, a 50 MB line ${big} KiB"
finish
