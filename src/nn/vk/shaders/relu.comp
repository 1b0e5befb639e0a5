#version 450
/* relu.comp - ops.c fy_relu: x = x > 0 ? x : 0 (so -0 and NaN give +0). */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { float x[]; };
layout(push_constant) uniform P {
    uint n, off;
} p;

void main()
{
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 256u;
    if (i >= p.n) return;
    float v = x[p.off + i];
    x[p.off + i] = v > F_0 ? v : F_0;
}
