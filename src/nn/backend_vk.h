/* backend_vk.h - the Vulkan backend's devices, as backend.c opens them
 * (internal to src/nn). Builds without FY_HAVE_VULKAN have no Vulkan code:
 * asking for a Vulkan device then says so. */
#ifndef FY_NN_BACKEND_VK_H
#define FY_NN_BACKEND_VK_H

#include "nn/backend.h"

#ifdef FY_HAVE_VULKAN
extern const fy_nn_backend fy_nn_vulkan;

/* Appends Vulkan device index (every device when index < 0; with
 * skip_cpu, none whose type is a CPU, such as lavapipe) to devs[*n ..
 * max). Fails with FY_EUNSUPPORTED when there is no loader or driver,
 * FY_ENOTFOUND when index is not there. */
int fy_nn_vk_open(int index, fy_nn_dev **devs, int *n, int max, int skip_cpu, fy_error *err);

/* Closes a device fy_nn_vk_open made. */
void fy_nn_vk_close(fy_nn_dev *dev);
#else
static inline int fy_nn_vk_open(int index, fy_nn_dev **devs, int *n, int max, int skip_cpu,
                                fy_error *err)
{
    (void)index, (void)devs, (void)n, (void)max, (void)skip_cpu;
    return fy_err(err, FY_EUNSUPPORTED,
                  "this build of fanyi has no Vulkan backend (configure with -DFANYI_VULKAN=ON)");
}

static inline void fy_nn_vk_close(fy_nn_dev *dev)
{
    (void)dev;
}
#endif

#endif
