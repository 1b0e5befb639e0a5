/* pipeline.c - a request: languages, routes, split, one job, join.
 *
 * Sections: choosing each text's languages, building the request (routes
 * and documents), the job and its callbacks, and reading the results.
 */
#include "translate/pipeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/detect.h"
#include "text/glossary.h"
#include "text/segment.h"

#define MAX_LEASES 8 /* distinct routes one request may take */

typedef struct text {
    fy_doc *doc;    /* NULL for a text passed through */
    char *verbatim; /* the text passed through, else NULL */
    size_t len;
    char source[FY_LANG_MAX], target[FY_LANG_MAX];
    int percent;                             /* detection confidence; 100 when given */
    int lease;                               /* index into leases, -1: passed through */
    size_t first;                            /* its first sentence in the job */
    char glossary[FY_GLOSSARY_HASH_LEN + 1]; /* the hash of its glossary, "" for none */
} text;

struct fy_request {
    fy_registry *reg;
    fy_request_options o;
    int beam;                                      /* the one the sentences get */
    char source[FY_LANG_MAX], target[FY_LANG_MAX]; /* as given ("" = choose) */
    text *t;
    size_t n, nsent;
    fy_lease *leases[MAX_LEASES];
    char lsrc[MAX_LEASES][FY_LANG_MAX], ltgt[MAX_LEASES][FY_LANG_MAX]; /* their pairs */
    int nleases;
    fy_sentence_in *in; /* [nsent] */
    fy_job *job;
    fy_request_callbacks cb;
    size_t *text_of;     /* [nsent] sentence -> its text */
    fy_confidence *conf; /* [nsent] as each is delivered */
    char *last;          /* the translation streamed last (for what follows it) */
};

/* ---- languages -------------------------------------------------------------- */

/* Is lang the target of some model (text in it may pass through)? */
static int is_target(fy_registry *reg, const char *lang)
{
    for (size_t i = 0; i < fy_registry_count(reg); i++) {
        fy_direction_info d;
        fy_registry_info(reg, i, &d);
        if (!strcmp(d.target, lang)) return 1;
    }
    return 0;
}

/* The default target for text in src: English; for English the one
 * language English translates into here (English itself when none); for a
 * language nothing translates into English but some model produces, that
 * language (the text passes through). */
static int default_target(fy_registry *reg, const char *src, char *out, fy_error *err)
{
    char t[8][FY_LANG_MAX];
    size_t n = strcmp(src, "en") ? 0 : fy_registry_targets(reg, "en", t, 8);
    const char *pick = NULL;
    if (strcmp(src, "en"))
        pick = fy_registry_route_kind(reg, src, "en") ? "en" : is_target(reg, src) ? src : NULL;
    else
        pick = n == 0 ? "en" : n == 1 ? t[0] : NULL;
    if (pick) {
        snprintf(out, FY_LANG_MAX, "%s", pick);
        return 0;
    }
    if (!strcmp(src, "en"))
        return fy_err(err, FY_EINVAL,
                      "the text is English: say which language to translate it into (%zu are "
                      "possible here)",
                      n);
    return fy_err(err, FY_ENOTFOUND, "no model translates %s into English here", src);
}

/* Can text in lang be served: translated into target (or its default
 * target), or passed through because it is already in the target? */
static int can_take(fy_registry *reg, const char *lang, const char *target)
{
    char out[FY_LANG_MAX];
    fy_error ignored;
    if (target[0]) return !strcmp(lang, target) || fy_registry_route_kind(reg, lang, target);
    return default_target(reg, lang, out, &ignored) == 0 || !strcmp(lang, "en");
}

/* Among the detector's guesses, the first this server can take; then the
 * language of the script alone. Writes "" when the text has no letters.
 * Returns 0, or FY_ENOTFOUND naming what was detected when nothing fits. */
