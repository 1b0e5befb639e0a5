/* test_model.c - Marian loader, config, shortlist, discovery and synth tests.
 *
 * Happy paths run on synthetic models written through the public synth API;
 * the corruption tests damage a small synthetic model one field at a time
 * (and truncate it at many offsets) and require a clean failure with the
 * expected code and message. Run under ASan in the sanitizer build.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/config.h"
#include "model/discover.h"
#include "model/marian.h"
#include "model/shortlist.h"
#include "model/synth.h"
#include "../check.h"
#include "../read_file.h"

static char tmpdir[256];

/* ------------------------------------------------------------ helpers */

static char *path_in(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void write_all(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
}

static void put_u64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* A small int8 model: fast to damage at every offset. */
static fy_synth_options small_options(void)
{
    fy_synth_options o;
    memset(&o, 0, sizeof o);
    o.dim_emb = 16;
    o.dim_ffn = 32;
    o.enc_depth = 2;
    o.dec_depth = 1;
    o.heads = 8;
    o.src_vocab_size = o.trg_vocab_size = 64;
    o.int8 = 1;
    o.seed = 7;
    o.emb_scale = 20.0f;
    return o;
}

/* Opens bytes written to a file; expects failure with code and a message
 * containing the file name and want. */
static void expect_bad(const char *what, const uint8_t *data, size_t size, int code,
                       const char *want)
{
    const char *p = path_in("bad.bin");
    write_all(p, data, size);
    fy_error err = {0};
    fy_marian *m = fy_marian_open(p, &err);
    CHECKF(!m, "%s: opened a damaged model", what);
    CHECKF(err.code == code, "%s: code %d, expected %d (%s)", what, err.code, code, err.msg);
    CHECKF(strstr(err.msg, p) != NULL, "%s: message lacks the path: %s", what, err.msg);
    CHECKF(!want || strstr(err.msg, want), "%s: message '%s' lacks '%s'", what, err.msg, want);
    CHECKF(!strchr(err.msg, '\n'), "%s: message is not one line", what);
    fy_marian_free(m);
}

/* ------------------------------------------------------------ happy path */

static void check_layout(const fy_marian *m, const fy_synth_options *o)
{
    int d = o->dim_emb, f = o->dim_ffn;
    char n[128];
    struct {
        const char *fmt;
        int rows, cols, weight;
    } enc[] = {{"encoder_l%d_self_Wq", d, d, 1},          {"encoder_l%d_self_bq", 1, d, 0},
               {"encoder_l%d_self_Wk", d, d, 1},          {"encoder_l%d_self_bk", 1, d, 0},
               {"encoder_l%d_self_Wv", d, d, 1},          {"encoder_l%d_self_bv", 1, d, 0},
               {"encoder_l%d_self_Wo", d, d, 1},          {"encoder_l%d_self_bo", 1, d, 0},
               {"encoder_l%d_self_Wo_ln_scale", 1, d, 0}, {"encoder_l%d_self_Wo_ln_bias", 1, d, 0},
               {"encoder_l%d_ffn_W1", d, f, 1},           {"encoder_l%d_ffn_b1", 1, f, 0},
               {"encoder_l%d_ffn_W2", f, d, 1},           {"encoder_l%d_ffn_b2", 1, d, 0},
               {"encoder_l%d_ffn_ffn_ln_scale", 1, d, 0}, {"encoder_l%d_ffn_ffn_ln_bias", 1, d, 0}};
    struct {
        const char *fmt;
        int rows, cols, weight;
    } dec[] = {{"decoder_l%d_rnn_W", d, d, 1},
               {"decoder_l%d_rnn_Wf", d, d, 1},
               {"decoder_l%d_rnn_bf", 1, d, 0},
               {"decoder_l%d_rnn_ffn_ln_scale", 1, d, 0},
               {"decoder_l%d_rnn_ffn_ln_bias", 1, d, 0},
               {"decoder_l%d_context_Wq", d, d, 1},
               {"decoder_l%d_context_bq", 1, d, 0},
               {"decoder_l%d_context_Wk", d, d, 1},
               {"decoder_l%d_context_Wv", d, d, 1},
               {"decoder_l%d_context_Wo", d, d, 1},
               {"decoder_l%d_context_Wo_ln_scale", 1, d, 0},
               {"decoder_l%d_ffn_W1", d, f, 1},
               {"decoder_l%d_ffn_W2", f, d, 1},
               {"decoder_l%d_ffn_ffn_ln_bias", 1, d, 0}};
    uint32_t wt = o->int8 ? FY_DT_INTGEMM8 : FY_DT_F32;
    for (int l = 1; l <= o->enc_depth + o->dec_depth; l++) {
        int is_dec = l > o->enc_depth, layer = is_dec ? l - o->enc_depth : l;
        size_t cnt = is_dec ? sizeof dec / sizeof *dec : sizeof enc / sizeof *enc;
        for (size_t i = 0; i < cnt; i++) {
            const char *fmt = is_dec ? dec[i].fmt : enc[i].fmt;
            int rows = is_dec ? dec[i].rows : enc[i].rows,
                cols = is_dec ? dec[i].cols : enc[i].cols;
            int w = is_dec ? dec[i].weight : enc[i].weight;
            snprintf(n, sizeof n, fmt, layer);
            const fy_tensor *t = fy_marian_find(m, n);
            CHECKF(t && t->ndim == 2 && t->shape[0] == rows && t->shape[1] == cols,
                   "%s missing or wrong shape", n);
            if (!t) continue;
            CHECKF(t->type == (w ? wt : FY_DT_F32), "%s type %s", n, fy_dtype_name(t->type));
            CHECKF(t->count == (size_t)rows * (size_t)cols, "%s count", n);
            CHECKF(!w || !o->int8 || (t->quant_mult > 0 && isfinite(t->quant_mult)),
                   "%s multiplier", n);
            if (w && o->int8) {
                char a[160];
                float v = 0;
                snprintf(a, sizeof a, "%s_QuantMultA", n);
                CHECKF(fy_model_read_scalar(m, a, &v, NULL) == 0 && v > 0, "%s", a);
            }
        }
    }
    snprintf(n, sizeof n, "encoder_l%d_self_Wq", o->enc_depth + 1);
    CHECKF(!fy_marian_find(m, n), "extra layer %s", n);
    CHECKF(!fy_marian_find(m, "decoder_l1_self_Wq"), "an SSRU decoder has no self-attention");
    const fy_tensor *b = fy_marian_find(m, "decoder_ff_logit_out_b");
    CHECKF(b && b->shape[1] == o->trg_vocab_size && b->type == FY_DT_F32, "output bias");
}

/* A preset written with the given precision and layout; bytes (when not 0)
 * is the size of Mozilla's file of that shape. */
static void test_happy(const char *preset, int int8, int separate, long bytes)
{
    fy_synth_options o;
    fy_error err = {0};
    CHECKF(fy_synth_preset(preset, &o, &err) == 0, "preset %s", preset);
    o.int8 = int8;
    o.separate_vocab = separate;
    int V = o.src_vocab_size;
    const char *p = path_in("happy.bin");
    CHECKF(fy_synth_write_model(p, &o, &err) == 0, "write: %s", err.msg);
    fy_marian *m = fy_marian_open(p, &err);
    CHECKF(m != NULL, "open %s int8=%d sep=%d: %s", preset, int8, separate, err.msg);
    if (!m) return;
    check_layout(m, &o);
    const char *emb = separate ? "encoder_Wemb" : "Wemb";
    const fy_tensor *w = fy_marian_find(m, emb);
    CHECKF(w && w->shape[0] == V && w->shape[1] == o.dim_emb, "%s shape", emb);
    CHECKF(!bytes || (long)fy_marian_file_size(m) == bytes, "%s: %zu bytes, Mozilla's have %ld",
           preset, fy_marian_file_size(m), bytes);
    CHECKF(!separate || fy_marian_find(m, "decoder_Wemb"), "decoder_Wemb");
    CHECKF(separate || !fy_marian_find(m, "decoder_Wemb"), "no decoder_Wemb when tied");
    /* The output layer's scales as the real files hold them: none_QuantMultA
     * (float32) only with a shared vocabulary, [decoder_]Wemb_QuantMultA
     * (intgemm8 [1, 1]) always. */
    float a = 0;
    const fy_tensor *na = fy_marian_find(m, "none_QuantMultA");
    CHECKF((!int8 || separate) ? !na : (na && na->type == FY_DT_F32), "none_QuantMultA (sep=%d)",
           separate);
    const char *wname = separate ? "decoder_Wemb_QuantMultA" : "Wemb_QuantMultA";
    const fy_tensor *wa = fy_marian_find(m, wname);
    CHECKF(!int8 || (wa && wa->type == FY_DT_INTGEMM8 && wa->shape[0] == 1 && wa->shape[1] == 1),
           "%s is intgemm8 [1, 1]", wname);
    CHECKF(!int8 || (fy_model_read_scalar(m, wname, &a, NULL) == 0 && a > 1), "alpha %g", a);
    CHECKF(int8 || (!na && !wa), "a float32 model has no activation scales");
    const fy_tensor *last = fy_marian_tensor_at(m, fy_marian_tensor_count(m) - 1);
    CHECKF(strcmp(last->name, "special:model.yml") == 0, "yaml is the last tensor");
    CHECKF(strstr(fy_marian_yaml(m), "dec-cell: ssru\n") != NULL, "yaml text");
    /* Mozilla's YAML is 1338 bytes in every shape (synth.c: derived from the
     * real file sizes), and yaml-cpp writes no final newline. */
    CHECKF(strlen(fy_marian_yaml(m)) == 1338, "yaml of %s: %zu bytes", preset,
           strlen(fy_marian_yaml(m)));
    CHECKF(strstr(fy_marian_yaml(m), "input-types: []\n") != NULL &&
               fy_marian_yaml(m)[strlen(fy_marian_yaml(m)) - 1] != '\n',
           "yaml-cpp style");
    CHECKF(fy_marian_tensor_at(m, fy_marian_tensor_count(m)) == NULL, "tensor_at out of range");
    for (size_t i = 1; i + 1 < fy_marian_tensor_count(m); i++)
        CHECKF(strcmp(fy_marian_tensor_at(m, i - 1)->name, fy_marian_tensor_at(m, i)->name) < 0,
               "tensors sorted by name at %zu", i);
    fy_model_config c;
    CHECKF(fy_model_config_read(m, &c, &err) == 0, "config: %s", err.msg);
    CHECKF(c.dim_emb == o.dim_emb && c.dim_ffn == o.dim_ffn && c.enc_depth == o.enc_depth &&
               c.dec_depth == o.dec_depth && c.heads == 8 && c.src_vocab_size == V &&
               c.trg_vocab_size == V && c.int8 == int8 && c.ffn_depth == 2 &&
               c.dec_ffn_depth == 2 && c.dec_dim_ffn == o.dim_ffn && c.output_bias &&
               c.separate_embeddings == separate && c.tied_embeddings &&
               c.tied_embeddings_all == !separate,
           "config values (%s int8=%d sep=%d)", preset, int8, separate);
    CHECKF(!strcmp(c.dec_cell, "ssru") && !strcmp(c.ffn_activation, "relu") &&
               !strcmp(c.postprocess, "dan") && c.preprocess[0] == '\0' &&
               !strcmp(c.enc_cell, "transformer"),
           "config strings");
    fy_marian_free(m);
}

/* The real models' presets fix precision, layout and sizes; their files
 * are exactly as large as Mozilla's. */
static void test_preset_shapes(void)
{
    fy_synth_options o;
    fy_error err = {0};
    CHECKF(fy_synth_preset("firefox-zh-en", &o, &err) == 0 && o.int8 && !o.separate_vocab &&
               o.src_vocab_size == 64000 && o.trg_vocab_size == 64000 && o.dim_emb == 512 &&
               o.dec_depth == 2 && o.dim_ffn == 2048,
           "firefox-zh-en preset");
    CHECKF(!strcmp(fy_synth_preset_infix("firefox-zh-en"), "zhen"), "zhen infix");
    CHECKF(fy_synth_preset("firefox-en-zh", &o, &err) == 0 && o.int8 && o.separate_vocab &&
               o.src_vocab_size == 32000 && o.trg_vocab_size == 32000 && o.dim_emb == 384 &&
               o.dec_depth == 4 && o.dim_ffn == 1536,
           "firefox-en-zh preset");
    CHECKF(!strcmp(fy_synth_preset_infix("firefox-en-zh"), "enzh"), "enzh infix");
    CHECKF(fy_synth_preset_infix("tiny") == NULL && fy_synth_preset_infix("nope") == NULL,
           "generic presets have no infix");
    test_happy("firefox-zh-en", 1, 0, 59504955);
    test_happy("firefox-en-zh", 1, 1, 43849787);
}

/* The int8 file must be the float file quantised: rint(w * q) clamped, stored
 * transposed [out][in] for weights and as-is for Wemb. */
static void test_int8_matches_float(void)
{
    fy_synth_options o = small_options();
    fy_error err = {0};
    o.int8 = 0;
    CHECKF(fy_synth_write_model(path_in("f.bin"), &o, &err) == 0, "%s", err.msg);
    o.int8 = 1;
    CHECKF(fy_synth_write_model(path_in("q.bin"), &o, &err) == 0, "%s", err.msg);
    fy_marian *f = fy_marian_open(path_in("f.bin"), &err);
    fy_marian *q = fy_marian_open(path_in("q.bin"), &err);
    CHECKF(f && q, "open: %s", err.msg);
    if (!f || !q) goto out;
    const char *names[] = {"Wemb", "encoder_l1_ffn_W1", "decoder_l1_rnn_Wf", "encoder_l2_self_Wo"};
    for (size_t k = 0; k < 4; k++) {
        const fy_tensor *a = fy_marian_find(f, names[k]), *b = fy_marian_find(q, names[k]);
        int rows = a->shape[0], cols = a->shape[1], bad = 0, transposed = k > 0;
        const float *x = a->data;
        const int8_t *y = b->data;
        float mx = 0;
        for (size_t i = 0; i < a->count; i++) mx = fmaxf(mx, fabsf(x[i]));
        CHECKF(b->quant_mult == 127.0f / mx, "%s multiplier %g", names[k], b->quant_mult);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                float e = fminf(127, fmaxf(-127, rintf(x[r * cols + c] * b->quant_mult)));
                int8_t got = transposed ? y[c * rows + r] : y[r * cols + c];
                bad += got != (int8_t)e;
            }
        CHECKF(bad == 0, "%s: %d int8 values differ from the float tensor", names[k], bad);
    }
out:
    fy_marian_free(f);
    fy_marian_free(q);
}

