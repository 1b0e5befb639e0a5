#version 450
/* gather.comp - dst row j = src row from[j] (words per row; strides lds and
 * ldd in words): keeping and reordering rows of state (the SSRU cells) for
 * greedy compaction and beam search. No float arithmetic. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer S { uint src[]; };
layout(std430, binding = 1) writeonly buffer D { uint dst[]; };
layout(std430, binding = 2) readonly buffer F { int from[]; };
layout(push_constant) uniform P {
    uint rows, words, lds, ldd, src_off, dst_off, from_off;
} p;

void main()
{
    uint w = gl_GlobalInvocationID.x, j = gl_GlobalInvocationID.y;
    if (w >= p.words || j >= p.rows) return;
    uint r = uint(from[p.from_off + j]);
    dst[p.dst_off + j * p.ldd + w] = src[p.src_off + r * p.lds + w];
}
