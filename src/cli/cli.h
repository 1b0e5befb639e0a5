/* cli.h - the `fanyi` subcommands and the helpers they share.
 *
 * Each subcommand is `int cmd_NAME(int argc, char **argv)` with argv[0] the
 * subcommand's name; it returns the process exit status: 0 success, 1 the
 * work failed (message on stderr), 2 bad usage (one-line message).
 */
#ifndef FY_CLI_CLI_H
#define FY_CLI_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

int cmd_version(int argc, char **argv);
int cmd_translate(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_spm(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* `fanyi model <verb>`: each verb lives in its own cmd_model_<verb>.c. */
int cmd_model_fetch(int argc, char **argv);
int cmd_model_verify(int argc, char **argv);
int cmd_model_info(int argc, char **argv);
int cmd_model_list(int argc, char **argv);
int cmd_model_synth(int argc, char **argv);

/* `fanyi translate --file IN [-o OUT] [--bilingual]` (cmd_translate_file.c):
 * translates one document with sched and reg. Returns the exit status. */
typedef struct cli_file_options {
    const char *in;
    const char *out;        /* NULL: the translated name beside IN; "-": stdout */
    const char *from, *to;  /* NULL: the document's, detected; the default target */
    int force;              /* replace an OUT that exists */
    long max_mb, max_chars; /* --max-document-mb/-chars; 0: text/document.h's defaults */
    int bilingual;          /* a PDF's pages each followed by its translation */
    const struct fy_glossary *glossary; /* --glossary (compiled, borrowed), or NULL */
} cli_file_options;
struct fy_scheduler;
struct fy_registry;
int cli_translate_file(const cli_file_options *fo, struct fy_scheduler *sched,
                       struct fy_registry *reg);

/* Opens the devices spec names (nn/backend.h: auto, cpu, vulkan[:N], lists)
 * and gives each its workers in *so: the CPU cpu_threads with so's batches,
 * each GPU gpu_threads with batches as large as it asks and device_mb of
 * its memory for models (0: its default budget). *devs and *n are for
 * fy_nn_devices_close. 0, or a negative code with err. */
struct fy_scheduler_options;
struct fy_nn_dev;
int cli_open_devices(const char *spec, int cpu_threads, int gpu_threads, long device_mb,
                     struct fy_scheduler_options *so, struct fy_nn_dev ***devs, int *n,
                     fy_error *err);

/* Starts helpers (fy_nn_cpu_helpers, for cores cores) when devs include
 * the CPU. Returns how many started (0 without the CPU), or an error code
 * with err set. fy_nn_cpu_helpers(0, ...) stops them. */
int cli_start_helpers(struct fy_nn_dev *const *devs, int n, long helpers, long cores,
                      fy_error *err);

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

/* "20.1 MiB", "512.0 KiB", "100 bytes": a size for people, in out (cap
 * bytes; 32 is enough). Returns out. */
const char *cli_size(uint64_t bytes, char *out, size_t cap);

/* ---- progress on a terminal ------------------------------------------------
 *
 * Work that takes long (translate --file, a big stdin, model synth) draws
 * one line on stderr, redrawn in place, only when stderr is a terminal: a
 * pipe or a log file never receives it. Redraws come at most every 250 ms
 * ($FANYI_PROGRESS_MS sets the interval: tests use 0); done clears the
 * line, so what follows starts on a clean one. */
typedef struct cli_progress {
    int on;       /* stderr is a terminal (and the caller wants it) */
    int shown;    /* a line is on the screen */
    double start; /* fy_now_s() of cli_progress_start */
    double last;  /* fy_now_s() of the last draw */
    double every; /* seconds between draws */
} cli_progress;

/* Starts p; want 0 turns it off whatever stderr is. */
void cli_progress_start(cli_progress *p, int want);

/* Draws "fanyi CMD: TEXT" if the interval has passed (always with force). */
void cli_progress_draw(cli_progress *p, int force, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Seconds since cli_progress_start. */
double cli_progress_elapsed(const cli_progress *p);

/* Clears the line if one is shown. Harmless when off. */
void cli_progress_done(cli_progress *p);

/* ---- models ------------------------------------------------------------------ */

/* The model directory a command that needs one model uses when none is
 * named: $FANYI_MODEL_DIR, else in the models root (models_opt, else
 * $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models: fy_models_root) its
 * zh-en, or the only model there when it has no zh-en. Malloc'd (NULL only
 * when out of memory). */
char *cli_default_model_dir(const char *models_opt);

/* 1 if dir holds a model written by `fanyi model synth` (its model.yml
 * says so), else 0 (also when it cannot be read). */
int cli_model_is_synthetic(const char *dir);

#endif
