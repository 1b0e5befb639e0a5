/* attend_avx512.c - fy_nn_attend with sixteen-float AVX-512 vectors
 * (compiled with -mavx512f and without FMA, which would change the
 * reference's rounding): the avx512vnni path's entry of the kernel table. */
#include "nn/gemm_impl.h"

#define ATTEND_VW       16
#define ATTEND_NAME     fy_attend_avx512
#define ATTEND_EXPF_ROW fy_expf_row_avx512
#include "nn/attend_kernel.h"
