/* models.c - directions, lazy loading under a memory budget, routes.
 *
 * Each direction is an entry whose state moves UNLOADED -> LOADING ->
 * READY -> UNLOADING -> UNLOADED; only the thread that moved an entry to
 * LOADING or UNLOADING moves it on, without holding the registry lock
 * while it opens or frees the model, and others wait on `changed`.
 */
#include "translate/models.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/bundle.h"
#include "model/discover.h"
#include "text/segment.h"
#include "translate/cache_key.h"
#include "translate/confidence.h"
#include "util/clock.h"
#include "util/path.h"

enum { E_UNLOADED, E_LOADING, E_READY, E_UNLOADING };

typedef struct entry {
    char source[FY_LANG_MAX], target[FY_LANG_MAX], name[FY_PAIR_MAX];
    char *dir, *model;                  /* directory; model file name */
    char cache_name[FY_CACHE_NAME_MAX]; /* names the model in cache keys (cache_key.h),
                                           from its files' content at each load */
    uint64_t file_bytes;                /* its files on disk, for the estimate before a load */
    int state;
    fy_translator *t;
    fy_engine engine;
    size_t cost, reserved; /* measured when READY; estimated while LOADING */
    size_t refs;           /* leases */
    int64_t used_us;       /* last acquired or released */
    uint64_t loads, unloads;
    double load_s;
    fy_engine_stats retired; /* work of earlier loads */
} entry;

struct fy_registry {
    fy_registry_options o;
    char *root;
    entry *e;
    size_t n;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t used; /* cost of READY and UNLOADING entries, reserve of LOADING ones */
};

struct fy_lease {
    fy_registry *r;
    entry *e[FY_ROUTE_MAX];
    fy_route route;
    char name[3 * FY_LANG_MAX];
};

void fy_registry_options_default(fy_registry_options *o)
{
    memset(o, 0, sizeof *o);
    fy_translator_options_default(&o->topt);
    o->beam = 1;
    o->threads = 1;
}

/* ---- finding directions ---------------------------------------------------- */

static uint64_t files_bytes(const fy_model_files *f)
{
    const char *paths[] = {f->model, f->shortlist, f->src_vocab,
                           strcmp(f->src_vocab, f->trg_vocab) ? f->trg_vocab : NULL};
    uint64_t total = 0;
    struct stat st;
    for (int i = 0; i < 4; i++)
        if (paths[i] && !stat(paths[i], &st)) total += (uint64_t)st.st_size;
    return total;
}

/* The direction of a model file name's infix ("model.enzh.bin"). */
static int infix_pair(const char *model, char *src, char *tgt)
{
    const char *name = fy_path_base(model), *a = strchr(name, '.');
    const char *e = a ? strchr(a + 1, '.') : NULL;
    char infix[16];
    if (!e || (size_t)(e - a - 1) >= sizeof infix) return -1;
    memcpy(infix, a + 1, (size_t)(e - a - 1));
    infix[e - a - 1] = '\0';
    return fy_lang_pair_from_infix(infix, src, tgt);
}

