/* gemm_bench.c - micro-benchmark of the linear-layer kernels (not a test).
 *
 * For every kernel path this CPU supports, prints GOPS (2·m·n·k operations
 * per second, including the activation quantisation and the float
 * epilogue) of the int8 product on the shapes of the two real Firefox
 * models: base-memory (d = 384, ffn = 1536, vocab 32000; en->zh) and base
 * (d = 512, ffn = 2048, vocab 64000; zh->en), at m = 1 (one decoder step),
 * 32 (a batched decoder step) and 64 (a batch; the encoder's m is larger
 * still), with both weight distributions of `fanyi model synth --weights`:
 * uniform (a quarter of all pairs can saturate int16: the saturating
 * product) and trained (a handful: on a VNNI path, vpdpbusd plus fixes).
 * The "product" column says which one the layer took, "pairs" how many of
 * its pairs can saturate.
 *
 * First the arithmetic peak of one core per instruction sequence: the
 * rate of independent vpdpbusd (zmm and ymm), of the exact saturating
 * product (vpmaddubsw + vpdpwssd, and AVX2's vpmaddubsw + vpmaddwd +
 * vpaddd), measured by a register-only loop; the "% peak" column relates
 * each figure to its path's best instruction.
 *
 *     taskset -c 1 build/tests/nn/gemm_bench [--seconds S] [--path P] [--rows M,...] [--copies N]
 *         [--f32]
 *     build/tests/nn/gemm_bench --model DIR...
 *
 * --rows: the row counts m to measure instead of 1, 32, 64 (e.g. the
 * encoder's sentence lengths: 17, 33, 40).
 * --copies N: each int8 layer below the output layer's size in N copies,
 * run in turn, so that the weights come from where a decoder step finds
 * them (8 of 512x2048, 8 MB: beyond L2, from L3), not from L2 (the shape
 * column then reads NxNxK). At m = 1, layers that get the one-row copy
 * (fy_linear_prepare_one_row) are measured again with it ("/1row").
 * --seconds: time per case (default 0.6, best of 3 thirds; CPU time of
 * the thread, so other processes on the core matter less, though they
 * still share its caches). --path: only that kernel path (ref, avx2,
 * avxvnni, avx512vnni). --peaks: only the instruction peaks (bench/peer
 * reads them to relate end-to-end throughput to the machine's peak). --f32: also the float32
 * kernels. --model: for each model directory (or .bin file), every int8 tensor's count of pairs
 * that can saturate, the layers' total, and the share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/marian.h"
#include "model/synth.h"
#include "nn/cpu.h"
#include "nn/gemm.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- instruction peaks (one core, registers only) ---- */

typedef struct peak {
    const char *name;
    fy_isa needs;
    double macs; /* int8 multiply-adds per loop iteration */
    void (*run)(long iters, int *sink);
} peak;

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define PEAK_ITERS 20000000L

