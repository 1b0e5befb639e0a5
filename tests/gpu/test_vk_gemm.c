/* test_vk_gemm.c - the int8 products on the device against fy_linear_forward
 * (gemm.c, whatever CPU path is selected: all are bit-identical) on layers
 * built by fy_linear_new_i8: plain column ranges, column lists, per-row
 * lists, the fused relu, ragged shapes, and weights and activations chosen
 * so that most int16 pair sums saturate; the dot-product path (where the
 * device has integer dot products) against the pair kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gemm.h"
#include "nn/gemm_impl.h"
#include "nn/ops.h"
#include "vk_test.h"

typedef struct layer {
    fy_linear *lin;
    fy_linear_i8_parts parts;
    fy_vk_i8_layer dev;
    int8_t *w;
} layer;

/* A layer of n x k weights: sat != 0 draws pairs of the same sign near
 * ±127 (most pair sums saturate with large activations). */
static int layer_new(layer *l, int n, int k, int sat)
{
    fy_error err = {0};
    l->w = malloc((size_t)n * k);
    float *bias = malloc(sizeof(float) * n);
    for (int i = 0; i < n * k; i += 2) {
        int s = vt_irand(0, 1) ? 1 : -1;
        l->w[i] = (int8_t)(sat ? s * vt_irand(90, 127) : vt_irand(-127, 127));
        l->w[i + 1] = (int8_t)(sat ? s * vt_irand(90, 127) : vt_irand(-127, 127));
    }
    for (int j = 0; j < n; j++) bias[j] = vt_frand(-1.0f, 1.0f);
    l->lin = fy_linear_new_i8(l->w, n, k, 127.0f / 0.8f, 127.0f / 3.5f, bias, &err);
    free(bias);
    vt_check(l->lin != NULL, "layer: %s", err.msg);
    if (!l->lin) return -1;
    fy_linear_i8_parts_get(l->lin, &l->parts);
    l->dev = (fy_vk_i8_layer){
        .w = fy_vk_at(vt_buf(l->parts.w, (size_t)n * k), 0),
        .bias = fy_vk_at(vt_buf(l->parts.bias, sizeof(float) * n), 0),
        .n = n,
        .k = k,
        .unquant = l->parts.unquant,
    };
    return 0;
}

static void layer_free(layer *l)
{
    fy_linear_free(l->lin);
    free(l->w);
}

/* Activations for m rows: sat != 0 puts most near ±3.5 (u near 0 or 254). */
static float *activations(int m, int k, int sat)
{
    float *x = malloc(sizeof(float) * m * k);
    for (int i = 0; i < m * k; i++)
        x[i] = sat ? (vt_irand(0, 3) ? 1.0f : -1.0f) * vt_frand(3.2f, 3.6f) : vt_frand(-3.0f, 3.0f);
    return x;
}

static void check_rows(const char *what, const float *got, const float *want, int m, int ncols,
                       int ldy)
{
    long bad = -1;
    for (int i = 0; i < m && bad < 0; i++) {
        long c = vt_diff(got + (size_t)i * ldy, want + (size_t)i * ldy, (size_t)ncols);
        if (c >= 0) bad = (long)i * ldy + c;
    }
    vt_check(bad < 0, "%s: element %ld: got %a want %a", what, bad, bad < 0 ? 0.0 : got[bad],
             bad < 0 ? 0.0 : want[bad]);
}

