#!/usr/bin/env bash
# `fanyi translate` loses no line (issue 24): a line that is not UTF-8 text is
# printed as it came with a warning naming its line and byte, every other
# line is translated as it would be without it, and the exit status is 3;
# with --strict (or at a NUL byte, or a line the pipeline refuses) every
# line before it is printed and the run stops there with status 1.
# Usage: test_translate_lines.sh MODELS_DIR (the synth_models fixture)
. "$FANYI_SOURCE_DIR/tests/lib.sh"
B=$(cd "$1" && pwd)
M="$B/tiny-int8-sl"
T() { "$FANYI_BIN" translate --model "$M" "$@"; }

# 300 good lines, one with the byte 0xff at byte 4, 20 more: the blocks of
# 64 lines put the bad one in the middle of the fifth.
python3 - "$FY_TMP" <<'PY'
import sys
d = sys.argv[1]
good = [f"第{i}句话，今天天气很好。" for i in range(1, 301)]
more = [f"后面的第{i}句。" for i in range(1, 21)]
with open(f"{d}/mixed.txt", "wb") as f:
    f.write("".join(l + "\n" for l in good).encode())
    f.write(b"bad \xff line\n")
    f.write("".join(l + "\n" for l in more).encode())
with open(f"{d}/good.txt", "wb") as f:
    f.write("".join(l + "\n" for l in good + more).encode())
PY
FY_STDIN="$FY_TMP/good.txt" run T
expect_status 0
cp "$FY_TMP/out" "$FY_TMP/good.out"

FY_STDIN="$FY_TMP/mixed.txt" run T
expect_status 3
lines=$(wc -l <"$FY_TMP/out")
[ "$lines" = 321 ] && ok || bad "321 lines expected, got $lines"
if cmp -s <(sed -n 301p "$FY_TMP/out") <(sed -n 301p "$FY_TMP/mixed.txt"); then ok; else bad "line 301 not passed through as it came"; fi
if cmp -s <(sed 301d "$FY_TMP/out") "$FY_TMP/good.out"; then ok; else bad "the other lines are not what they are without the bad one"; fi
expect_err "^fanyi translate: line 301: not UTF-8 text \(byte 4\); passed through untranslated$"
expect_err "^fanyi translate: 1 line \(the first: line 301\) is not UTF-8 text and was passed through untranslated; .*iconv"
expect_err_lines 2

# The same with other block sizes (two threads; a block per line on a
# terminal is not testable here, one line per block with --batch 1).
for opt in "--threads 2" "--batch 1"; do
    FY_STDIN="$FY_TMP/mixed.txt" run T $opt
    expect_status 3
    if cmp -s <(sed 301d "$FY_TMP/out") "$FY_TMP/good.out"; then ok; else bad "$opt: lines differ"; fi
    expect_err "^fanyi translate: line 301: not UTF-8 text \(byte 4\)"
done

# --strict: the 300 lines before it are printed, then it stops there.
FY_STDIN="$FY_TMP/mixed.txt" run T --strict
expect_status 1
if cmp -s "$FY_TMP/out" <(head -n 300 "$FY_TMP/good.out"); then ok; else bad "--strict: the 300 lines before are not all printed"; fi
expect_err "^fanyi translate: line 301: not UTF-8 text \(byte 4\); stopped there \(--strict\)$"
expect_err_lines 1

# Many bad lines (a file in another encoding): ten are named, all counted.
python3 - "$FY_TMP/gbk.txt" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(12):
        f.write("今天天气很好。\n".encode("gb18030"))
        f.write("今天天气很好。\n".encode())
PY
FY_STDIN="$FY_TMP/gbk.txt" run T
expect_status 3
[ "$(wc -l <"$FY_TMP/out")" = 24 ] && ok || bad "24 lines expected"
if cmp -s <(awk 'NR % 2' "$FY_TMP/out") <(awk 'NR % 2' "$FY_TMP/gbk.txt"); then ok; else bad "GB18030 lines changed"; fi
expect_err "^fanyi translate: line 19: not UTF-8 text \(byte 0\); passed through untranslated$"
expect_err "^fanyi translate: more lines are not UTF-8 text; counted at the end$"
expect_err "^fanyi translate: 12 lines \(the first: line 1\) are not UTF-8 text and were passed through untranslated"
expect_err_lines 12

# A long line translated in pieces: the bad byte's line and its offset in
# the line (not in the piece), and the lines around it.
python3 - "$FY_TMP/long.txt" <<'PY'
import sys
s = "今天天气很好。我们去公园散步吧！" * 100
b = s.encode()
with open(sys.argv[1], "wb") as f:
    f.write("第一行。\n".encode() + b[:3000] + b"\xfe" + b[3000:] + b"\n" + "最后一行。\n".encode())
PY
FANYI_TRANSLATE_PIECE=700 FY_STDIN="$FY_TMP/long.txt" run T
expect_status 3
[ "$(wc -l <"$FY_TMP/out")" = 3 ] && ok || bad "3 lines expected"
expect_err "^fanyi translate: line 2: not UTF-8 text \(byte 3000\); passed through untranslated$"
grep -c 'not UTF-8 text (byte' "$FY_TMP/err" | grep -qx 1 && ok || bad "the long line is named once"

# --raw: the same rule.
printf '你好。\n\xc3(\n再见。\n' >"$FY_TMP/raw.txt"
FY_STDIN="$FY_TMP/raw.txt" run T --raw
expect_status 3
[ "$(sed -n 2p "$FY_TMP/out" | od -An -tx1 | tr -d ' \n')" = "c3280a" ] && ok || bad "--raw: bad line changed"
expect_err "^fanyi translate: line 2: not UTF-8 text \(byte 0\)"

# --html: one document, no lines: not UTF-8 text is an error.
printf '<p>\xff</p>\n' >"$FY_TMP/bad.html"
FY_STDIN="$FY_TMP/bad.html" run T --html
expect_status 1
expect_err "^fanyi translate: not UTF-8 text \(byte 3\); convert it to UTF-8$"
expect_empty_out

# A NUL byte stops the run; the lines before it are printed first.
printf '你好。\n再见。\nab\000cd\n后来。\n' >"$FY_TMP/nul.txt"
FY_STDIN="$FY_TMP/nul.txt" run T
expect_status 1
[ "$(wc -l <"$FY_TMP/out")" = 2 ] && ok || bad "the 2 lines before the NUL are not printed"
expect_err "^fanyi translate: line 3: NUL byte at byte 2$"

# A line the pipeline refuses (a language no model translates): the lines
# before it are printed, the message names it.
mkdir -p "$FY_TMP/models"
ln -s "$M" "$FY_TMP/models/zh-en"
ln -s "$B/tiny-de-en" "$FY_TMP/models/de-en"
printf '你好。\n这是一个测试。\nПривет, как у тебя дела сегодня? Всё хорошо.\n再见。\n' >"$FY_TMP/ru.txt"
FY_STDIN="$FY_TMP/ru.txt" run "$FANYI_BIN" translate --models "$FY_TMP/models"
expect_status 1
[ "$(wc -l <"$FY_TMP/out")" = 2 ] && ok || bad "the 2 lines before the Russian one are not printed"
expect_err "^fanyi translate: line 3: the text looks like Russian"

run "$FANYI_BIN" translate --help
expect_out "--strict"
expect_out "3 done, but lines that are not UTF-8 text were passed through"
finish
