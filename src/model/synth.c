/* synth.c - synthetic Firefox Translations student models and shortlists.
 *
 * VERIFIED FACTS (browsermt/marian-dev: src/common/binary.cpp, io_item.h,
 * types.{h,cpp}, tensors/cpu/expression_graph_packable.h, integer_common.h,
 * models/transformer.h, models/encoder_decoder.cpp, layers/generic.h,
 * rnn/cells.h, data/shortlist.cpp; scripts/alphas/extract_stats.py; slimt
 * Io.cc/Modules.cc) that the engine relies on:
 *
 * File: see marian.h. Tensors are written sorted by name (std::map order =
 * strcmp) and special:model.yml (int8, shape [len + 1], text + NUL,
 * unpadded) comes last. Header padding P = 256 - (pos + 8) % 256 (1..256).
 * Every other tensor's bytes are padded with zeros to a multiple of 256.
 *
 * Tensors (d = dim-emb, f = transformer-dim-ffn, V = vocab, layers from 1):
 *   Wemb [V, d]                      tied-embeddings-all (shared vocab), or
 *   encoder_Wemb [Vs, d], decoder_Wemb [Vt, d]  (separate vocabs; the output
 *                                    layer is tied to decoder_Wemb)
 *   decoder_ff_logit_out_b [1, Vt]   output bias (f32)
 *   encoder_l{i}_self_W{q,k,v,o} [d, d], _b{q,k,v,o} [1, d],
 *   encoder_l{i}_self_Wo_ln_{scale,bias} [1, d]
 *   encoder_l{i}_ffn_W1 [d, f], _b1 [1, f], _W2 [f, d], _b2 [1, d],
 *   encoder_l{i}_ffn_ffn_ln_{scale,bias} [1, d]
 *   decoder_l{i}_rnn_W [d, d] (no bias), _rnn_Wf [d, d], _rnn_bf [1, d],
 *   decoder_l{i}_rnn_ffn_ln_{scale,bias} [1, d]
 *   decoder_l{i}_context_{W,b}{q,k,v,o}, _context_Wo_ln_{scale,bias}
 *   decoder_l{i}_ffn_{W1,b1,W2,b2,ffn_ln_scale,ffn_ln_bias}
 * Header shapes are always [in, out] (biases and LN [1, n]).
 *
 * float32 models: every tensor float32, weights row-major [in][out] as the
 * header says (not transposed), no *_QuantMultA tensors.
 *
 * int8 "alphas" models (model.*.intgemm.alphas.bin, gemm-precision
 * int8shiftAlphaAll): every weight matrix W (names ending _W, _Wx) and every
 * tensor whose name contains "Wemb" is intgemm8: count int8 values, then
 * the float32 multiplier qW = 127 / max|W| at data + count, then padding.
 * The int8 bytes of weight matrices are TRANSPOSED: laid out [out][in]
 * although the header says [in, out]; the Wemb tensors are NOT transposed
 * ([V][d]; the engine dequantises them as int8 * (1 / qW)). Quantisation is
 * rint(w * qW) clamped to [-127, 127]. Each weight W has an activation
 * scale W_QuantMultA ([1, 1] float32, value alpha = 127 / max|input|). The
 * tied output layer's is named after its weights: Wemb_QuantMultA, or
 * decoder_Wemb_QuantMultA for separate vocabs, which, as its name contains
 * "Wemb", is stored as intgemm8 [1, 1]: Marian's loader dequantises every
 * intgemm8 tensor whose name contains "Wemb" to float as int8 * (1 /
 * multiplier) (that order of rounding), including Wemb itself. Shared-vocab
 * files also hold a float32 none_QuantMultA; separate-vocab files do not.
 * Biases and layer norms stay float32. MEASURED with the reference engine
 * (tests/conformance/test_output_scale.js, models whose candidates differ):
 * it reads [decoder_]Wemb_QuantMultA for the output layer with and without
 * a shortlist (the column selection keeps B's name), never none_QuantMultA,
 * and aborts ("We did not find an alpha in the model named:
 * F0::Wemb_QuantMultA") when the file lacks it.
 *
 * EMBEDDED YAML. Mozilla's files are converted by browsermt's marian-conv,
 * which loads the trained model's YAML and writes it again with yaml-cpp's
 * emitter (src/command/marian_conv.cpp: configStr << config): keys in the
 * trained file's order (Marian sorts them), block lists ("dim-vocabs:\n
 *   - 64000"), flow "[]" for empty ones, no final newline. The keys are
 * Marian's model features of v1.12.7 - v1.12.14 (marian-dev
 * src/models/encoder_decoder.cpp: the v1.11.9 set plus transformer-no-bias
 * and transformer-no-affine) with the training defaults except dim-emb,
 * depths, heads, ffn, dec-cell ssru, autoreg rnn, relu, tying, and
 * dim-vocabs (the vocabulary sizes: the reference aborts on a model whose
 * dim-vocabs is empty). The engine reads: type, dim-emb, enc-depth,
 * dec-depth, transformer-heads, transformer-dim-ffn, transformer-ffn-depth,
 * transformer-decoder-dim-ffn / -ffn-depth (0 = same as encoder),
 * transformer-ffn-activation, transformer-decoder-autoreg, dec-cell,
 * transformer-preprocess, transformer-postprocess, transformer-postprocess-
 * emb, tied-embeddings(-all, -src), dim-vocabs, output-omit-bias.
 *
 * FILE SIZES, what is verified and what is inferred. Every real model's size
 * is header + data + YAML: the header and each tensor's data are padded to
 * 256 bytes, the YAML (+ NUL) is not. With the tensor set above - shared
 * vocabulary: Wemb, none_QuantMultA (float32) and Wemb_QuantMultA (intgemm8
 * [1, 1]); separate: encoder_Wemb, decoder_Wemb and decoder_Wemb_QuantMultA
 * only; every bias, layer norm and scale [1, n] - the YAML of 86 of the 90
 * directions in ../shared/data/firefox-models-2025-10-17.json (and of all
 * five Android variants) comes out at exactly 1339 bytes with NUL, in all
 * four shapes (tiny, base, base-memory; shared or separate vocabularies),
 * v1.0 to v3.0. (The other four: tr-en and hu-en 1.0, an older template;
 * nb-en and nn-en, 16000-piece vocabularies.) A different tensor
 * set (say, no none_QuantMultA in shared files, or one in separate ones) or
 * 1-D biases would move the shapes apart by multiples of 256. VERIFIED by
 * the sizes: the tensor set, the [1, n] shapes, the YAML's length (1338 +
 * NUL). VERIFIED in sources: the key order and yaml-cpp style. INFERRED: the
 * key set (v1.12.7 - v1.12.14 is the set whose text leaves a version value
 * of plausible length), and the version value itself: only its length, 24
 * bytes, follows from the sizes; its text here is ours. So the presets
 * write files of exactly the real sizes (tiny 17,141,051; base 42,992,955
 * and firefox-zh-en 59,504,955; base-memory 31,561,787 and firefox-en-zh
 * 43,849,787 bytes), checked against the catalogue by tests.
 *
 * SYNTHETIC WEIGHTS: splitmix64 seeded from (seed, tensor name), so every
 * tensor is independent of write order and identical on every machine.
 * Weights are Glorot-uniform, biases and LN betas U(-0.1, 0.1), LN gammas
 * 1 + U(-0.1, 0.1), embeddings Glorot-uniform times emb_scale (20 by
 * default: widens the logit spread so the top-2 gap is far above float
 * noise). With --weights trained, weight matrices and embeddings instead
 * look like trained ones: sigma·g with the uniform version's variance
 * (sigma = half / sqrt(3)), g near-Gaussian (the sum of twelve 16-bit
 * uniforms minus 6: Irwin-Hall, mean 0, variance 1, |g| < 6), except one
 * value in 2048, an outlier of 4 to 8 sigma with either sign; int8
 * quantisation (127 / max|W|) then maps about 8 sigma to 127, so sigma is
 * about 16, and only pairs with an outlier can reach |w0 + w1| > 129,
 * the int16 saturation that a uniform tensor's pairs reach a quarter of
 * the time (gemm.h).
 *
 * ACTIVATION SCALES are analytic, not measured: alpha = 127 / B where B
 * bounds |input| of that GEMM:
 *  - embedding inputs (encoder layer 1, decoder layer 1): hard bound
 *    max|Wemb| * sqrt(d) + 1 (positions are sines/cosines; max|Wemb| is
 *    8 sigma for trained weights);
 *  - layer-norm outputs (all other inputs): 8 standard deviations,
 *    8 * max|gamma| + max|beta| (= 8.9; the hard bound sqrt(d - 1) * 1.1 +
 *    0.1 is 2-3x larger and would waste resolution);
 *  - attention outputs feeding Wo and ReLU outputs feeding W2: 8 times the
 *    RMS of the projection (input RMS * sqrt(in * 2 / (in + out)) for
 *    Glorot weights) plus 0.1 for the bias.
 * An 8-sigma bound is essentially never exceeded, so int8 does not saturate.
 */
