"""test_pdf.py - PDF in, PDF out: generated PDFs (make_pdfs.py) read into
paragraphs, written back with translations given (pdf_tool), with the
synthetic models (`fanyi translate --file`) and through a real `fanyi serve`
(/translate_file, compared with POST /translate), and the output checked with
the readers others use: poppler's pdfinfo (pages, sizes, rotation),
pdftotext -bbox (the text, where it is), pdfimages (images), and MuPDF's
mutool (links, untouched pages).

Usage: test_pdf.py PDF_TOOL FANYI MODELS_DIR
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import T  # noqa: E402

TOOL, FANYI, MODELS = sys.argv[1:4]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="fanyi-pdf-")
IN = os.path.join(TMP, "in")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def squash(s):
    """Text without white space and control characters (never drawn)."""
    return re.sub(r"[\s\x00-\x1f\x7f-\x9f]+", "", s)


def tool(*args):
    r = run([TOOL, *args])
    if r.returncode not in (0, 2):
        print(r.stdout, r.stderr, file=sys.stderr)
    return r


def units(path):
    r = tool("units", path)
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    return lines[0], lines[1:]


def pages(path):
    """[(width, height, rotation)] per page, by pdfinfo."""
    out = run(["pdfinfo", "-f", "1", "-l", "9999", path]).stdout
    size = re.findall(r"Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)", out)
    rot = re.findall(r"Page\s+\d+ rot:\s+(\d+)", out)
    return [(float(w), float(h), int(r)) for (w, h), r in zip(size, rot)]


def words(path):
    """{page: [(x0, y0, x1, y1, text)]} by pdftotext -bbox."""
    xml = run(["pdftotext", "-bbox", path, "-"]).stdout
    xml = re.sub(r"<!DOCTYPE[^>]*>", "", xml)
    root = ET.fromstring(xml)
    out = {}
    for i, page in enumerate(root.iter("{http://www.w3.org/1999/xhtml}page")):
        out[i + 1] = [(float(w.get("xMin")), float(w.get("yMin")), float(w.get("xMax")),
                       float(w.get("yMax")), w.text or "")
                      for w in page.iter("{http://www.w3.org/1999/xhtml}word")]
    return out


def page_text(path, page):
    return run(["pdftotext", "-f", str(page), "-l", str(page), path, "-"]).stdout


def inside(w, box, size):
    """Word w within box: 1 pt across, a third of the size up and down."""
    x0, y0, x1, y1 = box
    tx, ty = 1.0, 0.34 * size
    return w[0] >= x0 - tx and w[2] <= x1 + tx and w[1] >= y0 - ty and w[3] <= y1 + ty


def centre_in(w, box):
    cx, cy = (w[0] + w[2]) / 2, (w[1] + w[3]) / 2
    return box[0] - 1 <= cx <= box[2] + 1 and box[1] - 1 <= cy <= box[3] + 1


# The families pdf_font.c draws with (a character none of them has is drawn
# as an empty box, which pdftotext cannot read back; the writer counts them).
WRITER_FAMILIES = ("WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "IPAexGothic", "IPAGothic",
                   "VL Gothic", "NanumGothic", "UnDotum", "Liberation Sans", "Liberation Serif",
                   "DejaVu Sans", "DejaVu Serif")
_drawable = {}


def drawable(ch):
    """Whether one of the writer's font families has a glyph for ch (fc-list)."""
    if ch not in _drawable:
        fams = run(["fc-list", f":charset={ord(ch):x}", "family"]).stdout
        _drawable[ch] = any(f in fams for f in WRITER_FAMILIES)
    return _drawable[ch]


def drawn(text):
    """The text as a reader gets it back: without what is never drawn."""
    return "".join(c for c in squash(text) if drawable(c))


