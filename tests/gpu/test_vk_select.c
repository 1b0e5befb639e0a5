/* test_vk_select.c - the device-side selections against transcriptions of
 * the CPU's (translator.c pick, beam.c best_candidates on one row), on
 * logits full of ties, ±0, -inf and NaN, over per-row column lists and the
 * whole vocabulary; and the row gather. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_test.h"

/* translator.c pick (no bitmap: the lists are the allowed ids). */
static int32_t pick_cpu(const float *lg, const int32_t *cols, int ncols, int unk, float *value,
                        float *gap)
{
    int32_t best = -1;
    float b1 = -INFINITY, b2 = -INFINITY;
    for (int c = 0; c < ncols; c++) {
        int32_t id = cols ? cols[c] : c;
        if (id == unk) continue;
        float v = lg[c];
        if (v > b1) {
            b2 = b1;
            b1 = v;
            best = id;
        } else if (v > b2) {
            b2 = v;
        }
    }
    *value = b1;
    *gap = b1 - b2;
    return best;
}

/* beam.c best_candidates for one row: n, scores and ids. */
static int topk_cpu(const float *lg, const int32_t *cols, int ncols, int unk, float base, int k,
                    float *score, int32_t *word)
{
    int n = 0, cap = k + 1;
    for (int c = 0; c < ncols; c++) {
        int32_t id = cols ? cols[c] : c;
        if (id == unk) continue;
        float v = base + lg[c];
        if (n == cap && !(v > score[n - 1])) continue;
        int p = n < cap ? n++ : n - 1;
        for (; p > 0 && score[p - 1] < v; p--) score[p] = score[p - 1], word[p] = word[p - 1];
        score[p] = v;
        word[p] = id;
    }
    return n;
}

enum { ROWS = 12, V = 700, LDL = 704, UNK = 1 };

typedef struct case_data {
    float lg[ROWS * LDL], path[ROWS];
    int32_t cols[ROWS * V], rowcols[2 * ROWS];
} case_data;

/* Logits with many exact ties (small integers) and special values; lists
 * of every length class, each containing <unk> sometimes. */
static void make_case(case_data *d)
{
    int total = 0;
    for (int i = 0; i < ROWS * LDL; i++) d->lg[i] = (float)vt_irand(-6, 6) * 0.5f;
    for (int r = 0; r < ROWS; r++) {
        d->path[r] = r == 3 ? -INFINITY : (float)vt_irand(-8, 0) * 0.25f;
        int n = r == 0 ? 0 : r == 1 ? 1 : r == 2 ? 2 : r == 4 ? V : vt_irand(3, 300);
        d->rowcols[2 * r] = total;
        int id = vt_irand(0, 2);
        for (int c = 0; c < n && id < V; c++, id += vt_irand(1, 2)) d->cols[total++] = id;
        if (r == 4) { /* every id */
            total = d->rowcols[2 * r];
            for (int c = 0; c < V; c++) d->cols[total++] = c;
        }
        d->rowcols[2 * r + 1] = total - d->rowcols[2 * r];
    }
    float *row5 = d->lg + 5 * LDL, *row6 = d->lg + 6 * LDL, *row7 = d->lg + 7 * LDL;
    row5[0] = -0.0f, row5[1] = 0.0f, row5[2] = 0.0f; /* signed-zero ties */
    for (int c = 3; c < V; c++) row5[c] = -1.0f;
    for (int c = 0; c < V; c++) row6[c] = -INFINITY;
    row6[40] = 2.0f;
    for (int c = 0; c < V; c++) row7[c] = c % 3 ? NAN : row7[c]; /* NaN: topk's exact fallback */
    d->lg[8 * LDL + 17] = INFINITY;
    for (int c = 0; c < V; c++) d->lg[9 * LDL + c] = -INFINITY; /* nothing choosable */
}

