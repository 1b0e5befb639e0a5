/* gemm.c - linear layers: weight preparation at load time and the forward
 * pass through the selected kernel table (see gemm.h for the arithmetic,
 * gemm_impl.h for the layouts).
 */
#include "nn/gemm.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn/gemm_impl.h"
#include "nn/ops.h"
#include "nn/par.h"

/* Columns gathered per pass when a float layer computes a column subset. */
#define F32_GATHER_COLS 64

struct fy_linear {
    int k, n;
    int int8;
    const fy_gemm_kernels *kern; /* the path the weights were prepared for */
    float *bias;                 /* int8: [n] prepared; f32: [npanels·16] or NULL */
    /* int8 */
    const int8_t *w8; /* [n][k]: w8_own, or the caller's bytes (fy_linear_view_i8) */
    int8_t *w8_own;
    int8_t *w8il; /* NULL, or the one-row layout (fy_linear_prepare_one_row) */
    float a_mult, unquant;
    size_t sat_pairs; /* weight pairs that can saturate (gemm_impl.h) */
    int vnni;         /* run kern->i8_gemm_vnni with sat */
    fy_i8_sat sat;    /* their lists, or any == NULL when there are none */
    uint64_t *sat_any;
    uint32_t *sat_off;
    uint16_t *sat_pair;
    /* float32 */
    float *panels; /* [npanels][k][16], zero-padded */
    float *rows;   /* [n][k] or NULL (fy_linear_new_f32_nk): column subsets
                    * are gathered into panels from here, which is cheap */
};

