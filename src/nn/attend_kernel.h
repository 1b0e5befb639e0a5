/* attend_kernel.h - the attention arithmetic of fy_nn_attend, written once
 * for any vector width (internal). A file defines ATTEND_VW (4, 8 or 16
 * float lanes) and ATTEND_NAME, then includes this header: attend.c with 4
 * (SSE2, every CPU), attend_avx2.c with 8 (-mavx2, no FMA),
 * attend_avx512.c with 16 (-mavx512f, no FMA). Each score and
 * each output element is summed by one lane in the reference's order, and
 * every lane does the same float multiply and add (never fused), so the
 * width changes the speed, not a bit of the result. */
#include <math.h>
#include <stddef.h>
#include <string.h>

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

/* The same for four keys in four lanes (what is left past the wide blocks). */
static void scores_four(const float *q, int dk, const float *kt, size_t ldkt, float scale,
                        float *scores)
{
    v4f acc = {0};
    for (int c = 0; c < dk; c++) acc = acc + q[c] * load4(kt + (size_t)c * ldkt);
    store4(scores, acc * scale);
}

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
    for (; j + VW <= tk; j += VW) scores_block(q, dk, kt + j, ld, 1, scale, scores + j);
    for (; j + 4 <= tk; j += 4) scores_four(q, dk, kt + j, ld, scale, scores + j);
    if (j == tk) return;
    int rest = tk - j;
    if (split) {
        for (int i = 0; i < rest; i++) scores[j + i] = dot_split4(q, dk, kt + j + i, ld) * scale;
        return;
    }
    float s[3] = {0.0f, 0.0f, 0.0f}; /* the last 1-3 keys, side by side too */
    for (int c = 0; c < dk; c++)
        for (int i = 0; i < rest; i++) s[i] = s[i] + q[c] * kt[(size_t)c * ld + j + i];
    for (int i = 0; i < rest; i++) scores[j + i] = s[i] * scale;
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

static void attn_mix(const float *w, int tk, const float *v, int ldv, int dk, float *out)
{
    size_t ld = (size_t)ldv;
    int c = 0;
    for (; c + 12 * VW <= dk; c += 12 * VW) mix_block(w, tk, v + c, ld, 12, out + c);
    for (; c + 8 * VW <= dk; c += 8 * VW) mix_block(w, tk, v + c, ld, 8, out + c);
    for (; c + 4 * VW <= dk; c += 4 * VW) mix_block(w, tk, v + c, ld, 4, out + c);
    for (; c + VW <= dk; c += VW) mix_block(w, tk, v + c, ld, 1, out + c);
    for (; c + 4 <= dk; c += 4) mix_four(w, tk, v + c, ld, out + c);
    for (; c < dk; c++) {
        float acc = 0.0f;
        for (int j = 0; j < tk; j++) acc = acc + w[j] * v[(size_t)j * ld + c];
        out[c] = acc;
    }
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
            fy_softmax(scores, tk);
            attn_mix(scores, tk, v + h * dk, ldv, dk, oi + h * dk);
        }
    }
}

#undef VW
