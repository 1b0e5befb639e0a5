/* vk_test.c - the shared helpers of the Vulkan op tests (see vk_test.h). */
#include "vk_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fy_vk_dev *vt_dev;
fy_vk_cmd *vt_cmd;
int vt_passed, vt_failed;

#define MAX_BUFS 256
static fy_vk_buf *bufs[MAX_BUFS];
static int nbufs;

void vt_check(int ok, const char *fmt, ...)
{
    if (ok) {
        vt_passed++;
        return;
    }
    vt_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

fy_vk_buf *vt_buf(const void *src, size_t bytes)
{
    fy_error err = {0};
    if (bytes == 0) bytes = 4;
    if (nbufs == MAX_BUFS) {
        printf("vt_buf: too many buffers\n");
        exit(1);
    }
    fy_vk_buf *b = fy_vk_buf_new(vt_dev, bytes, FY_VK_MEM_DEVICE, &err);
    if (!b) {
        printf("vt_buf: %s\n", err.msg);
        exit(1);
    }
    void *zero = NULL;
    if (!src) src = zero = calloc(1, bytes);
    if (!src || fy_vk_upload(b, 0, src, bytes, &err)) {
        printf("vt_buf upload: %s\n", err.msg);
        exit(1);
    }
    free(zero);
    bufs[nbufs++] = b;
    return b;
}

void vt_free_all(void)
{
    for (int i = 0; i < nbufs; i++) fy_vk_buf_free(bufs[i]);
    nbufs = 0;
}

int vt_begin(void)
{
    fy_error err = {0};
    int rc = fy_vk_cmd_begin(vt_cmd, &err);
    vt_check(rc == 0, "begin: %s", err.msg);
    return rc;
}

int vt_run(void)
{
    fy_error err = {0};
    int rc = fy_vk_cmd_run(vt_cmd, FY_VK_TIMEOUT_NS, &err);
    vt_check(rc == 0, "run: %s", err.msg);
    return rc;
}

void vt_get(fy_vk_buf *b, void *dst, size_t bytes)
{
    fy_error err = {0};
    if (fy_vk_download(b, 0, dst, bytes, &err)) {
        printf("vt_get: %s\n", err.msg);
        exit(1);
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

uint32_t vt_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

float vt_frand(float lo, float hi)
{
    return lo + (hi - lo) * (float)(vt_rand() >> 8) * (1.0f / 16777216.0f);
}

int vt_irand(int lo, int hi)
{
    return lo + (int)(vt_rand() % (uint32_t)(hi - lo + 1));
}

float vt_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

long vt_diff(const void *a, const void *b, size_t n)
{
    const uint32_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return (long)i;
    return -1;
}
