#!/usr/bin/env python3
"""test_readme.py - the README works as written (issue 24).

It reads README.md and runs what it tells a newcomer to run, in order, from
a fresh copy of the working tree (the files git tracks or would track: a
clone, uncommitted changes included) in a temporary directory, with HOME a
new, empty directory:

 1. the code block of "### No network?" (./scripts/run.sh --synth). run.sh
    ends by serving, so it runs in the background until the server listens;
    its summary must name the binary, the models and the line to use them,
    and that line is run too; then it is stopped (SIGTERM: exit status 0);
 2. the code block of "### `fanyi` on your PATH" (install.sh, export PATH);
 3. every command of the code block of "## Usage", in order, in a working
    directory holding the files they read (made by kind: .txt Chinese text,
    .docx with python-docx, .pdf with reportlab, .pem a self-signed certificate and its key).

Each line runs in bash (pipefail) with the environment the lines before it
left (an `export` carries on, as in one shell) and must exit 0, except:

 - `fanyi model fetch` runs without network (every request through a proxy
   address on a closed loopback port, whatever this machine can reach) and
   must fail as documented: exit status 3 and how to install anyway;
 - `fanyi serve` runs in the background until it answers on its port
   (https:// with --tls-cert), and is stopped (exit status 0) when the next
   `fanyi serve` starts or at the end; the curl lines talk to the last one;
 - 8989 is a free port the test picks for each `fanyi serve` (in the
   commands, and as FANYI_PORT for one without --port; the curl lines after
   it use the same); 6379 is the port of a redis-server the test starts;
   curl fails on an HTTP error status (--fail in ~/.curlrc);
 - a command's output must exist afterwards: `> FILE`, and the `-> NAME` a
   `fanyi translate --file` line's comment promises.

The one departure from a newcomer's run: FANYI_PREBUILT=$FANYI_BIN makes
run.sh and install.sh use the binary of this build instead of building a
second one (minutes). A README without one of these sections, a command
whose input file the test cannot make, or a failing line fails the test:
nothing is skipped.
"""
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import ssl
import urllib.request

SRC = os.environ["FANYI_SOURCE_DIR"]
FANYI = os.path.realpath(os.environ["FANYI_BIN"])
failures = []
started = time.monotonic()


def fail(what):
    failures.append(what)
    print("FAIL:", what, file=sys.stderr)


