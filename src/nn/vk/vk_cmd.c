/* vk_cmd.c - the command recorder (see vk.h): one command buffer recorded,
 * submitted and waited for at a time, with a barrier between commands
 * unless the caller groups independent ones, descriptor sets from pools
 * reset per recording, and staging memory for small writes and reads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/vk/vk_impl.h"

#define MAX_READS       64
#define POOL_SETS       256 /* descriptor sets per pool; more pools as needed */
#define MAX_POOLS       64
#define MAX_GROUP_COUNT 65535u /* maxComputeWorkGroupCount's guaranteed minimum */

enum { IDLE, RECORDING, SUBMITTED };

typedef struct pending_read {
    void *dst;
    size_t off, bytes; /* in stage */
} pending_read;

struct fy_vk_cmd {
    fy_vk_dev *dev;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkDescriptorPool dpools[MAX_POOLS];
    int ndpools, dpool; /* pools made; the one allocating now */
    fy_vk_buf *stage;   /* host memory: writes and reads */
    size_t stage_bytes, stage_used;
    pending_read reads[MAX_READS];
    int nreads;
    int state;
    int parallel, pending; /* group mode; commands recorded since the last barrier */
    fy_error err;          /* the first recording error */
};

int fy_vk_cmd_fail(fy_vk_cmd *c, int code, const char *fmt, ...)
{
    if (c->err.code) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err.msg, sizeof c->err.msg, fmt, ap);
    va_end(ap);
    c->err.code = code;
    return code;
}

static int rec_check(fy_vk_cmd *c)
{
    if (c->state != RECORDING)
        return fy_vk_cmd_fail(c, FY_EINVAL, "Vulkan command recorded outside begin");
    return c->err.code;
}

static VkDescriptorPool new_pool(fy_vk_dev *dev)
{
    VkDescriptorPoolSize size = {
        .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = POOL_SETS * FY_VK_MAX_BINDINGS,
    };
    VkDescriptorPoolCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = POOL_SETS,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    VkDescriptorPool p = VK_NULL_HANDLE;
    if (dev->d.vkCreateDescriptorPool(dev->device, &ci, NULL, &p) != VK_SUCCESS)
        return VK_NULL_HANDLE;
    return p;
}

fy_vk_cmd *fy_vk_cmd_new(fy_vk_dev *dev, size_t stage_bytes, fy_error *err)
{
    if (fy_vk_check_lost(dev, err)) return NULL;
    fy_vk_cmd *c = calloc(1, sizeof *c);
    if (!c) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    c->dev = dev;
    VkCommandPoolCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = dev->queue_family,
    };
    VkResult r = dev->d.vkCreateCommandPool(dev->device, &pi, NULL, &c->pool);
    if (r != VK_SUCCESS) goto vkfail;
    VkCommandBufferAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = c->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    r = dev->d.vkAllocateCommandBuffers(dev->device, &ai, &c->cb);
    if (r != VK_SUCCESS) goto vkfail;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = dev->d.vkCreateFence(dev->device, &fi, NULL, &c->fence);
    if (r != VK_SUCCESS) goto vkfail;
    c->dpools[0] = new_pool(dev);
    if (!c->dpools[0]) {
        r = VK_ERROR_OUT_OF_HOST_MEMORY;
        goto vkfail;
    }
    c->ndpools = 1;
    if (stage_bytes) {
        c->stage = fy_vk_buf_new(dev, stage_bytes, FY_VK_MEM_HOST, err);
        if (!c->stage) goto fail;
        c->stage_bytes = stage_bytes;
    }
    return c;
vkfail:
    fy_vk_fail(dev, r, err, "creating a command recorder");
fail:
    fy_vk_cmd_free(c);
    return NULL;
}

void fy_vk_cmd_free(fy_vk_cmd *c)
{
    if (!c) return;
    fy_vk_dev *dev = c->dev;
    if (c->state == SUBMITTED && !atomic_load(&dev->lost))
        dev->d.vkWaitForFences(dev->device, 1, &c->fence, VK_TRUE, FY_VK_TIMEOUT_NS);
    for (int i = 0; i < c->ndpools; i++)
        dev->d.vkDestroyDescriptorPool(dev->device, c->dpools[i], NULL);
    if (c->fence) dev->d.vkDestroyFence(dev->device, c->fence, NULL);
    if (c->pool) dev->d.vkDestroyCommandPool(dev->device, c->pool, NULL);
    fy_vk_buf_free(c->stage);
    free(c);
}

