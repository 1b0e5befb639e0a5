"""make_pdfs.py - the PDFs the PDF tests and the PDF bench read, made with
ReportLab (python3-reportlab) at test time, and what each should yield.

    make_pdfs.py OUTDIR          writes the test files and OUTDIR/expect.json
    make_pdfs.py OUTDIR --pages N   writes OUTDIR/long.pdf only (N pages)

report.pdf    English: a centred title, an abstract, a heading, justified
              paragraphs, a link, an image and a drawing, a table (words and
              figures), a formula, a code block, a footnote (page 1); two
              columns with headings (page 2); a page with /Rotate 90 (page 3);
              an image only (page 4: "no text layer"); text drawn inside a
              form XObject, an invisible OCR-like layer and a vertical label
              (page 5)
chinese.pdf   Chinese (WenQuanYi Micro Hei embedded): a title, paragraphs, a
              two-column part and a table
narrow.pdf    a narrow justified column (gaps between words wider than MuPDF's
              0.8 em line break) beside a two-column table of words
encrypted-user.pdf   needs a password to open
encrypted-owner.pdf  opens without one, but forbids changes
encrypted-open.pdf   opens without one and allows changes: translated, stays encrypted
truncated.pdf        report.pdf cut at 40 %
expect.json   per file: the paragraphs (texts) that must be units, on which
              page, and texts that must be kept as they are
"""
import io
import json
import os
import sys

from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.utils import ImageReader
from reportlab.lib import pdfencrypt
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas
from reportlab.platypus import Frame, Paragraph, Table, TableStyle

W, H = A4
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"

TITLE = "Solar Pumps for Small Farms"
ABSTRACT = ("This report describes a two-year trial of solar-powered water pumps on twelve small "
            "farms. The pumps replaced diesel engines, cut running costs by more than half, and "
            "needed little maintenance once the farmers had been trained.")
HEADING1 = "1. Background"
BODY1 = [
    ("Most farms in the region draw water from shallow wells with small diesel pumps. Fuel is "
     "expensive and deliveries are irregular, so pumps often stand idle in the dry season, "
     "exactly when the crops need water most."),
    ("Solar pumps have become cheaper every year. A panel array of one kilowatt now costs less "
     "than a season of fuel, and the pump itself has only one moving part. The question was "
     "whether farmers would trust a pump that stops when clouds pass."),
]
LINK = "Read the full data set on our website."
CAPTION = "Figure 1. Daily output of one pump in March."
# The tables' words (here and ZH_TABLE) are ones the synthetic models
# translate to something: they make nothing of North, River or 节省, and
# test_pdf.py would compare an empty box with an empty translation.
TABLE = [["Farm", "Area (ha)", "Water (m3/day)", "Saving"],
         ["Hill", "2.5", "18.0", "61%"],
         ["Lake", "4.0", "31.5", "58%"]]
FORMULA = "Q = 3.6 x P x e / (g x h)"
CODE = "pump.start(rate=0.75)"
FOOTNOTE = "1 Measured with a calibrated flow meter at the outlet of each pump."
HEADING2 = "2. Results"
COLUMNS = [
    ("Every farm kept its pump running through the whole trial. Output followed the sun closely: "
     "the pumps delivered most of their water between ten in the morning and three in the "
     "afternoon, and farmers quickly moved their irrigation to those hours."),
    ("Maintenance was simpler than expected. The only failures were two broken cables, both "
     "repaired by the farmers themselves with parts from the local market."),
    ("Costs fell on every farm. The average saving was fifty-eight percent of the running cost, "
     "and the pumps paid for themselves in less than three years."),
    ("Farmers asked for larger storage tanks, so that water pumped at noon could be used in the "
     "evening. The next trial will test tanks of ten cubic metres."),
]
ROTATED = "This page is printed in landscape. Its text must stay readable after translation."
FORM_TEXT = "This sentence is drawn inside a form object."
VERTICAL = "Draft"
HIDDEN = "hidden text layer"

NARROW = [
    ("Irrigation scheduling determines agricultural productivity, particularly "
     "throughout unpredictable seasons."),
    "Photovoltaic installations require comparatively uncomplicated maintenance procedures.",
]
NARROW_TABLE = [["Pump", "Panel"], ["Valve", "Cable"]]