static int choose_source(fy_registry *reg, const fy_detection *d, const char *target, text *t,
                         fy_error *err)
{
    static const struct {
        const char *script, *lang;
    } by_script[] = {{"Hani", "zh"}, {"Latn", "en"}, {"Kana", "ja"}, {"Hang", "ko"}};
    const char *pick = NULL;
    for (int k = 0; k < d->n && !pick; k++) {
        if (!can_take(reg, d->top[k].lang, target)) continue;
        pick = d->top[k].lang;
        t->percent = d->top[k].percent;
    }
    /* A language the detector is sure of is not second-guessed by its
     * script, except Han: text written in Chinese characters (short texts
     * CLD2 calls Japanese, say) goes to a Chinese model when nothing
     * serves the detected language. */
    for (size_t k = 0; !pick && k < sizeof by_script / sizeof *by_script; k++) {
        const char *lang = by_script[k].lang;
        if (!strcmp(d->script, by_script[k].script) && (!d->reliable || !strcmp(lang, "zh")) &&
            can_take(reg, lang, target)) {
            pick = lang;
            t->percent = d->n ? d->top[0].percent / 2 : 0; /* a guess by script */
        }
    }
    if (pick || !d->script[0]) { /* no letters: nothing to translate */
        snprintf(t->source, sizeof t->source, "%s", pick ? pick : "");
        return 0;
    }
    char pairs[512];
    fy_registry_describe(reg, pairs, sizeof pairs);
    return fy_err(err, FY_ENOTFOUND,
                  "the text looks like %s (%s), which no model here translates%s%s; this server "
                  "has %s",
                  d->n ? fy_lang_name(d->top[0].lang) : "an unknown language",
                  d->n ? d->top[0].lang : d->script, target[0] ? " into " : "", target, pairs);
}

/* Text t's source and target. */
static int text_languages(fy_request *q, text *t, const char *s, size_t len, fy_error *err)
{
    int rc = 0;
    if (q->source[0]) {
        snprintf(t->source, sizeof t->source, "%s", q->source);
        t->percent = 100;
    } else {
        fy_detection d;
        if ((rc = fy_detect(s, len, q->o.html, &d)))
            return fy_err(err, rc, "cannot detect the language: invalid UTF-8");
        if ((rc = choose_source(q->reg, &d, q->target, t, err))) return rc;
    }
    if (q->target[0])
        snprintf(t->target, sizeof t->target, "%s", q->target);
    else if (t->source[0])
        rc = default_target(q->reg, t->source, t->target, err);
    return rc;
}

/* ---- building ---------------------------------------------------------------- */

/* The lease for src->tgt, shared by the texts that take it. */
static int lease_for(fy_request *q, const char *src, const char *tgt, fy_error *err)
{
    for (int k = 0; k < q->nleases; k++)
        if (!strcmp(q->lsrc[k], src) && !strcmp(q->ltgt[k], tgt)) return k;
    if (q->nleases == MAX_LEASES)
        return fy_err(err, FY_ELIMIT, "one request may take at most %d directions", MAX_LEASES);
    fy_lease *l = fy_registry_acquire(q->reg, src, tgt, err);
    if (!l) return err->code;
    snprintf(q->lsrc[q->nleases], FY_LANG_MAX, "%s", src);
    snprintf(q->ltgt[q->nleases], FY_LANG_MAX, "%s", tgt);
    q->leases[q->nleases] = l;
    return q->nleases++;
}

static long count_tokens(void *ctx, const char *s, size_t len)
{
    return fy_translator_count_tokens(ctx, s, len);
}

/* The request's glossary for src -> tgt, or NULL. */
static const fy_glossary *glossary_for(const fy_request *q, const char *src, const char *tgt)
{
    for (size_t k = 0; k < q->o.nglossaries; k++) {
        const fy_glossary *g = q->o.glossaries[k];
        const char *gs = fy_glossary_source(g), *gt = fy_glossary_target(g);
        if ((!*gs || !strcmp(gs, src)) && (!*gt || !strcmp(gt, tgt))) return g;
    }
    return NULL;
}