/* Independent chains, written in assembly so that the compiler neither
 * merges their common inputs nor spills: 12 accumulators (latency 4-5
 * cycles at 2 a cycle); the saturating AVX2 sequence has room for 6 in
 * sixteen ymm registers. The inputs' values do not matter. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void peak_dpbusd_zmm(long iters,
                                                                                   int *sink)
{
    for (long it = 0; it < iters; it++)
        __asm__ volatile("vpdpbusd %%zmm31, %%zmm30, %%zmm0\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm1\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm2\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm3\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm4\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm5\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm6\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm7\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm8\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm9\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm10\n\t"
                         "vpdpbusd %%zmm31, %%zmm30, %%zmm11\n\t" ::
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                               "xmm8", "xmm9", "xmm10", "xmm11");
    *sink = 0;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void peak_sat_zmm(long iters,
                                                                                int *sink)
{
    for (long it = 0; it < iters; it++)
        __asm__ volatile(
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm12\n\tvpdpwssd %%zmm29, %%zmm12, %%zmm0\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm13\n\tvpdpwssd %%zmm29, %%zmm13, %%zmm1\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm14\n\tvpdpwssd %%zmm29, %%zmm14, %%zmm2\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm15\n\tvpdpwssd %%zmm29, %%zmm15, %%zmm3\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm16\n\tvpdpwssd %%zmm29, %%zmm16, %%zmm4\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm17\n\tvpdpwssd %%zmm29, %%zmm17, %%zmm5\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm18\n\tvpdpwssd %%zmm29, %%zmm18, %%zmm6\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm19\n\tvpdpwssd %%zmm29, %%zmm19, %%zmm7\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm20\n\tvpdpwssd %%zmm29, %%zmm20, %%zmm8\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm21\n\tvpdpwssd %%zmm29, %%zmm21, %%zmm9\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm22\n\tvpdpwssd %%zmm29, %%zmm22, %%zmm10\n\t"
            "vpmaddubsw %%zmm31, %%zmm30, %%zmm23\n\tvpdpwssd %%zmm29, %%zmm23, %%zmm11\n\t" ::
                : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
                  "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18",
                  "xmm19", "xmm20", "xmm21", "xmm22", "xmm23");
    *sink = 0;
}

__attribute__((target("avx2,avxvnni"))) static void peak_dpbusd_ymm(long iters, int *sink)
{
    for (long it = 0; it < iters; it++)
        __asm__ volatile("%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm0\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm1\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm2\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm3\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm4\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm5\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm6\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm7\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm8\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm9\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm10\n\t"
                         "%{vex%} vpdpbusd %%ymm13, %%ymm12, %%ymm11\n\t" ::
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                               "xmm8", "xmm9", "xmm10", "xmm11");
    *sink = 0;
}

__attribute__((target("avx2"))) static void peak_sat_ymm(long iters, int *sink)
{
    for (long it = 0; it < iters; it++)
        __asm__ volatile("vpmaddubsw %%ymm13, %%ymm12, %%ymm6\n\tvpmaddwd %%ymm14, %%ymm6, "
                         "%%ymm6\n\tvpaddd %%ymm6, %%ymm0, %%ymm0\n\t"
                         "vpmaddubsw %%ymm13, %%ymm12, %%ymm7\n\tvpmaddwd %%ymm14, %%ymm7, "
                         "%%ymm7\n\tvpaddd %%ymm7, %%ymm1, %%ymm1\n\t"
                         "vpmaddubsw %%ymm13, %%ymm12, %%ymm8\n\tvpmaddwd %%ymm14, %%ymm8, "
                         "%%ymm8\n\tvpaddd %%ymm8, %%ymm2, %%ymm2\n\t"
                         "vpmaddubsw %%ymm13, %%ymm12, %%ymm9\n\tvpmaddwd %%ymm14, %%ymm9, "
                         "%%ymm9\n\tvpaddd %%ymm9, %%ymm3, %%ymm3\n\t"
                         "vpmaddubsw %%ymm13, %%ymm12, %%ymm10\n\tvpmaddwd %%ymm14, %%ymm10, "
                         "%%ymm10\n\tvpaddd %%ymm10, %%ymm4, %%ymm4\n\t"
                         "vpmaddubsw %%ymm13, %%ymm12, %%ymm11\n\tvpmaddwd %%ymm14, %%ymm11, "
                         "%%ymm11\n\tvpaddd %%ymm11, %%ymm5, %%ymm5\n\t" ::
                             : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                               "xmm8", "xmm9", "xmm10", "xmm11");
    *sink = 0;
}

static const peak peaks[] = {
    {"vpdpbusd zmm (avx512vnni)", FY_ISA_AVX512VNNI, 64.0 * 12, peak_dpbusd_zmm},
    {"vpmaddubsw+vpdpwssd zmm (exact)", FY_ISA_AVX512VNNI, 64.0 * 12, peak_sat_zmm},
    {"vpdpbusd ymm (avxvnni)", FY_ISA_AVXVNNI, 32.0 * 12, peak_dpbusd_ymm},
    {"vpmaddubsw+vpmaddwd+vpaddd ymm (avx2)", FY_ISA_AVX2, 32.0 * 6, peak_sat_ymm},
};
#else
static const peak peaks[] = {{"(no x86 vector peaks here)", FY_ISA_AVX2, 0, NULL}};
#endif
#define NPEAK (sizeof peaks / sizeof *peaks)

/* GOPS of each supported sequence into gops[] (0 when unsupported). */
static void measure_peaks(double *gops)
{
    int sink = 0;
    printf("%-40s %10s\n", "peak (1 core, registers only)", "GOPS");
    for (size_t p = 0; p < NPEAK; p++) {
        gops[p] = 0;
        if (!peaks[p].run || !fy_cpu_supports(peaks[p].needs)) {
            printf("%-40s %10s\n", peaks[p].name, "-");
            continue;
        }
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now();
            peaks[p].run(PEAK_ITERS, &sink);
            double g = 2.0 * peaks[p].macs * PEAK_ITERS / (now() - t0) * 1e-9;
            if (g > gops[p]) gops[p] = g;
        }
        printf("%-40s %10.1f\n", peaks[p].name, gops[p]);
    }
    if (sink == 42) printf(" \n"); /* keeps the loops' results alive */
}