#include "model/synth.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/marian.h"
#include "model/shortlist.h"

#define ALIGN      256
#define SIGMAS     8.0f
#define MAX_TENSOR 512
/* The version line's value. The real files' is 24 bytes long (derived from
 * their sizes: see above), and so is this one, which says what it is. */
#define SYNTH_VERSION "v1.12.14 " FY_SYNTH_MARK

/* ---------------------------------------------------------------- PRNG */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* FNV-1a of the name mixed with the seed: one stream per tensor. */
static uint64_t stream_seed(uint64_t seed, const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = name; *p; p++) h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    uint64_t s = seed ^ h;
    return splitmix64(&s);
}

/* Uniform in [-1, 1) with 24 random bits: exact in float on every machine. */
static float uniform_pm1(uint64_t *s)
{
    return (float)(int32_t)(splitmix64(s) >> 40) / 8388608.0f - 1.0f;
}

/* Trained-like: one value in OUTLIER_ONE_IN is an outlier of
 * [OUTLIER_MIN, OUTLIER_MAX) sigma. */
#define OUTLIER_ONE_IN 2048u
#define OUTLIER_MIN    4.0f
#define OUTLIER_MAX    8.0f

/* The index of name in names[0 .. n), or -1. */
static int name_index(const char *name, const char *const *names, size_t n)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(name, names[i])) return (int)i;
    return -1;
}

