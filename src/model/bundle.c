/* bundle.c - the one loader from a model directory to everything the engine
 * needs, with every check between the files. */
#include "model/bundle.h"

#include "text/segment.h"
#include "util/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Refuses architectures whose computation the engine does not reproduce. */
static int check_architecture(const fy_bundle *b, fy_error *err)
{
    const fy_model_config *c = &b->cfg;
    const char *path = b->files.model;
    if (strcmp(c->dec_cell, "ssru") != 0)
        return fy_err(err, FY_EUNSUPPORTED, "%s: dec-cell %s is not supported (only ssru)", path,
                      c->dec_cell);
    if (strcmp(c->postprocess, "dan") != 0 || c->preprocess[0] != '\0')
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: transformer-postprocess '%s' / preprocess '%s' not supported (need "
                      "'dan' / '')",
                      path, c->postprocess, c->preprocess);
    if (strcmp(c->ffn_activation, "relu") != 0 || c->ffn_depth != 2 || c->dec_ffn_depth != 2)
        return fy_err(err, FY_EUNSUPPORTED,
                      "%s: only relu feed-forward blocks of depth 2 are supported", path);
    if (c->heads < 1 || c->dim_emb % c->heads != 0 || c->dim_emb % 8 != 0)
        return fy_err(err, FY_EFORMAT, "%s: dim-emb %d does not split into %d heads", path,
                      c->dim_emb, c->heads);
    if (!c->tied_embeddings && !c->tied_embeddings_all)
        return fy_err(err, FY_EUNSUPPORTED, "%s: untied output layer is not supported", path);
    return 0;
}

/* Every float a computation reads must be a number: a NaN scale or bias
 * would translate into garbage without an error. Once per tensor at load
 * (tens of milliseconds for the largest float32 model). */
static int check_finite(const fy_bundle *b, fy_error *err)
{
    for (size_t i = 0; i < fy_marian_tensor_count(b->model); i++) {
        const fy_tensor *t = fy_marian_tensor_at(b->model, i);
        if (t->type == FY_DT_INTGEMM8 && !(isfinite(t->quant_mult) && t->quant_mult > 0.0f))
            return fy_err(err, FY_EFORMAT, "%s: tensor '%s': quantisation multiplier %g",
                          b->files.model, t->name, (double)t->quant_mult);
        if (t->type != FY_DT_F32) continue;
        const float *v = t->data;
        for (size_t k = 0; k < t->count; k++)
            if (!isfinite(v[k]))
                return fy_err(err, FY_EFORMAT, "%s: tensor '%s': element %zu is %g", b->files.model,
                              t->name, k, (double)v[k]);
    }
    return 0;
}

/* Every piece must be valid UTF-8: decoding concatenates them into the
 * translation, and an invalid one would corrupt every text it appears in. */
static int check_pieces(const char *path, const fy_spm *spm, fy_error *err)
{
    for (int id = 0; id < fy_spm_vocab_size(spm); id++) {
        size_t len, bad;
        const char *p = fy_spm_id_to_piece(spm, id, &len);
        if (p && !fy_utf8_valid(p, len, &bad))
            return fy_err(err, FY_EFORMAT, "%s: piece %d is not valid UTF-8 (byte %zu)", path, id,
                          bad);
    }
    return 0;
}

/* A vocabulary must have exactly as many pieces as its embedding has rows:
 * any other id mapping would translate into garbage without an error. */
static int check_vocab(const fy_bundle *b, const char *path, const fy_spm *spm, int rows,
                       const char *side, fy_error *err)
{
    int pieces = fy_spm_vocab_size(spm);
    if (pieces != rows)
        return fy_err(err, FY_EFORMAT,
                      "%s: vocabulary has %d pieces but the %s embedding of %s has %d rows", path,
                      pieces, side, fy_path_base(b->files.model), rows);
    if (fy_spm_eos_id(spm) < 0)
        return fy_err(err, FY_EFORMAT, "%s: the vocabulary has no </s> (eos) piece", path);
    return 0;
}