static void *aligned_alloc64(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static int valid_mult(float v)
{
    return isfinite(v) && v > 0.0f;
}

/* The sum of k int8 values (k % 16 == 0), sixteen lanes at a time: integer
 * sums, so any order gives the same result. */
static int32_t sum_i8(const int8_t *w, int k)
{
    typedef int8_t v16b __attribute__((vector_size(16)));
    typedef int32_t v16i __attribute__((vector_size(64)));
    v16i acc = {0};
    for (int i = 0; i < k; i += 16) {
        v16b v;
        memcpy(&v, w + i, sizeof v);
        acc += __builtin_convertvector(v, v16i);
    }
    int32_t sum = 0;
    for (int l = 0; l < 16; l++) sum += acc[l];
    return sum;
}

/* Pairs of row w (k values, k % 16 == 0) whose int16 sum can saturate:
 * |w0 + w1| > 129 (that needs one sign, since |w| <= 128); with list !=
 * NULL, also their pair indices into list. */
static uint32_t row_sat_pairs(const int8_t *w, int k, uint16_t *list)
{
    uint32_t n = 0;
    if (!list) {
        /* Eight pairs at a time, in SSE2-sized vectors (gcc splits wider
         * comparisons into scalars): the scan runs over every weight. A
         * lane counts at most one pair per 16 bytes: emptied every 2^14
         * steps, it cannot overflow. */
        typedef int16_t v8h __attribute__((vector_size(16)));
        typedef uint16_t v8u __attribute__((vector_size(16)));
        for (int i0 = 0; i0 < k; i0 += 16 << 14) {
            v8h count = {0};
            int end = k - i0 < (16 << 14) ? k : i0 + (16 << 14);
            for (int i = i0; i < end; i += 16) {
                v8h v;
                memcpy(&v, w + i, sizeof v);
                v8h lo = (v8h)((v8u)v << 8) >> 8, hi = v >> 8, s = lo + hi;
                count -= (s > 129) | (s < -129); /* -1 where risky */
            }
            for (int l = 0; l < 8; l++) n += (uint16_t)count[l];
        }
        return n;
    }
    for (int p = 0; p < k / 2; p++) {
        int s = w[2 * p] + w[2 * p + 1];
        if (s > 129 || s < -129) list[n++] = (uint16_t)p;
    }
    return n;
}

/* A VNNI product pays while fixing the saturating pairs costs little
 * beside the instructions it saves: up to one pair in 512 (measured with
 * gemm_bench; uniform int8 weights have about one in four, trained ones
 * far fewer than one in 512). */
#define VNNI_MAX_SAT_SHARE 512

/* Finds the pairs that can saturate and, on a path with VNNI, decides
 * whether this layer runs there and builds its lists. 0 or FY_ENOMEM. */
static int prepare_vnni(fy_linear *l)
{
    const int n = l->n, k = l->k;
    size_t total = 0;
    for (int j = 0; j < n; j++) total += row_sat_pairs(l->w8 + (size_t)j * k, k, NULL);
    l->sat_pairs = total;
    if (!l->kern->i8_gemm_vnni || k > FY_I8_VNNI_MAX_K ||
        total > (size_t)n * (size_t)(k / 2) / VNNI_MAX_SAT_SHARE)
        return 0;
    l->vnni = 1;
    if (total == 0) return 0;
    l->sat_any = calloc(((size_t)n + 63) / 64, sizeof *l->sat_any);
    l->sat_off = malloc(((size_t)n + 1) * sizeof *l->sat_off);
    l->sat_pair = malloc(total * sizeof *l->sat_pair);
    if (!l->sat_any || !l->sat_off || !l->sat_pair) return FY_ENOMEM;
    uint32_t at = 0;
    for (int j = 0; j < n; j++) {
        l->sat_off[j] = at;
        uint32_t e = row_sat_pairs(l->w8 + (size_t)j * k, k, l->sat_pair + at);
        if (e) l->sat_any[j / 64] |= 1ull << (j % 64);
        at += e;
    }
    l->sat_off[n] = at;
    l->sat = (fy_i8_sat){l->sat_any, l->sat_off, l->sat_pair, 0};
    return 0;
}

size_t fy_i8_saturating_pairs(const int8_t *w, size_t rows, int k)
{
    size_t total = 0;
    for (size_t j = 0; j < rows && k > 1; j++) {
        const int8_t *r = w + j * (size_t)k;
        if (k % 16 == 0) {
            total += row_sat_pairs(r, k, NULL);
            continue;
        }
        for (int p = 0; p + 1 < k; p += 2) total += abs(r[p] + r[p + 1]) > 129;
    }
    return total;
}

static fy_linear *linear_new_i8(const int8_t *w, int n, int k, float w_mult, float a_mult,
                                const float *bias, int view, fy_error *err)
{
    fy_linear *l = NULL;
    if (!w || n <= 0 || k <= 0 || n % 8 != 0 || k % 64 != 0) {
        fy_err(err, FY_EUNSUPPORTED,
               "int8 linear layer %d x %d: needs n %% 8 == 0 and k %% 64 == 0", n, k);
        return NULL;
    }
    if (!valid_mult(w_mult) || !valid_mult(a_mult)) {
        fy_err(err, FY_EINVAL, "int8 linear layer: quantisation multipliers %g, %g not positive",
               (double)w_mult, (double)a_mult);
        return NULL;
    }
    l = calloc(1, sizeof *l);
    if (!l) goto fail;
    l->k = k;
    l->n = n;
    l->int8 = 1;
    l->kern = fy_gemm_kernels_current();
    l->a_mult = a_mult;
    l->unquant = 1.0f / (a_mult * w_mult);
    l->bias = aligned_alloc64((size_t)n * sizeof(float));
    if (!l->bias) goto fail;
    if (view && (uintptr_t)w % 64 == 0) {
        l->w8 = w;
    } else {
        l->w8 = l->w8_own = aligned_alloc64((size_t)n * k);
        if (!l->w8_own) goto fail;
        memcpy(l->w8_own, w, (size_t)n * k);
    }
    /* The reference (marian int8PrepareBias / intgemm PrepareBias) multiplies
     * B by a row of ones (exact column sums) and writes, in float32 without
     * FMA, colsum·factor + bias with factor = (-1)·((127/a)·(127/w))/127:
     * this cancels the +127 shift of the activations. */
    float factor = (-1) * ((127.0f / a_mult) * (127.0f / w_mult)) / 127.0f;
    for (int j = 0; j < n; j++) {
        float v = (float)sum_i8(w + (size_t)j * k, k) * factor;
        l->bias[j] = bias ? v + bias[j] : v;
    }
    if (prepare_vnni(l)) goto fail;
    return l;
fail:
    fy_linear_free(l);
    fy_err(err, FY_ENOMEM, "int8 linear layer %d x %d: out of memory", n, k);
    return NULL;
}

fy_linear *fy_linear_new_i8(const int8_t *w, int n, int k, float w_mult, float a_mult,
                            const float *bias, fy_error *err)
{
    return linear_new_i8(w, n, k, w_mult, a_mult, bias, 0, err);
}

fy_linear *fy_linear_view_i8(const int8_t *w, int n, int k, float w_mult, float a_mult,
                             const float *bias, fy_error *err)
{
    return linear_new_i8(w, n, k, w_mult, a_mult, bias, 1, err);
}

/* w ([n][k], n % FY_I8_IL_COLS == 0, k % 4 == 0) in the one-row layout
 * (i8_gemv_il) at wil, n·k bytes: written in order, read from a panel's
 * rows, whose lines stay in L1 from one k-quad to the next. */
static void pack_one_row(const int8_t *w, int n, int k, int8_t *wil)
{
    for (int p = 0; p < n / FY_I8_IL_COLS; p++) {
        const int8_t *rows = w + (size_t)p * FY_I8_IL_COLS * k;
        for (int q = 0; q < k / 4; q++)
            for (int c = 0; c < FY_I8_IL_COLS; c++, wil += 4)
                memcpy(wil, rows + (size_t)c * k + 4 * q, 4);
    }
}

int fy_linear_prepare_one_row(fy_linear *l, fy_error *err)
{
    if (!l || !l->int8 || !l->vnni || l->w8il || !l->kern->i8_gemv_il || l->n % FY_I8_IL_COLS)
        return 0;
    l->w8il = aligned_alloc64((size_t)l->n * l->k);
    if (!l->w8il)
        return fy_err(err, FY_ENOMEM, "int8 linear layer %d x %d: out of memory", l->n, l->k);
    pack_one_row(l->w8, l->n, l->k, l->w8il);
    return 0;
}

size_t fy_linear_one_row_bytes(const fy_linear *l)
{
    return l && l->w8il ? (size_t)l->n * l->k : 0;
}

static fy_linear *linear_alloc_f32(int k, int n, const float *bias, fy_error *err)
{
    if (n <= 0 || k <= 0) {
        fy_err(err, FY_EINVAL, "float linear layer %d x %d: bad shape", k, n);
        return NULL;
    }
    size_t np = ((size_t)n + FY_F32_PANEL - 1) / FY_F32_PANEL;
    fy_linear *l = calloc(1, sizeof *l);
    if (!l) goto fail;
    l->k = k;
    l->n = n;
    l->kern = fy_gemm_kernels_current();
    if (bias) {
        l->bias = aligned_alloc64(np * FY_F32_PANEL * sizeof(float));
        if (!l->bias) goto fail;
        memset(l->bias, 0, np * FY_F32_PANEL * sizeof(float));
        memcpy(l->bias, bias, (size_t)n * sizeof(float));
    }
    return l;
fail:
    fy_linear_free(l);
    fy_err(err, FY_ENOMEM, "float linear layer %d x %d: out of memory", k, n);
    return NULL;
}

fy_linear *fy_linear_new_f32(const float *w, int k, int n, const float *bias, fy_error *err)
{
    fy_linear *l = w ? linear_alloc_f32(k, n, bias, err) : NULL;
    if (!l) {
        if (!w) fy_err(err, FY_EINVAL, "float linear layer: no weights");
        return NULL;
    }
    size_t np = ((size_t)n + FY_F32_PANEL - 1) / FY_F32_PANEL;
    l->panels = aligned_alloc64(np * k * FY_F32_PANEL * sizeof(float));
    if (!l->panels) {
        fy_linear_free(l);
        fy_err(err, FY_ENOMEM, "float linear layer %d x %d: out of memory", k, n);
        return NULL;
    }
    memset(l->panels, 0, np * k * FY_F32_PANEL * sizeof(float));
    for (int kk = 0; kk < k; kk++) {
        const float *src = w + (size_t)kk * n;
        for (int j = 0; j < n; j++)
            l->panels[((size_t)(j / FY_F32_PANEL) * k + kk) * FY_F32_PANEL + j % FY_F32_PANEL] =
                src[j];
    }
    return l;
}

fy_linear *fy_linear_new_f32_nk(const float *w, int n, int k, const float *bias, fy_error *err)
{
    if (!w) {
        fy_err(err, FY_EINVAL, "float linear layer: no weights");
        return NULL;
    }
    /* Panels for full products plus the rows for subsets: the memory of a
     * second copy buys a fast shortlisted output layer; only float32 models
     * (not the int8 ones users run) pay it. */
    float *t = malloc((size_t)n * k * sizeof(float));
    if (!t) {
        fy_err(err, FY_ENOMEM, "float linear layer %d x %d: out of memory", k, n);
        return NULL;
    }
    for (int j = 0; j < n; j++)
        for (int kk = 0; kk < k; kk++) t[(size_t)kk * n + j] = w[(size_t)j * k + kk];
    fy_linear *l = fy_linear_new_f32(t, k, n, bias, err);
    free(t);
    if (!l) return NULL;
    l->rows = aligned_alloc64((size_t)n * k * sizeof(float));
    if (!l->rows) {
        fy_linear_free(l);
        fy_err(err, FY_ENOMEM, "float linear layer %d x %d: out of memory", k, n);
        return NULL;
    }
    memcpy(l->rows, w, (size_t)n * k * sizeof(float));
    return l;
}

void fy_linear_free(fy_linear *l)
{
    if (!l) return;
    free(l->w8_own);
    free(l->w8il);
    free(l->sat_any);
    free(l->sat_off);
    free(l->sat_pair);
    free(l->bias);
    free(l->panels);
    free(l->rows);
    free(l);
}

int fy_linear_in(const fy_linear *l)
{
    return l->k;
}

int fy_linear_out(const fy_linear *l)
{
    return l->n;
}

int fy_linear_i8_parts_get(const fy_linear *l, fy_linear_i8_parts *out)
{
    if (!l->int8) return FY_EINVAL;
    *out = (fy_linear_i8_parts){
        .w = l->w8,
        .bias = l->bias,
        .n = l->n,
        .k = l->k,
        .a_mult = l->a_mult,
        .unquant = l->unquant,
    };
    return 0;
}

size_t fy_linear_sat_pairs(const fy_linear *l)
{
    return l->int8 ? l->sat_pairs : 0;
}

int fy_linear_vnni(const fy_linear *l)
{
    return l->vnni;
}

/* Rows from which a product packs a's rows in panels of 16 (where the
 * path can): below, the row kernels' lane reductions cost less than the
 * panels' unused lanes. */
#define P16_MIN_ROWS 8

size_t fy_linear_scratch_bytes(const fy_linear *l, int m)
{
    size_t bytes;
    if (m < 1) m = 1;
    if (l->int8) {
        bytes = ((size_t)m * l->k + 63) / 64 * 64;
        if (l->kern->pack_a16 && m >= P16_MIN_ROWS) bytes += FY_I8_P16_BYTES(m, l->k);
    } else {
        bytes = (size_t)F32_GATHER_COLS * ((size_t)l->k + 1) * sizeof(float);
    }
    return (bytes + 63) / 64 * 64;
}

/* Fills one panel (16 lanes) of scratch with the columns ids[0..nc) (nc <=
 * 16; missing lanes are zero), walking k in the outer loop so the panel is
 * written sequentially. From rows, each lane reads a contiguous stream. */
static void f32_gather_panel(const fy_linear *l, const int32_t *ids, int nc, float *panel)
{
    const int k = l->k;
    const float *src[FY_F32_PANEL];
    size_t step = l->rows ? 1 : FY_F32_PANEL;
    for (int c = 0; c < FY_F32_PANEL; c++) {
        if (c >= nc)
            src[c] = NULL;
        else if (l->rows)
            src[c] = l->rows + (size_t)ids[c] * k;
        else /* one float per cache line: slow; fy_linear_new_f32_nk keeps rows */
            src[c] = l->panels + (size_t)(ids[c] / FY_F32_PANEL) * k * FY_F32_PANEL +
                     ids[c] % FY_F32_PANEL;
    }
    for (int kk = 0; kk < k; kk++) {
        float *dst = panel + (size_t)kk * FY_F32_PANEL;
        for (int c = 0; c < FY_F32_PANEL; c++) dst[c] = src[c] ? src[c][kk * step] : 0.0f;
    }
}

/* Float column subset: gathers F32_GATHER_COLS columns at a time into
 * panels in scratch, then runs the panel kernel on them. */
static void f32_forward_gather(const fy_linear *l, const float *x, int m, const int32_t *cols,
                               int ncols, float *scratch, float *y, int ldy)
{
    const int k = l->k;
    float *panels = scratch;
    float *bias = scratch + (size_t)F32_GATHER_COLS * k;
    for (int c0 = 0; c0 < ncols; c0 += F32_GATHER_COLS) {
        int nc = ncols - c0 < F32_GATHER_COLS ? ncols - c0 : F32_GATHER_COLS;
        for (int p = 0; p * FY_F32_PANEL < nc; p++) {
            int left = nc - p * FY_F32_PANEL;
            f32_gather_panel(l, cols + c0 + p * FY_F32_PANEL,
                             left < FY_F32_PANEL ? left : FY_F32_PANEL,
                             panels + (size_t)p * k * FY_F32_PANEL);
        }
        if (l->bias)
            for (int c = 0; c < nc; c++) bias[c] = l->bias[cols[c0 + c]];
        l->kern->f32_gemm(x, m, k, panels, nc, l->bias ? bias : NULL, y + c0, ldy);
    }
}

/* Columns c0 .. c0 + nc - 1 (of cols, or of all) on the VNNI entry. The
 * kernel indexes w, bias and the lists by column id, so a contiguous range
 * passes its ids as an offset view of them. */
static void i8_vnni_chunk(const fy_linear *l, const uint8_t *a, int m, const int32_t *cols, int c0,
                          int nc, float *y, int ldy)
{
    const int k = l->k;
    if (cols) {
        l->kern->i8_gemm_vnni(a, m, k, l->w8, &l->sat, cols + c0, nc, l->unquant, l->bias, y, ldy);
        return;
    }
    fy_i8_sat sat = l->sat;
    sat.base = c0;
    l->kern->i8_gemm_vnni(a, m, k, l->w8 + (size_t)c0 * k, &sat, NULL, nc, l->unquant, l->bias + c0,
                          y, ldy);
}

/* The same on the panel entry (a's rows also in ap), with the layer's
 * product: VNNI with its lists, or the saturating one (sat NULL). */
static void i8_p16_chunk(const fy_linear *l, const uint8_t *a, const uint8_t *ap, int m,
                         const int32_t *cols, int c0, int nc, float *y, int ldy)
{
    const int k = l->k;
    if (cols) {
        l->kern->i8_gemm_p16(a, ap, m, k, l->w8, l->vnni ? &l->sat : NULL, cols + c0, nc,
                             l->unquant, l->bias, y, ldy);
        return;
    }
    fy_i8_sat sat = l->sat;
    sat.base = c0;
    l->kern->i8_gemm_p16(a, ap, m, k, l->w8 + (size_t)c0 * k, l->vnni ? &sat : NULL, NULL, nc,
                         l->unquant, l->bias + c0, y, ldy);
}

/* Output columns per pass so that the weights a pass reads (about
 * CHUNK_BYTES) stay in the L2 cache while every row block of x uses them. */
#define CHUNK_BYTES (128 * 1024)

/* Products smaller than this (m·columns·k multiply-adds) stay on one
 * thread: handing items to a helper and waiting for them costs about a
 * microsecond (bench/par_bench.c). */
#define PAR_MIN_MACS (64 * 1024)

/* The same on the one-row layout, whose products stream their weights at
 * the rate of L3: against the 1.2-1.5 us of a hand-off and its join, a
 * 384x384 layer (144 KiB; 2.0-2.2 us alone) took 2.5-2.6 us shared, a
 * 512x512 one (256 KiB; 3.5-4.1 us alone) 3.3-3.6 (Zen 5, 7 December). */
#define PAR_MIN_MACS_IL (192 * 1024)

/* Items per thread of a shared product. Each thread claims from a block
 * of its own first (fy_par_for), so one item a thread, one long run of
 * weights each, unless a pass's L2 chunk cuts finer (measured against
 * two: 1.02x one sentence at a time with the helper; docs/performance.md). */
#define PAR_ITEMS_PER_THREAD 1

/* One int8 product after its activations are quantised (and packed): the
 * columns in items of `chunk`, for fy_par_for. */
typedef struct i8_product {
    const fy_linear *l;
    const uint8_t *a, *ap;
    int il; /* one row on the one-row layout */
    int m, ncols, chunk, ldy;
    const int32_t *cols;
    float *y;
    int relu; /* each item then clears its columns' negatives */
} i8_product;

static void i8_item(void *arg, int item)
{
    const i8_product *p = arg;
    const fy_linear *l = p->l;
    const int k = l->k, c0 = item * p->chunk;
    const int nc = p->ncols - c0 < p->chunk ? p->ncols - c0 : p->chunk;
    float *y = p->y + c0;
    if (p->il) {
        fy_i8_sat sat = l->sat;
        sat.base = c0;
        l->kern->i8_gemv_il(p->a, k, l->w8il + (size_t)c0 * k, l->w8 + (size_t)c0 * k, &sat, nc,
                            l->unquant, l->bias + c0, y);
    } else if (p->ap)
        i8_p16_chunk(l, p->a, p->ap, p->m, p->cols, c0, nc, y, p->ldy);
    else if (l->vnni)
        i8_vnni_chunk(l, p->a, p->m, p->cols, c0, nc, y, p->ldy);
    else if (p->cols)
        l->kern->i8_gemm(p->a, p->m, k, l->w8, p->cols + c0, nc, l->unquant, l->bias, y, p->ldy);
    else
        l->kern->i8_gemm(p->a, p->m, k, l->w8 + (size_t)c0 * k, NULL, nc, l->unquant, l->bias + c0,
                         y, p->ldy);
    for (int r = 0; p->relu && r < p->m; r++) fy_relu(y + (size_t)r * p->ldy, (size_t)nc);
}

/* Columns per item: a pass's worth of L2 for many rows, everything at once
 * for a few; with a team, smaller where that gives each of its threads
 * PAR_ITEMS_PER_THREAD items (multiples of 8 columns, at least 64; on the
 * one-row layout, il, whole panels). */
static int i8_chunk(const fy_linear *l, int m, int ncols, const fy_par *team, int il)
{
    int chunk = m <= 3 ? ncols : (CHUNK_BYTES / l->k + 7) / 8 * 8;
    if (team && (long)m * ncols * l->k >= (il ? PAR_MIN_MACS_IL : PAR_MIN_MACS)) {
        int parts = PAR_ITEMS_PER_THREAD * fy_par_threads(team);
        int even = (ncols + parts - 1) / parts;
        even = even < 64 ? 64 : (even + 7) / 8 * 8;
        if (il) even = (even + FY_I8_IL_COLS - 1) / FY_I8_IL_COLS * FY_I8_IL_COLS;
        if (even < chunk) chunk = even;
    }
    return chunk;
}

/* Quantises x (m rows of l->k) into a and, where l's kernel takes panels,
 * packs them after it; returns the packed copy, or NULL. */
static const uint8_t *i8_quantize(const fy_linear *l, const float *x, int m, uint8_t *a)
{
    const int k = l->k;
    l->kern->quantize_u8(x, (size_t)m * k, l->a_mult, a);
    if (!l->kern->pack_a16 || m < P16_MIN_ROWS) return NULL;
    uint8_t *ap = a + ((size_t)m * k + 63) / 64 * 64;
    l->kern->pack_a16(a, m, k, ap);
    return ap;
}

/* Describes l's int8 product of the quantised a (ap: its panels or NULL),
 * in items of p->chunk columns (i8_item); returns the number of items. */
static int i8_describe(const fy_linear *l, const uint8_t *a, const uint8_t *ap, int m,
                       const int32_t *cols, int ncols, float *y, int ldy, const fy_par *team,
                       i8_product *p)
{
    int il = m == 1 && !cols && l->w8il;
    *p = (i8_product){l, a, ap, il, m, ncols, i8_chunk(l, m, ncols, team, il), ldy, cols, y, 0};
    return (ncols + p->chunk - 1) / p->chunk;
}

static void i8_run(fy_par *team, int items, fy_par_fn fn, void *arg)
{
    if (team && items > 1)
        fy_par_for(team, items, fn, arg);
    else
        for (int i = 0; i < items; i++) fn(arg, i);
}

/* l's int8 product of x, shared with the calling thread's team; relu:
 * each item then clears its columns' negatives. */
static void i8_forward(const fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                       void *scratch, float *y, int ldy, int relu)
{
    fy_par *team = fy_par_attached();
    i8_product p;
    const uint8_t *ap = i8_quantize(l, x, m, scratch);
    int items = i8_describe(l, scratch, ap, m, cols, ncols, y, ldy, team, &p);
    p.relu = relu;
    i8_run(team, items, i8_item, &p);
}

void fy_linear_forward_ex(const fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                          void *scratch, float *y, int ldy)
{
    if (!cols) ncols = l->n;
    if (m <= 0 || ncols <= 0) return;
    const int k = l->k;
    if (l->int8) {
        i8_forward(l, x, m, cols, ncols, scratch, y, ldy, 0);
    } else if (!cols) {
        int chunk =
            m <= 6 ? ncols
                   : (CHUNK_BYTES / (k * (int)sizeof(float) * FY_F32_PANEL) + 1) * FY_F32_PANEL;
        for (int c0 = 0; c0 < ncols; c0 += chunk) {
            int nc = ncols - c0 < chunk ? ncols - c0 : chunk;
            l->kern->f32_gemm(x, m, k, l->panels + (size_t)c0 * k, nc,
                              l->bias ? l->bias + c0 : NULL, y + c0, ldy);
        }
    } else {
        f32_forward_gather(l, x, m, cols, ncols, scratch, y, ldy);
    }
}

void fy_linear_forward_relu(const fy_linear *l, const float *x, int m, void *scratch, float *y)
{
    if (m <= 0) return;
    if (l->int8) {
        i8_forward(l, x, m, NULL, l->n, scratch, y, l->n, 1);
        return;
    }
    fy_linear_forward(l, x, m, NULL, 0, scratch, y);
    fy_relu(y, (size_t)m * l->n);
}

/* Several int8 products as one job: items before end[i] are products
 * 0 .. i's, in order. */
typedef struct i8_set {
    i8_product p[FY_LINEAR_SET_MAX];
    int end[FY_LINEAR_SET_MAX];
} i8_set;

static void i8_set_item(void *arg, int item)
{
    i8_set *s = arg;
    int i = 0;
    while (item >= s->end[i]) i++;
    i8_item(&s->p[i], i ? item - s->end[i - 1] : item);
}

/* Whether b's quantisation of an input gives the bytes a's does. */
static int same_quantisation(const fy_linear *a, const fy_linear *b)
{
    return a->k == b->k && a->kern == b->kern && a->a_mult == b->a_mult;
}

/* Whether fy_linear_forward_set runs ls as one job: int8 layers, at most
 * FY_LINEAR_SET_MAX of them. */
static int one_job(const fy_linear *const *ls, int count)
{
    int int8 = count <= FY_LINEAR_SET_MAX;
    for (int i = 0; i < count; i++) int8 = int8 && ls[i]->int8;
    return int8;
}

/* The first of ls[0 .. i] whose quantised input ls[i] reads: i itself
 * where no earlier layer's is the same bytes. */
static int quantised_by(const fy_linear *const *ls, int i)
{
    int j = 0;
    while (j < i && !same_quantisation(ls[j], ls[i])) j++;
    return j;
}

void fy_linear_forward_set(const fy_linear *const *ls, int count, const float *x, int m,
                           void *scratch, float *const *ys)
{
    if (!one_job(ls, count)) {
        for (int i = 0; i < count; i++) fy_linear_forward(ls[i], x, m, NULL, 0, scratch, ys[i]);
        return;
    }
    if (m <= 0) return;
    fy_par *team = fy_par_attached();
    i8_set s;
    uint8_t *next = scratch;
    int items = 0;
    for (int i = 0; i < count; i++) {
        const fy_linear *l = ls[i];
        int j = quantised_by(ls, i);
        const uint8_t *a = next, *ap;
        if (j < i) {
            a = s.p[j].a;
            ap = s.p[j].ap;
        } else {
            ap = i8_quantize(l, x, m, next);
            next += fy_linear_scratch_bytes(l, m);
        }
        items += i8_describe(l, a, ap, m, NULL, l->n, ys[i], l->n, team, &s.p[i]);
        s.end[i] = items;
    }
    i8_run(team, items, i8_set_item, &s);
}

size_t fy_linear_set_scratch_bytes(const fy_linear *const *ls, int count, int m)
{
    const int set = one_job(ls, count);
    size_t bytes = 0;
    for (int i = 0; i < count; i++) {
        size_t own = fy_linear_scratch_bytes(ls[i], m);
        if (!set) /* one after another, each in the same scratch */
            bytes = own > bytes ? own : bytes;
        else if (quantised_by(ls, i) == i)
            bytes += own;
    }
    return bytes;
}

void fy_linear_forward(const fy_linear *l, const float *x, int m, const int32_t *cols, int ncols,
                       void *scratch, float *y)
{
    fy_linear_forward_ex(l, x, m, cols, ncols, scratch, y, cols ? ncols : l->n);
}

float fy_i8_weight_mult(const float *w, size_t count)
{
    float mx = 0.0f;
    for (size_t i = 0; i < count; i++) {
        float a = fabsf(w[i]);
        if (a > mx) mx = a;
    }
    return mx > 0.0f ? 127.0f / mx : 1.0f;
}

void fy_i8_quantize(const float *w, size_t count, float mult, int8_t *out)
{
    /* Same rounding and saturation as the activations, without the shift. */
    for (size_t i = 0; i < count; i++) {
        float v = w[i] * mult;
        int32_t q = INT32_MIN;
        if (v >= -2147483648.0f && v < 2147483648.0f) q = (int32_t)rintf(v);
        if (q < -127) q = -127;
        if (q > 127) q = 127;
        out[i] = (int8_t)q;
    }
}
