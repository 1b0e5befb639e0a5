/* par.c - helper threads sharing a worker's products (see par.h).
 *
 * Each helper has one state word. A worker claims a spinning helper by
 * moving it from SPIN to TAKEN (so no two workers share one), cuts the
 * items into a block for itself and one for each helper it took, writes
 * the job, the helper's block number, function and argument beside the
 * helper's state word (one cache line: one transfer) and moves it to GO.
 * The helper accepts by moving GO to RUN, claims the items of its block,
 * then what is left of the others', and moves back to SPIN, its last
 * touch of the job. The worker does the same from its own block; when no
 * item is left it takes back every helper still in GO (GO -> SPIN: one
 * that was descheduled while it spun never touches the job, and the
 * worker does not wait for it to run again) and waits for those in RUN to
 * finish their item.
 * Every block's counter is in the job, on the worker's stack, and every
 * item is claimed from one: the worker runs what no helper claimed, so a
 * helper the worker takes back (even one it finds in GO for another
 * worker's job, having finished this one) costs nothing but its help.
 * Each counter has a cache line of its own and mostly one thread claiming
 * from it: one counter for all moved its line between the cores on nearly
 * every claim (~0.2 us here, against items of a few microseconds).
 * Sleeping and waking go through one mutex and condition variable, so a
 * wake-up cannot be lost between a helper's decision to sleep and its wait.
 */
#include "nn/par.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { H_SLEEP, H_SPIN, H_TAKEN, H_GO, H_RUN, H_STOP };

/* How long a helper spins for work after its last item before it sleeps:
 * longer than the gaps between one sentence's products (attention, the
 * selection: tens of microseconds), short enough that a helper does not
 * hold a core long after its worker's batch (another process may want
 * it). A sleeping helper costs a worker nothing: it is woken, and the
 * products until it arrives run without it. */
#ifdef __SANITIZE_THREAD__
/* Under ThreadSanitizer every memory access costs ten times more or so,
 * the gaps between products too: a helper woken for one product slept
 * again before the next, and no helper took part in a test's products. */
#define SPIN_NS 10000000L
#else
#define SPIN_NS 300000L
#endif

/* Helpers also sleep while the machine has more runnable threads than
 * CPUs (other processes, other servers): a spinning helper would take a
 * core from someone else (its own worker too, since the scheduler shares
 * a core among all who wait for it), and one descheduled while it holds
 * an item stalls its worker. A helper sees this in the time it spent
 * waiting on a run queue (the kernel's schedstat for the thread, read
 * every WATCH_NS while it is awake): over DESCHED_NS since its last
 * look, and the team sleeps. Neither the time a virtual machine's vCPU
 * loses to its hypervisor nor a sleeping thread still counted on a run
 * queue (the load average's count on recent kernels) looks like this. A
 * kernel thread preempting a helper now and then is not contention
 * either: the first sleep is BACKOFF_MIN_NS, doubled on each strike that
 * comes within STRIKE_RESET_NS of the last sleep's end, up to
 * BACKOFF_MAX_NS. */
#define WATCH_NS        2000000L
#define DESCHED_NS      200000L
#define BACKOFF_MIN_NS  2000000L
#define BACKOFF_MAX_NS  256000000L
#define STRIKE_RESET_NS 100000000L

/* One thread's block of a job's items: next up to end. */
typedef struct par_block {
    _Alignas(64) atomic_int next;
    int end;
} par_block;

typedef struct par_job {
    int nblocks;
    par_block block[FY_PAR_MAX_HELPERS + 1]; /* the worker's, then its helpers' */
} par_job;

/* What a helper reads to start shares its state's cache line: the
 * worker's writes reach it in one transfer. */
typedef struct helper {
    atomic_int state;
    int block; /* its block of the job; set by the worker that took it, before GO */
    fy_par_fn fn;
    void *arg;
    par_job *job;
    fy_par *team;
    int stat_fd;         /* its /proc schedstat; -1: not watched */
    long checked;        /* when it last looked at it */
    unsigned long delay; /* its run-queue wait then (ns) */
    pthread_t thread;
} __attribute__((aligned(64))) helper;

struct fy_par {
    helper h[FY_PAR_MAX_HELPERS];
    int n, cores;
    atomic_int watch;        /* whether helpers watch their run-queue waits */
    atomic_int busy;         /* workers computing */
    atomic_long shared;      /* jobs a helper took part in */
    atomic_long backoffs;    /* times the team slept for contention */
    atomic_long quiet_until; /* CLOCK_MONOTONIC ns before which no helper wakes */
    atomic_long backoff;     /* the last sleep's length */
    atomic_long last_strike; /* when it began */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static _Thread_local fy_par *attached;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Claims and runs items of job, first from block own, then from the
 * others, until none is left; returns how many ran. */
static int run_items(par_job *job, int own, fy_par_fn fn, void *arg)
{
    int ran = 0;
    for (int b = 0; b < job->nblocks; b++) {
        par_block *blk = &job->block[(own + b) % job->nblocks];
        for (int i; (i = atomic_fetch_add_explicit(&blk->next, 1, memory_order_relaxed)) < blk->end;
             ran++)
            fn(arg, i);
    }
    return ran;
}

/* Cuts items into n blocks, sizes differing by at most one. */
static void cut_blocks(par_job *job, int items, int n)
{
    job->nblocks = n;
    for (int b = 0, lo = 0; b < n; b++) {
        int hi = lo + items / n + (b < items % n);
        atomic_init(&job->block[b].next, lo);
        job->block[b].end = hi;
        lo = hi;
    }
}

/* Sleeps until a worker wakes the helper (SLEEP -> SPIN) or the team stops. */
static void helper_sleep(helper *h)
{
    fy_par *p = h->team;
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&h->state) == H_SLEEP) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

