#version 450
// min on floats: NaN and signed-zero results are the implementation's.
// expect-lint: min() on floats
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = min(x[i], x[i + 1u]);
}
