/* vk_instance.c - loading libvulkan.so.1, the instance, and what each
 * physical device offers (see vk.h). */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/vk/vk_impl.h"

/* FANYI_VULKAN_LIBRARY names another loader (a path or a soname), e.g. one
 * outside the library path; the tests also use it to check the message a
 * machine without a loader gets. */
static const char *loader_name(void)
{
    const char *env = getenv("FANYI_VULKAN_LIBRARY");
    return env && *env ? env : "libvulkan.so.1";
}

static int load_library(fy_vk *vk, fy_error *err)
{
    const char *name = loader_name();
    vk->lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!vk->lib) {
        const char *why = dlerror();
        return fy_err(err, FY_EUNSUPPORTED, "no Vulkan loader (%s): %s", name,
                      why ? why : "cannot be opened");
    }
    /* dlsym returns void *; the loader's entry point is a function. */
    void *sym = dlsym(vk->lib, "vkGetInstanceProcAddr");
    if (!sym)
        return fy_err(err, FY_EUNSUPPORTED, "%s has no vkGetInstanceProcAddr: not a Vulkan loader",
                      name);
    memcpy(&vk->f.vkGetInstanceProcAddr, &sym, sizeof sym);
    return 0;
}

static int load_global(fy_vk *vk, fy_error *err)
{
#define LOAD(fn)                                                                                   \
    vk->f.fn = (PFN_##fn)vk->f.vkGetInstanceProcAddr(NULL, #fn);                                   \
    if (!vk->f.fn) return fy_err(err, FY_EUNSUPPORTED, "Vulkan loader lacks %s (needs 1.1+)", #fn);
    FY_VK_GLOBAL_FNS(LOAD)
#undef LOAD
    return 0;
}

static int load_instance(fy_vk *vk, fy_error *err)
{
#define LOAD(fn)                                                                                   \
    vk->f.fn = (PFN_##fn)vk->f.vkGetInstanceProcAddr(vk->instance, #fn);                           \
    if (!vk->f.fn) return fy_err(err, FY_EUNSUPPORTED, "Vulkan instance lacks %s", #fn);
    FY_VK_INSTANCE_FNS(LOAD)
#undef LOAD
    return 0;
}

static int create_instance(fy_vk *vk, fy_error *err)
{
    uint32_t version = 0;
    VkResult r = vk->f.vkEnumerateInstanceVersion(&version);
    if (r != VK_SUCCESS || version < VK_API_VERSION_1_3)
        return fy_err(err, FY_EUNSUPPORTED, "Vulkan loader %u.%u: version 1.3 is needed",
                      VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "fanyi",
        .pEngineName = "fanyi",
        .apiVersion = VK_API_VERSION_1_3,
    };
    VkInstanceCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pApplicationInfo = &app,
    };
    r = vk->f.vkCreateInstance(&ci, NULL, &vk->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return fy_err(err, FY_EUNSUPPORTED,
                      "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER): install "
                      "the GPU's Vulkan driver (or mesa-vulkan-drivers for the CPU's lavapipe)");
    if (r != VK_SUCCESS)
        return fy_err(err, FY_EUNSUPPORTED, "vkCreateInstance failed: %s", fy_vk_result_name(r));
    return 0;
}

static const char *type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return "cpu";
    default:
        return "other";
    }
}

/* Extensions the info reports (cooperative matrices: by name, as the 1.3.239
 * headers predate VK_KHR_cooperative_matrix's structures). */
static void read_extensions(fy_vk *vk, VkPhysicalDevice pd, fy_vk_info *in)
{
    uint32_t n = 0;
    if (vk->f.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || !n) return;
    VkExtensionProperties *ext = calloc(n, sizeof *ext);
    if (!ext) return;
    if (vk->f.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, ext) == VK_SUCCESS) {
        for (uint32_t i = 0; i < n; i++) {
            if (!strcmp(ext[i].extensionName, "VK_KHR_cooperative_matrix")) in->coopmat_khr = 1;
            if (!strcmp(ext[i].extensionName, "VK_NV_cooperative_matrix")) in->coopmat_nv = 1;
        }
    }
    free(ext);
}

static int has_compute_queue(fy_vk *vk, VkPhysicalDevice pd)
{
    uint32_t n = 0;
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[16];
    if (n > 16) n = 16;
    vk->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    for (uint32_t i = 0; i < n; i++)
        if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return 1;
    return 0;
}

static uint64_t device_memory(fy_vk *vk, VkPhysicalDevice pd)
{
    VkPhysicalDeviceMemoryProperties mp;
    vk->f.vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint64_t best = 0;
    for (uint32_t i = 0; i < mp.memoryHeapCount; i++)
        if ((mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            mp.memoryHeaps[i].size > best)
            best = mp.memoryHeaps[i].size;
    return best;
}

/* The Vulkan 1.1-1.3 properties and features of a 1.3 device. */
static void read_13(fy_vk *vk, VkPhysicalDevice pd, fy_vk_info *in)
{
    VkPhysicalDeviceVulkan13Properties p13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceVulkan12Properties p12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES, .pNext = &p13};
    VkPhysicalDeviceVulkan11Properties p11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, .pNext = &p12};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                      .pNext = &p11};
    vk->f.vkGetPhysicalDeviceProperties2(pd, &p2);
    VkPhysicalDeviceVulkan13Features f13 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &f13};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                    .pNext = &f12};
    vk->f.vkGetPhysicalDeviceFeatures2(pd, &f2);

    /* "name info", cut to fit (each part is at most 256 bytes) */
    size_t n = strnlen(p12.driverName, sizeof in->driver - 1);
    memcpy(in->driver, p12.driverName, n);
    if (p12.driverInfo[0] && n + 1 < sizeof in->driver) {
        in->driver[n++] = ' ';
        size_t m = strnlen(p12.driverInfo, sizeof in->driver - 1 - n);
        memcpy(in->driver + n, p12.driverInfo, m);
        n += m;
    }
    in->driver[n] = '\0';
    in->float64 = f2.features.shaderFloat64;
    in->int64 = f2.features.shaderInt64;
    in->int16 = f2.features.shaderInt16;
    in->int8 = f12.shaderInt8;
    in->int_dot = f13.shaderIntegerDotProduct;
    in->int_dot_accel = p13.integerDotProduct4x8BitPackedMixedSignednessAccelerated;
    in->subgroup_size = p11.subgroupSize;
    in->denorm_preserve32 = p12.shaderDenormPreserveFloat32;
    in->szinp32 = p12.shaderSignedZeroInfNanPreserveFloat32;
    in->rte32 = p12.shaderRoundingModeRTEFloat32;
    in->rte64 = p12.shaderRoundingModeRTEFloat64;
    in->rounding_independence = (int)p12.roundingModeIndependence;
}

