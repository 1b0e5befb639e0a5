#version 450
/* gemm_i8_rows.comp - the int8 product over a column list per row (the
 * shortlisted output layer of many rows at once): row i uses the columns
 * cols[start_i .. start_i + n_i) with (start_i, n_i) = rows[2i], rows[2i+1],
 * and writes its c-th value at y[i·ldy + c]. Arithmetic as gemm_i8.comp
 * (gemm_ref.c ref_i8_gemm). One workgroup per row and 64 columns; the row's
 * activations and a 64-column slice of the weights go through shared
 * memory 64 bytes of k at a time. flags bit 1: relu. */
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
} p;

#define KW 16u
shared uint sa[KW];
shared uint sw[64][KW + 1u];
shared uint scol[64];

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
    uint c0 = gl_WorkGroupID.x * 64u;
    uint start = uint(rows[p.rows_off + 2u * i]), n = uint(rows[p.rows_off + 2u * i + 1u]);
    if (c0 >= n) return; /* the whole workgroup leaves together */
    uint kw = p.k >> 2;
    scol[t] = c0 + t < n ? uint(cols[p.cols_off + start + c0 + t]) : 0u;
    barrier();
    int acc = 0;
    for (uint k0 = 0u; k0 < kw; k0 += KW) {
        if (t < KW) sa[t] = a[p.a_off + i * kw + k0 + t];
        /* 64 columns x 16 words: invocation t loads word t % 16 of columns
         * t / 16, t / 16 + 4, ...: 16 neighbours read one contiguous 64 bytes */
        for (uint cc = t >> 4; cc < 64u; cc += 4u)
            sw[cc][t & 15u] = c0 + cc < n ? w[p.w_off + scol[cc] * kw + k0 + (t & 15u)] : 0u;
        barrier();
        for (uint q = 0u; q < KW; q++) acc += pair_sum(sa[q], sw[t][q]);
        barrier();
    }
    if (c0 + t >= n) return;
    precise float v = float(acc) * p.unquant;
    v = v + bias[p.bias_off + scol[t]];
    if ((p.flags & 2u) != 0u) v = v > F_0 ? v : F_0;
    y[p.y_off + i * p.ldy + c0 + t] = v;
}