static void test_determinism(void)
{
    fy_synth_options o;
    fy_error err = {0};
    fy_synth_preset("tiny", &o, &err);
    o.int8 = 1;
    o.seed = 42;
    size_t n1, n2, n3;
    fy_synth_write_model(path_in("d1.bin"), &o, &err);
    fy_synth_write_model(path_in("d2.bin"), &o, &err);
    o.seed = 43;
    fy_synth_write_model(path_in("d3.bin"), &o, &err);
    uint8_t *a = (uint8_t *)read_file(path_in("d1.bin"), &n1),
            *b = (uint8_t *)read_file(path_in("d2.bin"), &n2);
    uint8_t *c = (uint8_t *)read_file(path_in("d3.bin"), &n3);
    CHECKF(a && b && n1 == n2 && memcmp(a, b, n1) == 0, "same seed, different bytes");
    CHECKF(c && n1 == n3 && memcmp(a, c, n1) != 0, "different seed, same bytes");
    free(a);
    free(b);
    free(c);
    fy_synth_write_shortlist(path_in("s1.bin"), 500, 600, 50, 20, FY_SYNTH_LEX_UNIFORM, 9, &err);
    fy_synth_write_shortlist(path_in("s2.bin"), 500, 600, 50, 20, FY_SYNTH_LEX_UNIFORM, 9, &err);
    a = (uint8_t *)read_file(path_in("s1.bin"), &n1);
    b = (uint8_t *)read_file(path_in("s2.bin"), &n2);
    CHECKF(a && b && n1 == n2 && memcmp(a, b, n1) == 0, "shortlist not deterministic");
    free(a);
    free(b);
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int temps = 0;
    while (d && (e = readdir(d)) != NULL) temps += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    CHECKF(temps == 0, "%d temporary files left behind", temps);
}

