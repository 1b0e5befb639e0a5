#version 450
// Without common.glsl: no RoundingModeRTE, so rounding may go either way.
// expect-lint: does not include common.glsl
// expect-spirv: does not declare RoundingModeRTE 32
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer X { float x[]; };
void main()
{
    uint i = gl_GlobalInvocationID.x;
    precise float y = x[i] + x[i + 1u];
    x[i] = y;
}