static int open_vocabs(fy_bundle *b, fy_error *err)
{
    const fy_model_files *f = &b->files;
    b->shared_vocab = !strcmp(f->src_vocab, f->trg_vocab);
    if (!(b->src_spm = fy_spm_open(f->src_vocab, err))) return err->code;
    b->trg_spm = b->shared_vocab ? b->src_spm : fy_spm_open(f->trg_vocab, err);
    if (!b->trg_spm) return err->code;
    int rc = check_vocab(b, f->src_vocab, b->src_spm, b->cfg.src_vocab_size, "source", err);
    if (!rc) rc = check_vocab(b, f->trg_vocab, b->trg_spm, b->cfg.trg_vocab_size, "target", err);
    if (!rc) rc = check_pieces(f->src_vocab, b->src_spm, err);
    if (!rc && !b->shared_vocab) rc = check_pieces(f->trg_vocab, b->trg_spm, err);
    if (rc) return rc;
    b->src_eos = fy_spm_eos_id(b->src_spm);
    b->trg_eos = fy_spm_eos_id(b->trg_spm);
    b->trg_unk = fy_spm_unk_id(b->trg_spm);
    return 0;
}

/* The shortlist maps source ids to target ids: both must exist. */
static int open_shortlist(fy_bundle *b, fy_error *err)
{
    const char *path = b->files.shortlist;
    if (!path) return 0;
    if (!(b->shortlist = fy_shortlist_open(path, err))) return err->code;
    int src = fy_shortlist_src_vocab_size(b->shortlist);
    int top = fy_shortlist_max_target(b->shortlist);
    int frequent = fy_shortlist_frequent(b->shortlist);
    if (src > b->cfg.src_vocab_size)
        return fy_err(err, FY_EFORMAT,
                      "%s: shortlist covers %d source ids but the source vocabulary has %d", path,
                      src, b->cfg.src_vocab_size);
    if (top > b->cfg.trg_vocab_size || frequent > b->cfg.trg_vocab_size)
        return fy_err(err, FY_EFORMAT,
                      "%s: shortlist names target id %d (frequent %d) but the target vocabulary "
                      "has %d",
                      path, top - 1, frequent, b->cfg.trg_vocab_size);
    return 0;
}

/* "model.enzh.intgemm.alphas.bin" -> en, zh. A name without a language
 * infix leaves the direction to the caller (the directory's name). */
static void direction_from_names(fy_bundle *b)
{
    const char *name = fy_path_base(b->files.model);
    const char *a = strchr(name, '.');
    const char *e = a ? strchr(a + 1, '.') : NULL;
    char infix[16];
    if (!a || !e || (size_t)(e - a - 1) >= sizeof infix) return;
    memcpy(infix, a + 1, (size_t)(e - a - 1));
    infix[e - a - 1] = '\0';
    fy_lang_pair_from_infix(infix, b->source, b->target);
}

fy_bundle *fy_bundle_open(const char *dir, int use_shortlist, fy_error *err)
{
    fy_error local;
    if (!err) err = &local;
    fy_err_clear(err);
    fy_bundle *b = calloc(1, sizeof *b);
    if (!b) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    if (fy_model_discover(dir, &b->files, err) < 0) goto fail;
    if (!use_shortlist) {
        free(b->files.shortlist);
        b->files.shortlist = NULL;
    }
    if (!(b->model = fy_marian_open(b->files.model, err))) goto fail;
    if (fy_model_config_read(b->model, &b->cfg, err) < 0) goto fail;
    if (check_architecture(b, err) < 0) goto fail;
    if (check_finite(b, err) < 0) goto fail;
    if (open_vocabs(b, err) < 0) goto fail;
    if (open_shortlist(b, err) < 0) goto fail;
    direction_from_names(b);
    b->model_bytes = fy_marian_file_size(b->model);
    b->shortlist_bytes = fy_path_size(b->files.shortlist);
    b->src_vocab_bytes = fy_path_size(b->files.src_vocab);
    b->trg_vocab_bytes = fy_path_size(b->files.trg_vocab);
    return b;
fail:
    fy_bundle_free(b);
    return NULL;
}

void fy_bundle_free(fy_bundle *b)
{
    if (!b) return;
    fy_shortlist_free(b->shortlist);
    if (b->trg_spm != b->src_spm) fy_spm_free(b->trg_spm);
    fy_spm_free(b->src_spm);
    fy_marian_free(b->model);
    fy_model_files_free(&b->files);
    free(b);
}

uint64_t fy_bundle_file_bytes(const fy_bundle *b)
{
    return b->model_bytes + b->shortlist_bytes + b->src_vocab_bytes +
           (b->shared_vocab ? 0 : b->trg_vocab_bytes);
}
