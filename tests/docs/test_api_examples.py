#!/usr/bin/env python3
"""test_api_examples.py - every `curl` example of docs/api.md is run against
a real `fanyi serve` (synthetic zh-en and en-zh models) and its answer is
compared with the one the document shows, so the examples cannot go stale.

How an example reads: a `curl` command in a ```sh block (continued by a
trailing backslash or an open quote), then its answer as comment lines
("# {...}"), or as a comment on the command's own line. "# 400 {...}" says
the status (200 otherwise). "…" outside a string stands for "anything"
(a value), "more like the one before" (the last item of a list, or a line
of a stream); inside a string, for any characters.

What is compared: the JSON's shape everywhere (the same keys, the same
types, lists of the same length unless "…" ends them) and every value
exactly, except where the engine or the moment decides it: translations
(the synthetic models do not say "Hello"), ids, times, whether a model is
loaded yet, and numbers (type only). Language codes, field names, codes, event names and
flags are compared exactly: a documented "zh" where the server answers
"zh-Hans" fails. Streams (server-sent events, NDJSON) are compared event by
event. Examples without an answer still have to answer 2xx. An id the
server chose ("id", "glossary_id" of an answer) stands, in the commands of
later examples, for the id the document shows there."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from fylib import BUILD, T, Server  # noqa: E402

DOC = os.path.join(os.environ.get("FANYI_SOURCE_DIR", os.path.join(os.path.dirname(__file__),
                                                                    "..", "..")), "docs", "api.md")
ELLIPSIS = "\u2026"
ANY = object()
# Keys whose values the engine, the clock or the moment decide: compared by type.
VARIABLE = {"translation", "translatedText", "text", "trans", "content", "data", "alternatives",
            "id", "created", "url", "translatedFileUrl", "version", "message", "loaded", "result",
            "document_id", "document_key", "glossary_id", "creation_time"}
# Ids the server chose: documented id -> the one it gave (see remember_ids).
IDS = {}
# Places without a key that hold a translation: Google's positional answer.
VARIABLE_PATHS = [re.compile(r"answer\[0\]\[0\]\[0\]$")]


# ---- reading the document ---------------------------------------------------

def complete(cmd):
    try:
        shlex.split(cmd)
        return not cmd.rstrip().endswith("\\")
    except ValueError:
        return False


def split_comment(line):
    """A command line and its comment (outside quotes), or (line, None)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and i and line[i - 1] in " \t":
            return line[:i].rstrip(), line[i + 1:].strip()
    return line, None


def examples(text):
    """[(line number, command, answer text or None)] of every curl example."""
    out = []
    lines = text.split("\n")
    i, in_sh = 0, False
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("```"):
            in_sh = ln.strip() == "```sh"
            i += 1
            continue
        if not in_sh or not ln.startswith("curl "):
            i += 1
            continue
        start, cmd = i + 1, ln
        while not complete(cmd) and i + 1 < len(lines):
            i += 1
            cmd += "\n" + lines[i]
        cmd, inline = split_comment(cmd)
        answer = [inline] if inline else []
        i += 1
        indent = None
        while i < len(lines):
            s = lines[i].strip()
            if not s.startswith("#") or lines[i].startswith("curl"):
                break
            if inline and indent is None and not lines[i].lstrip().startswith("#"):
                break
            answer.append(s[1:].strip() if s != "#" else "")
            i += 1
        out.append((start, cmd.replace("\\\n", " "), "\n".join(answer) if answer else None))
    return out


def quote_ellipses(s):
    """JSON text with "…" outside strings made into the string "…"."""
    out, in_str, esc = [], False, False
    for c in s:
        if in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif c == ELLIPSIS:
            out.append('"' + ELLIPSIS + '"')
        else:
            out.append(c)
    return "".join(out)


