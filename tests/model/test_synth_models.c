/* test_synth_models.c - every model of the synth_models fixture loads.
 *
 * Discovery, full structural validation, config cross-check, shortlist
 * consistency with the model's vocabularies, and the embedded YAML values a
 * Firefox Translations student carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/discover.h"
#include "model/marian.h"
#include "model/shortlist.h"
#include "../check.h"

typedef struct expect {
    const char *dir, *infix; /* file names: model.INFIX[.intgemm.alphas].bin */
    int d, dec, int8, shortlist, separate, vocab;
    long bytes; /* the model file's size, 0: not checked */
} expect;

static void check_model(const char *root, const expect *e)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", root, e->dir);
    fy_model_files f;
    fy_error err = {0};
    int rc = fy_model_discover(dir, &f, &err);
    CHECKF(rc == 0, "%s: %s", e->dir, err.msg);
    if (rc) return;
    CHECKF(!e->shortlist == !f.shortlist, "%s: shortlist presence", e->dir);
    CHECKF(!e->separate == !strcmp(f.src_vocab, f.trg_vocab), "%s: vocab files", e->dir);
    char name[64];
    snprintf(name, sizeof name, "/model.%s%s.bin", e->infix, e->int8 ? ".intgemm.alphas" : "");
    CHECKF(strstr(f.model, name) != NULL, "%s: model name %s", e->dir, f.model);
    fy_marian *m = fy_marian_open(f.model, &err);
    CHECKF(m != NULL, "%s: %s", e->dir, err.msg);
    fy_model_config c;
    if (m && fy_model_config_read(m, &c, &err) == 0) {
        CHECKF(c.dim_emb == e->d && c.dec_depth == e->dec && c.enc_depth == 6 && c.heads == 8 &&
                   c.int8 == e->int8 && c.separate_embeddings == e->separate &&
                   c.src_vocab_size == e->vocab && c.trg_vocab_size == e->vocab,
               "%s: config d=%d dec=%d int8=%d sep=%d V=%d/%d", e->dir, c.dim_emb, c.dec_depth,
               c.int8, c.separate_embeddings, c.src_vocab_size, c.trg_vocab_size);
        CHECKF(!e->bytes || (long)fy_marian_file_size(m) == e->bytes, "%s: %zu bytes, expected %ld",
               e->dir, fy_marian_file_size(m), e->bytes);
        const char *y = fy_marian_yaml(m);
        CHECKF(strstr(y, "transformer-decoder-autoreg: rnn\n") && strstr(y, "type: transformer\n"),
               "%s: yaml", e->dir);
        if (f.shortlist) {
            fy_shortlist *s = fy_shortlist_open(f.shortlist, &err);
            CHECKF(s != NULL, "%s: %s", e->dir, err.msg);
            if (s) {
                CHECKF(fy_shortlist_src_vocab_size(s) == c.src_vocab_size &&
                           fy_shortlist_max_target(s) <= c.trg_vocab_size &&
                           fy_shortlist_frequent(s) == 50 && fy_shortlist_best(s) == 50,
                       "%s: shortlist matches the vocabularies", e->dir);
                static int32_t out[64000];
                int32_t src[4] = {10, 20, 31999, 10};
                long n = fy_shortlist_select(s, src, 4, c.trg_vocab_size, out, 64000, &err);
                CHECKF(n >= 50 && n % 8 == 0, "%s: select gives %ld", e->dir, n);
            }
            fy_shortlist_free(s);
        }
    } else {
        CHECKF(0, "%s: config: %s", e->dir, err.msg);
    }
    fy_marian_free(m);
    fy_model_files_free(&f);
}

int main(void)
{
    const char *b = getenv("FANYI_BUILD_DIR");
    if (!b) {
        fprintf(stderr, "FANYI_BUILD_DIR is not set\n");
        return 1;
    }
    char root[1024];
    snprintf(root, sizeof root, "%s/models", b);
    /* The sizes of Mozilla's files of the same shape (firefox-models JSON). */
    static const expect models[] = {
        {"tiny-f32", "zhen", 256, 2, 0, 0, 0, 32000, 0},
        {"tiny-int8", "zhen", 256, 2, 1, 0, 0, 32000, 17141051},
        {"tiny-int8-sl", "zhen", 256, 2, 1, 1, 0, 32000, 17141051},
        {"tiny-int8-sep", "zhen", 256, 2, 1, 1, 1, 32000, 0},
        {"base-memory-int8-sl", "zhen", 384, 4, 1, 1, 0, 32000, 31561787},
        {"firefox-zh-en", "zhen", 512, 2, 1, 1, 0, 64000, 59504955},
        {"firefox-en-zh", "enzh", 384, 4, 1, 1, 1, 32000, 43849787},
        {"tiny-de-en", "deen", 256, 2, 1, 1, 0, 32000, 17141051},
        {"tiny-en-de", "ende", 256, 2, 1, 1, 0, 32000, 17141051},
    };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) check_model(root, &models[i]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
