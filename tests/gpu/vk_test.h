/* vk_test.h - what the Vulkan op tests share (tests/gpu): the device, one
 * recorder, buffers filled from host arrays, a random generator, and bit
 * comparisons. Each test_vk_*.c defines its tests; test_vk_ops.c has main. */
#ifndef FY_TESTS_VK_TEST_H
#define FY_TESTS_VK_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "nn/vk/vk.h"
#include "nn/vk/vk_ops.h"

extern fy_vk_dev *vt_dev;
extern fy_vk_cmd *vt_cmd;

/* A device buffer holding bytes of src (NULL: zeros); freed by vt_free_all. */
fy_vk_buf *vt_buf(const void *src, size_t bytes);
/* Frees every buffer vt_buf made. */
void vt_free_all(void);

/* Begins a recording; vt_run submits it and waits. Both fail the test
 * (message, counted) and return nonzero on error. */
int vt_begin(void);
int vt_run(void);

/* Downloads bytes of b into dst. */
void vt_get(fy_vk_buf *b, void *dst, size_t bytes);

/* Counted checks (check.h style, shared across the files). */
void vt_check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* xorshift64: a uniform uint32; a float in [lo, hi); an int in [lo, hi]. */
uint32_t vt_rand(void);
float vt_frand(float lo, float hi);
int vt_irand(int lo, int hi);
float vt_bits(uint32_t u);

/* Index of the first differing 32-bit word of a and b (n words), or -1. */
long vt_diff(const void *a, const void *b, size_t n);

/* The test groups (test_vk_gemm.c, test_vk_select.c, test_vk_ops.c). */
void test_vk_gemm(void);
void test_vk_select(void);
void test_vk_runtime(fy_vk *vk, int index);

#endif
