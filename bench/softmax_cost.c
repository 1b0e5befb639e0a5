/* softmax_cost.c - what an exact per-token confidence would cost (not a
 * test; bench/glossary runs it): the log of the softmax's denominator over
 * a decoding step's columns, log(sum(exp(l_c - l_max))), with the engine's
 * own exp (nn/ops.h: fy_expf, the reference's), per row, for shortlist
 * widths and the whole vocabulary. A softmax confidence needs one per
 * output token; the engine computes none (it compares raw logits), which
 * is why the confidence it reports is the path score and the margin
 * (docs/api.md, "Confidence").
 *
 *     build/tests/nn/softmax_cost      -> one JSON line: ns per row by width
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nn/ops.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
    static const int widths[] = {512, 1024, 2048, 32000};
    float *l = malloc(32000 * sizeof *l);
    unsigned seed = 1;
    for (int i = 0; i < 32000; i++) {
        seed = seed * 1103515245u + 12345u;
        l[i] = (float)((seed >> 8) % 2000) / 100.0f - 10.0f;
    }
    volatile float sink = 0;
    printf("{");
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        int n = widths[w];
        long reps = 0;
        double t0 = now_s(), t;
        do {
            float m = l[0], s = 0;
            for (int i = 1; i < n; i++) m = l[i] > m ? l[i] : m;
            for (int i = 0; i < n; i++) s += fy_expf(l[i] - m);
            sink += logf(s);
            reps++;
        } while ((t = now_s() - t0) < 0.5);
        printf("%s\"%d\":%.0f", w ? "," : "", n, t / (double)reps * 1e9);
    }
    printf("}\n");
    free(l);
    return sink == 12345.0f;
}