/* The best instruction of a path: what "% peak" divides by. */
static double path_peak(fy_isa isa, const double *gops)
{
    if (NPEAK < 4) return 0;
    switch (isa) {
    case FY_ISA_AVX512VNNI:
        return gops[0];
    case FY_ISA_AVXVNNI:
        return gops[2];
    case FY_ISA_AVX2:
        return gops[3];
    default:
        return 0;
    }
}

/* ---- the kernels ---- */

/* Runs forward (over the nl layers in turn) until min_s has passed; returns
 * the best-of-3 GOPS. The clock is read once per block of products, the
 * block doubling until it lasts a millisecond: reading the thread's CPU
 * time is a system call (microseconds in a VM, as long as a one-row
 * product). */
static double bench_copies(fy_linear *const *l, int nl, const float *x, int m, const int32_t *cols,
                           int ncols, void *scratch, float *y, double min_s)
{
    int n = cols ? ncols : fy_linear_out(l[0]), k = fy_linear_in(l[0]);
    double best = 0;
    long block = 1;
    for (int rep = 0; rep < 3; rep++) {
        long iters = 0;
        double t0 = now(), t = 0;
        do {
            double b0 = t;
            for (long i = 0; i < block; i++)
                fy_linear_forward(l[(iters + i) % nl], x, m, cols, ncols, scratch, y);
            iters += block;
            t = now() - t0;
            if (t - b0 < 1e-3) block *= 2;
        } while (t < min_s / 3);
        double gops = 2.0 * m * n * k * iters / t * 1e-9;
        if (gops > best) best = gops;
    }
    return best;
}

static double bench(fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                    void *scratch, float *y, double min_s)
{
    return bench_copies(&l, 1, x, m, cols, ncols, scratch, y, min_s);
}

/* int8 weights [n][k] of the distribution, quantised with 127 / max|W|
 * as intgemm does: uniform or trained as `fanyi model synth` draws them. */
static void make_i8(fy_synth_weights dist, int8_t *w, size_t count, float *tmp)
{
    uint64_t stream = 0x5eed + (uint64_t)dist;
    fy_synth_fill_weights(dist, 0.05f, &stream, tmp, count);
    fy_i8_quantize(tmp, count, fy_i8_weight_mult(tmp, count), w);
}

typedef struct bufs {
    int8_t *w8[2]; /* uniform, trained */
    float *wf, *x, *y, *bias;
    int32_t *cols;
    void *scratch;
} bufs;

static const int shapes[][2] = {{384, 384}, {1536, 384}, {384, 1536}, {32000, 384},
                                {512, 512}, {2048, 512}, {512, 2048}, {64000, 512}};
enum { KMAX = 2048, NMAX = 64000, MMAX = 64, NSUB = 1000 };
static int ms[MMAX] = {1, 32, 64}, nms = 3; /* --rows */
enum { COPIES_MAX = 64 };
static int copies = 1; /* --copies */

