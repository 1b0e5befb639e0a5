#version 450
/* attend.comp - scaled dot-product attention (attention.h fy_nn_attend,
 * attend_kernel.h), one workgroup per (query row, head).
 *
 * Layouts: q, k, v and out are rows of floats (strides ldq, ldk, ldv, ldo)
 * holding all heads side by side (head h at columns h·dk ..). Keys are NOT
 * transposed: key j of head h is k[(k0 + j)·ldk + h·dk + c]; each score is
 * still the CPU's chain of float operations, only read from another place.
 * info[i] = (k0, tk, split, 0) for query row i: its keys and values are rows
 * k0 .. k0+tk-1, and split (query in a complete block of four queries of a
 * sentence with tq, tk >= 4: vk_ops.c fills it) sums the scores of the last
 * tk % 4 keys in four partial sums, dimension c into sum c % 4 for
 * c < dk/4·4, then (s0 + s1) + (s2 + s3), then the rest of the dimensions
 * in order: the reference's Eigen kernel. Every other score is summed in
 * order over c from 0. The scale multiplies the finished dot product; the
 * softmax is fy_softmax's (softmax.glsl); out[c] = sum over j in order of
 * w[j]·v[j][c], from 0. tk <= 1024. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "softmax.glsl"

#define NT 64u
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float kk[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer O { float o[]; };
layout(std430, binding = 4) readonly buffer I { ivec4 info[]; };
layout(push_constant) uniform P {
    uint nq, heads, dk, ldq, ldk, ldv, ldo, q_off, k_off, v_off, o_off, info_off;
    float scale;
} p;

shared float sq[512];

float dot_order(uint kb, uint dk)
{
    precise float acc = F_0;
    for (uint c = 0u; c < dk; c++) {
        precise float m = sq[c] * kk[kb + c];
        acc = acc + m;
    }
    return acc;
}

float dot_split4(uint kb, uint dk)
{
    precise float p0 = F_0, p1 = F_0, p2 = F_0, p3 = F_0;
    uint c = 0u;
    for (; c + 4u <= dk; c += 4u) {
        precise float m0 = sq[c] * kk[kb + c];
        precise float m1 = sq[c + 1u] * kk[kb + c + 1u];
        precise float m2 = sq[c + 2u] * kk[kb + c + 2u];
        precise float m3 = sq[c + 3u] * kk[kb + c + 3u];
        p0 = p0 + m0;
        p1 = p1 + m1;
        p2 = p2 + m2;
        p3 = p3 + m3;
    }
    precise float a = p0 + p1;
    precise float b = p2 + p3;
    precise float acc = a + b;
    for (; c < dk; c++) {
        precise float m = sq[c] * kk[kb + c];
        acc = acc + m;
    }
    return acc;
}

void main()
{
    uint i = gl_WorkGroupID.x, h = gl_WorkGroupID.y, t = gl_LocalInvocationID.x;
    uint dk = min(p.dk, 512u);
    ivec4 inf = info[p.info_off + i];
    uint k0 = uint(inf.x), tk = min(uint(inf.y), SM_MAX);
    bool split = inf.z != 0;
    for (uint c = t; c < dk; c += NT) sq[c] = q[p.q_off + i * p.ldq + h * dk + c];
    barrier();
    uint whole = tk & ~3u; /* keys before the last tk % 4 */
    for (uint j = t; j < tk; j += NT) {
        uint kb = p.k_off + (k0 + j) * p.ldk + h * dk;
        float s = split && j >= whole ? dot_split4(kb, dk) : dot_order(kb, dk);
        precise float sc = s * p.scale;
        sm_x[j] = sc;
    }
    barrier();
    softmax_shared(tk, t, NT);
    for (uint c = t; c < dk; c += NT) {
        precise float acc = F_0;
        for (uint j = 0u; j < tk; j++) {
            precise float m = sm_x[j] * v[p.v_off + (k0 + j) * p.ldv + h * dk + c];
            acc = acc + m;
        }
        o[p.o_off + i * p.ldo + h * dk + c] = acc;
    }
}
