/* pipeline.h - one translation request, from texts to translated texts.
 *
 * The request pipeline the server and the CLI share:
 *
 *   texts ─► per text: its source language (given, or detected: text/detect.h)
 *         ─► a route for source->target from the registry (its models
 *            loaded and pinned; direct, or through English)
 *         ─► split into sentences for that source and target (text/segment.h)
 *         ─► ONE scheduler job for the sentences of every text
 *         ─► each sentence, as it is translated, rendered exactly as it
 *            will stand in the result (for streaming)
 *         ─► the join per text, with each sentence's place in the source.
 *
 * A text already in the target language, or with nothing to translate
 * (no letters), comes back as it is. A request is used by one thread at a
 * time, except that its callbacks run on scheduler threads.
 */
#ifndef FY_TRANSLATE_PIPELINE_H
#define FY_TRANSLATE_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "translate/models.h"
#include "translate/scheduler.h"
#include "util/error.h"
#include "util/lang.h"

typedef struct fy_request_options {
    const char *source;  /* language tag (any form util/lang.h takes); NULL, "" or
                            "auto": detected per text */
    const char *target;  /* language tag; NULL or "": English, or for English
                            text the one language English translates into */
    int html;            /* the texts are HTML: markup is kept */
    int raw;             /* each text is exactly one sentence, output untouched */
    int64_t deadline_ms; /* fy_now_ms() time after which the job fails; 0: none */
    int beam;            /* hypotheses the search keeps per sentence: 1 is greedy;
                            0: the registry's default (fanyi serve --beam); at most its
                            max beam (--max-beam) */
    int alternatives;    /* alternative translations wanted per sentence and text, 0 ..
                            max beam - 1; N > 0 makes the beam at least N + 1 */
    int placeholders;    /* plug-ins' placeholders ({0}, <b0></b0>) stay in place
                            (fy_split_options.placeholders) */
    int background;      /* background work (a document job): its sentences wait for
                            every interactive one (fy_sentence_in.background) and a
                            stream of it gets no urgent waves */
    /* Glossaries to enforce (text/glossary.h, compiled), one per direction:
     * a text takes the first whose source and target are its own ("" matches
     * any language). Borrowed during fy_request_new only. A text with one is
     * split with it (fy_split_options.glossary: its terms come out as the
     * glossary says, on a pivot's last leg too), its sentences are cached
     * under the glossary's hash (fy_sentence_in.variant), and its sentences
     * of glossary terms only are not sent to the engine. */
    const struct fy_glossary *const *glossaries;
    size_t nglossaries;
} fy_request_options;

typedef struct fy_request fy_request;

/* Builds a request for n texts (texts[i] of lens[i] bytes, copied): normalises
 * the language codes, detects sources, acquires the routes (loading models
 * as needed) and splits the texts. Returns NULL with err, and with the
 * index of the text at fault in *bad (if non-NULL; n when no text is):
 *   FY_EINVAL    a language code that is not one, invalid UTF-8 or a NUL
 *                byte ("invalid UTF-8 at byte 7"), a beam or a number of
 *                alternatives outside what the registry allows (bad = n)
 *   FY_ENOTFOUND no model translates a text's pair (the message names the
 *                pair and the pairs there are)
 *   FY_ENOMEM, or the error of a model that failed to load. */
fy_request *fy_request_new(fy_registry *reg, const char *const *texts, const size_t *lens, size_t n,
                           const fy_request_options *o, size_t *bad, fy_error *err);

typedef struct fy_request_callbacks {
    /* Sentence k of text i is translated, rendered as it will stand in the
     * result (clean-up, protected spans, inline tags); before is what the
     * result has between the previous sentence of the text (its start, for
     * k = 0) and this one (fy_doc_join_before), so the befores and
     * renderings so far are a prefix of the result. In order (text by
     * text, sentence by sentence), once each, on a scheduler thread (or in
     * fy_request_submit). Both strings are borrowed for the call. A
     * request with this callback is a stream: its first sentences are
     * scheduled first, in small batches (FY_REQUEST_WAVES), unless it is
     * background work. */
    void (*on_sentence)(void *user, size_t text, size_t sentence, const char *before,
                        size_t before_len, const char *rendered, size_t len);
    /* Every sentence is done (0) or the request failed: FY_ETIMEOUT,
     * FY_ECANCELED, or the engine's code (message via fy_request_status). */
    void (*on_done)(void *user, int status);
    void *user;
} fy_request_callbacks;

/* A stream's first sentences go to the scheduler in waves of 1, 2, 4 and 8
 * sentences (fy_sentence_in.wave): the first comes back as fast as one
 * sentence alone can, and the next ones while the rest are translated. */
#define FY_REQUEST_WAVES 4

/* Submits every sentence of the request as one job to sched. Returns 0, or
 * FY_EBUSY (the queue is full now: try later), FY_ELIMIT (more sentences
 * than the queue can ever hold), FY_ECANCELED (shutting down), FY_ENOMEM.
 * Callbacks may run before this returns (cached or empty sentences). */
int fy_request_submit(fy_request *q, fy_scheduler *sched, const fy_request_callbacks *cb,
                      fy_error *err);

/* The devices that translated some of q's sentences (fy_job_devices: bit i
 * for the scheduler's device i); 0 before submit, or when the cache
 * answered every sentence. */
