#version 450
/* gemm_f32.comp - the float32 product of float models (gemm_ref.c
 * ref_f32_gemm): for rows i < m and columns c < ncols,
 *   acc = 0; acc = acc + x[i][kk]·w[j][kk] for kk = 0 .. k-1 in order;
 *   acc = acc + bias[j] (flags bit 2); relu (bit 1); y[i·ldy + c] = acc,
 * with j = cols[c] (bit 0) or j0 + c. Weights [n][k] (row j = output j: the
 * transpose of a file's [k][n] tensor, fy_transpose). Every product and sum
 * is rounded on its own, in k order, as on every CPU path. Tiles of 64 x 64,
 * 4 x 4 outputs per invocation, k in steps of 16 through shared memory. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) readonly buffer C { int cols[]; };
layout(push_constant) uniform P {
    uint m, ncols, k, ldy;
    uint x_off, w_off, bias_off, y_off, cols_off;
    uint j0, flags, ldx;
} p;

#define TILE 64u
#define KS   16u
shared float sx[TILE][KS + 1u];
shared float sw[TILE][KS + 1u];

uint column(uint c)
{
    return (p.flags & 1u) != 0u ? uint(cols[p.cols_off + c]) : p.j0 + c;
}

void main()
{
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, tid = ty * 16u + tx;
    uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
    uint lr = tid >> 2, lk = (tid & 3u) * 4u;
    bool xok = row0 + lr < p.m, wok = col0 + lr < p.ncols;
    uint xbase = p.x_off + (row0 + lr) * p.ldx + lk;
    uint wbase = p.w_off + (wok ? column(col0 + lr) : 0u) * p.k + lk;
    precise float acc[4][4];
    for (uint r = 0u; r < 4u; r++)
        for (uint c = 0u; c < 4u; c++) acc[r][c] = F_0;
    for (uint k0 = 0u; k0 < p.k; k0 += KS) {
        for (uint e = 0u; e < 4u; e++) {
            bool in_k = k0 + lk + e < p.k;
            sx[lr][lk + e] = xok && in_k ? x[xbase + k0 + e] : F_0;
            sw[lr][lk + e] = wok && in_k ? w[wbase + k0 + e] : F_0;
        }
        barrier();
        uint steps = min(KS, p.k - k0); /* exactly k products: none padded in */
        for (uint q = 0u; q < steps; q++) {
            float xv[4], wv[4];
            for (uint r = 0u; r < 4u; r++) xv[r] = sx[ty * 4u + r][q];
            for (uint c = 0u; c < 4u; c++) wv[c] = sw[tx * 4u + c][q];
            for (uint r = 0u; r < 4u; r++)
                for (uint c = 0u; c < 4u; c++) {
                    precise float prod = xv[r] * wv[c];
                    acc[r][c] = acc[r][c] + prod;
                }
        }
        barrier();
    }
    for (uint r = 0u; r < 4u; r++) {
        uint i = row0 + ty * 4u + r;
        for (uint c = 0u; c < 4u; c++) {
            uint cc = col0 + tx * 4u + c;
            if (i >= p.m || cc >= p.ncols) continue;
            precise float v = acc[r][c];
            if ((p.flags & 4u) != 0u) v = v + bias[p.bias_off + column(cc)];
            if ((p.flags & 2u) != 0u) v = v > F_0 ? v : F_0;
            y[p.y_off + i * p.ldy + cc] = v;
        }
    }
}