def overflow(u, ws_out, got, want):
    """The words under u's box in its column that continue its text: a
    paragraph too long for its box even at the smallest size runs past it
    (the writer says so). [] when got does not start want."""
    if not got or not want.startswith(got):
        return []
    below = sorted((w for w in ws_out if abs(w[0] - u["box"][0]) < 1 and w[1] >= u["box"][3] - 1),
                   key=lambda w: w[1])
    more = []
    for w in below:
        if not want.startswith(got + squash(w[4])):
            break
        got += squash(w[4])
        more.append(w)
    return more if got == want else []


def check_layout(src, out, us, texts, what, page_map=None):
    """Every unit's translation is the text inside its box, within it (or
    running straight on below it, for as many units as the writer said ran
    past their box: overflows); every other word of the output is where the
    input had it (kept text). Returns the number of units that ran past."""
    page_map = page_map or (lambda p: p)
    wo, wi = words(out), words(src)
    ran_on, past = set(), 0
    for u in us:
        ws = [w for w in wo.get(page_map(u["page"]), []) if centre_in(w, u["box"])]
        ws.sort(key=lambda w: (round(w[1] / (0.5 * u["size"])), w[0]))
        got = squash("".join(w[4] for w in ws))
        want = drawn(texts[u["unit"]])
        # An empty box would match an empty translation whatever the writer did.
        if not T.ok(want, f"{what}: unit {u['unit']} ({u['text'][:40]!r}) has a translation "
                           f"with visible text ({texts[u['unit']]!r}): pick words that have one"):
            continue
        more = [] if got == want else overflow(u, wo.get(page_map(u["page"]), []), got, want)
        if more:
            past += 1
            ran_on.update(more)
            continue
        if not T.ok(got == want, f"{what}: unit {u['unit']} (page {u['page']}) text in its box:"
                                  f" got {got!r}, want {want!r}"):
            continue
        bad = [w for w in ws if not inside(w, u["box"], u["size"])]
        T.ok(not bad, f"{what}: unit {u['unit']} stays inside {u['box']}: {bad[:3]}")
    for p in set(u["page"] for u in us):
        known = {(round(w[0]), round(w[1]), w[4]) for w in wi.get(p, [])}
        for w in wo.get(page_map(p), []):
            if w in ran_on or any(centre_in(w, u["box"]) for u in us if u["page"] == p):
                continue
            T.ok((round(w[0]), round(w[1]), w[4]) in known,
                 f"{what}: page {p}: word {w} is kept text at its place")
    dims = pages(out)
    for i, (pw, ph, rot) in enumerate(dims):
        if rot % 180:
            pw, ph = ph, pw
        for w in wo.get(i + 1, []):
            if not T.ok(w[0] >= 0 and w[1] >= 0 and w[2] <= pw + 0.5 and w[3] <= ph + 0.5,
                        f"{what}: page {i + 1}: {w} inside the page"):
                break
    return past


def show(path, obj):
    return run(["mutool", "show", path, obj]).stdout.strip()


def links(path):
    """(page, uri, rect) of every link annotation."""
    out = []
    for p in range(1, len(pages(path)) + 1):
        n = len(re.findall(r"\d+ \d+ R", show(path, f"pages/{p}/Annots")))
        for k in range(1, n + 1):
            a = f"pages/{p}/Annots/{k}"
            if show(path, a + "/Subtype") != "/Link":
                continue
            rect = [round(float(v), 1) for v in show(path, a + "/Rect").strip("[] ").split()]
            out.append((p, show(path, a + "/A/URI").strip("()"), rect))
    return out


def page_contents(path, page):
    r = run(["mutool", "show", "-b", path, f"pages/{page}/Contents"])
    return r.stdout


def images(path):
    lines = run(["pdfimages", "-list", path]).stdout.splitlines()[2:]
    return [(int(x.split()[0]), x.split()[3], x.split()[4]) for x in lines if x.strip()]


# ---- reading --------------------------------------------------------------------------------

