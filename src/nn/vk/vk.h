/* vk.h - the Vulkan compute runtime under the GPU backend (internal to
 * src/nn; built only with FANYI_VULKAN, see docs/gpu.md).
 *
 * No Vulkan header here: callers see opaque handles. libvulkan.so.1 is
 * opened at run time (dlopen), so a binary built with this code runs, and
 * reports Vulkan unavailable with a clear message, where there is no
 * loader, no driver or no device.
 *
 *   fy_vk       the loaded library and one VkInstance; lists the devices
 *   fy_vk_dev   one logical device with a compute queue, its pipelines and
 *               memory types; shared by every worker using that GPU
 *   fy_vk_buf   a buffer in device memory (or, FY_VK_MEM_HOST, in mapped
 *               host memory)
 *   fy_vk_cmd   a command recorder: one worker's command pool, command
 *               buffer, fence, descriptor pools and staging memory
 *
 * Errors: 0 or a negative FY_E* code with a message in err. A lost device
 * (VK_ERROR_DEVICE_LOST) is FY_EDEVICE, out of device memory
 * (VK_ERROR_OUT_OF_DEVICE_MEMORY) FY_EDEVMEM, so that a server can give the
 * batch back to other workers; after FY_EDEVICE every call on that device
 * fails at once with FY_EDEVICE. A wait past its timeout is FY_ETIMEOUT.
 *
 * Threads: fy_vk_open/fy_vk_close and fy_vk_dev_new/fy_vk_dev_free are not
 * concurrent with anything else on the same object. Every other fy_vk_dev
 * call (buffers, upload/download, pipelines, fy_vk_cmd_new/free) is
 * thread-safe. A fy_vk_cmd is used by one thread at a time; any number of
 * recorders on one device may record and submit concurrently (queue
 * submission is serialised inside). Buffers shared between recorders are
 * the caller's to synchronise (read-only weights need nothing).
 */
#ifndef FY_NN_VK_VK_H
#define FY_NN_VK_VK_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_vk fy_vk;
typedef struct fy_vk_dev fy_vk_dev;
typedef struct fy_vk_buf fy_vk_buf;
typedef struct fy_vk_cmd fy_vk_cmd;

/* ---- instance and devices ---------------------------------------------------- */

/* What a device offers, as `fanyi devices` prints it. */
typedef struct fy_vk_info {
    int index;        /* n in "vulkan:n" */
    char name[256];   /* VkPhysicalDeviceProperties.deviceName */
    char driver[256]; /* driver name and info ("llvmpipe", "NVIDIA 550.54") */
    const char *type; /* "discrete", "integrated", "virtual", "cpu", "other" */
    uint32_t vendor_id, device_id;
    uint32_t api_version; /* VK_MAKE_API_VERSION */
    uint64_t memory;      /* bytes of the largest device-local heap */
    int float64, int64, int16, int8;
    int int_dot;                 /* shaderIntegerDotProduct */
    int int_dot_accel;           /* 4x8-bit packed mixed-signedness dot product accelerated */
    int coopmat_khr, coopmat_nv; /* VK_KHR_cooperative_matrix, VK_NV_cooperative_matrix */
    uint32_t subgroup_size;
    int denorm_preserve32;     /* shaderDenormPreserveFloat32 */
    int szinp32;               /* shaderSignedZeroInfNanPreserveFloat32 */
    int rte32, rte64;          /* shaderRoundingModeRTEFloat32 / Float64 */
    int rounding_independence; /* VkShaderFloatControlsIndependence: 0 32-bit only, 1 all, 2 none */
    uint32_t max_shared;       /* maxComputeSharedMemorySize */
    uint64_t max_storage_range; /* maxStorageBufferRange: a buffer a shader sees whole */
    /* Usable for exact inference: Vulkan 1.3, a compute queue, fp64, RTE for
     * fp32 and fp64, workgroups of 256. If not, why_not says what is missing. */
    int usable;
    char why_not[128];
} fy_vk_info;

/* Loads libvulkan.so.1 and creates an instance. FY_EUNSUPPORTED with a
 * message ("no Vulkan loader (libvulkan.so.1): ...", "no Vulkan driver")
 * where Vulkan cannot run; a machine with a loader and no device opens
 * fine with fy_vk_device_count() == 0. Close with fy_vk_close. */
