#!/usr/bin/env python3
"""isa_audit.py - static proof that only the dispatched kernels need more than x86-64.

Usage: isa_audit.py [--kernel-files A.c,B.c] BINARY [OBJECT...]

Disassembles BINARY (objdump -d) and checks that every instruction beyond the
x86-64 baseline (SSE2) - anything VEX/EVEX-encoded (AVX, AVX2, FMA,
AVX-512), any use of a ymm/zmm/opmask register, and the SSE3..SSE4.2, POPCNT,
LZCNT, BMI, MOVBE and ADX instructions - lies in a function compiled from one
of the ISA-specific kernel files (src/nn/gemm_avx2.c, gemm_avxvnni.c,
gemm_avx512vnni.c, attend_avx2.c, attend_avx512.c), whose code runs only
after src/nn/cpu.c has checked cpuid
and XGETBV. A local
(static) function's file is read from the symbol table (each STT_FILE symbol
precedes its file's locals); a global function counts as a kernel function
only if one of the OBJECTs that are kernel files' objects defines it (other
OBJECTs are ignored, so the whole kernel library's list may be passed).
It also checks that no other function calls or jumps into a kernel function
directly: they are reached only through the kernel tables that cpu.c hands
out after its checks.

The binary must keep its symbol table (not stripped) and link libc
dynamically: glibc's own AVX2 string functions (chosen by its ifuncs) are
then outside the binary. Prints the kernel functions found and a final
"N passed, N failed" line; exits 1 on any instruction outside them.
--kernel-files replaces the list of kernel source files (for the test's
negative control).
"""
import bisect
import os
import re
import subprocess
import sys

KERNEL_FILES = {"gemm_avx2.c", "gemm_avxvnni.c", "gemm_avx512vnni.c", "attend_avx2.c",
                "attend_avx512.c"}

# Legacy-encoded instructions newer than SSE2 (mnemonics as objdump prints
# them, AT&T syntax, suffix-free forms). `tzcnt` is absent on purpose: gcc
# emits `rep bsf` for ctz, which objdump shows as tzcnt and which every
# x86-64 CPU executes (as bsf, identical for a non-zero operand).
NEWER_THAN_SSE2 = set(
    """
    addsubpd addsubps haddpd haddps hsubpd hsubps lddqu movddup movshdup movsldup fisttp
    fisttps fisttpl fisttpll monitor mwait
    pabsb pabsd pabsw palignr phaddd phaddsw phaddw phsubd phsubsw phsubw pmaddubsw pmulhrsw
    pshufb psignb psignd psignw
    blendpd blendps blendvpd blendvps dppd dpps extractps insertps movntdqa mpsadbw packusdw
    pblendvb pblendw pcmpeqq pextrb pextrd pextrq phminposuw pinsrb pinsrd pinsrq pmaxsb
    pmaxsd pmaxud pmaxuw pminsb pminsd pminud pminuw pmovsxbd pmovsxbq pmovsxbw pmovsxdq
    pmovsxwd pmovsxwq pmovzxbd pmovzxbq pmovzxbw pmovzxdq pmovzxwd pmovzxwq pmuldq pmulld
    ptest roundpd roundps roundsd roundss
    crc32 crc32b crc32w crc32l crc32q pcmpestri pcmpestrm pcmpgtq pcmpistri pcmpistrm
    popcnt lzcnt andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx
    movbe adcx adox
    """.split()
)
# Non-AVX mnemonics that start with 'v' (VMX and segment verification).
NOT_AVX = set(
    """
    verr verw vmcall vmclear vmfunc vmlaunch vmload vmmcall vmptrld vmptrst vmread
    vmresume vmrun vmsave vmwrite vmxoff vmxon
    """.split()
)
WIDE_REGISTER = re.compile(r"%(?:[yz]mm\d+|k[0-7])\b")
FUNC_HEADER = re.compile(r"^([0-9a-f]+) <(.+)>:$")
DIRECT_BRANCH = re.compile(r"^(?:call|jmp)q?\s+([0-9a-f]+) <[^>]+>")
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
PREFIXES = {"lock", "rep", "repz", "repnz", "repe", "repne", "data16", "addr32", "notrack", "bnd",
            "cs", "ds", "es", "ss", "fs", "gs", "rex", "rex.W", "{vex}", "{evex}", "{vex3}"}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def beyond_baseline(text):
    """The reason an instruction needs more than SSE2, or None."""
    words = text.split()
    while words and (words[0] in PREFIXES or words[0].startswith("rex.")):
        words = words[1:]
    if not words:
        return None
    mnemonic = words[0]
    base = mnemonic.split(".")[0]
    if base.startswith("v") and base not in NOT_AVX:
        return "VEX/EVEX-encoded " + mnemonic
    if WIDE_REGISTER.search(text):
        return "ymm/zmm/opmask register"
    if base in NEWER_THAN_SSE2 or base.rstrip("bwlq") in NEWER_THAN_SSE2:
        return mnemonic + " (newer than SSE2)"
    return None