int fy_synth_weights_parse(const char *name, fy_synth_weights *out)
{
    static const char *const names[] = {
        [FY_SYNTH_WEIGHTS_UNIFORM] = "uniform", [FY_SYNTH_WEIGHTS_TRAINED] = "trained"};
    int i = name_index(name, names, sizeof names / sizeof *names);
    if (i < 0) return FY_EINVAL;
    *out = (fy_synth_weights)i;
    return 0;
}

/* Near-Gaussian, mean 0, variance 1: the sum of twelve 16-bit uniforms in
 * [0, 1) minus 6, from three splitmix64 draws, summed exactly as integers. */
static float irwin_hall12(uint64_t *s)
{
    int64_t sum = 0;
    for (int d = 0; d < 3; d++) {
        uint64_t z = splitmix64(s);
        for (int q = 0; q < 4; q++) sum += (int64_t)((z >> (16 * q)) & 0xffff);
    }
    return (float)(sum - 6 * 65536) / 65536.0f;
}

void fy_synth_fill_weights(fy_synth_weights dist, float half, uint64_t *stream, float *v,
                           size_t count)
{
    if (dist != FY_SYNTH_WEIGHTS_TRAINED) {
        for (size_t i = 0; i < count; i++) v[i] = 0.0f + half * uniform_pm1(stream);
        return;
    }
    float sigma = half / sqrtf(3.0f);
    for (size_t i = 0; i < count; i++) {
        uint64_t z = splitmix64(stream);
        if ((uint32_t)z % OUTLIER_ONE_IN == 0) {
            /* magnitude from the next 24 bits, sign from the top bit */
            float u = (float)((z >> 32) & 0xffffff) / 16777216.0f;
            float m = OUTLIER_MIN + (OUTLIER_MAX - OUTLIER_MIN) * u;
            v[i] = sigma * ((z >> 63) ? -m : m);
        } else {
            v[i] = sigma * irwin_hall12(stream);
        }
    }
}

/* ---------------------------------------------------------------- tensors */

enum { K_UNIFORM, K_ALPHA, K_WEIGHTS };

typedef struct spec {
    char name[96];
    uint32_t type;  /* FY_DT_F32 / FY_DT_INTGEMM8 */
    int rows, cols; /* header shape [rows, cols] */
    int kind;       /* K_UNIFORM: center + half * U(-1, 1); K_ALPHA: value;
                       K_WEIGHTS: fy_synth_fill_weights(o->weights, half) */
    float center, half, value;
    int transposed; /* int8 bytes written [cols][rows] */
    size_t bytes;   /* padded data length */
} spec;

typedef struct plan {
    spec t[MAX_TENSOR];
    int n;
    const fy_synth_options *o;
    float emb_bound, emb_rms; /* max|Wemb| * sqrt(d) + 1, RMS of the embedded input */
} plan;

