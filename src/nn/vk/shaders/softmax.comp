#version 450
/* softmax.comp - ops.c fy_softmax of rows of n floats (stride ld) in place,
 * one row per workgroup; n <= 1024. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "softmax.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P {
    uint rows, n, ld, off;
} p;

void main()
{
    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationID.x, n = min(p.n, SM_MAX);
    uint base = p.off + r * p.ld;
    for (uint i = t; i < n; i += 64u) sm_x[i] = x[base + i];
    barrier();
    softmax_shared(n, t, 64u);
    for (uint i = t; i < n; i += 64u) x[base + i] = sm_x[i];
}
