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

/* Runs one small int8 and float product, including saturating pairs, on
 * path k and on the reference, and reports whether every result is
 * bit-identical. A fast path that has never run on this CPU model (AVX-512
 * machines were not available to us while writing it) thus proves itself
 * before it touches a translation; it costs microseconds, once. */
static int kernels_agree(const fy_gemm_kernels *k)
{
    enum { M = 3, K = 128, N = 24, NC = 5 };
    static _Alignas(64) float x[M * K], panels[((N + 15) / 16) * K * 16];
    static _Alignas(64) uint8_t a_ref[M * K], a_k[M * K];
    static _Alignas(64) int8_t w[N * K];
    static const int32_t cols[NC] = {0, 3, 8, 17, 23};
    float bias[N], y_ref[M * N], y_k[M * N];
    uint32_t r = 12345u;
    for (int i = 0; i < M * K; i++) {
        r = r * 1103515245u + 12345u;
        x[i] = (float)((int)(r >> 16) % 400 - 200) / 50.0f; /* some beyond ±127/alpha */
    }
    for (int i = 0; i < N * K; i++) {
        r = r * 1103515245u + 12345u;
        w[i] = (int8_t)(i % 7 == 0 ? 127 : (int)(r >> 16) % 255 - 127);
    }
    for (int i = 0; i < (int)(sizeof panels / sizeof *panels); i++)
        panels[i] = (float)(i % 13) / 7.0f;
    for (int j = 0; j < N; j++) bias[j] = (float)j / 3.0f;
    fy_gemm_ref.quantize_u8(x, M * K, 63.5f, a_ref);
    k->quantize_u8(x, M * K, 63.5f, a_k);
    if (memcmp(a_ref, a_k, sizeof a_ref)) return 0;
    int ok = 1;
    for (int subset = 0; subset < 2 && ok; subset++) {
        const int32_t *c = subset ? cols : NULL;
        int nc = subset ? NC : N;
        fy_gemm_ref.i8_gemm(a_ref, M, K, w, c, nc, 0.001f, bias, y_ref, nc);
        k->i8_gemm(a_ref, M, K, w, c, nc, 0.001f, bias, y_k, nc);
        ok = !memcmp(y_ref, y_k, (size_t)(M * nc) * sizeof(float));
    }
    if (!ok) return 0;
    fy_gemm_ref.f32_gemm(x, M, K, panels, N, bias, y_ref, N);
    k->f32_gemm(x, M, K, panels, N, bias, y_k, N);
    return !memcmp(y_ref, y_k, sizeof y_ref);
}

/* The best supported path that agrees with the reference. */
static int best_verified(void)
{
    for (int isa = FY_ISA_AVX512VNNI; isa > FY_ISA_REF; isa--) {
        const fy_gemm_kernels *k = fy_gemm_kernels_for((fy_isa)isa);
        if (!cpu_supported[isa] || !k) continue;
        if (kernels_agree(k)) return isa;
        fprintf(stderr,
                "fanyi: the %s kernels disagree with the reference on this CPU; not using them\n",
                isa_names[isa]);
        cpu_supported[isa] = 0;
    }
    return FY_ISA_REF;
}

static void cpu_init(void)
{
    cpu_supported[FY_ISA_REF] = 1;
    cpu_detect();
    int best = best_verified();
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