int fy_vk_open(fy_vk **out, fy_error *err);

/* Destroys the instance and unloads the library; NULL is harmless. Every
 * device opened from vk must be freed first. */
void fy_vk_close(fy_vk *vk);

int fy_vk_device_count(const fy_vk *vk);

/* Device i's features (0 <= i < count); borrowed, valid until fy_vk_close. */
const fy_vk_info *fy_vk_device_info(const fy_vk *vk, int i);

/* The device a "vulkan:N" name, or FANYI_VK_DEVICE, or the first usable
 * discrete GPU, else the first usable device, picks: index or -1. */
int fy_vk_pick_device(const fy_vk *vk, const char *want);

/* Opens device index with one compute queue; FY_EUNSUPPORTED if it is not
 * usable (the message says why). skew != 0 makes div_rn and sqrt_rn start
 * one ulp off (test builds: their fix-up path runs; results unchanged).
 * The device chooses the SPIR-V variant matching its float controls. */
fy_vk_dev *fy_vk_dev_new(fy_vk *vk, int index, int skew, fy_error *err);

/* Waits for the device to go idle and frees it; NULL is harmless. Every
 * buffer and recorder of dev must be freed first. */
void fy_vk_dev_free(fy_vk_dev *dev);

const fy_vk_info *fy_vk_dev_info(const fy_vk_dev *dev);

/* 1 once the device was lost (then every call fails with FY_EDEVICE). */
int fy_vk_dev_lost(const fy_vk_dev *dev);

/* Which SPIR-V variant the device runs (bit 0: DenormPreserve 32, bit 1:
 * SignedZeroInfNanPreserve 32). */
int fy_vk_dev_variant(const fy_vk_dev *dev);

/* ---- buffers ----------------------------------------------------------------- */

typedef enum {
    FY_VK_MEM_DEVICE, /* device-local; mapped too where the device-local memory is
                         host-visible (integrated GPUs, resizable BAR, lavapipe),
                         unless FANYI_VK_STAGING=1 */
    FY_VK_MEM_HOST,   /* host-visible, coherent, always mapped: staging and read-back */
} fy_vk_mem;

/* A buffer of bytes (> 0) usable as a storage buffer and a copy source and
 * destination. FY_EDEVMEM when the device is out of memory. */
fy_vk_buf *fy_vk_buf_new(fy_vk_dev *dev, size_t bytes, fy_vk_mem where, fy_error *err);

/* Frees b; NULL is harmless. b must not be in use by a submitted command. */
void fy_vk_buf_free(fy_vk_buf *b);

size_t fy_vk_buf_size(const fy_vk_buf *b);

/* The buffer's host mapping, or NULL when it is not host-visible. Writes
 * through it are visible to commands submitted afterwards; results of a
 * command are visible here after its fy_vk_cmd_wait. */
void *fy_vk_buf_map(fy_vk_buf *b);

/* Synchronous copies between host memory and b at byte offset off (load
 * time: weights, tables): through the mapping when there is one, else
 * through a staging buffer and a one-off command (serialised per device).
 * off and bytes need not be aligned. */
int fy_vk_upload(fy_vk_buf *b, size_t off, const void *src, size_t bytes, fy_error *err);
int fy_vk_download(fy_vk_buf *b, size_t off, void *dst, size_t bytes, fy_error *err);

/* A place in a buffer: byte offset off (a multiple of 4 for every use in
 * fy_vk_cmd_dispatch and the ops). */
typedef struct fy_vk_ref {
    fy_vk_buf *buf;
    size_t off;
} fy_vk_ref;

static inline fy_vk_ref fy_vk_at(fy_vk_buf *buf, size_t off)
{
    fy_vk_ref r = {buf, off};
    return r;
}

/* ---- kernels ------------------------------------------------------------------- */

/* The compute shaders (src/nn/vk/shaders/<name>.comp); vk_ops.h records them. */
typedef enum {
    FY_VK_K_QUANTIZE,
    FY_VK_K_GEMM_I8,
    FY_VK_K_GEMM_I8_ROWS,
    FY_VK_K_GEMM_I8_DOT,
    FY_VK_K_GEMM_F32,
    FY_VK_K_ADD_NORM,
    FY_VK_K_RELU,
    FY_VK_K_SSRU,
    FY_VK_K_EMBED,
    FY_VK_K_ATTEND,
    FY_VK_K_SOFTMAX,
    FY_VK_K_PICK,
    FY_VK_K_TOPK,
    FY_VK_K_GATHER,
    FY_VK_K_COUNT
} fy_vk_kernel;

