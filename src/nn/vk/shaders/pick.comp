#version 450
/* pick.comp - greedy selection (translator.c pick) for each row r: over the
 * row's columns c (the list cols[start_r ..], n_r of them, or, with flags
 * bit 0, the identity 0 .. n_all-1), never the id unk: the best logit
 * logits[r·ldl + c], the first on ties, and the second best of the rest.
 * Writes out[3r] = its id (-1 if none), out[3r+1] = its logit (-inf if
 * none), out[3r+2] = best - second best, as fy_nn_pick. The CPU scans in
 * order and keeps v only when v > best (or > second): NaN and -inf never
 * enter, and the kept pair is the first two of the columns sorted by
 * value, then position. That order is total, so invocations may split the
 * columns and merge in any order: no float arithmetic but the final gap
 * (NaN when there is no column: written as x86's default NaN, the CPU's
 * -inf - -inf). */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer L { float lg[]; };
layout(std430, binding = 1) readonly buffer C { int cols[]; };
layout(std430, binding = 2) readonly buffer R { int rows[]; };
layout(std430, binding = 3) writeonly buffer O { uint o[]; };
layout(push_constant) uniform P {
    uint rows, ldl, l_off, cols_off, rows_off, out_off, path_off, k;
    int unk;
    uint flags, n_all;
} p;

#define NONE 0xffffffffu
shared float s1[64], s2[64];
shared uint c1[64], c2[64];

bool before(float va, uint ca, float vb, uint cb)
{
    return va > vb || (va == vb && ca < cb);
}

void main()
{
    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationID.x;
    bool ident = (p.flags & 1u) != 0u;
    uint start = ident ? 0u : uint(rows[p.rows_off + 2u * r]);
    uint n = ident ? p.n_all : uint(rows[p.rows_off + 2u * r + 1u]);
    float v1 = F_NEG_INF, v2 = F_NEG_INF;
    uint i1 = NONE, i2 = NONE;
    for (uint c = t; c < n; c += 64u) {
        int id = ident ? int(c) : cols[p.cols_off + start + c];
        if (id == p.unk) continue;
        float v = lg[p.l_off + r * p.ldl + c];
        if (v > v1) {
            v2 = v1;
            i2 = i1;
            v1 = v;
            i1 = c;
        } else if (v > v2) {
            v2 = v;
            i2 = c;
        }
    }
    s1[t] = v1;
    c1[t] = i1;
    s2[t] = v2;
    c2[t] = i2;
    barrier();
    for (uint half_ = 32u; half_ > 0u; half_ >>= 1) {
        if (t < half_) {
            uint u = t + half_;
            float a1 = s1[t], a2 = s2[t], b1 = s1[u], b2 = s2[u];
            uint x1 = c1[t], x2 = c2[t], y1 = c1[u], y2 = c2[u];
            if (before(b1, y1, a1, x1)) { /* b1 first; second: a1 or b2 */
                s1[t] = b1;
                c1[t] = y1;
                bool a = before(a1, x1, b2, y2);
                s2[t] = a ? a1 : b2;
                c2[t] = a ? x1 : y2;
            } else { /* a1 first; second: a2 or b1 */
                bool b = before(b1, y1, a2, x2);
                s2[t] = b ? b1 : a2;
                c2[t] = b ? y1 : x2;
            }
        }
        barrier();
    }
    if (t == 0u) {
        uint best = c1[0];
        int id = best == NONE ? -1 : ident ? int(best) : cols[p.cols_off + start + best];
        precise float gap = s1[0] - s2[0];
        uint g = floatBitsToUint(gap);
        /* -inf - -inf (no column): x86's default NaN, as the CPU computes it */
        if ((g & 0x7fffffffu) > 0x7f800000u) g = 0xffc00000u;
        o[p.out_off + 3u * r] = uint(id);
        o[p.out_off + 3u * r + 1u] = floatBitsToUint(s1[0]);
        o[p.out_off + 3u * r + 2u] = g;
    }
}
