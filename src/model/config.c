/* config.c - the model's architecture from special:model.yml plus its tensors.
 *
 * The YAML is parsed with libyaml's document API; only top-level keys are
 * used. Keys absent from the YAML take Marian's command-line defaults (that
 * is what Marian does when it merges the embedded config). Everything that
 * decides the computation is then checked against the tensors that are
 * really in the file: a model whose YAML and weights disagree is rejected
 * here rather than producing garbage later.
 */
#include "model/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* ---------------------------------------------------------------- YAML */

typedef struct ydoc {
    yaml_document_t doc;
    yaml_node_t *root; /* top-level mapping */
    const char *path;  /* model file, for messages */
} ydoc;

static yaml_node_t *ydoc_get(const ydoc *y, const char *key)
{
    for (yaml_node_pair_t *p = y->root->data.mapping.pairs.start;
         p < y->root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node((yaml_document_t *)&y->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node((yaml_document_t *)&y->doc, p->value);
    }
    return NULL;
}

/* The scalar text of key, def when absent; NULL (with err set) when not a scalar. */
static const char *ydoc_str(const ydoc *y, const char *key, const char *def, fy_error *err)
{
    yaml_node_t *n = ydoc_get(y, key);
    if (!n) return def;
    if (n->type != YAML_SCALAR_NODE) {
        fy_err(err, FY_EFORMAT, "%s: model.yml: '%s' is not a scalar", y->path, key);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

static int ydoc_int(const ydoc *y, const char *key, int def, int *out, fy_error *err)
{
    const char *s = ydoc_str(y, key, NULL, err);
    if (!s) {
        if (ydoc_get(y, key)) return FY_EFORMAT;
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1000000)
        return fy_err(err, FY_EFORMAT, "%s: model.yml: '%s: %s' is not a valid count", y->path, key,
                      s);
    *out = (int)v;
    return 0;
}

static int ydoc_bool(const ydoc *y, const char *key, int def, int *out, fy_error *err)
{
    static const char *yes[] = {"true", "yes", "on", "y", "1"};
    static const char *no[] = {"false", "no", "off", "n", "0"};
    const char *s = ydoc_str(y, key, NULL, err);
    if (!s) {
        if (ydoc_get(y, key)) return FY_EFORMAT;
        *out = def;
        return 0;
    }
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return fy_err(err, FY_EFORMAT, "%s: model.yml: '%s: %s' is not a boolean", y->path, key, s);
}

/* Copies a string option into dst (cap bytes); too long is a format error. */
static int ydoc_copy(const ydoc *y, const char *key, const char *def, char *dst, size_t cap,
                     fy_error *err)
{
    const char *s = ydoc_str(y, key, def, err);
    if (!s) return FY_EFORMAT;
    if (strlen(s) >= cap)
        return fy_err(err, FY_EUNSUPPORTED, "%s: model.yml: unsupported %s '%s'", y->path, key, s);
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

/* dim-vocabs: a sequence of counts; missing, empty or 0 entries mean "unknown". */
static int ydoc_vocabs(const ydoc *y, int vocabs[2], fy_error *err)
{
    vocabs[0] = vocabs[1] = 0;
    yaml_node_t *n = ydoc_get(y, "dim-vocabs");
    if (!n) return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return fy_err(err, FY_EFORMAT, "%s: model.yml: 'dim-vocabs' is not a list", y->path);
    int i = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++, i++) {
        yaml_node_t *v = yaml_document_get_node((yaml_document_t *)&y->doc, *it);
        char *end;
        long x = -1;
        if (v && v->type == YAML_SCALAR_NODE)
            x = strtol((const char *)v->data.scalar.value, &end, 10);
        if (!v || v->type != YAML_SCALAR_NODE || *end || x < 0 || x > 100000000)
            return fy_err(err, FY_EFORMAT, "%s: model.yml: bad entry in 'dim-vocabs'", y->path);
        if (i < 2) vocabs[i] = (int)x;
    }
    if (i > 2)
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: model.yml: %d vocabularies (multi-source models are not supported)",
                      y->path, i);
    return 0;
}

static int ydoc_load(ydoc *y, const char *text, const char *path, fy_error *err)
{
    yaml_parser_t parser;
    memset(y, 0, sizeof *y);
    y->path = path;
    if (!yaml_parser_initialize(&parser)) return fy_err(err, FY_ENOMEM, "%s: out of memory", path);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    int ok = yaml_parser_load(&parser, &y->doc);
    if (!ok) {
        int rc =
            fy_err(err, FY_EFORMAT, "%s: model.yml: %s at line %zu", path,
                   parser.problem ? parser.problem : "YAML error", parser.problem_mark.line + 1);
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_parser_delete(&parser);
    y->root = yaml_document_get_root_node(&y->doc);
    if (!y->root || y->root->type != YAML_MAPPING_NODE) {
        yaml_document_delete(&y->doc);
        return fy_err(err, FY_EFORMAT, "%s: model.yml is not a YAML mapping", path);
    }
    return 0;
}

/* ---------------------------------------------------------------- options */

/* Flags that would change the computation and that we do not implement:
 * each must be false (or absent). */
static const char *const must_be_false[] = {"transformer-train-position-embeddings",
                                            "layer-normalization",
                                            "skip",
                                            "right-left",
                                            "transformer-no-projection",
                                            "transformer-rnn-projection",
                                            "transformer-pool",
                                            "ulr",
                                            "transformer-no-bias",
                                            "transformer-no-affine",
                                            "transformer-depth-scaling"};

static int read_options(const ydoc *y, fy_model_config *c, int vocabs[2], fy_error *err)
{
    char type[32], autoreg[32], emb_ops[8], top_ops[8];
    int rc, tied_src, dec_dim_ffn, dec_ffn_depth;
    if ((rc = ydoc_copy(y, "type", "amun", type, sizeof type, err)) ||
        (rc = ydoc_int(y, "dim-emb", 512, &c->dim_emb, err)) ||
        (rc = ydoc_int(y, "enc-depth", 6, &c->enc_depth, err)) ||
        (rc = ydoc_int(y, "dec-depth", 6, &c->dec_depth, err)) ||
        (rc = ydoc_int(y, "transformer-heads", 8, &c->heads, err)) ||
        (rc = ydoc_int(y, "transformer-dim-ffn", 2048, &c->dim_ffn, err)) ||
        (rc = ydoc_int(y, "transformer-ffn-depth", 2, &c->ffn_depth, err)) ||
        (rc = ydoc_int(y, "transformer-decoder-dim-ffn", 0, &dec_dim_ffn, err)) ||
        (rc = ydoc_int(y, "transformer-decoder-ffn-depth", 0, &dec_ffn_depth, err)) ||
        (rc = ydoc_copy(y, "dec-cell", "gru", c->dec_cell, sizeof c->dec_cell, err)) ||
        (rc = ydoc_copy(y, "transformer-decoder-autoreg", "self-attention", autoreg, sizeof autoreg,
                        err)) ||
        (rc = ydoc_copy(y, "transformer-ffn-activation", "swish", c->ffn_activation,
                        sizeof c->ffn_activation, err)) ||
        (rc = ydoc_copy(y, "transformer-preprocess", "", c->preprocess, sizeof c->preprocess,
                        err)) ||
        (rc = ydoc_copy(y, "transformer-postprocess", "dan", c->postprocess, sizeof c->postprocess,
                        err)) ||
        (rc = ydoc_copy(y, "transformer-postprocess-emb", "d", emb_ops, sizeof emb_ops, err)) ||
        (rc = ydoc_copy(y, "transformer-postprocess-top", "", top_ops, sizeof top_ops, err)) ||
        (rc = ydoc_bool(y, "tied-embeddings", 0, &c->tied_embeddings, err)) ||
        (rc = ydoc_bool(y, "tied-embeddings-src", 0, &tied_src, err)) ||
        (rc = ydoc_bool(y, "tied-embeddings-all", 0, &c->tied_embeddings_all, err)) ||
        (rc = ydoc_vocabs(y, vocabs, err)))
        return rc;
    int omit_bias;
    if ((rc = ydoc_bool(y, "output-omit-bias", 0, &omit_bias, err))) return rc;
    c->output_bias = !omit_bias;
    for (size_t i = 0; i < sizeof must_be_false / sizeof *must_be_false; i++) {
        int v;
        if ((rc = ydoc_bool(y, must_be_false[i], 0, &v, err))) return rc;
        if (v)
            return fy_err(err, FY_EUNSUPPORTED, "%s: model.yml: '%s: true' is not supported",
                          y->path, must_be_false[i]);
    }
    yaml_node_t *tl = ydoc_get(y, "transformer-tied-layers");
    if (tl && !(tl->type == YAML_SEQUENCE_NODE &&
                tl->data.sequence.items.top == tl->data.sequence.items.start))
        return fy_err(err, FY_EUNSUPPORTED, "%s: model.yml: transformer-tied-layers not supported",
                      y->path);
    const char *path = y->path;
    if (strcmp(type, "transformer") != 0)
        return fy_err(err, FY_EUNSUPPORTED, "%s: model.yml: model type '%s' (need transformer)",
                      path, type);
    snprintf(c->enc_cell, sizeof c->enc_cell, "%s", "transformer");
    if (strcmp(autoreg, "rnn") != 0 || strcmp(c->dec_cell, "ssru") != 0)
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: model.yml: decoder '%s' with dec-cell '%s' (only rnn + ssru is "
                      "supported)",
                      path, autoreg, c->dec_cell);
    if (strcmp(c->ffn_activation, "relu") != 0)
        return fy_err(err, FY_EUNSUPPORTED, "%s: model.yml: ffn activation '%s' (need relu)", path,
                      c->ffn_activation);
    if (c->preprocess[0] || strcmp(c->postprocess, "dan") != 0)
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: model.yml: transformer-preprocess '%s' / postprocess '%s' (need '' / "
                      "dan)",
                      path, c->preprocess, c->postprocess);
    if (strspn(emb_ops, "d") != strlen(emb_ops) || strspn(top_ops, "d") != strlen(top_ops))
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: model.yml: postprocess-emb '%s' / postprocess-top '%s' not supported",
                      path, emb_ops, top_ops);
    if (c->dim_emb < 1 || c->heads < 1 || c->dim_emb % c->heads || c->enc_depth < 1 ||
        c->dec_depth < 1 || c->ffn_depth < 1 || c->dim_ffn < 1)
        return fy_err(err, FY_EFORMAT,
                      "%s: model.yml: inconsistent dimensions (dim-emb %d, heads %d, depths "
                      "%d/%d, ffn %d x %d)",
                      path, c->dim_emb, c->heads, c->enc_depth, c->dec_depth, c->dim_ffn,
                      c->ffn_depth);
    if (tied_src) c->tied_embeddings_all = c->tied_embeddings_all || c->tied_embeddings;
    c->separate_embeddings = !(c->tied_embeddings_all || tied_src);
    if (c->tied_embeddings_all) c->tied_embeddings = 1;
    if (!c->tied_embeddings)
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: model.yml: untied output layer (tied-embeddings false) not supported",
                      path);
    c->dec_dim_ffn = dec_dim_ffn > 0 ? dec_dim_ffn : c->dim_ffn;
    c->dec_ffn_depth = dec_ffn_depth > 0 ? dec_ffn_depth : c->ffn_depth;
    return 0;
}

/* ---------------------------------------------------------------- tensors */

typedef struct checker {
    const fy_marian *m;
    const fy_model_config *c;
    uint32_t wtype; /* FY_DT_F32 or FY_DT_INTGEMM8 for weight matrices */
    fy_error *err;
} checker;

/* The tensor name, which must exist with shape [rows, cols] and the given type. */
static int need(const checker *k, const char *name, int rows, int cols, uint32_t type)
{
    const char *path = fy_marian_path(k->m);
    const fy_tensor *t = fy_marian_find(k->m, name);
    if (!t) return fy_err(k->err, FY_EFORMAT, "%s: missing tensor '%s'", path, name);
    if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols)
        return fy_err(k->err, FY_EFORMAT,
                      "%s: tensor '%s': shape %dx%d does not match the config (expected %dx%d)",
                      path, name, (int)t->shape[0], t->ndim > 1 ? (int)t->shape[1] : 1, rows, cols);
    if (t->type != type)
        return fy_err(k->err, FY_EFORMAT, "%s: tensor '%s': type %s, expected %s", path, name,
                      fy_dtype_name(t->type), fy_dtype_name(type));
    return 0;
}