/* One product three ways on the device (range, list, dot path) for m rows. */
static void gemm_case(int m, int n, int k, int sat, int relu)
{
    layer l;
    if (layer_new(&l, n, k, sat)) return;
    float *x = activations(m, k, sat);
    int j0 = n > 8 ? 8 : 0, nr = n - j0, ldy = n + 3;
    int32_t *cols = malloc(sizeof(int32_t) * n);
    int nl = 0;
    for (int j = 0; j < n; j++)
        if (vt_irand(0, 2)) cols[nl++] = j;
    if (sat) { /* most pair sums of these operands do saturate */
        uint8_t *u = malloc((size_t)m * k);
        fy_gemm_kernels_for(FY_ISA_REF)->quantize_u8(x, (size_t)m * k, l.parts.a_mult, u);
        long nsat = 0, all = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                for (int q = 0; q < k; q += 2, all++) {
                    const uint8_t *a = u + (size_t)i * k + q;
                    const int8_t *w = l.w + (size_t)j * k + q;
                    int s = a[0] * w[0] + a[1] * w[1];
                    nsat += s > 32767 || s < -32768;
                }
        vt_check(nsat * 5 > all, "saturating operands: %ld of %ld pair sums saturate", nsat, all);
        free(u);
    }
    float *want_r = calloc((size_t)m * ldy, sizeof(float)), *want_l = calloc((size_t)m * ldy, 4);
    float *got = malloc(sizeof(float) * m * ldy);
    void *scratch = aligned_alloc(64, (fy_linear_scratch_bytes(l.lin, m) + 63) / 64 * 64);
    int32_t *range = malloc(sizeof(int32_t) * n);
    for (int c = 0; c < nr; c++) range[c] = j0 + c;
    fy_linear_forward_ex(l.lin, x, m, range, nr, scratch, want_r, ldy);
    fy_linear_forward_ex(l.lin, x, m, cols, nl, scratch, want_l, ldy);
    if (relu)
        for (int i = 0; i < m; i++)
            fy_relu(want_r + (size_t)i * ldy, (size_t)nr),
                fy_relu(want_l + (size_t)i * ldy, (size_t)nl);
    fy_vk_buf *bx = vt_buf(x, sizeof(float) * m * k), *ba = vt_buf(NULL, (size_t)m * k);
    fy_vk_buf *bc = vt_buf(cols, sizeof(int32_t) * (nl ? nl : 1));
    fy_vk_buf *by = vt_buf(NULL, sizeof(float) * m * ldy),
              *by2 = vt_buf(NULL, sizeof(float) * m * ldy);
    if (vt_begin()) return;
    fy_vk_op_quantize(vt_cmd, fy_vk_at(bx, 0), k, m, k, l.parts.a_mult, fy_vk_at(ba, 0));
    fy_vk_cmd_parallel(vt_cmd, 1); /* both read a; independent outputs */
    fy_vk_op_gemm_i8(vt_cmd, &l.dev, fy_vk_at(ba, 0), m, fy_vk_at(NULL, 0), nr, j0, relu,
                     fy_vk_at(by, 0), ldy);
    fy_vk_op_gemm_i8(vt_cmd, &l.dev, fy_vk_at(ba, 0), m, fy_vk_at(bc, 0), nl, 0, relu,
                     fy_vk_at(by2, 0), ldy);
    fy_vk_cmd_parallel(vt_cmd, 0);
    if (vt_run()) return;
    char what[96];
    vt_get(by, got, sizeof(float) * m * ldy);
    snprintf(what, sizeof what, "gemm_i8 %dx%dx%d%s%s, columns %d..", m, n, k,
             sat ? " saturating" : "", relu ? " relu" : "", j0);
    check_rows(what, got, want_r, m, nr, ldy);
    vt_get(by2, got, sizeof(float) * m * ldy);
    snprintf(what, sizeof what, "gemm_i8 %dx%dx%d%s%s, %d listed columns", m, n, k,
             sat ? " saturating" : "", relu ? " relu" : "", nl);
    check_rows(what, got, want_l, m, nl, ldy);

    if (fy_vk_dev_info(vt_dev)->int_dot) { /* the dot path: the same bits */
        uint32_t *start = malloc(sizeof(uint32_t) * (n + 1));
        size_t np = fy_vk_i8_fixups(l.w, n, k, start, NULL);
        uint32_t *pairs = malloc(sizeof(uint32_t) * (np ? np : 1));
        fy_vk_i8_fixups(l.w, n, k, start, pairs);
        fy_vk_buf *bs = vt_buf(start, sizeof(uint32_t) * (n + 1));
        fy_vk_buf *bp = vt_buf(pairs, sizeof(uint32_t) * (np ? np : 1));
        if (vt_begin()) return;
        fy_vk_op_gemm_i8_dot(vt_cmd, &l.dev, fy_vk_at(bs, 0), fy_vk_at(bp, 0), fy_vk_at(ba, 0), m,
                             fy_vk_at(bc, 0), nl, 0, relu, fy_vk_at(by2, 0), ldy);
        if (vt_run()) return;
        vt_get(by2, got, sizeof(float) * m * ldy);
        snprintf(what, sizeof what, "gemm_i8_dot %dx%dx%d%s (%zu of %d pairs fixed up)", m, n, k,
                 sat ? " saturating" : "", np, n * k / 2);
        check_rows(what, got, want_l, m, nl, ldy);
        if (vt_begin()) return; /* pair mode: masked dot products, no list */
        fy_vk_op_gemm_i8_dot(vt_cmd, &l.dev, fy_vk_at(NULL, 0), fy_vk_at(NULL, 0), fy_vk_at(ba, 0),
                             m, fy_vk_at(NULL, 0), nr, j0, relu, fy_vk_at(by2, 0), ldy);
        if (vt_run()) return;
        vt_get(by2, got, sizeof(float) * m * ldy);
        snprintf(what, sizeof what, "gemm_i8_dot %dx%dx%d%s, pairs as masked dot products", m, n, k,
                 sat ? " saturating" : "");
        check_rows(what, got, want_r, m, nr, ldy);
        free(start), free(pairs);
    }
    vt_free_all();
    layer_free(&l);
    free(x), free(cols), free(want_r), free(want_l), free(got), free(scratch), free(range);
}