/* Languages, route and document of text i. */
static int build_text(fy_request *q, size_t i, const char *s, size_t len, fy_error *err)
{
    text *t = &q->t[i];
    t->lease = -1;
    int rc = text_languages(q, t, s, len, err);
    if (rc) return rc;
    if (!t->source[0] || !strcmp(t->source, t->target)) { /* nothing to translate */
        size_t at;
        if (!fy_utf8_valid(s, len, &at))
            return fy_err(err, FY_EINVAL, "invalid UTF-8 at byte %zu", at);
        const char *nul = len ? memchr(s, '\0', len) : NULL;
        if (nul) return fy_err(err, FY_EINVAL, "NUL byte at byte %zu", (size_t)(nul - s));
        t->verbatim = malloc(len + 1);
        if (!t->verbatim) return fy_err(err, FY_ENOMEM, "out of memory");
        memcpy(t->verbatim, s, len);
        t->verbatim[len] = '\0';
        t->len = len;
        return 0;
    }
    if ((rc = lease_for(q, t->source, t->target, err)) < 0) return rc;
    t->lease = rc;
    fy_split_options so;
    fy_split_options_default(&so);
    so.html = q->o.html;
    so.raw = q->o.raw;
    so.placeholders = q->o.placeholders;
    so.source = t->source;
    so.target = t->target;
    so.count_tokens = count_tokens;
    so.count_ctx = (void *)fy_lease_first(q->leases[rc]);
    so.glossary = glossary_for(q, t->source, t->target);
    if (so.glossary) snprintf(t->glossary, sizeof t->glossary, "%s", fy_glossary_hash(so.glossary));
    if (!(t->doc = fy_doc_split(s, len, &so, err))) return err->code;
    t->first = q->nsent;
    q->nsent += fy_doc_sentence_count(t->doc);
    return 0;
}

static int normalise(const char *code, const char *what, char *out, fy_error *err)
{
    if (fy_lang_normalize(code, out) >= 0) return 0;
    return fy_err(err, FY_EINVAL,
                  "%s language '%.40s' is not a language code (e.g. zh, en, zh-Hant)", what, code);
}

/* The job's sentences, in text order. */
static int collect(fy_request *q, fy_error *err)
{
    q->in = calloc(q->nsent ? q->nsent : 1, sizeof *q->in);
    q->text_of = calloc(q->nsent ? q->nsent : 1, sizeof *q->text_of);
    q->conf = calloc(q->nsent ? q->nsent : 1, sizeof *q->conf);
    if (!q->in || !q->text_of || !q->conf) return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; i < q->n; i++) {
        text *t = &q->t[i];
        if (t->lease < 0) continue;
        const fy_route *route = fy_lease_route(q->leases[t->lease]);
        for (size_t k = 0; k < fy_doc_sentence_count(t->doc); k++) {
            /* A sentence of glossary terms only is its own translation: no
             * route, the scheduler passes it through. */
            int fixed = fy_doc_sentence_fixed(t->doc, k);
            q->in[t->first + k] = (fy_sentence_in){fy_doc_sentence(t->doc, k, NULL),
                                                   fy_doc_sentence_tokens(t->doc, k),
                                                   fixed ? NULL : route,
                                                   q->beam,
                                                   0,
                                                   q->o.background != 0,
                                                   t->glossary};
            q->text_of[t->first + k] = i;
            q->conf[t->first + k] = (fy_confidence){NAN, INFINITY};
        }
    }
    return 0;
}

/* The beam: the one asked, else the registry's default, and at least one
 * more than the alternatives asked. */
