/* attend.c - fy_nn_attend with four-float vectors (SSE2 on x86-64, plain
 * code elsewhere): the portable path's entry of the kernel table. */
#include "nn/gemm_impl.h"

#define ATTEND_VW       4
#define ATTEND_NAME     fy_attend_v4
#define ATTEND_EXPF_ROW fy_expf_row_v4
#include "nn/attend_kernel.h"