/* Adds the model directory dir; named: its name must be the direction. */
static int add_dir(fy_registry *r, const char *dir, int named, fy_error *err)
{
    char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
    fy_model_files f;
    int rc = fy_model_discover(dir, &f, err);
    if (rc) return rc;
    int pair = fy_lang_pair_parse(fy_path_base(dir), src, tgt);
    if (pair && !named) pair = infix_pair(f.model, src, tgt);
    if (pair && !named) {
        /* A broken model says what is wrong with it before its name does. */
        fy_bundle *b = fy_bundle_open(dir, 1, err);
        if (!b) {
            fy_model_files_free(&f);
            return err->code;
        }
        fy_bundle_free(b);
    }
    if (pair) {
        rc = fy_err(err, FY_EINVAL,
                    "%s: cannot tell the direction: name the directory SRC-TGT (e.g. zh-en), or "
                    "name the model file model.SRCTGT.* (e.g. model.zhen.bin)",
                    dir);
        fy_model_files_free(&f);
        return rc;
    }
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->e[i].source, src) || strcmp(r->e[i].target, tgt)) continue;
        rc = fy_err(err, FY_EINVAL, "two models for %s->%s: %s and %s", src, tgt, r->e[i].dir, dir);
        fy_model_files_free(&f);
        return rc;
    }
    entry *grown = realloc(r->e, (r->n + 1) * sizeof *grown);
    if (!grown) {
        fy_model_files_free(&f);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    r->e = grown;
    entry *e = &r->e[r->n];
    memset(e, 0, sizeof *e);
    snprintf(e->source, sizeof e->source, "%s", src);
    snprintf(e->target, sizeof e->target, "%s", tgt);
    fy_lang_pair_name(src, tgt, e->name, sizeof e->name);
    e->dir = strdup(dir);
    e->model = strdup(fy_path_base(f.model));
    e->file_bytes = files_bytes(&f);
    fy_model_files_free(&f);
    r->n++;
    if (!e->dir || !e->model) return fy_err(err, FY_ENOMEM, "out of memory");
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds every SRC-TGT subdirectory of root that holds a model, in name order. */
static int scan_root(fy_registry *r, const char *root, fy_error *err)
{
    DIR *d = opendir(root);
    if (!d) return fy_err(err, FY_ENOTFOUND, "%s: cannot open the models directory", root);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d))) {
        char src[FY_LANG_MAX], tgt[FY_LANG_MAX];
        if (de->d_name[0] == '.' || fy_lang_pair_parse(de->d_name, src, tgt)) continue;
        if (n == cap) {
            char **g = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g) rc = FY_ENOMEM;
            if (g) names = g;
        }
        if (!rc && !(names[n++] = strdup(de->d_name))) rc = FY_ENOMEM;
    }
    closedir(d);
    if (!rc) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && !rc; i++) {
        char path[4096];
        fy_model_files f;
        fy_error skip;
        snprintf(path, sizeof path, "%s/%s", root, names[i]);
        if (fy_model_discover(path, &f, &skip)) continue; /* no model there (yet) */
        fy_model_files_free(&f);
        rc = add_dir(r, path, 1, err);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc == FY_ENOMEM ? fy_err(err, rc, "out of memory") : rc;
}

fy_registry *fy_registry_open(const fy_registry_options *o, fy_error *err)
{
    fy_registry *r = calloc(1, sizeof *r);
    if (!r) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    r->o = *o;
    if (r->o.threads < 1) r->o.threads = 1;
    if (r->o.beam < 1 || r->o.beam > r->o.topt.max_beam) {
        fy_err(err, FY_EINVAL, "beam %d is outside [1, %d] (the max beam)", r->o.beam,
               r->o.topt.max_beam);
        free(r);
        return NULL;
    }
    r->o.dirs = NULL;
    r->o.root = NULL;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    int rc = 0;
    for (size_t i = 0; i < o->ndirs && !rc; i++) rc = add_dir(r, o->dirs[i], 0, err);
    if (!rc && o->root) rc = scan_root(r, o->root, err);
    if (!rc && !r->n)
        rc = fy_err(err, FY_ENOTFOUND, "%s: no model directories (named like zh-en) in it",
                    o->root ? o->root : "(none given)");
    if (rc) {
        fy_registry_free(r);
        return NULL;
    }
    return r;
}

/* ---- loading and unloading ------------------------------------------------- */

static void add_stats(fy_engine_stats *to, const fy_engine_stats *from)
{
    to->sentences += from->sentences;
    to->batches += from->batches;
    to->cache_hits += from->cache_hits;
}

/* Unloads e (READY, no leases): lock held on entry and on return, released
 * while the scheduler forgets it and the model is freed. */