/* The calling helper's run-queue wait so far (ns) in *delay; -1 (and
 * *delay as it was) if the kernel does not say. */
static int run_delay(const helper *h, unsigned long *delay)
{
    char buf[96];
    unsigned long on_cpu, d;
    ssize_t n = pread(h->stat_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    if (sscanf(buf, "%lu %lu", &on_cpu, &d) != 2) return -1;
    *delay = d;
    return 0;
}

/* Another thread took a helper's core: the team sleeps (see above). */
static void strike(fy_par *p, long now)
{
    long len = atomic_load_explicit(&p->backoff, memory_order_relaxed);
    long ended = atomic_load_explicit(&p->last_strike, memory_order_relaxed) + len;
    len = now - ended > STRIKE_RESET_NS ? BACKOFF_MIN_NS : len * 2;
    if (len > BACKOFF_MAX_NS) len = BACKOFF_MAX_NS;
    atomic_store_explicit(&p->backoff, len, memory_order_relaxed);
    atomic_store_explicit(&p->last_strike, now, memory_order_relaxed);
    atomic_store_explicit(&p->quiet_until, now + len, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->backoffs, 1, memory_order_relaxed);
}

/* Whether the helper waited for a core since it last looked: every
 * WATCH_NS while it is awake, and always before it sleeps (an awake spell
 * under contention is often shorter than WATCH_NS). */
static void watch_machine(helper *h, long now, int always)
{
    unsigned long delay;
    if (h->stat_fd < 0 || (!always && now - h->checked < WATCH_NS) || run_delay(h, &delay)) return;
    int waited = delay > h->delay + DESCHED_NS;
    h->checked = now;
    h->delay = delay;
    if (waited && atomic_load_explicit(&h->team->watch, memory_order_relaxed)) strike(h->team, now);
}

/* Whether a spinning helper should sleep now (every 64 spins): no worker
 * computes (none will give it work soon, and a server's network thread
 * may want the core now), every core has one, no work came for SPIN_NS, or
 * the team backs off (perhaps because this helper just found it had
 * waited for its core). */
static int helper_should_sleep(helper *h, long last_work)
{
    fy_par *p = h->team;
    long now = now_ns();
    watch_machine(h, now, 0);
    int busy = atomic_load_explicit(&p->busy, memory_order_relaxed);
    return busy == 0 || busy >= p->cores || now - last_work > SPIN_NS ||
           now < atomic_load_explicit(&p->quiet_until, memory_order_relaxed);
}

static void *helper_main(void *arg)
{
    helper *h = arg;
    fy_par *p = h->team;
    long last = now_ns();
    h->stat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (h->stat_fd >= 0 && run_delay(h, &h->delay)) { /* unreadable: not watched */
        close(h->stat_fd);
        h->stat_fd = -1;
    }
    h->checked = last;
    for (unsigned spins = 0;; spins++) {
        int st = atomic_load_explicit(&h->state, memory_order_acquire);
        if (st == H_STOP) break;
        if (st == H_GO) {
            int expect = H_GO; /* the worker may have taken it back */
            if (!atomic_compare_exchange_strong(&h->state, &expect, H_RUN)) continue;
            if (run_items(h->job, h->block, h->fn, h->arg))
                atomic_fetch_add_explicit(&p->shared, 1, memory_order_relaxed);
            atomic_store_explicit(&h->state, H_SPIN, memory_order_release);
            last = now_ns();
            watch_machine(h, last, 0);
            continue;
        }
        if (st == H_SLEEP) {
            helper_sleep(h);
            last = now_ns();
            /* Waiting for a core just after waking is not contention while
             * helping: count from here. */
            if (h->stat_fd >= 0) run_delay(h, &h->delay);
            h->checked = last;
            continue;
        }
        if (st == H_SPIN && spins % 64 == 0 && helper_should_sleep(h, last)) {
            watch_machine(h, now_ns(), 1);
            int expect = H_SPIN;
            atomic_compare_exchange_strong(&h->state, &expect, H_SLEEP);
            continue;
        }
        cpu_relax();
    }
    if (h->stat_fd >= 0) close(h->stat_fd);
    return NULL;
}

/* Moves sleeping helpers to SPIN and wakes them, while cores are free. */
static void wake(fy_par *p)
{
    int any = 0;
    for (int i = 0; i < p->n; i++) any |= atomic_load(&p->h[i].state) == H_SLEEP;
    int busy = atomic_load(&p->busy);
    if (!any || busy == 0 || busy >= p->cores ||
        now_ns() < atomic_load_explicit(&p->quiet_until, memory_order_relaxed))
        return;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        int expect = H_SLEEP;
        atomic_compare_exchange_strong(&p->h[i].state, &expect, H_SPIN);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

fy_par *fy_par_open(int helpers, int cores, fy_error *err)
{
    if (helpers < 1 || helpers > FY_PAR_MAX_HELPERS) {
        fy_err(err, FY_EINVAL, "helper threads: %d is outside [1, %d]", helpers,
               FY_PAR_MAX_HELPERS);
        return NULL;
    }
    fy_par *p = calloc(1, sizeof *p);
    if (!p) {
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    p->cores = cores > 1 ? cores : 1;
    atomic_init(&p->watch, 1);
    atomic_init(&p->backoff, 0);
    atomic_init(&p->last_strike, 0);
    atomic_init(&p->quiet_until, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (; p->n < helpers; p->n++) {
        helper *h = &p->h[p->n];
        atomic_init(&h->state, H_SLEEP);
        h->team = p;
        if (pthread_create(&h->thread, NULL, helper_main, h)) {
            fy_err(err, FY_ENOMEM, "cannot start a helper thread");
            fy_par_free(p);
            return NULL;
        }
    }
    return p;
}

void fy_par_free(fy_par *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n; i++) atomic_store(&p->h[i].state, H_STOP);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) pthread_join(p->h[i].thread, NULL);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void fy_par_busy(fy_par *p, int delta)
{
    if (!p) return;
    atomic_fetch_add(&p->busy, delta);
    if (delta > 0) wake(p); /* a worker started: idle cores may help it */
}

void fy_par_attach(fy_par *p)
{
    attached = p;
}

fy_par *fy_par_attached(void)
{
    return attached;
}

int fy_par_threads(const fy_par *p)
{
    return p ? p->n + 1 : 1;
}

int fy_par_awake(const fy_par *p)
{
    int n = 0;
    for (int i = 0; p && i < p->n; i++) n += atomic_load(&((fy_par *)p)->h[i].state) != H_SLEEP;
    return n;
}

long fy_par_shared(const fy_par *p)
{
    return p ? atomic_load(&((fy_par *)p)->shared) : 0;
}

long fy_par_backoffs(const fy_par *p)
{
    return p ? atomic_load(&((fy_par *)p)->backoffs) : 0;
}

void fy_par_watch(fy_par *p, int on)
{
    if (p) atomic_store(&p->watch, on != 0);
}

/* Takes the spinning helpers, up to want of them, cuts the job's items
 * into a block for the worker (0) and one for each (1 ..), and lets them
 * go; returns how many (their indices in taken). */
static int take_helpers(fy_par *p, par_job *job, int items, fy_par_fn fn, void *arg, int want,
                        int *taken)
{
    int n = 0;
    for (int i = 0; i < p->n && n < want; i++) {
        int expect = H_SPIN;
        if (atomic_compare_exchange_strong(&p->h[i].state, &expect, H_TAKEN)) taken[n++] = i;
    }
    cut_blocks(job, items, n + 1);
    for (int t = 0; t < n; t++) {
        helper *h = &p->h[taken[t]];
        h->block = t + 1;
        h->fn = fn;
        h->arg = arg;
        h->job = job;
        atomic_store_explicit(&h->state, H_GO, memory_order_release);
    }
    return n;
}

void fy_par_for(fy_par *p, int items, fy_par_fn fn, void *arg)
{
    par_job job;
    int taken[FY_PAR_MAX_HELPERS], nt = 0;
    if (p && items > 1) {
        nt = take_helpers(p, &job, items, fn, arg, items - 1, taken);
        if (!nt) wake(p);
    } else {
        cut_blocks(&job, items, 1);
    }
    run_items(&job, 0, fn, arg);
    /* Every item is claimed. A helper still in GO has not looked: take it
     * back. One in RUN is finishing its last item: wait for it. */
    for (int t = 0; t < nt; t++) {
        helper *h = &p->h[taken[t]];
        int expect = H_GO;
        if (atomic_compare_exchange_strong(&h->state, &expect, H_SPIN)) continue;
        long t0 = 0;
        for (unsigned spins = 1; atomic_load_explicit(&h->state, memory_order_acquire) == H_RUN;
             spins++) {
            if (spins % 256) {
                cpu_relax();
                continue;
            }
            long now = now_ns();
            if (!t0) t0 = now;
            /* After DESCHED_NS the helper may have lost its core to this
             * very thread: let it run. Not sooner: a yield gives the rest
             * of this thread's time slice to anyone waiting, and most
             * waits are microseconds. */
            if (now - t0 > DESCHED_NS) sched_yield();
        }
    }
}
