/* fuzz_config.c - libFuzzer harness for the model config (embedded YAML).
 *
 * fuzz_marian reaches the YAML only through a 19 KB file; here the input is
 * the YAML text alone. It replaces special:model.yml (the last tensor,
 * unpadded) of a fixed valid toy model (corpus/fuzz_marian/tiny-int8.bin),
 * the header's length and shape are patched to match, and the result is
 * opened and read with fy_model_config_read, so libyaml and every key check
 * and tensor cross-check run on arbitrary YAML.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/config.h"
#include "model/marian.h"

static uint8_t *base;      /* the model up to (not including) the YAML data */
static size_t base_len;    /* = offset of the YAML data */
static size_t len_field;   /* offset of the YAML header's data length (uint64) */
static size_t shape_field; /* offset of the YAML tensor's shape (int32) */
static int memfd = -1;
static char memfd_path[64];

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Loads the template model and finds the fields to patch; aborts on any
 * surprise (the template is ours and valid). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FILE *f = fopen(FUZZ_MODEL, "rb");
    static uint8_t buf[1 << 20];
    size_t size = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    if (size < 16 || size == sizeof buf) abort();
    uint64_t n = get_u64(buf + 8);
    size_t pos = 16 + 32 * n, names = 0, dims = 0;
    for (uint64_t i = 0; i < n; i++) {
        names += get_u64(buf + 16 + 32 * i);
        dims += get_u64(buf + 16 + 32 * i + 16);
    }
    const uint8_t *last = buf + 16 + 32 * (n - 1);
    if (get_u64(last + 16) != 1) abort();
    len_field = 16 + 32 * (n - 1) + 24;
    shape_field = pos + names + 4 * (dims - 1);
    base_len = size - get_u64(last + 24);
    base = malloc(base_len);
    memcpy(base, buf, base_len);
    memfd = memfd_create("fuzz_config", 0);
    if (memfd < 0) abort();
    snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t ylen = nul ? (size_t)(nul - data) : size; /* the loader rejects inner NULs */
    uint64_t bytes = ylen + 1;
    int32_t shape = (int32_t)bytes;
    if (bytes > INT32_MAX) return 0;
    memcpy(base + len_field, &bytes, 8);
    memcpy(base + shape_field, &shape, 4);
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, base, base_len, 0) != (ssize_t)base_len ||
        pwrite(memfd, data, ylen, (off_t)base_len) != (ssize_t)ylen ||
        pwrite(memfd, "", 1, (off_t)(base_len + ylen)) != 1)
        abort();
    fy_error err = {0};
    fy_marian *m = fy_marian_open(memfd_path, &err);
    if (!m) abort(); /* only the YAML text changed: the file itself is valid */
    fy_model_config cfg;
    int rc = fy_model_config_read(m, &cfg, &err);
    if (rc != 0 && (rc != err.code || err.msg[0] == 0)) abort();
    if (rc == 0 && (cfg.dim_emb <= 0 || cfg.heads <= 0 || cfg.src_vocab_size <= 0)) abort();
    fy_marian_free(m);
    return 0;
}