def note(what):
    print(f"[{time.monotonic() - started:6.1f} s] {what}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the README ------------------------------------------------------------


def section_block(text, heading):
    """The lines of the first indented code block after the heading (each
    continued line joined), with comment-only lines left out."""
    lines = text.split("\n")
    try:
        at = next(i for i, l in enumerate(lines) if l.strip() == heading)
    except StopIteration:
        raise SystemExit(f"FAIL: README.md has no heading {heading!r}")
    block, inside = [], False
    for l in lines[at + 1:]:
        if l.startswith("#"):
            break
        if l.startswith("    ") and l.strip():
            inside = True
            block.append(l[4:])
        elif inside and l.strip():
            break
    if not block:
        raise SystemExit(f"FAIL: README.md's {heading!r} has no code block")
    joined = []
    for l in block:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + l.strip()
        else:
            joined.append(l)
    return [l for l in joined if not l.strip().startswith("#")]


# ---- running lines -----------------------------------------------------------


class Shell:
    """Runs lines one after the other as in one shell session."""

    def __init__(self, env, tmp):
        self.env = env
        self.envfile = os.path.join(tmp, "env.out")

    def run(self, line, cwd, extra_env=None, timeout=300):
        script = f"set -o pipefail\n{line}\n__s=$?; env -0 >{shlex.quote(self.envfile)}; exit $__s\n"
        env = dict(self.env, **(extra_env or {}))
        p = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                           timeout=timeout)
        if os.path.exists(self.envfile) and not extra_env:
            with open(self.envfile, "rb") as f:
                pairs = [e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e]
            keep = {k.decode(): v.decode() for k, v in pairs
                    if k not in (b"PWD", b"OLDPWD", b"SHLVL", b"_", b"__s")}
            self.env = keep
            os.unlink(self.envfile)
        return p

    def start(self, line, cwd, log):
        """A line that serves, in the background (its own process group)."""
        m = re.match(r"((?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)(.*)", line)
        out = open(log, "wb")
        return subprocess.Popen(["bash", "-c", f"{m.group(1)}exec {m.group(2)}"], cwd=cwd,
                                env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def wait_listening(proc, log, timeout):
    """The URL the server prints once it listens, or None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(log, "rb") as f:
            m = re.search(rb"listening on (https?://\S+)", f.read())
        if m:
            return m.group(1).decode()
        if proc.poll() is not None:
            return None
        time.sleep(0.1)
    return None


def answers(url):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url + "/health", timeout=10, context=ctx) as r:
            return r.status == 200
    except OSError as e:
        print("  GET /health:", e, file=sys.stderr)
        return False


def stop(proc, what):
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        status = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return fail(f"{what}: did not stop within 60 s of SIGTERM")
    if status != 0:
        fail(f"{what}: exit status {status} after SIGTERM")


def show(p):
    return (f"exit {p.returncode}\n  stdout: {p.stdout[-600:].decode(errors='replace')}"
            f"\n  stderr: {p.stderr[-600:].decode(errors='replace')}")


# ---- the files the Usage commands read --------------------------------------


def make_inputs(lines, work):
    pats = [r"--file\s+(\S+)", r"<\s*(\S+)", r"@([\w./-]+)", r"--tls-cert\s+(\S+)",
            r"--tls-key\s+(\S+)", r"--input\s+(\S+)"]
    names = set()
    for line in lines:
        code = line.split(" #")[0]
        for p in pats:
            names.update(n.strip("'\"") for n in re.findall(p, code))
    for name in sorted(names):
        path = os.path.join(work, name)
        if name.startswith(("~", "/", "$")) or os.path.exists(path):
            continue
        ext = os.path.splitext(name)[1]
        if ext == ".txt":
            with open(path, "w", encoding="utf-8") as f:
                f.write("今天天气很好。\n\n北京是中国的首都。我们去公园散步吧！\n")
        elif ext == ".docx":
            subprocess.run(["/usr/bin/python3", "-c", """
import sys, docx
d = docx.Document()
d.add_heading("天气", level=1)
d.add_paragraph("今天天气很好。我们去公园散步吧！")
d.add_paragraph("北京是中国的首都。")
d.save(sys.argv[1])""", path], check=True)
        elif ext == ".pdf":
            subprocess.run(["/usr/bin/python3", "-c", """
import sys
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas
c = canvas.Canvas(sys.argv[1], pagesize=A4)
c.setFont("Helvetica-Bold", 16)
c.drawString(72, 760, "The weather")
c.setFont("Helvetica", 11)
c.drawString(72, 730, "The weather is nice today. Let us take a walk in the park.")
c.drawString(72, 712, "Beijing is the capital of China.")
c.showPage()
c.save()""", path], check=True)
        elif ext == ".pem":
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days",
                            "2", "-subj", "/CN=localhost", "-keyout",
                            os.path.join(work, "key.pem"), "-out",
                            os.path.join(work, "cert.pem")], check=True, capture_output=True)
        else:
            raise SystemExit(f"FAIL: the README reads {name}: the test cannot make a {ext} file")
        note(f"made {name}")


# ---- the steps ---------------------------------------------------------------


def fresh_copy(dst):
    files = subprocess.run(["git", "-C", SRC, "ls-files", "-z", "-co", "--exclude-standard"],
                           check=True, capture_output=True).stdout.split(b"\0")
    for f in files:
        rel = f.decode()
        src = os.path.join(SRC, rel)
        if not rel or not os.path.lexists(src) or os.path.isdir(src) and not os.path.islink(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel), follow_symlinks=False)


def run_synth(sh, lines, clone, tmp):
    if not any("./scripts/run.sh --synth" in l for l in lines):
        fail("'### No network?' does not run ./scripts/run.sh --synth")
    for line in lines:
        note(f"$ {line}")
        if "scripts/run.sh" not in line:
            p = sh.run(line, clone)
            if p.returncode:
                fail(f"{line}: {show(p)}")
            continue
        log = os.path.join(tmp, "run.log")
        sh.env["FANYI_PORT"] = str(free_port())  # run.sh serves with its options' defaults
        proc = sh.start(line, clone, log)
        url = wait_listening(proc, log, 600)
        out = open(log, encoding="utf-8", errors="replace").read()
        if not url:
            stop(proc, line) if proc.poll() is None else None
            fail(f"{line}: never served:\n{out[-2000:]}")
            continue
        for key in ("fanyi:", "models:", "use:"):
            if not re.search(rf"^{key} ", out, re.M):
                fail(f"{line}: the summary has no '{key}' line:\n{out[-1500:]}")
        if FANYI not in out:
            fail(f"{line}: the summary does not say where the binary is")
        use = re.search(r"^use: +(.*)$", out, re.M)
        if use:
            note(f"$ {use.group(1)}   (run.sh's 'use:' line)")
            p = sh.run(use.group(1), clone)
            if p.returncode or p.stdout.count(b"\n") != 1:
                fail(f"the 'use:' line {use.group(1)!r}: {show(p)}")
        if not answers(url):
            fail(f"{line}: {url} does not answer")
        stop(proc, line)


def run_usage(sh, lines, work, tmp, redis_port):
    offline = {"https_proxy": f"http://127.0.0.1:{free_port()}", "no_proxy": "", "NO_PROXY": ""}
    offline.update({"HTTPS_PROXY": offline["https_proxy"], "http_proxy": offline["https_proxy"],
                    "HTTP_PROXY": offline["https_proxy"]})
    server, port = None, None
    for n, raw in enumerate(lines, 1):
        serve = re.search(r"(^|\s)fanyi serve(\s|$)", raw)
        if serve:  # a port picked just before it is bound: no other test takes it meanwhile
            port = free_port()
            sh.env["FANYI_PORT"] = str(port)
        if "8989" in raw and port is None:
            fail(f"{raw}: talks to port 8989 before any fanyi serve")
        line = raw.replace("8989", str(port)).replace("6379", str(redis_port))
        note(f"$ {raw}")
        if serve:
            if server:
                stop(server, "the previous fanyi serve")
            log = os.path.join(tmp, f"serve{n}.log")
            server = sh.start(line, work, log)
            url = wait_listening(server, log, 120)
            if not url or not answers(url):
                fail(f"{raw}: does not serve:\n{open(log, errors='replace').read()[-1500:]}")
                if server.poll() is None:
                    stop(server, raw)
                server = None
            continue
        if re.search(r"(^|\s)fanyi model fetch(\s|$)", line):
            p = sh.run(line, work, offline)
            if p.returncode != 3 or b"without network access, install" not in p.stderr:
                fail(f"{raw} (offline): exit status 3 and what to do expected: {show(p)}")
            continue
        p = sh.run(line, work)
        if p.returncode:
            fail(f"{raw}: {show(p)}")
            continue
        code = line.split(" #")[0]
        outs = re.findall(r">\s*(\S+)", code)
        m = re.search(r"--file\s+\S+.*#\s*->\s*(\S+?):?(\s|$)", line)
        outs += [m.group(1)] if m else []
        for o in outs:
            if not os.path.exists(os.path.join(work, o)):
                fail(f"{raw}: {o} was not written")
    if server:
        stop(server, "the last fanyi serve")


def main():
    text = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
    synth = section_block(text, "### No network?")
    install = section_block(text, "### `fanyi` on your PATH")
    usage = section_block(text, "## Usage")
    redis = shutil.which("redis-server")
    if not redis:
        raise SystemExit("FAIL: redis-server is missing (scripts/setup.sh installs it)")
    with tempfile.TemporaryDirectory(prefix="fanyi-readme-") as tmp:
        clone, home, work = (os.path.join(tmp, d) for d in ("clone", "home", "work"))
        for d in (home, work):
            os.makedirs(d)
        fresh_copy(clone)
        note(f"fresh copy of the working tree in {clone}")
        with open(os.path.join(home, ".curlrc"), "w") as f:
            f.write("fail\n")
        redis_port = free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("FANYI_") and k not in ("HOME", "CURL_HOME")}
        env.update(HOME=home, FANYI_PREBUILT=FANYI)
        env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":")
                               if not os.path.exists(os.path.join(p, "fanyi")))
        sh = Shell(env, tmp)
        rs = subprocess.Popen([redis, "--port", str(redis_port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                              start_new_session=True)
        try:
            run_synth(sh, synth, clone, tmp)
            for line in install:
                note(f"$ {line}")
                p = sh.run(line, clone)
                if p.returncode:
                    fail(f"{line}: {show(p)}")
            if shutil.which("fanyi", path=sh.env.get("PATH")) != os.path.join(
                    home, ".local/bin/fanyi"):
                fail("after the install step, fanyi on the PATH is not ~/.local/bin/fanyi")
            make_inputs(usage, work)
            run_usage(sh, usage, work, tmp, redis_port)
        finally:
            os.killpg(rs.pid, signal.SIGTERM)
            rs.wait(timeout=30)
    note(f"{len(synth) + len(install) + len(usage)} README lines run, {len(failures)} failures")
    sys.exit(1 if failures else 0)


main()
