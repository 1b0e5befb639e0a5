#version 450
/* gemm_i8_rows.comp - the int8 product over a column list per row (the
 * shortlisted output layer of many rows at once): with flags bit 3, row i
 * uses the columns cols[start_i .. start_i + n_i) with (start_i, n_i) =
 * rows[2i], rows[2i+1], and writes its c-th value at y[i·ldy + c]. Without
 * it every row has the same ncols columns: cols[c] (bit 0) or j0 + c (the
 * few-row case of gemm_i8, which wastes most of a 64-row tile there). Arithmetic as gemm_i8.comp
 * (gemm_ref.c ref_i8_gemm). One workgroup per row and 64 columns: the
 * row's activations in shared memory, each invocation reading its column's
 * weight row (a gather: rows are not shared between rows' lists). k <= 4096.
 * flags bit 1: relu. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) readonly buffer C { int cols[]; };
layout(std430, binding = 5) readonly buffer R { int rows[]; };
layout(push_constant) uniform P {
    uint m, k, ldy;
    uint a_off, w_off, bias_off, y_off, cols_off, rows_off;
    uint flags;
    float unquant;
    uint j0, ncols;
} p;

#define MAX_KW 1024u /* k <= 4096 */
shared uint sa[MAX_KW];

int pair_sum(uint u, uint s)
{
    ivec4 uu = ivec4(int(u & 0xffu), int((u >> 8) & 0xffu), int((u >> 16) & 0xffu), int(u >> 24));
    int si = int(s);
    ivec4 ww = ivec4(bitfieldExtract(si, 0, 8), bitfieldExtract(si, 8, 8),
                     bitfieldExtract(si, 16, 8), bitfieldExtract(si, 24, 8));
    int p0 = clamp(uu.x * ww.x + uu.y * ww.y, -32768, 32767);
    int p1 = clamp(uu.z * ww.z + uu.w * ww.w, -32768, 32767);
    return p0 + p1;
}

void main()
{
    uint i = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint c = gl_WorkGroupID.x * 64u + t;
    bool per_row = (p.flags & 8u) != 0u;
    uint start = per_row ? uint(rows[p.rows_off + 2u * i]) : 0u;
    uint n = per_row ? uint(rows[p.rows_off + 2u * i + 1u]) : p.ncols;
    if (gl_WorkGroupID.x * 64u >= n) return; /* the whole workgroup leaves together */
    uint kw = min(p.k >> 2, MAX_KW);
    for (uint q = t; q < kw; q += 64u) sa[q] = a[p.a_off + i * kw + q];
    barrier();
    if (c >= n) return;
    uint j = (p.flags & 9u) != 0u ? uint(cols[p.cols_off + start + c]) : p.j0 + c;
    uint wb = p.w_off + j * kw;
    int acc = 0;
    for (uint q = 0u; q < kw; q += 4u) {
        acc += pair_sum(sa[q], w[wb + q]);
        acc += pair_sum(sa[q + 1u], w[wb + q + 1u]);
        acc += pair_sum(sa[q + 2u], w[wb + q + 2u]);
        acc += pair_sum(sa[q + 3u], w[wb + q + 3u]);
    }
    precise float v = float(acc) * p.unquant;
    v = v + bias[p.bias_off + j];
    if ((p.flags & 2u) != 0u) v = v > F_0 ? v : F_0;
    y[p.y_off + i * p.ldy + c] = v;
}
