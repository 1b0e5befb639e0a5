/* attend_kernel.h - the attention arithmetic of fy_nn_attend, written once
 * for any vector width (internal). A file defines ATTEND_VW (4, 8 or 16
 * float lanes), ATTEND_NAME and ATTEND_EXPF_ROW (the names of its
 * fy_nn_attend and fy_expf_row), then includes this header: attend.c with 4
 * (SSE2, every CPU), attend_avx2.c with 8 (-mavx2, no FMA),
 * attend_avx512.c with 16 (-mavx512f, no FMA). Each score and
 * each output element is summed by one lane in the reference's order, and
 * every lane does the same float multiply and add (never fused), so the
 * width changes the speed, not a bit of the result. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nn/expf_impl.h"
#include "nn/ops.h"
#include "nn/vec4.h"

#define VW ATTEND_VW
typedef float vw_f __attribute__((vector_size(VW * sizeof(float))));

static inline vw_f loadw(const float *p)
{
    vw_f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void storew(float *p, vw_f v)
{
    memcpy(p, &v, sizeof v);
}

/* scores[j] = (q·k_j)·scale for nb·VW keys from kt (element c of key j at
 * kt[c·ldkt + j]): each score summed over c in order, as a plain dot
 * product would be; the lanes hold different keys, so nb independent
 * accumulators run side by side. nb is a constant where this is inlined. */
static inline __attribute__((always_inline)) void scores_block(const float *q, int dk,
                                                               const float *kt, size_t ldkt, int nb,
                                                               float scale, float *scores)
{
    vw_f acc[12] = {0};
    for (int c = 0; c < dk; c++) {
        const float *k = kt + (size_t)c * ldkt;
#pragma GCC unroll 12
        for (int b = 0; b < nb; b++) acc[b] = acc[b] + q[c] * loadw(k + VW * b);
    }
#pragma GCC unroll 12
    for (int b = 0; b < nb; b++) storew(scores + VW * b, acc[b] * scale);
}

/* The n (1..3) floats at k in the low lanes of a four, zero above. */
static inline v4f load_part4(const float *k, int n)
{
    v4f v = {k[0], 0.0f, 0.0f, 0.0f};
    if (n > 1) v[1] = k[1];
    if (n > 2) v[2] = k[2];
    return v;
}

/* The scores of the keys left past the wide blocks (fewer than 4·VW) in
 * one pass over c: nv vectors of VW keys, nq fours and, where part is 1..3,
 * that many keys in the low lanes of one more four. Each score is still
 * one lane's sum in order over c; the sums are independent, so one pass
 * waits for about one sum's chain of additions, where a pass for each
 * block would wait for as many chains as blocks (most sentences have
 * fewer than 4·VW keys: all of their keys are here). nv and nq are
 * constants where this is inlined. */
static inline __attribute__((always_inline)) void scores_tail(const float *q, int dk,
                                                              const float *kt, size_t ldkt, int nv,
                                                              int nq, int part, float scale,
                                                              float *scores)
{
    vw_f acc[3] = {0};
    v4f acc4[4] = {0};
    const int q0 = nv * VW, pj = q0 + 4 * nq;
    for (int c = 0; c < dk; c++) {
        const float *k = kt + (size_t)c * ldkt;
        const float qc = q[c];
#pragma GCC unroll 3
        for (int b = 0; b < nv; b++) acc[b] = acc[b] + qc * loadw(k + VW * b);
#pragma GCC unroll 3
        for (int b = 0; b < nq; b++) acc4[b] = acc4[b] + qc * load4(k + q0 + 4 * b);
        if (part) acc4[nq] = acc4[nq] + qc * load_part4(k + pj, part);
    }
#pragma GCC unroll 3
    for (int b = 0; b < nv; b++) storew(scores + VW * b, acc[b] * scale);
#pragma GCC unroll 3
    for (int b = 0; b < nq; b++) store4(scores + q0 + 4 * b, acc4[b] * scale);
    if (part) {
        v4f s = acc4[nq] * scale;
        for (int i = 0; i < part; i++) scores[pj + i] = s[i];
    }
}

#define SCORES_TAIL_CASE(nv, nq)                                                                   \
    case (nv)*4 + (nq):                                                                            \
        scores_tail(q, dk, kt, ldkt, nv, nq, part, scale, scores);                                 \
        break

