/* test_vk_runtime.c - the runtime's promises beyond the ops: errors a
 * server must tell apart (out of device memory, a lost device), several
 * threads recording and submitting on one device at once, and copies. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/ops.h"
#include "nn/vk/vk_impl.h"
#include "vk_test.h"

/* One worker: its own recorder, softmax of its own rows, n times. */
typedef struct worker {
    int id, rounds, ok;
} worker;

static void *worker_run(void *arg)
{
    worker *w = arg;
    enum { ROWS = 8, N = 37 };
    float x[ROWS * N], want[ROWS * N], got[ROWS * N];
    fy_error err = {0};
    fy_vk_cmd *c = fy_vk_cmd_new(vt_dev, 1 << 14, &err);
    fy_vk_buf *b = fy_vk_buf_new(vt_dev, sizeof x, FY_VK_MEM_DEVICE, &err);
    w->ok = c && b;
    for (int r = 0; w->ok && r < w->rounds; r++) {
        for (int i = 0; i < ROWS * N; i++)
            x[i] = (float)((i * 7 + r * 13 + w->id * 101) % 41) * 0.37f;
        memcpy(want, x, sizeof x);
        for (int i = 0; i < ROWS; i++) fy_softmax(want + i * N, N);
        w->ok = !fy_vk_cmd_begin(c, &err) && !fy_vk_cmd_write(c, fy_vk_at(b, 0), x, sizeof x) &&
                !fy_vk_op_softmax(c, fy_vk_at(b, 0), N, ROWS, N) &&
                !fy_vk_cmd_read(c, fy_vk_at(b, 0), got, sizeof got) &&
                !fy_vk_cmd_run(c, FY_VK_TIMEOUT_NS, &err) && !memcmp(got, want, sizeof got);
    }
    if (!w->ok) printf("worker %d: %s\n", w->id, err.msg);
    fy_vk_buf_free(b);
    fy_vk_cmd_free(c);
    return NULL;
}

static void test_threads(void)
{
    enum { T = 4 };
    pthread_t th[T];
    worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (worker){.id = i, .rounds = 6};
        pthread_create(&th[i], NULL, worker_run, &w[i]);
    }
    int ok = 1;
    for (int i = 0; i < T; i++) pthread_join(th[i], NULL), ok &= w[i].ok;
    vt_check(ok, "%d threads, one recorder each, on one device", T);
}

static void test_memory_errors(void)
{
    fy_error err = {0};
    fy_vk_buf *b = fy_vk_buf_new(vt_dev, (size_t)1 << 40, FY_VK_MEM_DEVICE, &err);
    vt_check(!b && err.code == FY_EDEVMEM, "a 1 TiB buffer: FY_EDEVMEM (%d: %s)", err.code,
             err.msg);
    fy_vk_buf_free(b);
    b = vt_buf(NULL, 4096);
    unsigned char in[100], out[100];
    for (int i = 0; i < 100; i++) in[i] = (unsigned char)(i * 3);
    int rc = fy_vk_upload(b, 4001, in, sizeof in, &err); /* past the end */
    vt_check(rc == FY_EINVAL, "an upload past the end: %d", rc);
    rc = fy_vk_upload(b, 1001, in, sizeof in, &err) ||
         fy_vk_download(b, 1001, out, sizeof out, &err);
    vt_check(!rc && !memcmp(in, out, sizeof in), "unaligned upload and download: %s", err.msg);
    vt_free_all();
}

/* A lost device (simulated: the state VK_ERROR_DEVICE_LOST leaves) fails
 * every later call at once with FY_EDEVICE; a second device is used, as
 * the loss cannot be undone. */
static void test_lost(fy_vk *vk, int index)
{
    fy_error err = {0};
    fy_vk_dev *dev = fy_vk_dev_new(vk, index, 0, &err);
    fy_vk_cmd *c = dev ? fy_vk_cmd_new(dev, 0, &err) : NULL;
    if (!c) {
        vt_check(0, "second device: %s", err.msg);
        fy_vk_dev_free(dev);
        return;
    }
    int rc = fy_vk_fail(dev, VK_ERROR_DEVICE_LOST, &err, "vkQueueSubmit");
    vt_check(rc == FY_EDEVICE && fy_vk_dev_lost(dev) && strstr(err.msg, "device lost"),
             "VK_ERROR_DEVICE_LOST is FY_EDEVICE: %s", err.msg);
    vt_check(fy_vk_cmd_begin(c, &err) == FY_EDEVICE, "begin on a lost device");
    fy_vk_buf *b = fy_vk_buf_new(dev, 64, FY_VK_MEM_DEVICE, &err);
    vt_check(!b && err.code == FY_EDEVICE, "a buffer on a lost device");
    vt_check(fy_vk_fail(dev, VK_ERROR_OUT_OF_DEVICE_MEMORY, &err, "x") == FY_EDEVMEM &&
                 fy_vk_fail(dev, VK_TIMEOUT, &err, "x") == FY_ETIMEOUT,
             "out of device memory and timeouts have their own codes");
    fy_vk_cmd_free(c);
    fy_vk_dev_free(dev);
}

void test_vk_runtime(fy_vk *vk, int index)
{
    test_threads();
    test_memory_errors();
    test_lost(vk, index);
}