static void read_device(fy_vk *vk, int i, VkPhysicalDevice pd)
{
    fy_vk_info *in = &vk->info[i];
    VkPhysicalDeviceProperties p;
    vk->f.vkGetPhysicalDeviceProperties(pd, &p);
    in->index = i;
    snprintf(in->name, sizeof in->name, "%s", p.deviceName);
    in->type = type_name(p.deviceType);
    in->vendor_id = p.vendorID;
    in->device_id = p.deviceID;
    in->api_version = p.apiVersion;
    in->max_shared = p.limits.maxComputeSharedMemorySize;
    in->max_storage_range = p.limits.maxStorageBufferRange;
    in->memory = device_memory(vk, pd);
    read_extensions(vk, pd, in);
    const char *why = NULL;
    if (p.apiVersion < VK_API_VERSION_1_3) {
        why = "Vulkan 1.3 needed";
    } else {
        read_13(vk, pd, in);
        if (!has_compute_queue(vk, pd))
            why = "no compute queue";
        else if (!in->float64)
            why = "no shaderFloat64 (exact division, sqrt and expf need it)";
        else if (!in->rte32 || !in->rte64)
            why = "no round-to-nearest-even float controls for fp32 and fp64";
        else if (p.limits.maxComputeWorkGroupInvocations < 256 ||
                 p.limits.maxComputeWorkGroupSize[0] < 256)
            why = "workgroups of 256 invocations needed";
    }
    in->usable = why == NULL;
    snprintf(in->why_not, sizeof in->why_not, "%s", why ? why : "");
}

