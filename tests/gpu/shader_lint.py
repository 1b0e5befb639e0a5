#!/usr/bin/env python3
"""shader_lint.py - the float rules of docs/gpu.md, checked in GLSL source.

Usage: shader_lint.py [--glslang PATH] [-I DIR]... SHADER.comp|INCLUDE.glsl...

Lavapipe forgives what a GPU may not: it divides exactly, takes exact
square roots and never fuses a*b+c. So the shaders must not depend on
these, and this lint (with tests/gpu/spirv_check.py on the compiled
modules) fails on the first shader that would. In the source text:
  - every .comp includes common.glsl (RoundingModeRTE 32, the exact ops);
  - no decimal float literals (a constant is uintBitsToFloat(0x...u):
    glslang reads decimals through double, which can round differently);
  - no sqrt, inversesqrt, exp or fma call, except on a line marked
    "lint: fp64 candidate" (div_rn's and sqrt_rn's first guess, in double,
    fixed up exactly afterwards).
In glslang's syntax tree of each .comp (glslangValidator -i, types and
the `precise` propagation resolved; include files are checked through
the shaders that use them):
  - every float or double add, subtract, multiply, divide or negate
    carries noContraction (is `precise`);
  - no float division (div_rn), and double division only on marked lines;
  - no math built-in on floats or doubles (sqrt, exp, fma, mix, min, max,
    clamp, pow, dot, ...), except double sqrt on marked lines.
Exit 0 when clean, 1 with one line per problem (FILE:LINE: problem).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

MARK = "lint: fp64 candidate"
LITERAL = re.compile(
    r"(?<![\w.])(\d+\.\d*|\.\d+)([eE][+-]?\d+)?(lf|LF|f|F)?(?![\w.])"
    r"|(?<![\w.])\d+[eE][+-]?\d+(lf|LF|f|F)?(?![\w.])"
    r"|(?<![\w.])\d+(lf|LF|f|F)(?![\w.])")
CALLS = re.compile(r"\b(sqrt|inversesqrt|exp|exp2|fma)\s*\(")
ARITH = {
    "add", "subtract", "component-wise multiply", "divide", "Negate value", "vector-scale",
    "matrix-scale", "vector-times-matrix", "matrix-times-vector", "matrix-multiply",
    "add second child into first child", "subtract second child into first child",
    "multiply second child into first child", "divide second child into first child",
    "vector scale second child into first child", "Pre-Increment", "Post-Increment",
    "Pre-Decrement", "Post-Decrement",
}
BUILTINS = {
    "sqrt", "inverse sqrt", "exp", "exp2", "log", "log2", "pow", "fma", "mix", "min", "max",
    "clamp", "mod", "modf", "Fraction", "sine", "cosine", "tangent", "arc sine", "arc cosine",
    "arc tangent", "hyp. sine", "hyp. cosine", "hyp. tangent", "dot-product", "length",
    "distance", "normalize", "cross-product", "smoothstep", "step", "ldexp", "frexp", "round",
    "roundEven", "trunc", "Floor", "Ceiling", "faceforward", "reflect", "refract",
}
NODE = re.compile(r"^\d+:(\d+)\s+(.+?) \(([^()]*)\)\s*$")
FUNC = re.compile(r"^\d+:\d+\s+Function Definition: (\w+)\(")
DEF = re.compile(r"^[A-Za-z_][\w ]*?\b(\w+)\s*\([^;]*$")


def strip_comments(text):
    """The text with comments blanked, line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def textual(path, text):
    problems = []
    raw = text.splitlines()
    code = strip_comments(text).splitlines()
    if path.endswith(".comp") and not re.search(r'#include\s+"common\.glsl"', "\n".join(code)):
        problems.append((0, "does not include common.glsl (RoundingModeRTE, exact division)"))
    for no, (line, orig) in enumerate(zip(code, raw), 1):
        if line.lstrip().startswith("#"):
            continue
        m = LITERAL.search(line)
        if m:
            problems.append((no, "decimal float literal '%s' (write uintBitsToFloat(0x...u))" % m.group(0)))
        m = CALLS.search(line)
        if m and MARK not in orig:
            problems.append((no, "%s() on the driver's precision (use the exact versions in common.glsl)" % m.group(1)))
    return problems


def functions_by_file(paths):
    """name -> (file, lines) for every function defined in the given sources."""
    funcs = {}
    for p in paths:
        with open(p) as f:
            lines = f.read().splitlines()
        for line in strip_comments("\n".join(lines)).splitlines():
            m = DEF.match(line)
            if m and not line.startswith(("layout", "return", "if", "for", "while")):
                funcs[m.group(1)] = (p, lines)
    return funcs


def ast(path, glslang, incdirs, funcs):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [glslang, "-V", "-i", "-DFY_DENORM_PRESERVE=0", "-DFY_SZINP=1", "-o",
               os.path.join(tmp, "out.spv")] + ["-I" + d for d in incdirs] + [path]
        res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return [(0, "glslang failed: " + (res.stdout + res.stderr).strip().splitlines()[-1])]
    problems = []
    func = None
    for line in res.stdout.splitlines():
        if line.startswith("Linked compute stage"):
            break  # the tree is printed again after linking
        m = FUNC.match(line)
        if m:
            func = m.group(1)
            continue
        m = NODE.match(line)
        if not m:
            continue
        lineno, name, quals = int(m.group(1)), m.group(2).strip(), m.group(3)
        ftype = re.search(r"\b(float|double)$", quals)
        if not ftype:
            continue
        where, lines = funcs.get(func, (path, None))
        marked = lines is not None and 0 < lineno <= len(lines) and MARK in lines[lineno - 1]
        double = ftype.group(1) == "double"
        if name in ARITH and "noContraction" not in quals:
            problems.append((lineno, "float %s outside `precise` (may be contracted)" % name, where))
        if name in ("divide", "divide second child into first child") and not (double and marked):
            problems.append((lineno, "%s division (use div_rn)" % ftype.group(1), where))
        if name in BUILTINS and not (double and name == "sqrt" and marked):
            problems.append((lineno, "%s() on %ss (driver precision)" % (name, ftype.group(1)), where))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--glslang", default="glslangValidator")
    ap.add_argument("-I", dest="incdirs", action="append", default=[])
    ap.add_argument("files", nargs="+")
    opts = ap.parse_args()
    includes = [f for f in opts.files if f.endswith(".glsl")]
    for d in opts.incdirs:
        includes += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".glsl")]
    included = functions_by_file(includes)
    seen, out = set(), []
    for path in opts.files:
        with open(path) as f:
            text = f.read()
        for no, msg in textual(path, text):
            out.append("%s:%d: %s" % (path, no, msg))
        if path.endswith(".comp"):
            funcs = dict(included)
            funcs.update(functions_by_file([path]))  # the shader's own main and helpers
            for item in ast(path, opts.glslang, opts.incdirs + [os.path.dirname(path) or "."], funcs):
                where = item[2] if len(item) > 2 else path
                key = (where, item[0], item[1])
                if key not in seen:
                    seen.add(key)
                    out.append("%s:%d: %s" % (where, item[0], item[1]))
    for line in out:
        print(line)
    print("shader_lint: %d file(s), %d problem(s)" % (len(opts.files), len(out)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