fy_vk_dev *fy_vk_cmd_dev(fy_vk_cmd *c)
{
    return c->dev;
}

int fy_vk_cmd_begin(fy_vk_cmd *c, fy_error *err)
{
    fy_vk_dev *dev = c->dev;
    if (fy_vk_check_lost(dev, err)) return FY_EDEVICE;
    if (c->state == SUBMITTED)
        return fy_err(err, FY_EINVAL,
                      "Vulkan recorder: the previous submission was not waited for");
    fy_err_clear(&c->err);
    c->stage_used = 0;
    c->nreads = 0;
    c->parallel = c->pending = 0;
    c->dpool = 0;
    for (int i = 0; i < c->ndpools; i++) dev->d.vkResetDescriptorPool(dev->device, c->dpools[i], 0);
    VkResult r = dev->d.vkResetCommandPool(dev->device, c->pool, 0);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkResetCommandPool");
    VkCommandBufferBeginInfo bi = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    r = dev->d.vkBeginCommandBuffer(c->cb, &bi);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkBeginCommandBuffer");
    c->state = RECORDING;
    return 0;
}

/* Every earlier shader or transfer write is visible to every later read or
 * write (dst: the host as well when host is set). */
static void record_barrier(fy_vk_cmd *c, int host)
{
    VkMemoryBarrier mb = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
        .dstAccessMask = host ? VK_ACCESS_HOST_READ_BIT
                              : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
    };
    VkPipelineStageFlags src =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkPipelineStageFlags dst = host ? VK_PIPELINE_STAGE_HOST_BIT : src;
    c->dev->d.vkCmdPipelineBarrier(c->cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* Before each command: a barrier unless inside a group. */
static void order(fy_vk_cmd *c)
{
    if (c->pending && !c->parallel) {
        record_barrier(c, 0);
        c->pending = 0;
    }
    c->pending = 1;
}

void fy_vk_cmd_parallel(fy_vk_cmd *c, int on)
{
    if (on && !c->parallel && c->pending && c->state == RECORDING) {
        record_barrier(c, 0); /* the group waits for what came before it */
        c->pending = 0;
    }
    c->parallel = on;
}

static VkDescriptorSet alloc_set(fy_vk_cmd *c, VkDescriptorSetLayout layout)
{
    fy_vk_dev *dev = c->dev;
    for (;;) {
        VkDescriptorSetAllocateInfo ai = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = c->dpools[c->dpool],
            .descriptorSetCount = 1,
            .pSetLayouts = &layout,
        };
        VkDescriptorSet set = VK_NULL_HANDLE;
        VkResult r = dev->d.vkAllocateDescriptorSets(dev->device, &ai, &set);
        if (r == VK_SUCCESS) return set;
        if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
            return VK_NULL_HANDLE;
        if (c->dpool + 1 == c->ndpools) { /* all pools full: one more (kept for later steps) */
            if (c->ndpools == MAX_POOLS) return VK_NULL_HANDLE;
            VkDescriptorPool p = new_pool(dev);
            if (!p) return VK_NULL_HANDLE;
            c->dpools[c->ndpools++] = p;
        }
        c->dpool++;
    }
}

static int bind_buffers(fy_vk_cmd *c, VkDescriptorSet set, fy_vk_buf *const *bufs, int n)
{
    VkDescriptorBufferInfo info[FY_VK_MAX_BINDINGS];
    VkWriteDescriptorSet w[FY_VK_MAX_BINDINGS];
    for (int i = 0; i < n; i++) {
        if (!bufs[i])
            return fy_vk_cmd_fail(c, FY_EINVAL, "Vulkan dispatch: binding %d has no buffer", i);
        if (bufs[i]->size > c->dev->info->max_storage_range)
            return fy_vk_cmd_fail(
                c, FY_ELIMIT, "Vulkan buffer of %zu bytes is over the device's storage range %llu",
                bufs[i]->size, (unsigned long long)c->dev->info->max_storage_range);
        info[i] = (VkDescriptorBufferInfo){.buffer = bufs[i]->buffer, .range = VK_WHOLE_SIZE};
        w[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = (uint32_t)i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &info[i],
        };
    }
    c->dev->d.vkUpdateDescriptorSets(c->dev->device, (uint32_t)n, w, 0, NULL);
    return 0;
}