/* The per-row column lists: row i's own sorted ids, lengths 0 .. n. */
static void gemm_rows_case(int m, int n, int k)
{
    layer l;
    if (layer_new(&l, n, k, 1)) return;
    float *x = activations(m, k, 1);
    int32_t *cols = malloc(sizeof(int32_t) * m * n), *rowcols = malloc(sizeof(int32_t) * 2 * m);
    int total = 0, max_n = 0, ldy = n + 1;
    for (int i = 0; i < m; i++) {
        int want_n = i == 0 ? 0 : i == 1 ? 1 : i == 2 ? n : vt_irand(1, n);
        rowcols[2 * i] = total;
        for (int j = 0, left = n; j < n; j++, left--)
            if (vt_irand(0, left - 1) < want_n - (total - rowcols[2 * i])) cols[total++] = j;
        rowcols[2 * i + 1] = total - rowcols[2 * i];
        if (rowcols[2 * i + 1] > max_n) max_n = rowcols[2 * i + 1];
    }
    float *want = calloc((size_t)m * ldy, sizeof(float)), *got = malloc(sizeof(float) * m * ldy);
    void *scratch = aligned_alloc(64, (fy_linear_scratch_bytes(l.lin, 1) + 63) / 64 * 64);
    for (int i = 0; i < m; i++)
        if (rowcols[2 * i + 1])
            fy_linear_forward_ex(l.lin, x + (size_t)i * k, 1, cols + rowcols[2 * i],
                                 rowcols[2 * i + 1], scratch, want + (size_t)i * ldy, ldy);
    fy_vk_buf *bx = vt_buf(x, sizeof(float) * m * k), *ba = vt_buf(NULL, (size_t)m * k);
    fy_vk_buf *bc = vt_buf(cols, sizeof(int32_t) * (total ? total : 1));
    fy_vk_buf *br = vt_buf(rowcols, sizeof(int32_t) * 2 * m);
    fy_vk_buf *by = vt_buf(want, sizeof(float) * m * ldy); /* untouched tails stay equal */
    memset(got, 0, sizeof(float) * m * ldy);
    if (vt_begin()) return;
    fy_vk_op_quantize(vt_cmd, fy_vk_at(bx, 0), k, m, k, l.parts.a_mult, fy_vk_at(ba, 0));
    fy_vk_cmd_fill(vt_cmd, fy_vk_at(by, 0), sizeof(float) * m * ldy, 0);
    fy_vk_op_gemm_i8_rows(vt_cmd, &l.dev, fy_vk_at(ba, 0), m, fy_vk_at(bc, 0), fy_vk_at(br, 0),
                          max_n, 0, fy_vk_at(by, 0), ldy);
    if (vt_run()) return;
    vt_get(by, got, sizeof(float) * m * ldy);
    char what[80];
    snprintf(what, sizeof what, "gemm_i8_rows %d rows x %d x %d", m, n, k);
    check_rows(what, got, want, m, ldy, ldy);
    vt_free_all();
    layer_free(&l);
    free(x), free(cols), free(rowcols), free(want), free(got), free(scratch);
}

/* A float layer k x n (file layout [k][n]) with or without bias, against
 * fy_linear_forward_ex: a column range and a column list, relu or not. */
