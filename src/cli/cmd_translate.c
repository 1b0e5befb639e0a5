/* cmd_translate.c - `fanyi translate` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_translate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi translate: not available in this build\n");
    return 1;
}