static spec *add(plan *p, const char *name, uint32_t type, int rows, int cols)
{
    spec *s = &p->t[p->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->type = type;
    s->rows = rows;
    s->cols = cols;
    return s;
}

static void add_uniform(plan *p, const char *name, int rows, int cols, float center, float half)
{
    spec *s = add(p, name, FY_DT_F32, rows, cols);
    s->center = center;
    s->half = half;
}

/* A weight [in, out] plus, in int8 models, its activation scale for an input
 * bounded by in_bound. */
static void add_weight(plan *p, const char *name, int in, int out, float in_bound)
{
    int q = p->o->int8;
    spec *s = add(p, name, q ? FY_DT_INTGEMM8 : FY_DT_F32, in, out);
    s->kind = K_WEIGHTS;
    s->half = sqrtf(6.0f / (float)(in + out));
    s->transposed = q;
    if (q) {
        char a[96];
        snprintf(a, sizeof a, "%s_QuantMultA", name);
        spec *al = add(p, a, FY_DT_F32, 1, 1);
        al->kind = K_ALPHA;
        al->value = 127.0f / in_bound;
    }
}

static void add_ln(plan *p, const char *prefix)
{
    char n[96];
    int d = p->o->dim_emb;
    snprintf(n, sizeof n, "%s_ln_scale", prefix);
    add_uniform(p, n, 1, d, 1.0f, 0.1f);
    snprintf(n, sizeof n, "%s_ln_bias", prefix);
    add_uniform(p, n, 1, d, 0.0f, 0.1f);
}

/* Bound of a layer-norm output (gamma <= 1.1, |beta| <= 0.1). */
#define LN_BOUND (SIGMAS * 1.1f + 0.1f)
#define LN_RMS   1.2f

/* Bound of x·W + b for Glorot W [in, out] and input RMS rms. */
static float proj_bound(float rms, int in, int out)
{
    return SIGMAS * rms * sqrtf((float)in * 2.0f / (float)(in + out)) + 0.1f;
}

static void add_attention(plan *p, const char *prefix, float q_bound, float kv_bound, float kv_rms)
{
    char w[96], b[96];
    int d = p->o->dim_emb;
    static const char qkvo[] = "qkvo";
    for (int i = 0; i < 4; i++) {
        snprintf(w, sizeof w, "%s_W%c", prefix, qkvo[i]);
        snprintf(b, sizeof b, "%s_b%c", prefix, qkvo[i]);
        float bound = i == 0 ? q_bound : i < 3 ? kv_bound : proj_bound(kv_rms, d, d);
        add_weight(p, w, d, d, bound);
        add_uniform(p, b, 1, d, 0.0f, 0.1f);
    }
    snprintf(w, sizeof w, "%s_Wo", prefix);
    add_ln(p, w);
}

static void add_ffn(plan *p, const char *prefix)
{
    char n[96];
    int d = p->o->dim_emb, f = p->o->dim_ffn;
    snprintf(n, sizeof n, "%s_W1", prefix);
    add_weight(p, n, d, f, LN_BOUND);
    snprintf(n, sizeof n, "%s_b1", prefix);
    add_uniform(p, n, 1, f, 0.0f, 0.1f);
    snprintf(n, sizeof n, "%s_W2", prefix);
    add_weight(p, n, f, d, proj_bound(LN_RMS, d, f));
    snprintf(n, sizeof n, "%s_b2", prefix);
    add_uniform(p, n, 1, d, 0.0f, 0.1f);
    snprintf(n, sizeof n, "%s_ffn", prefix);
    add_ln(p, n);
}

static void add_embeddings(plan *p)
{
    const fy_synth_options *o = p->o;
    uint32_t et = o->int8 ? FY_DT_INTGEMM8 : FY_DT_F32;
    int d = o->dim_emb;
    const char *names[2] = {o->separate_vocab ? "encoder_Wemb" : "Wemb", "decoder_Wemb"};
    int rows[2] = {o->src_vocab_size, o->trg_vocab_size};
    for (int i = 0; i < (o->separate_vocab ? 2 : 1); i++) {
        spec *s = add(p, names[i], et, rows[i], d);
        s->kind = K_WEIGHTS;
        s->half = sqrtf(6.0f / (float)(rows[i] + d)) * o->emb_scale;
    }
    float half = fmaxf(p->t[p->n - 1].half, p->t[p->n - (o->separate_vocab ? 2 : 1)].half);
    float emb_max =
        o->weights == FY_SYNTH_WEIGHTS_TRAINED ? half / sqrtf(3.0f) * OUTLIER_MAX : half;
    p->emb_bound = emb_max * sqrtf((float)d) + 1.0f;
    p->emb_rms = sqrtf(half * half / 3.0f * (float)d + 0.5f);
    add_uniform(p, "decoder_ff_logit_out_b", 1, o->trg_vocab_size, 0.0f, 0.1f);
    if (!o->int8) return;
    unsigned which = o->out_scales ? o->out_scales : fy_synth_default_scales(o->separate_vocab);
    if (which & FY_SYNTH_SCALE_NONE) {
        spec *s = add(p, "none_QuantMultA", FY_DT_F32, 1, 1);
        s->kind = K_ALPHA;
        s->value = 127.0f / LN_BOUND * (o->none_scale_factor > 0 ? o->none_scale_factor : 1.0f);
    }
    if (which & FY_SYNTH_SCALE_WEMB) {
        spec *s = add(p, o->separate_vocab ? "decoder_Wemb_QuantMultA" : "Wemb_QuantMultA",
                      FY_DT_INTGEMM8, 1, 1);
        s->kind = K_ALPHA;
        s->value = 127.0f / LN_BOUND * (o->wemb_scale_factor > 0 ? o->wemb_scale_factor : 1.0f);
    }
}

unsigned fy_synth_default_scales(int separate_vocab)
{
    return separate_vocab ? FY_SYNTH_SCALE_WEMB : FY_SYNTH_SCALE_NONE | FY_SYNTH_SCALE_WEMB;
}

static int cmp_spec(const void *a, const void *b)
{
    return strcmp(((const spec *)a)->name, ((const spec *)b)->name);
}

static void build_plan(plan *p, const fy_synth_options *o)
{
    char a[96], b[96];
    memset(p, 0, sizeof *p);
    p->o = o;
    int d = o->dim_emb;
    add_embeddings(p);
    for (int l = 1; l <= o->enc_depth; l++) {
        float in_bound = l == 1 ? p->emb_bound : LN_BOUND;
        float in_rms = l == 1 ? p->emb_rms : LN_RMS;
        snprintf(a, sizeof a, "encoder_l%d_self", l);
        add_attention(p, a, in_bound, in_bound, in_rms);
        snprintf(a, sizeof a, "encoder_l%d_ffn", l);
        add_ffn(p, a);
    }
    for (int l = 1; l <= o->dec_depth; l++) {
        float in_bound = l == 1 ? p->emb_bound : LN_BOUND;
        snprintf(a, sizeof a, "decoder_l%d_rnn_W", l);
        add_weight(p, a, d, d, in_bound);
        snprintf(a, sizeof a, "decoder_l%d_rnn_Wf", l);
        add_weight(p, a, d, d, in_bound);
        snprintf(a, sizeof a, "decoder_l%d_rnn_bf", l);
        add_uniform(p, a, 1, d, 0.0f, 0.1f);
        snprintf(a, sizeof a, "decoder_l%d_rnn_ffn", l);
        add_ln(p, a);
        snprintf(a, sizeof a, "decoder_l%d_context", l);
        add_attention(p, a, LN_BOUND, LN_BOUND, LN_RMS);
        snprintf(b, sizeof b, "decoder_l%d_ffn", l);
        add_ffn(p, b);
    }
    qsort(p->t, (size_t)p->n, sizeof *p->t, cmp_spec);
    for (int i = 0; i < p->n; i++) {
        spec *s = &p->t[i];
        size_t count = (size_t)s->rows * (size_t)s->cols;
        size_t need = s->type == FY_DT_F32 ? count * 4 : count + 4;
        s->bytes = (need + ALIGN - 1) / ALIGN * ALIGN;
    }
}

/* ---------------------------------------------------------------- YAML */

/* The embedded config as Mozilla's files hold it (see the header comment):
 * Marian's model features, keys sorted, re-emitted by yaml-cpp (flow "[]"
 * for empty lists, no final newline). 1338 bytes for every preset (digit
 * counts and the lengths of the two tying flags agree). */
static int format_yaml(const fy_synth_options *o, char *buf, size_t cap)
{
    int n = snprintf(buf, cap,
                     "bert-train-type-embeddings: true\n"
                     "bert-type-vocab-size: 2\n"
                     "dec-cell: ssru\n"
                     "dec-cell-base-depth: 2\n"
                     "dec-cell-high-depth: 1\n"
                     "dec-depth: %d\n"
                     "dim-emb: %d\n"
                     "dim-rnn: 1024\n"
                     "dim-vocabs:\n"
                     "  - %d\n"
                     "  - %d\n"
                     "enc-cell: gru\n"
                     "enc-cell-depth: 1\n"
                     "enc-depth: %d\n"
                     "enc-type: bidirectional\n"
                     "factors-combine: sum\n"
                     "factors-dim-emb: 0\n"
                     "input-types: []\n"
                     "layer-normalization: false\n"
                     "lemma-dependency: \"\"\n"
                     "lemma-dim-emb: 0\n"
                     "output-omit-bias: false\n"
                     "right-left: false\n"
                     "skip: false\n"
                     "special-vocab: []\n"
                     "tied-embeddings: %s\n"
                     "tied-embeddings-all: %s\n"
                     "tied-embeddings-src: false\n"
                     "transformer-aan-activation: swish\n"
                     "transformer-aan-depth: 2\n"
                     "transformer-aan-nogate: false\n"
                     "transformer-decoder-autoreg: rnn\n"
                     "transformer-decoder-dim-ffn: 0\n"
                     "transformer-decoder-ffn-depth: 0\n"
                     "transformer-dim-aan: 2048\n"
                     "transformer-dim-ffn: %d\n"
                     "transformer-ffn-activation: relu\n"
                     "transformer-ffn-depth: 2\n"
                     "transformer-guided-alignment-layer: last\n"
                     "transformer-heads: %d\n"
                     "transformer-no-affine: false\n"
                     "transformer-no-bias: false\n"
                     "transformer-no-projection: false\n"
                     "transformer-pool: false\n"
                     "transformer-postprocess: dan\n"
                     "transformer-postprocess-emb: d\n"
                     "transformer-postprocess-top: \"\"\n"
                     "transformer-preprocess: \"\"\n"
                     "transformer-rnn-projection: false\n"
                     "transformer-tied-layers: []\n"
                     "transformer-train-position-embeddings: false\n"
                     "type: transformer\n"
                     "ulr: false\n"
                     "ulr-dim-emb: 0\n"
                     "ulr-trainable-transformation: false\n"
                     "version: " SYNTH_VERSION,
                     o->dec_depth, o->dim_emb, o->src_vocab_size, o->trg_vocab_size, o->enc_depth,
                     o->separate_vocab ? "true" : "false", o->separate_vocab ? "false" : "true",
                     o->dim_ffn, o->heads);
    return n > 0 && (size_t)n < cap ? n : -1;
}

/* ---------------------------------------------------------------- writing */

typedef struct out {
    FILE *f;
    int failed;
} out;

static void put(out *w, const void *data, size_t n)
{
    if (!w->failed && n && fwrite(data, 1, n, w->f) != n) w->failed = 1;
}

static void put_u64(out *w, uint64_t v)
{
    put(w, &v, 8);
}

static void put_zeros(out *w, size_t n)
{
    static const uint8_t z[ALIGN];
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        put(w, z, k);
        n -= k;
    }
}