/* A weight W [rows, cols] with bias b [1, cols] (bias_name NULL: none) and, for
 * int8 models, the activation scale W_QuantMultA. */
static int need_linear(const checker *k, const char *w, const char *b, int rows, int cols)
{
    int rc = need(k, w, rows, cols, k->wtype);
    if (!rc && b) rc = need(k, b, 1, cols, FY_DT_F32);
    if (!rc && k->wtype == FY_DT_INTGEMM8) {
        char a[160];
        float v;
        snprintf(a, sizeof a, "%s_QuantMultA", w);
        rc = fy_model_read_scalar(k->m, a, &v, k->err);
    }
    return rc;
}

static int need_ln(const checker *k, const char *prefix)
{
    char s[160], b[160];
    snprintf(s, sizeof s, "%s_ln_scale", prefix);
    snprintf(b, sizeof b, "%s_ln_bias", prefix);
    int rc = need(k, s, 1, k->c->dim_emb, FY_DT_F32);
    return rc ? rc : need(k, b, 1, k->c->dim_emb, FY_DT_F32);
}

static int need_attention(const checker *k, const char *prefix)
{
    static const char qkvo[] = "qkvo";
    char w[160], b[160];
    int d = k->c->dim_emb, rc;
    for (int i = 0; i < 4; i++) {
        snprintf(w, sizeof w, "%s_W%c", prefix, qkvo[i]);
        snprintf(b, sizeof b, "%s_b%c", prefix, qkvo[i]);
        if ((rc = need_linear(k, w, b, d, d))) return rc;
    }
    snprintf(w, sizeof w, "%s_Wo", prefix);
    return need_ln(k, w);
}