def local_function_files(binary):
    """{address: source file} for local functions, from STT_FILE grouping."""
    files, current = {}, None
    for line in run(["readelf", "-sW", binary]).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":"):
            continue
        value, typ, bind = f[1], f[3], f[4]
        if typ == "FILE":
            current = f[7]
        elif typ == "FUNC" and bind == "LOCAL" and current:
            files[int(value, 16)] = current
    return files


def global_kernel_functions(objects):
    """Global functions defined by those OBJECTs compiled from a kernel file
    (named like gemm_avx2.c.o or gemm_avx2.o; others are ignored)."""
    names = set()
    for obj in objects:
        base = os.path.basename(obj)
        if not any(base.startswith(f[:-2] + ".") for f in KERNEL_FILES):
            continue
        for line in run(["nm", "--defined-only", obj]).splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TW":
                names.add(f[2])
    return names


def main(argv):
    global KERNEL_FILES
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--kernel-files":
        KERNEL_FILES = set(args[1].split(","))
        args = args[2:]
    if not args:
        print("usage: isa_audit.py [--kernel-files A.c,B.c] BINARY [OBJECT...]", file=sys.stderr)
        return 2
    binary, objects = args[0], args[1:]
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL: " + what)

    header = run(["readelf", "-hlW", binary])
    check("Requesting program interpreter" in header,
          "the binary links dynamically (glibc's ifunc-selected routines stay outside it)")
    locals_ = local_function_files(binary)
    check(any(f in KERNEL_FILES for f in locals_.values()),
          "the symbol table names the kernel files (binary not stripped)")
    globals_ = global_kernel_functions(objects)

    disassembly = run(["objdump", "-d", "--no-show-raw-insn", "-w", binary]).splitlines()
    # Functions by address: two files' static functions may share a name.
    starts, kernel_starts = [], set()
    for line in disassembly:
        m = FUNC_HEADER.match(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        starts.append(addr)
        if locals_.get(addr) in KERNEL_FILES or (addr not in locals_ and m.group(2) in globals_):
            kernel_starts.add(addr)
    starts.sort()

    def in_kernel_function(target):
        i = bisect.bisect_right(starts, target) - 1
        return i >= 0 and starts[i] in kernel_starts

    kernel_funcs, offenders, calls, func, in_kernel, functions = {}, {}, {}, None, False, 0
    for line in disassembly:
        m = FUNC_HEADER.match(line)
        if m:
            func, functions = m.group(2), functions + 1
            in_kernel = int(m.group(1), 16) in kernel_starts
            continue
        m = INSN.match(line)
        if not m or func is None:
            continue
        b = DIRECT_BRANCH.match(m.group(2).strip())
        if b and in_kernel_function(int(b.group(1), 16)) and not in_kernel:
            calls.setdefault(func, f"{m.group(1)}: {m.group(2).strip()}")
        why = beyond_baseline(m.group(2))
        if not why:
            continue
        if in_kernel:
            kernel_funcs[func] = kernel_funcs.get(func, 0) + 1
        elif func not in offenders:
            offenders[func] = f"{m.group(1)}: {m.group(2).strip()} [{why}]"
    print(f"{binary}: {functions} functions disassembled")
    for f, n in sorted(kernel_funcs.items()):
        print(f"  kernel function {f}: {n} instructions beyond SSE2")
    check(len(kernel_funcs) > 0, "the audit sees the AVX kernels (else it proves nothing)")
    for f, first in sorted(offenders.items()):
        check(False, f"{f} (not a kernel file's function) needs more than SSE2, first at {first}")
    if not offenders:
        passed += 1
    for f, first in sorted(calls.items()):
        check(False, f"{f} branches into a kernel function directly, bypassing dispatch: {first}")
    if not calls:
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
