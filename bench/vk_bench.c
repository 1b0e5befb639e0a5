/* vk_bench.c - speed of the Vulkan int8 products on one device (not a
 * test; no result is checked here: tests/gpu/test_vk_ops does that).
 *
 * Usage: vk_bench [vulkan:N]. For each shape m x n x k (activations x
 * outputs x inputs) it records `reps` products in one command buffer
 * (dependent: a barrier between them) and prints ms per product and
 * GOP/s (2·m·n·k operations), for the pair kernel (gemm_i8), the dot
 * kernel with its fixups (gemm_i8_dot, devices with integer dot products)
 * and per-row column lists (gemm_i8_rows). Random weights in [-127, 127]
 * (about a quarter of the pairs need fixups), activations in [0, 254].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/vk/vk.h"
#include "nn/vk/vk_ops.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static fy_vk_buf *buf(fy_vk_dev *dev, const void *src, size_t bytes)
{
    fy_error err = {0};
    fy_vk_buf *b = fy_vk_buf_new(dev, bytes, FY_VK_MEM_DEVICE, &err);
    if (!b || (src && fy_vk_upload(b, 0, src, bytes, &err))) {
        fprintf(stderr, "vk_bench: %s\n", err.msg);
        exit(1);
    }
    return b;
}

typedef enum { PAIR, DOT, ROWS } kind;

static double run(fy_vk_cmd *c, kind how, const fy_vk_i8_layer *l, fy_vk_buf *a, fy_vk_buf *y,
                  fy_vk_buf *fix, fy_vk_buf *pairs, fy_vk_buf *cols, fy_vk_buf *rowcols, int m,
                  int reps)
{
    fy_error err = {0};
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        if (fy_vk_cmd_begin(c, &err)) break;
        for (int r = 0; r < reps; r++) {
            if (how == PAIR)
                fy_vk_op_gemm_i8(c, l, fy_vk_at(a, 0), m, fy_vk_at(NULL, 0), l->n, 0, 0,
                                 fy_vk_at(y, 0), l->n);
            else if (how == DOT)
                fy_vk_op_gemm_i8_dot(c, l, fy_vk_at(fix, 0), fy_vk_at(pairs, 0), fy_vk_at(a, 0), m,
                                     fy_vk_at(NULL, 0), l->n, 0, 0, fy_vk_at(y, 0), l->n);
            else
                fy_vk_op_gemm_i8_rows(c, l, fy_vk_at(a, 0), m, fy_vk_at(cols, 0),
                                      fy_vk_at(rowcols, 0), l->n, 0, fy_vk_at(y, 0), l->n);
        }
        double t0 = now();
        if (fy_vk_cmd_run(c, FY_VK_TIMEOUT_NS * 10, &err)) {
            fprintf(stderr, "vk_bench: %s\n", err.msg);
            return -1;
        }
        double t = (now() - t0) / reps;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    static const int shapes[][3] = {
        {1, 512, 512}, {64, 512, 512}, {256, 2048, 512}, {256, 512, 2048}, {64, 32000, 512}};
    fy_error err = {0};
    fy_vk *vk;
    if (fy_vk_open(&vk, &err)) {
        printf("vk_bench: %s\n", err.msg);
        return 0;
    }
    int idx = fy_vk_pick_device(vk, argc > 1 ? argv[1] : NULL);
    fy_vk_dev *dev = idx >= 0 ? fy_vk_dev_new(vk, idx, 0, &err) : NULL;
    fy_vk_cmd *c = dev ? fy_vk_cmd_new(dev, 0, &err) : NULL;
    if (!c) {
        printf("vk_bench: %s\n", idx < 0 ? "no usable Vulkan device" : err.msg);
        return 0;
    }
    const fy_vk_info *in = fy_vk_dev_info(dev);
    printf("device vulkan:%d %s (%s)\n", idx, in->name, in->driver);
    printf("%-18s %10s %8s %10s %8s %10s %8s\n", "m x n x k", "pair ms", "GOP/s", "dot ms", "GOP/s",
           "rows ms", "GOP/s");
    srand(1);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        int8_t *w = malloc((size_t)n * k);
        uint8_t *a = malloc((size_t)m * k);
        float *bias = calloc((size_t)n, sizeof(float));
        int32_t *cols = malloc(sizeof(int32_t) * n), *rowcols = malloc(sizeof(int32_t) * 2 * m);
        uint32_t *fix = malloc(sizeof(uint32_t) * (n + 1));
        for (size_t i = 0; i < (size_t)n * k; i++) w[i] = (int8_t)(rand() % 255 - 127);
        for (size_t i = 0; i < (size_t)m * k; i++) a[i] = (uint8_t)(rand() % 255);
        for (int j = 0; j < n; j++) cols[j] = j;
        for (int i = 0; i < m; i++) rowcols[2 * i] = 0, rowcols[2 * i + 1] = n;
        size_t np = fy_vk_i8_fixups(w, n, k, fix, NULL);
        uint32_t *pairs = malloc(sizeof(uint32_t) * (np + 1));
        fy_vk_i8_fixups(w, n, k, fix, pairs);
        fy_vk_buf *bw = buf(dev, w, (size_t)n * k), *ba = buf(dev, a, (size_t)m * k);
        fy_vk_buf *bb = buf(dev, bias, sizeof(float) * n),
                  *by = buf(dev, NULL, sizeof(float) * m * n);
        fy_vk_buf *bf = buf(dev, fix, sizeof(uint32_t) * (n + 1));
        fy_vk_buf *bp = buf(dev, pairs, sizeof(uint32_t) * (np + 1));
        fy_vk_buf *bc = buf(dev, cols, sizeof(int32_t) * n),
                  *br = buf(dev, rowcols, sizeof(int32_t) * 2 * m);
        fy_vk_i8_layer l = {
            .w = fy_vk_at(bw, 0), .bias = fy_vk_at(bb, 0), .n = n, .k = k, .unquant = 1.0f};
        double ops = 2.0 * m * n * k;
        int reps = ops > 1e9 ? 1 : ops > 1e8 ? 3 : 10;
        double tp = run(c, PAIR, &l, ba, by, bf, bp, bc, br, m, reps);
        double td = in->int_dot ? run(c, DOT, &l, ba, by, bf, bp, bc, br, m, reps) : -1;
        double tr = run(c, ROWS, &l, ba, by, bf, bp, bc, br, m, reps);
        char shape[32];
        snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
        printf("%-18s %10.3f %8.1f %10.3f %8.1f %10.3f %8.1f\n", shape, tp * 1e3, ops / tp * 1e-9,
               td * 1e3, td > 0 ? ops / td * 1e-9 : 0, tr * 1e3, ops / tr * 1e-9);
        fy_vk_buf *all[] = {bw, ba, bb, by, bf, bp, bc, br};
        for (int i = 0; i < 8; i++) fy_vk_buf_free(all[i]);
        free(w), free(a), free(bias), free(cols), free(rowcols), free(fix), free(pairs);
    }
    fy_vk_cmd_free(c);
    fy_vk_dev_free(dev);
    fy_vk_close(vk);
    return 0;
}