static void print_row(const char *path, const char *type, const char *dist, int m,
                      const char *shape, const char *product, size_t pairs, double g, double pk)
{
    char pct[16] = "-";
    if (pk > 0) snprintf(pct, sizeof pct, "%.0f%%", 100.0 * g / pk);
    printf("%-11s %-5s %-8s %3d %-16s %-8s %8zu %9.2f %7s\n", path, type, dist, m, shape, product,
           pairs, g, pct);
    fflush(stdout);
}

/* One row on layers with the one-row copy (fy_linear_prepare_one_row):
 * 1 with *g and "/1row" added to shape, 0 where the layer gets none. */
static int bench_one_row(const bufs *b, int d, int n, int k, int nl, char *shape, double *g,
                         double min_s)
{
    fy_linear *ls[COPIES_MAX] = {0};
    int ok = 1;
    for (int c = 0; c < nl && ok; c++) {
        ls[c] = fy_linear_new_i8(b->w8[d], n, k, 1.0f, 64.0f, b->bias, NULL);
        ok = ls[c] && fy_linear_prepare_one_row(ls[c], NULL) == 0 &&
             fy_linear_one_row_bytes(ls[c]) > 0;
    }
    if (ok) {
        *g = bench_copies(ls, nl, b->x, 1, NULL, 0, b->scratch, b->y, min_s);
        strcat(shape, "/1row");
    }
    for (int c = 0; c < nl; c++) fy_linear_free(ls[c]);
    return ok;
}

static int bench_int8(fy_isa isa, const bufs *b, double min_s, double pk)
{
    static const char *const dists[2] = {"uniform", "trained"};
    for (int d = 0; d < 2; d++) {
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            int n = shapes[s][0], k = shapes[s][1];
            fy_error err = {0};
            fy_linear *ls[COPIES_MAX] = {0};
            int nl = n < 32000 ? copies : 1; /* the output layers are large enough */
            for (int c = 0; c < nl; c++) {
                ls[c] = fy_linear_new_i8(b->w8[d], n, k, 1.0f, 64.0f, b->bias, &err);
                if (!ls[c]) {
                    fprintf(stderr, "%s\n", err.msg);
                    for (int f = 0; f < c; f++) fy_linear_free(ls[f]);
                    return 1;
                }
            }
            fy_linear *l = ls[0];
            const char *product = fy_linear_vnni(l) ? "vnni" : "sat";
            for (int mi = 0; mi < nms; mi++) {
                int m = ms[mi];
                /* the reference path is slow: skip the huge ones */
                if (isa == FY_ISA_REF && (n >= 32000 || m > 1)) continue;
                char shape[32];
                snprintf(shape, sizeof shape, "%dx%d", n, k);
                if (nl > 1) snprintf(shape, sizeof shape, "%dx%dx%d", nl, n, k);
                double g = bench_copies(ls, nl, b->x, m, NULL, 0, b->scratch, b->y, min_s);
                print_row(fy_isa_name(isa), "int8", dists[d], m, shape, product,
                          fy_linear_sat_pairs(l), g, pk);
                if (m == 1 && n < 32000 && bench_one_row(b, d, n, k, nl, shape, &g, min_s))
                    print_row(fy_isa_name(isa), "int8", dists[d], m, shape, product,
                              fy_linear_sat_pairs(l), g, pk);
                if (n < 32000) continue;
                /* the shortlisted output layer */
                for (int i = 0; i < NSUB; i++) b->cols[i] = i * (n / NSUB) + (i % 7); /* sorted */
                snprintf(shape, sizeof shape, "%dof%dx%d", NSUB, n, k);
                g = bench(l, b->x, m, b->cols, NSUB, b->scratch, b->y, min_s);
                print_row(fy_isa_name(isa), "int8", dists[d], m, shape, product,
                          fy_linear_sat_pairs(l), g, pk);
            }
            for (int c = 0; c < nl; c++) fy_linear_free(ls[c]);
        }
    }
    return 0;
}

