/* cpu.c - reads the CPU's features once and selects the kernel table.
 *
 * The selection happens on first use under pthread_once, so concurrent
 * first callers agree. FANYI_KERNEL overrides the automatic choice; an
 * unsupported request is reported once on stderr (the process keeps working
 * on the best supported path: a kernel choice must never stop a server).
 */
#include "nn/cpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gemm_impl.h"
#include "util/error.h"

#ifdef FY_NN_X86
#include <cpuid.h>
#endif

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static int cpu_supported[3];
static int cpu_selected; /* fy_isa; accessed atomically after init */

static const char *const isa_names[3] = {"ref", "avx2", "avx512vnni"};

#ifdef FY_NN_X86
/* XCR0: which register states the OS saves on a context switch. */
static unsigned long long cpu_xcr0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void cpu_detect(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx) return;
    unsigned long long xcr0 = cpu_xcr0();
    int os_ymm = (xcr0 & 0x6) == 0x6;
    int os_zmm = (xcr0 & 0xe6) == 0xe6; /* XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    int avx2 = (b >> 5) & 1;
    int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    int vnni = (c >> 11) & 1;
    cpu_supported[FY_ISA_AVX2] = os_ymm && avx2 && fma;
    cpu_supported[FY_ISA_AVX512VNNI] =
        cpu_supported[FY_ISA_AVX2] && os_zmm && avx512f && avx512bw && avx512vl && vnni;
}
#else
static void cpu_detect(void)
{
}
#endif

static void cpu_init(void)
{
    cpu_supported[FY_ISA_REF] = 1;
    cpu_detect();
    int best = FY_ISA_REF;
    if (cpu_supported[FY_ISA_AVX2]) best = FY_ISA_AVX2;
    if (cpu_supported[FY_ISA_AVX512VNNI]) best = FY_ISA_AVX512VNNI;
    const char *env = getenv("FANYI_KERNEL");
    if (env && *env) {
        fy_isa want;
        if (fy_isa_parse(env, &want) != 0)
            fprintf(stderr,
                    "fanyi: FANYI_KERNEL=%s: unknown kernel (ref, avx2, avx512vnni); "
                    "using %s\n",
                    env, isa_names[best]);
        else if (!cpu_supported[want])
            fprintf(stderr, "fanyi: FANYI_KERNEL=%s: this CPU does not support it; using %s\n", env,
                    isa_names[best]);
        else
            best = want;
    }
    __atomic_store_n(&cpu_selected, best, __ATOMIC_RELEASE);
}

fy_isa fy_cpu_isa(void)
{
    pthread_once(&cpu_once, cpu_init);
    return (fy_isa)__atomic_load_n(&cpu_selected, __ATOMIC_ACQUIRE);
}

const char *fy_isa_name(fy_isa isa)
{
    if ((int)isa < 0 || (int)isa > FY_ISA_AVX512VNNI) return "?";
    return isa_names[isa];
}

int fy_cpu_supports(fy_isa isa)
{
    pthread_once(&cpu_once, cpu_init);
    if ((int)isa < 0 || (int)isa > FY_ISA_AVX512VNNI) return 0;
    return cpu_supported[isa];
}

int fy_isa_parse(const char *name, fy_isa *out)
{
    for (int i = 0; i < 3; i++) {
        if (name && strcmp(name, isa_names[i]) == 0) {
            *out = (fy_isa)i;
            return 0;
        }
    }
    return FY_EINVAL;
}

int fy_cpu_force_isa(fy_isa isa)
{
    if (!fy_cpu_supports(isa)) return FY_EUNSUPPORTED;
    __atomic_store_n(&cpu_selected, (int)isa, __ATOMIC_RELEASE);
    return 0;
}

const fy_gemm_kernels *fy_gemm_kernels_for(fy_isa isa)
{
    switch (isa) {
    case FY_ISA_REF:
        return &fy_gemm_ref;
#ifdef FY_NN_X86
    case FY_ISA_AVX2:
        return &fy_gemm_avx2;
    case FY_ISA_AVX512VNNI:
        return &fy_gemm_avx512vnni;
#endif
    default:
        return NULL;
    }
}

const fy_gemm_kernels *fy_gemm_kernels_current(void)
{
    const fy_gemm_kernels *k = fy_gemm_kernels_for(fy_cpu_isa());
    return k ? k : &fy_gemm_ref;
}
