/* test_vk_ops.c - every Vulkan op against the CPU function it mirrors, bit
 * for bit, on random inputs with the hard cases (ties, saturation, lengths
 * % 4, denormals, NaN and infinities). This file: main (device setup, the
 * skip) and the float ops; test_vk_gemm.c and test_vk_select.c the rest.
 *
 * Usage: test_vk_ops [--skew]. --skew opens the device with div_rn and
 * sqrt_rn starting one ulp off, so their exact fix-up runs on every call.
 * Exit 77 (CTest's skip) when there is no usable Vulkan device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/encoder.h"
#include "nn/gemm_impl.h"
#include "nn/ops.h"
#include "vk_test.h"

extern int vt_passed, vt_failed;

static void same(const char *what, const void *got, const void *want, size_t words)
{
    long i = vt_diff(got, want, words);
    vt_check(i < 0, "%s: word %ld of %zu: got 0x%08x want 0x%08x", what, i, words,
             i < 0 ? 0 : ((const uint32_t *)got)[i], i < 0 ? 0 : ((const uint32_t *)want)[i]);
}

/* ---- quantize --------------------------------------------------------------- */

static void test_quantize(void)
{
    enum { ROWS = 5, K = 192, LDX = 200 };
    static float x[ROWS * LDX];
    static uint8_t got[ROWS * K], want[ROWS * K];
    const float special[] = {
        NAN,  INFINITY, -INFINITY, 3e9f,   -3e9f,  2147483648.0f, -2147483648.0f, 0.5f,   1.5f,
        2.5f, -0.5f,    -2.5f,     126.5f, 127.5f, -127.5f,       -128.5f,        1e-40f, -0.0f};
    const float mults[] = {1.0f, 42.3307f, 0.37f};
    const fy_gemm_kernels *ref = fy_gemm_kernels_for(FY_ISA_REF);
    for (size_t m = 0; m < sizeof mults / sizeof *mults; m++) {
        for (int i = 0; i < ROWS * LDX; i++) x[i] = vt_frand(-4.0f, 4.0f);
        for (size_t i = 0; i < sizeof special / sizeof *special; i++)
            x[7 * i + 3] = m == 0 ? special[i] : special[i] / mults[m];
        for (int r = 0; r < ROWS; r++) ref->quantize_u8(x + r * LDX, K, mults[m], want + r * K);
        fy_vk_buf *bx = vt_buf(x, sizeof x), *ba = vt_buf(NULL, sizeof got);
        if (vt_begin()) return;
        fy_vk_op_quantize(vt_cmd, fy_vk_at(bx, 0), LDX, ROWS, K, mults[m], fy_vk_at(ba, 0));
        if (vt_run()) return;
        vt_get(ba, got, sizeof got);
        char what[64];
        snprintf(what, sizeof what, "quantize (mult %g)", (double)mults[m]);
        same(what, got, want, sizeof got / 4);
        vt_free_all();
    }
}

/* ---- add + layer norm ------------------------------------------------------------ */

static void test_add_norm(void)
{
    const int dims[] = {256, 387, 512};
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++) {
        int d = dims[t], rows = 7, ldx = d + 3, ldy = d + 5;
        float *x = malloc(sizeof(float) * rows * ldx), *y = malloc(sizeof(float) * rows * ldy);
        float *want = malloc(sizeof(float) * rows * ldx), *got = malloc(sizeof(float) * rows * ldx);
        float *g = malloc(sizeof(float) * d), *b = malloc(sizeof(float) * d);
        for (int i = 0; i < rows * ldx; i++) x[i] = vt_frand(-3.0f, 5.0f);
        for (int i = 0; i < rows * ldy; i++) y[i] = vt_frand(-1.0f, 1.0f);
        for (int i = 0; i < d; i++) g[i] = vt_frand(0.5f, 1.5f), b[i] = vt_frand(-0.5f, 0.5f);
        for (int i = 0; i < d; i++) {
            x[2 * ldx + i] = 2.0f, y[2 * ldy + i] = 0.0f;                   /* variance 0 */
            x[3 * ldx + i] = vt_frand(-1e-38f, 1e-38f), y[3 * ldy + i] = 0; /* denormal sums */
            x[4 * ldx + i] *= 3e4f;                                         /* large */
        }
        memcpy(want, x, sizeof(float) * rows * ldx);
        for (int r = 0; r < rows; r++) fy_add_layer_norm(want + r * ldx, y + r * ldy, 1, d, g, b);
        fy_vk_buf *bx = vt_buf(x, sizeof(float) * rows * ldx);
        fy_vk_buf *by = vt_buf(y, sizeof(float) * rows * ldy);
        fy_vk_buf *bg = vt_buf(g, sizeof(float) * d), *bb = vt_buf(b, sizeof(float) * d);
        if (vt_begin()) return;
        fy_vk_op_add_norm(vt_cmd, fy_vk_at(bx, 0), ldx, fy_vk_at(by, 0), ldy, rows, d,
                          fy_vk_at(bg, 0), fy_vk_at(bb, 0));
        if (vt_run()) return;
        vt_get(bx, got, sizeof(float) * rows * ldx);
        char what[64];
        snprintf(what, sizeof what, "add_norm (d %d)", d);
        same(what, got, want, (size_t)rows * ldx);
        vt_free_all();
        free(x), free(y), free(want), free(got), free(g), free(b);
    }
}

