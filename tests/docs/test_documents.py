"""test_documents.py - every document format through doc_roundtrip (the
real readers, split, join and writers; sentences "translated" by upper-
casing), the results opened with the real libraries and checked for text,
structure and markup; then hostile files refused with the right error.

Usage: test_documents.py PATH/TO/doc_roundtrip
"""
import io
import os
import subprocess
import sys
import tempfile
import zipfile

from lxml import etree

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import T  # noqa: E402

TOOL = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="fanyi-docs-")


def run(name, data):
    """Writes data as NAME, runs the tool; (stdout, output bytes or None)."""
    src = os.path.join(TMP, name)
    out = os.path.join(TMP, "out-" + name)
    with open(src, "wb") as f:
        f.write(data)
    if os.path.exists(out):
        os.unlink(out)
    r = subprocess.run([TOOL, src, out], capture_output=True, text=True, timeout=120)
    if r.returncode not in (0, 2):
        print(r.stdout, r.stderr, file=sys.stderr)
    result = open(out, "rb").read() if r.returncode == 0 else None
    return r.stdout.strip(), result


def entries(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {i.filename: (i, z.read(i.filename)) for i in z.infolist()}


def same_other_entries(src, out, changed, what):
    """Every entry not in changed is byte-for-byte the same, compression too."""
    a, b = entries(src), entries(out)
    T.eq(list(a), list(b), f"{what}: entry names and order")
    for name, (info, data) in a.items():
        if name in changed or name not in b:
            continue
        oi, od = b[name]
        T.ok(od == data and oi.compress_type == info.compress_type and oi.CRC == info.CRC,
             f"{what}: entry {name} copied as it was")


# ---- docx ----------------------------------------------------------------------------

def test_docx():
    import docx
    d = docx.Document()
    d.add_heading("The annual report", level=1)
    p = d.add_paragraph("Sales grew ")
    r = p.add_run("very fast")
    r.bold = True
    p.add_run(" this year, and ")
    r = p.add_run("costs")
    r.italic = True
    p.add_run(" fell.")
    d.add_paragraph("Second paragraph. It has two sentences.", style="List Bullet")
    t = d.add_table(rows=1, cols=2)
    t.cell(0, 0).text = "Left cell"
    t.cell(0, 1).text = "Right cell"
    d.sections[0].header.paragraphs[0].text = "Header text"
    d.sections[0].footer.paragraphs[0].text = "Footer text"
    buf = io.BytesIO()
    d.save(buf)
    src = buf.getvalue()
    # A hyperlink the way Word writes it (python-docx has no API for it).
    src = add_docx_hyperlink(src)
    msg, out = run("report.docx", src)
    if not T.ok(out is not None, f"docx translated ({msg})"):
        return
    o = docx.Document(io.BytesIO(out))
    texts = [p.text for p in o.paragraphs]
    T.eq(texts[0], "THE ANNUAL REPORT", "docx heading text")
    T.eq(o.paragraphs[0].style.name, "Heading 1", "docx heading style kept")
    T.eq(texts[1], "SALES GREW VERY FAST THIS YEAR, AND COSTS FELL.", "docx paragraph text")
    runs = [(r.text, bool(r.bold), bool(r.italic)) for r in o.paragraphs[1].runs]
    T.ok(("VERY FAST", True, False) in runs, f"docx bold run kept: {runs}")
    T.ok(("COSTS", False, True) in runs, f"docx italic run kept: {runs}")
    T.eq(texts[2], "SECOND PARAGRAPH. IT HAS TWO SENTENCES.", "docx list paragraph")
    T.eq(o.paragraphs[2].style.name, "List Bullet", "docx list style kept")
    T.eq(o.tables[0].cell(0, 0).text, "LEFT CELL", "docx table cell")
    T.eq(o.tables[0].cell(0, 1).text, "RIGHT CELL", "docx table cell 2")
    T.eq(o.sections[0].header.paragraphs[0].text, "HEADER TEXT", "docx header")
    T.eq(o.sections[0].footer.paragraphs[0].text, "FOOTER TEXT", "docx footer")
    xml = entries(out)["word/document.xml"][1]
    root = etree.fromstring(xml)
    ns = {"w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main"}
    links = root.findall(".//w:hyperlink", ns)
    T.ok(len(links) == 1 and links[0].get(
        "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id") == "rIdLink1",
         "docx hyperlink and its relationship id kept")
    link_text = "".join(links[0].itertext()) if links else ""
    T.eq(link_text, "OUR WEBSITE", "docx hyperlink text translated")
    T.ok(b"bookmarkStart" in xml, "docx bookmark kept")
    same_other_entries(src, out, {"word/document.xml", "word/header1.xml", "word/footer1.xml"},
                       "docx")


def add_docx_hyperlink(src):
    a = entries(src)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, (info, data) in a.items():
            if name == "word/document.xml":
                para = (b'<w:p><w:bookmarkStart w:id="0" w:name="here"/><w:r><w:t xml:space="preserve">'
                        b'Visit </w:t></w:r><w:hyperlink r:id="rIdLink1"><w:r><w:rPr><w:rStyle '
                        b'w:val="Hyperlink"/></w:rPr><w:t>our website</w:t></w:r></w:hyperlink><w:r>'
                        b'<w:t xml:space="preserve"> today.</w:t></w:r><w:bookmarkEnd w:id="0"/></w:p>')
                data = data.replace(b"<w:sectPr", para + b"<w:sectPr", 1)
            if name == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Id="rIdLink1" Type="http://'
                                    b'schemas.openxmlformats.org/officeDocument/2006/relationships/'
                                    b'hyperlink" Target="https://example.com/" TargetMode="External"'
                                    b'/></Relationships>')
            z.writestr(info, data)
    return buf.getvalue()


