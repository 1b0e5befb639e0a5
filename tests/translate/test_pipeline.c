/* test_pipeline.c - the request pipeline and the registry on the synthetic
 * models of the synth_models fixture: directions found under a root,
 * per-text languages (given, detected, passed through), the default
 * target, errors that name the text at fault, sentence spans, streamed
 * sentences equal to the joined result, raw mode, pivots through English
 * equal to their two legs, lazy loading under a budget, beams and
 * alternatives. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "translate/models.h"
#include "text/segment.h"
#include "translate/pipeline.h"
#include "../check.h"

static char root[256];
static fy_scheduler *sched;

/* A models root with zh-en, de-en and en-de linked to the fixture's models. */
static void make_root(void)
{
    const char *build = getenv("FANYI_BUILD_DIR");
    snprintf(root, sizeof root, "/tmp/fanyi-pipeline.XXXXXX");
    if (!build || !mkdtemp(root)) {
        fprintf(stderr, "needs FANYI_BUILD_DIR and /tmp\n");
        exit(1);
    }
    const char *links[][2] = {{"zh-en", "tiny-int8-sl"},
                              {"de-en", "tiny-de-en"},
                              {"en-de", "tiny-en-de"},
                              {"notes", "tiny-int8"}};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        char from[512], to[512];
        snprintf(from, sizeof from, "%s/models/%s", build, links[i][1]);
        snprintf(to, sizeof to, "%s/%s", root, links[i][0]);
        if (symlink(from, to)) perror(to);
    }
}

static void remove_root(void)
{
    const char *names[] = {"zh-en", "de-en", "en-de", "notes"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", root, names[i]);
        unlink(p);
    }
    rmdir(root);
}

static fy_registry *open_registry_beam(size_t budget, int beam, int max_beam)
{
    fy_registry_options o;
    fy_registry_options_default(&o);
    o.beam = beam;
    o.topt.max_beam = max_beam;
    o.root = root;
    o.sched = sched;
    o.threads = 2;
    o.memory_budget = budget;
    fy_error err = {0};
    fy_registry *r = fy_registry_open(&o, &err);
    if (!r) fprintf(stderr, "registry: %s\n", err.msg);
    return r;
}

static fy_registry *open_registry(size_t budget)
{
    return open_registry_beam(budget, 1, 4);
}

/* ---- running a request ---- */

typedef struct run {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, status;
    char *streamed[16][8]; /* [text][sentence] as on_sentence gave them */
    char prefix[16][512];  /* [text] the befores and renderings so far */
    int in_order;
    size_t last_text, last_sentence, events;
} run;

static void on_sentence(void *user, size_t text, size_t sentence, const char *before,
                        size_t before_len, const char *s, size_t len)
{
    run *r = user;
    pthread_mutex_lock(&r->mu);
    if (text < 16) {
        size_t at = strlen(r->prefix[text]);
        snprintf(r->prefix[text] + at, sizeof r->prefix[text] - at, "%.*s%.*s", (int)before_len,
                 before, (int)len, s);
    }
    if (r->events &&
        (text < r->last_text || (text == r->last_text && sentence <= r->last_sentence)))
        r->in_order = 0;
    r->last_text = text, r->last_sentence = sentence, r->events++;
    if (text < 16 && sentence < 8) r->streamed[text][sentence] = strndup(s, len);
    pthread_mutex_unlock(&r->mu);
}

static void on_done(void *user, int status)
{
    run *r = user;
    pthread_mutex_lock(&r->mu);
    r->done = 1;
    r->status = status;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int wait_run(fy_request *q, run *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->in_order = 1;
    fy_request_callbacks cb = {on_sentence, on_done, r};
    fy_error err = {0};
    int rc = fy_request_submit(q, sched, &cb, &err);
    if (rc) return rc;
    pthread_mutex_lock(&r->mu);
    while (!r->done) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return r->status;
}

static void run_free(run *r)
{
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 8; k++) free(r->streamed[i][k]);
}