def test_units(expect):
    for name, e in expect.items():
        head, us = units(os.path.join(IN, name))
        T.eq(head["pages"], e["pages"], f"{name}: pages")
        got = [[u["page"], squash(u["text"])] for u in us]
        want = [[p, squash(t)] for p, t in e["units"]]
        T.ok(sorted(got) == sorted(want),
             f"{name}: paragraphs: missing {[w for w in want if w not in got]}, "
             f"unexpected {[g for g in got if g not in want]}")
        for p, t in e["kept"]:
            T.ok(all(squash(t) not in squash(u["text"]) for u in us), f"{name}: {t!r} is kept")
        for p in e["no_text"]:
            T.ok(any(f"page {p} has no text layer" in n for n in head["notes"]),
                 f"{name}: page {p} reported without text: {head['notes']}")
        T.ok(all(len(u["text"]) and u["lines"] >= 1 for u in us), f"{name}: units have text")


def test_refused():
    cases = [("encrypted-user.pdf", "unsupported", "password"),
             ("encrypted-owner.pdf", "unsupported", "permissions"),
             ("truncated.pdf", "format", "")]
    for name, code, words_ in cases:
        r = tool("units", os.path.join(IN, name))
        T.ok(r.returncode == 2 and r.stdout.startswith(f"error {code}:") and words_ in r.stdout,
             f"{name} refused ({code}, {words_!r}): {r.stdout.strip()!r}")
    out = os.path.join(TMP, "encrypted-open.pdf")
    r = tool("write", os.path.join(IN, "encrypted-open.pdf"), out, "--target", "de", "--upper")
    info = run(["pdfinfo", out]).stdout
    T.ok(r.returncode == 0 and re.search(r"Encrypted:\s+yes .*change:yes", info) and
         "THIS DOCUMENT IS ENCRYPTED" in page_text(out, 1),
         f"an encrypted PDF that allows changes: translated, still encrypted: {r.stdout} {info}")
    # Damaged files: cut short or with bytes changed (a fixed seed): each is
    # translated (MuPDF repaired it) or refused with a message, never a crash.
    import random
    rnd = random.Random(26)
    data = open(os.path.join(IN, "report.pdf"), "rb").read()
    broken = os.path.join(TMP, "broken.pdf")
    for i in range(16):
        d = bytearray(data[:rnd.randrange(100, len(data))] if i % 2 else data)
        for _ in range(0 if i % 2 else rnd.randrange(1, 12)):
            d[rnd.randrange(len(d))] = rnd.randrange(256)
        with open(broken, "wb") as f:
            f.write(d)
        r = tool("write", broken, os.path.join(TMP, "x.pdf"), "--target", "de", "--upper")
        T.ok(r.returncode == 0 or (r.returncode == 2 and re.match(r"error (format|unsupported):",
                                                                    r.stdout)),
             f"damaged file {i}: translated or refused, not {r.returncode} {r.stdout!r}")
    bogus = os.path.join(TMP, "bogus.pdf")
    with open(bogus, "wb") as f:
        f.write(b"this is not a PDF at all\n")
    r = tool("units", bogus)
    T.ok(r.returncode == 2 and "not a PDF" in r.stdout, f"text named .pdf: {r.stdout!r}")
    r = run([TOOL, "units", "--max-pages", "3", os.path.join(IN, "report.pdf")])
    T.ok(r.stdout.startswith("error limit:") and "5 pages" in r.stdout, f"page limit: {r.stdout!r}")
    r = run([TOOL, "write", "--max-memory", "8", os.path.join(IN, "chinese.pdf"),
             os.path.join(TMP, "x.pdf"), "--target", "zh"])
    T.ok(r.stdout.startswith("error limit:") and "MiB" in r.stdout, f"memory limit: {r.stdout!r}")
    r = tool("write", os.path.join(IN, "report.pdf"), os.path.join(TMP, "x.pdf"), "--target", "ar")
    T.ok(r.stdout.startswith("error unsupported:") and "Arabic" in r.stdout,
         f"Arabic output refused: {r.stdout!r}")
    none = os.path.join(TMP, "never-written.pdf")
    r = run([FANYI, "translate", "--model", os.path.join(MODELS, "firefox-en-zh"), "--file",
             os.path.join(IN, "encrypted-user.pdf"), "-o", none])
    T.ok(r.returncode == 1 and "password" in r.stderr and not os.path.exists(none),
         f"fanyi translate on an encrypted PDF: {r.stderr!r}")


