/* avx2_probe.c - executes one AVX2 instruction, unconditionally.
 *
 * The negative control of the portability tests: under qemu -cpu Nehalem it
 * must die of SIGILL (else a clean fanyi run there proves nothing), and
 * isa_audit.py must reject it (its AVX2 lies outside the kernel files).
 */
#include <stdio.h>

/* noinline so that the audit sees the instruction in a function of its own. */
__attribute__((noinline)) static void avx2_outside_kernels(void)
{
    __asm__ volatile("vpaddd %%ymm0, %%ymm0, %%ymm0\n\tvzeroupper" ::: "xmm0");
}

int main(void)
{
    avx2_outside_kernels();
    puts("executed an AVX2 instruction");
    return 0;
}
