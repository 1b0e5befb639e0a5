/* backend.c - the devices a process computes on: the host CPU, always, and
 * the GPUs a Vulkan build finds (see backend.h). */
#include "nn/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/backend_vk.h"
#include "nn/cpu.h"

fy_nn_dev *fy_nn_cpu_device(void)
{
    static fy_nn_dev cpu = {.be = &fy_nn_cpu, .name = "cpu", .max_rows = 32, .max_tokens = 2048};
    if (!cpu.desc[0]) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(cpu.desc, sizeof cpu.desc, "host CPU, %ld cores, %s kernels", n,
                 fy_isa_name(fy_cpu_isa()));
    }
    return &cpu;
}

/* One term of a device list: "cpu", "vulkan" or "vulkan:N". Appends to
 * devs; every device at most once. */
static int open_term(const char *term, fy_nn_dev **devs, int *n, int is_auto, fy_error *err)
{
    if (!strcmp(term, "cpu")) {
        for (int i = 0; i < *n; i++)
            if (devs[i] == fy_nn_cpu_device()) return 0;
        if (*n >= FY_NN_DEV_MAX)
            return fy_err(err, FY_ELIMIT, "more than %d devices", FY_NN_DEV_MAX);
        devs[(*n)++] = fy_nn_cpu_device();
        return 0;
    }
    int index = -1;
    if (!strncmp(term, "vulkan:", 7)) {
        char *end;
        long v = strtol(term + 7, &end, 10);
        if (end == term + 7 || *end || v < 0 || v >= FY_NN_DEV_MAX)
            return fy_err(err, FY_EINVAL, "device '%s': expected vulkan:N with N a device number",
                          term);
        index = (int)v;
    } else if (strcmp(term, "vulkan") != 0) {
        return fy_err(err, FY_EINVAL,
                      "device '%s': expected auto, cpu, vulkan or vulkan:N (comma-separated)",
                      term);
    }
    return fy_nn_vk_open(index, devs, n, FY_NN_DEV_MAX, is_auto, err);
}

int fy_nn_devices_open(const char *spec, fy_nn_dev ***out, int *n, fy_error *err)
{
    *out = NULL;
    *n = 0;
    fy_nn_dev **devs = calloc(FY_NN_DEV_MAX, sizeof *devs);
    char *copy = strdup(spec && *spec ? spec : "cpu");
    int rc = devs && copy ? 0 : fy_err(err, FY_ENOMEM, "out of memory");
    char *save = NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && rc >= 0;
         t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        if (!strcmp(t, "auto")) {
            /* Every GPU found, else the CPU: a missing loader is no error. */
            fy_error ignore;
            if (open_term("vulkan", devs, n, 1, &ignore) < 0 || *n == 0)
                rc = open_term("cpu", devs, n, 1, err);
        } else {
            rc = open_term(t, devs, n, 0, err);
        }
    }
    free(copy);
    if (rc >= 0 && *n == 0) rc = fy_err(err, FY_EINVAL, "no device named in '%s'", spec);
    if (rc < 0) {
        fy_nn_devices_close(devs, *n);
        *n = 0;
        return rc;
    }
    for (int i = 0; i < *n; i++) devs[i]->index = i;
    *out = devs;
    return 0;
}

void fy_nn_devices_close(fy_nn_dev **devs, int n)
{
    if (!devs) return;
    for (int i = 0; i < n; i++)
        if (devs[i] && devs[i] != fy_nn_cpu_device()) fy_nn_vk_close(devs[i]);
    free(devs);
}

size_t fy_nn_dev_used(const fy_nn_dev *dev)
{
    return dev && dev->be->dev_used ? dev->be->dev_used(dev) : 0;
}