static void gemm_f32_case(int m, int n, int k, int with_bias, int relu)
{
    fy_error err = {0};
    float *w = malloc(sizeof(float) * k * n), *wt = malloc(sizeof(float) * k * n);
    float *bias = malloc(sizeof(float) * n), *x = malloc(sizeof(float) * m * (k + 2));
    for (int i = 0; i < k * n; i++) w[i] = vt_frand(-1.0f, 1.0f);
    for (int j = 0; j < n; j++) bias[j] = vt_frand(-1.0f, 1.0f);
    for (int i = 0; i < m * (k + 2); i++) x[i] = vt_frand(-2.0f, 2.0f);
    x[0] = -0.0f, x[1] = 1e-40f, w[0] = -0.0f;
    fy_linear *lin = fy_linear_new_f32(w, k, n, with_bias ? bias : NULL, &err);
    vt_check(lin != NULL, "f32 layer: %s", err.msg);
    if (!lin) return;
    fy_transpose(w, k, n, wt); /* [n][k] for the device */
    int ldx = k + 2, ldy = n + 1, j0 = n / 3, nr = n - j0, nl = 0;
    int32_t *cols = malloc(sizeof(int32_t) * n), *range = malloc(sizeof(int32_t) * n);
    for (int j = 0; j < n; j++)
        if (vt_irand(0, 1)) cols[nl++] = j;
    for (int c = 0; c < nr; c++) range[c] = j0 + c;
    float *want_r = calloc((size_t)m * ldy, 4), *want_l = calloc((size_t)m * ldy, 4);
    float *got = malloc(sizeof(float) * m * ldy), *xs = malloc(sizeof(float) * m * k);
    for (int i = 0; i < m; i++) memcpy(xs + (size_t)i * k, x + (size_t)i * ldx, sizeof(float) * k);
    void *scratch = aligned_alloc(64, (fy_linear_scratch_bytes(lin, m) + 63) / 64 * 64);
    fy_linear_forward_ex(lin, xs, m, range, nr, scratch, want_r, ldy);
    fy_linear_forward_ex(lin, xs, m, cols, nl, scratch, want_l, ldy);
    if (relu)
        for (int i = 0; i < m; i++)
            fy_relu(want_r + (size_t)i * ldy, (size_t)nr),
                fy_relu(want_l + (size_t)i * ldy, (size_t)nl);
    fy_vk_f32_layer dl = {
        .w = fy_vk_at(vt_buf(wt, sizeof(float) * k * n), 0),
        .bias = with_bias ? fy_vk_at(vt_buf(bias, sizeof(float) * n), 0) : fy_vk_at(NULL, 0),
        .n = n,
        .k = k,
    };
    fy_vk_buf *bx = vt_buf(x, sizeof(float) * m * ldx), *bc = vt_buf(cols, sizeof(int32_t) * n);
    fy_vk_buf *by = vt_buf(NULL, sizeof(float) * m * ldy),
              *by2 = vt_buf(NULL, sizeof(float) * m * ldy);
    if (vt_begin()) return;
    fy_vk_op_gemm_f32(vt_cmd, &dl, fy_vk_at(bx, 0), ldx, m, fy_vk_at(NULL, 0), nr, j0, relu,
                      fy_vk_at(by, 0), ldy);
    fy_vk_op_gemm_f32(vt_cmd, &dl, fy_vk_at(bx, 0), ldx, m, fy_vk_at(bc, 0), nl, 0, relu,
                      fy_vk_at(by2, 0), ldy);
    if (vt_run()) return;
    char what[96];
    vt_get(by, got, sizeof(float) * m * ldy);
    snprintf(what, sizeof what, "gemm_f32 %dx%dx%d%s%s, columns %d..", m, n, k,
             with_bias ? " bias" : "", relu ? " relu" : "", j0);
    check_rows(what, got, want_r, m, nr, ldy);
    vt_get(by2, got, sizeof(float) * m * ldy);
    snprintf(what, sizeof what, "gemm_f32 %dx%dx%d%s%s, %d listed columns", m, n, k,
             with_bias ? " bias" : "", relu ? " relu" : "", nl);
    check_rows(what, got, want_l, m, nl, ldy);
    vt_free_all();
    fy_linear_free(lin);
    free(w), free(wt), free(bias), free(x), free(cols), free(range), free(want_r), free(want_l);
    free(got), free(xs), free(scratch);
}

void test_vk_gemm(void)
{
    gemm_f32_case(1, 10, 17, 1, 0);
    gemm_f32_case(5, 72, 64, 0, 1);
    gemm_f32_case(70, 130, 100, 1, 0);
    gemm_case(1, 8, 64, 1, 0);
    gemm_case(3, 72, 128, 0, 0);
    gemm_case(5, 136, 192, 1, 1);
    gemm_case(64, 64, 256, 1, 0);
    gemm_case(70, 200, 512, 1, 0);
    gemm_case(67, 80, 64, 0, 1);
    gemm_case(8, 64, 128, 1, 0); /* the last row count of the one-row-per-workgroup path */
    gemm_case(9, 64, 128, 1, 1); /* the first of the tiles */
    gemm_rows_case(7, 152, 128);
    gemm_rows_case(3, 72, 512);
}