/* Fills v[count] with the spec's values. */
static void generate(const spec *s, const fy_synth_options *o, float *v, size_t count)
{
    if (s->kind == K_ALPHA) {
        for (size_t i = 0; i < count; i++) v[i] = s->value;
        return;
    }
    uint64_t st = stream_seed(o->seed, s->name);
    if (s->kind == K_WEIGHTS) {
        fy_synth_fill_weights(o->weights, s->half, &st, v, count);
        return;
    }
    for (size_t i = 0; i < count; i++) v[i] = s->center + s->half * uniform_pm1(&st);
}

/* Writes one tensor's data (with padding); buf holds count floats, q count bytes. */
static void write_data(out *w, const spec *s, const fy_synth_options *o, float *buf, int8_t *q)
{
    size_t count = (size_t)s->rows * (size_t)s->cols;
    generate(s, o, buf, count);
    if (s->type == FY_DT_F32) {
        put(w, buf, count * 4);
        put_zeros(w, s->bytes - count * 4);
        return;
    }
    float mx = 0.0f;
    for (size_t i = 0; i < count; i++) mx = fmaxf(mx, fabsf(buf[i]));
    float mult = 127.0f / mx;
    for (int r = 0; r < s->rows; r++) {
        for (int c = 0; c < s->cols; c++) {
            float x = rintf(buf[(size_t)r * (size_t)s->cols + (size_t)c] * mult);
            x = fminf(127.0f, fmaxf(-127.0f, x));
            size_t at = s->transposed ? (size_t)c * (size_t)s->rows + (size_t)r
                                      : (size_t)r * (size_t)s->cols + (size_t)c;
            q[at] = (int8_t)x;
        }
    }
    put(w, q, count);
    put(w, &mult, 4);
    put_zeros(w, s->bytes - count - 4);
}

