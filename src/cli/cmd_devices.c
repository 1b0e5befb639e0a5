/* cmd_devices.c - `fanyi devices`: where the network can run. The CPU (its
 * kernel path) and, in builds with FANYI_VULKAN, every Vulkan device with
 * what the exact kernels need or can use; without Vulkan, why not. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "nn/cpu.h"
#ifdef FY_HAVE_VULKAN
#include "nn/vk/vk.h"
#endif

#define CMD "devices"

static void usage(void)
{
    printf("usage: fanyi devices [--json]\n\n"
           "Lists the devices translations can run on: \"cpu\" with its kernel path\n"
           "(FANYI_KERNEL), and every Vulkan device as vulkan:N with its type, memory,\n"
           "integer and float64 support, integer dot products, cooperative matrices,\n"
           "subgroup size and float controls (round to nearest even, denormals kept),\n"
           "and whether it can run the exact kernels. Without Vulkan (no loader, no\n"
           "driver, or a build without FANYI_VULKAN) it says why.\n\n"
           "  --json   one JSON object: {\"devices\": [...], \"vulkan\": {...}}\n\n"
           "Exit status: 0 listed (with or without Vulkan devices), 2 bad usage.\n");
}

static json_t *cpu_json(void)
{
    json_t *sup = json_array();
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI; isa++)
        if (fy_cpu_supports((fy_isa)isa))
            json_array_append_new(sup, json_string(fy_isa_name((fy_isa)isa)));
    return json_pack("{s:s, s:s, s:s, s:o}", "name", "cpu", "kind", "cpu", "kernel",
                     fy_isa_name(fy_cpu_isa()), "supported", sup);
}

static void cpu_text(void)
{
    printf("cpu: kernel %s (supported:", fy_isa_name(fy_cpu_isa()));
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI; isa++)
        if (fy_cpu_supports((fy_isa)isa)) printf(" %s", fy_isa_name((fy_isa)isa));
    printf(")\n");
}

#ifdef FY_HAVE_VULKAN
static const char *yes(int v)
{
    return v ? "yes" : "no";
}

/* VkShaderFloatControlsIndependence: may fp32's rounding mode differ from
 * the other widths'? (The shaders declare RTE for fp32 and fp64.) */
static const char *independence(int v)
{
    return v == 0 ? "32-bit only" : v == 1 ? "all" : "none";
}

static json_t *vk_json(const fy_vk_info *in)
{
    char name[32], api[32];
    snprintf(name, sizeof name, "vulkan:%d", in->index);
    snprintf(api, sizeof api, "%u.%u.%u", in->api_version >> 22, (in->api_version >> 12) & 0x3ff,
             in->api_version & 0xfff);
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:b, s:b, s:b, s:b}", "name", name, "kind",
                  "vulkan", "device", in->name, "type", in->type, "driver", in->driver,
                  "api_version", api, "memory_bytes", (json_int_t)in->memory, "float64",
                  in->float64, "int64", in->int64, "int16", in->int16, "int8", in->int8);
    json_object_update_new(o, json_pack("{s:b, s:b, s:b, s:b, s:i, s:b, s:b, s:b, s:b, s:b, s:s?}",
                                        "integer_dot_product", in->int_dot,
                                        "integer_dot_product_accelerated", in->int_dot_accel,
                                        "cooperative_matrix_khr", in->coopmat_khr,
                                        "cooperative_matrix_nv", in->coopmat_nv, "subgroup_size",
                                        (int)in->subgroup_size, "fp32_rte", in->rte32, "fp64_rte",
                                        in->rte64, "fp32_denorm_preserve", in->denorm_preserve32,
                                        "fp32_signed_zero_inf_nan_preserve", in->szinp32, "usable",
                                        in->usable, "why_not", in->usable ? NULL : in->why_not));
    json_object_set_new(o, "rounding_mode_independence",
                        json_string(independence(in->rounding_independence)));
    return o;
}

static void vk_text(const fy_vk_info *in)
{
    printf("vulkan:%d: %s (%s, %s; Vulkan %u.%u), %.1f GiB\n", in->index, in->name, in->type,
           in->driver, in->api_version >> 22, (in->api_version >> 12) & 0x3ff,
           (double)in->memory / (1024.0 * 1024.0 * 1024.0));
    if (in->usable)
        printf("  exact kernels: yes\n");
    else
        printf("  exact kernels: no (%s)\n", in->why_not);
    printf("  float64 %s, int64 %s, int16 %s, int8 %s\n", yes(in->float64), yes(in->int64),
           yes(in->int16), yes(in->int8));
    printf("  integer dot product %s (accelerated %s), cooperative matrix KHR %s, NV %s\n",
           yes(in->int_dot), yes(in->int_dot_accel), yes(in->coopmat_khr), yes(in->coopmat_nv));
    printf("  subgroup size %u; fp32 round-to-nearest-even %s, denormals preserved %s, signed "
           "zero/inf/nan preserved %s; fp64 round-to-nearest-even %s; rounding modes "
           "independent: %s\n",
           in->subgroup_size, yes(in->rte32), yes(in->denorm_preserve32), yes(in->szinp32),
           yes(in->rte64), independence(in->rounding_independence));
}
#endif

/* The Vulkan devices: appended to list, with the loader's status in vulkan
 * ({"available", "error"}), or, when list is NULL, printed. */
static void vulkan_devices(json_t *list, json_t *vulkan)
{
#ifdef FY_HAVE_VULKAN
    fy_vk *vk = NULL;
    fy_error err = {0};
    if (fy_vk_open(&vk, &err)) {
        if (vulkan) {
            json_object_set_new(vulkan, "available", json_false());
            json_object_set_new(vulkan, "error", json_string(err.msg));
        } else {
            printf("vulkan: unavailable: %s\n", err.msg);
        }
        return;
    }
    int n = fy_vk_device_count(vk);
    if (vulkan) {
        json_object_set_new(vulkan, "available", json_true());
        json_object_set_new(vulkan, "error", n ? json_null() : json_string("no Vulkan device"));
    } else if (!n) {
        printf("vulkan: no device\n");
    }
    for (int i = 0; i < n; i++) {
        if (list)
            json_array_append_new(list, vk_json(fy_vk_device_info(vk, i)));
        else
            vk_text(fy_vk_device_info(vk, i));
    }
    fy_vk_close(vk);
#else
    const char *why = "this build has no Vulkan support (configured with FANYI_VULKAN=OFF or "
                      "without the Vulkan headers and glslc)";
    (void)list;
    if (vulkan) {
        json_object_set_new(vulkan, "available", json_false());
        json_object_set_new(vulkan, "error", json_string(why));
    } else {
        printf("vulkan: unavailable: %s\n", why);
    }
#endif
}

int cmd_devices(int argc, char **argv)
{
    enum { O_JSON = 256 };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON}, {"help", no_argument, NULL, 'h'}, {0}};
    int json = 0, c;
    while ((c = cli_getopt(argc, argv, CMD, "h", opts)) != -1) {
        if (c == 'h') {
            usage();
            return 0;
        }
        if (c == O_JSON)
            json = 1;
        else
            return 2;
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!json) {
        cpu_text();
        vulkan_devices(NULL, NULL);
        return 0;
    }
    json_t *list = json_array(), *vulkan = json_object();
    json_array_append_new(list, cpu_json());
    vulkan_devices(list, vulkan);
    json_t *o = json_pack("{s:o, s:o}", "devices", list, "vulkan", vulkan);
    char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
    json_decref(o);
    if (!text) {
        fprintf(stderr, "fanyi %s: out of memory\n", CMD);
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return 0;
}
