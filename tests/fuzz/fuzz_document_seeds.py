#!/usr/bin/env python3
"""fuzz_document_seeds.py - writes the seeds of fuzz_document into
tests/fuzz/corpus/fuzz_document/: one small file of each format, each
prefixed with its format byte (text/document.h's fy_docfmt order). Run it
again when the formats change; the seeds are committed."""
import io
import os
import zipfile

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_document")
os.makedirs(out, exist_ok=True)
TXT, MD, HTML, SRT, VTT, DOCX, ODT, PPTX, EPUB, PDF = range(10)
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
T = 'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'


def zipped(files, stored_first=None):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name), data,
                       zipfile.ZIP_STORED if name == stored_first else zipfile.ZIP_DEFLATED)
    return b.getvalue()


def small_pdf():
    """One page, two paragraphs of Helvetica and a number, with its xref."""
    content = (b"BT /F1 12 Tf 72 720 Td (A first paragraph that wraps) Tj 0 -14 Td "
               b"(onto a second line of text.) Tj ET BT /F1 12 Tf 72 680 Td (42) Tj ET")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offs = bytearray(b"%PDF-1.4\n"), []
    for i, o in enumerate(objs):
        offs.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i + 1, o)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offs)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


seeds = {
    "txt": (TXT, "Hello world. Second sentence.\n\nNew block.\n".encode()),
    "md": (MD, "# Title\n\nSome **bold** and [a link](http://x/y) with `code`.\n\n- item *one*\n"
               "\n```\ncode\n```\n\n| a | b |\n|---|---|\n| c | d |\n> quote\n".encode()),
    "html": (HTML, b"<html><head><title>T</title></head><body><p>Hi <b>there</b>.</p>"
                   b"<pre>x</pre><script>y</script></body></html>"),
    "srt": (SRT, b"1\n00:00:01,000 --> 00:00:02,000\nHello <i>you</i>\nthere.\n\n2\n"
                 b"00:00:03,000 --> 00:00:04,000\n{\\an8}Top.\n"),
    "vtt": (VTT, b"WEBVTT\n\nNOTE n\n\n00:01.000 --> 00:02.000\n<v A>Hi &amp; bye</v> <00:01.500>x\n"),
    "docx": (DOCX, zipped([("[Content_Types].xml", "<Types/>"), ("word/document.xml",
             f'<w:document {W} xmlns:r="r"><w:body><w:p><w:pPr/><w:r><w:t>Hello </w:t></w:r>'
             '<w:hyperlink r:id="x"><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r></w:hyperlink>'
             '<w:r><w:tab/><w:t xml:space="preserve"> end.</w:t></w:r><w:bookmarkStart/></w:p>'
             '</w:body></w:document>')])),
    "odt": (ODT, zipped([("mimetype", "application/vnd.oasis.opendocument.text"), ("content.xml",
            f'<office:document-content xmlns:office="o" {T}><office:body><office:text><text:h>'
            'Title</text:h><text:p>A <text:span text:style-name="B">b</text:span> c.<text:s '
            'text:c="3"/>Next.<text:line-break/>x</text:p></office:text></office:body>'
            '</office:document-content>')], "mimetype")),
    "pptx": (PPTX, zipped([("ppt/presentation.xml", "<p/>"), ("ppt/slides/slide1.xml",
             f'<p:sld xmlns:p="p" {A}><a:p><a:pPr/><a:r><a:rPr b="1"/><a:t>Hi</a:t></a:r><a:br/>'
             '<a:r><a:rPr/><a:t>there</a:t></a:r><a:endParaRPr/></a:p></p:sld>')])),
    "epub": (EPUB, zipped([("mimetype", "application/epub+zip"), ("META-INF/container.xml",
             '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
             '<rootfile full-path="OEBPS/c.opf"/></rootfiles></container>'), ("OEBPS/c.opf",
             '<package xmlns="http://www.idpf.org/2007/opf"><manifest><item href="a%20b.xhtml" '
             'media-type="application/xhtml+xml"/></manifest></package>'), ("OEBPS/a b.xhtml",
             '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head><body>'
             '<p>One <em>two</em> <code>x</code><br/>three.</p><div>a<p>b</p>c</div></body></html>')],
             "mimetype")),
    "pdf": (PDF, small_pdf()),
}
for name, (fmt, data) in seeds.items():
    with open(os.path.join(out, f"seed-{name}"), "wb") as f:
        f.write(bytes([fmt]) + data)