static fy_request *request(fy_registry *reg, const char *const *texts, size_t n, const char *src,
                           const char *tgt, int raw, size_t *bad, fy_error *err)
{
    size_t lens[16];
    for (size_t i = 0; i < n; i++) lens[i] = strlen(texts[i]);
    fy_request_options o = {.source = src, .target = tgt, .raw = raw};
    return fy_request_new(reg, texts, lens, n, &o, bad, err);
}

/* The whole translation of one text from src to tgt. */
static char *translate(fy_registry *reg, const char *text, const char *src, const char *tgt)
{
    fy_error err = {0};
    fy_request *q = request(reg, &text, 1, src, tgt, 0, NULL, &err);
    run r;
    char *out = q && wait_run(q, &r) == 0 ? fy_request_text(q, 0, NULL, NULL, &err) : NULL;
    if (q) run_free(&r);
    fy_request_free(q);
    return out;
}

/* ---- tests ---- */

static void test_registry(fy_registry *reg)
{
    CHECK(fy_registry_count(reg) == 3); /* "notes" is not a direction */
    CHECK(fy_registry_route_kind(reg, "zh", "en") == 1);
    CHECK(fy_registry_route_kind(reg, "zh", "de") == 2);
    CHECK(fy_registry_route_kind(reg, "de", "zh") == 0); /* no en->zh here */
    CHECK(fy_registry_route_kind(reg, "en", "en") == 0);
    char t[8][FY_LANG_MAX];
    size_t n = fy_registry_targets(reg, "zh", t, 8);
    CHECK(n == 2 && !strcmp(t[0], "de") && !strcmp(t[1], "en"));
    n = fy_registry_languages(reg, t, 8);
    CHECK(n == 3 && !strcmp(t[0], "de") && !strcmp(t[1], "en") && !strcmp(t[2], "zh"));
    fy_direction_info d;
    CHECK(fy_registry_info(reg, 0, &d) == 0 && !d.loaded && d.loads == 0);
}

static void test_languages(fy_registry *reg)
{
    const char *texts[] = {"今天天气很好。我们去公园吧。", "The weather is nice today.", "  ",
                           "12345 !", "Das Wetter ist heute sehr schön, wir gehen spazieren."};
    fy_error err = {0};
    fy_request *q = request(reg, texts, 5, NULL, "en", 0, NULL, &err);
    CHECK(q != NULL);
    if (!q) {
        fprintf(stderr, "request: %s\n", err.msg);
        return;
    }
    CHECK(!strcmp(fy_request_source(q, 0, NULL), "zh") &&
          !strcmp(fy_request_direction(q, 0), "zh-en"));
    CHECK(!strcmp(fy_request_source(q, 1, NULL), "en") && !strcmp(fy_request_direction(q, 1), ""));
    CHECK(!strcmp(fy_request_source(q, 2, NULL), "") && !strcmp(fy_request_source(q, 3, NULL), ""));
    CHECK(!strcmp(fy_request_source(q, 4, NULL), "de") &&
          !strcmp(fy_request_direction(q, 4), "de-en"));
    CHECK(!strcmp(fy_request_label(q), "mixed"));
    CHECK(fy_request_text_sentences(q, 0) == 2 && fy_request_text_sentences(q, 1) == 0);
    size_t start, len;
    CHECK(fy_request_sentence_span(q, 0, 1, &start, &len) == 0 &&
          !strncmp(texts[0] + start, "我们去公园吧。", len) && len == strlen("我们去公园吧。"));
    run r;
    CHECK(wait_run(q, &r) == 0 && r.in_order && r.events == 3);
    size_t spans[4], n;
    char *t0 = fy_request_text(q, 0, &n, spans, &err);
    /* Both sentences translate to something: an empty one would stand anywhere. */
    CHECK(t0 && r.streamed[0][0] && r.streamed[0][1] && r.streamed[0][0][0] && r.streamed[0][1][0]);
    if (t0 && r.streamed[0][1]) { /* streamed sentences stand in the result as sent */
        CHECK(spans[1] == strlen(r.streamed[0][0]) && !strncmp(t0, r.streamed[0][0], spans[1]));
        CHECK(spans[3] == strlen(r.streamed[0][1]) &&
              !strncmp(t0 + spans[2], r.streamed[0][1], spans[3]));
        /* ... and with what came before each, the stream is the result */
        CHECK(spans[2] + spans[3] == strlen(r.prefix[0]) &&
              !strncmp(t0, r.prefix[0], strlen(r.prefix[0])));
    }
    char *t1 = fy_request_text(q, 1, NULL, NULL, &err);
    CHECK(t1 && !strcmp(t1, texts[1])); /* already English: passed through */
    char *t3 = fy_request_text(q, 3, NULL, NULL, &err);
    CHECK(t3 && !strcmp(t3, texts[3]));
    free(t0), free(t1), free(t3);
    run_free(&r);
    fy_request_free(q);
}

