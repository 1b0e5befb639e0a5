#!/usr/bin/env python3
"""spirv_check.py - checks SPIR-V modules for the float rules of docs/gpu.md.

Usage: spirv_check.py [--spirv-dis PATH] MODULE.spv...

Lavapipe computes division, sqrt and unmarked a*b+c exactly, so a shader
that relies on them passes every test there and still gives other bits on
a GPU that uses the latitude Vulkan allows. This check reads the
disassembly (spirv-dis) of each module and fails when:
  - a float arithmetic instruction (OpFAdd, OpFSub, OpFMul, OpFNegate,
    OpFDiv, OpFRem, OpFMod, OpVectorTimesScalar, OpDot, ...) lacks the
    NoContraction decoration (a missing `precise`);
  - OpFDiv or OpFRem/OpFMod yields 32-bit floats (division is div_rn's job;
    64-bit division is allowed: div_rn's candidate, fixed up exactly);
  - a GLSL.std.450 instruction yields a float other than PackDouble2x32
    and 64-bit Sqrt (sqrt_rn's candidate): no Exp, Sqrt, InverseSqrt, Fma,
    FMix, Pow, FMin/FMax, ...;
  - an entry point does not declare RoundingModeRTE 32, or a module with
    the Float64 capability lacks RoundingModeRTE 64.
Exit status 0 when every module passes, 1 otherwise (each problem is
printed as FILE: problem).
"""
import argparse
import re
import subprocess
import sys

ARITH = {
    "OpFAdd", "OpFSub", "OpFMul", "OpFDiv", "OpFRem", "OpFMod", "OpFNegate",
    "OpVectorTimesScalar", "OpMatrixTimesScalar", "OpVectorTimesMatrix",
    "OpMatrixTimesVector", "OpMatrixTimesMatrix", "OpOuterProduct", "OpDot",
}
DIVISIONS = {"OpFDiv", "OpFRem", "OpFMod"}
EXT_ALLOWED = {("PackDouble2x32", None), ("Sqrt", 64)}

LINE = re.compile(r"^\s*(?:(%\S+)\s*=\s*)?(Op\w+)\s*(.*)$")


def float_widths(lines):
    """id -> float width for float scalar and vector types."""
    widths = {}
    for res, op, rest in lines:
        if op == "OpTypeFloat":
            widths[res] = int(rest.split()[0])
        elif op == "OpTypeVector":
            comp = rest.split()[0]
            if comp in widths:
                widths[res] = widths[comp]
    return widths


def check_text(name, text):
    lines = []
    for raw in text.splitlines():
        m = LINE.match(raw.split(";")[0])
        if m:
            lines.append((m.group(1), m.group(2), m.group(3)))
    widths = float_widths(lines)
    nocontract = set()
    glsl_set = None
    caps = set()
    entries = []
    modes = set()
    for res, op, rest in lines:
        args = rest.split()
        if op == "OpDecorate" and len(args) >= 2 and args[1] == "NoContraction":
            nocontract.add(args[0])
        elif op == "OpExtInstImport" and '"GLSL.std.450"' in rest:
            glsl_set = res
        elif op == "OpCapability":
            caps.add(args[0])
        elif op == "OpEntryPoint":
            entries.append(args[1])
        elif op == "OpExecutionMode" and len(args) >= 3 and args[1] == "RoundingModeRTE":
            modes.add((args[0], int(args[2])))
    problems = []
    for res, op, rest in lines:
        args = rest.split()
        if not args or args[0] not in widths:
            continue
        width = widths[args[0]]
        if op in ARITH and res not in nocontract:
            problems.append("%s %s without NoContraction (a float op outside `precise`)" % (res, op))
        if op in DIVISIONS and width == 32:
            problems.append("%s %s on 32-bit floats (use div_rn)" % (res, op))
        if op == "OpExtInst" and len(args) >= 3 and args[1] == glsl_set:
            inst = args[2]
            if (inst, None) not in EXT_ALLOWED and (inst, width) not in EXT_ALLOWED:
                problems.append("%s GLSL.std.450 %s on %d-bit floats (driver precision)" % (res, inst, width))
    for ep in entries:
        if (ep, 32) not in modes:
            problems.append("entry point %s does not declare RoundingModeRTE 32" % ep)
        if "Float64" in caps and (ep, 64) not in modes:
            problems.append("entry point %s uses Float64 without RoundingModeRTE 64" % ep)
    if not entries:
        problems.append("no entry point")
    return ["%s: %s" % (name, p) for p in problems]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spirv-dis", default="spirv-dis")
    ap.add_argument("modules", nargs="+")
    opts = ap.parse_args()
    problems = []
    for path in opts.modules:
        dis = subprocess.run([opts.spirv_dis, path], capture_output=True, text=True)
        if dis.returncode != 0:
            problems.append("%s: spirv-dis failed: %s" % (path, dis.stderr.strip()))
            continue
        problems += check_text(path, dis.stdout)
    for p in problems:
        print(p)
    print("spirv_check: %d module(s), %d problem(s)" % (len(opts.modules), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
