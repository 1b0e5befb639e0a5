/* cmd_model_list.c - `fanyi model list`: installed models, or the catalogue.
 *
 * Installed: each subdirectory of the models root (fy_models_root:
 * $FANYI_MODELS_DIR, the parent of $FANYI_MODEL_DIR, or
 * ~/.local/share/fanyi/models) is one model, shown as ok when it loads
 * completely, broken (with the reason) otherwise; the version column shows
 * the catalogue's version when the files' names and sizes match the
 * catalogue entry of the directory's name (a direction), or else of the
 * files' names. sha256 digests are left to `fanyi model verify`, which
 * reads every byte.
 *
 * --available: every direction of the built-in catalogue with its
 * languages, version, architecture, download size and whether it is
 * installed under the root.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "model/manifest.h"
#include "model/verify.h"
#include "util/lang.h"

#define CMD "model list"
#define MIB (1024.0 * 1024.0)

static void usage(void)
{
    printf("usage: fanyi model list [ROOT]\n"
           "       fanyi model list --available [--json] [ROOT]\n\n"
           "Lists the models installed under ROOT (default: $FANYI_MODELS_DIR, else the\n"
           "directory holding $FANYI_MODEL_DIR, else ~/.local/share/fanyi/models), one\n"
           "directory per direction, with their status: ok (loads completely) or broken\n"
           "(with the reason), and the catalogue's version when the files' names and\n"
           "sizes match it. Run 'fanyi model verify DIR' to also check sha256 digests.\n\n"
           "  --available   list every direction of the built-in catalogue of Firefox\n"
           "                Translations models instead: languages, version, architecture,\n"
           "                download size, and whether it is installed under ROOT\n"
           "                (fetch one with 'fanyi model fetch DIRECTION')\n"
           "  --json        with --available: one JSON array\n\n"
           "Exit status: 0 listed (even when some models are broken), 1 ROOT cannot be read,\n"
           "2 bad usage.\n");
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* ------------------------------------------------------------ installed */

/* Whether every file of model is in dir with the catalogue's size: a cheap
 * stand-in for hashing, to tell the official files from look-alikes. */
static int files_match(const char *dir, const fy_manifest_model *model)
{
    for (size_t i = 0; i < model->nfiles; i++) {
        char *p = join(dir, model->files[i].name);
        struct stat st;
        int good = p && !stat(p, &st) && (uint64_t)st.st_size == model->files[i].size;
        free(p);
        if (!good) return 0;
    }
    return model->nfiles > 0;
}

/* The catalogue entry dir holds: the one its name is a direction of, else
 * the one its files' names belong to; NULL when the sizes do not match. */
static const fy_manifest_model *installed_model(const char *dir, const char *name,
                                                const fy_manifest *m)
{
    const fy_manifest_model *known = fy_manifest_find_direction(m, name);
    if (!known) known = fy_model_identify(dir, m);
    return known && files_match(dir, known) ? known : NULL;
}

