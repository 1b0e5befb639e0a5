#version 450
/* add_norm.comp - ops.c fy_add_layer_norm, one row per workgroup: x = y + x,
 * then one invocation sums the row in order (mean = sum/d, then the
 * squared deviations in order, sigma = sqrt(var/d + eps)), exactly the
 * CPU's chains of dependent additions; the workgroup then writes
 * scale·((x - mean)/sigma) + bias. d <= 2048. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define MAX_D 2048u /* 8 KiB: every device has 16 */
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer S { float scale[]; };
layout(std430, binding = 3) readonly buffer B { float bias[]; };
layout(push_constant) uniform P {
    uint rows, d, ldx, ldy, x_off, y_off, scale_off, bias_off;
} p;

shared float sx[MAX_D];
shared float stat[2];

void main()
{
    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, d = min(p.d, MAX_D);
    uint xb = p.x_off + r * p.ldx, yb = p.y_off + r * p.ldy;
    for (uint i = t; i < d; i += 256u) {
        precise float s = y[yb + i] + x[xb + i];
        sx[i] = s;
    }
    barrier();
    if (t == 0u) {
        float fd = float(d);
        precise float sum = F_0;
        for (uint i = 0u; i < d; i++) sum = sum + sx[i];
        float mean = div_rn(sum, fd);
        precise float q = F_0;
        for (uint i = 0u; i < d; i++) {
            precise float e = sx[i] - mean;
            precise float e2 = e * e;
            q = q + e2;
        }
        precise float var = div_rn(q, fd) + uintBitsToFloat(0x358637bdu); /* FY_LN_EPS 1e-6 */
        stat[0] = mean;
        stat[1] = sqrt_rn(var);
    }
    barrier();
    float mean = stat[0], sigma = stat[1];
    for (uint i = t; i < d; i += 256u) {
        precise float c = sx[i] - mean;
        float n = div_rn(c, sigma);
        precise float o = scale[p.scale_off + i] * n;
        o = o + bias[p.bias_off + i];
        x[xb + i] = o;
    }
}