static int choose_beam(fy_request *q, fy_error *err)
{
    int max, beam = fy_registry_beam(q->reg, &max);
    if (q->o.beam < 0 || q->o.beam > max)
        return fy_err(err, FY_EINVAL, "beam %d is outside 1 .. %d (the most this server allows)",
                      q->o.beam, max);
    if (q->o.alternatives < 0 || q->o.alternatives > max - 1)
        return fy_err(err, FY_EINVAL,
                      "%d alternatives asked; this server gives 0 .. %d (its beam is at most %d)",
                      q->o.alternatives, max - 1, max);
    if (q->o.beam) beam = q->o.beam;
    if (beam < q->o.alternatives + 1) beam = q->o.alternatives + 1;
    q->beam = beam;
    return 0;
}

fy_request *fy_request_new(fy_registry *reg, const char *const *texts, const size_t *lens, size_t n,
                           const fy_request_options *o, size_t *bad, fy_error *err)
{
    if (bad) *bad = n;
    fy_request *q = calloc(1, sizeof *q);
    if (!q || !(q->t = calloc(n ? n : 1, sizeof *q->t))) {
        free(q);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    q->reg = reg;
    if (o) q->o = *o;
    q->n = n;
    int rc = normalise(q->o.source, "source", q->source, err);
    if (!rc) rc = normalise(q->o.target, "target", q->target, err);
    if (!rc) rc = choose_beam(q, err);
    for (size_t i = 0; i < n && !rc; i++)
        if ((rc = build_text(q, i, texts[i], lens[i], err)) && bad) *bad = i;
    if (!rc) rc = collect(q, err);
    q->o.glossaries = NULL; /* borrowed for the split only */
    q->o.nglossaries = 0;
    if (rc) {
        fy_request_free(q);
        return NULL;
    }
    return q;
}

/* ---- the job ----------------------------------------------------------------- */

/* Renders sentence index for the stream, with what goes before it. The
 * job calls this in order, so q->last is the previous sentence's. */
static void on_job_sentence(void *user, size_t index, const char *translation, fy_confidence conf)
{
    fy_request *q = user;
    q->conf[index] = conf;
    if (!q->cb.on_sentence) return;
    size_t i = q->text_of[index], k = index - q->t[i].first;
    size_t len = 0, blen = 0;
    fy_error err = {0};
    const fy_doc *doc = q->t[i].doc;
    char *r = fy_doc_render_sentence(doc, k, translation, &len, &err);
    char *before = fy_doc_join_before(doc, k, k ? q->last : NULL, translation, &blen, &err);
    q->cb.on_sentence(q->cb.user, i, k, before ? before : "", blen, r ? r : translation,
                      r ? len : strlen(translation));
    free(r);
    free(before);
    free(q->last);
    q->last = strdup(translation); /* NULL when out of memory: "before" loses a space at most */
}

/* Marks a stream's first sentences as waves 1, 2, 3... of 1, 2, 4... */
static void mark_waves(fy_request *q)
{
    for (size_t k = 0, wave = 1, size = 1; wave <= FY_REQUEST_WAVES; wave++, size *= 2)
        for (size_t m = 0; m < size && k < q->nsent; m++) q->in[k++].wave = (int)wave;
}

/* The job lock is held here: the message is read later (fy_request_status). */
static void on_job_done(void *user, int status)
{
    fy_request *q = user;
    if (q->cb.on_done) q->cb.on_done(q->cb.user, status);
}

int fy_request_submit(fy_request *q, fy_scheduler *sched, const fy_request_callbacks *cb,
                      fy_error *err)
{
    fy_scheduler_stats st;
    fy_scheduler_get_stats(sched, &st);
    if (st.queue_max && q->nsent > st.queue_max)
        return fy_err(err, FY_ELIMIT,
                      "the text splits into %zu sentences; the server queues at most %zu "
                      "(--queue): send it in smaller requests",
                      q->nsent, st.queue_max);
    if (cb) q->cb = *cb;
    if (q->cb.on_sentence && !q->o.background) mark_waves(q);
    fy_job_callbacks jc = {on_job_sentence, on_job_done, q};
    q->job = fy_scheduler_submit(sched, q->in, q->nsent, q->o.deadline_ms, &jc, err);
    return q->job ? 0 : err->code;
}

int fy_request_status(const fy_request *q, fy_error *err)
{
    return q && q->job ? fy_job_status(q->job, err) : 0;
}

void fy_request_cancel(fy_request *q)
{
    if (q && q->job) fy_job_cancel(q->job);
}

void fy_request_free(fy_request *q)
{
    if (!q) return;
    if (q->job) {
        fy_job_cancel(q->job); /* no callbacks after this */
        fy_job_release(q->job);
    }
    for (int k = 0; k < q->nleases; k++) fy_lease_release(q->leases[k]);
    for (size_t i = 0; i < q->n; i++) {
        fy_doc_free(q->t[i].doc);
        free(q->t[i].verbatim);
    }
    free(q->t);
    free(q->in);
    free(q->text_of);
    free(q->conf);
    free(q->last);
    free(q);
}

/* ---- results ------------------------------------------------------------------ */

unsigned fy_request_devices(const fy_request *q)
{
    return q->job ? fy_job_devices(q->job) : 0;
}

size_t fy_request_count(const fy_request *q)
{
    return q->n;
}

size_t fy_request_sentences(const fy_request *q)
{
    return q->nsent;
}

char *fy_request_text(const fy_request *q, size_t i, size_t *len, size_t *spans, fy_error *err)
{
    const text *t = &q->t[i];
    if (!t->doc) {
        char *copy = malloc(t->len + 1);
        if (!copy) {
            fy_err(err, FY_ENOMEM, "out of memory");
            return NULL;
        }
        memcpy(copy, t->verbatim, t->len + 1);
        if (len) *len = t->len;
        return copy;
    }
    size_t m = fy_doc_sentence_count(t->doc);
    const char **out = calloc(m ? m : 1, sizeof *out);
    if (!out) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    for (size_t k = 0; q->job && k < m; k++) out[k] = fy_job_result(q->job, t->first + k);
    char *joined = fy_doc_join_ex(t->doc, out, 0, len, spans, err);
    free(out);
    return joined;
}

char *fy_request_text_partial(const fy_request *q, size_t i, size_t *len, size_t *ready,
                              fy_error *err)
{
    const text *t = &q->t[i];
    size_t m = t->doc ? fy_doc_sentence_count(t->doc) : 0, done = 0;
    const char **out = calloc(m ? m : 1, sizeof *out);
    size_t *spans = calloc(2 * (m ? m : 1), sizeof *spans);
    char *joined = NULL;
    if (!out || !spans) {
        fy_err(err, FY_ENOMEM, "out of memory");
        goto done;
    }
    if (!t->doc) {
        joined = fy_request_text(q, i, len, NULL, err);
        if (joined) *ready = *len;
        goto done;
    }
    for (size_t k = 0; q->job && k < m; k++) out[k] = fy_job_result(q->job, t->first + k);
    while (done < m && out[done]) done++;
    joined = fy_doc_join_ex(t->doc, out, 0, len, spans, err);
    /* What the join writes before a sentence (the gap, a space it adds)
     * depends on that sentence and the piece before it only: everything up
     * to the end of a delivered sentence whose predecessors are all
     * delivered is what the final text will hold. */
    if (joined)
        *ready = done == m ? *len : done ? spans[2 * (done - 1)] + spans[2 * (done - 1) + 1] : 0;
done:
    free(out);
    free(spans);
    return joined;
}

void fy_request_tokens(const fy_request *q, size_t i, long *in, long *out)
{
    const text *t = &q->t[i];
    *in = *out = 0;
    if (!t->doc) return;
    const fy_translator *last = fy_lease_last(q->leases[t->lease]);
    for (size_t k = 0; k < fy_doc_sentence_count(t->doc); k++) {
        *in += fy_doc_sentence_tokens(t->doc, k);
        const char *r = q->job ? fy_job_result(q->job, t->first + k) : NULL;
        long n = r ? fy_translator_count_target_tokens(last, r, strlen(r)) : 0;
        if (n > 0) *out += n;
    }
}

const char *fy_request_source(const fy_request *q, size_t i, int *percent)
{
    if (percent) *percent = q->t[i].percent;
    return q->t[i].source;
}

const char *fy_request_target(const fy_request *q, size_t i)
{
    return q->t[i].target;
}

const char *fy_request_direction(const fy_request *q, size_t i)
{
    int k = q->t[i].lease;
    return k < 0 ? "" : fy_lease_name(q->leases[k]);
}

const char *fy_request_label(const fy_request *q)
{
    if (q->nleases == 0) return "";
    return q->nleases == 1 ? fy_lease_name(q->leases[0]) : "mixed";
}

size_t fy_request_text_sentences(const fy_request *q, size_t i)
{
    return fy_doc_sentence_count(q->t[i].doc);
}

int fy_request_sentence_span(const fy_request *q, size_t i, size_t k, size_t *start, size_t *len)
{
    return fy_doc_sentence_span(q->t[i].doc, k, start, len);
}

const char *fy_request_sentence(const fy_request *q, size_t i, size_t k)
{
    return fy_doc_sentence(q->t[i].doc, k, NULL);
}

float fy_request_gap(const fy_request *q, size_t i)
{
    const text *t = &q->t[i];
    float g = INFINITY;
    for (size_t k = 0; q->job && k < fy_doc_sentence_count(t->doc); k++) {
        float v = fy_job_gap(q->job, t->first + k);
        if (v < g) g = v;
    }
    return g;
}

fy_confidence fy_request_confidence(const fy_request *q, size_t i, size_t k)
{
    const text *t = &q->t[i];
    if (!t->doc || k >= fy_doc_sentence_count(t->doc)) return (fy_confidence){NAN, INFINITY};
    return q->conf[t->first + k];
}

const char *fy_request_glossary(const fy_request *q, size_t i)
{
    return q->t[i].glossary;
}

/* ---- alternatives -------------------------------------------------------------- */

int fy_request_beam(const fy_request *q)
{
    return q->beam;
}

void fy_request_strings_free(char **list, size_t count)
{
    for (size_t i = 0; list && i < count; i++) free(list[i]);
    free(list);
}

static int in_list(char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(list[i], s)) return 1;
    return 0;
}