# ---- odt -------------------------------------------------------------------------------

def test_odt():
    from odf.opendocument import OpenDocumentText, load
    from odf.style import Style, TextProperties
    from odf.text import H, P, Span, A
    from odf import teletype
    doc = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    doc.text.addElement(H(outlinelevel=1, text="Chapter one"))
    p = P(text="This is ")
    p.addElement(Span(stylename=bold, text="important"))
    p.addText(" and spaced.   Next one.")
    doc.text.addElement(p)
    p2 = P(text="Read ")
    p2.addElement(A(href="https://example.com/x", text="the manual"))
    p2.addText(" first.")
    doc.text.addElement(p2)
    buf = io.BytesIO()
    doc.save(buf)
    src = buf.getvalue()
    msg, out = run("notes.odt", src)
    if not T.ok(out is not None, f"odt translated ({msg})"):
        return
    o = load(io.BytesIO(out))
    hs = [teletype.extractText(h) for h in o.getElementsByType(H)]
    ps = [teletype.extractText(p) for p in o.getElementsByType(P)]
    T.eq(hs, ["CHAPTER ONE"], "odt heading")
    T.eq(ps[0], "THIS IS IMPORTANT AND SPACED.   NEXT ONE.", "odt paragraph with span and spaces")
    spans = [teletype.extractText(s) for s in o.getElementsByType(Span)]
    T.eq(spans, ["IMPORTANT"], "odt span kept around its words")
    links = o.getElementsByType(A)
    T.eq([a.getAttribute("href") for a in links], ["https://example.com/x"], "odt link target kept")
    T.eq([teletype.extractText(a) for a in links], ["THE MANUAL"], "odt link text")
    same_other_entries(src, out, {"content.xml"}, "odt")
    first = zipfile.ZipFile(io.BytesIO(out)).infolist()[0]
    T.ok(first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED,
         "odt mimetype first and stored")


# ---- pptx ------------------------------------------------------------------------------

P_NS = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')


def slide_xml(paras):
    body = "".join(paras)
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:sld {P_NS}><p:cSld>'
            f'<p:spTree><p:sp><p:txBody><a:bodyPr/>{body}</p:txBody></p:sp></p:spTree></p:cSld>'
            f'</p:sld>').encode()


