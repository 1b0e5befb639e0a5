/* cmd_model_list.c - `fanyi model list` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model_list(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi model list: not available in this build\n");
    return 1;
}