# ---- writing with translations given ------------------------------------------------------

def test_keep_and_upper(expect):
    src = os.path.join(IN, "report.pdf")
    e = expect["report.pdf"]
    _, us = units(src)
    for mode, target in (("--keep", "en"), ("--upper", "de")):
        out = os.path.join(TMP, f"report{mode}.pdf")
        r = tool("write", src, out, "--target", target, mode)
        if not T.ok(r.returncode == 0, f"write {mode}: {r.stdout}"):
            continue
        texts = {u["unit"]: u["text"].upper() if mode == "--upper" else u["text"] for u in us}
        T.eq(pages(out), pages(src), f"{mode}: pages, sizes and rotation")
        check_layout(src, out, us, texts, mode)
        T.eq(images(out), images(src), f"{mode}: images")
        T.eq(links(out), links(src), f"{mode}: links")
        T.ok([x[1] for x in links(src)] == e["links"], "the input has its link")
        text = squash("".join(page_text(out, p) for p in range(1, 6)))
        for _, t in e["kept"]:
            T.ok(squash(t) in text, f"{mode}: kept text {t!r} still there")
        for p in e["no_text"]:
            T.eq(page_contents(out, p), page_contents(src, p), f"{mode}: page {p} untouched")
        pg3 = page_text(out, 3)
        T.ok(squash(texts[[u for u in us if u["page"] == 3][0]["unit"]]) == squash(pg3),
             f"{mode}: the rotated page's text: {pg3!r}")


def test_narrow():
    """A justified column whose word spaces MuPDF takes for line breaks: set
    again (justified) in its box, the table beside it cell by cell."""
    src = os.path.join(IN, "narrow.pdf")
    out = os.path.join(TMP, "narrow-keep.pdf")
    _, us = units(src)
    r = tool("write", src, out, "--target", "en", "--keep")
    if T.ok(r.returncode == 0, f"narrow write: {r.stdout}"):
        check_layout(src, out, us, {u["unit"]: u["text"] for u in us}, "narrow --keep")


def test_partial():
    """Units left unset keep their original text; the others are replaced."""
    src = os.path.join(IN, "report.pdf")
    out = os.path.join(TMP, "partial.pdf")
    _, us = units(src)
    r = tool("write", src, out, "--target", "de", "--upper", "--skip", "2")
    if not T.ok(r.returncode == 0, f"partial write: {r.stdout}"):
        return
    texts = {u["unit"]: u["text"] if u["unit"] % 2 == 0 else u["text"].upper() for u in us}
    check_layout(src, out, us, texts, "partial")


def test_bilingual():
    src = os.path.join(IN, "report.pdf")
    out = os.path.join(TMP, "report-bilingual.pdf")
    single = os.path.join(TMP, "report--upper.pdf")
    _, us = units(src)
    r = tool("write", src, out, "--target", "de", "--upper", "--bilingual")
    if not T.ok(r.returncode == 0, f"bilingual write: {r.stdout}"):
        return
    ps, po = pages(src), pages(out)
    T.eq(len(po), 2 * len(ps), "bilingual: twice the pages")
    T.eq(po[0::2], ps, "bilingual: originals at their size")
    T.eq(po[1::2], ps, "bilingual: translations at their size")
    for p in range(1, len(ps) + 1):
        T.eq(squash(page_text(out, 2 * p - 1)), squash(page_text(src, p)),
             f"bilingual: page {2 * p - 1} is page {p} as it was")
        T.eq(squash(page_text(out, 2 * p)), squash(page_text(single, p)),
             f"bilingual: page {2 * p} is page {p} translated")
    texts = {u["unit"]: u["text"].upper() for u in us}
    check_layout(src, out, us, texts, "bilingual", lambda p: 2 * p)
    (p, uri, rect), = links(src)
    T.eq(links(out), [(1, uri, rect), (2, uri, rect)], "bilingual: the link on both pages")
    T.eq(len(images(out)), 2 * len(images(src)), "bilingual: images on both pages")