/* ------------------------------------------------------------ corruption */

/* Offsets of the header fields of tensor i, and of the pad count. */
typedef struct layout {
    size_t n, names, shapes, pad_at, data;
} layout;

static layout scan_layout(const uint8_t *b)
{
    layout L;
    L.n = (size_t)get_u64(b + 8);
    L.names = 16 + 32 * L.n;
    size_t p = L.names, dims = 0;
    for (size_t i = 0; i < L.n; i++) {
        p += (size_t)get_u64(b + 16 + 32 * i);
        dims += (size_t)get_u64(b + 16 + 32 * i + 16);
    }
    L.shapes = p;
    L.pad_at = p + 4 * dims;
    L.data = L.pad_at + 8 + (size_t)get_u64(b + L.pad_at);
    return L;
}

static void test_truncation(const uint8_t *good, size_t size, const layout *L)
{
    int crashed_or_opened = 0;
    for (size_t cut = 0; cut < size; cut += cut < L->data + 600 ? 1 : 53) {
        const char *p = path_in("trunc.bin");
        write_all(p, good, cut);
        fy_error err = {0};
        fy_marian *m = fy_marian_open(p, &err);
        if (m || (err.code != FY_EFORMAT) || !strstr(err.msg, p)) {
            if (crashed_or_opened++ < 3)
                fprintf(stderr, "truncated at %zu: %s (code %d)\n", cut, err.msg, err.code);
        }
        fy_marian_free(m);
    }
    CHECKF(crashed_or_opened == 0, "%d truncations were not rejected cleanly", crashed_or_opened);
}

