#!/usr/bin/env python3
"""test_glossary_docx.py - a glossary inside a .docx (python-docx makes it):
a term whose letters span two runs of different formatting, a term in a
run of its own, one that occurs twice in a paragraph, and a keep-as-is
term, through the real document reader, the splitter and joiner with an en
-> de glossary (doc_roundtrip: the "engine" upper-cases each sentence, so
every target term must also be repaired back to its exact spelling), and
the writer; read back with python-docx.

Usage: test_glossary_docx.py PATH/TO/doc_roundtrip
"""
import os
import subprocess
import sys
import tempfile

import docx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import T  # noqa: E402

RT = sys.argv[1]


tmp = tempfile.mkdtemp(prefix="fanyi-gl-docx-")
src, out, tsv = (os.path.join(tmp, n) for n in ("in.docx", "out.docx", "terms.tsv"))
with open(tsv, "w") as f:
    f.write("power plant\tKraftwerk\nturbine\tTurbine\nFanyi\t\n")
d = docx.Document()
p = d.add_paragraph()
p.add_run("The pow").bold = True            # the term starts in a bold run...
p.add_run("er plant runs.")                 # ...and ends in a plain one
p = d.add_paragraph()
p.add_run("Each ")
p.add_run("turbine").italic = True
p.add_run(" feeds a turbine hall.")
d.add_paragraph("Fanyi keeps its name.")
d.save(src)

r = subprocess.run([RT, src, out, tsv], capture_output=True, text=True, timeout=120)
T.ok(r.returncode == 0 and r.stdout.startswith("units="), f"doc_roundtrip: {r.stdout} {r.stderr}")
back = docx.Document(out)
paras = [q for q in back.paragraphs if q.text]
texts = [q.text for q in paras]
T.ok(texts[0] == "THE Kraftwerk RUNS.", f"a term across a run boundary: {texts[0]!r}")
T.ok(any(run.bold and "Kraftwerk" in run.text for run in paras[0].runs),
     f"the term takes the first run's formatting: {[(x.text, x.bold) for x in paras[0].runs]}")
T.ok("POW" not in texts[0] and "power" not in texts[0].lower(), "no piece of the source term left")
T.ok(texts[1] == "EACH Turbine FEEDS A Turbine HALL.", f"twice, one in its own run: {texts[1]!r}")
T.ok(any(run.italic and run.text == "Turbine" for run in paras[1].runs),
     f"a term's own run keeps its formatting: {[(x.text, x.italic) for x in paras[1].runs]}")
T.ok(texts[2] == "Fanyi KEEPS ITS NAME.", f"keep as is: {texts[2]!r}")
for n in (src, out, tsv):
    os.unlink(n)
os.rmdir(tmp)
T.finish()
