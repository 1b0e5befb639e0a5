#version 450
/* gemm_i8_dot.comp - gemm_i8.comp's result through 4-way integer dot
 * products (OpSUDotKHR, dp4a on NVIDIA; needs shaderIntegerDotProduct),
 * in one of two ways (specialization constant PAIRS):
 *  0: the exact sum u·w of each 4 bytes without saturation, then, per
 *     output, the correction sat16(p) - p for each weight pair of column j
 *     that can saturate (same sign, |w0| + |w1| > 129, as 254·129 < 32768),
 *     listed at load time (vk_ops.h fy_vk_i8_fixups): pairs[fix[j] ..
 *     fix[j+1]) are their pair indices. Worthwhile where few pairs are
 *     listed (trained weights);
 *  1: each pair as a dot product of the word with the other pair's bytes
 *     masked to zero, saturated to int16 as it is: two dot products and two
 *     clamps per 4 bytes, no list.
 * Integers throughout, so either gives gemm_i8's sums exactly. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018],
                  id = 4452) int sudot(int s, uint u, spirv_literal int packed_format);

layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) readonly buffer C { int cols[]; };
layout(std430, binding = 5) readonly buffer Fix { uint fix[]; };
layout(std430, binding = 6) readonly buffer Pairs { uint pairs[]; };
layout(push_constant) uniform P {
    uint m, ncols, k, ldy;
    uint a_off, w_off, bias_off, y_off, cols_off;
    uint j0, flags;
    float unquant;
    uint fix_off, pair_off;
} p;

layout(constant_id = 1) const uint PAIRS = 0u;

#define TILE 64u
#define KW   16u
shared uint sa[TILE][KW + 1u];
shared uint sw[TILE][KW + 1u];

uint column(uint c)
{
    return (p.flags & 1u) != 0u ? uint(cols[p.cols_off + c]) : p.j0 + c;
}

/* sat16(p) - p for pair q of activation row i and weight row j. */
int fixup(uint i, uint j, uint q)
{
    uint kw = p.k >> 2, shift = (q & 1u) * 16u;
    uint au = a[p.a_off + i * kw + (q >> 1)] >> shift;
    int ws = int(w[p.w_off + j * kw + (q >> 1)] >> shift);
    int s = int(au & 0xffu) * bitfieldExtract(ws, 0, 8) + int((au >> 8) & 0xffu) * bitfieldExtract(ws, 8, 8);
    return clamp(s, -32768, 32767) - s;
}

void main()
{
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, tid = ty * 16u + tx;
    uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
    uint kw = p.k >> 2;
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
            if (PAIRS != 0u) {
                for (uint c = 0u; c < 4u; c++) {
                    int lo = int(wv[c] & 0xffffu), hi = int(wv[c] & 0xffff0000u);
                    for (uint r = 0u; r < 4u; r++)
                        acc[r][c] += clamp(sudot(lo, av[r], 0), -32768, 32767) +
                                     clamp(sudot(hi, av[r], 0), -32768, 32767);
                }
            } else {
                for (uint r = 0u; r < 4u; r++)
                    for (uint c = 0u; c < 4u; c++) acc[r][c] += sudot(int(wv[c]), av[r], 0);
            }
        }
        barrier();
    }
    for (uint r = 0u; r < 4u; r++) {
        uint i = row0 + ty * 4u + r;
        for (uint c = 0u; c < 4u; c++) {
            uint cc = col0 + tx * 4u + c;
            if (i >= p.m || cc >= p.ncols) continue;
            uint j = column(cc);
            int sum = acc[r][c];
            if (PAIRS == 0u)
                for (uint e = fix[p.fix_off + j]; e < fix[p.fix_off + j + 1u]; e++)
                    sum += fixup(i, j, pairs[p.pair_off + e]);
            precise float v = float(sum) * p.unquant;
            v = v + bias[p.bias_off + j];
            if ((p.flags & 2u) != 0u) v = v > F_0 ? v : F_0;
            y[p.y_off + i * p.ldy + cc] = v;
        }
    }
}
