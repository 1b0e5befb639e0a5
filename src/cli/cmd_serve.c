/* cmd_serve.c - `fanyi serve` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_serve(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi serve: not available in this build\n");
    return 1;
}