static void test_defaults_and_errors(fy_registry *reg)
{
    fy_error err = {0};
    size_t bad;
    const char *zh[] = {"你好。"};
    fy_request *q = request(reg, zh, 1, NULL, NULL, 0, &bad, &err);
    CHECK(q && !strcmp(fy_request_target(q, 0), "en") && bad == 1);
    fy_request_free(q);
    const char *en[] = {"Good morning, how are you today?"};
    q = request(reg, en, 1, NULL, NULL, 0, &bad, &err);
    CHECK(q && !strcmp(fy_request_target(q, 0), "de")); /* English goes into German only */
    fy_request_free(q);
    /* No zh-Hant model: Traditional Chinese is read by the zh one. */
    const char *hant[] = {"這個問題很難回答。"};
    q = request(reg, hant, 1, "zh-TW", "en", 0, &bad, &err);
    CHECK(q && !strcmp(fy_request_source(q, 0, NULL), "zh-Hant") &&
          !strcmp(fy_request_direction(q, 0), "zh-en") &&
          fy_registry_route_kind(reg, "zh-Hant", "en") == 1);
    fy_request_free(q);
    const char *texts[] = {"你好。", "好", "\xff\xfe"};
    q = request(reg, texts, 3, "zh", "en", 0, &bad, &err);
    CHECK(!q && err.code == FY_EINVAL && bad == 2 && strstr(err.msg, "UTF-8"));
    q = request(reg, zh, 1, "zh", "ja", 0, &bad, &err);
    CHECK(!q && err.code == FY_ENOTFOUND && strstr(err.msg, "zh->ja") && strstr(err.msg, "zh->en"));
    q = request(reg, zh, 1, "chinese!", "en", 0, &bad, &err);
    CHECK(!q && err.code == FY_EINVAL && strstr(err.msg, "not a language code"));
    const char *fr[] = {"Le chat est sur la table et il dort tranquillement toute la journée."};
    q = request(reg, fr, 1, NULL, "en", 0, &bad, &err);
    CHECK(!q && err.code == FY_ENOTFOUND && strstr(err.msg, "French"));
}

static void test_raw(fy_registry *reg)
{
    /* Two sentences the model translates to something as one (你好。世界。
     * gives nothing: the check of the sentence between the spaces could
     * not fail). */
    const char *texts[] = {"  今天天气很好。我们去公园吧。 ", "\t"};
    fy_error err = {0};
    fy_request *q = request(reg, texts, 2, "zh", "en", 1, NULL, &err);
    run r;
    CHECK(q && fy_request_text_sentences(q, 0) == 1 && wait_run(q, &r) == 0);
    char *a = q ? fy_request_text(q, 0, NULL, NULL, &err) : NULL;
    char *b = q ? fy_request_text(q, 1, NULL, NULL, &err) : NULL;
    CHECK(a && !strncmp(a, "  ", 2) && a[strlen(a) - 1] == ' ' && r.streamed[0][0] &&
          r.streamed[0][0][0] && !strncmp(a + 2, r.streamed[0][0], strlen(r.streamed[0][0])));
    CHECK(b && !strcmp(b, "\t"));
    free(a), free(b);
    if (q) run_free(&r);
    fy_request_free(q);
}

