/* cli.h - the `fanyi` subcommands and the helpers they share.
 *
 * Each subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] the
 * subcommand's name; it returns the process exit status: 0 success, 1 the
 * work failed (message on stderr), 2 bad usage (one-line message).
 */
#ifndef FY_CLI_CLI_H
#define FY_CLI_CLI_H

#include <getopt.h>

int cmd_version(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_spm(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* `fanyi model <verb>`: each verb lives in its own cmd_model_<verb>.c. */
int cmd_model_fetch(int argc, char **argv);
int cmd_model_verify(int argc, char **argv);
int cmd_model_info(int argc, char **argv);
int cmd_model_list(int argc, char **argv);
int cmd_model_synth(int argc, char **argv);

/* `fanyi translate --file IN [-o OUT] [--bilingual]` (cmd_translate_file.c):
 * translates one document with sched and reg; OUT NULL: the translated name
 * beside IN ("-": stdout). bilingual: a PDF's pages each followed by its
 * translation. Returns the exit status. */
struct fy_scheduler;
struct fy_registry;
int cli_translate_file(const char *in, const char *out, const char *from, const char *to,
                       int bilingual, struct fy_scheduler *sched, struct fy_registry *reg);

/* The program version string ("0.1.0"). */
const char *cli_version(void);

/* Prints "fanyi CMD: MESSAGE (see 'fanyi CMD --help')" on stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long that reports unknown options and missing arguments as one
 * line via cli_usage_error and then returns '?'. cmd names the subcommand
 * in messages. Resets getopt state on the first call for a new argv. */
int cli_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
               const struct option *longopts);

/* Parses a whole non-negative decimal number within [min, max] into *out;
 * returns 0, or cli_usage_error's 2 naming the option. */
int cli_parse_long(const char *cmd, const char *opt, const char *text, long min, long max,
                   long *out);

/* Parses a number in (min, max] into *out; returns 0, or cli_usage_error's 2
 * naming the option. */
int cli_parse_double(const char *cmd, const char *opt, const char *text, double min, double max,
                     double *out);

#endif