ZH_TITLE = "小型农场的太阳能水泵"
ZH_BODY = [
    "本报告介绍了在十二个小型农场进行的为期两年的太阳能水泵试验。水泵取代了柴油机，运行成本降低了一半以上，农民接受培训后几乎不需要维护。",
    "该地区的大多数农场从浅井中取水。燃料昂贵，送货也不规律，所以在旱季水泵经常停着，而那正是庄稼最需要水的时候。",
]
ZH_COLUMNS = [
    "每个农场的水泵在整个试验期间都保持运转。出水量紧跟太阳：水泵在上午十点到下午三点之间提供了大部分的水。",
    "维护比预期的简单。唯一的故障是两根断掉的电缆，都由农民自己用当地市场买来的零件修好了。",
]
ZH_TABLE = [["农场", "面积（公顷）", "节省比例"], ["北坡", "2.5", "61%"], ["河边", "4.0", "58%"]]


def png(w, h, kind):
    """A small generated image: a gradient ("photo") or a bar chart."""
    from PIL import Image, ImageDraw
    img = Image.new("RGB", (w, h), (255, 255, 255))
    d = ImageDraw.Draw(img)
    if kind == "photo":
        for y in range(h):
            d.line([(0, y), (w, y)], fill=(40 + y * 150 // h, 120 + y * 80 // h, 200 - y * 90 // h))
        d.ellipse([w * 0.6, h * 0.15, w * 0.85, h * 0.45], fill=(250, 220, 90))
        d.rectangle([0, h * 0.7, w, h], fill=(90, 140, 60))
    else:
        for i, v in enumerate([3, 5, 8, 11, 12, 11, 8, 5, 3]):
            d.rectangle([10 + i * 22, h - 10 - v * 12, 26 + i * 22, h - 10], fill=(60, 110, 180))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    buf.seek(0)
    return ImageReader(buf)


def styles(font="Times-Roman", bold="Helvetica-Bold", leading=1.3):
    body = ParagraphStyle("body", fontName=font, fontSize=10.5, leading=10.5 * leading,
                          alignment=TA_JUSTIFY)
    return {
        "title": ParagraphStyle("title", fontName=bold, fontSize=20, leading=24,
                                alignment=TA_CENTER),
        "h": ParagraphStyle("h", fontName=bold, fontSize=13, leading=16),
        "body": body,
        "abstract": ParagraphStyle("abstract", parent=body, fontName=font, fontSize=10,
                                   leading=13, leftIndent=30, rightIndent=30),
    }


def flow(c, frame, items):
    f = Frame(*frame, leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0,
              showBoundary=0)
    f.addFromList(list(items), c)


def report_page1(c, st):
    flow(c, (60, H - 300, W - 120, 240), [
        Paragraph(TITLE, st["title"]),
        Paragraph("&nbsp;", st["body"]),
        Paragraph(ABSTRACT, st["abstract"]),
        Paragraph("&nbsp;", st["body"]),
        Paragraph(HEADING1, st["h"]),
        Paragraph(BODY1[0] + "<super>1</super>", st["body"]),
        Paragraph(BODY1[1], st["body"]),
    ])
    # A link in blue, with its annotation over it.
    c.setFont("Helvetica", 10.5)
    c.setFillColor(colors.HexColor("#1a4fa0"))
    c.drawString(60, H - 318, LINK)
    c.linkURL("https://example.org/solar-pumps", (60, H - 322, 60 + c.stringWidth(LINK), H - 308))
    c.setFillColor(colors.black)
    # An image and a drawing, with a caption.
    c.drawImage(png(240, 150, "photo"), 60, H - 500, 200, 125)
    c.setStrokeColor(colors.HexColor("#444444"))
    c.rect(300, H - 500, 230, 125)
    c.drawImage(png(220, 160, "chart"), 310, H - 495, 210, 115)
    c.setFont("Helvetica-Oblique", 9)
    c.drawString(60, H - 515, CAPTION)
    t = Table(TABLE, colWidths=[90, 80, 100, 70])
    t.setStyle(TableStyle([("FONT", (0, 0), (-1, 0), "Helvetica-Bold", 9),
                           ("FONT", (0, 1), (-1, -1), "Helvetica", 9),
                           ("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]))
    t.wrapOn(c, 400, 100)
    t.drawOn(c, 60, H - 600)
    c.setFont("Times-Italic", 11)
    c.drawString(60, H - 630, FORMULA)
    c.setFont("Courier", 10)
    c.drawString(60, H - 650, CODE)
    c.setStrokeColor(colors.black)
    c.line(60, 70, 200, 70)
    c.setFont("Times-Roman", 8)
    c.drawString(60, 58, FOOTNOTE)
    c.setFont("Helvetica", 9)
    c.drawCentredString(W / 2, 30, "1")
    c.showPage()


def report_page2(c, st):
    flow(c, (60, H - 100, W - 120, 40), [Paragraph(HEADING2, st["h"])])
    half = (W - 120 - 20) / 2
    flow(c, (60, 80, half, H - 190), [Paragraph(p, st["body"]) for p in COLUMNS[:2]])
    flow(c, (60 + half + 20, 80, half, H - 190), [Paragraph(p, st["body"]) for p in COLUMNS[2:]])
    c.setFont("Helvetica", 9)
    c.drawCentredString(W / 2, 30, "2")
    c.showPage()


def report_page3(c, st):
    # Landscape by rotation: the page is portrait, shown turned by 90 degrees.
    c.setPageRotation(90)
    c.saveState()
    c.translate(W, 0)
    c.rotate(90)
    flow(c, (60, 60, H - 120, W - 120), [Paragraph(ROTATED, st["body"])])
    c.restoreState()
    c.showPage()
    c.setPageRotation(0)


def report_page4(c):
    c.drawImage(png(300, 400, "photo"), 60, 150, W - 120, H - 300)
    c.showPage()


def report_page5(c, st):
    c.beginForm("box")
    c.setFont("Helvetica", 12)
    c.drawString(80, H - 120, FORM_TEXT)
    c.endForm()
    c.doForm("box")
    t = c.beginText(80, H - 200)
    t.setTextRenderMode(3)
    t.setFont("Helvetica", 12)
    t.textLine(HIDDEN)
    c.drawText(t)
    c.saveState()
    c.translate(40, 300)
    c.rotate(90)
    c.setFont("Helvetica", 14)
    c.drawString(0, 0, VERTICAL)
    c.restoreState()
    c.showPage()


def report(path):
    c = canvas.Canvas(path, pagesize=A4)
    c.setTitle(TITLE)
    st = styles()
    report_page1(c, st)
    report_page2(c, st)
    report_page3(c, st)
    report_page4(c)
    report_page5(c, st)
    c.save()


def chinese(path):
    pdfmetrics.registerFont(TTFont("WQY", WQY, subfontIndex=0))
    c = canvas.Canvas(path, pagesize=A4)
    st = styles("WQY", "WQY", 1.5)
    for s in st.values():
        s.wordWrap = "CJK"
    flow(c, (60, H - 330, W - 120, 270),
         [Paragraph(ZH_TITLE, st["title"]), Paragraph("&nbsp;", st["body"])] +
         [Paragraph(p, st["body"]) for p in ZH_BODY])
    half = (W - 120 - 20) / 2
    flow(c, (60, H - 520, half, 180), [Paragraph(ZH_COLUMNS[0], st["body"])])
    flow(c, (60 + half + 20, H - 520, half, 180), [Paragraph(ZH_COLUMNS[1], st["body"])])
    t = Table(ZH_TABLE, colWidths=[90, 110, 70])
    t.setStyle(TableStyle([("FONT", (0, 0), (-1, -1), "WQY", 10),
                           ("GRID", (0, 0), (-1, -1), 0.5, colors.grey)]))
    t.wrapOn(c, 400, 100)
    t.drawOn(c, 60, H - 620)
    c.showPage()
    c.save()


def narrow(path):
    c = canvas.Canvas(path, pagesize=A4)
    st = styles()
    flow(c, (60, H - 400, 120, 340), [Paragraph(p, st["body"]) for p in NARROW])
    t = Table(NARROW_TABLE, colWidths=[60, 60])
    t.setStyle(TableStyle([("FONT", (0, 0), (-1, -1), "Helvetica", 10)]))
    t.wrapOn(c, 200, 100)
    t.drawOn(c, 300, H - 140)
    c.showPage()
    c.save()


def encrypted(path, user, can_modify):
    enc = pdfencrypt.StandardEncryption(user, ownerPassword="owner-secret",
                                        canModify=can_modify)
    c = canvas.Canvas(path, pagesize=A4, encrypt=enc)
    c.setFont("Helvetica", 12)
    c.drawString(72, H - 100, "This document is encrypted and has two sentences.")
    c.showPage()
    c.save()


def long_doc(path, pages):
    """N pages of two-column text, a heading and a figure caption each."""
    c = canvas.Canvas(path, pagesize=A4)
    st = styles()
    half = (W - 120 - 20) / 2
    for i in range(pages):
        flow(c, (60, H - 100, W - 120, 40), [Paragraph(f"{i + 1}. {HEADING2[3:]} of section "
                                                        f"{i + 1}", st["h"])])
        paras = [Paragraph(p, st["body"]) for p in (COLUMNS + BODY1)]
        flow(c, (60, 80, half, H - 190), paras[:3])
        flow(c, (60 + half + 20, 80, half, H - 190), paras[3:])
        c.setFont("Helvetica", 9)
        c.drawCentredString(W / 2, 30, str(i + 1))
        c.showPage()
    c.save()


def expectations():
    return {
        "report.pdf": {
            "pages": 5,
            "units": [[1, TITLE], [1, ABSTRACT], [1, HEADING1], [1, BODY1[0] + "1"],
                      [1, BODY1[1]], [1, LINK], [1, CAPTION], [1, "Farm"], [1, "Area (ha)"],
                      [1, "Water (m3/day)"], [1, "Saving"], [1, "Hill"], [1, "Lake"],
                      [1, FOOTNOTE], [2, HEADING2]] + [[2, p] for p in COLUMNS] +
                     [[3, ROTATED], [5, FORM_TEXT]],
            "kept": [[1, FORMULA], [1, CODE], [1, "61%"], [1, "18.0"], [5, VERTICAL],
                     [5, HIDDEN]],
            "no_text": [4],
            "rotated": [3],
            "images": 3,
            "links": ["https://example.org/solar-pumps"],
        },
        "narrow.pdf": {
            "pages": 1,
            "units": [[1, p] for p in NARROW] + [[1, x] for row in NARROW_TABLE for x in row],
            "kept": [],
            "no_text": [],
            "rotated": [],
            "images": 0,
            "links": [],
        },
        "chinese.pdf": {
            "pages": 1,
            "units": [[1, ZH_TITLE]] + [[1, p] for p in ZH_BODY] + [[1, p] for p in ZH_COLUMNS] +
                     [[1, x] for x in ["农场", "面积（公顷）", "节省比例", "北坡", "河边"]],
            "kept": [[1, "2.5"], [1, "61%"]],
            "no_text": [],
            "rotated": [],
            "images": 0,
            "links": [],
        },
    }


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    if "--pages" in sys.argv:
        long_doc(os.path.join(out, "long.pdf"), int(sys.argv[sys.argv.index("--pages") + 1]))
        return
    report(os.path.join(out, "report.pdf"))
    chinese(os.path.join(out, "chinese.pdf"))
    narrow(os.path.join(out, "narrow.pdf"))
    encrypted(os.path.join(out, "encrypted-user.pdf"), "user-secret", 1)
    encrypted(os.path.join(out, "encrypted-owner.pdf"), "", 0)
    encrypted(os.path.join(out, "encrypted-open.pdf"), "", 1)
    data = open(os.path.join(out, "report.pdf"), "rb").read()
    with open(os.path.join(out, "truncated.pdf"), "wb") as f:
        f.write(data[:len(data) * 2 // 5])
    with open(os.path.join(out, "expect.json"), "w") as f:
        json.dump(expectations(), f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
