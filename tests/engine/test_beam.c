/* test_beam.c - beam search and n-best lists on the synthetic models
 * (fixture synth_models): beam 1 is the greedy path exactly; n-best lists
 * are ordered by score and start with the translation; a sentence's list
 * is the same alone and in a batch (whose rows finish at different steps);
 * the length limit holds for every hypothesis; the engine's alternatives
 * differ from the translation and from each other; bad beams are refused.
 * Random weights seldom choose EOS, so every hypothesis runs to the length
 * limit; a copy of tiny-int8-sl whose EOS logit bias is raised by 8 ends
 * hypotheses at all lengths: there the beam shrinks as they finish and
 * hypotheses of different lengths compete for the top. (Agreement with the
 * reference's beam search: tests/conformance, conformance_beam4_*.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/bundle.h"
#include "model/marian.h"
#include "translate/scheduler.h"
#include "translate/translator.h"
#include "../check.h"

#define NS 12

static const char *SENTS[NS] = {
    "今天天气很好。",
    "我们明天去北京开会，讨论经济合作的问题。",
    "他说：“这是一个非常重要的决定。”",
    "2018年，中国的国内生产总值增长了6.6%。",
    "你好",
    "人工智能正在改变世界。",
    "这本书我已经读了三遍了，每一遍都有新的收获。",
    "请问去火车站怎么走？",
    "The meeting will start at 9am. 会议九点开始。",
    "",
    "我喜欢喝茶，不喜欢喝咖啡。",
    "经济全球化是不可逆转的历史潮流。",
};

static void free_out(char **out, fy_nbest *nb, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(out[i]);
        if (nb) fy_nbest_clear(&nb[i]);
    }
}

/* Beam 1 through fy_translate_beam is fy_translate_batch_ex, bit for bit,
 * and its list holds that one translation. */
static void test_beam1_is_greedy(const char *name, const fy_translator *t, fy_worker *w)
{
    char *greedy[NS], *beam[NS];
    fy_nbest nb[NS];
    fy_translate_info gi[NS], bi[NS];
    fy_error err = {0};
    int rc = fy_translate_batch_ex(t, w, SENTS, NS, greedy, gi, &err);
    rc |= fy_translate_beam(t, w, SENTS, NS, 1, beam, nb, bi, &err);
    check(rc == 0, "%s: greedy and beam 1 translate", name);
    if (rc) return;
    int same = 1, lists = 1;
    for (int i = 0; i < NS; i++) {
        same &= !strcmp(greedy[i], beam[i]) && gi[i].out_tokens == bi[i].out_tokens &&
                gi[i].min_gap == bi[i].min_gap;
        lists &= nb[i].n == 1 && !strcmp(nb[i].hyp[0].text, beam[i]) &&
                 nb[i].hyp[0].tokens == bi[i].out_tokens && isfinite(nb[i].hyp[0].score);
    }
    check(same, "%s: beam 1 == greedy (texts, lengths, gaps)", name);
    check(lists, "%s: beam 1's n-best list is the one greedy translation", name);
    free_out(greedy, NULL, NS);
    free_out(beam, nb, NS);
}

/* Lists ordered by score, the best first and equal to the translation,
 * beam entries each (an empty sentence: one empty one). */
static void check_lists(const char *name, int beam, char **out, const fy_nbest *nb, size_t n,
                        int *lengths_differ)
{
    int ordered = 1, first = 1, full = 1, lengths = 0;
    for (size_t i = 0; i < n; i++) {
        first &= nb[i].n >= 1 && !strcmp(nb[i].hyp[0].text, out[i]);
        full &= SENTS[i][0] ? nb[i].n == beam : nb[i].n == 1;
        for (int j = 1; j < nb[i].n; j++) {
            ordered &= nb[i].hyp[j - 1].score >= nb[i].hyp[j].score;
            lengths |= nb[i].hyp[j].tokens != nb[i].hyp[0].tokens;
        }
    }
    check(ordered, "%s: n-best lists are ordered by score", name);
    check(first, "%s: an n-best list starts with the translation", name);
    check(full, "%s: each list holds beam hypotheses", name);
    *lengths_differ = lengths;
}

/* The same sentence alone and in a batch: the same list, scores included.
 * Returns whether some list holds hypotheses of different lengths. */
static int test_batched(const char *name, const fy_translator *t, fy_worker *w, int beam)
{
    char *out[NS];
    fy_nbest nb[NS];
    fy_translate_info info[NS];
    fy_error err = {0};
    int rc = fy_translate_beam(t, w, SENTS, NS, beam, out, nb, info, &err);
    check(rc == 0, "%s: a batch translates with a beam", name);
    if (rc) {
        printf("  %s\n", err.msg);
        return 0;
    }
    int lengths;
    check_lists(name, beam, out, nb, NS, &lengths);
    int same = 1;
    for (int i = 0; i < NS; i++) {
        char *one;
        fy_nbest alone;
        if (fy_translate_beam(t, w, &SENTS[i], 1, beam, &one, &alone, NULL, &err)) {
            same = 0;
            continue;
        }
        same &= !strcmp(one, out[i]) && alone.n == nb[i].n;
        for (int j = 0; same && j < alone.n; j++)
            same &= !strcmp(alone.hyp[j].text, nb[i].hyp[j].text) &&
                    alone.hyp[j].score == nb[i].hyp[j].score &&
                    alone.hyp[j].tokens == nb[i].hyp[j].tokens;
        if (!same) printf("  %s: sentence %d differs alone\n", name, i);
        free_out(&one, &alone, 1);
    }
    check(same, "%s: a sentence's list is the same alone and in a batch", name);
    free_out(out, nb, NS);
    return lengths;
}