/* The raw (untouched) translation of one sentence. */
static char *raw(fy_registry *reg, const char *text, const char *src, const char *tgt)
{
    fy_error err = {0};
    fy_request *q = request(reg, &text, 1, src, tgt, 1, NULL, &err);
    run r;
    char *out = q && wait_run(q, &r) == 0 ? fy_request_text(q, 0, NULL, NULL, &err) : NULL;
    if (q) run_free(&r);
    fy_request_free(q);
    return out;
}

/* zh->de has no model: zh->en, the English cleaned up, then en->de. */
static void test_pivot(fy_registry *reg)
{
    const char *zh[] = {"这家饭馆的饺子又便宜又好吃。", "孩子们在公园里放风筝。"};
    for (int k = 0; k < 2; k++) {
        char *en = raw(reg, zh[k], "zh", "en");
        char *clean = en ? fy_cleanup_english(en, strlen(en)) : NULL;
        char *de = clean ? raw(reg, clean, "en", "de") : NULL;
        char *pivot = raw(reg, zh[k], "zh", "de");
        CHECK(de && de[0] && pivot && !strcmp(pivot, de)); /* an empty de would prove nothing */
        free(en), free(clean), free(de), free(pivot);
    }
}

/* Room for one model: loading a second unloads the idle first. */
static void test_budget(void)
{
    fy_registry *reg = open_registry(0);
    char *a = translate(reg, "你好。", "zh", "en");
    fy_direction_info d;
    fy_registry_info(reg, 0, &d);
    size_t one = 0;
    for (size_t i = 0; i < fy_registry_count(reg); i++) {
        fy_registry_info(reg, i, &d);
        if (d.loaded) one = d.bytes;
    }
    fy_registry_free(reg);
    reg = open_registry(one + one / 2);
    char *b = translate(reg, "你好。", "zh", "en");
    char *c = translate(reg, "Guten Morgen.", "de", "en");
    int zh_loaded = -1, unloads = 0;
    for (size_t i = 0; i < fy_registry_count(reg); i++) {
        fy_registry_info(reg, i, &d);
        if (!strcmp(d.name, "zh-en")) zh_loaded = d.loaded, unloads = (int)d.unloads;
    }
    CHECK(a && a[0] && b && c && !strcmp(a, b) && zh_loaded == 0 && unloads == 1);
    size_t budget, used = fy_registry_memory(reg, &budget);
    CHECK(used <= budget && budget == one + one / 2);
    char *again = translate(reg, "你好。", "zh", "en"); /* loads back, same answer */
    CHECK(again && !strcmp(again, a));
    free(a), free(b), free(c), free(again);
    fy_registry_free(reg);
}

static fy_request *request_beam(fy_registry *reg, const char *const *texts, size_t n, int beam,
                                int alternatives, fy_error *err)
{
    size_t lens[16], bad;
    for (size_t i = 0; i < n; i++) lens[i] = strlen(texts[i]);
    fy_request_options o = {
        .source = "zh", .target = "en", .beam = beam, .alternatives = alternatives};
    return fy_request_new(reg, texts, lens, n, &o, &bad, err);
}

static int distinct(char **list, size_t n, const char *main)
{
    int ok = 1;
    for (size_t j = 0; j < n; j++) {
        ok &= strcmp(list[j], main) != 0;
        for (size_t k = 0; k < j; k++) ok &= strcmp(list[j], list[k]) != 0;
    }
    return ok;
}

/* Alternatives: distinct from the translation and each other, at most the
 * number asked; a one-sentence text's are its sentence's; beam 1 has none. */