/* Sentence k of text t's alternatives that render differently from its
 * translation and from each other, at most o.alternatives: the engine's
 * texts into raw[] (borrowed from the job) and their renderings into
 * shown[] (malloc'd), both of o.alternatives entries. Returns how many,
 * or FY_ENOMEM. */
static long sentence_alts(const fy_request *q, const text *t, size_t k, const char **raw,
                          char **shown, fy_error *err)
{
    size_t n, idx = t->first + k, count = 0, want = (size_t)q->o.alternatives;
    if (!t->doc || !q->job || !want) return 0;
    const char *const *alts = fy_job_alternatives(q->job, idx, &n);
    const char *best = fy_job_result(q->job, idx);
    if (!n || !best) return 0;
    char *mine = fy_doc_render_sentence(t->doc, k, best, NULL, err);
    if (!mine) return err->code;
    for (size_t a = 0; a < n && count < want; a++) {
        char *r = fy_doc_render_sentence(t->doc, k, alts[a], NULL, err);
        if (!r) {
            free(mine);
            fy_request_strings_free(shown, count);
            return err->code;
        }
        if (!strcmp(r, mine) || in_list(shown, count, r)) {
            free(r);
            continue;
        }
        raw[count] = alts[a];
        shown[count++] = r;
    }
    free(mine);
    return (long)count;
}

