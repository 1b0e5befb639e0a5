#!/usr/bin/env bash
# `fanyi translate --glossary FILE`: a TSV and a CSV glossary (DeepL's
# formats) make every term come out as its target, a keep-as-is term stays,
# a line of terms only is its target (no engine), a document (--file, a term
# split by HTML markup) gets them too, and a bad file is a clear
# error (exit 2) naming the file and the line.
# Usage: test_translate_glossary.sh MODEL_DIR (zh -> en)
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M=$1
T() { "$FANYI_BIN" translate --model "$M" "$@"; }

printf '发电厂\tPower-Station\nFanyi\t\n北京\tBeijing\n' >"$FY_TMP/terms.tsv"
printf '这个发电厂很大。\n北京。\n\nFanyi 用发电厂。\n' >"$FY_TMP/in.txt"
FY_STDIN="$FY_TMP/in.txt" run T --glossary "$FY_TMP/terms.tsv"
expect_status 0
if [ "$(grep -o 'Power-Station' "$FY_TMP/out" | wc -l)" = 2 ]; then ok; else bad "each term once"; fi
if [ "$(sed -n 2p "$FY_TMP/out")" = "Beijing." ]; then ok; else bad "a line of a term only"; fi
if [ "$(sed -n 3p "$FY_TMP/out")" = "" ]; then ok; else bad "the empty line stays"; fi
if sed -n 4p "$FY_TMP/out" | grep -q 'Fanyi'; then ok; else bad "keep as is"; fi
if ! grep -q '发电厂' "$FY_TMP/out"; then ok; else bad "no source term left"; fi

printf 'source,target\n"发电厂","Power, Station"\n' >"$FY_TMP/terms.csv"
FY_STDIN="$FY_TMP/in.txt" run T --glossary "$FY_TMP/terms.csv"
expect_status 0
expect_out 'Power, Station'

printf '发电厂\tA\n发电厂\tB\n' >"$FY_TMP/dup.tsv"
FY_STDIN="$FY_TMP/in.txt" run T --glossary "$FY_TMP/dup.tsv"
expect_status 2
expect_err "dup.tsv: line 2: duplicate source term '发电厂' \(already in entry 1\)"
run T --glossary "$FY_TMP/missing.tsv"
expect_status 2
expect_err 'missing.tsv: No such file or directory'
# A document: the same terms in an HTML file, one split by inline markup.
printf '<p>这个发<b>电</b>厂很大。</p><p>北京。</p>\n' >"$FY_TMP/in.html"
run T --glossary "$FY_TMP/terms.tsv" --file "$FY_TMP/in.html" -o "$FY_TMP/out.html"
expect_status 0
if [ "$(grep -o 'Power-Station' "$FY_TMP/out.html" | wc -l)" = 1 ]; then ok; else bad "--file: the term once"; fi
if grep -q 'Beijing' "$FY_TMP/out.html" && ! grep -q '发\|北京' "$FY_TMP/out.html"; then ok; else
    bad "--file: every term, no source term left"
fi
finish
