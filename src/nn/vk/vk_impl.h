/* vk_impl.h - the runtime's structures, shared by its .c files (internal to
 * src/nn/vk; the API is vk.h). */
#ifndef FY_NN_VK_VK_IMPL_H
#define FY_NN_VK_VK_IMPL_H

#define VK_NO_PROTOTYPES
#include <pthread.h>
#include <stdatomic.h>
#include <vulkan/vulkan.h>

#include "nn/vk/vk.h"
#include "nn/vk/vk_fn.h"

#define FY_VK_DECLARE(name) PFN_##name name;

/* The loader's entry points: global and instance ones, per fy_vk. */
typedef struct fy_vk_fns {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    FY_VK_GLOBAL_FNS(FY_VK_DECLARE)
    FY_VK_INSTANCE_FNS(FY_VK_DECLARE)
} fy_vk_fns;

/* Device entry points, per fy_vk_dev. */
typedef struct fy_vk_dfns {
    FY_VK_DEVICE_FNS(FY_VK_DECLARE)
} fy_vk_dfns;

#define FY_VK_MAX_DEVICES 16

struct fy_vk {
    void *lib; /* dlopen handle */
    fy_vk_fns f;
    VkInstance instance;
    int ndev;
    VkPhysicalDevice phys[FY_VK_MAX_DEVICES];
    fy_vk_info info[FY_VK_MAX_DEVICES];
};

/* One kernel's pipeline objects: the layout is per kernel, pipelines per
 * specialisation (a few: tile shapes, the skew). */
#define FY_VK_MAX_BINDINGS 8
#define FY_VK_MAX_SPEC     7 /* id 0 (skew) + 6 of the kernel's */
#define FY_VK_MAX_VARIANTS 8

typedef struct fy_vk_pipe {
    uint32_t spec[FY_VK_MAX_SPEC];
    VkPipeline pipeline;
} fy_vk_pipe;

typedef struct fy_vk_kernel_objs {
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    int npipes;
    fy_vk_pipe pipes[FY_VK_MAX_VARIANTS];
} fy_vk_kernel_objs;

/* What the runtime knows of each kernel (vk_kernels.c). */
typedef struct fy_vk_kernel_desc {
    const char *name;   /* the shader file's name */
    int nbind;          /* storage buffers at bindings 0 .. nbind-1 */
    uint32_t push_size; /* bytes of push constants */
    int needs_int_dot;  /* only on devices with shaderIntegerDotProduct */
} fy_vk_kernel_desc;

extern const fy_vk_kernel_desc fy_vk_kernels[FY_VK_K_COUNT];

struct fy_vk_dev {
    fy_vk *vk;
    const fy_vk_info *info;
    VkPhysicalDevice phys;
    VkDevice device;
    fy_vk_dfns d;
    uint32_t queue_family;
    VkQueue queue;
    pthread_mutex_t queue_lock; /* vkQueueSubmit needs external synchronisation */
    uint32_t mem_device;        /* memory type index for FY_VK_MEM_DEVICE */
    int device_mapped;          /* ... which is host-visible and coherent */
    uint32_t mem_host;          /* for FY_VK_MEM_HOST */
    int variant;                /* SPIR-V variant: bit 0 denorm, bit 1 szinp */
    uint32_t skew;
    atomic_int lost;
    pthread_mutex_t pipe_lock; /* kernels[] creation */
    fy_vk_kernel_objs kernels[FY_VK_K_COUNT];
    pthread_mutex_t xfer_lock; /* the synchronous upload/download path */
    fy_vk_cmd *xfer;
};

struct fy_vk_buf {
    fy_vk_dev *dev;
    VkBuffer buffer;
    VkDeviceMemory memory;
    size_t size;
    void *map; /* NULL if not host-visible */
};

/* Maps a VkResult to fy_error: FY_EDEVICE (and marks dev lost),
 * FY_EDEVMEM, FY_ENOMEM, FY_ETIMEOUT or FY_EIO. what: "vkQueueSubmit". */
int fy_vk_fail(fy_vk_dev *dev, VkResult r, fy_error *err, const char *what);

/* FY_EDEVICE with a message if dev was lost, else 0. */
int fy_vk_check_lost(fy_vk_dev *dev, fy_error *err);

/* The pipeline of kernel k specialised with spec[0..FY_VK_MAX_SPEC) (spec[0]
 * is the skew), created at first use; its layout in *layout. */
int fy_vk_pipeline(fy_vk_dev *dev, fy_vk_kernel k, const uint32_t *spec, VkPipeline *pipeline,
                   VkPipelineLayout *layout, VkDescriptorSetLayout *set_layout, fy_error *err);

/* Frees every kernel's objects (fy_vk_dev_free). */
void fy_vk_kernels_free(fy_vk_dev *dev);

const char *fy_vk_result_name(VkResult r);

/* Keeps the first recording error of c (vk_ops.c's argument checks);
 * returns code. */
int fy_vk_cmd_fail(fy_vk_cmd *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
