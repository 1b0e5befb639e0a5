/* cmd_model_synth.c - `fanyi model synth` (placeholder while the module is written). */
#include <stdio.h>

#include "cli/cli.h"

int cmd_model_synth(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fanyi model synth: not available in this build\n");
    return 1;
}
