#version 450
// The driver's sqrt: "inherited from 1/inversesqrt" in Vulkan.
// expect-lint: sqrt() on the driver's precision
// expect-spirv: GLSL.std.450 Sqrt on 32-bit floats
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = sqrt(x[i]);
}