static int bench_f32(fy_isa isa, const bufs *b, double min_s)
{
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int n = shapes[s][0], k = shapes[s][1];
        fy_error err = {0};
        fy_linear *l = fy_linear_new_f32(b->wf, k, n, b->bias, &err);
        fy_linear *ls = n >= 32000 ? fy_linear_new_f32_nk(b->wf, n, k, b->bias, &err) : NULL;
        if (!l || (n >= 32000 && !ls)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        for (int mi = 0; mi < nms; mi++) {
            int m = ms[mi];
            if (isa == FY_ISA_REF && (n >= 32000 || m > 1)) continue;
            char shape[32];
            snprintf(shape, sizeof shape, "%dx%d", n, k);
            print_row(fy_isa_name(isa), "f32", "uniform", m, shape, "-", 0,
                      bench(l, b->x, m, NULL, 0, b->scratch, b->y, min_s), 0);
            if (!ls) continue;
            /* float output layers are built from [n][k] rows, as Wemb is */
            for (int i = 0; i < NSUB; i++) b->cols[i] = i * (n / NSUB) + (i % 7);
            snprintf(shape, sizeof shape, "%dof%dx%d", NSUB, n, k);
            print_row(fy_isa_name(isa), "f32", "uniform", m, shape, "-", 0,
                      bench(ls, b->x, m, b->cols, NSUB, b->scratch, b->y, min_s), 0);
        }
        fy_linear_free(l);
        fy_linear_free(ls);
    }
    return 0;
}

/* ---- pairs that can saturate in a model's int8 tensors ---- */

/* The model file of a directory (the first model.*.bin in it), or path. */
static fy_marian *open_model(const char *path, fy_error *err)
{
    fy_marian *m = fy_marian_open(path, err);
    if (m) return m;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls '%s'/model.*.bin 2>/dev/null | head -n 1", path);
    FILE *p = popen(cmd, "r");
    char file[4096] = "";
    if (p) {
        if (!fgets(file, sizeof file, p)) file[0] = '\0';
        pclose(p);
    }
    file[strcspn(file, "\n")] = '\0';
    return file[0] ? fy_marian_open(file, err) : NULL;
}

static int count_model(const char *path)
{
    fy_error err = {0};
    fy_marian *m = open_model(path, &err);
    if (!m) {
        fprintf(stderr, "gemm_bench: %s: %s\n", path, err.msg[0] ? err.msg : "no model file");
        return 1;
    }
    size_t pairs = 0, sat = 0, worst_n = 0;
    double worst = 0;
    const char *worst_name = "-";
    for (size_t i = 0; i < fy_marian_tensor_count(m); i++) {
        const fy_tensor *t = fy_marian_tensor_at(m, i);
        if (t->type != FY_DT_INTGEMM8 || t->ndim != 2 || t->count < 64) continue;
        /* weights are stored [out][in] (rows of in = k), Wemb [vocab][d] */
        int k = strstr(t->name, "Wemb") ? t->shape[1] : t->shape[0];
        size_t rows = t->count / (size_t)k, n = fy_i8_saturating_pairs(t->data, rows, k);
        size_t all = rows * (size_t)(k / 2);
        pairs += all;
        sat += n;
        if ((double)n / (double)all > worst) {
            worst = (double)n / (double)all;
            worst_name = t->name;
            worst_n = n;
        }
    }
    printf("model %s: %zu of %zu int8 weight pairs can saturate int16 (%.4f%%); most: %s, "
           "%zu (%.4f%%)\n",
           fy_marian_path(m), sat, pairs, 100.0 * (double)sat / (double)(pairs ? pairs : 1),
           worst_name, worst_n, 100.0 * worst);
    fy_marian_free(m);
    return 0;
}

