/* verify.c - loading a model directory end to end and checking it against a manifest.
 *
 * Structure is checked by the same loaders the engine uses (fy_marian_open,
 * fy_model_config_read, fy_spm_open, fy_shortlist_open); this file adds the
 * checks between files that no single loader can make.
 */
#include "model/verify.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/bundle.h"
#include "model/marian.h"
#include "model/sha256.h"
#include "model/shortlist.h"
#include "text/spm.h"
#include "util/path.h"

void fy_model_info_free(fy_model_info *info)
{
    if (!info) return;
    fy_model_files_free(&info->files);
    memset(info, 0, sizeof *info);
}

/* Counts tensor kinds; model.yml and other "special:" entries are not weights. */
static void count_tensors(const fy_marian *m, fy_model_info *out)
{
    static const char scale[] = "_QuantMultA";
    out->tensors = fy_marian_tensor_count(m);
    for (size_t i = 0; i < out->tensors; i++) {
        const fy_tensor *t = fy_marian_tensor_at(m, i);
        size_t n = strlen(t->name);
        if (!strncmp(t->name, "special:", 8)) continue;
        if (n > sizeof scale - 1 && !strcmp(t->name + n - (sizeof scale - 1), scale))
            out->quant_scales++;
        else if (t->type == FY_DT_INTGEMM8 || t->type == FY_DT_I8)
            out->int8_tensors++;
        else if (t->type == FY_DT_F32)
            out->f32_tensors++;
    }
}

/* Copies the file paths (the bundle keeps its own). */
static int copy_files(const fy_model_files *from, fy_model_files *to)
{
    to->dir = strdup(from->dir);
    to->model = strdup(from->model);
    to->shortlist = from->shortlist ? strdup(from->shortlist) : NULL;
    to->src_vocab = strdup(from->src_vocab);
    to->trg_vocab = strdup(from->trg_vocab);
    return to->dir && to->model && (!from->shortlist || to->shortlist) && to->src_vocab &&
                   to->trg_vocab
               ? 0
               : FY_ENOMEM;
}

int fy_model_inspect(const char *dir, fy_model_info *out, fy_error *err)
{
    memset(out, 0, sizeof *out);
    fy_bundle *b = fy_bundle_open(dir, 1, err);
    if (!b) return err ? err->code : FY_EFORMAT;
    int rc = copy_files(&b->files, &out->files);
    if (rc) {
        fy_bundle_free(b);
        return fy_err(err, rc, "%s: out of memory", dir);
    }
    out->config = b->cfg;
    count_tensors(b->model, out);
    out->shared_vocab = b->shared_vocab;
    out->src_pieces = fy_spm_vocab_size(b->src_spm);
    out->trg_pieces = fy_spm_vocab_size(b->trg_spm);
    if (b->shortlist) {
        out->has_shortlist = 1;
        out->sl_frequent = fy_shortlist_frequent(b->shortlist);
        out->sl_best = fy_shortlist_best(b->shortlist);
        out->sl_src_vocab = fy_shortlist_src_vocab_size(b->shortlist);
        out->sl_max_target = fy_shortlist_max_target(b->shortlist);
    }
    out->model_bytes = b->model_bytes;
    out->shortlist_bytes = b->shortlist_bytes;
    out->src_vocab_bytes = b->src_vocab_bytes;
    out->trg_vocab_bytes = b->trg_vocab_bytes;
    memcpy(out->source, b->source, sizeof out->source);
    memcpy(out->target, b->target, sizeof out->target);
    fy_bundle_free(b);
    return 0;
}

/* ---- verify ---- */

typedef struct report {
    fy_verify_fn fn;
    void *ctx;
    fy_error *err;
    int first; /* code of the first failure, 0 while none */
} report;

static void say(report *r, const char *file, int code, const char *detail)
{
    if (r->fn) r->fn(r->ctx, file, code == 0, detail);
    if (code && !r->first) {
        r->first = code;
        fy_err(r->err, code, "%s", detail);
    }
}

const fy_manifest_model *fy_model_identify(const char *dir, const fy_manifest *manifest)
{
    if (!manifest) return NULL;
    /* Directories are keyed by direction: zh-Hant models reuse the zh file
     * names, so the name of the directory decides before the files do. */
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    char *copy = strndup(dir, n);
    const fy_manifest_model *named =
        copy ? fy_manifest_find_direction(manifest, fy_path_base(copy)) : NULL;
    free(copy);
    if (named) return named;
    fy_model_files f;
    fy_error tmp;
    if (fy_model_discover(dir, &f, &tmp)) return NULL;
    const char *paths[] = {f.model, f.shortlist, f.src_vocab, f.trg_vocab};
    const fy_manifest_model *model = NULL;
    for (size_t i = 0; i < 4 && !model; i++)
        if (paths[i]) fy_manifest_find_file(manifest, fy_path_base(paths[i]), &model);
    fy_model_files_free(&f);
    return model;
}

