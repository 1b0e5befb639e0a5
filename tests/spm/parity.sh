#!/bin/bash
# parity.sh - our SentencePiece against Google's spm_encode / spm_decode.
# For every model the fixture trained and every test file: ids, pieces, the
# decoding of the reference ids and of the reference pieces must be
# byte-identical, line for line. One process per file and format on each
# side; the outputs are compared as files.
set -u
: "${FANYI_SOURCE_DIR:?}" "${FANYI_BUILD_DIR:?}" "${FANYI_BIN:?}"
export LC_ALL=C
models="$FANYI_BUILD_DIR/tests/spm/models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Malformed UTF-8 the reference replaces byte by byte (plus NUL and friends).
bad="$tmp/invalid_utf8.txt"
{
    printf 'lone continuation \x80 and \xbf here\n'
    printf 'truncated 2-byte \xc3 end\n'
    printf 'truncated 3-byte \xe4\xb8 end 中\xe6\n'
    printf 'truncated 4-byte \xf0\x9f\x98 end\n'
    printf 'overlong \xc0\xaf \xc1\xbf \xe0\x80\xaf \xf0\x80\x80\xaf\n'
    printf 'surrogates \xed\xa0\x80 \xed\xbf\xbf \xed\xa0\xbd\xed\xb8\x80\n'
    printf 'beyond U+10FFFF \xf4\x90\x80\x80 \xf7\xbf\xbf\xbf\n'
    printf 'bytes f5-ff \xf5 \xf8\x88\x80\x80\x80 \xfc\x84\x80\x80\x80\x80 \xfe \xff\n'
    printf '\xff\xfe\xfd\n'
    printf '\xe4\xb8\xad\xe6\x96\x87\x80\x80\x80\xe4\xb8\xad\n'
    printf 'NUL \x00 inside\n'
    printf '\x00\n'
    printf '\xef\xbf\xbd literal replacement char\n'
    printf '   \x80   \n'
    printf '\xc3\xa9\xcc\x81\xcc\n'
    printf 'latin-1 caf\xe9 na\xefve\n'
    printf 'gbk \xc4\xe3\xba\xc3\xca\xc0\xbd\xe7\n'
    printf '\xe2\x96\x81\xe2\x96 half meta symbol\n'
    printf 'last line without newline \xe4'
} >"$bad"

files=("$FANYI_SOURCE_DIR/tests/data/text/mixed.txt" "$bad")
wmt="${FANYI_SHARED_DIR:-}/data/wmt"
[ -n "${SPM_PARITY_OWN_ONLY:-}" ] && wmt=/nonexistent
for f in wmt18.zh wmt18.en wmt19.zh wmt19.en; do
    [ -f "$wmt/$f" ] && files+=("$wmt/$f")
done

total_lines=0
total_bad=0
# count_diff A B: number of lines that differ (or exist in only one file).
count_diff() {
    awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
         { if (!(FNR in a) || a[FNR] != $0) d++; m = FNR }
         END { if (n > m) d += n - m; print d + 0 }' "$1" "$2"
}
check() { # check LABEL REF OURS LINES
    local bad_lines=0
    if ! cmp -s "$2" "$3"; then
        bad_lines=$(count_diff "$2" "$3")
        [ "$bad_lines" = 0 ] && bad_lines=1 # differs only in bytes awk cannot see
        echo "MISMATCH $1: $bad_lines lines; first difference:" >&2
        diff "$2" "$3" | head -n 6 >&2
    fi
    total_bad=$((total_bad + bad_lines))
    model_bad=$((model_bad + bad_lines))
}

ran=0
for model in "$models"/*.model; do
    [ -f "$model" ] || continue
    ran=1
    name=$(basename "$model" .model)
    model_lines=0
    model_bad=0
    for f in "${files[@]}"; do
        base=$(basename "$f")
        lines=$(awk 'END { print NR }' "$f")
        model_lines=$((model_lines + lines))
        total_lines=$((total_lines + lines))
        r="$tmp/ref" o="$tmp/our"
        for fmt in id piece; do
            spm_encode --model="$model" --output_format=$fmt <"$f" >"$r.$fmt" ||
                { echo "spm_encode failed on $base" >&2; exit 1; }
            "$FANYI_BIN" spm encode --vocab "$model" --output-format $fmt <"$f" >"$o.$fmt" ||
                echo "fanyi spm encode failed on $base" >&2
            check "$name $base encode $fmt" "$r.$fmt" "$o.$fmt" "$lines"
            spm_decode --model="$model" --input_format=$fmt <"$r.$fmt" >"$r.dec" ||
                { echo "spm_decode failed on $base" >&2; exit 1; }
            "$FANYI_BIN" spm decode --vocab "$model" --input-format $fmt <"$r.$fmt" >"$o.dec" ||
                echo "fanyi spm decode failed on $base" >&2
            check "$name $base decode $fmt" "$r.dec" "$o.dec" "$lines"
        done
    done
    echo "model $name: $model_lines lines compared x4 (ids, pieces, decode ids, decode pieces), $model_bad mismatches"
done
[ "$ran" = 1 ] || { echo "no models in $models (the spm_models fixture did not run?)" >&2; exit 1; }
echo "files: ${files[*]##*/}"
echo "total: $total_lines lines compared x4, $total_bad mismatches"
[ "$total_bad" = 0 ]