static void show(const char *root, const char *name, const fy_manifest *m)
{
    char *dir = join(root, name);
    if (!dir) return;
    fy_error err = {0};
    fy_model_info in;
    if (fy_model_inspect(dir, &in, &err)) {
        printf("%-16s broken  %s\n", name, err.msg);
    } else {
        const fy_manifest_model *known = installed_model(dir, name, m);
        uint64_t bytes = in.model_bytes + in.shortlist_bytes + in.src_vocab_bytes +
                         (in.shared_vocab ? 0 : in.trg_vocab_bytes);
        printf("%-16s ok      %-8s %7.1f MiB  %s\n", name, known ? known->version : "-",
               (double)bytes / MIB, dir);
    }
    fy_model_info_free(&in);
    free(dir);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_subdir(const struct dirent *e)
{
    return e->d_name[0] != '.' &&
           (e->d_type == DT_DIR || e->d_type == DT_LNK || e->d_type == DT_UNKNOWN);
}

static int list_installed(const char *root, const fy_manifest *m)
{
    struct dirent **list = NULL;
    int n = scandir(root, &list, is_subdir, by_name), shown = 0, status = 0;
    if (n < 0 && errno != ENOENT) {
        fprintf(stderr, "fanyi %s: cannot read %s: %s\n", CMD, root, strerror(errno));
        status = 1;
    }
    for (int i = 0; i < n; i++) {
        struct stat st;
        char *p = join(root, list[i]->d_name);
        if (p && !stat(p, &st) && S_ISDIR(st.st_mode)) {
            show(root, list[i]->d_name, m);
            shown++;
        }
        free(p);
        free(list[i]);
    }
    free(list);
    if (!status && !shown)
        printf("no models installed in %s (run 'fanyi model list --available', then 'fanyi "
               "model fetch DIRECTION')\n",
               root);
    return status;
}

/* ------------------------------------------------------------ available */

static int by_model_name(const void *a, const void *b)
{
    return strcmp((*(const fy_manifest_model *const *)a)->name,
                  (*(const fy_manifest_model *const *)b)->name);
}

/* "installed", "differs" (a directory of that name whose files are not the
 * catalogue's sizes) or "-". */
static const char *install_state(const char *root, const fy_manifest_model *model)
{
    char *dir = join(root, model->name);
    struct stat st;
    const char *state = "-";
    if (dir && !stat(dir, &st) && S_ISDIR(st.st_mode))
        state = files_match(dir, model) ? "installed" : "differs";
    free(dir);
    return state;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_json(const fy_manifest_model *const *sorted, size_t n, const char *root)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const fy_manifest_model *mod = sorted[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_string(mod->name);
        const char *keys[] = {"source",  "target",       "source_name", "target_name",
                              "version", "architecture", "channel",     "installed"};
        const char *vals[] = {mod->source,
                              mod->target,
                              fy_lang_name(mod->source),
                              fy_lang_name(mod->target),
                              mod->version,
                              mod->architecture,
                              mod->channel,
                              install_state(root, mod)};
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            printf(", \"%s\": ", keys[k]);
            json_string(vals[k]);
        }
        printf(", \"bytes\": %" PRIu64 ", \"files\": %zu}", fy_manifest_model_bytes(mod),
               mod->nfiles);
    }
    printf("\n]\n");
}

static int list_available(const fy_manifest *m, const char *root, int json)
{
    size_t n = fy_manifest_model_count(m);
    const fy_manifest_model **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        fprintf(stderr, "fanyi %s: out of memory\n", CMD);
        return 1;
    }
    for (size_t i = 0; i < n; i++) sorted[i] = fy_manifest_model_at(m, i);
    qsort(sorted, n, sizeof *sorted, by_model_name);
    if (json) {
        print_json(sorted, n, root);
        free(sorted);
        return 0;
    }
    printf("%-12s %-44s %-8s %-12s %10s  %s\n", "direction", "languages", "version", "architecture",
           "size", "installed");
    for (size_t i = 0; i < n; i++) {
        const fy_manifest_model *mod = sorted[i];
        char langs[128];
        snprintf(langs, sizeof langs, "%s -> %s%s", fy_lang_name(mod->source),
                 fy_lang_name(mod->target), strcmp(mod->channel, "nightly") ? "" : " (nightly)");
        printf("%-12s %-44s %-8s %-12s %6.1f MiB  %s\n", mod->name, langs, mod->version,
               mod->architecture[0] ? mod->architecture : "-",
               (double)fy_manifest_model_bytes(mod) / MIB, install_state(root, mod));
    }
    printf("%zu directions; install one with 'fanyi model fetch DIRECTION' into %s/DIRECTION\n", n,
           root);
    free(sorted);
    return 0;
}

int cmd_model_list(int argc, char **argv)
{
    enum { O_AVAILABLE = 256, O_JSON };
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"available", no_argument, NULL, O_AVAILABLE},
                                         {"json", no_argument, NULL, O_JSON},
                                         {0}};
    int c, available = 0, json = 0;
    while ((c = cli_getopt(argc, argv, CMD, "h", opts)) != -1) {
        if (c == 'h') {
            usage();
            return 0;
        } else if (c == O_AVAILABLE) {
            available = 1;
        } else if (c == O_JSON) {
            json = 1;
        } else {
            return 2;
        }
    }
    const char *root_arg = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (json && !available) return cli_usage_error(CMD, "--json goes with --available");
    char *root = root_arg ? strdup(root_arg) : fy_models_root(NULL);
    size_t len = root ? strlen(root) : 0;
    while (len > 1 && root[len - 1] == '/') root[--len] = '\0';
    fy_error err = {0};
    fy_manifest *m = fy_manifest_builtin(NULL, &err);
    if (!root || !m) {
        fprintf(stderr, "fanyi %s: %s\n", CMD,
                !m ? err.msg : "no models directory (set HOME or FANYI_MODELS_DIR)");
        free(root);
        fy_manifest_free(m);
        return 1;
    }
    int status = available ? list_available(m, root, json) : list_installed(root, m);
    free(root);
    fy_manifest_free(m);
    return status;
}