/* The entry called name in model's file list, or NULL. */
static const fy_manifest_file *model_file(const fy_manifest_model *model, const char *name)
{
    for (size_t i = 0; model && i < model->nfiles; i++)
        if (!strcmp(model->files[i].name, name)) return &model->files[i];
    return NULL;
}

/* Size and digest of one file against its manifest entry. */
static void check_digest(report *r, const char *path, const fy_manifest_file *mf,
                         const fy_manifest_model *model)
{
    char detail[FY_ERROR_MSG_MAX], hex[65];
    uint64_t size = 0;
    fy_error e = {0};
    const char *name = fy_path_base(path);
    if (fy_sha256_file(path, hex, &size, &e)) {
        say(r, name, e.code, e.msg);
    } else if (size != mf->size) {
        snprintf(detail, sizeof detail,
                 "%s: wrong size: %" PRIu64 " bytes, the %s %s manifest "
                 "says %" PRIu64,
                 path, size, model->name, model->version, mf->size);
        say(r, name, FY_EHASH, detail);
    } else if (strcmp(hex, mf->sha256)) {
        snprintf(detail, sizeof detail,
                 "%s: sha256 mismatch: %.16s..., the %s %s manifest says "
                 "%.16s...",
                 path, hex, model->name, model->version, mf->sha256);
        say(r, name, FY_EHASH, detail);
    } else {
        snprintf(detail, sizeof detail, "%" PRIu64 " bytes, sha256 matches the %s %s manifest",
                 size, model->name, model->version);
        say(r, name, 0, detail);
    }
}

static void check_files(report *r, const char *dir, const fy_model_files *f,
                        const fy_manifest *manifest)
{
    const char *paths[] = {f->model, f->shortlist, f->src_vocab,
                           strcmp(f->src_vocab, f->trg_vocab) ? f->trg_vocab : NULL};
    const fy_manifest_model *model = fy_model_identify(dir, manifest);
    char detail[FY_ERROR_MSG_MAX];
    for (size_t i = 0; i < 4; i++) {
        if (!paths[i]) continue;
        const fy_manifest_file *mf = model_file(model, fy_path_base(paths[i]));
        if (mf) {
            check_digest(r, paths[i], mf, model);
        } else {
            snprintf(detail, sizeof detail, "%" PRIu64 " bytes, %s", fy_path_size(paths[i]),
                     manifest ? "not in the manifest (no sha256 to check)"
                              : "size and sha256 not checked (no manifest)");
            say(r, fy_path_base(paths[i]), 0, detail);
        }
    }
    /* Files the manifest model has but the directory lacks (e.g. the shortlist). */
    for (size_t i = 0; model && i < model->nfiles; i++) {
        size_t n = strlen(dir) + strlen(model->files[i].name) + 2;
        char *p = malloc(n);
        if (!p) {
            say(r, dir, FY_ENOMEM, "out of memory");
            return;
        }
        snprintf(p, n, "%s/%s", dir, model->files[i].name);
        struct stat st;
        if (stat(p, &st) && errno == ENOENT) {
            snprintf(detail, sizeof detail, "%s: missing (the %s %s manifest lists it)", p,
                     model->name, model->version);
            say(r, model->files[i].name, FY_ENOTFOUND, detail);
        }
        free(p);
    }
}

int fy_model_verify(const char *dir, const fy_manifest *manifest, fy_verify_fn fn, void *ctx,
                    fy_model_info *info, fy_error *err)
{
    report r = {fn, ctx, err, 0};
    fy_model_files files;
    fy_error e = {0};
    if (info) memset(info, 0, sizeof *info);
    if (fy_model_discover(dir, &files, &e)) {
        say(&r, dir, e.code, e.msg);
        return r.first;
    }
    check_files(&r, dir, &files, manifest);
    fy_model_files_free(&files);
    fy_model_info local;
    fy_model_info *in = info ? info : &local;
    if (fy_model_inspect(dir, in, &e)) {
        say(&r, "structure", e.code, e.msg);
        fy_model_info_free(in);
        return r.first;
    }
    char detail[256];
    snprintf(detail, sizeof detail,
             "model, vocabularies%s load and agree (%d-dim, %d+%d layers, vocab %d)",
             in->has_shortlist ? " and shortlist" : "", in->config.dim_emb, in->config.enc_depth,
             in->config.dec_depth, in->config.src_vocab_size);
    say(&r, "structure", 0, detail);
    if (!info) fy_model_info_free(&local);
    return r.first;
}
