/* gemm_bench.c - micro-benchmark of the linear-layer kernels (not a test).
 *
 * Prints GOPS (2·m·n·k operations per second, including the activation
 * quantisation and the float epilogue) for every kernel path this CPU
 * supports, on the shapes of the two real Firefox models: base-memory
 * (d = 384, ffn = 1536, vocab 32000; en->zh) and base (d = 512, ffn = 2048,
 * vocab 64000; zh->en), at m = 1 (one decoder step) and m = 64 (a batch).
 * Single thread; pin it for stable figures:
 *     taskset -c 1 build/tests/nn/gemm_bench [seconds-per-case]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/cpu.h"
#include "nn/gemm.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs forward until min_s has passed; returns the best-of-3 GOPS. */
static double bench(fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                    void *scratch, float *y, double min_s)
{
    int n = cols ? ncols : fy_linear_out(l), k = fy_linear_in(l);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        long iters = 0;
        double t0 = now(), t;
        do {
            fy_linear_forward(l, x, m, cols, ncols, scratch, y);
            iters++;
            t = now() - t0;
        } while (t < min_s / 3);
        double gops = 2.0 * m * n * k * iters / t * 1e-9;
        if (gops > best) best = gops;
    }
    return best;
}

int main(int argc, char **argv)
{
    double min_s = argc > 1 ? atof(argv[1]) : 0.6;
    if (min_s <= 0) min_s = 0.6;
    static const int shapes[][2] = {{384, 384}, {1536, 384}, {384, 1536}, {32000, 384},
                                    {512, 512}, {2048, 512}, {512, 2048}, {64000, 512}};
    static const int ms[] = {1, 64};
    const int kmax = 2048, nmax = 64000, mmax = 64, nsub = 1000;
    int8_t *w8 = malloc((size_t)nmax * kmax);
    float *wf = malloc(sizeof(float) * (size_t)nmax * 512);
    float *x = malloc(sizeof(float) * mmax * kmax);
    float *y = malloc(sizeof(float) * (size_t)mmax * nmax);
    float *bias = malloc(sizeof(float) * nmax);
    int32_t *cols = malloc(sizeof(int32_t) * nsub);
    void *scratch = aligned_alloc(64, (size_t)64 * 1024 * 1024);
    if (!w8 || !wf || !x || !y || !bias || !cols || !scratch) return 2;
    srand(1);
    for (size_t i = 0; i < (size_t)nmax * kmax; i++) w8[i] = (int8_t)(rand() % 255 - 127);
    for (size_t i = 0; i < (size_t)nmax * 512; i++) wf[i] = (float)(rand() % 2001 - 1000) * 1e-3f;
    for (int i = 0; i < mmax * kmax; i++) x[i] = (float)(rand() % 2001 - 1000) * 1e-3f;
    for (int i = 0; i < nmax; i++) bias[i] = 0.01f * (i % 7);

    printf("%-11s %-5s %3s %-14s %10s\n", "path", "type", "m", "n x k", "GOPS");
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI; isa++) {
        if (fy_cpu_force_isa((fy_isa)isa) != 0) {
            printf("%-11s (not supported by this CPU)\n", fy_isa_name((fy_isa)isa));
            continue;
        }
        for (int t = 0; t < 2; t++) {
            for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
                int n = shapes[s][0], k = shapes[s][1];
                fy_error err = {0};
                fy_linear *l = t == 0 ? fy_linear_new_i8(w8, n, k, 1.0f, 64.0f, bias, &err)
                                      : fy_linear_new_f32(wf, k, n, bias, &err);
                if (!l) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                for (size_t mi = 0; mi < sizeof ms / sizeof *ms; mi++) {
                    int m = ms[mi];
                    /* the reference path is slow: shorter runs, skip the huge ones */
                    if (isa == FY_ISA_REF && n >= 32000 && m == 64) continue;
                    char shape[32];
                    snprintf(shape, sizeof shape, "%dx%d", n, k);
                    double g = bench(l, x, m, NULL, 0, scratch, y, min_s);
                    printf("%-11s %-5s %3d %-14s %10.2f\n", fy_isa_name((fy_isa)isa),
                           t ? "f32" : "int8", m, shape, g);
                    if (n >= 32000) {
                        /* the shortlisted output layer; float ones are built
                         * from [n][k] rows (fy_linear_new_f32_nk), as Wemb is */
                        fy_linear *ls = t ? fy_linear_new_f32_nk(wf, n, k, bias, &err) : l;
                        if (!ls) return 1;
                        for (int i = 0; i < nsub; i++)
                            cols[i] = i * (n / nsub) + (i % 7); /* sorted */
                        snprintf(shape, sizeof shape, "%dof%dx%d", nsub, n, k);
                        g = bench(ls, x, m, cols, nsub, scratch, y, min_s);
                        printf("%-11s %-5s %3d %-14s %10.2f\n", fy_isa_name((fy_isa)isa),
                               t ? "f32" : "int8", m, shape, g);
                        if (ls != l) fy_linear_free(ls);
                    }
                    fflush(stdout);
                }
                fy_linear_free(l);
            }
        }
    }
    free(w8);
    free(wf);
    free(x);
    free(y);
    free(bias);
    free(cols);
    free(scratch);
    return 0;
}
