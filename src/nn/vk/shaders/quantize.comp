#version 450
/* quantize.comp - int8 activations (gemm_ref.c ref_quantize_u8): for rows
 * r < rows, a[r][i] = clamp(rint(x[r·ldx + i]·mult), -127, 127) + 127 as
 * u8, with intgemm's cvtps semantics (|x·mult| >= 2^31 or NaN gives -127).
 * One invocation per 4 bytes (one word of a); k % 4 == 0. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer A { uint a[]; };
layout(push_constant) uniform P {
    uint rows, k, ldx, x_off, a_off;
    float mult;
} p;

uint quant(float v0)
{
    precise float v = v0 * p.mult;
    int q = -127; /* cvtps of NaN or out of range: INT32_MIN, saturated */
    if (v >= uintBitsToFloat(0xcf000000u) && v < uintBitsToFloat(0x4f000000u)) {
        /* rint then clamp == clamp to ±128, round, clamp: |v| <= 128 rounds
         * to even exactly by adding and removing 1.5·2^23 */
        precise float c = v < uintBitsToFloat(0x43000000u) ? v : uintBitsToFloat(0x43000000u);
        c = c > uintBitsToFloat(0xc3000000u) ? c : uintBitsToFloat(0xc3000000u);
        precise float r = c + uintBitsToFloat(0x4b400000u);
        r = r - uintBitsToFloat(0x4b400000u);
        q = clamp(int(r), -127, 127);
    }
    return uint(q + 127);
}

void main()
{
    uint wpr = p.k >> 2, w = gl_GlobalInvocationID.x, r = gl_GlobalInvocationID.y;
    if (w >= wpr || r >= p.rows) return;
    uint src = p.x_off + r * p.ldx + w * 4u;
    a[p.a_off + r * wpr + w] = quant(x[src]) | (quant(x[src + 1u]) << 8) |
                               (quant(x[src + 2u]) << 16) | (quant(x[src + 3u]) << 24);
}