/* Every hypothesis obeys the length limit: ceil(factor x (pieces + EOS)). */
static void test_max_length(const char *dir, const char *name)
{
    fy_translator_options o;
    fy_translator_options_default(&o);
    o.max_length_factor = 0.5f;
    o.max_beam = 4;
    fy_error err = {0};
    fy_translator *t = fy_translator_open(dir, &o, &err);
    fy_worker *w = t ? fy_worker_new(t, &err) : NULL;
    check(w != NULL, "%s: opens with max-length-factor 0.5", name);
    char *out[NS];
    fy_nbest nb[NS];
    fy_translate_info info[NS];
    if (!w || fy_translate_beam(t, w, SENTS, NS, 4, out, nb, info, &err)) {
        check(0, "%s: translates with max-length-factor 0.5", name);
    } else {
        int ok = 1, capped = 0;
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < nb[i].n; j++) {
                int cap = (int)ceilf(0.5f * (float)info[i].src_tokens);
                ok &= nb[i].hyp[j].tokens <= cap;
                capped += nb[i].hyp[j].tokens == cap;
            }
        check(ok, "%s: no hypothesis is longer than the limit", name);
        check(capped > 0, "%s: some hypotheses end at the limit", name);
        free_out(out, nb, NS);
    }
    fy_worker_free(w);
    fy_translator_free(t);
}

/* A line of several segments: hypothesis j joins the segments' j-th ones. */
static void test_long_line(const char *name, const fy_translator *t, fy_worker *w)
{
    char line[8192];
    size_t len = 0;
    for (int i = 0; i < 30; i++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s", SENTS[i % 8]);
    const char *in[1] = {line};
    char *out[1];
    fy_nbest nb[1];
    fy_translate_info info;
    fy_error err = {0};
    int rc = fy_translate_beam(t, w, in, 1, 3, out, nb, &info, &err);
    check(rc == 0 && info.segments > 1, "%s: a line of several segments translates", name);
    if (rc) return;
    int ordered = nb[0].n >= 1 && !strcmp(nb[0].hyp[0].text, out[0]);
    for (int j = 1; j < nb[0].n; j++) ordered &= nb[0].hyp[j - 1].score >= nb[0].hyp[j].score;
    check(ordered, "%s: its list starts with the translation, ordered by score", name);
    free_out(out, nb, 1);
}

/* The engine's alternatives: after the translation, none equal to it or
 * to another. */
static void test_alternatives(const char *name, const fy_translator *t, fy_worker *w)
{
    fy_engine e;
    fy_translator_engine(t, name, &e);
    char *out[NS];
    char **alts[NS] = {0};
    float gap[NS];
    fy_error err = {0};
    int rc = e.translate_beam(e.ctx, w, SENTS, NS, 4, out, alts, gap, &err);
    check(rc == 0, "%s: the engine translates with a beam", name);
    if (rc) return;
    int distinct = 1, some = 0, bounded = 1;
    for (int i = 0; i < NS; i++) {
        size_t n = 0;
        for (; alts[i] && alts[i][n]; n++) {
            distinct &= strcmp(alts[i][n], out[i]) != 0;
            for (size_t k = 0; k < n; k++) distinct &= strcmp(alts[i][n], alts[i][k]) != 0;
        }
        bounded &= n <= 3;
        some += n > 0;
        for (size_t k = 0; k < n; k++) free(alts[i][k]);
        free(alts[i]);
        free(out[i]);
    }
    check(distinct, "%s: alternatives differ from the translation and from each other", name);
    check(bounded, "%s: at most beam - 1 alternatives", name);
    check(some >= NS / 2, "%s: most sentences have alternatives", name);
}

static void test_bad_beams(const char *name, const fy_translator *t, fy_worker *w)
{
    char *out[1];
    fy_error err = {0};
    int a = fy_translate_beam(t, w, SENTS, 1, 0, out, NULL, NULL, &err);
    int b = fy_translate_beam(t, w, SENTS, 1, FY_BEAM_MAX + 1, out, NULL, NULL, &err);
    check(a == FY_EINVAL && b == FY_EINVAL && out[0] == NULL && strstr(err.msg, "beam"),
          "%s: a beam outside 1 .. max beam is refused", name);
    fy_translator_options o = *fy_translator_options_get(t);
    o.max_beam = FY_BEAM_MAX + 1;
    fy_translator *bad = fy_translator_open("/nonexistent", &o, &err);
    check(!bad && err.code == FY_EINVAL, "%s: max beam above FY_BEAM_MAX is refused", name);
}

/* Writes dir/model.bin: a copy of model (path) whose output bias of token
 * eos is raised by delta. The data section ends the file; tensor i's data
 * starts after those of tensors 0 .. i-1 (model/marian.h). */
static int write_biased(const char *model, int eos, float delta, const char *dir)
{
    fy_error err = {0};
    fy_marian *m = fy_marian_open(model, &err);
    if (!m) return -1;
    size_t n = fy_marian_tensor_count(m), total = 0, before = 0, size = fy_marian_file_size(m);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        const fy_tensor *t = fy_marian_tensor_at(m, i);
        if (!strcmp(t->name, "decoder_ff_logit_out_b")) before = total, found = 1;
        total += t->bytes;
    }
    fy_marian_free(m);
    char out[4096];
    snprintf(out, sizeof out, "%s/model.zhen.intgemm.alphas.bin", dir);
    FILE *f = fopen(model, "rb"), *g = fopen(out, "wb");
    char *buf = malloc(size);
    int ok = found && f && g && buf && fread(buf, 1, size, f) == size;
    if (ok) {
        float v;
        size_t at = size - total + before + (size_t)eos * sizeof v;
        memcpy(&v, buf + at, sizeof v);
        v += delta;
        memcpy(buf + at, &v, sizeof v);
        ok = fwrite(buf, 1, size, g) == size;
    }
    free(buf);
    if (f) fclose(f);
    if (g && fclose(g)) ok = 0;
    return ok ? 0 : -1;
}

