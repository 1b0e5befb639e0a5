/* vk_device.c - a logical device with one compute queue, its memory types,
 * buffers and the synchronous upload/download path (see vk.h). */
#include <stdlib.h>
#include <string.h>

#include "nn/vk/vk_impl.h"

int fy_vk_fail(fy_vk_dev *dev, VkResult r, fy_error *err, const char *what)
{
    const char *name = dev && dev->info ? dev->info->name : "Vulkan";
    switch (r) {
    case VK_ERROR_DEVICE_LOST:
        if (dev) atomic_store(&dev->lost, 1);
        return fy_err(err, FY_EDEVICE, "%s: device lost (%s)", name, what);
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return fy_err(err, FY_EDEVMEM, "%s: out of device memory (%s)", name, what);
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return fy_err(err, FY_ENOMEM, "%s: out of host memory (%s)", name, what);
    case VK_TIMEOUT:
        return fy_err(err, FY_ETIMEOUT, "%s: timed out (%s)", name, what);
    default:
        return fy_err(err, FY_EIO, "%s: %s failed: %s", name, what, fy_vk_result_name(r));
    }
}

int fy_vk_check_lost(fy_vk_dev *dev, fy_error *err)
{
    if (!atomic_load(&dev->lost)) return 0;
    return fy_err(err, FY_EDEVICE, "%s: device lost", dev->info->name);
}

static uint32_t compute_family(fy_vk *vk, VkPhysicalDevice pd)
{
    uint32_t n = 0;
    VkQueueFamilyProperties q[16];
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    if (n > 16) n = 16;
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* a compute-only family first (NVIDIA's async compute), else any with compute */
    for (uint32_t i = 0; i < n; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            return i;
    for (uint32_t i = 0; i < n; i++)
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
    return 0;
}

/* Memory types: device-local (mapped as well where the device-local
 * memory in the largest heap is host-visible: integrated GPUs, resizable
 * BAR, lavapipe); host: visible and coherent, cached preferred. */
static void choose_memory(fy_vk_dev *dev)
{
    VkPhysicalDeviceMemoryProperties mp;
    dev->vk->f.vkGetPhysicalDeviceMemoryProperties(dev->phys, &mp);
    const VkMemoryPropertyFlags mapped =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int dev_plain = -1, dev_mapped = -1, host = -1, host_cached = -1;
    VkDeviceSize big = 0;
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            mp.memoryHeaps[i].size > big)
            big = mp.memoryHeaps[i].size;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        VkDeviceSize heap = mp.memoryHeaps[mp.memoryTypes[i].heapIndex].size;
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && dev_plain < 0) dev_plain = (int)i;
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & mapped) == mapped && heap == big &&
            dev_mapped < 0)
            dev_mapped = (int)i;
        if ((f & mapped) == mapped && host < 0) host = (int)i;
        if ((f & mapped) == mapped && (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) && host_cached < 0)
            host_cached = (int)i;
    }
    /* FANYI_VK_STAGING=1: device memory is never mapped, so uploads and
     * downloads take the staging path of discrete GPUs (its tests). */
    const char *staging = getenv("FANYI_VK_STAGING");
    dev->device_mapped = dev_mapped >= 0 && !(staging && *staging && *staging != '0');
    dev->mem_device = (uint32_t)(dev_mapped >= 0 ? dev_mapped : dev_plain >= 0 ? dev_plain : 0);
    dev->mem_host = (uint32_t)(host_cached >= 0 ? host_cached : host >= 0 ? host : 0);
}