/* scores_tail for nv vectors (0..3) and nq fours (0..3) of keys. */
static void scores_tail_any(const float *q, int dk, const float *kt, size_t ldkt, int nv, int nq,
                            int part, float scale, float *scores)
{
    switch (nv * 4 + nq) {
        SCORES_TAIL_CASE(0, 0);
        SCORES_TAIL_CASE(0, 1);
        SCORES_TAIL_CASE(0, 2);
        SCORES_TAIL_CASE(0, 3);
        SCORES_TAIL_CASE(1, 0);
        SCORES_TAIL_CASE(1, 1);
        SCORES_TAIL_CASE(1, 2);
        SCORES_TAIL_CASE(1, 3);
        SCORES_TAIL_CASE(2, 0);
        SCORES_TAIL_CASE(2, 1);
        SCORES_TAIL_CASE(2, 2);
        SCORES_TAIL_CASE(2, 3);
        SCORES_TAIL_CASE(3, 0);
        SCORES_TAIL_CASE(3, 1);
        SCORES_TAIL_CASE(3, 2);
        SCORES_TAIL_CASE(3, 3);
    }
}
#undef SCORES_TAIL_CASE

/* The score of one key in four partial sums, element c in sum c % 4, added
 * as (s0 + s1) + (s2 + s3), then the rest of the elements (dk % 4) in order:
 * the order of the reference's GEMM kernel (Eigen's gebp) for a key of the
 * last, incomplete block of four keys against a query of a complete block
 * of four queries (see fy_nn_attend). */
static float dot_split4(const float *q, int dk, const float *k, size_t ldk)
{
    float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
    int c = 0;
    for (; c + 4 <= dk; c += 4) {
        p0 = p0 + q[c] * k[(size_t)c * ldk];
        p1 = p1 + q[c + 1] * k[(size_t)(c + 1) * ldk];
        p2 = p2 + q[c + 2] * k[(size_t)(c + 2) * ldk];
        p3 = p3 + q[c + 3] * k[(size_t)(c + 3) * ldk];
    }
    float acc = (p0 + p1) + (p2 + p3);
    for (; c < dk; c++) acc = acc + q[c] * k[(size_t)c * ldk];
    return acc;
}

/* The scores of one query against tk keys. split: the query is in a
 * complete block of four queries, so the keys past the last multiple of
 * four are summed by dot_split4; every other score is summed in order. */
static void attn_scores(const float *q, int dk, const float *kt, int ldkt, int tk, float scale,
                        int split, float *scores)
{
    size_t ld = (size_t)ldkt;
    int j = 0;
    for (; j + 8 * VW <= tk; j += 8 * VW) scores_block(q, dk, kt + j, ld, 8, scale, scores + j);
    for (; j + 4 * VW <= tk; j += 4 * VW) scores_block(q, dk, kt + j, ld, 4, scale, scores + j);
    int rest = tk - j, nv = rest / VW, nq = rest % VW / 4, part = rest % 4;
    scores_tail_any(q, dk, kt + j, ld, nv, nq, split ? 0 : part, scale, scores + j);
    j += rest - part;
    if (split)
        for (int i = 0; i < part; i++) scores[j + i] = dot_split4(q, dk, kt + j + i, ld) * scale;
}

/* out[c] = sum over j in order of w[j]·v[j][c] for nb·VW columns: each
 * column's sum keeps its order; lanes and accumulators hold different
 * columns. */
static inline __attribute__((always_inline)) void mix_block(const float *w, int tk, const float *v,
                                                            size_t ldv, int nb, float *out)
{
    vw_f acc[12] = {0};
    for (int j = 0; j < tk; j++) {
        const float *vj = v + (size_t)j * ldv;
#pragma GCC unroll 12
        for (int b = 0; b < nb; b++) acc[b] = acc[b] + w[j] * loadw(vj + VW * b);
    }
#pragma GCC unroll 12
    for (int b = 0; b < nb; b++) storew(out + VW * b, acc[b]);
}

static void mix_four(const float *w, int tk, const float *v, size_t ldv, float *out)
{
    v4f acc = {0};
    for (int j = 0; j < tk; j++) acc = acc + w[j] * load4(v + (size_t)j * ldv);
    store4(out, acc);
}

#define MIX_CASE(nb)                                                                               \
    case nb:                                                                                       \
        mix_block(w, tk, v, ldv, nb, out);                                                         \
        break

/* mix_block for nb (1..11) vectors of columns in one pass: a pass per
 * vector would wait for nb chains of tk additions one after another. */
