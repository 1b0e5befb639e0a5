#version 450
// Double arithmetic, compiled without spirv_fix.cmake's RoundingModeRTE 64.
// expect-spirv: uses Float64 without RoundingModeRTE 64
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = expf_musl(x[i]);
}
