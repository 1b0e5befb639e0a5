#version 450
/* gemm_i8.comp - the int8 product (gemm_ref.c ref_i8_gemm, intgemm's
 * int8shiftAlphaAll): for rows i < m and columns c < ncols,
 *   acc = sum over byte pairs of sat16(u[2p]·w[2p] + u[2p+1]·w[2p+1])
 *   y[i·ldy + c] = (float)acc·unquant + bias[j] (then relu if asked),
 * with j = cols[c] (flags bit 0) or j0 + c, a: u8 [m][k], w: s8 [n][k] (row
 * j = output j), k % 64 == 0. The sums are exact integers, so any order
 * gives the CPU's; the float epilogue is one rounding each, as there.
 *
 * Tiles of 64 rows x 64 columns, 256 invocations with 4 x 4 outputs each;
 * k in steps of 64 bytes through shared memory. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) readonly buffer C { int cols[]; };
layout(push_constant) uniform P {
    uint m, ncols, k, ldy;
    uint a_off, w_off, bias_off, y_off, cols_off;
    uint j0, flags;
    float unquant;
} p;

#define TILE 64u
#define KW   16u /* words (64 bytes) of k per step */
shared uint sa[TILE][KW + 1u];
shared uint sw[TILE][KW + 1u];

uint column(uint c)
{
    return (p.flags & 1u) != 0u ? uint(cols[p.cols_off + c]) : p.j0 + c;
}

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
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, tid = ty * 16u + tx;
    uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
    uint kw = p.k >> 2;
    /* loading: invocation tid fills words lw .. lw+3 of tile row lr */
    uint lr = tid >> 2, lw = (tid & 3u) * 4u;
    bool aok = row0 + lr < p.m, wok = col0 + lr < p.ncols;
    uint abase = p.a_off + (row0 + lr) * kw + lw;
    uint wbase = p.w_off + (wok ? column(col0 + lr) : 0u) * kw + lw;
    int acc[4][4];
    for (uint r = 0u; r < 4u; r++)
        for (uint c = 0u; c < 4u; c++) acc[r][c] = 0;
    for (uint k0 = 0u; k0 < kw; k0 += KW) {
        for (uint x = 0u; x < 4u; x++) {
            sa[lr][lw + x] = aok ? a[abase + k0 + x] : 0u;
            sw[lr][lw + x] = wok ? w[wbase + k0 + x] : 0u;
        }
        barrier();
        for (uint q = 0u; q < KW; q++) {
            uint av[4], wv[4];
            for (uint r = 0u; r < 4u; r++) av[r] = sa[ty * 4u + r][q];
            for (uint c = 0u; c < 4u; c++) wv[c] = sw[tx * 4u + c][q];
            for (uint r = 0u; r < 4u; r++)
                for (uint c = 0u; c < 4u; c++) acc[r][c] += pair_sum(av[r], wv[c]);
        }
        barrier();
    }
    for (uint r = 0u; r < 4u; r++) {
        uint i = row0 + ty * 4u + r;
        for (uint c = 0u; c < 4u; c++) {
            uint cc = col0 + tx * 4u + c;
            if (i >= p.m || cc >= p.ncols) continue;
            precise float v = float(acc[r][c]) * p.unquant;
            v = v + bias[p.bias_off + column(cc)];
            if ((p.flags & 2u) != 0u) v = v > F_0 ? v : F_0;
            y[p.y_off + i * p.ldy + cc] = v;
        }
    }
}
