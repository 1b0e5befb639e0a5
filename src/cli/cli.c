/* cli.c - option parsing helpers shared by the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fanyi %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'fanyi %s --help')\n", cmd);
    return 2;
}

int cli_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
               const struct option *longopts)
{
    static char **last_argv;
    if (argv != last_argv) {
        last_argv = argv;
        optind = 1;
    }
    opterr = 0;
    int prev = optind;
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (c != '?') return c;
    /* getopt leaves the offending word at argv[optind - 1] or argv[prev]. */
    const char *word = prev < argc ? argv[prev] : "?";
    if (optopt && optopt != '?') {
        const struct option *o = longopts;
        for (; o && o->name; o++)
            if (o->val == optopt && o->has_arg == required_argument) break;
        if (o && o->name)
            cli_usage_error(cmd, "option '%s' needs a value", word);
        else
            cli_usage_error(cmd, "unknown option '%s'", word);
    } else {
        cli_usage_error(cmd, "unknown option '%s'", word);
    }
    return '?';
}

int cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max,
                   long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > max)
        return cli_usage_error(cmd, "%s expects a whole number from %ld to %ld, not '%s'", opt, min,
                               max, text);
    *out = v;
    return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *text, double min, double max,
                     double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > min && v <= max))
        return cli_usage_error(cmd, "%s expects a number in (%g, %g], not '%s'", opt, min, max,
                               text);
    *out = v;
    return 0;
}