int fy_request_sentence_alternatives(const fy_request *q, size_t i, size_t k, char ***list,
                                     size_t *count, fy_error *err)
{
    size_t want = (size_t)q->o.alternatives;
    *list = NULL;
    *count = 0;
    if (!want || !q->t[i].doc || k >= fy_doc_sentence_count(q->t[i].doc)) return 0;
    const char **raw = calloc(want, sizeof *raw);
    char **shown = calloc(want, sizeof *shown);
    long n = raw && shown ? sentence_alts(q, &q->t[i], k, raw, shown, err)
                          : fy_err(err, FY_ENOMEM, "out of memory");
    free(raw);
    if (n <= 0) {
        free(shown); /* sentence_alts freed its strings on failure */
        return n < 0 ? (int)n : 0;
    }
    *list = shown;
    *count = (size_t)n;
    return 0;
}

/* Per sentence of text t: its alternatives' engine texts (alt[k], na[k]
 * of them), for joining. Returns the most any sentence has, or FY_ENOMEM. */
static long text_alts(const fy_request *q, const text *t, const char ***alt, size_t *na,
                      fy_error *err)
{
    size_t m = fy_doc_sentence_count(t->doc), want = (size_t)q->o.alternatives, most = 0;
    char **shown = calloc(want, sizeof *shown);
    if (!shown) return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t k = 0; k < m; k++) {
        long n = (alt[k] = calloc(want, sizeof **alt)) ? sentence_alts(q, t, k, alt[k], shown, err)
                                                       : fy_err(err, FY_ENOMEM, "out of memory");
        if (n < 0) {
            free(shown);
            return n;
        }
        for (long j = 0; j < n; j++) free(shown[j]);
        na[k] = (size_t)n;
        if (na[k] > most) most = na[k];
    }
    free(shown);
    return (long)most;
}