/* tiny-int8-sl with EOS made likelier (see the top): the beam shrinks as
 * hypotheses end, and the lists mix lengths. */
static void test_early_ends(const char *models)
{
    const char *name = "tiny-int8-sl + EOS bias";
    char src[4096], dir[] = "/tmp/fy-beam-eos-XXXXXX", from[4200], to[4200];
    snprintf(src, sizeof src, "%s/tiny-int8-sl", models);
    fy_error err = {0};
    fy_translator *t = fy_translator_open(src, NULL, &err);
    int eos = t ? fy_translator_bundle(t)->trg_eos : -1;
    fy_translator_free(t);
    t = NULL;
    int made = eos >= 0 && mkdtemp(dir);
    const char *files[] = {"vocab.zhen.spm", "lex.50.50.zhen.s2t.bin"};
    for (int i = 0; made && i < 2; i++) {
        snprintf(from, sizeof from, "%s/%s", src, files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        made = symlink(from, to) == 0;
    }
    snprintf(from, sizeof from, "%s/model.zhen.intgemm.alphas.bin", src);
    made = made && write_biased(from, eos, 8.0f, dir) == 0;
    check(made, "%s: a copy with a higher EOS bias is written", name);
    fy_translator_options o;
    fy_translator_options_default(&o);
    o.max_batch_sentences = 8;
    t = made ? fy_translator_open(dir, &o, &err) : NULL;
    fy_worker *w = t ? fy_worker_new(t, &err) : NULL;
    check(w != NULL, "%s: opens", name);
    if (w) {
        check(test_batched(name, t, w, 4), "%s: hypotheses of different lengths share a list",
              name);
        test_beam1_is_greedy(name, t, w);
    }
    fy_worker_free(w);
    fy_translator_free(t);
    for (int i = 0; i < 3; i++) {
        snprintf(to, sizeof to, "%s/%s", dir, i < 2 ? files[i] : "model.zhen.intgemm.alphas.bin");
        unlink(to);
    }
    rmdir(dir);
}

static void test_variant(const char *models, const char *name)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", models, name);
    fy_translator_options o;
    fy_translator_options_default(&o);
    o.max_batch_sentences = 8; /* fewer rows than 12 sentences x beam: sub-batches */
    fy_error err = {0};
    fy_translator *t = fy_translator_open(dir, &o, &err);
    fy_worker *w = t ? fy_worker_new(t, &err) : NULL;
    check(w != NULL, "%s: opens", name);
    if (w) {
        test_beam1_is_greedy(name, t, w);
        test_batched(name, t, w, 4);
        test_batched(name, t, w, 8);
        test_long_line(name, t, w);
        test_alternatives(name, t, w);
        test_bad_beams(name, t, w);
    } else {
        printf("  %s\n", err.msg);
    }
    fy_worker_free(w);
    fy_translator_free(t);
    test_max_length(dir, name);
}

int main(void)
{
    const char *build = getenv("FANYI_BUILD_DIR");
    char models[2048];
    snprintf(models, sizeof models, "%s/models", build ? build : ".");
    test_variant(models, "tiny-int8-sl"); /* shortlist: each row its own columns */
    test_variant(models, "tiny-int8");    /* the whole vocabulary, all rows at once */
    test_early_ends(models);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