typedef struct damage {
    const char *what;
    size_t at; /* byte offset */
    int width; /* 1, 4 or 8 */
    uint64_t value;
    int code;
    const char *want;
} damage;

static void apply_damage(const uint8_t *good, size_t size, const damage *d)
{
    uint8_t *b = malloc(size);
    memcpy(b, good, size);
    if (d->width == 8)
        put_u64(b + d->at, d->value);
    else if (d->width == 4) {
        uint32_t v = (uint32_t)d->value;
        memcpy(b + d->at, &v, 4);
    } else {
        b[d->at] = (uint8_t)d->value;
    }
    expect_bad(d->what, b, size, d->code, d->want);
    free(b);
}

static void test_fields(const uint8_t *good, size_t size, const layout *L)
{
    size_t h1 = 16 + 32; /* second tensor's header */
    uint64_t len1 = get_u64(good + h1 + 24);
    size_t name0_len = (size_t)get_u64(good + 16);
    float nan = NAN;
    uint32_t nan_bits;
    memcpy(&nan_bits, &nan, 4);
    /* The first tensor (sorted) is "Wemb" [64, 16] intgemm8: its multiplier
     * sits right after the 1024 int8 values. */
    size_t mult_at = L->data + 64 * 16;
    damage cases[] = {
        {"version", 0, 8, 2, FY_EFORMAT, "version"},
        {"count zero", 8, 8, 0, FY_EFORMAT, "tensor count"},
        {"count huge", 8, 8, 1ull << 40, FY_EFORMAT, "tensor count"},
        {"count too large for file", 8, 8, size / 32 + 1, FY_EFORMAT, "tensor count"},
        {"name length 0", 16, 8, 0, FY_EFORMAT, "name length"},
        {"name length huge", 16, 8, 1ull << 50, FY_EFORMAT, "name length"},
        {"name length +1", 16, 8, name0_len + 1, FY_EFORMAT, NULL},
        {"unknown type", h1 + 8, 8, 0x1234, FY_EFORMAT, "unknown type code 0x1234"},
        {"float16 type", h1 + 8, 8, 0x0402, FY_EUNSUPPORTED, "unsupported Marian type"},
        {"type f32 for int8 data", 16 + 8, 8, FY_DT_F32, FY_EFORMAT, "Wemb"},
        {"ndim 0", h1 + 16, 8, 0, FY_EFORMAT, "dimensions"},
        {"ndim 5", h1 + 16, 8, 5, FY_EFORMAT, "dimensions"},
        {"data length +256", h1 + 24, 8, len1 + 256, FY_EFORMAT, "inconsistent with shape"},
        {"data length -256", h1 + 24, 8, len1 - 256, FY_EFORMAT, "too short"},
        {"data length -1", h1 + 24, 8, len1 - 1, FY_EFORMAT, NULL},
        {"data length huge", h1 + 24, 8, 1ull << 62, FY_EFORMAT, "exceeds the file size"},
        {"missing NUL", L->names + name0_len - 1, 1, 'x', FY_EFORMAT, "NUL"},
        {"NUL inside name", L->names + 1, 1, 0, FY_EFORMAT, "NUL"},
        {"shape zero", L->shapes, 4, 0, FY_EFORMAT, "bad dimension"},
        {"shape negative", L->shapes, 4, (uint32_t)-5, FY_EFORMAT, "bad dimension"},
        {"shape doubled", L->shapes, 4, 128, FY_EFORMAT, "too short for shape"},
        {"shape halved", L->shapes, 4, 32, FY_EFORMAT, "inconsistent with shape"},
        {"shape huge", L->shapes, 4, 0x7fffffff, FY_EFORMAT, "shape"},
        {"pad count", L->pad_at, 8, get_u64(good + L->pad_at) + 1, FY_EFORMAT, "padding"},
        {"pad count huge", L->pad_at, 8, 1ull << 60, FY_EFORMAT, "padding"},
        {"pad byte", L->pad_at + 8, 1, 0x55, FY_EFORMAT, "padding byte"},
        {"multiplier zero", mult_at, 4, 0, FY_EFORMAT, "quantization multiplier"},
        {"multiplier NaN", mult_at, 4, nan_bits, FY_EFORMAT, "quantization multiplier"},
        {"multiplier negative", mult_at, 4, 0xbf800000u, FY_EFORMAT, "quantization multiplier"},
        {"yaml NUL", size - 1, 1, 'x', FY_EFORMAT, "special:model.yml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) apply_damage(good, size, &cases[i]);

    /* Duplicate name: copy a name over the next one of the same length. */
    uint8_t *b = malloc(size + 300);
    memcpy(b, good, size);
    size_t at = L->names, prev_at = 0, prev_len = 0, dup = 0;
    for (size_t i = 0; i < L->n && !dup; i++) {
        size_t len = (size_t)get_u64(good + 16 + 32 * i);
        if (len == prev_len) {
            memcpy(b + at, b + prev_at, len);
            dup = 1;
        }
        prev_at = at;
        prev_len = len;
        at += len;
    }
    CHECKF(dup, "no two names of equal length");
    expect_bad("duplicate name", b, size, FY_EFORMAT, "duplicate");
    memcpy(b, good, size);
    memset(b + size, 0xAB, 300);
    expect_bad("trailing bytes", b, size + 300, FY_EFORMAT, "unexpected bytes");
    expect_bad("empty file", b, 0, FY_EFORMAT, "empty");
    expect_bad("tiny file", b, 12, FY_EFORMAT, "too short");
    free(b);
    fy_error err = {0};
    CHECKF(!fy_marian_open(path_in("does-not-exist.bin"), &err) && err.code == FY_ENOTFOUND,
           "missing file: %s", err.msg);
}

static void test_corruption(void)
{
    fy_synth_options o = small_options();
    fy_error err = {0};
    const char *p = path_in("small.bin");
    CHECKF(fy_synth_write_model(p, &o, &err) == 0, "%s", err.msg);
    size_t size;
    uint8_t *good = (uint8_t *)read_file(p, &size);
    fy_marian *m = fy_marian_open(p, &err);
    CHECKF(m != NULL, "small model: %s", err.msg);
    fy_model_config c;
    CHECKF(m && fy_model_config_read(m, &c, &err) == 0, "small config: %s", err.msg);
    fy_marian_free(m);
    layout L = scan_layout(good);
    CHECKF(L.data % 256 == 0, "data section aligned");
    test_truncation(good, size, &L);
    test_fields(good, size, &L);
    free(good);
}

/* ------------------------------------------------------------ config */

static void expect_config(const char *what, const char *from, const char *to, int code,
                          const char *want)
{
    fy_synth_options o = small_options();
    fy_error err = {0};
    char real[4096];
    /* Fetch the real YAML, then edit one line. */
    fy_synth_write_model(path_in("cfg.bin"), &o, &err);
    fy_marian *m = fy_marian_open(path_in("cfg.bin"), &err);
    snprintf(real, sizeof real, "%s", m ? fy_marian_yaml(m) : "");
    fy_marian_free(m);
    char *at = strstr(real, from);
    CHECKF(at != NULL, "%s: '%s' not in the YAML", what, from);
    if (!at) return;
    char edited[4096];
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - real), real, to, at + strlen(from));
    o.yaml = edited;
    CHECKF(fy_synth_write_model(path_in("cfg.bin"), &o, &err) == 0, "%s", err.msg);
    m = fy_marian_open(path_in("cfg.bin"), &err);
    CHECKF(m != NULL, "%s: %s", what, err.msg);
    if (!m) return;
    fy_model_config c;
    int rc = fy_model_config_read(m, &c, &err);
    CHECKF(rc == code, "%s: code %d, expected %d (%s)", what, rc, code, err.msg);
    CHECKF(rc == 0 || strstr(err.msg, want), "%s: message '%s' lacks '%s'", what, err.msg, want);
    CHECKF(rc == 0 || strstr(err.msg, "cfg.bin"), "%s: message lacks the file", what);
    fy_marian_free(m);
}

