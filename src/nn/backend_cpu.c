/* backend_cpu.c - the "cpu" backend: the encoder and the SSRU decoder of
 * encoder.c / decoder.c over host memory, with the kernel path cpu.c chose
 * (see backend.h for the contract).
 *
 * Sections: the net (embeddings, positions, encoder, decoder), the run (one
 * arena per worker, carved once), and the operations: encode, columns,
 * rows, one step with its selection.
 */
#include "nn/backend.h"
#include "nn/backend_cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* madvise */
#include <unistd.h>   /* sysconf */

#include "nn/decoder.h"
#include "nn/encoder.h"
#include "nn/ops.h"
#include "util/arena.h"

/* ------------------------------------------------------------------------ */
/* The net                                                                   */
/* ------------------------------------------------------------------------ */

struct fy_nn_net {
    fy_nn_spec spec;
    int d, depth; /* model width, decoder layers */
    /* Source (slot 0) and separate target (slot 1) embeddings [vocab][d],
     * in the mapped file: float32, or int8 rows that lookups dequantise. */
    fy_nn_embedding emb[2];
    int trg_slot;    /* 0 (tied embeddings) or 1 */
    float emb_scale; /* sqrt(d) */
    float *pos;      /* [npos][d] sinusoidal position table */
    int npos;
    fy_encoder *enc;
    fy_decoder *dec;
};

/* The embedding table name, read in place: float32, or intgemm8 rows that
 * lookups dequantise (q·(1/mult), as Marian's loader). */
static int bind_embedding(fy_nn_net *n, const char *name, int vocab, int slot, fy_error *err)
{
    const fy_marian *m = n->spec.model;
    const fy_tensor *e = fy_marian_find(m, name);
    if (!e) return fy_err(err, FY_EFORMAT, "%s: tensor %s is missing", fy_marian_path(m), name);
    if (e->ndim != 2 || e->shape[0] != vocab || e->shape[1] != n->d)
        return fy_err(err, FY_EFORMAT, "%s: tensor %s has shape [%d, %d], expected [%d, %d]",
                      fy_marian_path(m), name, e->shape[0], e->ndim > 1 ? e->shape[1] : 0, vocab,
                      n->d);
    if (e->type == FY_DT_F32) {
        n->emb[slot] = (fy_nn_embedding){.f32 = e->data};
        return 0;
    }
    if (e->type != FY_DT_INTGEMM8)
        return fy_err(err, FY_EUNSUPPORTED, "%s: tensor %s has type %s", fy_marian_path(m), name,
                      fy_dtype_name(e->type));
    n->emb[slot] = (fy_nn_embedding){.i8 = e->data, .inv = 1.0f / e->quant_mult};
    return 0;
}

static int bind_net(fy_nn_net *n, fy_error *err)
{
    const fy_model_config *c = n->spec.cfg;
    const char *src_name = c->separate_embeddings ? "encoder_Wemb" : "Wemb";
    if (bind_embedding(n, src_name, n->spec.src_vocab, 0, err) < 0) return err->code;
    n->trg_slot = c->separate_embeddings ? 1 : 0;
    if (c->separate_embeddings && bind_embedding(n, "decoder_Wemb", n->spec.trg_vocab, 1, err) < 0)
        return err->code;
    n->emb_scale = sqrtf((float)n->d);
    /* Positions: source tokens and decoder steps. */
    n->npos = n->spec.max_steps > n->spec.max_src_len ? n->spec.max_steps : n->spec.max_src_len;
    n->pos = malloc((size_t)n->npos * n->d * sizeof *n->pos);
    if (!n->pos) return fy_err(err, FY_ENOMEM, "out of memory for the position table");
    fy_positional_fill(n->pos, n->npos, n->d, 0);
    n->enc = fy_encoder_bind(n->spec.model, n->d, c->dim_ffn, c->enc_depth, c->heads, err);
    if (!n->enc) return err->code;
    n->dec = fy_decoder_bind(n->spec.model, n->d, c->dim_ffn, c->dec_depth, c->heads, c->int8,
                             &n->emb[n->trg_slot], n->spec.trg_vocab, err);
    return n->dec ? 0 : err->code;
}

