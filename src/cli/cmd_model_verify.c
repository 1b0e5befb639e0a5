/* cmd_model_verify.c - `fanyi model verify`: is this model directory usable?
 *
 * Prints one line per check (sizes and sha256 where the manifest knows the
 * file, then the full structural load) and exits 0 only when all passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "model/manifest.h"
#include "model/verify.h"

#define CMD "model verify"

enum { EXIT_BROKEN = 4 }; /* docs/models.md */

static void usage(void)
{
    printf("usage: fanyi model verify [DIR | --models ROOT]\n"
           "                          [--manifest FILE | --no-manifest] [--quiet]\n\n"
           "Checks a model directory: each file's size and sha256 when the manifest knows\n"
           "it, files the manifest lists but the directory lacks, and a full load of the\n"
           "model, vocabularies and shortlist with cross-checks. Without DIR:\n"
           "$FANYI_MODEL_DIR, else the zh-en model (or the only model) of the models\n"
           "directory: ROOT, else $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models.\n"
           "A synthetic model (fanyi model synth) is not held against the built-in\n"
           "catalogue's sizes and hashes.\n\n"
           "  --models ROOT    the models directory to take the model from\n"
           "  --manifest FILE  check against this manifest instead of the built-in one\n"
           "  --no-manifest    skip sizes and sha256 (synthetic or self-trained models)\n"
           "  --quiet          print only the result\n\n"
           "Exit status: 0 the model is good, 1 other error (bad manifest), 2 bad usage,\n"
           "4 a check failed (the first failure is named on stderr).\n");
}

static void on_check(void *ctx, const char *file, int ok, const char *detail)
{
    if (*(int *)ctx && ok) return;
    printf("%-4s  %s: %s\n", ok ? "ok" : "FAIL", file, detail);
}

int cmd_model_verify(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},         {"manifest", required_argument, NULL, 'M'},
        {"no-manifest", no_argument, NULL, 'N'},  {"quiet", no_argument, NULL, 'q'},
        {"models", required_argument, NULL, 'R'}, {0}};
    const char *manifest_path = NULL, *models = NULL;
    int quiet = 0, no_manifest = 0, c;
    while ((c = cli_getopt(argc, argv, CMD, "hM:Nq", opts)) != -1) {
        switch (c) {
        case 'h':
            usage();
            return 0;
        case 'M':
            manifest_path = optarg;
            break;
        case 'N':
            no_manifest = 1;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'R':
            models = optarg;
            break;
        default:
            return 2;
        }
    }
    const char *dir_arg = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (no_manifest && manifest_path)
        return cli_usage_error(CMD, "--manifest and --no-manifest exclude each other");
    if (dir_arg && models) return cli_usage_error(CMD, "DIR and --models exclude each other");
    char *dir = dir_arg ? strdup(dir_arg) : cli_default_model_dir(models);
    if (!dir) {
        fprintf(stderr, "fanyi %s: out of memory\n", CMD);
        return 1;
    }
    /* Random weights have no catalogue entry to match: say so, check the rest. */
    if (!manifest_path && !no_manifest && cli_model_is_synthetic(dir)) {
        no_manifest = 1;
        if (!quiet)
            printf("note  %s: a synthetic model (fanyi model synth): sizes and sha256 not "
                   "checked\n",
                   dir);
    }
    fy_error err = {0};
    fy_manifest *m = NULL;
    if (!no_manifest)
        m = manifest_path ? fy_manifest_load(manifest_path, NULL, &err)
                          : fy_manifest_builtin(NULL, &err);
    if (!m && !no_manifest) {
        fprintf(stderr, "fanyi %s: %s\n", CMD, err.msg);
        free(dir);
        return 1;
    }
    int rc = fy_model_verify(dir, m, on_check, &quiet, NULL, &err);
    if (rc)
        fprintf(stderr, "fanyi %s: %s\n", CMD, err.msg);
    else
        printf("%s: ok\n", dir);
    free(dir);
    fy_manifest_free(m);
    return rc ? (rc == FY_ENOMEM ? 1 : EXIT_BROKEN) : 0;
}