static void write_header(out *w, const plan *p, const char *yaml, size_t yaml_len)
{
    uint64_t pos = 16;
    put_u64(w, 1);
    put_u64(w, (uint64_t)p->n + 1);
    for (int i = 0; i < p->n; i++) {
        const spec *s = &p->t[i];
        uint64_t h[4] = {strlen(s->name) + 1, s->type, 2, s->bytes};
        put(w, h, sizeof h);
    }
    uint64_t yh[4] = {sizeof "special:model.yml", FY_DT_I8, 1, yaml_len + 1};
    put(w, yh, sizeof yh);
    pos += 32 * ((uint64_t)p->n + 1);
    for (int i = 0; i < p->n; i++) {
        put(w, p->t[i].name, strlen(p->t[i].name) + 1);
        pos += strlen(p->t[i].name) + 1;
    }
    put(w, "special:model.yml", sizeof "special:model.yml");
    pos += sizeof "special:model.yml";
    for (int i = 0; i < p->n; i++) {
        int32_t shape[2] = {p->t[i].rows, p->t[i].cols};
        put(w, shape, sizeof shape);
    }
    int32_t ylen = (int32_t)yaml_len + 1;
    put(w, &ylen, 4);
    pos += 8 * (uint64_t)p->n + 4;
    /* Marian's rule: the next multiple of 256 strictly after pos + 8. */
    uint64_t next = ((pos + 8) / ALIGN + 1) * ALIGN;
    uint64_t pad = next - pos - 8;
    put_u64(w, pad);
    put_zeros(w, (size_t)pad);
    (void)yaml;
}

static int check_options(const fy_synth_options *o, fy_error *err)
{
    if (o->dim_emb < 8 || o->dim_emb > 4096 || o->heads < 1 || o->dim_emb % o->heads ||
        o->dim_ffn < 8 || o->dim_ffn > 16384 || o->enc_depth < 1 || o->enc_depth > 24 ||
        o->dec_depth < 1 || o->dec_depth > 24 || o->src_vocab_size < 8 || o->trg_vocab_size < 8 ||
        o->src_vocab_size > 1000000 || o->trg_vocab_size > 1000000 || !(o->emb_scale > 0.0f) ||
        (o->weights != FY_SYNTH_WEIGHTS_UNIFORM && o->weights != FY_SYNTH_WEIGHTS_TRAINED))
        return fy_err(err, FY_EINVAL, "synth: inconsistent model options");
    if (!o->separate_vocab && o->src_vocab_size != o->trg_vocab_size)
        return fy_err(err, FY_EINVAL, "synth: a shared vocabulary needs equal vocab sizes");
    return 0;
}

