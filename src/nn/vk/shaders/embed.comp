#version 450
/* embed.comp - the embedding input (encoder.c fy_nn_embed, translator.c's
 * int8 embed): x[r][i] = e·scale + pos[p_r][i] with e = table[id][i] (float
 * table) or (float)q·inv (int8 table), and for the start (id < 0)
 * 0·scale + pos, as Marian scales the zero embedding too. */
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) writeonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer T { uint table[]; };
layout(std430, binding = 2) readonly buffer Pos { float pos[]; };
layout(std430, binding = 3) readonly buffer Ids { int ids[]; };
layout(std430, binding = 4) readonly buffer Posi { int posi[]; };
layout(push_constant) uniform P {
    uint rows, d, ldx, x_off, table_off, pos_off, ids_off, posi_off;
    int pos_step;
    uint int8;
    float scale, inv;
} p;

void main()
{
    uint i = gl_GlobalInvocationID.x, r = gl_GlobalInvocationID.y;
    if (i >= p.d || r >= p.rows) return;
    int id = ids[p.ids_off + r];
    uint at = p.pos_step >= 0 ? uint(p.pos_step) : uint(posi[p.posi_off + r]);
    float pv = pos[p.pos_off + at * p.d + i];
    precise float e;
    if (id < 0) {
        e = F_0 * p.scale;
    } else if (p.int8 != 0u) {
        uint b = p.table_off * 4u + uint(id) * p.d + i;
        int q = bitfieldExtract(int(table[b >> 2]), int((b & 3u) * 8u), 8);
        precise float v = float(q) * p.inv;
        e = v * p.scale;
    } else {
        e = uintBitsToFloat(table[p.table_off + uint(id) * p.d + i]) * p.scale;
    }
    precise float o = e + pv;
    x[p.x_off + r * p.ldx + i] = o;
}
