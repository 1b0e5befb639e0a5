/* cmd_model_info.c - `fanyi model info` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi model info: not available in this build\n");
    return 1;
}