/* ---- relu, ssru ---------------------------------------------------------------------- */

static void test_relu(void)
{
    enum { N = 1000 };
    static float x[N], want[N], got[N];
    for (int i = 0; i < N; i++) x[i] = vt_frand(-2.0f, 2.0f);
    x[0] = -0.0f, x[1] = NAN, x[2] = 1e-40f, x[3] = -1e-40f, x[4] = INFINITY, x[5] = -INFINITY;
    memcpy(want, x, sizeof x);
    fy_relu(want, N);
    fy_vk_buf *bx = vt_buf(x, sizeof x);
    if (vt_begin()) return;
    fy_vk_op_relu(vt_cmd, fy_vk_at(bx, 0), N);
    if (vt_run()) return;
    vt_get(bx, got, sizeof got);
    same("relu", got, want, N);
    vt_free_all();
}

static void test_ssru(void)
{
    enum { ROWS = 3, D = 300, LDC = 310, LDF = 600, LDX = 600, LDO = 301 };
    static float cell[ROWS * LDC], f[ROWS * LDF], xw[ROWS * LDX];
    static float want_c[ROWS * LDC], want_o[ROWS * LDO], got_c[ROWS * LDC], got_o[ROWS * LDO];
    for (int i = 0; i < ROWS * LDC; i++) cell[i] = vt_frand(-5.0f, 5.0f);
    for (int i = 0; i < ROWS * LDF; i++) f[i] = vt_frand(-30.0f, 30.0f);
    for (int i = 0; i < ROWS * LDX; i++) xw[i] = vt_frand(-5.0f, 5.0f);
    const float special[] = {
        0.0f,    -100.0f, 100.0f, 88.3762626647949f, -88.3762626647949f, -87.5f,
        -87.65f, -87.4f,  NAN,    INFINITY,          -INFINITY,          1e-40f,
        -0.0f};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) f[LDF + 5 * i] = special[i];
    for (int i = 0; i < D; i++) cell[2 * LDC + i] = vt_frand(-1e-38f, 1e-38f);
    memcpy(want_c, cell, sizeof cell);
    memset(want_o, 0, sizeof want_o);
    for (int r = 0; r < ROWS; r++)
        fy_ssru_cell(want_c + r * LDC, f + r * LDF, xw + r * LDX, want_o + r * LDO, D);
    fy_vk_buf *bc = vt_buf(cell, sizeof cell), *bf = vt_buf(f, sizeof f);
    fy_vk_buf *bx = vt_buf(xw, sizeof xw), *bo = vt_buf(NULL, sizeof got_o);
    if (vt_begin()) return;
    fy_vk_op_ssru(vt_cmd, ROWS, D, fy_vk_at(bc, 0), LDC, fy_vk_at(bf, 0), LDF, fy_vk_at(bx, 0), LDX,
                  fy_vk_at(bo, 0), LDO);
    if (vt_run()) return;
    vt_get(bc, got_c, sizeof got_c);
    vt_get(bo, got_o, sizeof got_o);
    same("ssru cell", got_c, want_c, ROWS * LDC);
    same("ssru out", got_o, want_o, ROWS * LDO);
    vt_free_all();
}

/* ---- softmax ------------------------------------------------------------------------ */

