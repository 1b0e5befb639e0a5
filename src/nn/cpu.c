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
#define NISA (FY_ISA_AVX512VNNI + 1)
static int cpu_supported[NISA];
static int cpu_rejected[NISA]; /* failed kernels_agree */
static int cpu_selected;       /* fy_isa; accessed atomically after init */

static const char *const isa_names[NISA] = {"ref", "avx2", "avxvnni", "avx512vnni"};

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
    int avxvnni = __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1);
    cpu_supported[FY_ISA_AVX2] = os_ymm && avx2 && fma;
    cpu_supported[FY_ISA_AVXVNNI] = cpu_supported[FY_ISA_AVX2] && avxvnni;
    cpu_supported[FY_ISA_AVX512VNNI] =
        cpu_supported[FY_ISA_AVX2] && os_zmm && avx512f && avx512bw && avx512vl && vnni;
}
#else
static void cpu_detect(void)
{
}
#endif

/* The pair lists of w ([n][k]) as gemm.c builds them (gemm_impl.h):
 * every pair with |w0 + w1| > 129. Returns 0, or -1 past cap entries. */
static int sat_lists(const int8_t *w, int n, int k, uint64_t *any, uint32_t *off, uint16_t *pair,
                     int cap)
{
    int at = 0;
    for (int j = 0; j < n; j++) {
        off[j] = (uint32_t)at;
        for (int p = 0; p < k / 2; p++) {
            int s = w[j * k + 2 * p] + w[j * k + 2 * p + 1];
            if (s <= 129 && s >= -129) continue;
            if (at == cap) return -1;
            pair[at++] = (uint16_t)p;
            any[j / 64] |= 1ull << (j % 64);
        }
    }
    off[n] = (uint32_t)at;
    return 0;
}

/* Path k's int8 entries against the reference's on a, all columns and a
 * subset, with bias: 1 when every result is bit-identical. */
static int i8_agree(const fy_gemm_kernels *k, const uint8_t *a, const uint8_t *ap, int m, int kk,
                    const int8_t *w, int n, const fy_i8_sat *sat, const float *bias, float *y_ref,
                    float *y_k)
{
    static const int32_t cols[5] = {0, 3, 8, 17, 23};
    for (int subset = 0; subset < 2; subset++) {
        const int32_t *c = subset ? cols : NULL;
        int nc = subset ? 5 : n;
        size_t bytes = (size_t)(m * nc) * sizeof(float);
        fy_gemm_ref.i8_gemm(a, m, kk, w, c, nc, 0.001f, bias, y_ref, nc);
        k->i8_gemm(a, m, kk, w, c, nc, 0.001f, bias, y_k, nc);
        if (memcmp(y_ref, y_k, bytes)) return 0;
        if (k->i8_gemm_vnni) {
            k->i8_gemm_vnni(a, m, kk, w, sat, c, nc, 0.001f, bias, y_k, nc);
            if (memcmp(y_ref, y_k, bytes)) return 0;
        }
        if (!k->pack_a16) continue;
        for (int product = 0; product < 2; product++) {
            k->i8_gemm_p16(a, ap, m, kk, w, product ? sat : NULL, c, nc, 0.001f, bias, y_k, nc);
            if (memcmp(y_ref, y_k, bytes)) return 0;
        }
    }
    return 1;
}

/* Runs small int8 and float products on path k and on the reference and
 * reports whether every result is bit-identical. The int8 case has
 * weights where a third of the pairs can saturate and activations that
 * make them: random, all 254, and 254 / 0 alternating; so the VNNI entry's
 * saturation fixes are exercised too. A fast path that has never run on
 * this CPU model thus proves itself before it touches a translation; it
 * costs microseconds, once. */
static int kernels_agree(const fy_gemm_kernels *k)
{
    enum { M = 5, K = 128, N = 24 };
    static _Alignas(64) float x[M * K], panels[((N + 15) / 16) * K * 16];
    static _Alignas(64) uint8_t a_ref[M * K], a_k[M * K], a_p16[FY_I8_P16_BYTES(M, K)];
    static _Alignas(64) int8_t w[N * K];
    static uint64_t any[(N + 63) / 64];
    static uint32_t off[N + 1];
    static uint16_t pair[N * K / 2];
    float bias[N], y_ref[M * N], y_k[M * N];
    uint32_t r = 12345u;
    for (int i = 0; i < M * K; i++) {
        r = r * 1103515245u + 12345u;
        float v = (float)((int)(r >> 16) % 400 - 200) / 50.0f; /* some beyond ±127/alpha */
        if (i / K == 2) v = 5.0f;                              /* u = 254 */
        if (i / K == 3) v = i % 2 ? 5.0f : -5.0f;              /* 254, 0, ... */
        x[i] = v;
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
    if (sat_lists(w, N, K, any, off, pair, N * K / 2)) return 0;
    fy_i8_sat sat = {any, off, pair, 0};
    if (k->pack_a16) k->pack_a16(a_ref, M, K, a_p16);
    if (!i8_agree(k, a_ref, a_p16, M, K, w, N, &sat, bias, y_ref, y_k)) return 0;
    fy_gemm_ref.f32_gemm(x, M, K, panels, N, bias, y_ref, N);
    k->f32_gemm(x, M, K, panels, N, bias, y_k, N);
    return !memcmp(y_ref, y_k, (size_t)(M * N) * sizeof(float));
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
        cpu_rejected[isa] = 1;
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
                    "fanyi: FANYI_KERNEL=%s: unknown kernel (ref, avx2, avxvnni, avx512vnni); "
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
    if ((int)isa < 0 || (int)isa >= NISA) return "?";
    return isa_names[isa];
}

int fy_cpu_supports(fy_isa isa)
{
    pthread_once(&cpu_once, cpu_init);
    if ((int)isa < 0 || (int)isa >= NISA) return 0;
    return cpu_supported[isa];
}

int fy_cpu_rejected(fy_isa isa)
{
    pthread_once(&cpu_once, cpu_init);
    return (int)isa >= 0 && (int)isa < NISA && cpu_rejected[isa];
}

int fy_isa_parse(const char *name, fy_isa *out)
{
    for (int i = 0; i < NISA; i++) {
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
    case FY_ISA_AVXVNNI:
        return &fy_gemm_avxvnni;
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