static void unload(fy_registry *r, entry *e)
{
    e->state = E_UNLOADING;
    pthread_mutex_unlock(&r->lock);
    fy_engine_stats st;
    fy_scheduler_forget(r->o.sched, &e->engine, &st);
    fy_translator_free(e->t);
    pthread_mutex_lock(&r->lock);
    add_stats(&e->retired, &st);
    e->t = NULL;
    r->used -= e->cost;
    e->state = E_UNLOADED;
    e->unloads++;
    pthread_cond_broadcast(&r->changed);
}

/* Unloads least recently used idle models until need more bytes fit the
 * budget (or none is left to unload). Lock held. */
static void make_room(fy_registry *r, size_t need)
{
    while (r->o.memory_budget && r->used + need > r->o.memory_budget) {
        entry *lru = NULL;
        for (size_t i = 0; i < r->n; i++) {
            entry *e = &r->e[i];
            if (e->state == E_READY && !e->refs && (!lru || e->used_us < lru->used_us)) lru = e;
        }
        if (!lru) return; /* everything loaded is in use: over budget until released */
        unload(r, lru);
    }
}

static size_t estimate(const fy_registry *r, const entry *e)
{
    if (e->cost) return e->cost;
    /* Before the first load: the files, plus a guess at prepared weights
     * and each worker's scratch (measured after the load). */
    return (size_t)(e->file_bytes + e->file_bytes / 4) + (size_t)r->o.threads * (16u << 20);
}

/* The cache name of e as t opened it: from the content of the files it
 * read (hashed once per load, ~0.05 s for a 60 MB model: a replica that
 * finds the same model elsewhere on its disk shares the cache) and the
 * options that change its output. */
static int engine_name(const entry *e, const fy_translator *t, char *out, fy_error *err)
{
    const fy_bundle *b = fy_translator_bundle(t);
    const fy_translator_options *o = fy_translator_options_get(t);
    return fy_cache_model_name(e->name, &b->files, b->shortlist != NULL, o->max_length_factor, out,
                               err);
}

/* Loads e (UNLOADED): lock held on entry and on return. */
static int load(fy_registry *r, entry *e, fy_error *err)
{
    e->state = E_LOADING;
    e->reserved = estimate(r, e);
    make_room(r, e->reserved);
    r->used += e->reserved;
    pthread_mutex_unlock(&r->lock);
    double t0 = fy_now_s();
    fy_translator *t = fy_translator_open(e->dir, &r->o.topt, err);
    char name[FY_CACHE_NAME_MAX];
    if (t && engine_name(e, t, name, err)) {
        fy_translator_free(t);
        t = NULL;
    }
    double secs = fy_now_s() - t0;
    pthread_mutex_lock(&r->lock);
    r->used -= e->reserved;
    e->reserved = 0;
    if (!t) {
        e->state = E_UNLOADED;
        pthread_cond_broadcast(&r->changed);
        return err->code ? err->code : FY_EFORMAT;
    }
    e->t = t;
    memcpy(e->cache_name, name, sizeof name);
    fy_translator_engine_scored(t, e->cache_name, &e->engine);
    e->cost = (size_t)fy_bundle_file_bytes(fy_translator_bundle(t)) + fy_translator_heap_bytes(t) +
              (size_t)r->o.threads * fy_translator_worker_bytes(t);
    e->refs++; /* pinned while the others make room for it */
    make_room(r, e->cost);
    e->refs--;
    r->used += e->cost;
    e->state = E_READY;
    e->loads++;
    e->load_s = secs;
    pthread_cond_broadcast(&r->changed);
    return 0;
}

/* Pins e, loading it when needed. Lock held. */
static int pin(fy_registry *r, entry *e, fy_error *err)
{
    for (;;) {
        if (e->state == E_READY) {
            e->refs++;
            e->used_us = fy_now_us();
            return 0;
        }
        if (e->state == E_UNLOADED) {
            int rc = load(r, e, err);
            if (rc) return rc;
            continue;
        }
        pthread_cond_wait(&r->changed, &r->lock);
    }
}

