/* cmd_bench.c - `fanyi bench` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi bench: not available in this build\n");
    return 1;
}
