/* backend.c - the devices a process computes on: the host CPU, always, and
 * the GPUs a Vulkan build finds (see backend.h). */
#include "nn/backend.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nn/backend_vk.h"
#include "nn/cpu.h"
#include "nn/par.h"

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

/* The CPU device's impl is its helper team (NULL: none). */
int fy_nn_cpu_helpers(int helpers, int cores, fy_error *err)
{
    fy_nn_dev *cpu = fy_nn_cpu_device();
    fy_par_free(cpu->impl);
    cpu->impl = NULL;
    if (helpers <= 0) return 0;
    cpu->impl = fy_par_open(helpers, cores, err);
    return cpu->impl ? 0 : err->code;
}

void fy_nn_cpu_helper_stats(fy_nn_helper_stats *st)
{
    const fy_par *team = fy_nn_cpu_device()->impl;
    st->helpers = fy_par_threads(team) - 1;
    st->shared = fy_par_shared(team);
    st->backoffs = fy_par_backoffs(team);
}

int fy_nn_cpu_default_helpers(long cores)
{
    long n = cores - 1;
    return (int)(n < 0 ? 0 : n > FY_PAR_MAX_HELPERS ? FY_PAR_MAX_HELPERS : n);
}

void fy_nn_dev_busy(fy_nn_dev *dev, int delta)
{
    if (dev != fy_nn_cpu_device() || !dev->impl) return;
    fy_par_busy(dev->impl, delta);
    fy_par_attach(delta > 0 ? dev->impl : NULL);
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

/* 1 when the machine shows user space a GPU: a DRM render node
 * (/dev/dri/renderD*: AMD, Intel, ...), NVIDIA's control device or WSL's
 * /dev/dxg. Only then does "auto" ask Vulkan: the drivers it loads stay
 * mapped (vk_instance.c), and Mesa's, which find only a software device on
 * a machine without a GPU, cost a CPU-only server about 50 MiB (LLVM). */
static int gpu_node_present(void)
{
    if (!access("/dev/nvidiactl", F_OK) || !access("/dev/dxg", F_OK)) return 1;
    DIR *d = opendir("/dev/dri");
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        found = !strncmp(e->d_name, "renderD", 7);
    if (d) closedir(d);
    return found;
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
            if (!gpu_node_present() || open_term("vulkan", devs, n, 1, &ignore) < 0 || *n == 0)
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
