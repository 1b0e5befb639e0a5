/* cmd_model_list.c - `fanyi model list`: the models installed under the models root.
 *
 * The root is the parent of the default model directory
 * (~/.local/share/fanyi/models, or the parent of $FANYI_MODEL_DIR); each
 * subdirectory is one model, shown as ok when it loads completely, broken
 * (with the reason) otherwise; the version column shows the manifest's
 * version when the file names and sizes match it. sha256 digests are left to
 * `fanyi model verify`, which reads every byte.
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

#define CMD "model list"
#define MIB (1024.0 * 1024.0)

static void usage(void)
{
    printf("usage: fanyi model list [ROOT]\n\n"
           "Lists the models installed under ROOT (default: the directory holding the\n"
           "default model directory, ~/.local/share/fanyi/models) with their status:\n"
           "ok (loads completely) or broken (with the reason), and the manifest version\n"
           "when the files' names and sizes match the built-in manifest.\n"
           "Run 'fanyi model verify DIR' to also check sha256 digests.\n\n"
           "Exit status: 0 listed (even when some models are broken), 1 ROOT cannot be read,\n"
           "2 bad usage.\n");
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Whether every file the manifest knows by name has the manifest's size: a
 * cheap stand-in for hashing, to tell the official files from look-alikes. */
static int sizes_match(const fy_model_info *in, const fy_manifest *m)
{
    const char *paths[] = {in->files.model, in->files.shortlist, in->files.src_vocab,
                           in->files.trg_vocab};
    for (size_t i = 0; i < 4; i++) {
        const fy_manifest_file *f =
            paths[i] ? fy_manifest_find_file(m, base_name(paths[i]), NULL) : NULL;
        struct stat st;
        if (f && (stat(paths[i], &st) || (uint64_t)st.st_size != f->size)) return 0;
    }
    return 1;
}

static void show(const char *root, const char *name, const fy_manifest *m)
{
    size_t n = strlen(root) + strlen(name) + 2;
    char *dir = malloc(n);
    if (!dir) return;
    snprintf(dir, n, "%s/%s", root, name);
    fy_error err = {0};
    fy_model_info in;
    if (fy_model_inspect(dir, &in, &err)) {
        printf("%-16s broken  %s\n", name, err.msg);
    } else {
        const fy_manifest_model *known = fy_model_identify(dir, m);
        if (known && !sizes_match(&in, m)) known = NULL; /* same names, other files */
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

int cmd_model_list(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {0}};
    int c;
    while ((c = cli_getopt(argc, argv, CMD, "h", opts)) != -1) {
        if (c == 'h') {
            usage();
            return 0;
        }
        return 2;
    }
    const char *root_arg = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    char *root = root_arg ? strdup(root_arg) : fy_model_default_dir(NULL);
    size_t len = root ? strlen(root) : 0;
    while (len > 1 && root[len - 1] == '/') root[--len] = '\0';
    char *slash = root && !root_arg ? strrchr(root, '/') : NULL;
    if (slash && slash != root) *slash = '\0';
    fy_error err = {0};
    fy_manifest *m = fy_manifest_builtin(NULL, &err);
    if (!root || !m) {
        fprintf(stderr, "fanyi %s: %s\n", CMD, m ? "out of memory" : err.msg);
        free(root);
        fy_manifest_free(m);
        return 1;
    }
    struct dirent **list = NULL;
    int n = scandir(root, &list, is_subdir, by_name), shown = 0, status = 0;
    if (n < 0 && errno != ENOENT) {
        fprintf(stderr, "fanyi %s: cannot read %s: %s\n", CMD, root, strerror(errno));
        status = 1;
    }
    for (int i = 0; i < n; i++) {
        struct stat st;
        size_t len = strlen(root) + strlen(list[i]->d_name) + 2;
        char *p = malloc(len);
        if (p) snprintf(p, len, "%s/%s", root, list[i]->d_name);
        if (p && !stat(p, &st) && S_ISDIR(st.st_mode)) {
            show(root, list[i]->d_name, m);
            shown++;
        }
        free(p);
        free(list[i]);
    }
    free(list);
    if (!status && !shown)
        printf("no models installed in %s (run 'fanyi model fetch zh-en')\n", root);
    free(root);
    fy_manifest_free(m);
    return status;
}
