/* vk_kernels.c - the kernel table and their pipelines: shader modules from
 * the embedded SPIR-V (the variant the device's float controls allow),
 * descriptor-set and pipeline layouts, one pipeline per specialisation. */
#include <string.h>

#include "nn/vk/vk_impl.h"
#include "nn/vk/vk_push.h"
#include "nn/vk/vk_spirv.h"

const fy_vk_kernel_desc fy_vk_kernels[FY_VK_K_COUNT] = {
    [FY_VK_K_QUANTIZE] = {"quantize", 2, sizeof(fy_vk_push_quantize), 0},
    [FY_VK_K_GEMM_I8] = {"gemm_i8", 5, sizeof(fy_vk_push_gemm), 0},
    [FY_VK_K_GEMM_I8_ROWS] = {"gemm_i8_rows", 6, sizeof(fy_vk_push_gemm_rows), 0},
    [FY_VK_K_GEMM_I8_DOT] = {"gemm_i8_dot", 7, sizeof(fy_vk_push_gemm_dot), 1},
    [FY_VK_K_GEMM_F32] = {"gemm_f32", 5, sizeof(fy_vk_push_gemm_f32), 0},
    [FY_VK_K_ADD_NORM] = {"add_norm", 4, sizeof(fy_vk_push_add_norm), 0},
    [FY_VK_K_RELU] = {"relu", 1, sizeof(fy_vk_push_relu), 0},
    [FY_VK_K_SSRU] = {"ssru", 4, sizeof(fy_vk_push_ssru), 0},
    [FY_VK_K_EMBED] = {"embed", 5, sizeof(fy_vk_push_embed), 0},
    [FY_VK_K_ATTEND] = {"attend", 5, sizeof(fy_vk_push_attend), 0},
    [FY_VK_K_SOFTMAX] = {"softmax", 1, sizeof(fy_vk_push_softmax), 0},
    [FY_VK_K_PICK] = {"pick", 4, sizeof(fy_vk_push_select), 0},
    [FY_VK_K_TOPK] = {"topk", 5, sizeof(fy_vk_push_select), 0},
    [FY_VK_K_GATHER] = {"gather", 3, sizeof(fy_vk_push_gather), 0},
};

const char *fy_vk_kernel_name(fy_vk_kernel k)
{
    return (unsigned)k < FY_VK_K_COUNT ? fy_vk_kernels[k].name : "?";
}

static const fy_vk_spirv *find_spirv(const char *name, int variant)
{
    for (size_t i = 0; i < fy_vk_spirv_count; i++)
        if (fy_vk_spirv_table[i].variant == variant && !strcmp(fy_vk_spirv_table[i].name, name))
            return &fy_vk_spirv_table[i];
    return NULL;
}

/* The kernel's module and layouts (once per device). */
static int kernel_init(fy_vk_dev *dev, fy_vk_kernel k, fy_error *err)
{
    const fy_vk_kernel_desc *kd = &fy_vk_kernels[k];
    fy_vk_kernel_objs *o = &dev->kernels[k];
    if (kd->needs_int_dot && !dev->info->int_dot)
        return fy_err(err, FY_EUNSUPPORTED, "%s: %s needs shaderIntegerDotProduct", dev->info->name,
                      kd->name);
    const fy_vk_spirv *sp = find_spirv(kd->name, dev->variant);
    if (!sp) return fy_err(err, FY_ENOTFOUND, "no SPIR-V for kernel %s", kd->name);
    VkShaderModuleCreateInfo mi = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = sp->nwords * 4,
        .pCode = sp->words,
    };
    /* Pieces left by an earlier failed try are made again. */
    if (o->module) dev->d.vkDestroyShaderModule(dev->device, o->module, NULL);
    if (o->set_layout) dev->d.vkDestroyDescriptorSetLayout(dev->device, o->set_layout, NULL);
    o->module = VK_NULL_HANDLE;
    o->set_layout = VK_NULL_HANDLE;
    VkResult r = dev->d.vkCreateShaderModule(dev->device, &mi, NULL, &o->module);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkCreateShaderModule");
    VkDescriptorSetLayoutBinding b[FY_VK_MAX_BINDINGS];
    for (int i = 0; i < kd->nbind; i++)
        b[i] = (VkDescriptorSetLayoutBinding){
            .binding = (uint32_t)i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo li = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = (uint32_t)kd->nbind,
        .pBindings = b,
    };
    r = dev->d.vkCreateDescriptorSetLayout(dev->device, &li, NULL, &o->set_layout);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkCreateDescriptorSetLayout");
    VkPushConstantRange pr = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = kd->push_size,
    };
    VkPipelineLayoutCreateInfo pi = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &o->set_layout,
        .pushConstantRangeCount = kd->push_size ? 1 : 0,
        .pPushConstantRanges = &pr,
    };
    r = dev->d.vkCreatePipelineLayout(dev->device, &pi, NULL, &o->layout);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkCreatePipelineLayout");
    return 0;
}