static int load_device_fns(fy_vk_dev *dev, fy_error *err)
{
    PFN_vkGetDeviceProcAddr get = dev->vk->f.vkGetDeviceProcAddr;
#define LOAD(fn)                                                                                   \
    dev->d.fn = (PFN_##fn)get(dev->device, #fn);                                                   \
    if (!dev->d.fn) return fy_err(err, FY_EUNSUPPORTED, "Vulkan device lacks %s", #fn);
    FY_VK_DEVICE_FNS(LOAD)
#undef LOAD
    return 0;
}

static int create_device(fy_vk_dev *dev, fy_error *err)
{
    const fy_vk_info *in = dev->info;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = dev->queue_family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .shaderIntegerDotProduct = in->int_dot ? VK_TRUE : VK_FALSE,
    };
    VkPhysicalDeviceFeatures2 f2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f13,
        .features = {.shaderFloat64 = VK_TRUE},
    };
    VkDeviceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = &f2,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &q,
    };
    VkResult r = dev->vk->f.vkCreateDevice(dev->phys, &ci, NULL, &dev->device);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkCreateDevice");
    if (load_device_fns(dev, err)) return err ? err->code : FY_EUNSUPPORTED;
    dev->d.vkGetDeviceQueue(dev->device, dev->queue_family, 0, &dev->queue);
    return 0;
}

fy_vk_dev *fy_vk_dev_new(fy_vk *vk, int index, int skew, fy_error *err)
{
    const fy_vk_info *in = fy_vk_device_info(vk, index);
    if (!in) {
        fy_err(err, FY_ENOTFOUND, "no Vulkan device vulkan:%d (%d found)", index,
               fy_vk_device_count(vk));
        return NULL;
    }
    if (!in->usable) {
        fy_err(err, FY_EUNSUPPORTED, "vulkan:%d (%s) cannot run the exact kernels: %s", index,
               in->name, in->why_not);
        return NULL;
    }
    fy_vk_dev *dev = calloc(1, sizeof *dev);
    if (!dev) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    dev->vk = vk;
    dev->info = in;
    dev->phys = vk->phys[index];
    dev->skew = skew ? 1u : 0u;
    dev->variant = (in->denorm_preserve32 ? 1 : 0) | (in->szinp32 ? 2 : 0);
    atomic_init(&dev->lost, 0);
    pthread_mutex_init(&dev->queue_lock, NULL);
    pthread_mutex_init(&dev->pipe_lock, NULL);
    pthread_mutex_init(&dev->xfer_lock, NULL);
    dev->queue_family = compute_family(vk, dev->phys);
    choose_memory(dev);
    if (create_device(dev, err)) goto fail;
    return dev;
fail:
    fy_vk_dev_free(dev);
    return NULL;
}

void fy_vk_dev_free(fy_vk_dev *dev)
{
    if (!dev) return;
    if (dev->device) {
        dev->d.vkDeviceWaitIdle(dev->device);
        fy_vk_cmd_free(dev->xfer);
        fy_vk_kernels_free(dev);
        dev->d.vkDestroyDevice(dev->device, NULL);
    }
    pthread_mutex_destroy(&dev->queue_lock);
    pthread_mutex_destroy(&dev->pipe_lock);
    pthread_mutex_destroy(&dev->xfer_lock);
    free(dev);
}

const fy_vk_info *fy_vk_dev_info(const fy_vk_dev *dev)
{
    return dev->info;
}

int fy_vk_dev_lost(const fy_vk_dev *dev)
{
    return atomic_load(&((fy_vk_dev *)dev)->lost);
}

int fy_vk_dev_variant(const fy_vk_dev *dev)
{
    return dev->variant;
}

/* ---- buffers ------------------------------------------------------------------- */

