/* cmd_model_fetch.c - `fanyi model fetch` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model_fetch(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi model fetch: not available in this build\n");
    return 1;
}