static int need_ffn(const checker *k, const char *prefix, int dim_ffn, int depth)
{
    char w[160], b[160];
    int d = k->c->dim_emb, rc;
    for (int i = 1; i <= depth; i++) {
        snprintf(w, sizeof w, "%s_W%d", prefix, i);
        snprintf(b, sizeof b, "%s_b%d", prefix, i);
        if ((rc = need_linear(k, w, b, i == 1 ? d : dim_ffn, i == depth ? d : dim_ffn))) return rc;
    }
    snprintf(w, sizeof w, "%s_ffn", prefix);
    return need_ln(k, w);
}

static int check_layers(const checker *k)
{
    const fy_model_config *c = k->c;
    char p[128], q[128];
    int d = c->dim_emb, rc;
    for (int l = 1; l <= c->enc_depth; l++) {
        snprintf(p, sizeof p, "encoder_l%d_self", l);
        snprintf(q, sizeof q, "encoder_l%d_ffn", l);
        if ((rc = need_attention(k, p)) || (rc = need_ffn(k, q, c->dim_ffn, c->ffn_depth)))
            return rc;
    }
    for (int l = 1; l <= c->dec_depth; l++) {
        char w[160], wf[160], bf[160];
        snprintf(w, sizeof w, "decoder_l%d_rnn_W", l);
        snprintf(wf, sizeof wf, "decoder_l%d_rnn_Wf", l);
        snprintf(bf, sizeof bf, "decoder_l%d_rnn_bf", l);
        snprintf(p, sizeof p, "decoder_l%d_rnn_ffn", l);
        if ((rc = need_linear(k, w, NULL, d, d)) || (rc = need_linear(k, wf, bf, d, d)) ||
            (rc = need_ln(k, p)))
            return rc;
        snprintf(p, sizeof p, "decoder_l%d_context", l);
        snprintf(q, sizeof q, "decoder_l%d_ffn", l);
        if ((rc = need_attention(k, p)) || (rc = need_ffn(k, q, c->dec_dim_ffn, c->dec_ffn_depth)))
            return rc;
    }
    /* The layer counts must be exact: one more layer means the YAML lies. */
    snprintf(p, sizeof p, "encoder_l%d_self_Wq", c->enc_depth + 1);
    snprintf(q, sizeof q, "decoder_l%d_rnn_W", c->dec_depth + 1);
    if (fy_marian_find(k->m, p) || fy_marian_find(k->m, q))
        return fy_err(k->err, FY_EFORMAT,
                      "%s: more layers in the tensors than enc-depth %d / "
                      "dec-depth %d in model.yml",
                      fy_marian_path(k->m), c->enc_depth, c->dec_depth);
    return 0;
}

