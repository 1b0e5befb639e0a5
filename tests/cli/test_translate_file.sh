#!/usr/bin/env bash
# `fanyi translate --file` (issue 24): size limits are checked before a byte
# is read, and reported with the file's real size in MiB and the option that
# raises them; an output that exists is kept unless --force (checked before
# any work), and an output is written whole or not at all.
# Usage: test_translate_file.sh MODEL_DIR
. "$FANYI_SOURCE_DIR/tests/lib.sh"
M=$1
T() { "$FANYI_BIN" translate --model "$M" "$@"; }
cd "$FY_TMP" || exit 1

# A valid 21 MB UTF-8 text of 3-byte characters (the reader used to stop
# inside one at 20 MiB and call the file "not UTF-8"): refused by its size.
python3 -c "
import sys
line = ('今天天气很好。' * 40 + '\n').encode()
data = line * (21095624 // len(line))
sys.stdout.buffer.write(data + b'x' * (21095624 - len(data) - 1) + b'\n')" >big.txt
[ "$(stat -c %s big.txt)" = 21095624 ] && ok || bad "big.txt is not 21095624 bytes"
run T --file big.txt
expect_status 1
expect_err "^fanyi translate: big.txt is 20.1 MiB, over the limit of 20 MiB \(--max-document-mb N raises it\)$"
expect_err_lines 1
[ ! -e big.en.txt ] && ok || bad "an output was written"

# Just over a lower limit of the same option: enough decimals to show it.
head -c 1048676 big.txt >mid.txt
run T --file mid.txt --max-document-mb 1
expect_status 1
expect_err "^fanyi translate: mid.txt is 1.0001 MiB, over the limit of 1 MiB \(--max-document-mb N raises it\)$"
# Past the size, the characters: the limit and its option.
run T --file big.txt --max-document-mb 30
expect_status 1
expect_err "^fanyi translate: big.txt: the document has more than 1000000 characters .*\(--max-document-chars N raises it\)$"
# Through a pipe (no size to stat): stopped at the limit all the same.
run T --file <(cat mid.txt) --max-document-mb 1 -o out.txt
expect_status 1
expect_err "is more than 1 MiB, the limit \(--max-document-mb N raises it\)$"
run T --max-document-mb 5
expect_status 2
expect_err "go with --file IN"

# An output that exists is kept unless --force.
printf '今天天气很好。\n\n北京是中国的首都。\n' >small.txt
run T --file small.txt
expect_status 0
expect_err "^fanyi translate: small.txt -> small.en.txt \(zh-en, "
cp small.en.txt first.txt
echo "mine" >small.en.txt
run T --file small.txt
expect_status 1
expect_err "^fanyi translate: small.en.txt exists; give --force to replace it, or -o OUT$"
[ "$(cat small.en.txt)" = mine ] && ok || bad "small.en.txt was overwritten"
run T --file small.txt --force
expect_status 0
cmp -s small.en.txt first.txt && ok || bad "--force did not write the translation"
# -o OUT that exists: refused before the input is even read.
echo "mine" >other.txt
run T --file no-such-file.txt -o other.txt
expect_status 1
expect_err "^fanyi translate: other.txt exists; give --force to replace it, or -o OUT$"
[ "$(cat other.txt)" = mine ] && ok || bad "other.txt was overwritten"
run T --file small.txt -o small.txt --force
expect_status 1
expect_err "small.txt would be overwritten by its translation; give -o OUT"
# The output keeps ordinary permissions; no temporary file is left behind.
run T --file small.txt -o new.txt
expect_status 0
[ "$(stat -c %a new.txt)" = "$(umask -S >/dev/null; touch plain; stat -c %a plain)" ] && ok ||
    bad "new.txt has mode $(stat -c %a new.txt)"
[ -z "$(ls -A | grep '^\.')" ] && ok || bad "left behind: $(ls -A | grep '^\.')"
# A directory where OUT goes: a clear error, nothing else touched.
mkdir ro
chmod 500 ro
if [ "$(id -u)" != 0 ]; then
    run T --file small.txt -o ro/out.txt
    expect_status 1
    expect_err "^fanyi translate: cannot write ro/out.txt: Permission denied$"
fi
run T --file ro
expect_status 1
expect_err "^fanyi translate: cannot read ro: it is a directory$"

# A PDF (tests/docs/make_pdfs.py: three English pages; the tiny en-de
# model): on a terminal (script(1) gives one) the progress counts pages too;
# the summary names them; an output that exists is kept unless --force.
/usr/bin/python3 "$FANYI_SOURCE_DIR/tests/docs/make_pdfs.py" pdf --pages 3 >/dev/null
ENDE="$(dirname "$M")/tiny-en-de"
FANYI_PROGRESS_MS=0 script -qec "'$FANYI_BIN' translate --model '$ENDE' --file pdf/long.pdf" \
    /dev/null >tty.txt </dev/null
grep -aq "long.pdf: [0-9]* of 3 pages, [0-9]* of 42 sentences" tty.txt && ok ||
    bad "no page count in the progress: $(tr '\r' '\n' <tty.txt | head -3)"
grep -aq "long.pdf -> pdf/long.de.pdf (en-de, 3 pages, 21 paragraphs, 42 sentences)" tty.txt && ok ||
    bad "the summary: $(tr '\r' '\n' <tty.txt | tail -2)"
head -c 4 pdf/long.de.pdf | grep -q '%PDF' && ok || bad "long.de.pdf is no PDF"
cp pdf/long.de.pdf kept.pdf
echo "mine" >pdf/long.de.pdf
run "$FANYI_BIN" translate --model "$ENDE" --file pdf/long.pdf
expect_status 1
expect_err "^fanyi translate: pdf/long.de.pdf exists; give --force to replace it, or -o OUT$"
[ "$(cat pdf/long.de.pdf)" = mine ] && ok || bad "long.de.pdf was overwritten"
run "$FANYI_BIN" translate --model "$ENDE" --file pdf/long.pdf --force
expect_status 0
cmp -s pdf/long.de.pdf kept.pdf && ok || bad "--force: not the same translation"
finish
