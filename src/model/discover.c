/* discover.c - locating a model's files in a directory by name pattern. */
#include "model/discover.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One pattern "prefix*suffix" and what matched it. */
typedef struct match {
    const char *prefix, *suffix;
    char *found;  /* first match (malloc'd name) */
    char *second; /* a second match, for the ambiguity message */
} match;

static int name_matches(const char *name, const char *prefix, const char *suffix)
{
    size_t n = strlen(name), p = strlen(prefix), s = strlen(suffix);
    return n > p + s && strncmp(name, prefix, p) == 0 && strcmp(name + n - s, suffix) == 0;
}

static int record(match *m, const char *name)
{
    char *copy = strdup(name);
    if (!copy) return FY_ENOMEM;
    /* Keep the two smallest names so messages do not depend on readdir order. */
    if (!m->found || strcmp(copy, m->found) < 0) {
        free(m->second);
        m->second = m->found;
        m->found = copy;
    } else if (!m->second || strcmp(copy, m->second) < 0) {
        free(m->second);
        m->second = copy;
    } else {
        free(copy);
    }
    return 0;
}

static int is_regular(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

enum { M_MODEL, M_LEX, M_VOCAB, M_SRC, M_TRG, M_COUNT };

static int scan(const char *dir, match *m, fy_error *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        int code = errno == ENOENT || errno == ENOTDIR ? FY_ENOTFOUND : FY_EIO;
        return fy_err(err, code, "%s: cannot open model directory: %s", dir, strerror(errno));
    }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        for (int i = 0; i < M_COUNT && !rc; i++) {
            if (name_matches(e->d_name, m[i].prefix, m[i].suffix) && is_regular(dir, e->d_name))
                rc = record(&m[i], e->d_name);
        }
    }
    closedir(d);
    return rc ? fy_err(err, rc, "%s: out of memory", dir) : 0;
}

static int ambiguous(const char *dir, const match *m, fy_error *err)
{
    for (int i = 0; i < M_COUNT; i++) {
        if (m[i].second)
            return fy_err(err, FY_EINVAL, "%s: ambiguous: both %s and %s match %s*%s", dir,
                          m[i].found, m[i].second, m[i].prefix, m[i].suffix);
    }
    return 0;
}

/* dir names the directory in messages and out->dir; files (dir, or where
 * its link points) is where the file paths point. */
static int fill(const char *dir, const char *files, match *m, fy_model_files *out, fy_error *err)
{
    if (!m[M_MODEL].found) return fy_err(err, FY_ENOTFOUND, "%s: no model file (model.*.bin)", dir);
    int shared = m[M_VOCAB].found != NULL;
    if (shared && (m[M_SRC].found || m[M_TRG].found))
        return fy_err(err, FY_EINVAL, "%s: ambiguous: both %s and %s present", dir,
                      m[M_VOCAB].found, m[M_SRC].found ? m[M_SRC].found : m[M_TRG].found);
    if (!shared && !m[M_SRC].found && !m[M_TRG].found)
        return fy_err(err, FY_ENOTFOUND,
                      "%s: no vocabulary (vocab.*.spm, or srcvocab.*.spm + trgvocab.*.spm)", dir);
    if (!shared && (!m[M_SRC].found || !m[M_TRG].found))
        return fy_err(err, FY_ENOTFOUND, "%s: %s present but no %s", dir,
                      m[M_SRC].found ? m[M_SRC].found : m[M_TRG].found,
                      m[M_SRC].found ? "trgvocab.*.spm" : "srcvocab.*.spm");
    out->dir = strdup(dir);
    out->model = join(files, m[M_MODEL].found);
    out->shortlist = m[M_LEX].found ? join(files, m[M_LEX].found) : NULL;
    out->src_vocab = join(files, shared ? m[M_VOCAB].found : m[M_SRC].found);
    out->trg_vocab = join(files, shared ? m[M_VOCAB].found : m[M_TRG].found);
    if (!out->dir || !out->model || (m[M_LEX].found && !out->shortlist) || !out->src_vocab ||
        !out->trg_vocab)
        return fy_err(err, FY_ENOMEM, "%s: out of memory", dir);
    return 0;
}

int fy_model_discover(const char *dir, fy_model_files *out, fy_error *err)
{
    match m[M_COUNT] = {
        [M_MODEL] = {"model.", ".bin", NULL, NULL},  [M_LEX] = {"lex.", ".s2t.bin", NULL, NULL},
        [M_VOCAB] = {"vocab.", ".spm", NULL, NULL},  [M_SRC] = {"srcvocab.", ".spm", NULL, NULL},
        [M_TRG] = {"trgvocab.", ".spm", NULL, NULL},
    };
    memset(out, 0, sizeof *out);
    /* A model directory that is a link (fanyi model fetch makes MODELS/zh-en
     * one, to a version directory) is resolved once: every file then comes
     * from the same version even if fetch switches the link meanwhile. */
    struct stat st;
    char *real = !lstat(dir, &st) && S_ISLNK(st.st_mode) ? realpath(dir, NULL) : NULL;
    const char *files = real ? real : dir;
    int rc = scan(files, m, err);
    if (!rc) rc = ambiguous(dir, m, err);
    if (!rc) rc = fill(dir, files, m, out, err);
    free(real);
    for (int i = 0; i < M_COUNT; i++) {
        free(m[i].found);
        free(m[i].second);
    }
    if (rc) fy_model_files_free(out);
    return rc;
}

void fy_model_files_free(fy_model_files *f)
{
    if (!f) return;
    free(f->dir);
    free(f->model);
    free(f->shortlist);
    free(f->src_vocab);
    free(f->trg_vocab);
    memset(f, 0, sizeof *f);
}

/* $HOME + rel (HOME unset: the current directory). */
static char *home_path(const char *rel)
{
    const char *home = getenv("HOME");
    if (!home || !home[0]) home = ".";
    size_t a = strlen(home), b = strlen(rel);
    char *p = malloc(a + b + 1);
    if (!p) return NULL;
    memcpy(p, home, a);
    memcpy(p + a, rel, b + 1);
    return p;
}

char *fy_model_default_dir(const char *explicit_dir)
{
    if (explicit_dir) return strdup(explicit_dir);
    const char *env = getenv("FANYI_MODEL_DIR");
    if (env && env[0]) return strdup(env);
    return home_path("/.local/share/fanyi/models/zh-en");
}

/* dir without its last component (trailing slashes ignored); malloc'd. */
static char *parent_dir(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    while (n > 0 && dir[n - 1] != '/') n--;
    while (n > 1 && dir[n - 1] == '/') n--;
    if (n == 0) return strdup(".");
    char *p = malloc(n + 1);
    if (p) memcpy(p, dir, n), p[n] = '\0';
    return p;
}

char *fy_models_root(const char *explicit_root)
{
    if (explicit_root) return strdup(explicit_root);
    const char *env = getenv("FANYI_MODELS_DIR");
    if (env && env[0]) return strdup(env);
    const char *one = getenv("FANYI_MODEL_DIR");
    if (one && one[0]) return parent_dir(one);
    return home_path("/.local/share/fanyi/models");
}