def make_pptx():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.'
                   'openxmlformats.org/package/2006/content-types"/>')
        z.writestr("ppt/presentation.xml", f'<?xml version="1.0"?><p:presentation {P_NS}/>')
        z.writestr("ppt/slides/slide1.xml", slide_xml([
            '<a:p><a:pPr algn="ctr"/><a:r><a:rPr lang="en-US" sz="4400"/><a:t>Quarterly results</a:t>'
            '</a:r><a:endParaRPr lang="en-US"/></a:p>',
            '<a:p><a:r><a:rPr lang="en-US"/><a:t>Revenue is </a:t></a:r><a:r><a:rPr lang="en-US" b="1"/>'
            '<a:t>up</a:t></a:r><a:r><a:rPr lang="en-US"/><a:t> again.</a:t></a:r><a:br><a:rPr '
            'lang="en-US"/></a:br><a:r><a:rPr lang="en-US"/><a:t>Next line.</a:t></a:r></a:p>']))
        z.writestr("ppt/slides/slide2.xml", slide_xml([
            '<a:p><a:r><a:rPr lang="en-US"/><a:t>Thank you</a:t></a:r></a:p>']))
        z.writestr("ppt/media/image1.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    return buf.getvalue()


def test_pptx():
    src = make_pptx()
    msg, out = run("deck.pptx", src)
    if not T.ok(out is not None, f"pptx translated ({msg})"):
        return
    e = entries(out)
    ns = {"a": "http://schemas.openxmlformats.org/drawingml/2006/main"}
    s1 = etree.fromstring(e["ppt/slides/slide1.xml"][1])
    paras = s1.findall(".//a:p", ns)
    T.eq(["".join(p.itertext()) for p in paras], ["QUARTERLY RESULTS", "REVENUE IS UP AGAIN.NEXT LINE."],
         "pptx paragraph texts")
    T.ok(paras[0].find("a:pPr", ns) is not None and paras[0].find("a:pPr", ns).get("algn") == "ctr",
         "pptx paragraph properties kept")
    T.eq(etree.QName(paras[0][-1]).localname, "endParaRPr", "pptx endParaRPr stays last")
    bold = [r.find("a:t", ns).text for r in paras[1].findall("a:r", ns)
            if r.find("a:rPr", ns).get("b") == "1"]
    T.eq(bold, ["UP"], "pptx bold run kept")
    T.ok(paras[1].find("a:br", ns) is not None, "pptx line break kept")
    s2 = etree.fromstring(e["ppt/slides/slide2.xml"][1])
    T.eq("".join(s2.itertext()), "THANK YOU", "pptx second slide")
    same_other_entries(src, out, {"ppt/slides/slide1.xml", "ppt/slides/slide2.xml"}, "pptx")


# ---- epub ------------------------------------------------------------------------------

def test_epub():
    from ebooklib import epub
    book = epub.EpubBook()
    book.set_identifier("id1")
    book.set_title("A book")
    book.set_language("en")
    c1 = epub.EpubHtml(title="One", file_name="chap_01.xhtml", lang="en")
    c1.content = ("<html><head><title>One</title></head><body><h1>First chapter</h1>"
                  "<p>It was a <em>dark</em> night. See <a href=\"chap_02.xhtml\">the next one</a>.</p>"
                  "<p>Run <code>make all</code> now.</p><pre>keep this</pre></body></html>")
    c2 = epub.EpubHtml(title="Two", file_name="chap_02.xhtml", lang="en")
    c2.content = "<html><body><p>The end.</p><ul><li>One item</li></ul></body></html>"
    book.add_item(c1)
    book.add_item(c2)
    book.toc = (c1, c2)
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", c1, c2]
    path = os.path.join(TMP, "src.epub")
    epub.write_epub(path, book)
    src = open(path, "rb").read()
    msg, out = run("book.epub", src)
    if not T.ok(out is not None, f"epub translated ({msg})"):
        return
    opath = os.path.join(TMP, "out-read.epub")
    open(opath, "wb").write(out)
    o = epub.read_epub(opath)
    docs = {i.get_name(): i.get_content() for i in o.get_items() if isinstance(i, epub.EpubHtml)}
    x = etree.fromstring(docs["chap_01.xhtml"])
    h = {"h": "http://www.w3.org/1999/xhtml"}
    T.eq("".join(x.find(".//h:h1", h).itertext()), "FIRST CHAPTER", "epub heading")
    p = x.findall(".//h:p", h)
    T.eq("".join(p[0].itertext()), "IT WAS A DARK NIGHT. SEE THE NEXT ONE.", "epub paragraph")
    T.eq(p[0].find("h:em", h).text, "DARK", "epub emphasis kept")
    T.eq(p[0].find("h:a", h).get("href"), "chap_02.xhtml", "epub link target kept")
    T.eq(p[1].find("h:code", h).text, "make all", "epub code untouched")
    T.eq(x.find(".//h:pre", h).text, "keep this", "epub pre untouched")
    y = etree.fromstring(docs["chap_02.xhtml"])
    T.eq("".join(y.find(".//h:li", h).itertext()), "ONE ITEM", "epub list item")
    first = zipfile.ZipFile(io.BytesIO(out)).infolist()[0]
    T.ok(first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED,
         "epub mimetype first and stored")


# ---- text formats ----------------------------------------------------------------------------

def test_text_formats():
    md = ("---\ntitle: Keep me\n---\n# Getting started\n\nInstall **the tool** with `pip install x`,"
          " then read [the guide](https://example.com/guide_v2 \"Guide\").\nIt wraps here.\n\n"
          "- first item\n- second *item*\n\n```python\nprint('hello')\n```\n\n    indented code\n\n"
          "> a quote\n\n| Name | Value |\n|------|-------|\n| alpha | one |\n\n![logo](img/logo.png)\n")
    msg, out = run("guide.md", md.encode())
    want = ("---\ntitle: Keep me\n---\n# GETTING STARTED\n\nINSTALL **THE TOOL** WITH `pip install x`,"
            # The join puts a closing tag after a whole word, its period included.
            " THEN READ [THE GUIDE.](https://example.com/guide_v2 \"Guide\")\nIT WRAPS HERE.\n\n"
            "- FIRST ITEM\n- SECOND *ITEM*\n\n```python\nprint('hello')\n```\n\n    indented code\n\n"
            "> A QUOTE\n\n| NAME | VALUE |\n|------|-------|\n| ALPHA | ONE |\n\n![logo](img/logo.png)\n")
    T.eq(out.decode() if out else msg, want, "markdown round trip")
    srt = ("1\r\n00:00:01,000 --> 00:00:03,500\r\nHello <i>my</i>\r\nfriend.\r\n\r\n"
           "2\r\n00:00:04,000 --> 00:00:05,000\r\n{\\an8}Top line.\r\n")
    msg, out = run("movie.srt", srt.encode())
    T.eq(out.decode() if out else msg,
         srt.replace("Hello <i>my</i>", "HELLO <i>MY</i>").replace("friend.", "FRIEND.")
         .replace("Top line.", "TOP LINE."), "srt: timings, numbering, tags, CRLF kept")
    vtt = ("WEBVTT - a title\n\nNOTE not translated\n\ncue-1\n00:00.500 --> 00:02.000 align:start\n"
           "<v Ann>Good &amp; bad</v> <00:01.000>news\n")
    msg, out = run("talk.vtt", vtt.encode())
    T.eq(out.decode() if out else msg, vtt.replace("Good &amp; bad", "GOOD &amp; BAD")
         .replace(">news", ">NEWS"), "vtt: header, note, settings, voice, timestamp kept")
    html = ("<!DOCTYPE html><html><head><title>Page</title><style>p{color:red}</style></head>"
            "<body><p>One <a href=\"/x\">link</a> here.</p><script>var a='no';</script></body></html>")
    msg, out = run("page.html", html.encode())
    T.eq(out.decode() if out else msg, html.replace(">Page<", ">PAGE<").replace("One", "ONE")
         .replace(">link<", ">LINK<").replace("here.", "HERE."), "html round trip")
    txt = "First line.\nSecond line.\n\n\nThird block."
    msg, out = run("plain.txt", txt.encode())
    T.eq(out.decode() if out else msg, txt.upper(), "txt round trip")


# ---- hostile files ----------------------------------------------------------------------------

def zip_of(files, method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in files:
            z.writestr(name, data)
    return buf.getvalue()


DOCX_MIN = [("[Content_Types].xml", "<Types/>"),
            ("word/document.xml", '<w:document xmlns:w="http://schemas.openxmlformats.org/'
             'wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hi</w:t></w:r></w:p></w:body>'
             '</w:document>')]


def refused(name, data, kind, words, what):
    msg, out = run(name, data)
    T.ok(out is None and msg.startswith(f"error {kind}:") and all(w in msg for w in words),
         f"{what}: got {msg!r}, want error {kind} with {words}")


def test_hostile():
    w = '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    # zip bomb: 200 MB of zeros in one entry (compresses about 1000:1)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            chunk = b"\0" * (1 << 20)
            for _ in range(200):
                f.write(chunk)
    refused("bomb.docx", bomb.getvalue(), "limit", ["zip bomb", "word/document.xml"], "zip bomb")
    refused("many.docx", zip_of(DOCX_MIN + [(f"x/{i}", "") for i in range(10001)],
                                zipfile.ZIP_STORED), "limit", ["entries", "10000"], "entry count")
    for bad, why in [("../../etc/passwd", "'..'"), ("/etc/passwd", "absolute"),
                     ("word\\..\\x.xml", "backslash"), ("C:/x.xml", "drive")]:
        refused("trav.docx", zip_of(DOCX_MIN + [(bad, "x")]), "format", [why], f"entry name {bad!r}")
    refused("dup.docx", zip_of(DOCX_MIN + [("word/document.xml", "<x/>")]), "format",
            ["two entries"], "duplicate entry")
    deep = w + "<w:body>" + "<w:sdt>" * 300 + "</w:sdt>" * 300 + "</w:body></w:document>"
    refused("deep.docx", zip_of([("[Content_Types].xml", "<Types/>"), ("word/document.xml", deep)]),
            "limit", ["deeper than 256"], "deep XML")
    laughs = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;'
              '&a;&a;&a;">]>' + w + "<w:body><w:p><w:r><w:t>&b;</w:t></w:r></w:p></w:body></w:document>")
    refused("laughs.docx", zip_of([("[Content_Types].xml", "<Types/>"), ("word/document.xml", laughs)]),
            "format", ["entities"], "billion laughs")
    xxe = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>' + w +
           "<w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>")
    refused("xxe.docx", zip_of([("[Content_Types].xml", "<Types/>"), ("word/document.xml", xxe)]),
            "format", ["entities"], "external entity")
    good = zip_of(DOCX_MIN)
    refused("corrupt.docx", good[:len(good) // 2], "format", ["not a valid zip"], "truncated zip")
    refused("fake.docx", b"just some text, not a zip", "unsupported", ["not a zip archive"],
            "wrong extension vs content")
    refused("odt.docx", zip_of([("mimetype", "application/vnd.oasis.opendocument.text"),
                                ("content.xml", "<x/>")], zipfile.ZIP_STORED),
            "unsupported", ["odt archive"], "an odt named .docx")
    refused("nodoc.docx", zip_of([("[Content_Types].xml", "<Types/>")]), "unsupported",
            ["no word/document.xml"], "docx without its main part")
    refused("bad.txt", b"caf\xe9 latin-1", "unsupported", ["not UTF-8"], "txt that is not UTF-8")
    # Markup units are read back as XML, which cannot carry these.
    refused("ctl.md", b"# A\x04B\n", "unsupported", ["control character U+0004", "byte 3"],
            "md with a control character")
    refused("ctl.srt", b"1\n00:00:01,000 --> 00:00:02,000\nA\x1bB\n", "unsupported",
            ["control character U+001B"], "srt with a control character")
    refused("nonchar.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nA\uffffB\n".encode(), "unsupported",
            ["U+FFFF"], "vtt with a noncharacter")
    refused("prog.exe", b"MZ\x90\x00", "unsupported", ["supported:", ".docx"], "unknown extension")
    refused("broken.docx", zip_of([("[Content_Types].xml", "<Types/>"),
                                   ("word/document.xml", w + "<w:body><w:p>")]),
            "format", ["not well-formed"], "broken XML")
    # An encrypted entry (flag bit 0 set in both headers by hand).
    enc = bytearray(zip_of(DOCX_MIN, zipfile.ZIP_STORED))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = 0
        while (at := enc.find(sig, at)) >= 0:
            enc[at + off] |= 1
            at += 4
    refused("enc.docx", bytes(enc), "unsupported", ["encrypted"], "encrypted archive")


test_text_formats()
test_docx()
test_odt()
test_pptx()
test_epub()
test_hostile()
T.finish()
