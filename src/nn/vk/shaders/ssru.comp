#version 450
/* ssru.comp - ops.c fy_ssru_cell, element by element: g = e/(1 + e) with
 * e = exp_ps(f) (Marian's 4-lane sigmoid; every lane computes as one),
 * cell = g·cell + (1 - g)·xw in that order, out = relu(cell). */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer C { float cell[]; };
layout(std430, binding = 1) readonly buffer Fg { float f[]; };
layout(std430, binding = 2) readonly buffer Xw { float xw[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform P {
    uint rows, d, ld_cell, ld_f, ld_xw, ld_out;
    uint cell_off, f_off, xw_off, out_off;
} p;

void main()
{
    uint i = gl_GlobalInvocationID.x, r = gl_GlobalInvocationID.y;
    if (i >= p.d || r >= p.rows) return;
    uint ci = p.cell_off + r * p.ld_cell + i;
    float e = exp_ps(f[p.f_off + r * p.ld_f + i]);
    precise float den = F_1 + e;
    float g = div_rn(e, den);
    precise float gc = g * cell[ci];
    precise float h = F_1 - g;
    precise float hx = h * xw[p.xw_off + r * p.ld_xw + i];
    precise float c = gc + hx;
    cell[ci] = c;
    o[p.out_off + r * p.ld_out + i] = c > F_0 ? c : F_0;
}
