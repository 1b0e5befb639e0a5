#version 450
// A multiply-add outside `precise`: a GPU may fuse it (lavapipe does not).
// expect-lint: float add outside `precise`
// expect-spirv: OpFAdd without NoContraction
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    x[i] = x[i] * x[i + 1u] + x[i + 2u];
}
