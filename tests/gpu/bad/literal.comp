#version 450
// A decimal constant: glslang reads it through double (all else is fine).
// expect-lint: decimal float literal '0.1f'
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    precise float y = x[i] * 0.1f;
    x[i] = y;
}
