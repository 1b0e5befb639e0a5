#version 450
// A float division: Vulkan allows 2.5 ulp (lavapipe divides exactly).
// expect-lint: float division (use div_rn)
// expect-spirv: OpFDiv on 32-bit floats
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    precise float q = x[i] / x[i + 1u];
    x[i] = q;
}