static void cpu_net_free(fy_nn_net *n)
{
    if (!n) return;
    fy_encoder_free(n->enc);
    fy_decoder_free(n->dec);
    free(n->pos);
    free(n);
}

static fy_nn_net *cpu_net_new(fy_nn_dev *dev, const fy_nn_spec *spec, fy_error *err)
{
    (void)dev;
    fy_error local;
    if (!err) err = &local;
    if (spec->max_src_len < 1 || spec->max_steps < 1) {
        fy_err(err, FY_EINVAL, "network: bad limits (%d source tokens, %d steps)",
               spec->max_src_len, spec->max_steps);
        return NULL;
    }
    fy_nn_net *n = calloc(1, sizeof *n);
    if (!n) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    n->spec = *spec;
    n->d = spec->cfg->dim_emb;
    n->depth = spec->cfg->dec_depth;
    if (bind_net(n, err) < 0) {
        cpu_net_free(n);
        return NULL;
    }
    return n;
}

void fy_nn_cpu_parts_get(const fy_nn_net *n, fy_nn_cpu_parts *out)
{
    *out = (fy_nn_cpu_parts){.d = n->d,
                             .enc = n->enc,
                             .dec = n->dec,
                             .src = n->emb[0],
                             .trg = n->emb[n->trg_slot],
                             .emb_scale = n->emb_scale,
                             .pos = n->pos,
                             .npos = n->npos};
}

static size_t cpu_net_bytes(const fy_nn_net *n)
{
    size_t table = (size_t)n->npos * n->d * sizeof(float);
    /* int8 weights are read in place, the output layer too unless it had
     * to be requantised, plus the decoder's one-row copies. Float weights
     * are repacked into panels: about the file again. */
    if (n->spec.cfg->int8)
        return table + fy_decoder_output_bytes(n->dec) + fy_decoder_one_row_bytes(n->dec);
    return table + (size_t)fy_marian_file_size(n->spec.model);
}

/* ------------------------------------------------------------------------ */
/* The run: one arena per worker                                             */
/* ------------------------------------------------------------------------ */

struct fy_nn_run {
    fy_nn_net *net;
    char *arena;
    size_t arena_bytes;
    int max_tokens, max_rows;
    int ntok, nslots; /* the encoded sub-batch */
    /* encoder side */
    int32_t *ids;   /* [max_tokens] packed source ids */
    int *off, *len; /* [max_rows] each slot's tokens */
    float *x;       /* [max_tokens][d] embeddings, then encoder context */
    fy_encoder_scratch enc;
    /* decoder side */
    float *keys, *values;  /* [dec_depth][max_tokens·d] cross-attention K/V (decoder.h) */
    float *state, *state2; /* [dec_depth][max_rows][d] SSRU cells, and the next rows' */
    float *dx;             /* [max_rows][d] step input / top hidden state */
    fy_decoder_scratch dec;
    float *logits;          /* [max_rows][trg_vocab] */
    int *row_slot;          /* [max_rows] each row's slot... */
    int *slot_tmp;          /* [max_rows] rows_keep's new slots */
    int *row_off, *row_len; /* ...and its source rows */
    int rows;               /* rows begun or kept */
    /* columns: each slot's ascending ids (or all), logits rows V apart, so
     * only the pages a list uses are ever touched */
    int32_t *cols; /* [max_rows][trg_vocab] */
    int *ncols;    /* [max_rows]; -1: the whole vocabulary */
    /* a step's union of its rows' columns (score_rows) */
    uint64_t *uni_bits; /* [(trg_vocab + 63) / 64] */
    int32_t *uni_ids;   /* [trg_vocab] ascending */
    int32_t *uni_pos;   /* [trg_vocab]: id -> index in uni_ids (for ids in it) */
    void *lin;          /* linear-layer scratch */
};

/* The cross-attention keys and values are written only after the encoder
 * has finished, from x and enc.q: until then their planes hold the
 * encoder's other scratch (12 MB less per worker for base-memory). */
