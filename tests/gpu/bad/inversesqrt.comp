#version 450
// inversesqrt: 2 ulp in Vulkan.
// expect-lint: inverse sqrt() on floats
// expect-spirv: GLSL.std.450 InverseSqrt on 32-bit floats
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = inversesqrt(x[i]);
}