static void test_pick(const case_data *d, int identity)
{
    int32_t want[3 * ROWS], got[3 * ROWS];
    for (int r = 0; r < ROWS; r++) {
        const int32_t *cols = identity ? NULL : d->cols + d->rowcols[2 * r];
        int n = identity ? V : d->rowcols[2 * r + 1];
        float v, g;
        want[3 * r] = pick_cpu(d->lg + r * LDL, cols, n, UNK, &v, &g);
        memcpy(&want[3 * r + 1], &v, 4);
        memcpy(&want[3 * r + 2], &g, 4);
    }
    fy_vk_buf *bl = vt_buf(d->lg, sizeof d->lg), *bc = vt_buf(d->cols, sizeof d->cols);
    fy_vk_buf *br = vt_buf(d->rowcols, sizeof d->rowcols), *bo = vt_buf(NULL, sizeof got);
    fy_vk_select s = {.logits = fy_vk_at(bl, 0), .ldl = LDL, .rows = ROWS, .n_all = V, .unk = UNK};
    if (!identity) s.cols = fy_vk_at(bc, 0), s.rowcols = fy_vk_at(br, 0);
    if (vt_begin()) return;
    fy_vk_op_pick(vt_cmd, &s, fy_vk_at(bo, 0));
    fy_vk_cmd_read(vt_cmd, fy_vk_at(bo, 0), got, sizeof got); /* the few numbers a step reads */
    if (vt_run()) return;
    long i = vt_diff(got, want, 3 * ROWS);
    vt_check(i < 0, "pick (%s): row %ld field %ld: got 0x%08x want 0x%08x",
             identity ? "all ids" : "lists", i / 3, i % 3, i < 0 ? 0 : got[i], i < 0 ? 0 : want[i]);
    vt_free_all();
}

static void test_topk(const case_data *d, int identity, int k)
{
    int stride = fy_vk_topk_stride(k);
    uint32_t *want = calloc((size_t)ROWS * stride, 4), *got = calloc((size_t)ROWS * stride, 4);
    for (int r = 0; r < ROWS; r++) {
        const int32_t *cols = identity ? NULL : d->cols + d->rowcols[2 * r];
        int n = identity ? V : d->rowcols[2 * r + 1];
        uint32_t *w = want + (size_t)r * stride;
        w[0] = (uint32_t)topk_cpu(d->lg + r * LDL, cols, n, UNK, d->path[r], k, (float *)(w + 1),
                                  (int32_t *)(w + 2 + k));
    }
    fy_vk_buf *bl = vt_buf(d->lg, sizeof d->lg), *bc = vt_buf(d->cols, sizeof d->cols);
    fy_vk_buf *br = vt_buf(d->rowcols, sizeof d->rowcols), *bp = vt_buf(d->path, sizeof d->path);
    fy_vk_buf *bo = vt_buf(NULL, sizeof(uint32_t) * ROWS * stride);
    fy_vk_select s = {.logits = fy_vk_at(bl, 0), .ldl = LDL, .rows = ROWS, .n_all = V, .unk = UNK};
    if (!identity) s.cols = fy_vk_at(bc, 0), s.rowcols = fy_vk_at(br, 0);
    if (vt_begin()) return;
    fy_vk_op_topk(vt_cmd, &s, fy_vk_at(bp, 0), k, fy_vk_at(bo, 0));
    if (vt_run()) return;
    vt_get(bo, got, sizeof(uint32_t) * ROWS * stride);
    long bad = -1;
    for (int r = 0; r < ROWS && bad < 0; r++) { /* compare the n entries set */
        const uint32_t *g = got + (size_t)r * stride, *w = want + (size_t)r * stride;
        int n = (int)w[0];
        if (g[0] != w[0] || vt_diff(g + 1, w + 1, (size_t)n) >= 0 ||
            vt_diff(g + 2 + k, w + 2 + k, (size_t)n) >= 0)
            bad = r;
    }
    vt_check(bad < 0, "topk k=%d (%s): row %ld differs", k, identity ? "all ids" : "lists", bad);
    vt_free_all();
    free(want), free(got);
}

static void test_gather(void)
{
    enum { R = 6, W = 37, LDS = 40, LDD = 39 };
    uint32_t src[R * LDS], want[R * LDD], got[R * LDD];
    int32_t from[R] = {5, 0, 0, 3, 2, 1};
    for (int i = 0; i < R * LDS; i++) src[i] = vt_rand();
    memset(want, 0, sizeof want);
    for (int j = 0; j < R; j++) memcpy(want + j * LDD, src + from[j] * LDS, W * 4);
    fy_vk_buf *bs = vt_buf(src, sizeof src), *bd = vt_buf(NULL, sizeof got);
    fy_vk_buf *bf = vt_buf(from, sizeof from);
    if (vt_begin()) return;
    fy_vk_op_gather(vt_cmd, fy_vk_at(bs, 0), LDS, fy_vk_at(bd, 0), LDD, W, fy_vk_at(bf, 0), R);
    if (vt_run()) return;
    vt_get(bd, got, sizeof got);
    vt_check(vt_diff(got, want, R * LDD) < 0, "gather rows");
    vt_free_all();
}

void test_vk_select(void)
{
    case_data *d = malloc(sizeof *d);
    make_case(d);
    for (int identity = 0; identity < 2; identity++) {
        test_pick(d, identity);
        test_topk(d, identity, 1);
        test_topk(d, identity, 4);
        test_topk(d, identity, 16);
    }
    free(d);
    test_gather();
}