static void layout_kv(fy_nn_run *r, fy_arena *a, size_t T, size_t d, size_t depth)
{
    size_t planes = 2 * depth < 4 ? 4 : 2 * depth;
    float *kv = fy_arena_carve(a, planes * T * d * sizeof(float));
    r->keys = kv;
    r->values = a->base ? kv + depth * T * d : NULL;
    r->enc.k = kv;
    r->enc.v = a->base ? kv + T * d : NULL;
    r->enc.ctx = a->base ? kv + 2 * T * d : NULL;
    r->enc.kt = a->base ? kv + 3 * T * d : NULL;
}

static size_t linear_scratch(const fy_nn_net *n, int max_tokens, int max_rows)
{
    size_t lin = fy_encoder_linear_scratch(n->enc, max_tokens);
    size_t dl = fy_decoder_linear_scratch(n->dec, max_rows);
    size_t proj = fy_decoder_linear_scratch(n->dec, max_tokens);
    if (dl > lin) lin = dl;
    return proj > lin ? proj : lin;
}

/* Lays the run's buffers out in a (sizes only while a->base is NULL). */
static void run_layout(fy_nn_run *r, fy_arena *a)
{
    const fy_nn_net *n = r->net;
    const fy_model_config *c = n->spec.cfg;
    size_t d = (size_t)n->d, dffn = (size_t)c->dim_ffn, L = (size_t)n->spec.max_src_len;
    size_t T = (size_t)r->max_tokens, B = (size_t)r->max_rows, V = (size_t)n->spec.trg_vocab;
    size_t depth = (size_t)n->depth, f = sizeof(float);

    r->ids = fy_arena_carve(a, T * sizeof(int32_t));
    r->off = fy_arena_carve(a, B * sizeof(int));
    r->len = fy_arena_carve(a, B * sizeof(int));
    r->x = fy_arena_carve(a, T * d * f);
    r->enc.q = fy_arena_carve(a, T * d * f); /* also fy_decoder_prepare's tmp */
    r->enc.hidden = fy_arena_carve(a, FY_NN_FFN_BLOCK * dffn * f);
    r->enc.out = fy_arena_carve(a, FY_NN_FFN_BLOCK * d * f);
    r->enc.scores = fy_arena_carve(a, T * (size_t)c->heads * f);
    layout_kv(r, a, T, d, depth);
    r->state = fy_arena_carve(a, depth * B * d * f);
    r->state2 = fy_arena_carve(a, depth * B * d * f);
    r->dx = fy_arena_carve(a, B * d * f);
    r->dec.xw = fy_arena_carve(a, B * d * f);
    r->dec.f = fy_arena_carve(a, B * d * f);
    r->dec.q = fy_arena_carve(a, B * d * f);
    r->dec.ctx = fy_arena_carve(a, B * d * f);
    r->dec.o = fy_arena_carve(a, B * d * f);
    r->dec.hidden = fy_arena_carve(a, B * dffn * f);
    r->dec.scores = fy_arena_carve(a, L * f);
    r->logits = fy_arena_carve(a, B * V * f);
    r->row_slot = fy_arena_carve(a, B * sizeof(int));
    r->slot_tmp = fy_arena_carve(a, B * sizeof(int));
    r->row_off = fy_arena_carve(a, B * sizeof(int));
    r->row_len = fy_arena_carve(a, B * sizeof(int));
    r->cols = fy_arena_carve(a, B * V * sizeof(int32_t));
    r->ncols = fy_arena_carve(a, B * sizeof(int));
    r->uni_bits = fy_arena_carve(a, (V + 63) / 64 * sizeof(uint64_t));
    r->uni_ids = fy_arena_carve(a, V * sizeof(int32_t));
    r->uni_pos = fy_arena_carve(a, V * sizeof(int32_t));
    r->lin = fy_arena_carve(a, linear_scratch(n, r->max_tokens, r->max_rows));
    r->enc.lin = r->lin;
    r->dec.lin = r->lin;
}

