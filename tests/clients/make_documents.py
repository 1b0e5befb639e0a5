#!/usr/bin/python3
"""make_documents.py OUT - one small Chinese document in every format
Fanyi reads, for the document clients' tests (test_deepl_node_documents.js,
tests/lb): doc.txt, doc.md, doc.html, doc.srt, doc.vtt, doc.docx (python-docx),
doc.odt (odfpy), doc.pptx (its XML, zipped), doc.epub (ebooklib) and doc.pdf
(reportlab with WenQuanYi Micro Hei; tests/docs/make_pdfs.py's chinese page).
Debian's python3 has those packages (scripts/setup.sh)."""
import os
import subprocess
import sys
import zipfile

ZH = ["今天天气很好。", "我们去公园吧。", "这家饭馆的饺子又便宜又好吃。", "孩子们在公园里放风筝。"]


def docx(path):
    import docx as d
    doc = d.Document()
    doc.add_heading(ZH[0], level=1)
    p = doc.add_paragraph(ZH[1])
    p.add_run(ZH[2]).bold = True
    doc.save(path)


def odt(path):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P
    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text=ZH[0]))
    doc.text.addElement(P(text=ZH[1] + ZH[2]))
    doc.save(path)


def pptx(path):
    ns = ('xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
          'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"')
    slide = (f'<?xml version="1.0" encoding="UTF-8"?><p:sld {ns}><p:cSld><p:spTree><p:sp>'
             f'<p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="zh-CN"/><a:t>{ZH[0]}</a:t></a:r></a:p>'
             f'<a:p><a:r><a:rPr lang="zh-CN"/><a:t>{ZH[3]}</a:t></a:r></a:p></p:txBody></p:sp>'
             '</p:spTree></p:cSld></p:sld>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.'
                   'openxmlformats.org/package/2006/content-types"/>')
        z.writestr("ppt/presentation.xml", f'<?xml version="1.0"?><p:presentation {ns}/>')
        z.writestr("ppt/slides/slide1.xml", slide)


def epub(path):
    from ebooklib import epub as e
    book = e.EpubBook()
    book.set_identifier("fanyi-test")
    book.set_title("书")
    book.set_language("zh")
    c = e.EpubHtml(title="一", file_name="c1.xhtml", lang="zh")
    c.content = f"<html><body><h1>{ZH[0]}</h1><p>{ZH[1]}{ZH[2]}</p></body></html>"
    book.add_item(c)
    book.add_item(e.EpubNcx())
    book.add_item(e.EpubNav())
    book.spine = ["nav", c]
    e.write_epub(path, book)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    texts = {
        "doc.txt": f"{ZH[0]}{ZH[1]}\n\n{ZH[2]}\n",
        "doc.md": f"# {ZH[0]}\n\n{ZH[1]} **{ZH[2]}**\n",
        "doc.html": f"<html><body><h1>{ZH[0]}</h1><p>{ZH[1]}<b>{ZH[2]}</b></p></body></html>\n",
        "doc.srt": f"1\n00:00:01,000 --> 00:00:02,000\n{ZH[0]}\n\n2\n00:00:03,000 --> 00:00:04,000\n"
                   f"{ZH[3]}\n",
        "doc.vtt": f"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n{ZH[0]}\n\n"
                   f"00:00:03.000 --> 00:00:04.000\n{ZH[3]}\n",
    }
    for name, text in texts.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    docx(os.path.join(out, "doc.docx"))
    odt(os.path.join(out, "doc.odt"))
    pptx(os.path.join(out, "doc.pptx"))
    epub(os.path.join(out, "doc.epub"))
    pdfs = os.path.join(out, "pdfs")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["/usr/bin/python3", os.path.join(here, "..", "docs", "make_pdfs.py"), pdfs],
                   check=True, stdout=subprocess.DEVNULL)
    os.replace(os.path.join(pdfs, "chinese.pdf"), os.path.join(out, "doc.pdf"))
    for f in os.listdir(pdfs):
        os.unlink(os.path.join(pdfs, f))
    os.rmdir(pdfs)


if __name__ == "__main__":
    main()
