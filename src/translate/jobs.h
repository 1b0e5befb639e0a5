/* jobs.h - document jobs: a document (text/document.h) submitted, then
 * translated in the background while its submitter polls, cancels, lists
 * and downloads; kept in a store (translate/jobstore.h: disk or Redis) so
 * that it survives a restart of the server and is seen by every replica.
 *
 *     fy_jobs *js = fy_jobs_open(reg, sched, &opt, &err);
 *     fy_jobs_submit(js, &spec, data, len, NULL, &info, &err);   -> info.id
 *     fy_jobs_get(js, id, &info, &err);     queued, translating (done of
 *                                           total, seconds_remaining), done
 *     fy_jobs_result(js, id, &data, &len, &info, &err);
 *     fy_jobs_cancel / fy_jobs_remove / fy_jobs_list
 *     fy_jobs_free(js);                     unfinished jobs stay in the store
 *
 * States: queued -> translating -> done | error | canceled. A submission
 * reads the document and decides its languages at once (so a bad file, a
 * language pair nobody serves or a full store is an error of the submit
 * call), stores it and queues it. This process runs at most `parallel`
 * queued jobs at a time (a job's batches go one after the other, at the
 * scheduler's background priority: interactive requests go first), taking
 * each job's lease from the store first; a job whose lease lapses (its
 * replica died) is taken over by whichever replica looks next.
 *
 * Checkpoints: after each batch the translations of its units are stored
 * by unit index. A job resumed (after a restart, or on another replica)
 * reads the file again (its units depend only on its bytes), sets what
 * the checkpoints hold and translates the rest; units are independent, so
 * the result is byte for byte the one an uninterrupted run writes.
 *
 * A finished job's result is kept ttl_s, then deleted with the job.
 * Watched jobs (fy_jobs_watch: the endpoints that answer when the
 * document is done, /translate/document and /translate_file) start at
 * once in this process, whatever is queued, and report to their watcher.
 *
 * Threads: every function may be called from any thread; the watch
 * callbacks run on scheduler or job threads and must be quick.
 */
#ifndef FY_TRANSLATE_JOBS_H
#define FY_TRANSLATE_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "text/document.h"
#include "translate/glossary_store.h"
#include "translate/jobstore.h"
#include "translate/models.h"
#include "translate/scheduler.h"
#include "util/error.h"
#include "util/lang.h"

typedef enum fy_job_state {
    FY_JOB_QUEUED,
    FY_JOB_TRANSLATING,
    FY_JOB_DONE,
    FY_JOB_ERROR,
    FY_JOB_CANCELED
} fy_job_state;

/* "queued", "translating", "done", "error", "canceled". */
const char *fy_job_state_name(int state);

/* Bytes of a job's glossary ids (fy_job_spec.glossary) and their NUL. */
#define FY_JOB_GLOSSARY_MAX (8 * FY_GSTORE_ID_MAX)

typedef struct fy_jobs_options {
    fy_jobstore *store; /* taken (freed by fy_jobs_free, or on failure) */
    fy_doc_limits limits;
    int ttl_s;          /* a finished job is kept this long (default 86400) */
    int parallel;       /* queued jobs this process runs at once (default 2) */
    int lease_ms;       /* a running job's lease, renewed at a third of it (default 30000) */
    int scan_ms;        /* how often the store is looked at for jobs to take up and
                           jobs expired (default 1000) */
    size_t batch_chars; /* a batch of a job (0: docjob's default) */
    /* Where a job's glossary ids (fy_job_spec.glossary) are looked up,
     * borrowed (must outlive the jobs); NULL: a job with one fails. */
    fy_glossary_store *glossaries;
    /* A line (no newline) about a job resumed, taken over or failed; NULL:
     * silent. Any thread. */
    void (*log)(void *user, const char *line);
    void *log_user;
    /* Test hook (tests/server/test_jobs_resume.py), 0 in normal use: the
     * process stops itself (SIGSTOP) once it has stored this many
     * checkpoints, so that a test kills it half way through a job however
     * fast or slow the machine. */
    int test_stop_after_checkpoints;
} fy_jobs_options;

/* ttl 86400 s, 2 at once, a lease of 30 s, a look every second, the
 * document limits' defaults. */
void fy_jobs_options_default(fy_jobs_options *o);

typedef struct fy_jobs fy_jobs;

/* Starts the job threads and takes up the unfinished jobs of the store
 * (resuming them). reg and sched are borrowed and must outlive it. NULL
 * with err (FY_ENOMEM). */
fy_jobs *fy_jobs_open(fy_registry *reg, fy_scheduler *sched, const fy_jobs_options *o,
                      fy_error *err);

/* Stops: the batches in flight are cancelled and the jobs left as they are
 * in the store (a later server resumes them); then frees. NULL harmless. */
void fy_jobs_free(fy_jobs *js);

/* What a submission asks. */
typedef struct fy_job_spec {
    const char *filename;     /* as uploaded (may be NULL: "document.<format>") */
    const char *content_type; /* may be NULL */
    const char *source;       /* language tag; NULL, "" or "auto": detected */
    const char *target;       /* language tag; NULL or "": the pipeline's default */
    int bilingual;            /* PDF: each page followed by its translation */
    const char *client;       /* the submitter's tag for fy_jobs_list (may be NULL) */
    const char *key;          /* a secret the job must be asked with (DeepL's
                                 document_key; may be NULL) */
    const char *glossary;     /* glossary ids, comma-separated, kept with the job (may be
                                 NULL): compiled from fy_jobs_options.glossaries for the
                                 job's direction whenever it starts (submitted, resumed,
                                 taken over); an id gone by then fails the job */
    int same_is_error;        /* a document already in the target language is a job
                                 in error ("Source and target language are equal."), as
                                 DeepL answers; 0: it comes back unchanged */
} fy_job_spec;

