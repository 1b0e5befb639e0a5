/* xorshift.h - the C tests' reproducible random numbers (xorshift64, the
 * high bits): each test keeps its own state and seed.
 * Header-only (static): each test is one executable. */
#ifndef FY_TESTS_XORSHIFT_H
#define FY_TESTS_XORSHIFT_H

#include <stdint.h>

static inline uint32_t xorshift_next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (uint32_t)(*state >> 16);
}

#endif
