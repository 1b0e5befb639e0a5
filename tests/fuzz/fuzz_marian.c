/* fuzz_marian.c - libFuzzer harness for the Marian model loader and config.
 *
 * The input is a whole model file. fy_marian_open only takes a path, so the
 * bytes go into a memfd opened through /proc/self/fd. Whatever opens is then
 * walked the way the engine would: every tensor's data touched end to end,
 * the embedded YAML read into a config and cross-checked, scalars read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/config.h"
#include "model/marian.h"

static int memfd = -1;
static char memfd_path[64];

/* Replaces the memfd's contents with data; 0 or -1. */
static int memfd_set(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_marian", 0);
        if (memfd < 0) return -1;
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(memfd, data + done, size - done, (off_t)done);
        if (w <= 0) return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Reads every byte the tensor claims, so a bad offset faults here. */
static unsigned touch_tensor(const fy_tensor *t)
{
    unsigned acc = 0;
    const uint8_t *p = t->data;
    for (size_t i = 0; i < t->bytes; i++) acc += p[i];
    acc += (unsigned)strlen(t->name) + (unsigned)t->ndim + (unsigned)t->count;
    acc += (unsigned)strlen(fy_dtype_name(t->type));
    return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd_set(data, size) != 0) abort();
    fy_error err = {0};
    fy_marian *m = fy_marian_open(memfd_path, &err);
    if (!m) {
        if (err.code >= 0 || err.msg[0] == 0)
            abort(); /* a failure must come with a code and a message */
        return 0;
    }
    volatile unsigned acc = 0;
    size_t n = fy_marian_tensor_count(m);
    for (size_t i = 0; i < n; i++) {
        const fy_tensor *t = fy_marian_tensor_at(m, i);
        if (!t || fy_marian_find(m, t->name) == NULL) abort();
        acc += touch_tensor(t);
    }
    if (fy_marian_tensor_at(m, n) != NULL) abort();
    acc += (unsigned)strlen(fy_marian_yaml(m)) + (unsigned)fy_marian_file_size(m);

    fy_model_config cfg;
    fy_error cerr = {0};
    if (fy_model_config_read(m, &cfg, &cerr) == 0)
        acc += (unsigned)(cfg.dim_emb + cfg.heads + cfg.enc_depth + cfg.dec_depth);
    float f;
    static const char *const scalars[] = {"none_QuantMultA", "Wemb_QuantMultA",
                                          "encoder_l1_self_Wq_QuantMultA", "Wemb"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        if (fy_model_read_scalar(m, scalars[i], &f, NULL) == 0) acc += (unsigned)(f > 0);
    (void)acc;
    fy_marian_free(m);
    return 0;
}