int fy_vk_cmd_dispatch(fy_vk_cmd *c, fy_vk_kernel k, const uint32_t *spec, int nspec,
                       fy_vk_buf *const *bufs, int nbufs, const void *push, size_t push_bytes,
                       uint32_t gx, uint32_t gy, uint32_t gz)
{
    if (rec_check(c)) return c->err.code;
    if ((unsigned)k >= FY_VK_K_COUNT)
        return fy_vk_cmd_fail(c, FY_EINVAL, "unknown Vulkan kernel %d", k);
    const fy_vk_kernel_desc *kd = &fy_vk_kernels[k];
    if (nbufs != kd->nbind || push_bytes != kd->push_size || nspec < 0 || nspec >= FY_VK_MAX_SPEC)
        return fy_vk_cmd_fail(c, FY_EINVAL, "%s: %d buffers, %zu push bytes, %d constants",
                              kd->name, nbufs, push_bytes, nspec);
    if (gx == 0 || gy == 0 || gz == 0) return 0; /* nothing to do */
    if (gx > MAX_GROUP_COUNT || gy > MAX_GROUP_COUNT || gz > MAX_GROUP_COUNT)
        return fy_vk_cmd_fail(c, FY_ELIMIT, "%s: %u x %u x %u workgroups is too many", kd->name, gx,
                              gy, gz);
    uint32_t sp[FY_VK_MAX_SPEC] = {c->dev->skew};
    for (int i = 0; i < nspec; i++) sp[i + 1] = spec[i];
    VkPipeline pipe;
    VkPipelineLayout layout;
    VkDescriptorSetLayout set_layout;
    fy_error perr = {0};
    if (fy_vk_pipeline(c->dev, k, sp, &pipe, &layout, &set_layout, &perr))
        return fy_vk_cmd_fail(c, perr.code, "%s", perr.msg);
    VkDescriptorSet set = alloc_set(c, set_layout);
    if (!set) return fy_vk_cmd_fail(c, FY_ENOMEM, "%s: no descriptor set", kd->name);
    if (bind_buffers(c, set, bufs, nbufs)) return c->err.code;
    order(c);
    const fy_vk_dfns *d = &c->dev->d;
    d->vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    d->vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    if (push_bytes)
        d->vkCmdPushConstants(c->cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_bytes,
                              push);
    d->vkCmdDispatch(c->cb, gx, gy, gz);
    return 0;
}

static int in_buffer(fy_vk_cmd *c, fy_vk_ref r, size_t bytes, const char *what)
{
    if (!r.buf || r.off > r.buf->size || bytes > r.buf->size - r.off)
        return fy_vk_cmd_fail(c, FY_EINVAL, "Vulkan %s of %zu bytes at %zu: outside the buffer",
                              what, bytes, r.off);
    return 0;
}

int fy_vk_cmd_copy(fy_vk_cmd *c, fy_vk_ref src, fy_vk_ref dst, size_t bytes)
{
    if (rec_check(c) || in_buffer(c, src, bytes, "copy") || in_buffer(c, dst, bytes, "copy"))
        return c->err.code;
    if (!bytes) return 0;
    order(c);
    VkBufferCopy region = {.srcOffset = src.off, .dstOffset = dst.off, .size = bytes};
    c->dev->d.vkCmdCopyBuffer(c->cb, src.buf->buffer, dst.buf->buffer, 1, &region);
    return 0;
}

int fy_vk_cmd_fill(fy_vk_cmd *c, fy_vk_ref dst, size_t bytes, uint32_t value)
{
    if (rec_check(c) || in_buffer(c, dst, bytes, "fill")) return c->err.code;
    if (dst.off % 4 || bytes % 4)
        return fy_vk_cmd_fail(c, FY_EINVAL, "Vulkan fill: offset and size must be multiples of 4");
    if (!bytes) return 0;
    order(c);
    c->dev->d.vkCmdFillBuffer(c->cb, dst.buf->buffer, dst.off, bytes, value);
    return 0;
}

