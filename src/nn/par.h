/* par.h - helper threads that share one worker's matrix products while
 * cores are idle.
 *
 * One sentence at a time, a decoder step is a handful of products at one
 * row, each streaming its weights from L3: one core waits on memory while
 * the others sit idle. A team is a few helper threads; a worker thread that
 * attaches it (fy_par_attach) splits its linear layers' output columns into
 * items, a block of them for it and one for each idle helper (fy_par_for). An
 * output column does not depend on which thread computes it, so results
 * are the same bits with or without helpers.
 *
 * Helpers never compete with workers for cores: they spin only while fewer
 * workers are computing (fy_par_busy) than the team's cores, no other
 * thread takes their cores (fy_par_watch), and a worker gave them work in
 * the last moments; they sleep otherwise, and a worker that finds no
 * helper waiting does the whole product itself. So under full load a team
 * costs nothing, and one request on an idle machine gets every core.
 */
#ifndef FY_NN_PAR_H
#define FY_NN_PAR_H

#include "util/error.h"

typedef struct fy_par fy_par;

/* The most helpers a team has: a decoder step's products are a few
 * microseconds each, too short to share among more. */
#define FY_PAR_MAX_HELPERS 3

/* Starts `helpers` threads (1 .. FY_PAR_MAX_HELPERS) for workers that may
 * use `cores` cores. Returns the team, or NULL with err set. */
fy_par *fy_par_open(int helpers, int cores, fy_error *err);

/* Stops and joins the helpers; NULL is harmless. No worker may be inside
 * fy_par_for. */
void fy_par_free(fy_par *p);

/* A worker starts (+1) or ends (-1) a computation on the CPU. Helpers join
 * only while some worker computes, and sleep while none does or as many
 * as the team has cores. */
void fy_par_busy(fy_par *p, int delta);

/* Makes p the calling thread's team (NULL: none); fy_par_attached() gives
 * it back. The linear layers a thread runs use its team. */
void fy_par_attach(fy_par *p);
fy_par *fy_par_attached(void);

/* Runs fn(arg, i) once for every i in [0, items), on the calling thread and
 * on the helpers of p that are idle now, and returns when all have run.
 * Items must write disjoint memory. p NULL, or no helper idle: all on the
 * calling thread, in order. */
typedef void (*fy_par_fn)(void *arg, int item);
void fy_par_for(fy_par *p, int items, fy_par_fn fn, void *arg);

/* The threads a product of p's can share: its helpers and the worker. */
int fy_par_threads(const fy_par *p);

/* Helpers of p not asleep now (tests). */
int fy_par_awake(const fy_par *p);

/* Products a helper of p took part in so far (tests, metrics). */
long fy_par_shared(const fy_par *p);

/* Whether p's helpers watch for contention (on by default): a helper that
 * waited for a core sends the team to sleep a while, since the machine has
 * more runnable threads than CPUs. Tests of the sharing itself turn it
 * off, since other tests may load the machine; fy_par_backoffs counts
 * those sleeps. */
void fy_par_watch(fy_par *p, int on);
long fy_par_backoffs(const fy_par *p);

#endif
