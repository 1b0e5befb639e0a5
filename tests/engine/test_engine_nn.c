/* test_engine_nn.c - the encoder, decoder and attention code against a
 * straightforward double-precision reference written here from Marian's
 * definitions, on a micro model (d 64, 8 heads, ffn 128, 2+2 layers,
 * vocab 64) written with the synthetic-model writer. Also checks that a
 * sentence's results are bit-identical alone and packed with others. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/marian.h"
#include "model/synth.h"
#include "nn/cpu.h"
#include "nn/decoder.h"
#include "nn/encoder.h"
#include "nn/ops.h"
#include "nn/par.h"
#include "../check.h"

enum { D = 64, DFFN = 128, ENC = 2, DEC = 2, HEADS = 8, V = 64, MAXT = 64 };

/* ------------------------------------------------------------------------ */
/* The reference: doubles, loops, names looked up directly                   */
/* ------------------------------------------------------------------------ */

static const fy_marian *M;

static const float *T(const char *fmt, int i, const char *suffix)
{
    char name[128];
    snprintf(name, sizeof name, fmt, i, suffix);
    const fy_tensor *t = fy_marian_find(M, name);
    if (!t) {
        printf("missing tensor %s\n", name);
        exit(1);
    }
    return t->data;
}

static const float *T0(const char *name)
{
    const fy_tensor *t = fy_marian_find(M, name);
    if (!t) {
        printf("missing tensor %s\n", name);
        exit(1);
    }
    return t->data;
}

/* y[r][j] = sum_i x[r][i] W[i][j] + b[j]  (W [k][n] row-major) */
static void ref_linear(const double *x, int rows, int k, int n, const float *w, const float *b,
                       double *y)
{
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < n; j++) {
            double s = b ? b[j] : 0.0;
            for (int i = 0; i < k; i++) s += x[r * k + i] * w[i * n + j];
            y[r * n + j] = s;
        }
}

static void ref_add_norm(double *x, const double *y, int rows, const float *g, const float *b)
{
    for (int r = 0; r < rows; r++) {
        double *v = x + r * D, mean = 0, var = 0;
        for (int i = 0; i < D; i++) v[i] += y[r * D + i];
        for (int i = 0; i < D; i++) mean += v[i];
        mean /= D;
        for (int i = 0; i < D; i++) var += (v[i] - mean) * (v[i] - mean);
        var /= D;
        for (int i = 0; i < D; i++) v[i] = (v[i] - mean) / sqrt(var + 1e-6) * g[i] + b[i];
    }
}

/* Multi-head attention of tq queries over tk keys/values (already projected). */
static void ref_attend(const double *q, int tq, const double *k, const double *v, int tk,
                       double *out)
{
    int dk = D / HEADS;
    for (int i = 0; i < tq; i++)
        for (int h = 0; h < HEADS; h++) {
            double s[MAXT], mx = -1e300, sum = 0;
            for (int j = 0; j < tk; j++) {
                s[j] = 0;
                for (int c = 0; c < dk; c++) s[j] += q[i * D + h * dk + c] * k[j * D + h * dk + c];
                s[j] /= sqrt((double)dk);
                if (s[j] > mx) mx = s[j];
            }
            for (int j = 0; j < tk; j++) sum += s[j] = exp(s[j] - mx);
            for (int c = 0; c < dk; c++) {
                double o = 0;
                for (int j = 0; j < tk; j++) o += s[j] / sum * v[j * D + h * dk + c];
                out[i * D + h * dk + c] = o;
            }
        }
}

static void ref_pos(int p, double *out)
{
    double h = D / 2, inc = log(10000.0) / (h - 1);
    for (int i = 0; i < D / 2; i++) {
        out[i] = sin(p * exp(-i * inc));
        out[D / 2 + i] = cos(p * exp(-i * inc));
    }
}

static void ref_ffn(const char *fmt, int l, double *x, int rows)
{
    static double h[MAXT * DFFN], o[MAXT * D];
    ref_linear(x, rows, D, DFFN, T(fmt, l, "W1"), T(fmt, l, "b1"), h);
    for (int i = 0; i < rows * DFFN; i++) h[i] = h[i] > 0 ? h[i] : 0;
    ref_linear(h, rows, DFFN, D, T(fmt, l, "W2"), T(fmt, l, "b2"), o);
    ref_add_norm(x, o, rows, T(fmt, l, "ffn_ln_scale"), T(fmt, l, "ffn_ln_bias"));
}