static void unpin(fy_registry *r, entry *e)
{
    e->refs--;
    e->used_us = fy_now_us();
    if (!e->refs) make_room(r, 0); /* a load may have gone over while this was in use */
}

void fy_registry_free(fy_registry *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->n; i++)
        if (r->e[i].state == E_READY) unload(r, &r->e[i]);
    pthread_mutex_unlock(&r->lock);
    for (size_t i = 0; i < r->n; i++) {
        free(r->e[i].dir);
        free(r->e[i].model);
    }
    free(r->e);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* ---- routes ---------------------------------------------------------------- */

static entry *find(const fy_registry *r, const char *src, const char *tgt)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->e[i].source, src) && !strcmp(r->e[i].target, tgt)) return &r->e[i];
    return NULL;
}

/* The entries of src->tgt's route: 1, 2 (through English) or 0. */
static int route_from(const fy_registry *r, const char *src, const char *tgt, entry **out)
{
    if ((out[0] = find(r, src, tgt))) return 1;
    if (!strcmp(src, "en") || !strcmp(tgt, "en")) return 0;
    out[0] = find(r, src, "en");
    out[1] = find(r, "en", tgt);
    return out[0] && out[1] ? 2 : 0;
}

/* As route_from; Traditional Chinese is read by a Simplified model when
 * no Traditional one serves the pair (better than no model at all). */
static int route_entries(const fy_registry *r, const char *src, const char *tgt, entry **out)
{
    if (!src || !tgt || !strcmp(src, tgt)) return 0;
    int n = route_from(r, src, tgt, out);
    if (!n && !strcmp(src, "zh-Hant") && strcmp(tgt, "zh")) n = route_from(r, "zh", tgt, out);
    return n;
}

int fy_registry_route_kind(const fy_registry *r, const char *src, const char *tgt)
{
    entry *e[2];
    return route_entries(r, src, tgt, e);
}

void fy_registry_describe(const fy_registry *r, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < r->n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%s->%s", i ? ", " : "", r->e[i].source,
                               r->e[i].target);
}

/* The first leg's English, cleaned up as a request into English would be,
 * is what the second leg reads. */
static char *pivot_cleanup(const char *text, size_t len)
{
    return fy_cleanup_english(text, len);
}

fy_lease *fy_registry_acquire(fy_registry *r, const char *src, const char *tgt, fy_error *err)
{
    entry *e[2] = {NULL, NULL};
    int n = route_entries(r, src, tgt, e);
    if (!n) {
        char pairs[512];
        fy_registry_describe(r, pairs, sizeof pairs);
        fy_err(err, FY_ENOTFOUND, "no model translates %s->%s; this server has %s%s", src, tgt,
               pairs, r->n > 1 ? " (and the pairs through English they make)" : "");
        return NULL;
    }
    fy_lease *l = calloc(1, sizeof *l);
    if (!l) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    l->r = r;
    pthread_mutex_lock(&r->lock);
    for (int k = 0; k < n; k++) {
        if (pin(r, e[k], err)) {
            while (k-- > 0) unpin(r, e[k]);
            pthread_mutex_unlock(&r->lock);
            free(l);
            return NULL;
        }
        l->e[k] = e[k];
        l->route.legs[k] = &e[k]->engine;
    }
    pthread_mutex_unlock(&r->lock);
    l->route.n = n;
    l->route.between = n == 2 ? pivot_cleanup : NULL;
    if (n == 1)
        snprintf(l->name, sizeof l->name, "%s", e[0]->name);
    else
        snprintf(l->name, sizeof l->name, "%s-%s", e[0]->name, e[1]->target);
    return l;
}

int fy_registry_preload(fy_registry *r, fy_error *err)
{
    for (size_t i = 0; i < r->n; i++) {
        fy_lease *l = fy_registry_acquire(r, r->e[i].source, r->e[i].target, err);
        if (!l) return err->code;
        fy_lease_release(l);
    }
    return 0;
}