static void test_softmax(void)
{
    long denormals = 0;
    const int lens[] = {1, 2, 3, 4, 5, 7, 8, 12, 13, 31, 32, 33, 64, 100, 127, 128, 1000, 1024};
    for (size_t t = 0; t < sizeof lens / sizeof *lens; t++) {
        int n = lens[t], rows = 4, ld = n + 1;
        float *x = malloc(sizeof(float) * rows * ld), *want = malloc(sizeof(float) * rows * ld);
        float *got = malloc(sizeof(float) * rows * ld);
        for (int i = 0; i < rows * ld; i++) x[i] = vt_frand(-20.0f, 20.0f);
        for (int i = 0; i < n; i++) {
            x[ld + i] = vt_frand(-110.0f, 0.0f);    /* exp tails: denormals and zeros */
            x[2 * ld + i] = (float)vt_irand(-3, 3); /* ties */
        }
        if (n > 5) x[3 * ld + 5] = -99999999.0f; /* Marian's mask */
        memcpy(want, x, sizeof(float) * rows * ld);
        for (int r = 0; r < rows; r++) fy_softmax(want + r * ld, n);
        for (int i = 0; i < rows * ld; i++)
            denormals += want[i] != 0.0f && fabsf(want[i]) < 0x1p-126f;
        fy_vk_buf *bx = vt_buf(x, sizeof(float) * rows * ld);
        if (vt_begin()) return;
        fy_vk_op_softmax(vt_cmd, fy_vk_at(bx, 0), ld, rows, n);
        if (vt_run()) return;
        vt_get(bx, got, sizeof(float) * rows * ld);
        char what[64];
        snprintf(what, sizeof what, "softmax (n %d)", n);
        same(what, got, want, (size_t)rows * ld);
        vt_free_all();
        free(x), free(want), free(got);
    }
    vt_check(denormals > 0, "softmax: the rows have denormal results");
}

/* ---- embed ------------------------------------------------------------------------- */

/* translator.c's int8 embed, one row. */
static void embed_i8_row(float *x, const int8_t *table, float inv, int id, int d, float scale,
                         const float *pos)
{
    for (int i = 0; i < d; i++) {
        if (id < 0) {
            x[i] = 0.0f * scale + pos[i];
            continue;
        }
        float e = (float)table[(size_t)id * d + i] * inv;
        x[i] = e * scale + pos[i];
    }
}

static void test_embed(void)
{
    enum { V = 50, D = 64, ROWS = 9, NPOS = 20, LDX = 70 };
    static float table[V * D], pos[NPOS * D], want[ROWS * LDX], got[ROWS * LDX];
    static int8_t table8[V * D];
    int32_t ids[ROWS], posi[ROWS];
    float scale = sqrtf((float)D), inv = 1.0f / 37.5f;
    for (int i = 0; i < V * D; i++)
        table[i] = vt_frand(-1.0f, 1.0f), table8[i] = (int8_t)vt_irand(-127, 127);
    fy_positional_fill(pos, NPOS, D, 0);
    for (int r = 0; r < ROWS; r++)
        ids[r] = r == 2 ? -1 : vt_irand(0, V - 1), posi[r] = vt_irand(0, NPOS - 1);
    for (int mode = 0; mode < 4; mode++) { /* bit 0: int8 table; bit 1: positions per row */
        int int8 = mode & 1, per_row = mode & 2, step = 7;
        memset(want, 0, sizeof want);
        for (int r = 0; r < ROWS; r++) {
            const float *p = pos + (size_t)(per_row ? posi[r] : step) * D;
            if (int8)
                embed_i8_row(want + r * LDX, table8, inv, ids[r], D, scale, p);
            else
                fy_nn_embed(want + r * LDX, table, ids[r] < 0 ? NULL : &ids[r], 1, D, scale, p, 0);
        }
        fy_vk_buf *bt = int8 ? vt_buf(table8, sizeof table8) : vt_buf(table, sizeof table);
        fy_vk_buf *bp = vt_buf(pos, sizeof pos), *bi = vt_buf(ids, sizeof ids);
        fy_vk_buf *bq = vt_buf(posi, sizeof posi), *bx = vt_buf(NULL, sizeof got);
        if (vt_begin()) return;
        fy_vk_op_embed(vt_cmd, fy_vk_at(bx, 0), LDX, ROWS, D, fy_vk_at(bt, 0), int8, inv, scale,
                       fy_vk_at(bi, 0), fy_vk_at(bp, 0), per_row ? -1 : step, fy_vk_at(bq, 0));
        if (vt_run()) return;
        vt_get(bx, got, sizeof got);
        char what[64];
        snprintf(what, sizeof what, "embed (%s table, %s positions)", int8 ? "int8" : "float",
                 per_row ? "per-row" : "step");
        same(what, got, want, ROWS * LDX);
        vt_free_all();
    }
    int off[] = {0, 3, 4}, len[] = {3, 1, 5};
    int32_t p[9];
    fy_vk_embed_positions(off, len, 3, p);
    vt_check(p[0] == 0 && p[2] == 2 && p[3] == 0 && p[4] == 0 && p[8] == 4, "embed positions");
}