static void test_config_errors(void)
{
    expect_config("unchanged", "dec-cell: ssru", "dec-cell: ssru", 0, "");
    expect_config("dec-cell", "dec-cell: ssru", "dec-cell: lstm", FY_EUNSUPPORTED, "lstm");
    expect_config("autoreg", "autoreg: rnn", "autoreg: self-attention", FY_EUNSUPPORTED,
                  "self-attention");
    expect_config("preprocess", "preprocess: \"\"", "preprocess: n", FY_EUNSUPPORTED, "preprocess");
    expect_config("postprocess", "postprocess: dan", "postprocess: da", FY_EUNSUPPORTED,
                  "postprocess");
    expect_config("activation", "activation: relu", "activation: swish", FY_EUNSUPPORTED, "swish");
    expect_config("type", "type: transformer", "type: s2s", FY_EUNSUPPORTED, "s2s");
    expect_config("dim-emb", "dim-emb: 16", "dim-emb: 32", FY_EFORMAT, "shape");
    expect_config("enc-depth more", "enc-depth: 2", "enc-depth: 3", FY_EFORMAT, "missing tensor");
    expect_config("enc-depth less", "enc-depth: 2", "enc-depth: 1", FY_EFORMAT, "more layers");
    expect_config("ffn", "transformer-dim-ffn: 32", "transformer-dim-ffn: 64", FY_EFORMAT,
                  "ffn_W1");
    expect_config("heads", "transformer-heads: 8", "transformer-heads: 5", FY_EFORMAT,
                  "dimensions");
    expect_config("vocabs", "  - 64\n  - 64", "  - 64\n  - 65", FY_EFORMAT, "dim-vocabs");
    expect_config("vocabs empty", "dim-vocabs:\n  - 64\n  - 64", "dim-vocabs: []", 0, "");
    expect_config("separate embeddings missing",
                  "tied-embeddings: false\ntied-embeddings-all: true",
                  "tied-embeddings: true\ntied-embeddings-all: false", FY_EFORMAT, "encoder_Wemb");
    expect_config("untied output", "tied-embeddings-all: true\n", "", FY_EUNSUPPORTED, "untied");
    expect_config("position embeddings", "train-position-embeddings: false",
                  "train-position-embeddings: true", FY_EUNSUPPORTED, "position");
    expect_config("bad bool", "layer-normalization: false", "layer-normalization: maybe",
                  FY_EFORMAT, "boolean");
    expect_config("bad number", "dim-emb: 16", "dim-emb: sixteen", FY_EFORMAT, "dim-emb");
    expect_config("bad yaml", "dim-emb: 16", "dim-emb: [16", FY_EFORMAT, "model.yml");
    expect_config("not a map", "bert-train-type-embeddings: true",
                  "- a\nbert-train-type-embeddings: true", FY_EFORMAT, "model.yml");
}

/* ------------------------------------------------------------ shortlist */

