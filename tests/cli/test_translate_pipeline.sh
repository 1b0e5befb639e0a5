#!/usr/bin/env bash
# `fanyi translate` without --raw: the text pipeline around the engine.
# Usage: test_translate_pipeline.sh MODEL_DIR
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M=$1
T() { "$FANYI_BIN" translate --model "$M" "$@"; }

# Line structure survives: one output line per input line, blank lines kept,
# leading indentation kept, a line without Chinese passes through untouched.
printf '今天天气很好。我们去公园散步吧！\n\n    上海是中国最大的城市。\nHello, world.\n\n' >"$FY_TMP/in.txt"
FY_STDIN="$FY_TMP/in.txt" run T
expect_status 0
lines=$(wc -l <"$FY_TMP/out")
if [ "$lines" = 5 ]; then ok; else bad "5 output lines expected, got $lines"; fi
if [ "$(sed -n 2p "$FY_TMP/out")" = "" ] && [ "$(sed -n 5p "$FY_TMP/out")" = "" ]; then ok; else bad "blank lines not kept"; fi
if sed -n 3p "$FY_TMP/out" | grep -q '^    [^ ]'; then ok; else bad "indentation not kept"; fi
if [ "$(sed -n 4p "$FY_TMP/out")" = "Hello, world." ]; then ok; else bad "English line changed"; fi

# Each sentence is translated as the engine translates it on its own (the
# clean-up may then shorten degenerate repetition: compare the first word).
printf '上海是中国最大的城市。\n' >"$FY_TMP/one.txt"
FY_STDIN="$FY_TMP/one.txt" run "$FANYI_BIN" translate --raw --model "$M"
raw=$(awk '{print $1; exit}' "$FY_TMP/out")
# (An empty one is in every line: the sentence must translate to something.)
if [ -n "$raw" ]; then ok; else bad "the --raw translation is empty: pick a sentence with visible output"; fi
FY_STDIN="$FY_TMP/in.txt" run T
if sed -n 3p "$FY_TMP/out" | grep -Fq -- "$raw"; then ok; else bad "pipeline sentence differs from --raw"; fi

# Protected spans: a URL and an e-mail address come through unchanged.
printf '请访问 https://example.com/a?b=1 或发邮件到 help@example.org 联系我们。\n' >"$FY_TMP/url.txt"
FY_STDIN="$FY_TMP/url.txt" run T
expect_status 0
expect_out 'https://example\.com/a\?b=1'
expect_out 'help@example\.org'

# HTML: markup, comments and <pre> content are kept; the output is one document.
printf '<p>今天<b>天气</b>很好。</p>\n<!-- 注释 -->\n<pre>代码 不翻译</pre>\n' >"$FY_TMP/doc.html"
FY_STDIN="$FY_TMP/doc.html" run T --html
expect_status 0
expect_out '^<p>.*<b>.*</b>.*</p>$'
expect_out '^<!-- 注释 -->$'
expect_out '^<pre>代码 不翻译</pre>$'

# Invalid UTF-8 is passed through with a warning naming the line, never a
# crash (tests/cli/test_translate_lines.sh has the rest).
printf '第一行。\n\xff\xfe坏\n' >"$FY_TMP/bad.txt"
FY_STDIN="$FY_TMP/bad.txt" run T
expect_status 3
expect_err "^fanyi translate: line 2: not UTF-8 text \(byte 0\); passed through untranslated$"

run T --raw --html
expect_status 2
expect_err "exclude each other"

finish