def documented(answer):
    """(status, kind, value): kind "json" (value parsed), "sse" ([(event, data)]),
    "ndjson" ([objects, "…" for more]), or None (prose only)."""
    status = 200
    m = re.match(r"(\d{3}) ", answer)
    if m:
        status, answer = int(m.group(1)), answer[4:]
    lines = [x for x in answer.split("\n")]
    if lines[0].startswith("event:"):
        events, name = [], None
        for ln in lines:
            if ln.startswith("event:"):
                name = ln[6:].strip()
            elif ln.startswith("data:"):
                events.append((name, json.loads(quote_ellipses(ln[5:].strip()))))
        return status, "sse", events
    if len(lines) > 1 and all(x.startswith("{\"event\"") or x.startswith(ELLIPSIS) for x in lines):
        return status, "ndjson", [ELLIPSIS if x.startswith(ELLIPSIS) else
                                  json.loads(quote_ellipses(x)) for x in lines]
    k = min([p for p in (answer.find("{"), answer.find("[")) if p >= 0], default=-1)
    if k < 0:
        return status, None, None
    try:
        value, _ = json.JSONDecoder().raw_decode(quote_ellipses(answer[k:]))
    except ValueError:
        return status, None, None
    return status, "json", value


# ---- comparing --------------------------------------------------------------

def string_matches(doc, got):
    if ELLIPSIS not in doc:
        return doc == got
    parts = [re.escape(p) for p in doc.split(ELLIPSIS)]
    return re.fullmatch(".*".join(parts), got, re.S) is not None


def same_type(doc, got):
    if isinstance(doc, bool) or isinstance(got, bool):
        return isinstance(doc, bool) and isinstance(got, bool)
    if isinstance(doc, (int, float)):
        return isinstance(got, (int, float))
    return type(doc) is type(got)


def compare(doc, got, where, key=None, problems=None, values=True):
    """Appends to problems where got does not have doc's shape and (with
    values) its values."""
    if doc == ELLIPSIS:
        return problems
    if not same_type(doc, got):
        problems.append(f"{where}: documented {type(doc).__name__} {json.dumps(doc)[:60]}, "
                        f"got {json.dumps(got)[:60]}")
        return problems
    if isinstance(doc, dict):
        if set(doc) != set(got):
            problems.append(f"{where}: documented keys {sorted(doc)}, got {sorted(got)}")
        for k in doc:
            if k in got:
                compare(doc[k], got[k], f"{where}.{k}", k, problems, values)
    elif isinstance(doc, list):
        if key in VARIABLE:
            return problems
        more = bool(doc) and doc[-1] == ELLIPSIS
        items = doc[:-1] if more else doc
        if (more and len(got) < len(items)) or (not more and len(got) != len(items)):
            problems.append(f"{where}: documented {len(items)}{'+' if more else ''} items, "
                            f"got {len(got)}: {json.dumps(got)[:100]}")
        for n, d in enumerate(items[:len(got)]):
            compare(d, got[n], f"{where}[{n}]", key, problems, values)
        if more and items:  # "…": more items of the last one's shape
            for n in range(len(items), len(got)):
                compare(items[-1], got[n], f"{where}[{n}]", key, problems, False)
    elif isinstance(doc, str):
        variable = not values or key in VARIABLE or any(p.match(where) for p in VARIABLE_PATHS)
        if not variable and not string_matches(doc, got):
            problems.append(f"{where}: documented {doc!r}, got {got!r}")
    elif isinstance(doc, bool) and doc != got and values and key not in VARIABLE:
        problems.append(f"{where}: documented {doc}, got {got}")
    return problems


def sse(text):
    events, name = [], "message"
    for ln in text.split("\n"):
        if ln.startswith("event:"):
            name = ln[6:].strip()
        elif ln.startswith("data:"):
            events.append((name, json.loads(ln[5:].strip())))
    return events