/* Writes a shortlist with explicit lists; returns its size. */
static size_t make_shortlist(const char *path, uint64_t frequent, const uint32_t *const *lists,
                             const int *lens, int V, uint8_t *buf)
{
    uint64_t total = 0;
    for (int i = 0; i < V; i++) total += (uint64_t)lens[i];
    size_t size = 48 + 8 * (size_t)(V + 1) + 4 * (size_t)total;
    memset(buf, 0, size + 8);
    uint64_t h[6] = {FY_SHORTLIST_MAGIC, 0, frequent, 3, (uint64_t)V + 1, total};
    memcpy(buf, h, 48);
    uint64_t off = 0;
    for (int i = 0; i <= V; i++) {
        put_u64(buf + 48 + 8 * (size_t)i, off);
        if (i < V && lens[i]) {
            memcpy(buf + 48 + 8 * (size_t)(V + 1) + 4 * off, lists[i], 4 * (size_t)lens[i]);
            off += (uint64_t)lens[i];
        }
    }
    uint64_t words[512];
    memcpy(words, buf + 16, size - 16);
    put_u64(buf + 8, fy_shortlist_checksum(words, (size - 16) / 8));
    write_all(path, buf, size);
    return size;
}

static int same(const int32_t *a, long n, const int32_t *b, long m)
{
    return n == m && memcmp(a, b, (size_t)n * 4) == 0;
}

static void test_shortlist_select(void)
{
    static const uint32_t l0[] = {5, 7}, l1[] = {7, 9, 20}, l3[] = {4};
    const uint32_t *lists[] = {l0, l1, NULL, l3};
    int lens[] = {2, 3, 0, 1};
    uint8_t buf[1024];
    const char *p = path_in("lex.4.s2t.bin");
    size_t size = make_shortlist(p, 3, lists, lens, 4, buf);
    fy_error err = {0};
    fy_shortlist *s = fy_shortlist_open(p, &err);
    CHECKF(s != NULL, "open: %s", err.msg);
    if (!s) return;
    CHECKF(fy_shortlist_frequent(s) == 3 && fy_shortlist_best(s) == 3 &&
               fy_shortlist_src_vocab_size(s) == 4 && fy_shortlist_max_target(s) == 21,
           "header fields");
    int32_t out[64];
    uint8_t scratch[64];
    int32_t src[] = {1, 0, 1};
    static const int32_t e1[] = {0, 1, 2, 3, 5, 7, 9, 20};
    long n = fy_shortlist_select(s, src, 3, 40, out, 64, &err);
    CHECKF(same(out, n, e1, 8), "select {1,0,1}: %ld ids", n);
    int32_t src2[] = {3};
    static const int32_t e2[] = {0, 1, 2, 3, 4, 5, 6, 7};
    n = fy_shortlist_select_ex(s, src2, 1, 40, 1, out, 64, scratch, &err);
    CHECKF(same(out, n, e2, 8), "shared select {3}: %ld ids", n);
    int32_t src3[] = {2, 2};
    static const int32_t e3[] = {0, 1, 2, 3, 4, 5, 6, 7};
    n = fy_shortlist_select_ex(s, src3, 2, 40, 0, out, 64, scratch, &err);
    CHECKF(same(out, n, e3, 8), "empty list pads from frequent: %ld", n);
    int32_t src4[] = {2, 3};
    n = fy_shortlist_select_ex(s, src4, 2, 40, 1, out, 64, scratch, &err);
    static const int32_t e4[] = {0, 1, 2, 3, 4, 5, 6, 7};
    CHECKF(same(out, n, e4, 8), "shared adds the source ids themselves: %ld", n);
    int32_t src5[] = {0, 1, 3};
    n = fy_shortlist_select(s, src5, 3, 40, out, 64, &err);
    /* {0,1,2,4,5,7,9,20} is already 8 ids: no padding. */
    static const int32_t e6[] = {0, 1, 2, 4, 5, 7, 9, 20};
    CHECKF(same(out, n, e6, 8), "exact multiple of 8 is not padded: %ld", n);
    /* Vocabulary too small to pad: the count stays unaligned, as in Marian. */
    int32_t src6[] = {3};
    n = fy_shortlist_select(s, src6, 1, 6, out, 64, &err);
    CHECKF(n == 6, "padding stops at the vocabulary end: %ld", n);
    int32_t bad_src[] = {4};
    CHECKF(fy_shortlist_select(s, bad_src, 1, 40, out, 64, &err) == FY_EINVAL,
           "source id out of range");
    int32_t neg_src[] = {-1};
    CHECKF(fy_shortlist_select(s, neg_src, 1, 40, out, 64, &err) == FY_EINVAL, "negative id");
    CHECKF(fy_shortlist_select(s, src, 3, 10, out, 64, &err) == FY_EINVAL,
           "target id beyond the vocabulary");
    CHECKF(fy_shortlist_select(s, src, 3, 40, out, 4, &err) == FY_ELIMIT, "cap too small");
    CHECKF(fy_shortlist_select(s, NULL, 0, 40, out, 64, &err) == 8, "no source: frequent+pad");
    fy_shortlist_free(s);
    (void)size;
}

