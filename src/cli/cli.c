/* cli.c - what the subcommands share: option parsing, sizes for people,
 * progress on a terminal, the default model directory. */
#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/discover.h"
#include "model/marian.h"
#include "model/synth.h"
#include "nn/backend.h"
#include "translate/scheduler.h"
#include "util/clock.h"

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

const char *cli_size(uint64_t bytes, char *out, size_t cap)
{
    if (bytes >= 1024 * 1024)
        snprintf(out, cap, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
    else if (bytes >= 1024)
        snprintf(out, cap, "%.1f KiB", (double)bytes / 1024.0);
    else
        snprintf(out, cap, "%llu bytes", (unsigned long long)bytes);
    return out;
}

/* ---- progress ---------------------------------------------------------------- */

void cli_progress_start(cli_progress *p, int want)
{
    const char *ms = getenv("FANYI_PROGRESS_MS");
    long every = ms && *ms ? atol(ms) : 250;
    p->on = want && isatty(STDERR_FILENO);
    p->shown = 0;
    p->start = fy_now_s();
    p->last = p->start;
    p->every = every >= 0 ? (double)every / 1000.0 : 0.25;
}

void cli_progress_draw(cli_progress *p, int force, const char *fmt, ...)
{
    if (!p->on) return;
    double now = fy_now_s();
    if (!force && now - p->last < p->every) return;
    p->last = now;
    va_list ap;
    fputs("\r", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\033[K", stderr); /* the rest of a longer line drawn before */
    fflush(stderr);
    p->shown = 1;
}

double cli_progress_elapsed(const cli_progress *p)
{
    return fy_now_s() - p->start;
}

void cli_progress_done(cli_progress *p)
{
    if (p->on && p->shown) fputs("\r\033[K", stderr);
    p->shown = 0;
}

/* ---- models ------------------------------------------------------------------ */

static char *join_path(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* The only model directory in root (hidden entries skipped), else NULL. */
static char *only_model(const char *root)
{
    DIR *d = opendir(root);
    if (!d) return NULL;
    char *found = NULL;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) && count < 2) {
        if (e->d_name[0] == '.') continue;
        char *path = join_path(root, e->d_name);
        fy_model_files f;
        fy_error err;
        if (path && fy_model_discover(path, &f, &err) == 0) {
            fy_model_files_free(&f);
            count++;
            free(found);
            found = path;
            path = NULL;
        }
        free(path);
    }
    closedir(d);
    if (count == 1) return found;
    free(found);
    return NULL;
}

char *cli_default_model_dir(const char *models_opt)
{
    const char *one = getenv("FANYI_MODEL_DIR");
    if (!models_opt && one && *one) return strdup(one);
    char *root = fy_models_root(models_opt);
    if (!root) return NULL;
    char *dir = join_path(root, "zh-en");
    struct stat st;
    if (dir && stat(dir, &st) != 0) {
        char *only = only_model(root);
        if (only) {
            free(dir);
            dir = only;
        }
    }
    free(root);
    return dir;
}

int cli_model_is_synthetic(const char *dir)
{
    fy_model_files f;
    fy_error err;
    if (fy_model_discover(dir, &f, &err)) return 0;
    fy_marian *m = fy_marian_open(f.model, &err);
    int synthetic = m && strstr(fy_marian_yaml(m), FY_SYNTH_MARK) != NULL;
    fy_marian_free(m);
    fy_model_files_free(&f);
    return synthetic;
}

int cli_open_devices(const char *spec, int cpu_threads, int gpu_threads, long device_mb,
                     fy_scheduler_options *so, fy_nn_dev ***devs, int *n, fy_error *err)
{
    int rc = fy_nn_devices_open(spec, devs, n, err);
    if (rc < 0) return rc;
    for (int i = 0; i < *n && i < FY_SCHED_DEVICES; i++) {
        fy_nn_dev *d = (*devs)[i];
        int cpu = d == fy_nn_cpu_device();
        if (!cpu && device_mb) d->budget = (size_t)device_mb << 20;
        so->devices[i] = (fy_sched_device){
            .dev = cpu ? NULL : d,
            .name = d->name,
            .threads = cpu ? cpu_threads : gpu_threads,
            .max_batch_sentences = cpu ? so->max_batch_sentences : d->max_rows,
            .max_batch_tokens = cpu ? so->max_batch_tokens : d->max_tokens,
        };
    }
    so->ndevices = *n < FY_SCHED_DEVICES ? *n : FY_SCHED_DEVICES;
    return 0;
}

int cli_start_helpers(fy_nn_dev *const *devs, int n, long helpers, long cores, fy_error *err)
{
    for (int i = 0; i < n; i++)
        if (devs[i] == fy_nn_cpu_device()) {
            int rc = fy_nn_cpu_helpers((int)helpers, (int)cores, err);
            return rc < 0 ? rc : (int)helpers;
        }
    return 0;
}
