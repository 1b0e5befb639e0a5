#version 450
/* topk.comp - each row's candidates for beam search (beam.c
 * best_candidates, one row): the k + 1 best of path[r] + logit (one float
 * add, as the CPU) over the row's columns (as pick.comp), never unk, best
 * first, ties in column order. out, per row, 1 + 2(k+1) words: the count,
 * the k+1 scores, the k+1 ids.
 *
 * The CPU inserts each candidate into a sorted list (it enters only when it
 * beats the last one kept and moves up past strictly smaller scores): the
 * first k + 1 of the candidates sorted by score, then position, unless a
 * score is NaN. So each invocation keeps that list for a contiguous slice
 * of the columns, and one merges the slices in order with the same
 * insertion; a row with a NaN score is redone by one invocation in the
 * CPU's exact sequence. k + 1 <= 17. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define CAP 17u
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer L { float lg[]; };
layout(std430, binding = 1) readonly buffer C { int cols[]; };
layout(std430, binding = 2) readonly buffer R { int rows[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };
layout(std430, binding = 4) readonly buffer Pa { float path[]; };
layout(push_constant) uniform P {
    uint rows, ldl, l_off, cols_off, rows_off, out_off, path_off, k;
    int unk;
    uint flags, n_all;
} p;

shared float lv[64][CAP];
shared uint lc[64][CAP];
shared uint lcount[64];
shared bool anynan;
float fv[CAP];
uint fc[CAP];

bool ident;
uint start;

int column_id(uint c)
{
    return ident ? int(c) : cols[p.cols_off + start + c];
}

/* The candidate of column c, or false for unk. */
bool candidate(uint r, uint c, float base, out float v)
{
    if (column_id(c) == p.unk) return false;
    precise float s = base + lg[p.l_off + r * p.ldl + c];
    v = s;
    return true;
}

bool is_nan(float v)
{
    return (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u;
}

/* beam.c's insertion into the final list fv/fc of n entries (cap entries at most). */
uint insert_final(uint n, uint cap, float v, uint c)
{
    if (n == cap && !(v > fv[n - 1u])) return n;
    uint at = n < cap ? n++ : n - 1u;
    for (; at > 0u && fv[at - 1u] < v; at--) {
        fv[at] = fv[at - 1u];
        fc[at] = fc[at - 1u];
    }
    fv[at] = v;
    fc[at] = c;
    return n;
}

void main()
{
    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
    ident = (p.flags & 1u) != 0u;
    start = ident ? 0u : uint(rows[p.rows_off + 2u * r]);
    uint n = ident ? p.n_all : uint(rows[p.rows_off + 2u * r + 1u]);
    uint cap = min(p.k + 1u, CAP);
    float base = path[p.path_off + r];
    if (t == 0u) anynan = false;
    barrier();
    /* this invocation's slice, into lv[t]/lc[t] */
    uint chunk = (n + 63u) / 64u, lo = min(t * chunk, n), hi = min(lo + chunk, n), cnt = 0u;
    bool nan_seen = false;
    for (uint c = lo; c < hi; c++) {
        float v;
        if (!candidate(r, c, base, v)) continue;
        nan_seen = nan_seen || is_nan(v);
        if (cnt == cap && !(v > lv[t][cnt - 1u])) continue;
        uint at = cnt < cap ? cnt++ : cnt - 1u;
        for (; at > 0u && lv[t][at - 1u] < v; at--) {
            lv[t][at] = lv[t][at - 1u];
            lc[t][at] = lc[t][at - 1u];
        }
        lv[t][at] = v;
        lc[t][at] = c;
    }
    lcount[t] = cnt;
    if (nan_seen) anynan = true;
    barrier();
    if (t != 0u) return;
    uint total = 0u;
    if (anynan) { /* the CPU's exact sequence */
        for (uint c = 0u; c < n; c++) {
            float v;
            if (candidate(r, c, base, v)) total = insert_final(total, cap, v, c);
        }
    } else {
        for (uint s = 0u; s < 64u; s++)
            for (uint e = 0u; e < lcount[s]; e++) total = insert_final(total, cap, lv[s][e], lc[s][e]);
    }
    uint ob = p.out_off + r * (1u + 2u * cap);
    o[ob] = total;
    for (uint e = 0u; e < total; e++) {
        o[ob + 1u + e] = floatBitsToUint(fv[e]);
        o[ob + 1u + cap + e] = uint(column_id(fc[e]));
    }
}