def test_cjk_layout():
    """Chinese set back as Chinese: lines break between any two characters."""
    src = os.path.join(IN, "chinese.pdf")
    out = os.path.join(TMP, "chinese-keep.pdf")
    _, us = units(src)
    r = tool("write", src, out, "--target", "zh", "--keep")
    if not T.ok(r.returncode == 0, f"chinese write: {r.stdout}"):
        return
    check_layout(src, out, us, {u["unit"]: u["text"] for u in us}, "chinese --keep")
    fonts = run(["pdffonts", out]).stdout
    T.ok(re.search(r"\+WenQuanYiMicroHei\s+CID TrueType\s+Identity-H\s+yes\s+yes\s+yes", fonts),
         f"chinese: the CJK font embedded as a subset with a ToUnicode map:\n{fonts}")
    # A long translation shrinks into the box.
    longer = os.path.join(TMP, "long.txt")
    with open(longer, "w") as f:
        for u in us:
            f.write(json.dumps(u["text"] * 3, ensure_ascii=False) + "\n")
    out2 = os.path.join(TMP, "chinese-long.pdf")
    r = tool("write", src, out2, "--target", "zh", "--with", longer)
    if T.ok(r.returncode == 0, f"chinese long write: {r.stdout}"):
        check_layout(src, out2, us, {u["unit"]: u["text"] * 3 for u in us}, "chinese x3")


# ---- with the engine (synthetic models) -------------------------------------------------------

def translate_lines(model, src, tgt, texts):
    """What `fanyi translate` makes of each text (one per line, no newlines in them)."""
    r = run([FANYI, "translate", "--model", model, "--from", src, "--to", tgt],
            input="".join(t + "\n" for t in texts))
    out = r.stdout.split("\n")[:len(texts)]
    T.ok(len(out) == len(texts), f"fanyi translate: a line per text: {r.stderr}")
    return out


def test_engine(name, model, src_lang, tgt_lang, bilingual):
    src = os.path.join(IN, name)
    out = os.path.join(TMP, f"engine-{tgt_lang}-{bilingual}-{name}")
    model = os.path.join(MODELS, model)
    args = [FANYI, "translate", "--model", model, "--from", src_lang, "--to", tgt_lang, "--file",
            src, "-o", out] + (["--bilingual"] if bilingual else [])
    r = run(args)
    if not T.ok(r.returncode == 0, f"fanyi translate --file {name}: {r.stderr}"):
        return
    _, us = units(src)
    lines = translate_lines(model, src_lang, tgt_lang, [u["text"] for u in us])
    texts = {u["unit"]: t for u, t in zip(us, lines)}
    T.ok(any(texts[k] != u["text"] for k, u in zip(texts, us)), f"{name}: something translated")
    past = check_layout(src, out, us, texts, f"engine {name}{' bilingual' if bilingual else ''}",
                        (lambda p: 2 * p) if bilingual else None)
    said = sum(int(n) for n in re.findall(r"(\d+) paragraphs? (?:is|are) too long for", r.stderr))
    T.eq(past, said, f"engine {name}: paragraphs that ran past their box, as the CLI said")
    T.eq(len(pages(out)), len(pages(src)) * (2 if bilingual else 1), f"engine {name}: pages")
    if "report" in name:
        T.ok("page 4 has no text layer" in r.stderr, f"the CLI reports page 4: {r.stderr!r}")


