/* test_translator.c - the whole engine on the synthetic models (fixture
 * synth_models): every variant opens and translates; results are
 * deterministic and independent of the batch a sentence is in; empty and
 * whitespace-only input give ""; a very long line is cut into segments and
 * its output obeys the max-length rule; broken model directories fail
 * cleanly with a message naming the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "translate/translator.h"
#include "../check.h"

#define NS 16

static const char *SENTS[NS] = {
    "今天天气很好。",
    "我们明天去北京开会，讨论经济合作的问题。",
    "他说：“这是一个非常重要的决定。”",
    "2018年，中国的国内生产总值增长了6.6%。",
    "你好",
    "人工智能正在改变世界。",
    "这本书我已经读了三遍了，每一遍都有新的收获。",
    "上海是中国最大的城市之一。",
    "请问去火车站怎么走？",
    "科学家们发现了一种新的治疗方法。",
    "他们在公园里散步。",
    "The meeting will start at 9am. 会议九点开始。",
    "我喜欢喝茶，不喜欢喝咖啡。",
    "这个问题很复杂，需要时间解决。",
    "欢迎来到中国！",
    "经济全球化是不可逆转的历史潮流。",
};

static void free_all(char **out, size_t n)
{
    for (size_t i = 0; i < n; i++) free(out[i]);
}

/* Alone vs. in a batch of 16 vs. again: identical. */
static void test_batch_invariance(const char *name, const fy_translator *t, fy_worker *w)
{
    char *batch[NS], *again[NS];
    fy_error err = {0};
    int rc = fy_translate_batch(t, w, SENTS, NS, batch, &err);
    check(rc == 0, "%s: batch of 16 translates", name);
    if (rc) {
        printf("  %s\n", err.msg);
        return;
    }
    int same = 1, nonempty = 0;
    for (int i = 0; i < NS; i++) {
        char *alone = NULL;
        if (fy_translate_batch(t, w, &SENTS[i], 1, &alone, &err) != 0) {
            same = 0;
            continue;
        }
        if (strcmp(alone, batch[i]) != 0) {
            printf("  %s sentence %d: alone '%s' vs batch '%s'\n", name, i, alone, batch[i]);
            same = 0;
        }
        nonempty += batch[i][0] != '\0';
        free(alone);
    }
    check(same, "%s: each sentence alone == in a batch of 16", name);
    /* Random weights may choose </s> at the first step for a sentence (the
     * reference does the same), but not for most of them. */
    check(nonempty >= NS / 2, "%s: most sentences get a non-empty translation", name);
    rc = fy_translate_batch(t, w, SENTS, NS, again, &err);
    int det = rc == 0;
    for (int i = 0; det && i < NS; i++) det = strcmp(again[i], batch[i]) == 0;
    check(det, "%s: translating twice gives the same output", name);
    if (rc == 0) free_all(again, NS);
    fy_worker_trim(w); /* its scratch comes back zeroed: nothing may depend on it */
    rc = fy_translate_batch(t, w, SENTS, NS, again, &err);
    det = rc == 0;
    for (int i = 0; det && i < NS; i++) det = strcmp(again[i], batch[i]) == 0;
    check(det, "%s: the same output after the worker's memory was trimmed", name);
    if (rc == 0) free_all(again, NS);
    free_all(batch, NS);
}

static void test_edge_inputs(const char *name, const fy_translator *t, fy_worker *w)
{
    const char *in[3] = {"", "   ", "好"};
    char *out[3];
    fy_translate_info info[3];
    fy_error err = {0};
    int rc = fy_translate_batch_ex(t, w, in, 3, out, info, &err);
    check(rc == 0, "%s: empty/space/one-char batch translates", name);
    if (rc) return;
    check(out[0][0] == '\0' && info[0].segments == 0, "%s: empty sentence gives \"\"", name);
    check(out[1][0] == '\0', "%s: whitespace-only sentence gives \"\"", name);
    check(info[2].src_tokens == fy_translator_count_tokens(t, in[2], strlen(in[2])),
          "%s: count_tokens agrees with the engine", name);
    check(info[2].out_tokens <= (int)ceilf(2.0f * (float)info[2].src_tokens),
          "%s: output of a short sentence obeys the max-length rule", name);
    free_all(out, 3);
}