/* Random shortlists against a straightforward set implementation. */
static void test_shortlist_random(void)
{
    fy_error err = {0};
    const char *p = path_in("lex.rand.s2t.bin");
    CHECKF(fy_synth_write_shortlist(p, 300, 400, 20, 10, FY_SYNTH_LEX_UNIFORM, 5, &err) == 0, "%s",
           err.msg);
    fy_shortlist *s = fy_shortlist_open(p, &err);
    CHECKF(s != NULL, "open: %s", err.msg);
    if (!s) return;
    size_t size;
    uint8_t *raw = (uint8_t *)read_file(p, &size);
    const uint64_t *off = (const uint64_t *)(raw + 48);
    const uint32_t *ids = (const uint32_t *)(raw + 48 + 8 * 301);
    uint64_t st = 99;
    int bad = 0;
    for (int trial = 0; trial < 200; trial++) {
        int32_t src[40], out[400];
        char want[400] = {0};
        int n = 1 + trial % 40, shared = trial & 1;
        for (int i = 0; i < n; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            src[i] = (int32_t)((st >> 33) % 300);
        }
        for (int i = 0; i < 20; i++) want[i] = 1;
        for (int i = 0; i < n; i++) {
            if (shared) want[src[i]] = 1;
            for (uint64_t j = off[src[i]]; j < off[src[i] + 1]; j++) want[ids[j]] = 1;
        }
        int cnt = 0;
        for (int i = 0; i < 400; i++) cnt += want[i];
        for (int i = 20; i < 400 && cnt % 8; i++)
            if (!want[i]) want[i] = 1, cnt++;
        uint8_t scratch[128];
        long got = fy_shortlist_select_ex(s, src, (size_t)n, 400, shared, out, 400, scratch, &err);
        int k = 0, ok = got == cnt;
        for (int i = 0; i < 400 && ok; i++)
            if (want[i]) ok = out[k++] == i;
        bad += !ok || got % 8 != 0;
    }
    CHECKF(bad == 0, "%d random selections differ from the set reference", bad);
    free(raw);
    fy_shortlist_free(s);
}

/* Sizes of a synthetic shortlist's ids (zipf or uniform, 2000 x 64000, 50
 * frequent + 50 listed): every list sorted, distinct, past the frequent
 * ids; the median of all its ids in *median; the union of 32 "sentences"
 * of 30 pseudo-random source ids each returned. */
static long lex_profile(fy_synth_lex dist, const char *name, int *median)
{
    fy_error err = {0};
    const char *p = path_in(name);
    *median = -1;
    CHECKF(fy_synth_write_shortlist(p, 2000, 64000, 50, 50, dist, 7, &err) == 0, "%s", err.msg);
    fy_shortlist *s = fy_shortlist_open(p, &err);
    CHECKF(s != NULL, "open %s: %s", name, err.msg);
    fy_shortlist_free(s);
    size_t size;
    uint8_t *raw = (uint8_t *)read_file(p, &size);
    if (!raw) return -1;
    const uint64_t *off = (const uint64_t *)(raw + 48);
    const uint32_t *ids = (const uint32_t *)(raw + 48 + 8 * 2001);
    static long count[64000];
    static char in_union[64000];
    memset(count, 0, sizeof count);
    memset(in_union, 0, sizeof in_union);
    int bad = 0;
    for (int src = 0; src < 2000; src++)
        for (uint64_t j = off[src]; j < off[src + 1]; j++) {
            bad += ids[j] < 50 || ids[j] >= 64000 || (j > off[src] && ids[j] <= ids[j - 1]);
            count[ids[j] < 64000 ? ids[j] : 0]++;
        }
    CHECKF(bad == 0, "%s: %d ids out of order, repeated or out of range", name, bad);
    long half = (long)off[2000] / 2, seen = 0, u = 0;
    int m = 0;
    while (m < 63999 && seen + count[m] <= half) seen += count[m++];
    *median = m;
    uint64_t st = 5;
    for (int i = 0; i < 32 * 30; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        int src = (int)((st >> 33) % 2000);
        for (uint64_t j = off[src]; j < off[src + 1] && !bad; j++) {
            u += !in_union[ids[j]];
            in_union[ids[j]] = 1;
        }
    }
    free(raw);
    return u;
}

/* zipf lists concentrate on the frequent end of the vocabulary as trained
 * lexicons do (synth.h: median ~500), so a batch's lists overlap; uniform
 * ones spread over all of it (median ~32,000) and overlap little. */
static void test_shortlist_zipf(void)
{
    int mz, mu;
    long uz = lex_profile(FY_SYNTH_LEX_ZIPF, "lex.zipf.s2t.bin", &mz);
    long uu = lex_profile(FY_SYNTH_LEX_UNIFORM, "lex.unif.s2t.bin", &mu);
    CHECKF(mz > 100 && mz < 1000, "zipf: median id %d, expected ~500", mz);
    CHECKF(mu > 28000 && mu < 36000, "uniform: median id %d, expected ~32000", mu);
    CHECKF(uz > 0 && uz * 2 < uu, "a batch's union: zipf %ld ids, uniform %ld", uz, uu);
}

static void expect_bad_shortlist(const char *what, const uint8_t *b, size_t size, int code,
                                 const char *want)
{
    const char *p = path_in("lex.bad.s2t.bin");
    write_all(p, b, size);
    fy_error err = {0};
    fy_shortlist *s = fy_shortlist_open(p, &err);
    CHECKF(!s && err.code == code, "%s: code %d, expected %d (%s)", what, err.code, code, err.msg);
    CHECKF(!want || strstr(err.msg, want), "%s: '%s' lacks '%s'", what, err.msg, want);
    CHECKF(strstr(err.msg, p) != NULL, "%s: message lacks the path", what);
    fy_shortlist_free(s);
}