static int pipeline_new(fy_vk_dev *dev, fy_vk_kernel k, const uint32_t *spec, VkPipeline *out,
                        fy_error *err)
{
    fy_vk_kernel_objs *o = &dev->kernels[k];
    VkSpecializationMapEntry map[FY_VK_MAX_SPEC];
    for (uint32_t i = 0; i < FY_VK_MAX_SPEC; i++)
        map[i] = (VkSpecializationMapEntry){.constantID = i, .offset = i * 4, .size = 4};
    VkSpecializationInfo si = {
        .mapEntryCount = FY_VK_MAX_SPEC,
        .pMapEntries = map,
        .dataSize = FY_VK_MAX_SPEC * 4,
        .pData = spec,
    };
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = o->module,
                .pName = "main",
                .pSpecializationInfo = &si,
            },
        .layout = o->layout,
    };
    VkResult r = dev->d.vkCreateComputePipelines(dev->device, VK_NULL_HANDLE, 1, &ci, NULL, out);
    if (r != VK_SUCCESS) return fy_vk_fail(dev, r, err, "vkCreateComputePipelines");
    return 0;
}

int fy_vk_pipeline(fy_vk_dev *dev, fy_vk_kernel k, const uint32_t *spec, VkPipeline *pipeline,
                   VkPipelineLayout *layout, VkDescriptorSetLayout *set_layout, fy_error *err)
{
    fy_vk_kernel_objs *o = &dev->kernels[k];
    int rc = 0;
    pthread_mutex_lock(&dev->pipe_lock);
    if (!o->layout) rc = kernel_init(dev, k, err);
    int i = 0;
    for (; !rc && i < o->npipes; i++)
        if (!memcmp(o->pipes[i].spec, spec, sizeof o->pipes[i].spec)) break;
    if (!rc && i == o->npipes) {
        if (o->npipes == FY_VK_MAX_VARIANTS)
            rc = fy_err(err, FY_ELIMIT, "%s: too many specialisations", fy_vk_kernels[k].name);
        else
            rc = pipeline_new(dev, k, spec, &o->pipes[i].pipeline, err);
        if (!rc) {
            memcpy(o->pipes[i].spec, spec, sizeof o->pipes[i].spec);
            o->npipes++;
        }
    }
    if (!rc) {
        *pipeline = o->pipes[i].pipeline;
        *layout = o->layout;
        *set_layout = o->set_layout;
    }
    pthread_mutex_unlock(&dev->pipe_lock);
    return rc;
}

int fy_vk_dev_prepare(fy_vk_dev *dev, fy_error *err)
{
    if (fy_vk_check_lost(dev, err)) return FY_EDEVICE;
    for (int k = 0; k < FY_VK_K_COUNT; k++) {
        if (fy_vk_kernels[k].needs_int_dot && !dev->info->int_dot) continue;
        uint32_t spec[FY_VK_MAX_SPEC] = {dev->skew};
        VkPipeline p;
        VkPipelineLayout l;
        VkDescriptorSetLayout s;
        int rc = fy_vk_pipeline(dev, (fy_vk_kernel)k, spec, &p, &l, &s, err);
        if (!rc && k == FY_VK_K_GEMM_I8_DOT) { /* and its pair mode */
            spec[1] = 1;
            rc = fy_vk_pipeline(dev, (fy_vk_kernel)k, spec, &p, &l, &s, err);
        }
        if (rc) return rc;
    }
    return 0;
}

void fy_vk_kernels_free(fy_vk_dev *dev)
{
    for (int k = 0; k < FY_VK_K_COUNT; k++) {
        fy_vk_kernel_objs *o = &dev->kernels[k];
        for (int i = 0; i < o->npipes; i++)
            dev->d.vkDestroyPipeline(dev->device, o->pipes[i].pipeline, NULL);
        if (o->layout) dev->d.vkDestroyPipelineLayout(dev->device, o->layout, NULL);
        if (o->set_layout) dev->d.vkDestroyDescriptorSetLayout(dev->device, o->set_layout, NULL);
        if (o->module) dev->d.vkDestroyShaderModule(dev->device, o->module, NULL);
        memset(o, 0, sizeof *o);
    }
}