static void ref_mha(const char *fmt, int l, double *x, int tq, const double *kv, int tk)
{
    static double q[MAXT * D], k[MAXT * D], v[MAXT * D], c[MAXT * D], o[MAXT * D];
    ref_linear(x, tq, D, D, T(fmt, l, "Wq"), T(fmt, l, "bq"), q);
    ref_linear(kv, tk, D, D, T(fmt, l, "Wk"), T(fmt, l, "bk"), k);
    ref_linear(kv, tk, D, D, T(fmt, l, "Wv"), T(fmt, l, "bv"), v);
    ref_attend(q, tq, k, v, tk, c);
    ref_linear(c, tq, D, D, T(fmt, l, "Wo"), T(fmt, l, "bo"), o);
    ref_add_norm(x, o, tq, T(fmt, l, "Wo_ln_scale"), T(fmt, l, "Wo_ln_bias"));
}

static void ref_encode(const int32_t *ids, int n, double *x)
{
    const float *emb = T0("Wemb");
    for (int r = 0; r < n; r++) {
        double p[D];
        ref_pos(r, p);
        for (int i = 0; i < D; i++) x[r * D + i] = emb[ids[r] * D + i] * sqrt((double)D) + p[i];
    }
    for (int l = 1; l <= ENC; l++) {
        static double kv[MAXT * D];
        memcpy(kv, x, sizeof(double) * n * D);
        ref_mha("encoder_l%d_self_%s", l, x, n, kv, n);
        ref_ffn("encoder_l%d_ffn_%s", l, x, n);
    }
}

/* One decoder step for one sentence; cell [DEC][D] updated; logits [V]. */
static void ref_step(const double *ctx, int n, int prev, int pos, double *cell, double *logits)
{
    const float *emb = T0("Wemb");
    double x[D], p[D], xw[D], f[D], o[D];
    ref_pos(pos, p);
    for (int i = 0; i < D; i++)
        x[i] = (prev < 0 ? 0.0 : emb[prev * D + i] * sqrt((double)D)) + p[i];
    for (int l = 1; l <= DEC; l++) {
        double *c = cell + (l - 1) * D;
        ref_linear(x, 1, D, D, T("decoder_l%d_rnn_%s", l, "W"), NULL, xw);
        ref_linear(x, 1, D, D, T("decoder_l%d_rnn_%s", l, "Wf"), T("decoder_l%d_rnn_%s", l, "bf"),
                   f);
        for (int i = 0; i < D; i++) {
            double s = 1.0 / (1.0 + exp(-f[i]));
            c[i] = s * c[i] + (1 - s) * xw[i];
            o[i] = c[i] > 0 ? c[i] : 0;
        }
        ref_add_norm(x, o, 1, T("decoder_l%d_rnn_%s", l, "ffn_ln_scale"),
                     T("decoder_l%d_rnn_%s", l, "ffn_ln_bias"));
        ref_mha("decoder_l%d_context_%s", l, x, 1, ctx, n);
        ref_ffn("decoder_l%d_ffn_%s", l, x, 1);
    }
    const float *b = T0("decoder_ff_logit_out_b");
    for (int v = 0; v < V; v++) {
        double s = b[v];
        for (int i = 0; i < D; i++) s += x[i] * emb[v * D + i];
        logits[v] = s;
    }
}