/* Text t's alternatives joined from the sentences' (see pipeline.h): into
 * out (o.alternatives entries); returns how many, or FY_ENOMEM. */
static long join_alts(const fy_request *q, const text *t, const char ***alt, const size_t *na,
                      size_t most, char **out, fy_error *err)
{
    size_t m = fy_doc_sentence_count(t->doc), count = 0, want = (size_t)q->o.alternatives;
    const char **tr = calloc(m ? m : 1, sizeof *tr);
    char *main = tr ? fy_request_text(q, (size_t)(t - q->t), NULL, NULL, err) : NULL;
    if (!main) {
        free(tr);
        return tr ? err->code : fy_err(err, FY_ENOMEM, "out of memory");
    }
    long rc = 0;
    for (size_t j = 0; j < most && count < want && rc >= 0; j++) {
        for (size_t k = 0; k < m; k++)
            tr[k] = j < na[k] ? alt[k][j] : fy_job_result(q->job, t->first + k);
        char *joined = fy_doc_join_ex(t->doc, tr, 0, NULL, NULL, err);
        if (!joined)
            rc = err->code;
        else if (!strcmp(joined, main) || in_list(out, count, joined))
            free(joined);
        else
            out[count++] = joined;
    }
    free(main);
    free(tr);
    if (rc < 0) {
        for (size_t j = 0; j < count; j++) free(out[j]);
        return rc;
    }
    return (long)count;
}

int fy_request_text_alternatives(const fy_request *q, size_t i, char ***list, size_t *count,
                                 fy_error *err)
{
    const text *t = &q->t[i];
    size_t want = (size_t)q->o.alternatives;
    *list = NULL;
    *count = 0;
    if (!want || !t->doc || !q->job) return 0;
    size_t m = fy_doc_sentence_count(t->doc);
    const char ***alt = calloc(m ? m : 1, sizeof *alt);
    size_t *na = calloc(m ? m : 1, sizeof *na);
    char **out = calloc(want, sizeof *out);
    long n =
        alt && na && out ? text_alts(q, t, alt, na, err) : fy_err(err, FY_ENOMEM, "out of memory");
    if (n > 0) n = join_alts(q, t, alt, na, (size_t)n, out, err);
    for (size_t k = 0; alt && k < m; k++) free(alt[k]);
    free(alt);
    free(na);
    if (n <= 0) {
        free(out);
        return n < 0 ? (int)n : 0;
    }
    *list = out;
    *count = (size_t)n;
    return 0;
}
