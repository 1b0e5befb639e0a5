/* main.c - `fanyi`: one binary, subcommands dispatched like git's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"serve", cmd_serve, "run the HTTP translation service and web UI"},
    {"translate", cmd_translate, "translate stdin to stdout, one line at a time"},
    {"model", cmd_model, "fetch, verify, inspect or synthesise models"},
    {"spm", cmd_spm, "SentencePiece encode/decode (debugging)"},
    {"bench", cmd_bench, "measure latency, throughput and memory"},
    {"devices", cmd_devices, "list the CPU and GPUs (Vulkan) translations can run on"},
    {"doctor", cmd_doctor, "check a running server, and the plug-ins' requests (--clients)"},
    {"version", cmd_version, "print the version"},
};

static void print_help(FILE *out)
{
    fprintf(out, "usage: fanyi <command> [options]\n\n"
                 "Offline machine translation with Firefox Translations models: every\n"
                 "direction Firefox ships (zh-en, en-zh, de-en, en-ja, ...: 'fanyi model list\n"
                 "--available'); a pair without a model of its own goes through English.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'fanyi <command> --help' for a command's options.\n");
}

const char *cli_version(void)
{
    return FY_VERSION;
}

/* With TZ unset, glibc's mktime and localtime (libzip calls them for every
 * archive it opens, on any server thread) free and copy the zone's name on
 * every call; with TZ set to the same default zone they read it once. (The
 * copies are under glibc's own lock, which ThreadSanitizer cannot see: it
 * reported them as a race.) */
static void pin_time_zone(void)
{
    if (!getenv("TZ")) setenv("TZ", ":/etc/localtime", 0);
}

int main(int argc, char **argv)
{
    pin_time_zone();
    if (argc < 2) {
        print_help(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        print_help(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) name = "version";
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(name, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    if (name[0] == '-')
        fprintf(stderr, "fanyi: unknown option '%s' (see 'fanyi --help')\n", name);
    else
        fprintf(stderr, "fanyi: unknown command '%s' (see 'fanyi --help')\n", name);
    return 2;
}