static size_t cpu_run_bytes(const fy_nn_net *net, int max_tokens, int max_rows)
{
    fy_nn_run r = {.net = (fy_nn_net *)net, .max_tokens = max_tokens, .max_rows = max_rows};
    fy_arena a = {NULL, 0};
    run_layout(&r, &a);
    return (a.used + 63) & ~(size_t)63;
}

static void cpu_run_free(fy_nn_run *r)
{
    if (!r) return;
    free(r->arena);
    free(r);
}

static fy_nn_run *cpu_run_new(fy_nn_net *net, int max_tokens, int max_rows, fy_error *err)
{
    fy_nn_run *r = calloc(1, sizeof *r);
    if (!r) goto oom;
    r->net = net;
    r->max_tokens = max_tokens;
    r->max_rows = max_rows;
    fy_arena a = {NULL, 0};
    run_layout(r, &a);
    /* Whole pages, so that run_trim can give them back. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    r->arena_bytes = (a.used + page - 1) / page * page;
    r->arena = aligned_alloc(page, r->arena_bytes);
    if (!r->arena) goto oom;
    a = (fy_arena){r->arena, 0};
    run_layout(r, &a);
    return r;
oom:
    fy_err(err, FY_ENOMEM, "out of memory for a translation worker");
    cpu_run_free(r);
    return NULL;
}

static void cpu_run_trim(fy_nn_run *r)
{
    /* Nothing in the arena outlives a sub-batch: its pages come back zeroed. */
    if (r && r->arena) madvise(r->arena, r->arena_bytes, MADV_DONTNEED);
}

/* ------------------------------------------------------------------------ */
/* Encode                                                                    */
/* ------------------------------------------------------------------------ */

/* fy_nn_embed from embedding slot 0 (source) or 1 (target, = 0 when tied):
 * int8 rows are dequantised as they are used, (float)q·inv, the floats the
 * reference's dequantised matrix holds. */
static void embed(const fy_nn_net *n, int slot, float *x, const int32_t *ids, int rows,
                  const float *pos, int pos_stride)
{
    int d = n->d;
    const int8_t *q = n->emb[slot].i8;
    if (!q) {
        fy_nn_embed(x, n->emb[slot].f32, ids, rows, d, n->emb_scale, pos, pos_stride);
        return;
    }
    float inv = n->emb[slot].inv, scale = n->emb_scale;
    for (int r = 0; r < rows; r++) {
        float *xr = x + (size_t)r * d;
        const float *pr = pos + (size_t)r * pos_stride;
        if (!ids) {
            for (int i = 0; i < d; i++) xr[i] = 0.0f * scale + pr[i];
            continue;
        }
        const int8_t *qr = q + (size_t)ids[r] * d;
        for (int i = 0; i < d; i++) {
            float e = (float)qr[i] * inv;
            xr[i] = e * scale + pr[i];
        }
    }
}

static int cpu_encode(fy_nn_run *r, const int32_t *ids, const int *len, int ns, fy_error *err)
{
    const fy_nn_net *n = r->net;
    int d = n->d, ntok = 0;
    if (ns < 0 || ns > r->max_rows) return fy_err(err, FY_EINVAL, "encode: %d sentences", ns);
    for (int s = 0; s < ns; s++) {
        if (len[s] < 1 || len[s] > n->spec.max_src_len || ntok + len[s] > r->max_tokens)
            return fy_err(err, FY_EINVAL, "encode: sentence %d of %d tokens does not fit", s,
                          len[s]);
        r->off[s] = ntok;
        r->len[s] = len[s];
        r->ncols[s] = -1;
        ntok += len[s];
    }
    memcpy(r->ids, ids, (size_t)ntok * sizeof *ids);
    for (int s = 0; s < ns; s++)
        embed(n, 0, r->x + (size_t)r->off[s] * d, r->ids + r->off[s], len[s], n->pos, d);
    fy_encoder_forward(n->enc, r->x, ntok, r->off, r->len, ns, &r->enc);
    fy_decoder_prepare(n->dec, r->x, ntok, r->off, r->len, ns, r->keys, r->values, r->enc.q,
                       r->lin);
    r->ntok = ntok;
    r->nslots = ns;
    r->rows = 0;
    return 0;
}