static void test_shortlist_corruption(void)
{
    static const uint32_t l0[] = {5, 7}, l1[] = {7, 9, 20}, l3[] = {4};
    const uint32_t *lists[] = {l0, l1, NULL, l3};
    int lens[] = {2, 3, 0, 1};
    uint8_t good[1024], b[1024];
    size_t size = make_shortlist(path_in("lex.good.s2t.bin"), 3, lists, lens, 4, good);
    for (size_t cut = 0; cut < size; cut++) {
        memcpy(b, good, size);
        expect_bad_shortlist("truncated", b, cut, FY_EFORMAT, NULL);
    }
    memcpy(b, good, size);
    b[0] ^= 1;
    expect_bad_shortlist("magic", b, size, FY_EFORMAT, "magic");
    memcpy(b, good, size);
    b[size - 2] ^= 1;
    expect_bad_shortlist("data byte", b, size, FY_EHASH, "checksum");
    memcpy(b, good, size);
    b[8] ^= 1;
    expect_bad_shortlist("checksum field", b, size, FY_EHASH, "checksum");
    memcpy(b, good, size);
    put_u64(b + 32, 1000);
    expect_bad_shortlist("offset count", b, size, FY_EFORMAT, NULL);
    memcpy(b, good, size);
    put_u64(b + 40, 7);
    expect_bad_shortlist("total", b, size, FY_EFORMAT, "bytes");
    memcpy(b, good, size + 8);
    expect_bad_shortlist("trailing bytes", b, size + 4, FY_EFORMAT, "bytes");
    /* Decreasing offsets with a valid checksum. */
    memcpy(b, good, size);
    put_u64(b + 48 + 8, 4);
    put_u64(b + 48 + 16, 2);
    uint64_t w[256];
    memcpy(w, b + 16, size - 16);
    put_u64(b + 8, fy_shortlist_checksum(w, (size - 16) / 8));
    expect_bad_shortlist("offsets decrease", b, size, FY_EFORMAT, "offsets");
    memcpy(b, good, size);
    put_u64(b + 48 + 32, 5);
    memcpy(w, b + 16, size - 16);
    put_u64(b + 8, fy_shortlist_checksum(w, (size - 16) / 8));
    expect_bad_shortlist("last offset", b, size, FY_EFORMAT, "offsets");
}

/* ------------------------------------------------------------ discovery */

static void touch(const char *dir, const char *name)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    write_all(p, "x", 1);
}

static void expect_discover(const char *what, const char *dir, int code, const char *want)
{
    fy_model_files f;
    fy_error err = {0};
    int rc = fy_model_discover(dir, &f, &err);
    CHECKF(rc == code, "%s: code %d, expected %d (%s)", what, rc, code, err.msg);
    CHECKF(rc == 0 || (strstr(err.msg, want) && strstr(err.msg, dir)), "%s: '%s' lacks '%s'", what,
           err.msg, want);
    CHECKF(rc != 0 || strstr(f.model, want), "%s: model %s", what, rc ? "" : f.model);
    fy_model_files_free(&f);
}

static void test_discover(void)
{
    char d[400];
    snprintf(d, sizeof d, "%s/disc", tmpdir);
    expect_discover("no dir", d, FY_ENOTFOUND, "cannot open");
    mkdir(d, 0777);
    expect_discover("empty", d, FY_ENOTFOUND, "model.*.bin");
    touch(d, "model.zhen.intgemm.alphas.bin");
    expect_discover("no vocab", d, FY_ENOTFOUND, "vocab");
    touch(d, "vocab.zhen.spm");
    fy_model_files f;
    fy_error err = {0};
    CHECKF(fy_model_discover(d, &f, &err) == 0 && f.shortlist == NULL &&
               strcmp(f.src_vocab, f.trg_vocab) == 0 && strstr(f.src_vocab, "/vocab.zhen.spm"),
           "shared vocab: %s", err.msg);
    fy_model_files_free(&f);
    touch(d, "lex.50.50.zhen.s2t.bin");
    CHECKF(fy_model_discover(d, &f, &err) == 0 && f.shortlist &&
               strstr(f.shortlist, "lex.50.50.zhen.s2t.bin") && !strstr(f.model, "lex."),
           "shortlist found (and not taken for the model): %s", err.msg);
    fy_model_files_free(&f);
    touch(d, "srcvocab.zhen.spm");
    expect_discover("vocab + srcvocab", d, FY_EINVAL, "ambiguous");
    char p[600];
    snprintf(p, sizeof p, "%s/vocab.zhen.spm", d);
    unlink(p);
    expect_discover("srcvocab alone", d, FY_ENOTFOUND, "trgvocab");
    touch(d, "trgvocab.zhen.spm");
    CHECKF(fy_model_discover(d, &f, &err) == 0 && strstr(f.src_vocab, "srcvocab") &&
               strstr(f.trg_vocab, "trgvocab"),
           "separate vocabs: %s", err.msg);
    fy_model_files_free(&f);
    touch(d, "model.zhen.bin");
    expect_discover("two models", d, FY_EINVAL, "model.zhen.bin");
    fy_model_files_free(NULL);
    char *dd = fy_model_default_dir("/x/y");
    CHECKF(dd && !strcmp(dd, "/x/y"), "explicit dir");
    free(dd);
    setenv("FANYI_MODEL_DIR", "/env/dir", 1);
    dd = fy_model_default_dir(NULL);
    CHECKF(dd && !strcmp(dd, "/env/dir"), "env dir");
    free(dd);
    unsetenv("FANYI_MODEL_DIR");
    setenv("HOME", "/home/u", 1);
    dd = fy_model_default_dir(NULL);
    CHECKF(dd && !strcmp(dd, "/home/u/.local/share/fanyi/models/zh-en"), "home dir");
    free(dd);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fy_model_test.XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    /* Sizes: ../shared/data/firefox-models-2025-10-17.json (e.g. en-az 1.0,
     * de-en 2.0, en-ru 2.0, zh-Hans-en 2.0, en-zh-Hans 2.2, en-ja 2.3). */
    test_happy("tiny", 1, 0, 17141051);
    test_happy("tiny", 0, 0, 0);
    test_happy("tiny", 1, 1, 0);
    test_happy("base-memory", 1, 0, 31561787);
    test_happy("base-memory", 1, 1, 43849787);
    test_happy("base", 1, 0, 42992955);
    test_preset_shapes();
    test_int8_matches_float();
    test_determinism();
    test_corruption();
    test_config_errors();
    test_shortlist_select();
    test_shortlist_random();
    test_shortlist_zipf();
    test_shortlist_corruption();
    test_discover();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