def compare_stream(doc, got, where):
    """Events in order; a "…" line of the document stands for more lines like the one before."""
    problems, k = [], 0
    for n, d in enumerate(doc):
        if d == ELLIPSIS:
            while k < len(got) and k + (len(doc) - n - 1) < len(got) and \
                    got[k].get("event") == doc[n - 1].get("event"):
                k += 1
            continue
        if k >= len(got):
            problems.append(f"{where}: documented line {n + 1} {json.dumps(d)[:60]}, got none")
            break
        compare(d, got[k], f"{where} line {k + 1}", None, problems)
        k += 1
    if k < len(got):
        problems.append(f"{where}: {len(got) - k} more lines than documented")
    return problems


# ---- running ----------------------------------------------------------------

def make_docx(path):
    import docx
    d = docx.Document()
    d.add_heading("年度报告", level=1)
    d.add_paragraph("你好，世界。今天天气很好。")
    d.save(path)


def remember_ids(doc, got):
    """The ids of got (an answer) in place of those doc shows, for later commands."""
    if isinstance(doc, dict) and isinstance(got, dict):
        for k, v in doc.items():
            if k in ("id", "glossary_id") and isinstance(v, str) and ELLIPSIS not in v and \
                    isinstance(got.get(k), str):
                IDS[v] = got[k]
            remember_ids(v, got.get(k))
    elif isinstance(doc, list) and isinstance(got, list):
        for d, g in zip(doc, got):
            remember_ids(d, g)


def run(cmd, port, cwd):
    cmd = cmd.replace("localhost:8989", f"127.0.0.1:{port}")
    for documented_id, real in IDS.items():
        cmd = cmd.replace(documented_id, real)
    r = subprocess.run(["bash", "-c", cmd + " -w '\\n%{http_code}'"], cwd=cwd,
                       capture_output=True, timeout=120)
    out = r.stdout.decode("utf-8", "replace")
    body, _, status = out.rpartition("\n")
    return int(status) if status.isdigit() else None, body


def check(line, cmd, answer, port, cwd):
    what = f"docs/api.md:{line}: {cmd.splitlines()[0][:70]}"
    if ELLIPSIS in cmd or "localhost:8989" not in cmd:
        print(f"skipped (a placeholder in the command, or another server): {what}")
        return
    status, body = run(cmd, port, cwd)
    if answer is None:
        T.ok(status is not None and 200 <= status < 300, f"{what}: answered {status}")
        return
    want_status, kind, doc = documented(answer.replace("localhost:8989", f"127.0.0.1:{port}"))
    T.eq(status, want_status, f"{what}: status")
    if kind is None:
        return
    try:
        if kind == "json":
            problems = compare(doc, json.loads(body), "answer", None, [])
            remember_ids(doc, json.loads(body))
        elif kind == "sse":
            got = sse(body)
            problems = [] if [e for e, _ in got] == [e for e, _ in doc] else \
                [f"events {[e for e, _ in got]}, documented {[e for e, _ in doc]}"]
            for n, ((_, d), (_, g)) in enumerate(zip(doc, got)):
                compare(d, g, f"event {n + 1}", None, problems)
        else:
            problems = compare_stream(doc, [json.loads(x) for x in body.splitlines() if x], "stream")
    except ValueError as e:
        problems = [f"the answer is not {kind}: {e}: {body[:120]!r}"]
    T.ok(not problems, f"{what}: {'; '.join(problems)[:600]}")


with open(DOC, encoding="utf-8") as f:
    found = examples(f.read())
T.ok(len(found) >= 40, f"{len(found)} curl examples found in docs/api.md")
M = os.path.join(BUILD, "models")
root = tempfile.mkdtemp(prefix="fanyi-docs-")
for name, src in {"zh-en": "tiny-int8-sl", "en-zh": "firefox-en-zh"}.items():
    os.symlink(os.path.join(M, src), os.path.join(root, name))
cwd = tempfile.mkdtemp(prefix="fanyi-docs-cwd-")
make_docx(os.path.join(cwd, "report.docx"))
data = tempfile.mkdtemp(prefix="fanyi-docs-data-")  # glossaries the examples make
with Server(["--data-dir", data], models=root) as s:
    for line, cmd, answer in found:
        check(line, cmd, answer, s.port, cwd)
shutil.rmtree(data)
T.finish()
