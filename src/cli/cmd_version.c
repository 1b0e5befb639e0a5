/* cmd_version.c - `fanyi version`: the version, the license, the kernels. */
#include <stdio.h>

#include "cli/cli.h"
#include "nn/cpu.h"

/* The kernel path translations use here (FANYI_KERNEL applied) and every
 * path this CPU can run. */
static void print_kernels(void)
{
    printf("kernel %s\nsupported", fy_isa_name(fy_cpu_isa()));
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI; isa++)
        if (fy_cpu_supports((fy_isa)isa)) printf(" %s", fy_isa_name((fy_isa)isa));
    printf("\n");
}

int cmd_version(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    while ((c = cli_getopt(argc, argv, "version", "h", opts)) != -1) {
        if (c == 'h') {
            printf("usage: fanyi version\n\nPrints the program version, its license and the CPU "
                   "kernels this build can use.\n");
            return 0;
        }
        return 2;
    }
    if (optind < argc) return cli_usage_error("version", "unexpected argument '%s'", argv[optind]);
    printf("fanyi %s\n", cli_version());
    /* AGPL-3.0 (MuPDF's license) for the whole program: docs/license.md. */
    printf("license AGPL-3.0-or-later: free software under the GNU Affero General Public "
           "License,\n        version 3 or later, with no warranty (LICENSE, docs/license.md)\n");
    print_kernels();
    return 0;
}