static void mix_vectors(const float *w, int tk, const float *v, size_t ldv, int nb, float *out)
{
    switch (nb) {
        MIX_CASE(1);
        MIX_CASE(2);
        MIX_CASE(3);
        MIX_CASE(4);
        MIX_CASE(5);
        MIX_CASE(6);
        MIX_CASE(7);
        MIX_CASE(8);
        MIX_CASE(9);
        MIX_CASE(10);
        MIX_CASE(11);
    }
}
#undef MIX_CASE

static void attn_mix(const float *w, int tk, const float *v, int ldv, int dk, float *out)
{
    size_t ld = (size_t)ldv;
    int c = 0;
    for (; c + 12 * VW <= dk; c += 12 * VW) mix_block(w, tk, v + c, ld, 12, out + c);
    mix_vectors(w, tk, v + c, ld, (dk - c) / VW, out + c);
    c += (dk - c) / VW * VW;
    for (; c + 4 <= dk; c += 4) mix_four(w, tk, v + c, ld, out + c);
    for (; c < dk; c++) {
        float acc = 0.0f;
        for (int j = 0; j < tk; j++) acc = acc + w[j] * v[(size_t)j * ld + c];
        out[c] = acc;
    }
}

/* fy_expf in VD = VW/2 double lanes. */
#define VD (VW / 2)
typedef double vd_f __attribute__((vector_size(VD * sizeof(double))));
typedef uint64_t vd_u __attribute__((vector_size(VD * sizeof(double))));
typedef float vh_f __attribute__((vector_size(VD * sizeof(float))));
typedef uint32_t vh_u __attribute__((vector_size(VD * sizeof(float))));

/* out[l] = fy_expf(x[l]) for the VD lanes, each lane fy_expf's main path
 * operation by operation (nn/expf_impl.h); 0, and out untouched, where a
 * lane needs another path (|x| >= 88, infinities, NaN). */
static inline int expf_lanes(vh_f x, float *out)
{
    vh_u top = ((vh_u)x >> 20) & 0x7ff;
    int special = 0;
    for (int l = 0; l < VD; l++) special |= top[l] >= EXPF_ABSTOP_SPECIAL;
    if (special) return 0;
    vd_f z = EXPF_INVLN2N * __builtin_convertvector(x, vd_f);
    vd_f kd = z + EXPF_SHIFT;
    vd_u ki = (vd_u)kd;
    kd = kd - EXPF_SHIFT;
    vd_f r = z - kd;
    vd_u t = ki << 47;
    for (int l = 0; l < VD; l++) t[l] += fy_expf_tab[ki[l] % 32];
    vd_f p = EXPF_C0 * r + EXPF_C1;
    vd_f r2 = r * r;
    vd_f y = EXPF_C2 * r + 1.0;
    y = p * r2 + y;
    y = y * (vd_f)t;
    vh_f o = __builtin_convertvector(y, vh_f);
    memcpy(out, &o, sizeof o);
    return 1;
}

/* fy_expf_row (ops.h) VD exponentials at a time: one by one, they and
 * their softmax took over a quarter of the attention's time. */
void ATTEND_EXPF_ROW(float *x, int n, float mx)
{
    int i = 0;
    for (; i + VD <= n; i += VD) {
        vh_f v;
        memcpy(&v, x + i, sizeof v);
        v = v - mx;
        if (!expf_lanes(v, x + i))
            for (int l = 0; l < VD; l++) x[i + l] = fy_expf(v[l]);
    }
    for (; i < n; i++) x[i] = fy_expf(x[i] - mx);
}

/* fy_nn_attend (attention.h) at this width. */
void ATTEND_NAME(const float *q, int tq, int ldq, const float *kt, int ldkt, const float *v,
                 int ldv, int tk, int heads, int d, float *scores, float *out, int ldo)
{
    int dk = d / heads;
    float scale = 1.0f / sqrtf((float)dk);
    int blocked = tq / 4 * 4; /* queries in complete blocks of four */
    for (int i = 0; i < tq; i++) {
        const float *qi = q + (size_t)i * ldq;
        float *oi = out + (size_t)i * ldo;
        for (int h = 0; h < heads; h++) {
            attn_scores(qi + h * dk, dk, kt + (size_t)h * dk * ldkt, ldkt, tk, scale, i < blocked,
                        scores);
            fy_softmax_with(scores, tk, ATTEND_EXPF_ROW);
            attn_mix(scores, tk, v + h * dk, ldv, dk, oi + h * dk);
        }
    }
}

#undef VD
#undef VW
