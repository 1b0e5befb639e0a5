#version 450
// fma: fused or not, as the implementation likes.
// expect-lint: fma() on the driver's precision
// expect-spirv: GLSL.std.450 Fma on 32-bit floats
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = fma(x[i], x[i + 1u], x[i + 2u]);
}