/* What a job is, as far as it went. */
typedef struct fy_job_info {
    char id[33];
    int state;                       /* fy_job_state */
    char filename[256];              /* as uploaded */
    char name[256];                  /* the translated file's ("report.en.pdf") */
    char format[16];                 /* fy_docfmt_info.name */
    char mime[128];                  /* of the result */
    char source[FY_LANG_MAX];        /* as asked ("" : detect) */
    char target[FY_LANG_MAX];        /* normalised */
    char detected[FY_LANG_MAX];      /* the source decided ("" : no text to translate) */
    char direction[3 * FY_LANG_MAX]; /* "zh-en"; "" when nothing is translated */
    int bilingual;
    uint64_t bytes, result_bytes;  /* the upload, the translated file (once done) */
    uint64_t chars;                /* characters of text to translate (billed) */
    size_t units, sentences, done; /* paragraphs; sentences, translated so far */
    size_t pages, pages_done;      /* a PDF's; pages all of whose paragraphs are done */
    int64_t created_ms, started_ms, finished_ms; /* wall clock, ms; 0: not yet */
    int64_t expires_ms;       /* a finished job is deleted then (wall clock, ms) */
    double seconds_remaining; /* while translating, once measured; < 0: unknown */
    int code;                 /* error: the FY_E* code of its cause */
    char error[512];          /* error: why */
    char notes[2048];         /* what the document reported, one note per line */
    char client[80];
    char key[80];
    char glossary[FY_JOB_GLOSSARY_MAX]; /* fy_job_spec.glossary */
    int watched;                        /* started for a watcher (its own endpoint) */
} fy_job_info;

/* The watcher of a job started by fy_jobs_submit (a waiting request). */
typedef struct fy_jobs_watch {
    void (*on_progress)(void *user, size_t done, size_t total); /* sentences */
    void (*on_end)(void *user, int state);                      /* done, error, canceled */
    void *user;
} fy_jobs_watch;

/* Submits data[0..len) (copied). With watch (may be NULL) the job starts
 * at once in this process and reports to it until fy_jobs_unwatch. info
 * (may be NULL) receives the job as stored. Returns 0, or with err:
 * FY_EINVAL (an empty file, a language code, no target, glossary ids
 * without a target), FY_EUNSUPPORTED, FY_EFORMAT, FY_ELIMIT
 * (text/document.h's, fy_docjob's), FY_ENOTFOUND (no model for the pair; a
 * glossary id the store does not have, or with no dictionary for the
 * direction), FY_ESPACE (the store is full), FY_EIO/FY_ENET (the store
 * failed), FY_ENOMEM. */
int fy_jobs_submit(fy_jobs *js, const fy_job_spec *spec, const char *data, size_t len,
                   const fy_jobs_watch *watch, fy_job_info *info, fy_error *err);

/* After this returns no callback of id's watcher runs. Harmless when
 * none. */
void fy_jobs_unwatch(fy_jobs *js, const char *id);

/* The job (live progress when it runs here). FY_ENOTFOUND (no such job,
 * or it expired), FY_EIO/FY_ENET. */
int fy_jobs_get(fy_jobs *js, const char *id, fy_job_info *info, fy_error *err);

/* The translated file (malloc'd) of a job that is done; info (may be
 * NULL) receives the job. FY_ENOTFOUND, FY_EBUSY (not done: info says its
 * state), FY_EIO/FY_ENET. */
int fy_jobs_result(fy_jobs *js, const char *id, char **data, size_t *len, fy_job_info *info,
                   fy_error *err);

/* Cancels an unfinished job: a job running here stops now (its batch in
 * flight leaves the queue, the workers let go of it), one running on
 * another replica at its next batch, a queued one is never started. info
 * (may be NULL) receives the job as it is afterwards. A finished job is
 * left as it is. FY_ENOTFOUND, FY_EIO/FY_ENET. */
int fy_jobs_cancel(fy_jobs *js, const char *id, fy_job_info *info, fy_error *err);

/* Deletes the job and its files (a running one is cancelled first).
 * FY_ENOTFOUND, FY_EIO/FY_ENET. */
int fy_jobs_remove(fy_jobs *js, const char *id, fy_error *err);

/* Every job submitted with tag client (NULL: every job), newest first:
 * *list malloc'd, *n of them. */
int fy_jobs_list(fy_jobs *js, const char *client, fy_job_info **list, size_t *n, fy_error *err);

/* What the store and this process hold. */
typedef struct fy_jobs_stats {
    const char *store;    /* "disk", "redis" */
    uint64_t store_bytes; /* the store's files and values, as last counted */
    size_t store_jobs;    /* jobs in the store */
    size_t running;       /* jobs running here (watched ones included) */
    size_t queued;        /* jobs waiting here for a turn */
    uint64_t started, resumed, finished, failed, canceled, expired; /* since start, here */
} fy_jobs_stats;

void fy_jobs_get_stats(fy_jobs *js, fy_jobs_stats *st);

#endif
