/* test_pipeline.c - the request pipeline and the registry on the synthetic
 * models of the synth_models fixture: directions found under a root,
 * per-text languages (given, detected, passed through), the default
 * target, errors that name the text at fault, sentence spans, streamed
 * sentences equal to the joined result, raw mode, pivots through English
 * equal to their two legs, lazy loading under a budget. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "translate/models.h"
#include "text/segment.h"
#include "translate/pipeline.h"

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            passed++;                                                                              \
        else {                                                                                     \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

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

static fy_registry *open_registry(size_t budget)
{
    fy_registry_options o;
    fy_registry_options_default(&o);
    o.root = root;
    o.sched = sched;
    o.threads = 2;
    o.memory_budget = budget;
    fy_error err = {0};
    fy_registry *r = fy_registry_open(&o, &err);
    if (!r) fprintf(stderr, "registry: %s\n", err.msg);
    return r;
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
    fy_request_options o = {src, tgt, 0, raw, 0};
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
    CHECK(t0 && r.streamed[0][0] && r.streamed[0][1]);
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
    const char *texts[] = {"  你好。世界。 ", "\t"};
    fy_error err = {0};
    fy_request *q = request(reg, texts, 2, "zh", "en", 1, NULL, &err);
    run r;
    CHECK(q && fy_request_text_sentences(q, 0) == 1 && wait_run(q, &r) == 0);
    char *a = q ? fy_request_text(q, 0, NULL, NULL, &err) : NULL;
    char *b = q ? fy_request_text(q, 1, NULL, NULL, &err) : NULL;
    CHECK(a && !strncmp(a, "  ", 2) && a[strlen(a) - 1] == ' ' && r.streamed[0][0] &&
          !strncmp(a + 2, r.streamed[0][0], strlen(r.streamed[0][0])));
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
        CHECK(de && pivot && !strcmp(pivot, de));
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
    CHECK(a && b && c && !strcmp(a, b) && zh_loaded == 0 && unloads == 1);
    size_t budget, used = fy_registry_memory(reg, &budget);
    CHECK(used <= budget && budget == one + one / 2);
    char *again = translate(reg, "你好。", "zh", "en"); /* loads back, same answer */
    CHECK(again && !strcmp(again, a));
    free(a), free(b), free(c), free(again);
    fy_registry_free(reg);
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
    fy_registry_free(reg);
    test_budget();
    fy_scheduler_free(sched);
    remove_root();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