static int cpu_set_columns(fy_nn_run *r, int slot, const int32_t *cols, int ncols, fy_error *err)
{
    int V = r->net->spec.trg_vocab;
    if (slot < 0 || slot >= r->nslots || (cols && (ncols < 0 || ncols > V)))
        return fy_err(err, FY_EINVAL, "set_columns: slot %d, %d columns", slot, ncols);
    r->ncols[slot] = cols ? ncols : -1;
    if (cols) memcpy(r->cols + (size_t)slot * V, cols, (size_t)ncols * sizeof *cols);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */
/* ------------------------------------------------------------------------ */

static void row_set(fy_nn_run *r, int row, int slot)
{
    r->row_slot[row] = slot;
    r->row_off[row] = r->off[slot];
    r->row_len[row] = r->len[slot];
}

static int cpu_rows_begin(fy_nn_run *r, const int *slot, int rows, fy_error *err)
{
    size_t d = (size_t)r->net->d;
    if (rows < 0 || rows > r->max_rows) return fy_err(err, FY_EINVAL, "rows_begin: %d rows", rows);
    for (int j = 0; j < rows; j++) {
        if (slot[j] < 0 || slot[j] >= r->nslots)
            return fy_err(err, FY_EINVAL, "rows_begin: slot %d", slot[j]);
        row_set(r, j, slot[j]);
    }
    for (int l = 0; l < r->net->depth; l++)
        memset(r->state + (size_t)l * r->max_rows * d, 0, (size_t)rows * d * sizeof(float));
    r->rows = rows;
    return 0;
}

/* Compaction (from[j] >= j, increasing) moves cells forward in place; any
 * other order (beam reordering) goes through the second buffer. */
static int cpu_rows_keep(fy_nn_run *r, const int *from, int rows, fy_error *err)
{
    size_t d = (size_t)r->net->d, plane = (size_t)r->max_rows * d, cell = d * sizeof(float);
    int forward = 1;
    for (int j = 0; j < rows; j++) {
        if (from[j] < 0 || from[j] >= r->rows)
            return fy_err(err, FY_EINVAL, "rows_keep: row %d of %d", from[j], r->rows);
        forward &= from[j] >= j && (j == 0 || from[j] > from[j - 1]);
    }
    float *dst = forward ? r->state : r->state2;
    for (int l = 0; l < r->net->depth; l++)
        for (int j = 0; j < rows; j++)
            if (!forward || from[j] != j)
                memcpy(dst + l * plane + j * d, r->state + l * plane + from[j] * d, cell);
    for (int j = 0; j < rows; j++) r->slot_tmp[j] = r->row_slot[from[j]];
    for (int j = 0; j < rows; j++) row_set(r, j, r->slot_tmp[j]);
    if (!forward) {
        r->state2 = r->state;
        r->state = dst;
    }
    r->rows = rows;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* One step                                                                  */
/* ------------------------------------------------------------------------ */

/* Row r's columns: its slot's list, or NULL for the whole vocabulary. */
static const int32_t *row_cols(const fy_nn_run *r, int row, int *ncols)
{
    int slot = r->row_slot[row];
    if (r->ncols[slot] < 0) {
        *ncols = r->net->spec.trg_vocab;
        return NULL;
    }
    *ncols = r->ncols[slot];
    return r->cols + (size_t)slot * r->net->spec.trg_vocab;
}

/* The union of rows r0 .. r1 - 1's column lists into uni_ids (ascending)
 * and uni_pos; returns its size, or -1 as soon as it is known to exceed
 * limit (then uni_ids and uni_pos are not written). */
static int union_columns(fy_nn_run *r, int r0, int r1, long limit)
{
    int V = r->net->spec.trg_vocab, words = (V + 63) / 64, u = 0;
    memset(r->uni_bits, 0, (size_t)words * sizeof(uint64_t));
    for (int i = r0; i < r1; i++) {
        int nc;
        const int32_t *cols = row_cols(r, i, &nc);
        for (int c = 0; c < nc; c++) {
            uint64_t bit = 1ull << (cols[c] & 63), *word = &r->uni_bits[cols[c] >> 6];
            u += !(*word & bit);
            *word |= bit;
        }
        if (u > limit) return -1;
    }
    u = 0;
    for (int wi = 0; wi < words; wi++) {
        for (uint64_t b = r->uni_bits[wi]; b; b &= b - 1) {
            int32_t id = wi * 64 + __builtin_ctzll(b);
            r->uni_pos[id] = u;
            r->uni_ids[u++] = id;
        }
    }
    return u;
}

/* A product of many rows costs this much less per row and column than
 * one row at a time (gemm_bench: m = 32 against m = 1 on a shortlist,
 * 3-8x by path and weights; the low end, so that a union is taken only
 * where it clearly pays), from UNION_MIN_ROWS rows (fewer share too
 * little: the products of 2 or 3 rows cost nearly what 2 or 3 single rows
 * do, and a union would compute each of them over every row's columns). */
#define UNION_GAIN     3
#define UNION_MIN_ROWS 8

/* Rows r0 .. r1 - 1 with shortlists: one product over the union of their
 * lists at m = rows, each row then reading its own columns out of it (an
 * int8 or float output column's value does not depend on which other
 * columns are computed, gemm.h), when that costs less than each row on
 * its own list at m = 1: rows >= UNION_MIN_ROWS and rows x union <=
 * UNION_GAIN x the lists' total. Shortlists of related sentences overlap,
 * so real batches mostly take the union; lists drawn at random (the
 * synthetic models') overlap little, and their rows go one at a time. */
static void score_listed(fy_nn_run *r, int r0, int r1)
{
    const fy_nn_net *n = r->net;
    size_t d = (size_t)n->d, V = (size_t)n->spec.trg_vocab;
    long total = 0;
    for (int i = r0; i < r1; i++) total += r->ncols[r->row_slot[i]];
    /* the union pays while rows x union <= UNION_GAIN x total */
    int u =
        r1 - r0 >= UNION_MIN_ROWS ? union_columns(r, r0, r1, UNION_GAIN * total / (r1 - r0)) : -1;
    if (u < 0) {
        for (int i = r0; i < r1; i++) {
            int nc;
            const int32_t *cols = row_cols(r, i, &nc);
            fy_decoder_logits(n->dec, r->dx + i * d, 1, cols, nc, r->lin, r->logits + i * V);
        }
        return;
    }
    float *lg = r->logits + r0 * V;
    fy_decoder_logits_ex(n->dec, r->dx + r0 * d, r1 - r0, r->uni_ids, u, r->lin, lg, (int)V);
    /* row i's own columns, in place: its c-th column sits at union index
     * >= c, so moving forward never overwrites one not yet read */
    for (int i = r0; i < r1; i++) {
        int nc;
        const int32_t *cols = row_cols(r, i, &nc);
        float *row = r->logits + i * V;
        for (int c = 0; c < nc; c++) row[c] = row[r->uni_pos[cols[c]]];
    }
}

/* Logits of every row, row r's at r·V: runs of rows with the whole
 * vocabulary in one product; runs of rows with shortlists by
 * score_listed. */
static void score_rows(fy_nn_run *r, int rows)
{
    const fy_nn_net *n = r->net;
    size_t d = (size_t)n->d, V = (size_t)n->spec.trg_vocab;
    int r0 = 0;
    while (r0 < rows) {
        int nc;
        int full = !row_cols(r, r0, &nc);
        int r1 = r0 + 1;
        while (r1 < rows && (row_cols(r, r1, &nc) == NULL) == full) r1++;
        if (full)
            fy_decoder_logits(n->dec, r->dx + r0 * d, r1 - r0, NULL, 0, r->lin, r->logits + r0 * V);
        else
            score_listed(r, r0, r1);
        r0 = r1;
    }
}

fy_nn_pick fy_nn_pick_row(const float *lg, const int32_t *cols, int ncols, int32_t unk)
{
    fy_nn_pick p = {.id = -1, .value = -INFINITY, .gap = INFINITY};
    float b2 = -INFINITY;
    for (int c = 0; c < ncols; c++) {
        int32_t id = cols ? cols[c] : c;
        if (id == unk) continue;
        float v = lg[c];
        if (v > p.value) {
            b2 = p.value;
            p.value = v;
            p.id = id;
        } else if (v > b2) {
            b2 = v;
        }
    }
    p.gap = p.value - b2;
    return p;
}

void fy_nn_topk_row(const float *lg, const int32_t *cols, int ncols, int32_t unk, float path, int k,
                    float *topv, int32_t *topi)
{
    int n = 0;
    for (int c = 0; c < ncols; c++) {
        int32_t id = cols ? cols[c] : c;
        if (id == unk) continue;
        float v = path + lg[c];
        if (n == k && !(v > topv[n - 1])) continue;
        int p = n < k ? n++ : n - 1;
        for (; p > 0 && topv[p - 1] < v; p--) {
            topv[p] = topv[p - 1];
            topi[p] = topi[p - 1];
        }
        topv[p] = v;
        topi[p] = id;
    }
    for (; n < k; n++) {
        topv[n] = -INFINITY;
        topi[n] = -1;
    }
}

static void select_rows(const fy_nn_run *r, const fy_nn_step *st)
{
    const fy_nn_spec *sp = &r->net->spec;
    size_t V = (size_t)sp->trg_vocab;
    for (int i = 0; i < st->rows; i++) {
        int nc;
        const int32_t *cols = row_cols(r, i, &nc);
        const float *lg = r->logits + i * V;
        if (st->k == 0)
            st->pick[i] = fy_nn_pick_row(lg, cols, nc, sp->trg_unk);
        else
            fy_nn_topk_row(lg, cols, nc, sp->trg_unk, st->path[i], st->k, st->topv + i * st->k,
                           st->topi + i * st->k);
    }
}

static int cpu_step(fy_nn_run *r, const fy_nn_step *st, fy_error *err)
{
    const fy_nn_net *n = r->net;
    size_t d = (size_t)n->d;
    if (st->rows < 1 || st->rows > r->rows || st->step < 0 || st->step >= n->npos || st->k < 0)
        return fy_err(err, FY_EINVAL, "step %d: %d rows of %d", st->step, st->rows, r->rows);
    const float *pos = n->pos + (size_t)st->step * d;
    for (int i = 0; i < st->rows; i++)
        embed(n, n->trg_slot, r->dx + i * d, st->last[i] < 0 ? NULL : &st->last[i], 1, pos, 0);
    fy_decoder_rows dr = {
        .rows = st->rows,
        .src_off = r->row_off,
        .src_len = r->row_len,
        .keys = r->keys,
        .values = r->values,
        .ntok = r->ntok,
        .state = r->state,
        .state_stride = r->max_rows,
    };
    fy_decoder_step(n->dec, r->dx, &dr, &r->dec);
    score_rows(r, st->rows);
    select_rows(r, st);
    return 0;
}

static int cpu_logits(fy_nn_run *r, int row, float *out, int *ncols, fy_error *err)
{
    if (row < 0 || row >= r->rows) return fy_err(err, FY_EINVAL, "logits: row %d", row);
    row_cols(r, row, ncols);
    memcpy(out, r->logits + (size_t)row * r->net->spec.trg_vocab, (size_t)*ncols * sizeof *out);
    return 0;
}

const fy_nn_backend fy_nn_cpu = {
    .name = "cpu",
    .net_new = cpu_net_new,
    .net_free = cpu_net_free,
    .net_bytes = cpu_net_bytes,
    .run_bytes = cpu_run_bytes,
    .run_new = cpu_run_new,
    .run_free = cpu_run_free,
    .run_trim = cpu_run_trim,
    .encode = cpu_encode,
    .set_columns = cpu_set_columns,
    .rows_begin = cpu_rows_begin,
    .rows_keep = cpu_rows_keep,
    .step = cpu_step,
    .logits = cpu_logits,
};