/* ------------------------------------------------------------------------ */
/* Our code                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct ours {
    fy_encoder *enc;
    fy_decoder *dec;
    const float *emb;
    float pos[MAXT * D];
    float x[MAXT * D], q[MAXT * D], k[MAXT * D], v[MAXT * D], ctx[MAXT * D], kt[MAXT * D];
    float hidden[FY_NN_FFN_BLOCK * DFFN], out[FY_NN_FFN_BLOCK * D], scores[HEADS * MAXT];
    float keys[DEC * MAXT * D], values[DEC * MAXT * D];
    float state[DEC * 4 * D], dx[4 * D], xw[4 * D], f[4 * D], dq[4 * D], dctx[4 * D], o[4 * D];
    float dhidden[4 * DFFN], logits[4 * V];
    void *lin;
} ours;

/* Encodes nsent packed sentences; x receives the context. */
static void our_encode(ours *w, const int32_t *ids, const int *off, const int *len, int nsent,
                       int rows)
{
    for (int s = 0; s < nsent; s++)
        fy_nn_embed(w->x + off[s] * D, w->emb, ids + off[s], len[s], D, sqrtf((float)D), w->pos, D);
    fy_encoder_scratch s = {w->q, w->k, w->v, w->ctx, w->kt, w->hidden, w->out, w->scores, w->lin};
    fy_encoder_forward(w->enc, w->x, rows, off, len, nsent, &s);
    fy_decoder_prepare(w->dec, w->x, rows, off, len, nsent, w->keys, w->values, w->q, w->lin);
}

static void our_step(ours *w, int rows, const int *off, const int *len, int ntok,
                     const int32_t *prev, int pos)
{
    for (int r = 0; r < rows; r++)
        fy_nn_embed(w->dx + r * D, w->emb, prev[r] < 0 ? NULL : &prev[r], 1, D, sqrtf((float)D),
                    w->pos + pos * D, 0);
    fy_decoder_rows dr = {rows, off, len, w->keys, w->values, ntok, w->state, 4};
    fy_decoder_scratch s = {w->xw, w->f, w->dq, w->dctx, w->o, w->dhidden, w->scores, w->lin};
    fy_decoder_step(w->dec, w->dx, &dr, &s);
    fy_decoder_logits(w->dec, w->dx, rows, NULL, 0, w->lin, w->logits);
}

static double max_rel_err(const float *a, const double *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double e = fabs(a[i] - b[i]) / (1.0 + fabs(b[i]));
        if (!(e <= worst)) worst = e; /* NaN propagates */
    }
    return worst;
}

static void test_attend_alone(void)
{
    /* fy_nn_attend against ref_attend on random data, two query rows. */
    float q[2 * D], k[5 * D], kt[5 * D], v[5 * D], out[2 * D], sc[5];
    double dq[2 * D], dk[5 * D], dv[5 * D], dout[2 * D];
    unsigned s = 12345;
    for (int i = 0; i < 5 * D; i++) {
        s = s * 1103515245u + 12345u;
        k[i] = (float)((s >> 8) % 2001) / 500.0f - 2.0f;
        s = s * 1103515245u + 12345u;
        v[i] = (float)((s >> 8) % 2001) / 1000.0f - 1.0f;
        dk[i] = k[i];
        dv[i] = v[i];
    }
    for (int i = 0; i < 2 * D; i++) q[i] = (float)(dq[i] = k[(i * 7) % (5 * D)] * 0.5f);
    fy_transpose(k, 5, D, kt);
    fy_nn_attend(q, 2, D, kt, 5, v, D, 5, HEADS, D, sc, out, D);
    ref_attend(dq, 2, dk, dv, 5, dout);
    check(max_rel_err(out, dout, 2 * D) < 1e-5, "fy_nn_attend matches the reference");
}

/* The reference's attention of one head, in float32 and in its order:
 * Marian's bdot is one GEMM per head, which the WASM build's sgemm (onnxjs)
 * hands to Eigen 3.3's gebp kernel on 4-float packets, the keys as the lhs
 * rows and the queries as the rhs columns, C set to 0 and then C += alpha ·
 * sum. The rows up to the last multiple of 4 go through the packet
 * kernels, each lane summing in order over k; the rows left over go, for
 * each complete panel of nr = 4 columns, through the "swapped" kernel: four
 * partial sums over k (k % 4), combined as (C0 + C1) + (C2 + C3), the rest
 * of k added in order; for the columns left over, through a scalar loop in
 * order. Then Marian's softmax (fy_softmax, tested on its own in
 * test_nn_ops) and the second bdot, weights·values, whose lhs rows are the
 * dk dimensions (a multiple of 4 here: all packet kernels, in order). */
