/* cmd_version.c - `fanyi version`. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_version(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    while ((c = cli_getopt(argc, argv, "version", "h", opts)) != -1) {
        if (c == 'h') {
            printf("usage: fanyi version\n\nPrints the program version and the CPU kernels "
                   "this build can use.\n");
            return 0;
        }
        return 2;
    }
    if (optind < argc) return cli_usage_error("version", "unexpected argument '%s'", argv[optind]);
    printf("fanyi %s\n", cli_version());
    return 0;
}