/* --rows: a comma-separated list of row counts (1 .. MMAX). */
static int parse_rows(const char *list)
{
    nms = 0;
    for (const char *p = list; *p && nms < MMAX;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > MMAX || (*end && *end != ',')) return -1;
        ms[nms++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return nms ? 0 : -1;
}

int main(int argc, char **argv)
{
    double min_s = 0.6;
    int f32 = 0, rc = 0, nmodels = 0, only = -1, peaks_only = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            min_s = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--path") && i + 1 < argc) {
            fy_isa isa;
            if (fy_isa_parse(argv[++i], &isa)) {
                fprintf(stderr, "gemm_bench: unknown path %s\n", argv[i]);
                return 2;
            }
            only = (int)isa;
        } else if (!strcmp(argv[i], "--rows") && i + 1 < argc) {
            if (parse_rows(argv[++i])) {
                fprintf(stderr, "gemm_bench: --rows wants a list of 1..%d (1,32,64)\n", MMAX);
                return 2;
            }
        } else if (!strcmp(argv[i], "--copies") && i + 1 < argc) {
            copies = atoi(argv[++i]);
            if (copies < 1 || copies > COPIES_MAX) {
                fprintf(stderr, "gemm_bench: --copies wants 1..%d\n", COPIES_MAX);
                return 2;
            }
        } else if (!strcmp(argv[i], "--peaks")) {
            peaks_only = 1;
        } else if (!strcmp(argv[i], "--f32")) {
            f32 = 1;
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
            rc |= count_model(argv[++i]);
            nmodels++;
        } else {
            fprintf(stderr,
                    "usage: gemm_bench [--seconds S] [--path P] [--rows M,...] [--copies N] "
                    "[--f32] [--peaks] [--model DIR]...\n");
            return 2;
        }
    }
    if (nmodels) return rc;
    if (!(min_s > 0)) min_s = 0.6;
    double gops[NPEAK];
    measure_peaks(gops);
    if (peaks_only) return 0;

    bufs b;
    size_t wcount = (size_t)NMAX * KMAX;
    b.w8[0] = malloc(wcount);
    b.w8[1] = malloc(wcount);
    float *tmp = malloc(wcount * sizeof(float));
    b.wf = malloc(sizeof(float) * (size_t)NMAX * 512);
    b.x = malloc(sizeof(float) * MMAX * KMAX);
    b.y = malloc(sizeof(float) * (size_t)MMAX * NMAX);
    b.bias = malloc(sizeof(float) * NMAX);
    b.cols = malloc(sizeof(int32_t) * NSUB);
    b.scratch = aligned_alloc(64, (size_t)64 * 1024 * 1024);
    if (!b.w8[0] || !b.w8[1] || !tmp || !b.wf || !b.x || !b.y || !b.bias || !b.cols || !b.scratch)
        return 2;
    srand(1);
    for (size_t i = 0; i < wcount; i++) b.w8[0][i] = (int8_t)(rand() % 255 - 127);
    make_i8(FY_SYNTH_WEIGHTS_TRAINED, b.w8[1], wcount, tmp);
    free(tmp);
    for (size_t i = 0; i < (size_t)NMAX * 512; i++) b.wf[i] = (float)(rand() % 2001 - 1000) * 1e-3f;
    /* activations like layer-norm outputs: the quantiser's 8-sigma range */
    for (int i = 0; i < MMAX * KMAX; i++) b.x[i] = (float)(rand() % 2001 - 1000) * 1e-3f;
    for (int i = 0; i < NMAX; i++) b.bias[i] = 0.01f * (i % 7);

    printf("\n%-11s %-5s %-8s %3s %-16s %-8s %8s %9s %7s\n", "path", "type", "weights", "m",
           "n x k", "product", "pairs", "GOPS", "% peak");
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI && !rc; isa++) {
        if (only >= 0 && isa != only) continue;
        if (fy_cpu_force_isa((fy_isa)isa) != 0) {
            printf("%-11s (not supported by this CPU)\n", fy_isa_name((fy_isa)isa));
            continue;
        }
        rc = bench_int8((fy_isa)isa, &b, min_s, path_peak((fy_isa)isa, gops));
        if (!rc && f32) rc = bench_f32((fy_isa)isa, &b, min_s);
    }
    free(b.w8[0]);
    free(b.w8[1]);
    free(b.wf);
    free(b.x);
    free(b.y);
    free(b.bias);
    free(b.cols);
    free(b.scratch);
    return rc;
}