static void eigen_attend_head(const float *q, int tq, const float *k, const float *v, int tk,
                              int ld, int dk, float *out)
{
    float scale = 1.0f / sqrtf((float)dk), s[128];
    int peeled_rows = tk / 4 * 4, panel_cols = tq / 4 * 4;
    for (int i = 0; i < tq; i++) {
        for (int j = 0; j < tk; j++) {
            const float *qi = q + (size_t)i * ld, *kj = k + (size_t)j * ld;
            float acc = 0.0f;
            int c = 0;
            if (j >= peeled_rows && i < panel_cols) {
                float c4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (; c + 4 <= dk; c += 4)
                    for (int p = 0; p < 4; p++) c4[p] = c4[p] + qi[c + p] * kj[c + p];
                acc = (c4[0] + c4[1]) + (c4[2] + c4[3]);
            }
            for (; c < dk; c++) acc = acc + qi[c] * kj[c];
            s[j] = 0.0f + scale * acc;
        }
        fy_softmax(s, tk);
        for (int c = 0; c < dk; c++) {
            float o = 0.0f;
            for (int j = 0; j < tk; j++) o = o + s[j] * v[(size_t)j * ld + c];
            out[(size_t)i * ld + c] = o;
        }
    }
}

/* fy_nn_attend bit for bit against eigen_attend_head: self-attention of
 * 1..72 tokens (tk % 4 != 0 is where the kernel's order is not the plain
 * one: 27 tokens of a firefox-zh-en sentence decided its translation) and
 * one query over 1..72 keys (the decoder), for head widths 64, 48 and 8,
 * on every vector width this CPU runs (4 lanes, AVX2's 8 and AVX-512's 16:
 * blocks of 8, 4 and 1 vectors and of 4 keys or columns, and what is left
 * past them). */
static void test_attend_order(void)
{
    enum { MAXN = 72, WIDE = 512 };
    static float q[MAXN * WIDE], k[MAXN * WIDE], kt[MAXN * WIDE], v[MAXN * WIDE];
    static float got[MAXN * WIDE], want[MAXN * WIDE], sc[MAXN];
    unsigned x = 987654321u;
    for (int i = 0; i < MAXN * WIDE; i++) {
        x = x * 1103515245u + 12345u;
        q[i] = (float)((x >> 8) % 20001) / 5000.0f - 2.0f;
        x = x * 1103515245u + 12345u;
        k[i] = (float)((x >> 8) % 20001) / 5000.0f - 2.0f;
        x = x * 1103515245u + 12345u;
        v[i] = (float)((x >> 8) % 20001) / 10000.0f - 1.0f;
    }
    const int widths[3] = {WIDE, 384, D};
    const fy_isa paths[3] = {FY_ISA_REF, FY_ISA_AVX2, FY_ISA_AVX512VNNI};
    fy_isa was = fy_cpu_isa();
    int self_bad = 0, one_bad = 0, ran = 0;
    for (int p = 0; p < 3; p++) {
        if (fy_cpu_force_isa(paths[p]) != 0) continue;
        ran++;
        for (int w = 0; w < 3; w++) {
            int d = widths[w], dk = d / HEADS;
            for (int n = 1; n <= MAXN; n++) {
                fy_transpose(k, n, d, kt);
                for (int one = 0; one < 2; one++) {
                    int tq = one ? 1 : n;
                    fy_nn_attend(q, tq, d, kt, n, v, d, n, HEADS, d, sc, got, d);
                    for (int h = 0; h < HEADS; h++)
                        eigen_attend_head(q + h * dk, tq, k + h * dk, v + h * dk, n, d, dk,
                                          want + h * dk);
                    if (memcmp(got, want, sizeof(float) * (size_t)tq * d) != 0) {
                        if (one)
                            one_bad++;
                        else
                            self_bad++;
                        printf("  differs (%s): width %d, %d queries over %d keys\n",
                               fy_isa_name(paths[p]), d, tq, n);
                    }
                }
            }
        }
    }
    fy_cpu_force_isa(was);
    check(self_bad == 0,
          "self-attention == the reference's GEMM order, bit for bit (1..72 tokens)");
    check(one_bad == 0, "one query == the reference's GEMM order, bit for bit (1..72 keys)");
    printf("  (attention checked on %d vector width%s)\n", ran, ran == 1 ? "" : "s");
}

