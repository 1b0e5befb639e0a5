/* cmd_model_verify.c - `fanyi model verify` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model_verify(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi model verify: not available in this build\n");
    return 1;
}
