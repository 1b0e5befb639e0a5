#!/usr/bin/env bash
# pdf_screenshots.sh BUILD_DIR - remakes the PDF pictures of the README
# (docs/img/pdf-*.png) from the test PDFs (make_pdfs.py):
#   pdf-translated.png  pages 1 and 2 of report.pdf through `fanyi translate --file`
#                       with the synthetic en->zh model (random weights: nonsense Chinese)
#   pdf-bilingual.png   pages 1 and 2 of the bilingual output: page 1 as it was and
#                       its translation next to it
#   pdf-upper.png       page 1 with every paragraph "translated" into its upper-cased
#                       self (pdf_tool --upper): the layout with words one can read
# Needs poppler-utils (pdftoppm) and python3-pil.
set -euo pipefail
build=$(cd "${1:?usage: pdf_screenshots.sh BUILD_DIR}" && pwd)
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tests/docs/make_pdfs.py "$tmp"
model="$build/models/firefox-en-zh"
"$build/src/fanyi" translate --model "$model" --file "$tmp/report.pdf" -o "$tmp/zh.pdf"
"$build/src/fanyi" translate --model "$model" --file "$tmp/report.pdf" --bilingual \
    -o "$tmp/bi.pdf"
"$build/tests/docs/pdf_tool" write "$tmp/report.pdf" "$tmp/upper.pdf" --target en --upper
pdftoppm -r 80 -f 1 -l 2 -png "$tmp/zh.pdf" "$tmp/zh"
pdftoppm -r 80 -f 1 -l 2 -png "$tmp/bi.pdf" "$tmp/bi"
pdftoppm -r 80 -f 1 -l 1 -png "$tmp/upper.pdf" "$tmp/upper"
pdftoppm -r 80 -f 1 -l 1 -png "$tmp/report.pdf" "$tmp/src"
/usr/bin/python3 - "$tmp" <<'EOF'
import glob, sys
from PIL import Image, ImageOps

tmp = sys.argv[1]


def framed(path):
    return ImageOps.expand(Image.open(path).convert("RGB"), border=1, fill=(160, 160, 160))


def side_by_side(paths, out):
    ims = [framed(p) for p in paths]
    w = sum(i.width for i in ims) + 16 * (len(ims) + 1)
    h = max(i.height for i in ims) + 32
    o = Image.new("RGB", (w, h), (238, 238, 238))
    x = 16
    for i in ims:
        o.paste(i, (x, 16))
        x += i.width + 16
    o.save(out, optimize=True)


side_by_side(sorted(glob.glob(f"{tmp}/zh-*.png")), "docs/img/pdf-translated.png")
side_by_side(sorted(glob.glob(f"{tmp}/bi-*.png")), "docs/img/pdf-bilingual.png")
side_by_side([glob.glob(f"{tmp}/src-*.png")[0], glob.glob(f"{tmp}/upper-*.png")[0]],
             "docs/img/pdf-upper.png")
EOF
ls -l docs/img/pdf-*.png