/* The shader's name ("gemm_i8"). */
const char *fy_vk_kernel_name(fy_vk_kernel k);

/* Creates every pipeline now (model load), so that no dispatch creates one
 * later. Optional: a dispatch creates its pipeline at first use. */
int fy_vk_dev_prepare(fy_vk_dev *dev, fy_error *err);

/* ---- command recorder ------------------------------------------------------- */

/* A recorder with stage_bytes of mapped host memory for fy_vk_cmd_write and
 * fy_vk_cmd_read (per recording; 0 is allowed if neither is used). */
fy_vk_cmd *fy_vk_cmd_new(fy_vk_dev *dev, size_t stage_bytes, fy_error *err);

/* Frees c (waiting for its submitted work first); NULL is harmless. */
void fy_vk_cmd_free(fy_vk_cmd *c);

fy_vk_dev *fy_vk_cmd_dev(fy_vk_cmd *c);

/* Starts a recording (the previous one must have been waited for). */
int fy_vk_cmd_begin(fy_vk_cmd *c, fy_error *err);

/* Recording calls. They return 0 or a negative code; the first error is
 * also kept and returned by fy_vk_cmd_submit, so a sequence of recording
 * calls may be checked once at the end.
 *
 * Order: every command waits for every earlier command of the recording
 * (a full barrier is recorded between them) unless both lie between
 * fy_vk_cmd_parallel(c, 1) and fy_vk_cmd_parallel(c, 0): commands there
 * must touch independent memory (e.g. the Wq, Wk and Wv products) and may
 * overlap. */
void fy_vk_cmd_parallel(fy_vk_cmd *c, int on);

/* Dispatches kernel k with groups gx·gy·gz. bufs: the shader's bindings in
 * order (whole buffers are bound; offsets go in the push constants: see
 * vk_ops.h), push: push-constant bytes (<= 128). spec: the kernel's
 * specialization constants from constant_id 1 on (nspec <= 6; id 0 is the
 * device's skew). */
int fy_vk_cmd_dispatch(fy_vk_cmd *c, fy_vk_kernel k, const uint32_t *spec, int nspec,
                       fy_vk_buf *const *bufs, int nbufs, const void *push, size_t push_bytes,
                       uint32_t gx, uint32_t gy, uint32_t gz);

/* Copies bytes from src to dst (device side). */
int fy_vk_cmd_copy(fy_vk_cmd *c, fy_vk_ref src, fy_vk_ref dst, size_t bytes);

/* Fills bytes (a multiple of 4) at dst with the 32-bit word value. */
int fy_vk_cmd_fill(fy_vk_cmd *c, fy_vk_ref dst, size_t bytes, uint32_t value);

/* Writes host data into dst when the command runs: copied into the
 * recorder's staging memory now (src may be reused at once). For small
 * per-step inputs (ids, path scores, row maps). */
int fy_vk_cmd_write(fy_vk_cmd *c, fy_vk_ref dst, const void *src, size_t bytes);

/* Reads bytes from src into host memory dst when the command has run: dst
 * must stay valid until fy_vk_cmd_wait returns 0, which fills it. */
int fy_vk_cmd_read(fy_vk_cmd *c, fy_vk_ref src, void *dst, size_t bytes);

/* Ends the recording and submits it. Returns the first recording error if
 * there was one (nothing is submitted then). */
int fy_vk_cmd_submit(fy_vk_cmd *c, fy_error *err);

/* Waits up to timeout_ns for the submitted work, then fills the
 * fy_vk_cmd_read destinations. FY_ETIMEOUT leaves the work in flight (wait
 * again, or treat the device as hung); FY_EDEVICE marks the device lost. */
int fy_vk_cmd_wait(fy_vk_cmd *c, uint64_t timeout_ns, fy_error *err);

/* fy_vk_cmd_submit then fy_vk_cmd_wait. */
int fy_vk_cmd_run(fy_vk_cmd *c, uint64_t timeout_ns, fy_error *err);

/* Default wait for a command: 10 s (a decoder step takes milliseconds). */
#define FY_VK_TIMEOUT_NS 10000000000ull

#endif