/* A line of ~700 pieces: cut into 128-token segments, each bounded. */
static void test_long_line(const char *name, const fy_translator *t, fy_worker *w)
{
    size_t cap = 64 * 1024, len = 0;
    char *line = malloc(cap);
    for (int i = 0; len + 200 < cap && i < 60; i++)
        len += (size_t)snprintf(line + len, cap - len, "%s", SENTS[i % NS]);
    const char *in[1] = {line};
    char *out[1];
    fy_translate_info info;
    fy_error err = {0};
    int rc = fy_translate_batch_ex(t, w, in, 1, out, &info, &err);
    check(rc == 0, "%s: a very long line translates", name);
    if (rc == 0) {
        int pieces = info.src_tokens - 1;
        int segs = (pieces + FY_SEGMENT_TOKENS - 2) / (FY_SEGMENT_TOKENS - 1);
        check(info.segments == segs && segs > 1, "%s: the long line is cut into 127-piece segments",
              name);
        check(info.out_tokens <= segs * 2 * FY_SEGMENT_TOKENS,
              "%s: the long line's output obeys the max-length rule", name);
        free(out[0]);
    }
    free(line);
}

static void test_variant(const char *models, const char *name)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", models, name);
    fy_error err = {0};
    fy_translator *t = fy_translator_open(dir, NULL, &err);
    check(t != NULL, "%s: opens", name);
    if (!t) {
        printf("  %s\n", err.msg);
        return;
    }
    fy_worker *w = fy_worker_new(t, &err);
    check(w != NULL, "%s: worker", name);
    if (w) {
        test_batch_invariance(name, t, w);
        test_edge_inputs(name, t, w);
        test_long_line(name, t, w);
    }
    fy_worker_free(w);
    fy_translator_free(t);
}

static int copy_file(const char *from, const char *to, long truncate_at)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out) {
        if (in) fclose(in);
        if (out) fclose(out);
        return -1;
    }
    char buf[65536];
    long total = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (truncate_at >= 0 && total + (long)n > truncate_at) n = (size_t)(truncate_at - total);
        fwrite(buf, 1, n, out);
        total += (long)n;
        if (truncate_at >= 0 && total >= truncate_at) break;
    }
    fclose(in);
    fclose(out);
    return 0;
}

static void test_broken(const char *models)
{
    fy_error err = {0};
    fy_translator *t = fy_translator_open("/nonexistent/fanyi-model", NULL, &err);
    check(!t && err.code < 0 && strstr(err.msg, "/nonexistent/fanyi-model"),
          "missing model dir fails naming it%s", "");

    char dir[] = "/tmp/fy-broken-model-XXXXXX";
    if (!mkdtemp(dir)) return;
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/tiny-int8/vocab.zhen.spm", models);
    snprintf(to, sizeof to, "%s/vocab.zhen.spm", dir);
    copy_file(from, to, -1);
    snprintf(from, sizeof from, "%s/tiny-int8/model.zhen.intgemm.alphas.bin", models);
    snprintf(to, sizeof to, "%s/model.zhen.intgemm.alphas.bin", dir);
    copy_file(from, to, 100000); /* truncated */
    t = fy_translator_open(dir, NULL, &err);
    check(!t && err.code == FY_EFORMAT && strstr(err.msg, "model.zhen"),
          "truncated model fails with a format error naming the file%s", "");
    if (t) fy_translator_free(t);
    printf("  (truncated model: %s)\n", err.msg);
    unlink(to);
    snprintf(to, sizeof to, "%s/vocab.zhen.spm", dir);
    unlink(to);
    rmdir(dir);

    fy_translator_options o;
    fy_translator_options_default(&o);
    o.max_length_factor = -1.0f;
    char ok[4096];
    snprintf(ok, sizeof ok, "%s/tiny-int8", models);
    t = fy_translator_open(ok, &o, &err);
    check(!t && err.code == FY_EINVAL, "a bad option is refused%s", "");
    fy_translator_free(NULL);
    fy_worker_free(NULL);
}

int main(void)
{
    const char *build = getenv("FANYI_BUILD_DIR");
    char models[2048];
    snprintf(models, sizeof models, "%s/models", build ? build : ".");
    const char *variants[] = {"tiny-f32", "tiny-int8", "tiny-int8-sl", "tiny-int8-sep",
                              "base-memory-int8-sl"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        test_variant(models, variants[i]);
    test_broken(models);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
