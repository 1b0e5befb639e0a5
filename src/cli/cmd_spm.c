/* cmd_spm.c - `fanyi spm` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_spm(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi spm: not available in this build\n");
    return 1;
}