static int pin(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name && *info->dlpi_name)
        dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); /* never closed */
    return 0;
}

/* Keeps the loader and the drivers it opened mapped until the process ends.
 * Drivers are not made to be unloaded and loaded again within a process
 * (Mesa's lavapipe 22.3 leaks 128 bytes each time the loader unloads it at
 * vkDestroyInstance, which sanitizers report from a module already gone),
 * and a server that only probed for a GPU should not pay that either. */
static void pin_drivers(void)
{
    dl_iterate_phdr(pin, NULL);
}

int fy_vk_open(fy_vk **out, fy_error *err)
{
    *out = NULL;
    fy_vk *vk = calloc(1, sizeof *vk);
    if (!vk) return fy_err(err, FY_ENOMEM, "out of memory");
    int rc = load_library(vk, err);
    if (!rc) rc = load_global(vk, err);
    if (!rc) rc = create_instance(vk, err);
    if (!rc) rc = load_instance(vk, err);
    if (rc) {
        fy_vk_close(vk);
        return rc;
    }
    uint32_t n = FY_VK_MAX_DEVICES;
    VkResult r = vk->f.vkEnumeratePhysicalDevices(vk->instance, &n, vk->phys);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        fy_vk_close(vk);
        return fy_err(err, FY_EUNSUPPORTED, "vkEnumeratePhysicalDevices failed: %s",
                      fy_vk_result_name(r));
    }
    vk->ndev = (int)n;
    for (int i = 0; i < vk->ndev; i++) read_device(vk, i, vk->phys[i]);
    pin_drivers();
    *out = vk;
    return 0;
}

void fy_vk_close(fy_vk *vk)
{
    if (!vk) return;
    if (vk->instance) vk->f.vkDestroyInstance(vk->instance, NULL);
    if (vk->lib) dlclose(vk->lib);
    free(vk);
}

int fy_vk_device_count(const fy_vk *vk)
{
    return vk ? vk->ndev : 0;
}

const fy_vk_info *fy_vk_device_info(const fy_vk *vk, int i)
{
    return vk && i >= 0 && i < vk->ndev ? &vk->info[i] : NULL;
}

int fy_vk_pick_device(const fy_vk *vk, const char *want)
{
    if (!want || !*want) want = getenv("FANYI_VK_DEVICE");
    if (want && *want) {
        if (!strncmp(want, "vulkan:", 7)) want += 7;
        char *end;
        long i = strtol(want, &end, 10);
        return *want && !*end && i >= 0 && i < vk->ndev ? (int)i : -1;
    }
    for (int i = 0; i < vk->ndev; i++)
        if (vk->info[i].usable && !strcmp(vk->info[i].type, "discrete")) return i;
    for (int i = 0; i < vk->ndev; i++)
        if (vk->info[i].usable) return i;
    return -1;
}

const char *fy_vk_result_name(VkResult r)
{
    switch (r) {
    case VK_SUCCESS:
        return "VK_SUCCESS";
    case VK_NOT_READY:
        return "VK_NOT_READY";
    case VK_TIMEOUT:
        return "VK_TIMEOUT";
    case VK_INCOMPLETE:
        return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED:
        return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST:
        return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED:
        return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT:
        return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT:
        return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT:
        return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS:
        return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FRAGMENTED_POOL:
        return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY:
        return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default:
        return "VkResult error";
    }
}
