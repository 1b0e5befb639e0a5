/* expf_impl.h - musl's expf, its table and constants (internal to src/nn):
 * ops.c's fy_expf computes one value with them, the attention kernels
 * (attend_kernel.h) several in the lanes of a vector, with the same double
 * operations in the same order, so every lane has fy_expf's bits.
 * x·32/ln2 = k + r (k rounded to nearest by adding 1.5·2^52),
 * exp(x) = 2^(k/32)·2^(r/32) with 2^(k/32) = the table entry for k % 32
 * (the bits of 2^(i/32) less i << 47) with k << 47 added to its exponent
 * bits, and 2^(r/32) ≈ C0·r³ + C1·r² + C2·r + 1 (C scaled by powers of 32).
 * -ffp-contract=off keeps every product and sum separately rounded. */
#ifndef FY_NN_EXPF_IMPL_H
#define FY_NN_EXPF_IMPL_H

#include <stdint.h>

extern const uint64_t fy_expf_tab[32];

#define EXPF_INVLN2N 0x1.71547652b82fep+5 /* 32/ln2 */
#define EXPF_SHIFT   0x1.8p+52
#define EXPF_C0      0x1.c6af84b912394p-20
#define EXPF_C1      0x1.ebfce50fac4f3p-13
#define EXPF_C2      0x1.62e42ff0c52d6p-6

/* The top 12 bits of |x| (as uint32) from which fy_expf leaves its main
 * path: |x| >= 88, infinities and NaN. */
#define EXPF_ABSTOP_SPECIAL 0x42b

#endif