/* The output layer's int8 weights made from int8 embeddings equal the
 * float path's (dequantise, fy_i8_weight_mult, fy_i8_quantize), for
 * maxima that make the table the identity and ones that do not. */
static void test_requantize(void)
{
    enum { N = 4099 };
    static int8_t in[N], got[N], want[N];
    static float f[N];
    const int maxima[] = {127, 128, 100, 3, 0};
    const float invs[] = {1.0f / 127.0f, 0.0123f, 1.0f / 3.3f};
    uint32_t x = 12345;
    int ok = 1, sound = 1, viewed = 0;
    for (size_t a = 0; a < sizeof maxima / sizeof *maxima; a++) {
        for (size_t b = 0; b < sizeof invs / sizeof *invs; b++) {
            int mx = maxima[a];
            for (int i = 0; i < N; i++) {
                x = x * 1103515245u + 12345u;
                int v = mx ? (int)((x >> 8) % (uint32_t)(2 * mx + 1)) - mx : 0;
                in[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
            }
            fy_nn_embedding e = {.i8 = in, .inv = invs[b]};
            float mg, mw;
            int same = fy_decoder_requantize_i8(&e, N, got, &mg);
            for (int i = 0; i < N; i++) f[i] = (float)in[i] * invs[b];
            mw = fy_i8_weight_mult(f, N);
            fy_i8_quantize(f, N, mw, want);
            ok &= memcmp(&mg, &mw, sizeof mg) == 0 && memcmp(got, want, N) == 0;
            sound &= !same || memcmp(in, want, N) == 0;
            viewed += same && mx == 127;
            float m0;
            ok &= fy_decoder_requantize_i8(&e, N, NULL, &m0) == same && m0 == mg;
        }
    }
    check(ok, "int8 embeddings requantised exactly as their floats would be");
    check(sound, "requantisation says the bytes are unchanged only when they are");
    check(viewed == (int)(sizeof invs / sizeof *invs), "max|q| = 127 (intgemm's) keeps every byte");
}

/* The encoder with a helper thread, which takes heads of its attention and
 * blocks of its layer norms' rows: the same bits as on one thread, run
 * after run until a helper took part in 50 jobs (bounded: 200 runs; a
 * loaded machine may leave the helper fewer, never none). Two sentences,
 * one long enough to share (len²·d over 64K). */
static void test_encoder_helpers(ours *w)
{
    enum { LA = 40, LB = 21 };
    int32_t ids[LA + LB];
    for (int i = 0; i < LA + LB; i++) ids[i] = (i * 37 + 11) % (V - 1) + 1;
    ids[LA - 1] = ids[LA + LB - 1] = 0;
    int off[2] = {0, LA}, len[2] = {LA, LB};
    static float want[(LA + LB) * D];
    our_encode(w, ids, off, len, 2, LA + LB);
    memcpy(want, w->x, sizeof want);
    fy_error err = {0};
    fy_par *p = fy_par_open(1, 2, &err);
    check(p != NULL, "a team of one helper (%s)", err.msg);
    if (!p) return;
    fy_par_watch(p, 0);
    fy_par_busy(p, +1);
    int same = 1, runs = 0;
    for (; runs < 200 && same && fy_par_shared(p) < 50; runs++) {
        fy_par_busy(p, -1); /* wakes the helper if it slept */
        fy_par_busy(p, +1);
        fy_par_attach(p);
        our_encode(w, ids, off, len, 2, LA + LB);
        fy_par_attach(NULL);
        same = !memcmp(want, w->x, sizeof want);
    }
    check(same, "encoder: the same bits with a helper as alone");
    printf("  (a helper took part in %ld jobs of %d runs)\n", fy_par_shared(p), runs);
    check(fy_par_shared(p) > 0, "encoder: a helper took part");
    fy_par_busy(p, -1);
    fy_par_free(p);
}

int main(void)
{
    test_requantize();
    char path[] = "/tmp/fy-test-engine-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    fy_error err = {0};
    fy_synth_options so = {.dim_emb = D,
                           .dim_ffn = DFFN,
                           .enc_depth = ENC,
                           .dec_depth = DEC,
                           .heads = HEADS,
                           .src_vocab_size = V,
                           .trg_vocab_size = V,
                           .seed = 7,
                           .emb_scale = 1.0f};
    if (fy_synth_write_model(path, &so, &err) < 0) {
        printf("synth: %s\n", err.msg);
        return 1;
    }
    fy_marian *m = fy_marian_open(path, &err);
    if (!m) {
        printf("open: %s\n", err.msg);
        return 1;
    }
    M = m;
    test_attend_alone();
    test_attend_order();

    ours *w = calloc(1, sizeof *w);
    w->emb = fy_marian_find(m, "Wemb")->data;
    fy_positional_fill(w->pos, MAXT, D, 0);
    w->enc = fy_encoder_bind(m, D, DFFN, ENC, HEADS, &err);
    fy_nn_embedding emb = {.f32 = w->emb};
    w->dec = w->enc ? fy_decoder_bind(m, D, DFFN, DEC, HEADS, 0, &emb, V, &err) : NULL;
    check(w->dec != NULL, "encoder and decoder bind");
    if (!w->dec) {
        printf("bind: %s\n", err.msg);
        return 1;
    }
    size_t lin = fy_encoder_linear_scratch(w->enc, MAXT);
    if (fy_decoder_linear_scratch(w->dec, MAXT) > lin)
        lin = fy_decoder_linear_scratch(w->dec, MAXT);
    w->lin = aligned_alloc(64, (lin + 63) / 64 * 64);

    /* Sentence A alone. */
    int32_t a[] = {5, 17, 33, 2, 60, 0}; /* 0 = </s> */
    int na = 6, off1[1] = {0}, len1[1] = {na};
    our_encode(w, a, off1, len1, 1, na);
    static double rx[MAXT * D];
    ref_encode(a, na, rx);
    check(max_rel_err(w->x, rx, na * D) < 1e-4, "encoder matches the reference");
    float ctx_alone[6 * D];
    memcpy(ctx_alone, w->x, sizeof ctx_alone);

    /* Three decoder steps fed 9, 40, 3; compare logits each step. */
    double cell[DEC * D] = {0}, rl[V];
    int32_t prev[1] = {-1}, feed[] = {9, 40, 3};
    float logits_alone[3][V];
    memset(w->state, 0, sizeof w->state);
    for (int t = 0; t < 3; t++) {
        our_step(w, 1, off1, len1, na, prev, t);
        ref_step(rx, na, prev[0], t, cell, rl);
        char what[64];
        snprintf(what, sizeof what, "decoder step %d logits match the reference", t);
        check(max_rel_err(w->logits, rl, V) < 1e-4, "%s", what);
        memcpy(logits_alone[t], w->logits, sizeof logits_alone[t]);
        prev[0] = feed[t];
    }

    /* A packed after another sentence B: bit-identical context and logits. */
    int32_t ab[] = {7, 8, 9, 10, 11, 12, 13, 0, 5, 17, 33, 2, 60, 0};
    int off2[2] = {0, 8}, len2[2] = {8, na};
    our_encode(w, ab, off2, len2, 2, 14);
    check(memcmp(w->x + 8 * D, ctx_alone, sizeof ctx_alone) == 0,
          "encoder context of a sentence is the same alone and packed");
    int32_t prev2[2] = {-1, -1}, feedb[] = {21, 22, 23};
    int same = 1;
    memset(w->state, 0, sizeof w->state);
    for (int t = 0; t < 3; t++) {
        our_step(w, 2, off2, len2, 14, prev2, t);
        same &= memcmp(w->logits + V, logits_alone[t], sizeof logits_alone[t]) == 0;
        prev2[0] = feedb[t];
        prev2[1] = feed[t];
    }
    check(same, "decoder logits of a sentence are the same alone and in a batch");
    test_encoder_helpers(w);

    fy_encoder_free(w->enc);
    fy_decoder_free(w->dec);
    fy_encoder_free(NULL);
    fy_decoder_free(NULL);
    free(w->lin);
    free(w);
    fy_marian_free(m);
    unlink(path);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
