/* vk_spirv_dump.c - writes the SPIR-V modules embedded in the binary (the
 * table fy_nn_vk is linked with) to DIR/<name>.<variant>.spv, so that
 * spirv_check.py checks exactly what runs. Usage: vk_spirv_dump DIR */
#include <stdio.h>

#include "nn/vk/vk_spirv.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vk_spirv_dump DIR\n");
        return 2;
    }
    for (size_t i = 0; i < fy_vk_spirv_count; i++) {
        const fy_vk_spirv *m = &fy_vk_spirv_table[i];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%d.spv", argv[1], m->name, m->variant);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(m->words, 4, m->nwords, f) != m->nwords || fclose(f)) {
            perror(path);
            return 1;
        }
        printf("%s\n", path);
    }
    return 0;
}
