/* docjob.h - translating a whole document (text/document.h): its units go
 * through the request pipeline (translate/pipeline.h) in bounded batches,
 * one after the other, so a big document never floods the queue and other
 * clients' requests keep being served between its batches.
 *
 *     fy_docjob *j = fy_docjob_new(reg, sched, doc, &opt, &cb, &err);
 *     while ((rc = fy_docjob_step(j, &err)) == 0)   submits the next batch
 *         wait for cb.on_batch                      (a scheduler thread)
 *     rc == 1: every unit is set in doc -> fy_document_write
 *     fy_docjob_free(j);
 *
 * The source language is the one given or, for "auto", detected once on
 * the first units (the pipeline's choice: text/detect.h), and holds for
 * the whole document; the target is set on the document
 * (fy_document_set_target: a PDF's fonts and line breaking). Every batch is built when the job is
 * made, so the number of sentences is known before the first is translated; progress is translated
 * sentences / that total.
 */
#ifndef FY_TRANSLATE_DOCJOB_H
#define FY_TRANSLATE_DOCJOB_H

#include <stddef.h>

#include "text/document.h"
#include "translate/models.h"
#include "translate/scheduler.h"
#include "util/error.h"

typedef struct fy_docjob_options {
    const char *source; /* language tag; NULL, "" or "auto": detected */
    const char *target; /* language tag; NULL or "": the pipeline's default */
    int timeout_ms;     /* per batch: a document of B batches has B x this; 0: none */
    size_t batch_chars; /* characters per batch (0: 4000) */
    int background;     /* background work: its sentences wait for interactive ones
                           (fy_request_options.background) */
    size_t queue_share; /* a batch takes at most 1/queue_share of the queue (0: 2), so
                           that this many documents leave the other half to requests */
    /* Units already translated and set in the document (a job resumed from
     * its checkpoints): done[i] != 0 is skipped. NULL: none. Borrowed for
     * fy_docjob_new only. Units are independent, so a document translated
     * in parts comes out as one translated in one go. */
    const unsigned char *done;
    /* Glossaries to enforce, as fy_request_options.glossaries (one per
     * direction, compiled); borrowed during fy_docjob_new only (every
     * batch is built there). */
    const struct fy_glossary *const *glossaries;
    size_t nglossaries;
} fy_docjob_options;

typedef struct fy_docjob_callbacks {
    /* A sentence is translated: done of total. On a scheduler thread. */
    void (*on_progress)(void *user, size_t done, size_t total);
    /* The batch in flight is over (status 0, or FY_ETIMEOUT, FY_ECANCELED,
     * an engine error). On a scheduler thread with the job's lock held:
     * call fy_docjob_step from another thread, never from here. */
    void (*on_batch)(void *user, int status);
    void *user;
    /* Optional: unit i's translation text[0..len) was set in the document
     * (borrowed for the call), from fy_docjob_step, on its thread, in unit
     * order: what a job checkpoints. */
    void (*on_unit)(void *user, size_t i, const char *text, size_t len);
} fy_docjob_callbacks;

typedef struct fy_docjob fy_docjob;

/* Builds the job for doc (borrowed: it must outlive the job; units are set
 * in it as batches finish). Returns NULL with err: FY_EINVAL (a language
 * code, a unit that is not valid text), FY_ENOTFOUND (no model for the
 * pair; the message lists what there is), FY_EUNSUPPORTED (a PDF that
 * cannot be written in the target language), FY_ELIMIT (a paragraph with
 * more sentences than the queue can hold), FY_ENOMEM. */
fy_docjob *fy_docjob_new(fy_registry *reg, fy_scheduler *sched, fy_document *doc,
                         const fy_docjob_options *o, const fy_docjob_callbacks *cb, fy_error *err);

/* Collects the batch that finished into the document (none on the first
 * call), then submits the next. Returns 0 (a batch is in flight: wait for
 * on_batch), 1 (all done), or an error: the failed batch's status
 * (FY_ETIMEOUT, FY_ECANCELED, ...), FY_EBUSY (the queue is full now),
 * FY_ENOMEM. Not concurrently with itself. */
int fy_docjob_step(fy_docjob *j, fy_error *err);

/* The document's source language (given or detected; "" when it has no
 * text to translate), target, and direction ("zh-en", "" when nothing is
 * translated). Valid until fy_docjob_free. */
const char *fy_docjob_source(const fy_docjob *j);
const char *fy_docjob_target(const fy_docjob *j);
const char *fy_docjob_direction(const fy_docjob *j);

/* Sentences in all batches, and translated so far (units skipped as
 * done are in neither). */
size_t fy_docjob_total(const fy_docjob *j);
size_t fy_docjob_done(const fy_docjob *j);

/* Stops the batch in flight: no callback runs once this returns. */
void fy_docjob_cancel(fy_docjob *j);

/* Cancels and frees; NULL harmless. The document is not freed. */
void fy_docjob_free(fy_docjob *j);

#endif
