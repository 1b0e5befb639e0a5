/* cmd_model.c - `fanyi model <verb>`: dispatch to the model verbs. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} verb;

static const verb verbs[] = {
    {"fetch", cmd_model_fetch, "download a model (with sha256 check) into the model directory"},
    {"verify", cmd_model_verify, "check a model directory: sizes, hashes, full structural load"},
    {"info", cmd_model_info, "show a model's architecture, vocabularies and quantisation"},
    {"list", cmd_model_list, "list installed models"},
    {"synth", cmd_model_synth, "write a synthetic model (real format, random weights) for tests"},
};

static void print_help(FILE *out)
{
    fprintf(out, "usage: fanyi model <verb> [options]\n\nverbs:\n");
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        fprintf(out, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\nRun 'fanyi model <verb> --help' for a verb's options.\n");
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        print_help(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
        if (!strcmp(name, verbs[i].name)) return verbs[i].run(argc - 1, argv + 1);
    if (name[0] == '-') return cli_usage_error("model", "unknown option '%s'", name);
    return cli_usage_error("model", "unknown verb '%s'", name);
}