/* Opens path.tmp.PID for writing; *tmp receives the malloc'd name. */
static FILE *open_temp(const char *path, char **tmp, fy_error *err)
{
    size_t n = strlen(path) + 32;
    *tmp = malloc(n);
    if (!*tmp) {
        fy_err(err, FY_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    snprintf(*tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(*tmp, "wb");
    if (!f) fy_err(err, FY_EIO, "%s: cannot create: %s", *tmp, strerror(errno));
    return f;
}

/* Flushes, fsyncs and renames tmp over path; removes tmp on failure. */
static int commit_temp(FILE *f, int failed, char *tmp, const char *path, fy_error *err)
{
    int rc = 0;
    if (failed || fflush(f) != 0 || fsync(fileno(f)) != 0)
        rc = fy_err(err, FY_EIO, "%s: write failed: %s", tmp, strerror(errno));
    if (fclose(f) != 0 && !rc) rc = fy_err(err, FY_EIO, "%s: close failed", tmp);
    if (!rc && rename(tmp, path) != 0)
        rc = fy_err(err, FY_EIO, "%s: cannot rename into place: %s", path, strerror(errno));
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

int fy_synth_write_model(const char *path, const fy_synth_options *o, fy_error *err)
{
    int rc = check_options(o, err);
    if (rc) return rc;
    plan *p = malloc(sizeof *p);
    char yaml[4096];
    if (!p) return fy_err(err, FY_ENOMEM, "synth: out of memory");
    build_plan(p, o);
    int yl = o->yaml ? (int)strlen(o->yaml) : format_yaml(o, yaml, sizeof yaml);
    if (o->yaml && (size_t)yl < sizeof yaml)
        memcpy(yaml, o->yaml, (size_t)yl + 1);
    else if (o->yaml)
        yl = -1;
    size_t max_count = 0;
    for (int i = 0; i < p->n; i++) {
        size_t c = (size_t)p->t[i].rows * (size_t)p->t[i].cols;
        if (c > max_count) max_count = c;
    }
    float *buf = malloc(max_count * sizeof *buf);
    int8_t *q = malloc(max_count);
    char *tmp = NULL;
    FILE *f = NULL;
    if (!buf || !q || yl < 0) {
        rc = fy_err(err, FY_ENOMEM, "synth: out of memory");
        goto done;
    }
    f = open_temp(path, &tmp, err);
    if (!f) {
        rc = err ? err->code : FY_EIO;
        free(tmp);
        goto done;
    }
    out w = {f, 0};
    write_header(&w, p, yaml, (size_t)yl);
    for (int i = 0; i < p->n; i++) write_data(&w, &p->t[i], o, buf, q);
    put(&w, yaml, (size_t)yl + 1);
    rc = commit_temp(f, w.failed, tmp, path, err);
done:
    free(buf);
    free(q);
    free(p);
    return rc;
}

/* The architectures (Firefox Translations' tiny, base and base-memory
 * students) and the two real models of the zh/en directions with their
 * vocabularies, precision and file names. */
static const struct preset {
    const char *name;
    int d, ffn, enc, dec;
    int src_vocab, trg_vocab, separate, int8;
    const char *infix; /* NULL: not a particular real model */
} presets[] = {
    {"tiny", 256, 1536, 6, 2, 32000, 32000, 0, 0, NULL},
    {"base", 512, 2048, 6, 2, 32000, 32000, 0, 0, NULL},
    {"base-memory", 384, 1536, 6, 4, 32000, 32000, 0, 0, NULL},
    /* zh-en 2.0 (shipped as 3.0): base, one 64000-piece vocabulary, tied-all. */
    {"firefox-zh-en", 512, 2048, 6, 2, 64000, 64000, 0, 1, "zhen"},
    /* en-zh 2.2 (3.0): base-memory, English 32000 + Chinese 32000 pieces. */
    {"firefox-en-zh", 384, 1536, 6, 4, 32000, 32000, 1, 1, "enzh"},
};

static const struct preset *find_preset(const char *name)
{
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (strcmp(name, presets[i].name) == 0) return &presets[i];
    return NULL;
}

int fy_synth_preset(const char *name, fy_synth_options *o, fy_error *err)
{
    const struct preset *p = find_preset(name);
    memset(o, 0, sizeof *o);
    if (!p)
        return fy_err(err, FY_EINVAL,
                      "unknown preset '%s' (tiny, base, base-memory, firefox-zh-en, "
                      "firefox-en-zh)",
                      name);
    o->dim_emb = p->d;
    o->dim_ffn = p->ffn;
    o->enc_depth = p->enc;
    o->dec_depth = p->dec;
    o->heads = 8;
    o->src_vocab_size = p->src_vocab;
    o->trg_vocab_size = p->trg_vocab;
    o->separate_vocab = p->separate;
    o->int8 = p->int8;
    o->seed = 1;
    o->emb_scale = 20.0f;
    return 0;
}

const char *fy_synth_preset_infix(const char *name)
{
    const struct preset *p = find_preset(name);
    return p ? p->infix : NULL;
}

/* ---------------------------------------------------------------- shortlist */

int fy_synth_lex_parse(const char *name, fy_synth_lex *out)
{
    static const char *const names[] = {
        [FY_SYNTH_LEX_UNIFORM] = "uniform", [FY_SYNTH_LEX_ZIPF] = "zipf"};
    int i = name_index(name, names, sizeof names / sizeof *names);
    if (i < 0) return FY_EINVAL;
    *out = (fy_synth_lex)i;
    return 0;
}

/* How a list's ids are drawn from [frequent, trg): zipf NULL, uniformly;
 * else zipf[i] is the sum of 1/r for ranks r = 1 .. i + 1 (rank 1 is id
 * frequent), and an id is drawn by inverting it. Sums of correctly
 * rounded divisions in one order: the same ids on every machine. */
typedef struct lex_draw {
    int frequent, trg;
    double *zipf;
} lex_draw;

static uint32_t draw_id(uint64_t *st, const lex_draw *d)
{
    int n = d->trg - d->frequent;
    if (!d->zipf) return (uint32_t)(d->frequent + (int)(splitmix64(st) % (uint64_t)n));
    double u = (double)(splitmix64(st) >> 11) * 0x1p-53 * d->zipf[n - 1];
    int lo = 0, hi = n - 1; /* the first i with zipf[i] > u */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (d->zipf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return (uint32_t)(d->frequent + lo);
}

/* Draws `len` distinct ids into ids (sorted). */
static int draw_list(uint64_t *st, const lex_draw *d, int len, uint32_t *ids)
{
    int k = 0;
    while (k < len) {
        uint32_t id = draw_id(st, d);
        int dup = 0;
        for (int j = 0; j < k && !dup; j++) dup = ids[j] == id;
        if (!dup) ids[k++] = id;
    }
    for (int i = 1; i < k; i++) { /* insertion sort: lists are short */
        uint32_t v = ids[i];
        int j = i - 1;
        for (; j >= 0 && ids[j] > v; j--) ids[j + 1] = ids[j];
        ids[j + 1] = v;
    }
    return k;
}

static int lex_draw_init(lex_draw *d, int frequent, int trg, fy_synth_lex dist)
{
    *d = (lex_draw){frequent, trg, NULL};
    if (dist != FY_SYNTH_LEX_ZIPF) return 0;
    int n = trg - frequent;
    d->zipf = malloc((size_t)n * sizeof *d->zipf);
    if (!d->zipf) return FY_ENOMEM;
    double sum = 0;
    for (int i = 0; i < n; i++) d->zipf[i] = sum += 1.0 / (i + 1);
    return 0;
}

int fy_synth_write_shortlist(const char *path, int src_vocab, int trg_vocab, int frequent, int best,
                             fy_synth_lex dist, uint64_t seed, fy_error *err)
{
    if (src_vocab < 1 || trg_vocab < 2 || frequent < 0 || frequent >= trg_vocab || best < 1 ||
        best > trg_vocab - frequent || src_vocab > 10000000)
        return fy_err(err, FY_EINVAL, "synth: inconsistent shortlist options");
    size_t V = (size_t)src_vocab;
    size_t words = 6 + (V + 1) + ((V * (size_t)best * 4 + 7) / 8);
    uint64_t *blob = calloc(words, 8);
    lex_draw draw;
    if (!blob || lex_draw_init(&draw, frequent, trg_vocab, dist)) {
        free(blob);
        return fy_err(err, FY_ENOMEM, "synth: out of memory");
    }
    uint64_t *off = blob + 6;
    uint32_t *ids = (uint32_t *)(off + V + 1);
    uint64_t st = stream_seed(seed, "shortlist");
    uint64_t total = 0;
    for (size_t s = 0; s < V; s++) {
        off[s] = total;
        /* About one source id in ten gets a shorter (sometimes empty) list,
         * as with rare words in real shortlists; the last id keeps a full
         * list because the reference rejects offsets equal to the total
         * before the final entry. */
        int len = best;
        if (s + 1 < V && splitmix64(&st) % 10 == 0) len = (int)(splitmix64(&st) % (uint64_t)best);
        total += (uint64_t)draw_list(&st, &draw, len, ids + total);
    }
    free(draw.zipf);
    off[V] = total;
    size_t size = 48 + (V + 1) * 8 + (size_t)total * 4;
    blob[0] = FY_SHORTLIST_MAGIC;
    blob[2] = (uint64_t)frequent;
    blob[3] = (uint64_t)best;
    blob[4] = V + 1;
    blob[5] = total;
    blob[1] = fy_shortlist_checksum(blob + 2, (size - 16) / 8);
    int rc = fy_write_file_atomic(path, blob, size, err);
    free(blob);
    return rc;
}

int fy_write_file_atomic(const char *path, const void *data, size_t size, fy_error *err)
{
    char *tmp = NULL;
    FILE *f = open_temp(path, &tmp, err);
    if (!f) {
        free(tmp);
        return err ? err->code : FY_EIO;
    }
    out w = {f, 0};
    put(&w, data, size);
    return commit_temp(f, w.failed, tmp, path, err);
}