fy_vk_buf *fy_vk_buf_new(fy_vk_dev *dev, size_t bytes, fy_vk_mem where, fy_error *err)
{
    if (fy_vk_check_lost(dev, err)) return NULL;
    if (bytes == 0) {
        fy_err(err, FY_EINVAL, "empty Vulkan buffer");
        return NULL;
    }
    fy_vk_buf *b = calloc(1, sizeof *b);
    if (!b) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    b->dev = dev;
    b->size = bytes;
    VkBufferCreateInfo bi = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = bytes,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult r = dev->d.vkCreateBuffer(dev->device, &bi, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        fy_vk_fail(dev, r, err, "vkCreateBuffer");
        goto fail;
    }
    VkMemoryRequirements req;
    dev->d.vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
    uint32_t type = where == FY_VK_MEM_HOST ? dev->mem_host : dev->mem_device;
    if (!(req.memoryTypeBits & (1u << type))) {
        fy_err(err, FY_EUNSUPPORTED, "%s: no suitable memory type for a buffer", dev->info->name);
        goto fail;
    }
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    r = dev->d.vkAllocateMemory(dev->device, &ai, NULL, &b->memory);
    if (r != VK_SUCCESS) {
        fy_vk_fail(dev, r, err, "vkAllocateMemory");
        goto fail;
    }
    r = dev->d.vkBindBufferMemory(dev->device, b->buffer, b->memory, 0);
    if (r != VK_SUCCESS) {
        fy_vk_fail(dev, r, err, "vkBindBufferMemory");
        goto fail;
    }
    if (where == FY_VK_MEM_HOST || dev->device_mapped) {
        r = dev->d.vkMapMemory(dev->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map);
        if (r != VK_SUCCESS) {
            fy_vk_fail(dev, r, err, "vkMapMemory");
            goto fail;
        }
    }
    return b;
fail:
    fy_vk_buf_free(b);
    return NULL;
}

void fy_vk_buf_free(fy_vk_buf *b)
{
    if (!b) return;
    fy_vk_dev *dev = b->dev;
    if (b->buffer) dev->d.vkDestroyBuffer(dev->device, b->buffer, NULL);
    if (b->memory) dev->d.vkFreeMemory(dev->device, b->memory, NULL); /* unmaps too */
    free(b);
}

size_t fy_vk_buf_size(const fy_vk_buf *b)
{
    return b->size;
}

void *fy_vk_buf_map(fy_vk_buf *b)
{
    return b->map;
}

/* ---- synchronous transfers --------------------------------------------------------
 * Without a mapping: in chunks through the transfer recorder's staging
 * memory, one submit each, under xfer_lock. */
#define XFER_CHUNK (4u << 20)

static int xfer(fy_vk_buf *b, size_t off, void *host, size_t bytes, int up, fy_error *err)
{
    fy_vk_dev *dev = b->dev;
    if (fy_vk_check_lost(dev, err)) return FY_EDEVICE;
    if (off > b->size || bytes > b->size - off)
        return fy_err(err, FY_EINVAL, "Vulkan transfer of %zu bytes at %zu past a %zu-byte buffer",
                      bytes, off, b->size);
    if (b->map) {
        if (up)
            memcpy((char *)b->map + off, host, bytes);
        else
            memcpy(host, (char *)b->map + off, bytes);
        return 0;
    }
    pthread_mutex_lock(&dev->xfer_lock);
    int rc = 0;
    if (!dev->xfer) dev->xfer = fy_vk_cmd_new(dev, XFER_CHUNK, err);
    if (!dev->xfer) rc = err ? err->code : FY_ENOMEM;
    for (size_t done = 0; !rc && done < bytes; done += XFER_CHUNK) {
        size_t n = bytes - done < XFER_CHUNK ? bytes - done : XFER_CHUNK;
        fy_vk_ref at = fy_vk_at(b, off + done);
        char *h = (char *)host + done;
        rc = fy_vk_cmd_begin(dev->xfer, err);
        if (rc) break;
        if (up)
            fy_vk_cmd_write(dev->xfer, at, h, n);
        else
            fy_vk_cmd_read(dev->xfer, at, h, n);
        rc = fy_vk_cmd_run(dev->xfer, FY_VK_TIMEOUT_NS, err); /* reports a recording error too */
    }
    pthread_mutex_unlock(&dev->xfer_lock);
    return rc;
}

int fy_vk_upload(fy_vk_buf *b, size_t off, const void *src, size_t bytes, fy_error *err)
{
    return xfer(b, off, (void *)src, bytes, 1, err);
}

int fy_vk_download(fy_vk_buf *b, size_t off, void *dst, size_t bytes, fy_error *err)
{
    return xfer(b, off, dst, bytes, 0, err);
}