/* Embeddings: their row counts are the vocabulary sizes. */
static int check_embeddings(const checker *k, fy_model_config *c, const int vocabs[2])
{
    const char *path = fy_marian_path(k->m);
    const char *src = c->separate_embeddings ? "encoder_Wemb" : "Wemb";
    const char *trg = c->separate_embeddings ? "decoder_Wemb" : "Wemb";
    const fy_tensor *s = fy_marian_find(k->m, src), *t = fy_marian_find(k->m, trg);
    if (!s || !t)
        return fy_err(k->err, FY_EFORMAT,
                      "%s: missing embedding tensor '%s' (tied-embeddings-all "
                      "is %s)",
                      path, !s ? src : trg, c->tied_embeddings_all ? "true" : "false");
    int rc;
    if ((rc = need(k, src, s->shape[0], c->dim_emb, k->wtype)) ||
        (rc = need(k, trg, t->shape[0], c->dim_emb, k->wtype)))
        return rc;
    c->src_vocab_size = s->shape[0];
    c->trg_vocab_size = t->shape[0];
    if ((vocabs[0] && vocabs[0] != c->src_vocab_size) ||
        (vocabs[1] && vocabs[1] != c->trg_vocab_size))
        return fy_err(k->err, FY_EFORMAT,
                      "%s: model.yml dim-vocabs [%d, %d] do not match the embeddings (%d, %d rows)",
                      path, vocabs[0], vocabs[1], c->src_vocab_size, c->trg_vocab_size);
    if (c->output_bias && (rc = need(k, "decoder_ff_logit_out_b", 1, c->trg_vocab_size, FY_DT_F32)))
        return rc;
    /* The tied output layer's activation scale is named after its weights
     * (Wemb_QuantMultA, decoder_Wemb_QuantMultA): that is the tensor the
     * reference engine reads, with or without a shortlist, and it aborts
     * without it (measured: docs/models.md). none_QuantMultA, which
     * shared-vocabulary files also hold, is never read. */
    if (k->wtype == FY_DT_INTGEMM8) {
        char name[32];
        float v;
        snprintf(name, sizeof name, "%s_QuantMultA", trg);
        if (!fy_marian_find(k->m, name))
            return fy_err(k->err, FY_EFORMAT,
                          "%s: int8 model without the output layer's activation scale '%s'", path,
                          name);
        if ((rc = fy_model_read_scalar(k->m, name, &v, k->err))) return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- public */

int fy_model_read_scalar(const fy_marian *m, const char *name, float *out, fy_error *err)
{
    const fy_tensor *t = fy_marian_find(m, name);
    const char *path = fy_marian_path(m);
    if (!t) return fy_err(err, FY_EFORMAT, "%s: missing tensor '%s'", path, name);
    if (t->count != 1)
        return fy_err(err, FY_EFORMAT, "%s: tensor '%s': %zu elements, expected a scalar", path,
                      name, t->count);
    float v;
    if (t->type == FY_DT_F32) {
        memcpy(&v, t->data, 4);
    } else if (t->type == FY_DT_INTGEMM8) {
        /* Mozilla's converter passes Wemb_QuantMultA through the intgemm path;
         * Marian's loader dequantises "Wemb" tensors as int8 * (1 / mult),
         * rounded in that order (unquantizeWemb), and so must we. */
        v = (float)*(const int8_t *)t->data * (1.0f / t->quant_mult);
    } else {
        return fy_err(err, FY_EFORMAT, "%s: tensor '%s': type %s for a scalar", path, name,
                      fy_dtype_name(t->type));
    }
    if (!(v > 0.0f) || v > 1e30f)
        return fy_err(err, FY_EFORMAT, "%s: tensor '%s': bad scale %g", path, name, (double)v);
    *out = v;
    return 0;
}

int fy_model_config_read(const fy_marian *m, fy_model_config *out, fy_error *err)
{
    const char *path = fy_marian_path(m);
    memset(out, 0, sizeof *out);
    const char *text = fy_marian_yaml(m);
    if (!text[0])
        return fy_err(err, FY_EFORMAT, "%s: no embedded configuration (special:model.yml)", path);
    ydoc y;
    int rc = ydoc_load(&y, text, path, err);
    if (rc) return rc;
    int vocabs[2];
    rc = read_options(&y, out, vocabs, err);
    yaml_document_delete(&y.doc);
    if (rc) return rc;
    const fy_tensor *q = fy_marian_find(m, "encoder_l1_self_Wq");
    if (!q) return fy_err(err, FY_EFORMAT, "%s: missing tensor 'encoder_l1_self_Wq'", path);
    if (q->type != FY_DT_F32 && q->type != FY_DT_INTGEMM8)
        return fy_err(err, FY_EFORMAT, "%s: tensor 'encoder_l1_self_Wq': type %s", path,
                      fy_dtype_name(q->type));
    checker k = {m, out, q->type, err};
    out->int8 = q->type == FY_DT_INTGEMM8;
    if ((rc = check_embeddings(&k, out, vocabs)) || (rc = check_layers(&k))) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    return 0;
}
