/* jobs_internal.h - what the files of the document jobs share (jobs.c:
 * the manager and its API; jobs_run.c: running one job; jobs_state.c: a
 * job's state as JSON). Not a public header.
 *
 * Locks: js->lock guards the runs, their phase and progress, the queue
 * and the counters. Scheduler callbacks take it with the scheduler's job
 * lock held, so nothing that holds js->lock may call into the scheduler
 * (fy_docjob_step, fy_docjob_cancel, fy_docjob_free): those run with
 * js->lock released, on the thread that owns the run at that moment.
 */
#ifndef FY_TRANSLATE_JOBS_INTERNAL_H
#define FY_TRANSLATE_JOBS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "translate/docjob.h"
#include "translate/jobs.h"
#include "util/buf.h"

/* A run's phase: who may touch its document and docjob. */
enum {
    RUN_READY,   /* in the ready queue: a job thread takes it next */
    RUN_BUSY,    /* a job thread works on it */
    RUN_WAIT,    /* a batch is in flight: nobody touches it until on_batch */
    RUN_STOPPING /* a canceller is stopping the batch in flight */
};

typedef struct run {
    fy_jobs *js;
    char id[33];
    fy_job_info info; /* js->lock: progress moves under it */
    fy_document *doc; /* NULL until read (a job taken up cold) */
    fy_docjob *dj;
    int phase;    /* RUN_*, js->lock */
    int in_ready; /* js->lock */
    int over;     /* the batch in flight ended (status in batch_status), js->lock */
    int batch_status;
    int cancel;  /* cancel asked, js->lock */
    int drop;    /* stop without a final state (shutdown, lease lost), js->lock */
    int started; /* its docjob runs (START done) */
    int leased;  /* holds its lease: renewed by the ticker from then on, js->lock */
    int watched;
    fy_jobs_watch watch; /* js->lock; on_end NULL once unwatched */
    /* The units collected by the step in progress, for the checkpoint
     * (the owning thread only): indexes, lengths, texts, in arrays of
     * ck_cap each. */
    size_t *ck_idx, *ck_len, ck_n, ck_cap;
    char **ck_text;
    size_t base;       /* sentences translated before this docjob (resumed) */
    size_t *page_left; /* [pages] units still to translate on each page */
    int64_t t0_ms;     /* monotonic: when its docjob started */
    size_t done0;      /* info.done then */
    int64_t saved_ms;  /* monotonic: its state last stored */
    int64_t renewed_ms;
    struct run *prev, *next; /* js->runs */
    struct run *rnext;       /* the ready queue */
} run;

/* A queued job not yet started here. */
typedef struct queued {
    char id[33];
    struct queued *next;
} queued;

struct fy_jobs {
    fy_registry *reg;
    fy_scheduler *sched;
    fy_jobstore *store;
    fy_jobs_options o;
    pthread_mutex_t lock;
    pthread_cond_t ready_cv; /* the ready queue grew, or stopping */
    pthread_cond_t tick_cv;  /* the ticker's sleep */
    pthread_cond_t idle_cv;  /* a canceller left a run (RUN_STOPPING ended) */
    run *runs;
    run *ready_head, *ready_tail;
    queued *q_head, *q_tail;
    size_t nqueued;
    size_t running; /* runs not watched (they count against parallel) */
    int stop;
    pthread_t threads[2], ticker;
    int nthreads, ticker_started;
    int64_t next_sweep_ms;
    char (*finished)[33]; /* ids known to be over (the disk store lists them all) */
    size_t nfinished, finished_cap;
    char (*making)[33]; /* ids being submitted: stored, not yet leased (left alone) */
    size_t nmaking, making_cap;
    fy_jobs_stats st;
    atomic_int checkpoints; /* stored so far (o.test_stop_after_checkpoints) */
};

/* jobs_state.c: the info as the JSON state the store keeps (malloc'd),
 * and back (0, or FY_EFORMAT for a state that is not one). */
char *jobs_state_encode(const fy_job_info *info);
int jobs_state_decode(const char *text, fy_job_info *info, fy_error *err);
/* Appends a note line to info->notes (as far as it fits). */
void jobs_note(fy_job_info *info, const char *note);

/* jobs_run.c */
/* A new run of job id (info copied); NULL when out of memory. */
run *run_new(fy_jobs *js, const char *id, const fy_job_info *info);
/* The docjob of r over doc (taken), resuming from done[] (may be NULL);
 * NULL with err. */
int run_prepare(run *r, fy_document *doc, const unsigned char *done, fy_error *err);
/* A job thread's turn with r (phase RUN_BUSY, js->lock not held): starts
 * it, or collects its batch and submits the next, or ends it. Returns 1
 * when r is over (the caller frees it), else 0. */
int run_turn(run *r);
/* Frees r (its docjob cancelled first); js->lock not held. */
void run_free(run *r);
/* Puts r in the ready queue; js->lock held. */
void run_ready(run *r);
/* The scheduler's callbacks (user: the run). */
void run_on_progress(void *user, size_t done, size_t total);
void run_on_batch(void *user, int status);
void run_on_unit(void *user, size_t i, const char *text, size_t len);
/* Stores r's state now (js->lock not held): 0, an error, or 1 when an open
 * state was refused because the job ended elsewhere (fy_jobstore put_state). */
int run_save(run *r, int open, fy_error *err);

/* jobs.c */
/* The deadline of a job's state in the store: its ttl from now. */
int jobs_ttl(const fy_jobs *js, const fy_job_info *info);
/* Logs a line through the options' log. */
void jobs_log(fy_jobs *js, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records that id is over (not to be taken up again); js->lock held. */
void jobs_mark_finished(fy_jobs *js, const char *id);

#endif