/* ---- attention ------------------------------------------------------------------- */

/* The encoder's self-attention over packed sentences and the decoder's
 * cross-attention of single queries, against fy_nn_attend with the keys
 * transposed as the CPU engine keeps them. */
static void test_attend_shape(int d, int heads)
{
    const int lens[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 16, 17};
    enum { NS = sizeof lens / sizeof *lens };
    int off[NS], ntok = 0, dk = d / heads, ldq = d + 4;
    for (int s = 0; s < NS; s++) off[s] = ntok, ntok += lens[s];
    float *q = malloc(sizeof(float) * ntok * ldq), *k = malloc(sizeof(float) * ntok * d);
    float *v = malloc(sizeof(float) * ntok * d), *kt = malloc(sizeof(float) * ntok * d);
    float *want = calloc((size_t)ntok * d, sizeof(float)), *got = malloc(sizeof(float) * ntok * d);
    float scores[64];
    int32_t *info = malloc(sizeof(int32_t) * 4 * ntok);
    for (int i = 0; i < ntok * ldq; i++) q[i] = vt_frand(-1.0f, 1.0f);
    for (int i = 0; i < ntok * d; i++) k[i] = vt_frand(-1.0f, 1.0f), v[i] = vt_frand(-1.0f, 1.0f);
    for (int i = 0; i < lens[NS - 1] * ldq; i++)
        q[off[NS - 1] * ldq + i] *= 40.0f; /* peaky: tails */
    for (int s = 0; s < NS; s++) {
        size_t o = (size_t)off[s] * d;
        fy_transpose(k + o, lens[s], d, kt + o);
        fy_nn_attend(q + (size_t)off[s] * ldq, lens[s], ldq, kt + o, lens[s], v + o, d, lens[s],
                     heads, d, scores, want + o, d);
    }
    fy_vk_attend_info_encoder(off, lens, NS, info);
    fy_vk_buf *bq = vt_buf(q, sizeof(float) * ntok * ldq),
              *bk = vt_buf(k, sizeof(float) * ntok * d);
    fy_vk_buf *bv = vt_buf(v, sizeof(float) * ntok * d),
              *bo = vt_buf(NULL, sizeof(float) * ntok * d);
    fy_vk_buf *bi = vt_buf(info, sizeof(int32_t) * 4 * ntok);
    if (vt_begin()) return;
    fy_vk_op_attend(vt_cmd, ntok, heads, dk, fy_vk_at(bq, 0), ldq, fy_vk_at(bk, 0), d,
                    fy_vk_at(bv, 0), d, fy_vk_at(bo, 0), d, fy_vk_at(bi, 0),
                    fy_vk_attend_scale(dk));
    if (vt_run()) return;
    vt_get(bo, got, sizeof(float) * ntok * d);
    char what[80];
    snprintf(what, sizeof what, "attend encoder (d %d, %d heads, tq = tk = 1..17)", d, heads);
    same(what, got, want, (size_t)ntok * d);

    /* decoder: row r queries sentence src[r] */
    enum { ROWS = 9 };
    int src_off[ROWS], src_len[ROWS];
    for (int r = 0; r < ROWS; r++) {
        int s = (r * 5) % NS;
        src_off[r] = off[s], src_len[r] = lens[s];
        fy_nn_attend(q + (size_t)r * ldq, 1, ldq, kt + (size_t)off[s] * d, lens[s],
                     v + (size_t)off[s] * d, d, lens[s], heads, d, scores, want + (size_t)r * d, d);
    }
    fy_vk_attend_info_decoder(src_off, src_len, ROWS, info);
    fy_vk_buf *bi2 = vt_buf(info, sizeof(int32_t) * 4 * ROWS);
    if (vt_begin()) return;
    fy_vk_op_attend(vt_cmd, ROWS, heads, dk, fy_vk_at(bq, 0), ldq, fy_vk_at(bk, 0), d,
                    fy_vk_at(bv, 0), d, fy_vk_at(bo, 0), d, fy_vk_at(bi2, 0),
                    fy_vk_attend_scale(dk));
    if (vt_run()) return;
    vt_get(bo, got, sizeof(float) * ROWS * d);
    snprintf(what, sizeof what, "attend decoder (d %d, %d heads)", d, heads);
    same(what, got, want, (size_t)ROWS * d);
    vt_free_all();
    free(q), free(k), free(v), free(kt), free(want), free(got), free(info);
}

