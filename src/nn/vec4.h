/* vec4.h - four-float vectors (GCC vector extensions: SSE2 on x86-64, plain
 * scalar code elsewhere) for the float ops of src/nn. Internal header. */
#ifndef FY_NN_VEC4_H
#define FY_NN_VEC4_H

#include <stdint.h>
#include <string.h>

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store4(float *p, v4f v)
{
    memcpy(p, &v, sizeof v);
}

/* m ? a : b per lane (m: all ones or all zeros). */
static inline v4f select4(v4i m, v4f a, v4f b)
{
    return (v4f)((m & (v4i)a) | (~m & (v4i)b));
}

#endif