void fy_lease_release(fy_lease *l)
{
    if (!l) return;
    fy_registry *r = l->r;
    pthread_mutex_lock(&r->lock);
    for (int k = 0; k < l->route.n; k++) unpin(r, l->e[k]);
    pthread_mutex_unlock(&r->lock);
    free(l);
}

const fy_route *fy_lease_route(const fy_lease *l)
{
    return &l->route;
}

const fy_translator *fy_lease_first(const fy_lease *l)
{
    return l->e[0]->t;
}

const fy_translator *fy_lease_last(const fy_lease *l)
{
    return l->e[l->route.n - 1]->t;
}

const char *fy_lease_name(const fy_lease *l)
{
    return l->name;
}

/* ---- listing --------------------------------------------------------------- */

size_t fy_registry_count(const fy_registry *r)
{
    return r->n;
}

int fy_registry_info(fy_registry *r, size_t i, fy_direction_info *out)
{
    memset(out, 0, sizeof *out);
    if (i >= r->n) return FY_EINVAL;
    pthread_mutex_lock(&r->lock);
    entry *e = &r->e[i];
    memcpy(out->source, e->source, sizeof out->source);
    memcpy(out->target, e->target, sizeof out->target);
    memcpy(out->name, e->name, sizeof out->name);
    out->dir = e->dir;
    out->model = e->model;
    out->loaded = e->state == E_READY || e->state == E_LOADING;
    out->bytes = e->cost;
    out->loads = e->loads;
    out->unloads = e->unloads;
    out->last_load_s = e->load_s;
    out->work = e->retired;
    out->leases = e->refs;
    if (e->state == E_READY) {
        /* Under the lock: an unload adds its engine's counts to retired. */
        fy_engine_stats st;
        fy_scheduler_engine_stats(r->o.sched, &e->engine, &st);
        add_stats(&out->work, &st);
        out->work.queued = st.queued;
        out->work.in_flight = st.in_flight;
    }
    pthread_mutex_unlock(&r->lock);
    return 0;
}

int fy_registry_beam(const fy_registry *r, int *max_beam)
{
    if (max_beam) *max_beam = r->o.topt.max_beam;
    return r->o.beam;
}

size_t fy_registry_memory(fy_registry *r, size_t *budget)
{
    pthread_mutex_lock(&r->lock);
    size_t used = r->used;
    pthread_mutex_unlock(&r->lock);
    if (budget) *budget = r->o.memory_budget;
    return used;
}

/* Adds tag to the sorted set out[0..n) of capacity cap; returns the new n
 * (a full set takes no more). */
static size_t set_add(char (*out)[FY_LANG_MAX], size_t n, size_t cap, const char *tag)
{
    size_t at = 0;
    while (at < n && strcmp(out[at], tag) < 0) at++;
    if ((at < n && !strcmp(out[at], tag)) || n == cap) return n;
    memmove(out[at + 1], out[at], (n - at) * sizeof *out);
    snprintf(out[at], FY_LANG_MAX, "%s", tag);
    return n + 1;
}

size_t fy_registry_sources(const fy_registry *r, char (*out)[FY_LANG_MAX], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) n = set_add(out, n, cap, r->e[i].source);
    return n;
}

size_t fy_registry_languages(const fy_registry *r, char (*out)[FY_LANG_MAX], size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        n = set_add(out, n, cap, r->e[i].source);
        n = set_add(out, n, cap, r->e[i].target);
    }
    return n;
}

size_t fy_registry_targets(const fy_registry *r, const char *src, char (*out)[FY_LANG_MAX],
                           size_t cap)
{
    size_t n = 0; /* every model's target is reachable directly or through English */
    for (size_t i = 0; i < r->n; i++)
        if (fy_registry_route_kind(r, src, r->e[i].target))
            n = set_add(out, n, cap, r->e[i].target);
    return n;
}
