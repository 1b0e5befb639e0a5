/* backend_vulkan.c - the "vulkan" backend: the encoder and the SSRU decoder
 * as sequences of the shaders in src/nn/vk (vk_ops.h), each of which gives
 * the CPU kernels' bits, so the whole network gives the cpu backend's
 * logits and choices (see backend.h for the contract, docs/gpu.md for the
 * float rules).
 *
 * Sections: devices (the Vulkan instance, shared, and each fy_nn_dev), the
 * net (every weight of a model in one device buffer, bound through the cpu
 * backend so that both read a model the same way), the run (one worker's
 * activations in one device buffer and one command recorder), encode, and
 * one decoder step: one recording, one submit, one wait, a few numbers per
 * row read back.
 */
#ifdef FY_HAVE_VULKAN

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/backend.h"
#include "nn/backend_cpu.h"
#include "nn/backend_vk.h"
#include "nn/vk/vk.h"
#include "nn/vk/vk_ops.h"

/* ------------------------------------------------------------------------ */
/* Devices                                                                   */
/* ------------------------------------------------------------------------ */

/* The instance is opened by the first device and closed with the last. */
static pthread_mutex_t vk_lock = PTHREAD_MUTEX_INITIALIZER;
static fy_vk *vk_instance;
static int vk_users;

/* A Vulkan fy_nn_dev's own part. */
typedef struct vk_device {
    fy_vk_dev *dev;
    pthread_mutex_t lock;
    size_t used;         /* device bytes nets and runs hold */
    uint64_t timeout_ns; /* a command not done by then: the device hangs */
    atomic_long fail_in; /* steps until an injected loss (FANYI_VK_FAIL_AFTER); < 0: never */
    atomic_int lost;     /* the injected loss happened */
} vk_device;

static int instance_get(fy_error *err)
{
    int rc = 0;
    pthread_mutex_lock(&vk_lock);
    if (!vk_instance) rc = fy_vk_open(&vk_instance, err);
    if (rc >= 0) vk_users++;
    pthread_mutex_unlock(&vk_lock);
    return rc;
}

static void instance_put(void)
{
    pthread_mutex_lock(&vk_lock);
    if (vk_users > 0 && --vk_users == 0) {
        fy_vk_close(vk_instance);
        vk_instance = NULL;
    }
    pthread_mutex_unlock(&vk_lock);
}

/* Batches sized to the device: hundreds of sentences a step on a GPU with
 * gigabytes, the CPU's sizes on a software device or a small GPU. */
static void device_limits(const fy_vk_info *in, fy_nn_dev *d)
{
    int big = strcmp(in->type, "cpu") != 0 && in->memory >= (4ull << 30);
    d->max_rows = big ? 256 : 32;
    d->max_tokens = big ? 16384 : 2048;
}

