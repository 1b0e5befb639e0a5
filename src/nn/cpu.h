/* cpu.h - CPU feature detection and the choice of kernel path.
 *
 * The features are read once (cpuid + xgetbv, so a path is used only when
 * the OS saves its registers). The best supported path is selected once;
 * the environment variable FANYI_KERNEL=ref|avx2|avxvnni|avx512vnni forces one
 * (an unsupported or unknown value prints a one-line error on stderr and
 * keeps the automatic choice). Every path computes identical int8 results,
 * so the choice changes speed, never a translation.
 */
#ifndef FY_NN_CPU_H
#define FY_NN_CPU_H

/* In order of preference. avxvnni: AVX2 plus AVX-VNNI (vpdpbusd on 256-bit
 * vectors: Alder Lake and later Intel cores, Zen 5); avx512vnni: AVX-512 F,
 * BW, VL and VNNI (Ice Lake / Cascade Lake servers and later, Zen 4 and
 * later). A CPU may have either without the other. */
typedef enum { FY_ISA_REF, FY_ISA_AVX2, FY_ISA_AVXVNNI, FY_ISA_AVX512VNNI } fy_isa;

/* The selected path (first call detects; thread-safe). */
fy_isa fy_cpu_isa(void);

/* "ref", "avx2", "avxvnni", "avx512vnni"; "?" for an out-of-range value. */
const char *fy_isa_name(fy_isa isa);

/* 1 if this CPU (and OS) can run isa's kernels, else 0. FY_ISA_REF is always 1. */
int fy_cpu_supports(fy_isa isa);

/* 1 if the CPU has isa but its kernels gave other bits than the reference
 * in the check at start-up (fy_cpu_supports then says 0), else 0. */
int fy_cpu_rejected(fy_isa isa);

/* Parses a name fy_isa_name gives into *out; returns 0 or FY_EINVAL. */
int fy_isa_parse(const char *name, fy_isa *out);

/* For tests and benchmarks: makes isa the selected path for layers created
 * afterwards (an existing fy_linear keeps the path it was packed for).
 * Returns 0, or FY_EUNSUPPORTED if the CPU lacks it. Not for use while other
 * threads create layers. */
int fy_cpu_force_isa(fy_isa isa);

#endif