/* bytes of the recorder's staging memory, 16-byte aligned, or -1. */
static long stage_take(fy_vk_cmd *c, size_t bytes)
{
    size_t at = (c->stage_used + 15) / 16 * 16;
    if (!c->stage || at > c->stage_bytes || bytes > c->stage_bytes - at) {
        fy_vk_cmd_fail(c, FY_ELIMIT, "Vulkan recorder: %zu bytes of staging memory are not enough",
                       c->stage_bytes);
        return -1;
    }
    c->stage_used = at + bytes;
    return (long)at;
}

int fy_vk_cmd_write(fy_vk_cmd *c, fy_vk_ref dst, const void *src, size_t bytes)
{
    if (rec_check(c) || in_buffer(c, dst, bytes, "write")) return c->err.code;
    if (!bytes) return 0;
    long at = stage_take(c, bytes);
    if (at < 0) return c->err.code;
    memcpy((char *)c->stage->map + at, src, bytes);
    return fy_vk_cmd_copy(c, fy_vk_at(c->stage, (size_t)at), dst, bytes);
}

int fy_vk_cmd_read(fy_vk_cmd *c, fy_vk_ref src, void *dst, size_t bytes)
{
    if (rec_check(c) || in_buffer(c, src, bytes, "read")) return c->err.code;
    if (!bytes) return 0;
    if (c->nreads == MAX_READS)
        return fy_vk_cmd_fail(c, FY_ELIMIT, "Vulkan recorder: more than %d reads", MAX_READS);
    long at = stage_take(c, bytes);
    if (at < 0) return c->err.code;
    c->reads[c->nreads++] = (pending_read){dst, (size_t)at, bytes};
    return fy_vk_cmd_copy(c, src, fy_vk_at(c->stage, (size_t)at), bytes);
}

int fy_vk_cmd_submit(fy_vk_cmd *c, fy_error *err)
{
    fy_vk_dev *dev = c->dev;
    if (c->state != RECORDING)
        return fy_err(err, FY_EINVAL, "Vulkan recorder: submit without begin");
    if (c->err.code) { /* nothing recorded is run */
        dev->d.vkEndCommandBuffer(c->cb);
        c->state = IDLE;
        return fy_err(err, c->err.code, "%s", c->err.msg);
    }
    if (c->pending) record_barrier(c, 1); /* results visible to the host after the fence */
    VkResult r = dev->d.vkEndCommandBuffer(c->cb);
    c->state = IDLE;
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkEndCommandBuffer");
    if (fy_vk_check_lost(dev, err)) return FY_EDEVICE;
    r = dev->d.vkResetFences(dev->device, 1, &c->fence);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkResetFences");
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &c->cb,
    };
    pthread_mutex_lock(&dev->queue_lock);
    r = dev->d.vkQueueSubmit(dev->queue, 1, &si, c->fence);
    pthread_mutex_unlock(&dev->queue_lock);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkQueueSubmit");
    c->state = SUBMITTED;
    return 0;
}

int fy_vk_cmd_wait(fy_vk_cmd *c, uint64_t timeout_ns, fy_error *err)
{
    fy_vk_dev *dev = c->dev;
    if (c->state != SUBMITTED) return fy_err(err, FY_EINVAL, "Vulkan recorder: nothing submitted");
    VkResult r = dev->d.vkWaitForFences(dev->device, 1, &c->fence, VK_TRUE, timeout_ns);
    if (r == VK_TIMEOUT) return fy_vk_fail(dev, r, err, "waiting for a command buffer");
    c->state = IDLE;
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkWaitForFences");
    for (int i = 0; i < c->nreads; i++)
        memcpy(c->reads[i].dst, (char *)c->stage->map + c->reads[i].off, c->reads[i].bytes);
    c->nreads = 0;
    return 0;
}

int fy_vk_cmd_run(fy_vk_cmd *c, uint64_t timeout_ns, fy_error *err)
{
    int rc = fy_vk_cmd_submit(c, err);
    return rc ? rc : fy_vk_cmd_wait(c, timeout_ns, err);
}
