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
finish