unsigned fy_request_devices(const fy_request *q);

/* The request's status (0 while running or when done) and message. */
int fy_request_status(const fy_request *q, fy_error *err);

/* Stops it: no callback runs once this returns. Harmless when done. */
void fy_request_cancel(fy_request *q);

/* Cancels, releases the models and frees q; NULL harmless. */
void fy_request_free(fy_request *q);

/* ---- what a request holds (valid until fy_request_free) -------------------- */

size_t fy_request_count(const fy_request *q);     /* texts */
size_t fy_request_sentences(const fy_request *q); /* sentences of all texts */

/* The translation of text i once the request is done: a malloc'd
 * NUL-terminated string (*len its length if non-NULL), or NULL with
 * FY_ENOMEM. spans (if non-NULL, 2 per sentence of the text) receives each
 * sentence's byte offset and length in the result. */
char *fy_request_text(const fy_request *q, size_t i, size_t *len, size_t *spans, fy_error *err);

/* Text i as far as it is translated, while the request runs: a malloc'd
 * string (*len its length) as fy_request_text would join it with the
 * sentences delivered so far (the others as the engine got them), and in
 * *ready the length of its start that is final: up to the end of the last
 * sentence delivered with all the sentences before it (the whole text once
 * they all are). Call it from the thread that submitted, after
 * fy_request_submit returned. NULL with FY_ENOMEM. */
char *fy_request_text_partial(const fy_request *q, size_t i, size_t *len, size_t *ready,
                              fy_error *err);

/* Engine tokens of text i once the request is done: *in, what its first
 * model read (SentencePiece pieces + EOS of each sentence, as the splitter
 * counted them), *out, its translation in its last model's target
 * vocabulary (pieces + EOS per sentence); both 0 for a text passed through.
 * For usage reports. */
void fy_request_tokens(const fy_request *q, size_t i, long *in, long *out);

/* Text i's source language: the one given, or detected (normalised tag; ""
 * when the text has no letters). *percent (if non-NULL): the detector's
 * confidence, 100 when the language was given. */
const char *fy_request_source(const fy_request *q, size_t i, int *percent);

/* Text i's target language (normalised tag): the one given, else the
 * default for its source. */
const char *fy_request_target(const fy_request *q, size_t i);

/* Text i's direction ("zh-en", "de-en-zh" through English), or "" when it
 * is passed through untranslated. */
const char *fy_request_direction(const fy_request *q, size_t i);

/* The request's direction for logs and metrics: the first text's that has
 * one, "mixed" when texts took different ones, "" when none did. */
const char *fy_request_label(const fy_request *q);

/* Sentences of text i, and where sentence k came from in the text. */
size_t fy_request_text_sentences(const fy_request *q, size_t i);
int fy_request_sentence_span(const fy_request *q, size_t i, size_t k, size_t *start, size_t *len);

/* Sentence k of text i as the engine saw it (borrowed). */
const char *fy_request_sentence(const fy_request *q, size_t i, size_t k);

/* The smallest logit gap over text i's sentences (INFINITY when unknown). */
float fy_request_gap(const fy_request *q, size_t i);

/* Sentence k of text i's confidence (scheduler.h, fy_confidence) once it is
 * translated (inside on_sentence for that sentence, or after the request
 * is done); {NAN, INFINITY} when unknown (a fixed sentence of glossary
 * terms, an engine that does not report it). */
fy_confidence fy_request_confidence(const fy_request *q, size_t i, size_t k);

/* The hash of the glossary text i was split with (text/glossary.h), or ""
 * for none. */
const char *fy_request_glossary(const fy_request *q, size_t i);

/* ---- alternatives (valid once the request is done) ---------------------------
 *
 * With a beam above 1 every sentence has an n-best list; its alternatives
 * are the next-best hypotheses after its translation, best first, rendered
 * as the sentence would stand in the result, each different (as rendered
 * text) from the translation and from the others, at most
 * o.alternatives of them (fewer when the beam found fewer distinct ones;
 * none with beam 1 or for a text passed through). For a pivot, they are
 * those of the second leg (translating the first leg's best).
 *
 * A text's alternative j is the text joined as fy_request_text joins it,
 * with each sentence's j-th alternative where it has one (its translation
 * where not): text alternative 0 takes every sentence's best alternative,
 * and so on; a joined text equal to the translation or to an earlier
 * alternative is left out, so the list holds distinct texts only, at most
 * o.alternatives.
 *
 * Both set *list to a malloc'd array of *count malloc'd strings (NULL when
 * *count is 0), to be freed with fy_request_strings_free, and return 0, or
 * FY_ENOMEM with nothing in *list. */

/* The beam the request's sentences were translated with. */
int fy_request_beam(const fy_request *q);

/* Sentence k of text i's alternatives. */
int fy_request_sentence_alternatives(const fy_request *q, size_t i, size_t k, char ***list,
                                     size_t *count, fy_error *err);

/* Text i's alternatives. */
int fy_request_text_alternatives(const fy_request *q, size_t i, char ***list, size_t *count,
                                 fy_error *err);

/* Frees count strings of list and list; NULL harmless. */
void fy_request_strings_free(char **list, size_t count);

#endif
