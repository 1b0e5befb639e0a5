/* arena.h - laying buffers out in one block: a first pass with no base
 * sizes it (every carve returns NULL and only counts), a second pass over
 * the allocated block hands out the same layout. Every buffer is 64-byte
 * aligned (vector loads, one buffer per cache line). */
#ifndef FY_UTIL_ARENA_H
#define FY_UTIL_ARENA_H

#include <stddef.h>

typedef struct fy_arena {
    char *base; /* NULL while sizing */
    size_t used;
} fy_arena;

/* The next bytes of a, 64-byte aligned; NULL while sizing. */
static inline void *fy_arena_carve(fy_arena *a, size_t bytes)
{
    size_t off = (a->used + 63) & ~(size_t)63;
    a->used = off + bytes;
    return a->base ? a->base + off : NULL;
}

#endif