static void test_alternatives(fy_registry *reg)
{
    const char *texts[] = {"今天天气很好。", "他说明天早上八点在火车站等我。会议将于下午两点举行。",
                           "Hello"};
    fy_error err = {0};
    fy_request *q = request_beam(reg, texts, 3, 4, 3, &err);
    run r;
    CHECK(q && fy_request_beam(q) == 4 && wait_run(q, &r) == 0);
    if (!q) return;
    size_t n, m[2], total = 0;
    char **list, **sl[2];
    for (size_t i = 0; i < 2; i++) {
        char *main = fy_request_text(q, i, NULL, NULL, &err);
        CHECK(fy_request_text_alternatives(q, i, &list, &n, &err) == 0 && n <= 3);
        CHECK(distinct(list, n, main));
        total += n;
        size_t ns = fy_request_text_sentences(q, i);
        for (size_t k = 0; k < ns && k < 2; k++) {
            CHECK(fy_request_sentence_alternatives(q, i, k, &sl[k], &m[k], &err) == 0 && m[k] <= 3);
            CHECK(distinct(sl[k], m[k], r.streamed[i][k] ? r.streamed[i][k] : ""));
        }
        if (i == 0) { /* one sentence, nothing around it: the same list */
            CHECK(m[0] == n);
            for (size_t j = 0; j < m[0] && j < n; j++) CHECK(!strcmp(sl[0][j], list[j]));
        }
        if (i == 1) CHECK(ns == 2 && m[0] && m[1] && n); /* (the tiny model has them) */
        if (i == 1 && ns == 2 && m[0] && m[1] && n) {    /* alternative 0 joins both's first */
            size_t a = strlen(sl[0][0]), b = strlen(sl[1][0]), l = strlen(list[0]);
            CHECK(!strncmp(list[0], sl[0][0], a) && l >= a + b &&
                  !strcmp(list[0] + l - b, sl[1][0]));
        }
        for (size_t k = 0; k < ns && k < 2; k++) fy_request_strings_free(sl[k], m[k]);
        fy_request_strings_free(list, n);
        free(main);
    }
    CHECK(total > 0);
    /* "Hello" is English already: passed through, no alternatives. */
    CHECK(fy_request_text_alternatives(q, 2, &list, &n, &err) == 0 && n == 0 && !list);
    run_free(&r);
    fy_request_free(q);
    /* Beam 1: none, even when asked for 0. */
    q = request_beam(reg, texts, 1, 1, 0, &err);
    CHECK(q && wait_run(q, &r) == 0);
    CHECK(q && fy_request_text_alternatives(q, 0, &list, &n, &err) == 0 && n == 0);
    run_free(&r);
    fy_request_free(q);
    /* Two alternatives make the beam at least 3; the registry's default
     * beam (1 here) is the beam of a request that says 0. */
    q = request_beam(reg, texts, 1, 0, 2, &err);
    CHECK(q && fy_request_beam(q) == 3);
    fy_request_free(q);
    q = request_beam(reg, texts, 1, 0, 0, &err);
    CHECK(q && fy_request_beam(q) == 1);
    fy_request_free(q);
    /* More than the registry allows (max beam 4): refused. */
    q = request_beam(reg, texts, 1, 5, 0, &err);
    CHECK(!q && err.code == FY_EINVAL && strstr(err.msg, "beam 5"));
    q = request_beam(reg, texts, 1, 0, 4, &err);
    CHECK(!q && err.code == FY_EINVAL && strstr(err.msg, "4 alternatives"));
    /* A registry whose default beam is 2. */
    fy_registry *r2 = open_registry_beam(0, 2, 4);
    q = r2 ? request_beam(r2, texts, 1, 0, 0, &err) : NULL;
    CHECK(q && fy_request_beam(q) == 2);
    fy_request_free(q);
    fy_registry_free(r2);
    CHECK(open_registry_beam(0, 5, 4) == NULL); /* a default above the max */
}

int main(void)
{
    make_root();
    fy_scheduler_options so;
    fy_scheduler_options_default(&so);
    so.threads = 2;
    sched = fy_scheduler_open(&so, NULL);
    fy_registry *reg = open_registry(0);
    if (!sched || !reg) return 1;
    test_registry(reg);
    test_languages(reg);
    test_defaults_and_errors(reg);
    test_raw(reg);
    test_pivot(reg);
    test_alternatives(reg);
    fy_registry_free(reg);
    test_budget();
    fy_scheduler_free(sched);
    remove_root();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
