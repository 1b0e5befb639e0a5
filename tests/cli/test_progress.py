#!/usr/bin/env python3
"""Progress on a terminal (issue 24): `fanyi translate` from a big stdin,
`translate --file` and `model synth` draw a progress line on stderr when
stderr is a terminal (a pseudo-terminal here), redrawn in place and cleared
at the end, and never when stderr is a pipe or a file; stdout never gets it.
FANYI_PROGRESS_MS=0 draws at every step, so the checks do not depend on how
fast the machine is.

Usage: test_progress.py MODEL_DIR VOCAB (the synth_models fixture)
"""
import os
import pty
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import T  # noqa: E402

FANYI = os.environ["FANYI_BIN"]
MODEL, VOCAB = sys.argv[1], sys.argv[2]


def run(args, stdin_path=None, tty=True, cwd=None):
    """Runs fanyi with stderr on a pseudo-terminal (tty) or a pipe; returns
    (status, stdout bytes, stderr bytes)."""
    env = dict(os.environ, FANYI_PROGRESS_MS="0")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    out = tempfile.TemporaryFile()
    if tty:
        master, slave = pty.openpty()
        p = subprocess.Popen([FANYI] + args, stdin=stdin, stdout=out, stderr=slave, env=env,
                             cwd=cwd)
        os.close(slave)
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            err += chunk
        os.close(master)
        status = p.wait(timeout=300)
    else:
        p = subprocess.run([FANYI] + args, stdin=stdin, stdout=out, stderr=subprocess.PIPE,
                           env=env, cwd=cwd, timeout=300)
        status, err = p.returncode, p.stderr
    out.seek(0)
    return status, out.read(), err


with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "in.txt")
    with open(src, "w", encoding="utf-8") as f:
        for i in range(200):
            f.write(f"第{i}句话，今天天气很好。\n")

    # Big stdin, output to a file, stderr on a terminal: "N lines, X of Y (P%)".
    status, out, err = run(["translate", "--model", MODEL], src)
    T.ok(status == 0, f"translate on a tty: status {status}: {err!r}")
    T.ok(out.count(b"\n") == 200, "translate on a tty: 200 lines out")
    T.ok(b"\r" not in out and b"lines" not in out, "progress reached stdout")
    T.ok(b"\rfanyi translate: 64 lines, " in err, f"no progress line: {err[:300]!r}")
    T.ok(b"(100%)" in err, f"no 100% line: {err[-300:]!r}")
    T.ok(err.endswith(b"\r\x1b[K"), f"the progress line is not cleared at the end: {err[-40:]!r}")

    # The same with stderr on a pipe: nothing on stderr at all.
    status, out2, err = run(["translate", "--model", MODEL], src, tty=False)
    T.ok(status == 0 and out2 == out, "translate on a pipe: other output")
    T.ok(err == b"", f"translate on a pipe: stderr {err[:200]!r}")

    # translate --file: "FILE: N of M sentences (P%)", then the one-line summary.
    doc = os.path.join(tmp, "doc.txt")
    with open(doc, "w", encoding="utf-8") as f:
        f.write("\n\n".join(f"第{i}段。这是一个测试。" for i in range(60)) + "\n")
    status, out, err = run(["translate", "--model", MODEL, "--file", doc, "-o", "-"])
    T.ok(status == 0, f"--file on a tty: status {status}: {err[-300:]!r}")
    T.ok(b" sentences (" in err and b"\r" in err, f"--file: no progress: {err[:300]!r}")
    T.ok(b"\r\x1b[Kfanyi translate: " + doc.encode() + b" -> -" in err,
         f"--file: the summary does not start on a cleared line: {err[-300:]!r}")
    status, out, err = run(["translate", "--model", MODEL, "--file", doc, "-o", "-"], tty=False)
    T.ok(status == 0 and b"\r" not in err and err.count(b"\n") == 1, f"--file on a pipe: {err!r}")

    # model synth: its stages on a terminal, nothing on a pipe.
    status, out, err = run(["model", "synth", "--preset", "tiny", "--int8", "--shortlist",
                            "--seed", "1", "--vocab", VOCAB, "--out", os.path.join(tmp, "m1")])
    T.ok(status == 0, f"synth on a tty: status {status}: {err!r}")
    T.ok(b"\rfanyi model synth: writing " in err and b"lex.50.50.zhen.s2t.bin" in err,
         f"synth: no progress: {err!r}")
    T.ok(err.endswith(b"\r\x1b[K"), f"synth: line not cleared: {err[-40:]!r}")
    status, out, err = run(["model", "synth", "--preset", "tiny", "--int8", "--seed", "1",
                            "--vocab", VOCAB, "--out", os.path.join(tmp, "m2")], tty=False)
    T.ok(status == 0 and err == b"", f"synth on a pipe: {status} {err!r}")

T.finish()