static fy_nn_dev *device_new(int index, fy_error *err)
{
    const fy_vk_info *in = fy_vk_device_info(vk_instance, index);
    fy_nn_dev *d = calloc(1, sizeof *d);
    vk_device *v = calloc(1, sizeof *v);
    if (!d || !v) {
        free(d);
        free(v);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    if (!(v->dev = fy_vk_dev_new(vk_instance, index, 0, err))) {
        free(d);
        free(v);
        return NULL;
    }
    pthread_mutex_init(&v->lock, NULL);
    /* A GPU that has not finished a step's commands in a minute hangs; a
     * software device (lavapipe) shares the CPU with everything else and
     * may just be slow. */
    v->timeout_ns = (strcmp(in->type, "cpu") ? 60ull : 600ull) * 1000000000ull;
    /* Tests of the failure path: the device is "lost" at its Nth step. */
    const char *fail = getenv("FANYI_VK_FAIL_AFTER");
    atomic_init(&v->fail_in, fail && *fail ? atol(fail) : -1);
    atomic_init(&v->lost, 0);
    d->be = &fy_nn_vulkan;
    d->impl = v;
    d->memory = (size_t)in->memory;
    snprintf(d->name, sizeof d->name, "vulkan:%d", index);
    snprintf(d->desc, sizeof d->desc, "%.64s (%s, %.1f GiB, %.48s)", in->name, in->type,
             (double)in->memory / (1 << 30), in->driver);
    device_limits(in, d);
    return d;
}

void fy_nn_vk_close(fy_nn_dev *d)
{
    if (!d) return;
    vk_device *v = d->impl;
    fy_vk_dev_free(v->dev);
    pthread_mutex_destroy(&v->lock);
    free(v);
    free(d);
    instance_put();
}

/* Opens device i unless skip (a CPU device in "auto", an unusable one in
 * "vulkan"); 1 when added, 0 when skipped. */
static int open_one(int i, int listing, int skip_cpu, fy_nn_dev **devs, int *n, int max,
                    fy_error *err)
{
    const fy_vk_info *in = fy_vk_device_info(vk_instance, i);
    if (skip_cpu && !strcmp(in->type, "cpu")) return 0;
    if (!in->usable) {
        if (listing) return 0;
        return fy_err(err, FY_EUNSUPPORTED, "vulkan:%d (%s) cannot run fanyi: %s", i, in->name,
                      in->why_not);
    }
    if (*n >= max) return fy_err(err, FY_ELIMIT, "more than %d devices", max);
    if (instance_get(err) < 0) return err->code;
    fy_nn_dev *d = device_new(i, err);
    if (!d) {
        instance_put();
        return err->code;
    }
    devs[(*n)++] = d;
    return 1;
}

int fy_nn_vk_open(int index, fy_nn_dev **devs, int *n, int max, int skip_cpu, fy_error *err)
{
    if (instance_get(err) < 0) return err->code; /* held while opening */
    int count = fy_vk_device_count(vk_instance), rc = 0, added = 0;
    if (index >= count)
        rc = fy_err(err, FY_ENOTFOUND, "there is no vulkan:%d (%d Vulkan device%s)", index, count,
                    count == 1 ? "" : "s");
    for (int i = index < 0 ? 0 : index; rc >= 0 && i < count && (index < 0 || i == index); i++) {
        int already = 0;
        for (int k = 0; k < *n; k++)
            if (devs[k]->be == &fy_nn_vulkan && atoi(devs[k]->name + 7) == i) already = 1;
        if (already) continue;
        rc = open_one(i, index < 0, skip_cpu, devs, n, max, err);
        added += rc > 0;
    }
    if (rc >= 0 && !added && index < 0)
        rc = fy_err(err, FY_ENOTFOUND, "no Vulkan device that can run fanyi was found");
    instance_put();
    return rc < 0 ? rc : 0;
}

/* Takes bytes of dev's budget (90% of its memory unless set); FY_ENOMEM
 * with what is left when they do not fit. */
static int budget_take(fy_nn_dev *d, size_t bytes, const char *what, fy_error *err)
{
    vk_device *v = d->impl;
    size_t budget = d->budget ? d->budget : d->memory / 10 * 9;
    pthread_mutex_lock(&v->lock);
    int fits = v->used <= budget && bytes <= budget - v->used;
    size_t left = v->used <= budget ? budget - v->used : 0;
    if (fits) v->used += bytes;
    pthread_mutex_unlock(&v->lock);
    if (fits) return 0;
    return fy_err(err, FY_ENOMEM, "%s needs %.1f MiB of %s's memory, %.1f MiB of its budget left",
                  what, (double)bytes / (1 << 20), d->name, (double)left / (1 << 20));
}

static size_t vk_dev_used(const fy_nn_dev *d)
{
    vk_device *v = d->impl;
    pthread_mutex_lock(&v->lock);
    size_t used = v->used;
    pthread_mutex_unlock(&v->lock);
    return used;
}

static void budget_give(fy_nn_dev *d, size_t bytes)
{
    vk_device *v = d->impl;
    pthread_mutex_lock(&v->lock);
    v->used -= bytes < v->used ? bytes : v->used;
    pthread_mutex_unlock(&v->lock);
}

/* A device failure is the scheduler's FY_EDEVICE: the batch runs again
 * elsewhere. Other errors (bad arguments) stay what they are. */
static int device_error(int rc, fy_error *err)
{
    if (rc == FY_EDEVICE || rc == FY_EDEVMEM || rc == FY_ETIMEOUT) {
        if (err) err->code = FY_EDEVICE;
        return FY_EDEVICE;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The net: every weight in one device buffer                                */
/* ------------------------------------------------------------------------ */

typedef struct vk_lin {
    fy_vk_i8_layer l;
    float a_mult; /* the activations' quantisation multiplier */
} vk_lin;

typedef struct vk_norm {
    fy_vk_ref scale, bias;
} vk_norm;

typedef struct vk_attn {
    vk_lin q, k, v, o;
    vk_norm ln;
} vk_attn;

typedef struct vk_ffn {
    vk_lin w1, w2;
    vk_norm ln;
} vk_ffn;

typedef struct vk_dec_layer {
    vk_lin rnn_w, rnn_wf;
    vk_norm rnn_ln;
    vk_attn ctx;
    vk_ffn ffn;
} vk_dec_layer;

typedef struct vk_table {
    fy_vk_ref data;
    int int8;
    float inv;
} vk_table;

struct fy_nn_net {
    fy_nn_dev *dev;
    fy_vk_dev *vd;
    fy_nn_spec spec;
    int d, dffn, heads, enc_depth, dec_depth;
    float emb_scale, attn_scale;
    fy_vk_buf *buf; /* every weight, bias, norm and table */
    size_t bytes;
    vk_table src, trg;
    fy_vk_ref pos;
    int npos;
    vk_attn *enc_self; /* [enc_depth] */
    vk_ffn *enc_ffn;   /* [enc_depth] */
    vk_dec_layer *dec; /* [dec_depth] */
    vk_lin out;
};

/* Lays pieces out in one host image (image NULL: sizes only), then the
 * image goes to the device in one upload. */
typedef struct packer {
    char *image;
    size_t used;
    fy_vk_buf *buf; /* the refs' buffer (NULL while sizing) */
    int failed;
} packer;

static fy_vk_ref pack(packer *p, const void *src, size_t bytes)
{
    size_t at = (p->used + 255) & ~(size_t)255;
    p->used = at + bytes;
    if (p->image) memcpy(p->image + at, src, bytes);
    return fy_vk_at(p->buf, at);
}

static void pack_lin(packer *p, const fy_linear *l, vk_lin *out)
{
    fy_linear_i8_parts q;
    if (fy_linear_i8_parts_get(l, &q) < 0) {
        p->failed = 1;
        return;
    }
    out->a_mult = q.a_mult;
    out->l = (fy_vk_i8_layer){.w = pack(p, q.w, (size_t)q.n * q.k),
                              .bias = pack(p, q.bias, (size_t)q.n * sizeof(float)),
                              .n = q.n,
                              .k = q.k,
                              .unquant = q.unquant};
}

static void pack_norm(packer *p, const fy_nn_norm *n, int d, vk_norm *out)
{
    out->scale = pack(p, n->scale, (size_t)d * sizeof(float));
    out->bias = pack(p, n->bias, (size_t)d * sizeof(float));
}

static void pack_attn(packer *p, const fy_nn_attn *a, int d, vk_attn *out)
{
    pack_lin(p, a->wq, &out->q);
    pack_lin(p, a->wk, &out->k);
    pack_lin(p, a->wv, &out->v);
    pack_lin(p, a->wo, &out->o);
    pack_norm(p, &a->ln, d, &out->ln);
}

static void pack_ffn(packer *p, const fy_nn_ffn *f, int d, vk_ffn *out)
{
    pack_lin(p, f->w1, &out->w1);
    pack_lin(p, f->w2, &out->w2);
    pack_norm(p, &f->ln, d, &out->ln);
}

static void pack_table(packer *p, const fy_nn_embedding *e, int rows, int d, vk_table *out)
{
    size_t count = (size_t)rows * d;
    out->int8 = e->i8 != NULL;
    out->inv = e->inv;
    out->data = e->i8 ? pack(p, e->i8, count) : pack(p, e->f32, count * sizeof(float));
}

/* Every piece of the bound network, in a fixed order. */
static void pack_net(packer *p, fy_nn_net *n, const fy_nn_cpu_parts *cp)
{
    int d = n->d;
    pack_table(p, &cp->src, n->spec.src_vocab, d, &n->src);
    if (cp->trg.i8 == cp->src.i8 && cp->trg.f32 == cp->src.f32)
        n->trg = n->src; /* tied */
    else
        pack_table(p, &cp->trg, n->spec.trg_vocab, d, &n->trg);
    n->pos = pack(p, cp->pos, (size_t)cp->npos * d * sizeof(float));
    for (int i = 0; i < n->enc_depth; i++) {
        pack_attn(p, fy_encoder_self(cp->enc, i), d, &n->enc_self[i]);
        pack_ffn(p, fy_encoder_ffn(cp->enc, i), d, &n->enc_ffn[i]);
    }
    for (int i = 0; i < n->dec_depth; i++) {
        fy_decoder_layer_view v;
        fy_decoder_layer_get(cp->dec, i, &v);
        vk_dec_layer *l = &n->dec[i];
        pack_lin(p, v.rnn_w, &l->rnn_w);
        pack_lin(p, v.rnn_wf, &l->rnn_wf);
        pack_norm(p, v.rnn_ln, d, &l->rnn_ln);
        pack_attn(p, v.ctx, d, &l->ctx);
        pack_ffn(p, v.ffn, d, &l->ffn);
    }
    pack_lin(p, fy_decoder_output(cp->dec), &n->out);
}

static void vk_net_free(fy_nn_net *n)
{
    if (!n) return;
    fy_vk_buf_free(n->buf);
    if (n->bytes) budget_give(n->dev, n->bytes);
    free(n->enc_self);
    free(n->enc_ffn);
    free(n->dec);
    free(n);
}

/* Packs the bound network into one buffer on the device. */
static int upload_net(fy_nn_net *n, const fy_nn_cpu_parts *cp, fy_error *err)
{
    packer p = {0};
    pack_net(&p, n, cp);
    if (p.failed)
        return fy_err(err, FY_EUNSUPPORTED,
                      "the Vulkan backend runs int8 models; this one has float32 layers");
    if (budget_take(n->dev, p.used, "the model", err) < 0) return err->code;
    n->bytes = p.used;
    size_t size = p.used;
    p = (packer){.image = malloc(size)};
    if (!p.image) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = (n->buf = fy_vk_buf_new(n->vd, size, FY_VK_MEM_DEVICE, err)) ? 0 : err->code;
    p.buf = n->buf;
    if (rc >= 0) pack_net(&p, n, cp);
    if (rc >= 0) rc = fy_vk_upload(n->buf, 0, p.image, size, err);
    free(p.image);
    return rc;
}

static fy_nn_net *vk_net_new(fy_nn_dev *dev, const fy_nn_spec *spec, fy_error *err)
{
    fy_error local;
    if (!err) err = &local;
    const fy_model_config *c = spec->cfg;
    if (!c->int8) {
        fy_err(err, FY_EUNSUPPORTED, "the Vulkan backend runs int8 models; this one is float32");
        return NULL;
    }
    fy_nn_net *n = calloc(1, sizeof *n);
    fy_nn_net *cpu = n ? fy_nn_cpu.net_new(fy_nn_cpu_device(), spec, err) : NULL;
    if (!n || !cpu) goto fail;
    n->dev = dev;
    n->vd = ((vk_device *)dev->impl)->dev;
    n->spec = *spec;
    n->d = c->dim_emb;
    n->dffn = c->dim_ffn;
    n->heads = c->heads;
    n->enc_depth = c->enc_depth;
    n->dec_depth = c->dec_depth;
    fy_nn_cpu_parts cp;
    fy_nn_cpu_parts_get(cpu, &cp);
    n->emb_scale = cp.emb_scale;
    n->npos = cp.npos;
    n->attn_scale = fy_vk_attend_scale(n->d / n->heads);
    n->enc_self = calloc((size_t)n->enc_depth, sizeof *n->enc_self);
    n->enc_ffn = calloc((size_t)n->enc_depth, sizeof *n->enc_ffn);
    n->dec = calloc((size_t)n->dec_depth, sizeof *n->dec);
    if (!n->enc_self || !n->enc_ffn || !n->dec) {
        fy_err(err, FY_ENOMEM, "out of memory");
        goto fail;
    }
    if (upload_net(n, &cp, err) < 0) goto fail;
    fy_nn_cpu.net_free(cpu);
    return n;
fail:
    if (!n) fy_err(err, FY_ENOMEM, "out of memory");
    fy_nn_cpu.net_free(cpu);
    vk_net_free(n);
    return NULL;
}

static size_t vk_net_bytes(const fy_nn_net *n)
{
    return n->bytes;
}

/* ------------------------------------------------------------------------ */
/* The run: one worker's activations and its command recorder               */
/* ------------------------------------------------------------------------ */

struct fy_nn_run {
    fy_nn_net *net;
    fy_vk_cmd *cmd;
    int T, B, V;
    fy_vk_buf *buf; /* every activation below */
    size_t bytes;
    /* encoder: T rows */
    fy_vk_ref ids, posi, einfo, x, q, k, v, ctx, o, hid, a8[3];
    fy_vk_ref keys, values; /* [dec_depth][T][d] */
    /* decoder: B rows */
    fy_vk_ref state[2]; /* [dec_depth][B][d] SSRU cells: current and spare */
    int cur;
    fy_vk_ref dx, xw, f, dq, dctx, dout, dhid, da8[2], last, dinfo, from, path;
    fy_vk_ref logits, cols, rowcols, sel; /* [B][V], [B][V], [B][2], [B][topk words] */
    int32_t *cols_map;                    /* cols, when the device memory is mapped */
    int32_t *cols_host;                   /* else [B][V] here, copied when dirty */
    /* host side */
    int ntok, nslots, rows;
    int *off, *len, *ncols; /* [B] per slot; ncols -1: the whole vocabulary */
    uint8_t *dirty;         /* [B] slots whose columns changed */
    int *row_slot, *slot_tmp;
    int *row_off, *row_len;       /* [B] each row's source in the context */
    int32_t *info, *rowcols_host; /* [4 max(T, B)], [2B] */
    int32_t *sel_host;            /* [B][topk words] */
    int pending;                  /* before the next step: PEND_BEGIN / PEND_KEEP */
    int32_t *pend_from;           /* [B] rows_keep's from */
};

enum { PEND_NONE, PEND_BEGIN, PEND_KEEP };

#define TOPK_MAX (FY_VK_TOPK_MAX + 1)

/* Places the run's buffers (sizes only while base is NULL). */
static size_t run_layout(fy_nn_run *r, fy_vk_buf *base)
{
    const fy_nn_net *n = r->net;
    size_t T = (size_t)r->T, B = (size_t)r->B, V = (size_t)r->V, d = (size_t)n->d;
    size_t dffn = (size_t)n->dffn, wide = dffn > d ? dffn : d, L = (size_t)n->dec_depth;
    size_t f = sizeof(float), at = 0;
#define PLACE(ref, bytes) (ref = fy_vk_at(base, at), at = (at + (bytes) + 255) & ~(size_t)255)
    PLACE(r->ids, T * 4);
    PLACE(r->posi, T * 4);
    PLACE(r->einfo, T * 16);
    PLACE(r->x, T * d * f);
    PLACE(r->q, T * d * f);
    PLACE(r->k, T * d * f);
    PLACE(r->v, T * d * f);
    PLACE(r->ctx, T * d * f);
    PLACE(r->o, T * d * f);
    PLACE(r->hid, T * dffn * f);
    for (int i = 0; i < 3; i++) PLACE(r->a8[i], T * wide);
    PLACE(r->keys, L * T * d * f);
    PLACE(r->values, L * T * d * f);
    PLACE(r->state[0], L * B * d * f);
    PLACE(r->state[1], L * B * d * f);
    PLACE(r->dx, B * d * f);
    PLACE(r->xw, B * d * f);
    PLACE(r->f, B * d * f);
    PLACE(r->dq, B * d * f);
    PLACE(r->dctx, B * d * f);
    PLACE(r->dout, B * d * f);
    PLACE(r->dhid, B * dffn * f);
    PLACE(r->da8[0], B * wide);
    PLACE(r->da8[1], B * wide);
    PLACE(r->last, B * 4);
    PLACE(r->dinfo, B * 16);
    PLACE(r->from, B * 4);
    PLACE(r->path, B * f);
    PLACE(r->logits, B * V * f);
    PLACE(r->cols, B * V * 4);
    PLACE(r->rowcols, B * 8);
    PLACE(r->sel, B * (size_t)fy_vk_topk_stride(TOPK_MAX - 1) * 4);
#undef PLACE
    return at;
}

/* The recorder's staging bytes: one step's writes and reads (and, where
 * the columns are not mapped, every slot's columns). */
static size_t stage_bytes(const fy_nn_run *r, int cols_staged)
{
    size_t B = (size_t)r->B, T = (size_t)r->T;
    size_t per_step = B * (4 + 16 + 4 + 4 + 8) + B * (size_t)fy_vk_topk_stride(TOPK_MAX - 1) * 4;
    size_t per_encode = T * (4 + 4 + 16);
    size_t cols = cols_staged ? B * (size_t)r->V * 4 : 0;
    return (per_step > per_encode ? per_step : per_encode) + cols + 64 * 16;
}

static void vk_run_free(fy_nn_run *r)
{
    if (!r) return;
    fy_vk_cmd_free(r->cmd);
    fy_vk_buf_free(r->buf);
    if (r->bytes) budget_give(r->net->dev, r->bytes);
    free(r->cols_host);
    free(r->off);
    free(r->len);
    free(r->ncols);
    free(r->dirty);
    free(r->row_slot);
    free(r->slot_tmp);
    free(r->row_off);
    free(r->row_len);
    free(r->info);
    free(r->rowcols_host);
    free(r->sel_host);
    free(r->pend_from);
    free(r);
}

static size_t vk_run_bytes(const fy_nn_net *net, int max_tokens, int max_rows)
{
    fy_nn_run r = {
        .net = (fy_nn_net *)net, .T = max_tokens, .B = max_rows, .V = net->spec.trg_vocab};
    return run_layout(&r, NULL);
}

static int run_host(fy_nn_run *r)
{
    size_t B = (size_t)r->B, T = (size_t)r->T, big = T > B ? T : B;
    r->off = calloc(B, sizeof *r->off);
    r->len = calloc(B, sizeof *r->len);
    r->ncols = calloc(B, sizeof *r->ncols);
    r->dirty = calloc(B, 1);
    r->row_slot = calloc(B, sizeof *r->row_slot);
    r->slot_tmp = calloc(B, sizeof *r->slot_tmp);
    r->row_off = calloc(B, sizeof *r->row_off);
    r->row_len = calloc(B, sizeof *r->row_len);
    r->info = calloc(4 * big, sizeof *r->info);
    r->rowcols_host = calloc(2 * B, sizeof *r->rowcols_host);
    r->sel_host = calloc(B * (size_t)fy_vk_topk_stride(TOPK_MAX - 1), sizeof *r->sel_host);
    r->pend_from = calloc(B, sizeof *r->pend_from);
    return r->off && r->len && r->ncols && r->dirty && r->row_slot && r->slot_tmp && r->row_off &&
                   r->row_len && r->info && r->rowcols_host && r->sel_host && r->pend_from
               ? 0
               : FY_ENOMEM;
}

static fy_nn_run *vk_run_new(fy_nn_net *net, int max_tokens, int max_rows, fy_error *err)
{
    fy_nn_run *r = calloc(1, sizeof *r);
    if (!r || run_host((r->net = net, r->T = max_tokens, r->B = max_rows, r)) < 0) {
        fy_err(err, FY_ENOMEM, "out of memory for a translation worker");
        vk_run_free(r);
        return NULL;
    }
    r->V = net->spec.trg_vocab;
    size_t size = run_layout(r, NULL);
    if (budget_take(net->dev, size, "a worker", err) < 0) goto fail;
    r->bytes = size;
    if (!(r->buf = fy_vk_buf_new(net->vd, size, FY_VK_MEM_DEVICE, err))) goto fail;
    run_layout(r, r->buf);
    char *map = fy_vk_buf_map(r->buf);
    if (map) {
        r->cols_map = (int32_t *)(map + r->cols.off);
    } else if (!(r->cols_host = malloc((size_t)r->B * r->V * sizeof(int32_t)))) {
        fy_err(err, FY_ENOMEM, "out of memory for a translation worker");
        goto fail;
    }
    if (!(r->cmd = fy_vk_cmd_new(net->vd, stage_bytes(r, !map), err))) goto fail;
    return r;
fail:
    device_error(err->code, err);
    vk_run_free(r);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Recording helpers                                                         */
/* ------------------------------------------------------------------------ */

static fy_vk_ref at(fy_vk_ref r, size_t bytes)
{
    return fy_vk_at(r.buf, r.off + bytes);
}

/* y = x·W + b through the layer's own activation quantisation (gemm.c's
 * fy_linear_forward: quantise, int8 product, epilogue). */
static void linear(fy_vk_cmd *c, const vk_lin *L, fy_vk_ref x, int m, fy_vk_ref a8, fy_vk_ref y,
                   int relu)
{
    fy_vk_op_quantize(c, x, L->l.k, m, L->l.k, L->a_mult, a8);
    fy_vk_op_gemm_i8(c, &L->l, a8, m, (fy_vk_ref){0}, L->l.n, 0, relu, y, L->l.n);
}

/* The feed-forward block in place on x [m][d] (attention.c
 * fy_nn_ffn_forward: relu(x·W1 + b1)·W2 + b2, then LN(x + that)). */
static void ffn(fy_vk_cmd *c, const fy_nn_net *n, const vk_ffn *F, fy_vk_ref x, int m,
                fy_vk_ref hid, fy_vk_ref out, fy_vk_ref a8)
{
    linear(c, &F->w1, x, m, a8, hid, 1);
    linear(c, &F->w2, hid, m, a8, out, 0);
    fy_vk_op_add_norm(c, x, n->d, out, n->d, m, n->d, F->ln.scale, F->ln.bias);
}

/* Submits the recording and waits; a device failure becomes FY_EDEVICE. */
static int run_cmd(fy_nn_run *r, fy_error *err)
{
    int rc = fy_vk_cmd_run(r->cmd, ((vk_device *)r->net->dev->impl)->timeout_ns, err);
    return rc < 0 ? device_error(rc, err) : 0;
}

/* ------------------------------------------------------------------------ */
/* Encode                                                                    */
/* ------------------------------------------------------------------------ */

/* Self-attention block (encoder.c self_attention): the three projections
 * side by side, attention per sentence, the output projection, LN. */
static void enc_self(fy_nn_run *r, const vk_attn *A, int m)
{
    fy_vk_cmd *c = r->cmd;
    const fy_nn_net *n = r->net;
    int d = n->d;
    fy_vk_cmd_parallel(c, 1);
    linear(c, &A->q, r->x, m, r->a8[0], r->q, 0);
    linear(c, &A->k, r->x, m, r->a8[1], r->k, 0);
    linear(c, &A->v, r->x, m, r->a8[2], r->v, 0);
    fy_vk_cmd_parallel(c, 0);
    fy_vk_op_attend(c, m, n->heads, d / n->heads, r->q, d, r->k, d, r->v, d, r->ctx, d, r->einfo,
                    n->attn_scale);
    linear(c, &A->o, r->ctx, m, r->a8[0], r->o, 0);
    fy_vk_op_add_norm(c, r->x, d, r->o, d, m, d, A->ln.scale, A->ln.bias);
}

/* Every decoder layer's cross-attention keys and values of the context. */
static void cross_kv(fy_nn_run *r, int m)
{
    fy_vk_cmd *c = r->cmd;
    const fy_nn_net *n = r->net;
    size_t plane = (size_t)r->T * n->d * sizeof(float);
    fy_vk_cmd_parallel(c, 1);
    for (int l = 0; l < n->dec_depth; l++) {
        linear(c, &n->dec[l].ctx.k, r->x, m, r->a8[(2 * l) % 3], at(r->keys, l * plane), 0);
        linear(c, &n->dec[l].ctx.v, r->x, m, r->a8[(2 * l + 1) % 3], at(r->values, l * plane), 0);
    }
    fy_vk_cmd_parallel(c, 0);
}

static int vk_encode(fy_nn_run *r, const int32_t *ids, const int *len, int ns, fy_error *err)
{
    const fy_nn_net *n = r->net;
    int ntok = 0;
    if (ns < 0 || ns > r->B) return fy_err(err, FY_EINVAL, "encode: %d sentences", ns);
    for (int s = 0; s < ns; s++) {
        if (len[s] < 1 || len[s] > n->spec.max_src_len || ntok + len[s] > r->T)
            return fy_err(err, FY_EINVAL, "encode: sentence %d of %d tokens does not fit", s,
                          len[s]);
        r->off[s] = ntok;
        r->len[s] = len[s];
        r->ncols[s] = -1;
        r->dirty[s] = 0;
        ntok += len[s];
    }
    r->nslots = ns;
    r->ntok = ntok;
    r->rows = 0;
    r->pending = PEND_NONE;
    if (!ntok) return 0;
    fy_vk_cmd *c = r->cmd;
    int rc = fy_vk_cmd_begin(c, err);
    if (rc < 0) return device_error(rc, err);
    fy_vk_cmd_write(c, r->ids, ids, (size_t)ntok * 4);
    fy_vk_embed_positions(r->off, r->len, ns, r->info);
    fy_vk_cmd_write(c, r->posi, r->info, (size_t)ntok * 4);
    fy_vk_attend_info_encoder(r->off, r->len, ns, r->info);
    fy_vk_cmd_write(c, r->einfo, r->info, (size_t)ntok * 16);
    fy_vk_op_embed(c, r->x, n->d, ntok, n->d, n->src.data, n->src.int8, n->src.inv, n->emb_scale,
                   r->ids, n->pos, -1, r->posi);
    for (int l = 0; l < n->enc_depth; l++) {
        enc_self(r, &n->enc_self[l], ntok);
        ffn(c, n, &n->enc_ffn[l], r->x, ntok, r->hid, r->o, r->a8[0]);
    }
    cross_kv(r, ntok);
    return run_cmd(r, err);
}

static int vk_set_columns(fy_nn_run *r, int slot, const int32_t *cols, int ncols, fy_error *err)
{
    if (slot < 0 || slot >= r->nslots || (cols && (ncols < 0 || ncols > r->V)))
        return fy_err(err, FY_EINVAL, "set_columns: slot %d, %d columns", slot, ncols);
    r->ncols[slot] = cols ? ncols : -1;
    if (!cols) return 0;
    int32_t *dst = (r->cols_map ? r->cols_map : r->cols_host) + (size_t)slot * r->V;
    memcpy(dst, cols, (size_t)ncols * sizeof *cols);
    r->dirty[slot] = !r->cols_map;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Rows: recorded into the next step                                         */
/* ------------------------------------------------------------------------ */

static void row_slots(fy_nn_run *r, const int *slot, int rows)
{
    for (int j = 0; j < rows; j++) r->row_slot[j] = slot[j];
    r->rows = rows;
}

static int vk_rows_begin(fy_nn_run *r, const int *slot, int rows, fy_error *err)
{
    if (rows < 0 || rows > r->B) return fy_err(err, FY_EINVAL, "rows_begin: %d rows", rows);
    for (int j = 0; j < rows; j++)
        if (slot[j] < 0 || slot[j] >= r->nslots)
            return fy_err(err, FY_EINVAL, "rows_begin: slot %d", slot[j]);
    row_slots(r, slot, rows);
    r->pending = PEND_BEGIN; /* zeroed cells: whatever was kept before is moot */
    return 0;
}

static int vk_rows_keep(fy_nn_run *r, const int *from, int rows, fy_error *err)
{
    for (int j = 0; j < rows; j++)
        if (from[j] < 0 || from[j] >= r->rows)
            return fy_err(err, FY_EINVAL, "rows_keep: row %d of %d", from[j], r->rows);
    if (r->pending == PEND_KEEP) { /* compose with the keep not yet recorded */
        for (int j = 0; j < rows; j++) r->slot_tmp[j] = r->pend_from[from[j]];
        for (int j = 0; j < rows; j++) r->pend_from[j] = r->slot_tmp[j];
    } else if (r->pending == PEND_NONE) {
        for (int j = 0; j < rows; j++) r->pend_from[j] = from[j];
        r->pending = PEND_KEEP;
    } /* PEND_BEGIN: cells start from zero anyway; only the slots move */
    for (int j = 0; j < rows; j++) r->slot_tmp[j] = r->row_slot[from[j]];
    row_slots(r, r->slot_tmp, rows);
    return 0;
}

/* What rows_begin / rows_keep asked, and new columns, ahead of a step. */
static void record_pending(fy_nn_run *r, int rows)
{
    fy_vk_cmd *c = r->cmd;
    const fy_nn_net *n = r->net;
    size_t plane = (size_t)r->B * n->d * sizeof(float);
    for (int s = 0; s < r->nslots; s++) {
        if (!r->dirty[s]) continue;
        size_t o = (size_t)s * r->V;
        fy_vk_cmd_write(c, at(r->cols, o * 4), r->cols_host + o, (size_t)r->ncols[s] * 4);
        r->dirty[s] = 0;
    }
    if (r->pending == PEND_BEGIN) {
        for (int l = 0; l < n->dec_depth; l++)
            fy_vk_cmd_fill(c, at(r->state[r->cur], l * plane), (size_t)rows * n->d * 4, 0);
    } else if (r->pending == PEND_KEEP) {
        fy_vk_cmd_write(c, r->from, r->pend_from, (size_t)rows * 4);
        for (int l = 0; l < n->dec_depth; l++)
            fy_vk_op_gather(c, at(r->state[r->cur], l * plane), n->d,
                            at(r->state[!r->cur], l * plane), n->d, n->d, r->from, rows);
        r->cur = !r->cur;
    }
    r->pending = PEND_NONE;
}

/* ------------------------------------------------------------------------ */
/* One step                                                                  */
/* ------------------------------------------------------------------------ */

/* One decoder layer over the rows (decoder.c fy_decoder_step). */
static void dec_layer(fy_nn_run *r, int l, int m)
{
    fy_vk_cmd *c = r->cmd;
    const fy_nn_net *n = r->net;
    const vk_dec_layer *L = &n->dec[l];
    int d = n->d;
    size_t plane = (size_t)r->T * d * sizeof(float), cells = (size_t)r->B * d * sizeof(float);
    fy_vk_cmd_parallel(c, 1);
    linear(c, &L->rnn_w, r->dx, m, r->da8[0], r->xw, 0);
    linear(c, &L->rnn_wf, r->dx, m, r->da8[1], r->f, 0);
    fy_vk_cmd_parallel(c, 0);
    fy_vk_op_ssru(c, m, d, at(r->state[r->cur], l * cells), d, r->f, d, r->xw, d, r->dout, d);
    fy_vk_op_add_norm(c, r->dx, d, r->dout, d, m, d, L->rnn_ln.scale, L->rnn_ln.bias);
    linear(c, &L->ctx.q, r->dx, m, r->da8[0], r->dq, 0);
    fy_vk_op_attend(c, m, n->heads, d / n->heads, r->dq, d, at(r->keys, l * plane), d,
                    at(r->values, l * plane), d, r->dctx, d, r->dinfo, n->attn_scale);
    linear(c, &L->ctx.o, r->dctx, m, r->da8[0], r->dout, 0);
    fy_vk_op_add_norm(c, r->dx, d, r->dout, d, m, d, L->ctx.ln.scale, L->ctx.ln.bias);
    ffn(c, n, &L->ffn, r->dx, m, r->dhid, r->dout, r->da8[0]);
}

/* The logits of every row over its slot's columns (decoder.c
 * fy_decoder_logits): one product for all rows. Returns 1 when rows have
 * their own columns, 0 for the whole vocabulary, -1 when mixed. */
static int record_logits(fy_nn_run *r, int m)
{
    fy_vk_cmd *c = r->cmd;
    const fy_nn_net *n = r->net;
    int listed = 0, full = 0, max_n = 0;
    for (int j = 0; j < m; j++) {
        int s = r->row_slot[j];
        if (r->ncols[s] < 0) {
            full = 1;
            continue;
        }
        listed = 1;
        r->rowcols_host[2 * j] = s * r->V;
        r->rowcols_host[2 * j + 1] = r->ncols[s];
        if (r->ncols[s] > max_n) max_n = r->ncols[s];
    }
    if (listed && full) return -1;
    fy_vk_op_quantize(c, r->dx, n->d, m, n->d, n->out.a_mult, r->da8[0]);
    if (!listed) {
        fy_vk_op_gemm_i8(c, &n->out.l, r->da8[0], m, (fy_vk_ref){0}, r->V, 0, 0, r->logits, r->V);
        return 0;
    }
    fy_vk_cmd_write(c, r->rowcols, r->rowcols_host, (size_t)m * 8);
    fy_vk_op_gemm_i8_rows(c, &n->out.l, r->da8[0], m, r->cols, r->rowcols, max_n, 0, r->logits,
                          r->V);
    return 1;
}

/* The selection on the device and what is read back. */
static void record_select(fy_nn_run *r, const fy_nn_step *st, int listed)
{
    fy_vk_cmd *c = r->cmd;
    fy_vk_select s = {.logits = r->logits,
                      .ldl = r->V,
                      .rows = st->rows,
                      .cols = listed ? r->cols : (fy_vk_ref){0},
                      .rowcols = r->rowcols,
                      .n_all = r->V,
                      .unk = r->net->spec.trg_unk};
    if (st->k == 0) {
        fy_vk_op_pick(c, &s, r->sel);
        fy_vk_cmd_read(c, r->sel, r->sel_host, (size_t)st->rows * 12);
        return;
    }
    fy_vk_cmd_write(c, r->path, st->path, (size_t)st->rows * 4);
    fy_vk_op_topk(c, &s, r->path, st->k - 1, r->sel);
    fy_vk_cmd_read(c, r->sel, r->sel_host, (size_t)st->rows * fy_vk_topk_stride(st->k - 1) * 4);
}

/* The read-back numbers in the step's output form. */
static void unpack_select(const fy_nn_run *r, const fy_nn_step *st)
{
    if (st->k == 0) {
        memcpy(st->pick, r->sel_host, (size_t)st->rows * sizeof *st->pick);
        return;
    }
    int words = fy_vk_topk_stride(st->k - 1), k = st->k;
    for (int i = 0; i < st->rows; i++) {
        const int32_t *w = r->sel_host + (size_t)i * words;
        int count = w[0];
        for (int j = 0; j < k; j++) {
            float v = -INFINITY;
            int32_t id = -1;
            if (j < count) memcpy(&v, &w[1 + j], sizeof v), id = w[1 + k + j];
            st->topv[i * k + j] = v;
            st->topi[i * k + j] = id;
        }
    }
}

/* FANYI_VK_FAIL_AFTER=N: from its Nth step on the device behaves as lost
 * (every step fails with FY_EDEVICE), for the tests of what a server does
 * then (tests/gpu/test_vk_fail.py). */
static int injected_loss(const fy_nn_run *r, fy_error *err)
{
    vk_device *v = r->net->dev->impl;
    if (!atomic_load(&v->lost)) {
        if (atomic_load(&v->fail_in) < 0 || atomic_fetch_sub(&v->fail_in, 1) > 1) return 0;
        atomic_store(&v->lost, 1);
    }
    return fy_err(err, FY_EDEVICE, "device lost (injected: FANYI_VK_FAIL_AFTER)");
}

static int vk_step(fy_nn_run *r, const fy_nn_step *st, fy_error *err)
{
    const fy_nn_net *n = r->net;
    int m = st->rows;
    if (injected_loss(r, err)) return FY_EDEVICE;
    if (m < 1 || m > r->rows || st->step < 0 || st->step >= n->npos || st->k < 0 ||
        st->k > TOPK_MAX)
        return fy_err(err, FY_EINVAL, "step %d: %d rows of %d, k %d", st->step, m, r->rows, st->k);
    fy_vk_cmd *c = r->cmd;
    int rc = fy_vk_cmd_begin(c, err);
    if (rc < 0) return device_error(rc, err);
    record_pending(r, r->rows);
    fy_vk_cmd_write(c, r->last, st->last, (size_t)m * 4);
    for (int j = 0; j < m; j++) {
        r->row_off[j] = r->off[r->row_slot[j]];
        r->row_len[j] = r->len[r->row_slot[j]];
    }
    fy_vk_attend_info_decoder(r->row_off, r->row_len, m, r->info);
    fy_vk_cmd_write(c, r->dinfo, r->info, (size_t)m * 16);
    fy_vk_op_embed(c, r->dx, n->d, m, n->d, n->trg.data, n->trg.int8, n->trg.inv, n->emb_scale,
                   r->last, n->pos, st->step, (fy_vk_ref){0});
    for (int l = 0; l < n->dec_depth; l++) dec_layer(r, l, m);
    int listed = record_logits(r, m);
    if (listed < 0) {
        fy_vk_cmd_submit(c, err); /* ends the recording; nothing of it matters */
        fy_vk_cmd_wait(c, ((vk_device *)r->net->dev->impl)->timeout_ns, err);
        return fy_err(err, FY_EUNSUPPORTED,
                      "step: rows with a shortlist and rows without in one sub-batch");
    }
    record_select(r, st, listed);
    if ((rc = run_cmd(r, err)) < 0) return rc;
    unpack_select(r, st);
    return 0;
}

static int vk_logits(fy_nn_run *r, int row, float *out, int *ncols, fy_error *err)
{
    if (row < 0 || row >= r->rows) return fy_err(err, FY_EINVAL, "logits: row %d", row);
    int s = r->row_slot[row];
    *ncols = r->ncols[s] < 0 ? r->V : r->ncols[s];
    int rc = fy_vk_download(r->buf, r->logits.off + (size_t)row * r->V * 4, out, (size_t)*ncols * 4,
                            err);
    return rc < 0 ? device_error(rc, err) : 0;
}

const fy_nn_backend fy_nn_vulkan = {
    .name = "vulkan",
    .net_new = vk_net_new,
    .net_free = vk_net_free,
    .net_bytes = vk_net_bytes,
    .run_bytes = vk_run_bytes,
    .run_new = vk_run_new,
    .run_free = vk_run_free,
    .encode = vk_encode,
    .set_columns = vk_set_columns,
    .rows_begin = vk_rows_begin,
    .rows_keep = vk_rows_keep,
    .step = vk_step,
    .logits = vk_logits,
    .dev_used = vk_dev_used,
};

#endif /* FY_HAVE_VULKAN */