def test_server():
    """LibreTranslate's /translate_file on a real `fanyi serve`: every paragraph in the
    downloaded PDF is what POST /translate makes of its text."""
    sys.path.insert(0, os.path.join(HERE, "..", "server"))
    os.environ.setdefault("FANYI_BIN", FANYI)
    os.environ.setdefault("FANYI_BUILD_DIR", os.path.dirname(MODELS))
    from fylib import Server
    src = os.path.join(IN, "report.pdf")
    data = open(src, "rb").read()
    b = "fanyipdfboundary"
    body = (f'--{b}\r\nContent-Disposition: form-data; name="target"\r\n\r\nzh\r\n'
            f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="report.pdf"\r\n'
            f'Content-Type: application/pdf\r\n\r\n').encode() + data + f"\r\n--{b}--\r\n".encode()
    s = Server(model=os.path.join(MODELS, "firefox-en-zh")).start()
    try:
        st, _, r = s.post("/translate_file", body,
                          {"Content-Type": f"multipart/form-data; boundary={b}"})
        if not T.ok(st == 200 and "translatedFileUrl" in r, f"/translate_file a PDF: {st} {r}"):
            return
        url = r["translatedFileUrl"]
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120)
        c.request("GET", url[url.index("/download_file/"):])
        resp = c.getresponse()
        pdf = resp.read()
        c.close()
        T.ok(resp.status == 200 and resp.getheader("Content-Type", "").startswith(
            "application/pdf") and pdf.startswith(b"%PDF-"), f"download: {resp.status}")
        out = os.path.join(TMP, "server.pdf")
        with open(out, "wb") as f:
            f.write(pdf)
        _, us = units(src)
        texts = {u["unit"]: s.translate(u["text"], source="en", target="zh") for u in us}
        check_layout(src, out, us, texts, "server /translate_file")
        st, _, r = s.post("/translate_file", body.replace(data, open(
            os.path.join(IN, "encrypted-user.pdf"), "rb").read()),
            {"Content-Type": f"multipart/form-data; boundary={b}"})
        T.ok(st == 415 and "password" in r.get("error", ""), f"an encrypted PDF: {st} {r}")
    finally:
        T.eq(s.stop(), 0, "server exit status")


def test_cli_names():
    d = os.path.join(TMP, "cli")
    os.makedirs(d)
    src = os.path.join(d, "report.pdf")
    shutil.copy(os.path.join(IN, "report.pdf"), src)
    model = os.path.join(MODELS, "firefox-en-zh")
    r = run([FANYI, "translate", "--model", model, "--file", src, "--bilingual"])
    T.ok(r.returncode == 0 and os.path.exists(os.path.join(d, "report.zh.bilingual.pdf")),
         f"--bilingual names report.zh.bilingual.pdf: {r.stderr!r} {os.listdir(d)}")
    r = run([FANYI, "translate", "--model", model, "--bilingual"], input="x\n")
    T.ok(r.returncode == 2 and "--bilingual needs --file" in r.stderr, f"--bilingual alone: {r.stderr!r}")
    txt = os.path.join(d, "notes.txt")
    with open(txt, "w") as f:
        f.write("Hello.\n")
    r = run([FANYI, "translate", "--model", model, "--file", txt, "--bilingual"])
    T.ok(r.returncode == 1 and "bilingual output is made for PDF only" in r.stderr,
         f"--bilingual on a .txt: {r.stderr!r}")


def main():
    r = run(["/usr/bin/python3", os.path.join(HERE, "make_pdfs.py"), IN])
    if r.returncode:
        sys.exit(f"make_pdfs.py failed: {r.stderr}")
    expect = json.load(open(os.path.join(IN, "expect.json")))
    test_units(expect)
    test_refused()
    test_keep_and_upper(expect)
    test_partial()
    test_narrow()
    test_bilingual()
    test_cjk_layout()
    test_engine("report.pdf", "firefox-en-zh", "en", "zh", False)
    test_engine("report.pdf", "firefox-en-zh", "en", "zh", True)
    test_engine("chinese.pdf", "firefox-zh-en", "zh", "en", False)
    test_cli_names()
    test_server()
    shutil.rmtree(TMP, ignore_errors=True)
    T.finish()


if __name__ == "__main__":
    main()