static void test_attend(void)
{
    test_attend_shape(256, 8); /* dk 32 */
    test_attend_shape(512, 8); /* dk 64 */
}

/* ---- recorder errors ---------------------------------------------------------------- */

static void test_errors(void)
{
    fy_error err = {0};
    fy_vk_buf *b = vt_buf(NULL, 64);
    if (vt_begin()) return;
    int rc = fy_vk_op_relu(vt_cmd, fy_vk_at(b, 2), 4); /* not a word offset */
    fy_vk_op_relu(vt_cmd, fy_vk_at(b, 0), 4);          /* recorded after the error: not run */
    int sub = fy_vk_cmd_run(vt_cmd, FY_VK_TIMEOUT_NS, &err);
    vt_check(rc == FY_EINVAL && sub == FY_EINVAL && strstr(err.msg, "relu"),
             "a bad argument is reported at submit: %d %d '%s'", rc, sub, err.msg);
    float x[4];
    if (vt_begin()) return;
    rc = fy_vk_cmd_read(vt_cmd, fy_vk_at(b, 60), x, sizeof x); /* past the end */
    sub = fy_vk_cmd_run(vt_cmd, FY_VK_TIMEOUT_NS, &err);
    vt_check(rc == FY_EINVAL && sub == FY_EINVAL, "a read past the buffer: %d %d", rc, sub);
    if (vt_begin()) return; /* the recorder works again */
    const float in[4] = {1.0f, -2.0f, 3.0f, -0.0f};
    fy_vk_cmd_write(vt_cmd, fy_vk_at(b, 16), in, sizeof in);
    fy_vk_op_relu(vt_cmd, fy_vk_at(b, 16), 4);
    fy_vk_cmd_read(vt_cmd, fy_vk_at(b, 16), x, sizeof x);
    if (vt_run()) return;
    vt_check(x[0] == 1.0f && x[1] == 0.0f && x[2] == 3.0f && x[3] == 0.0f,
             "write, relu, read in one recording");
    vt_free_all();
}

int main(int argc, char **argv)
{
    int skew = argc > 1 && !strcmp(argv[1], "--skew");
    fy_error err = {0};
    fy_vk *vk = NULL;
    if (fy_vk_open(&vk, &err)) {
        printf("SKIP: %s\n", err.msg);
        return 77;
    }
    int idx = fy_vk_pick_device(vk, NULL);
    if (idx < 0) {
        printf("SKIP: no usable Vulkan device (%d found)\n", fy_vk_device_count(vk));
        fy_vk_close(vk);
        return 77;
    }
    vt_dev = fy_vk_dev_new(vk, idx, skew, &err);
    if (!vt_dev || !(vt_cmd = fy_vk_cmd_new(vt_dev, 1 << 16, &err))) {
        printf("FAIL: %s\n", err.msg);
        return 1;
    }
    const fy_vk_info *in = fy_vk_dev_info(vt_dev);
    printf("device vulkan:%d %s (%s), SPIR-V variant %d%s\n", idx, in->name, in->driver,
           fy_vk_dev_variant(vt_dev), skew ? ", div_rn/sqrt_rn skewed" : "");
    vt_check(fy_vk_dev_prepare(vt_dev, &err) == 0, "every pipeline builds: %s", err.msg);
    const char *staging = getenv("FANYI_VK_STAGING");
    int mapped = fy_vk_buf_map(vt_buf(NULL, 64)) != NULL;
    printf("device memory %s\n", mapped ? "mapped" : "through staging buffers");
    vt_check(!(staging && !strcmp(staging, "1") && mapped), "FANYI_VK_STAGING=1 unmaps");
    vt_free_all();
    test_quantize();
    test_add_norm();
    test_relu();
    test_ssru();
    test_softmax();
    test_embed();
    test_attend();
    test_vk_gemm();
    test_vk_select();
    test_errors();
    test_vk_runtime(vk, idx);
    fy_vk_cmd_free(vt_cmd);
    fy_vk_dev_free(vt_dev);
    fy_vk_close(vk);
    printf("%d passed, %d failed\n", vt_passed, vt_failed);
    return vt_failed != 0;
}
