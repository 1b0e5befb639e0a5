/* attend_avx2.c - fy_nn_attend with eight-float AVX2 vectors (compiled with
 * -mavx2 and without FMA, which would change the reference's rounding): the
 * avx2 and avx512vnni paths' entry of the kernel table. */
#include "nn/gemm_impl.h"

#define ATTEND_VW       8
#define ATTEND_NAME     fy_attend_avx2
#define ATTEND_EXPF_ROW fy_expf_row_avx2
#include "nn/attend_kernel.h"
