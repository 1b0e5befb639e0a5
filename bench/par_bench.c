/* par_bench.c - what sharing one sentence's products with a helper thread
 * costs on this machine (not a test).
 *
 * One sentence at a time, a decoder step is about ten products of one row,
 * each a few microseconds of weights streamed from L3, each handed to a
 * helper (fy_par_for) and waited for. What the helper gives back is bounded
 * by the machine: how long a cache line takes to go from one core to the
 * other and back, what a hand-off and its join cost, and how fast two cores
 * together read what one reads alone. This prints those three:
 *
 *     build/tests/nn/par_bench [--seconds S]
 *
 * 1. The round trip of a cache line between two threads (a ping-pong on
 *    two atomics): the floor under any hand-off and any barrier.
 * 2. fy_par_for of two items of 2 us each with one helper: one item's
 *    time if a hand-off and a join cost nothing, two on one thread.
 * 3. Pieces of 128 KiB to 4 MiB (a 512x512 int8 layer's half is 128 KiB;
 *    2048x512 is 1 MiB; a decoder step of zh-en is ~6 MiB), each from a
 *    24 MiB pool read in turn so that it comes from L3, read by one thread
 *    and by the worker and the helper, a half each: time per piece, GB/s,
 *    and the gain, which two cores would make 2x.
 * --seconds: time per case (default 0.5; best of three thirds, wall time).
 * Run it on an otherwise idle machine: both threads spin.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/par.h"

#define POOL_BYTES (24u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- 1. a cache line's round trip ---- */

typedef struct pingpong {
    _Alignas(64) atomic_long ping;
    _Alignas(64) atomic_long pong;
    long rounds;
} pingpong;

static void *pong_main(void *arg)
{
    pingpong *pp = arg;
    for (long i = 1; i <= pp->rounds; i++) {
        while (atomic_load_explicit(&pp->ping, memory_order_acquire) != i) {
        }
        atomic_store_explicit(&pp->pong, i, memory_order_release);
    }
    return NULL;
}

/* Nanoseconds a round trip, over `rounds` of them; -1 if no thread. */
static double round_trip_ns(long rounds)
{
    static pingpong pp;
    atomic_init(&pp.ping, 0);
    atomic_init(&pp.pong, 0);
    pp.rounds = rounds;
    pthread_t t;
    if (pthread_create(&t, NULL, pong_main, &pp)) return -1;
    double t0 = now_s();
    for (long i = 1; i <= rounds; i++) {
        atomic_store_explicit(&pp.ping, i, memory_order_release);
        while (atomic_load_explicit(&pp.pong, memory_order_acquire) != i) {
        }
    }
    double dt = now_s() - t0;
    pthread_join(t, NULL);
    return dt / rounds * 1e9;
}

/* ---- 2 and 3: jobs for fy_par_for ---- */

typedef unsigned long long v8u64 __attribute__((vector_size(64)));

/* Sum of n vectors, in the widest loads this CPU has. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static unsigned long long
sum_vectors(const v8u64 *p, size_t n)
{
    v8u64 a = {0}, b = {0};
    for (size_t i = 0; i + 1 < n; i += 2) {
        a += p[i];
        b += p[i + 1];
    }
    a += b;
    unsigned long long s = 0;
    for (int l = 0; l < 8; l++) s += a[l];
    return s;
}

/* Every job here is two items: the worker's and the helper's. */
#define ITEMS 2

typedef struct read_job {
    const v8u64 *piece;
    size_t vectors;                                /* in the piece */
    _Alignas(64) unsigned long long sum[ITEMS][8]; /* an item's own line */
} read_job;

static void read_item(void *arg, int item)
{
    read_job *j = arg;
    size_t per = j->vectors / ITEMS;
    j->sum[item][0] += sum_vectors(j->piece + (size_t)item * per, per);
}

/* An item of fixed length: spins for ITEM_NS. */
#define ITEM_NS 2000

static void timed_item(void *arg, int item)
{
    (void)arg;
    (void)item;
    double end = now_s() + ITEM_NS * 1e-9;
    while (now_s() < end) {
    }
}

/* Seconds per call of fn over ITEMS items (p NULL: one thread), best of
 * three thirds of `secs`; for read_job, each call takes the next piece.
 * *all: how many calls in all. */
static double per_call(fy_par *p, fy_par_fn fn, read_job *job, const v8u64 *pool, size_t pieces,
                       double secs, long *all)
{
    double best = 1e30;
    *all = 0;
    size_t next = 0;
    for (int third = 0; third < 3; third++) {
        long calls = 0;
        double t0 = now_s(), t;
        do {
            for (int i = 0; i < 64; i++, calls++) {
                if (job) {
                    job->piece = pool + next * job->vectors;
                    next = (next + 1) % pieces;
                }
                fy_par_for(p, ITEMS, fn, job);
            }
            t = now_s() - t0;
        } while (t < secs / 3);
        if (t / calls < best) best = t / calls;
        *all += calls;
    }
    return best;
}

static void hand_off(fy_par *p, double secs)
{
    long shared = fy_par_shared(p), calls;
    double s = per_call(p, timed_item, NULL, NULL, 0, secs, &calls);
    printf("fy_par_for, 2 items of %.1f us, 1 helper: %.2f us a call, %.2f us over one item "
           "(the helper ran one in %ld of %ld calls)\n",
           ITEM_NS * 1e-3, s * 1e6, s * 1e6 - ITEM_NS * 1e-3, fy_par_shared(p) - shared, calls);
}

static void reads(fy_par *p, const v8u64 *pool, double secs)
{
    static const size_t kib[] = {128, 256, 512, 1024, 4096};
    printf("%-10s %16s %22s %8s\n", "piece", "1 thread", "worker + helper", "gain");
    for (size_t i = 0; i < sizeof kib / sizeof *kib; i++) {
        size_t bytes = kib[i] << 10;
        read_job job = {.vectors = bytes / sizeof(v8u64)};
        size_t pieces = POOL_BYTES / bytes;
        long calls;
        double one = per_call(NULL, read_item, &job, pool, pieces, secs, &calls);
        double two = per_call(p, read_item, &job, pool, pieces, secs, &calls);
        printf("%6zu KiB %7.2f us %4.0f GB/s %7.2f us %4.0f GB/s %7.2fx\n", kib[i], one * 1e6,
               bytes / one / 1e9, two * 1e6, bytes / two / 1e9, one / two);
    }
}

int main(int argc, char **argv)
{
    double secs = 0.5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc && atof(argv[i + 1]) > 0) {
            secs = atof(argv[++i]);
        } else {
            fprintf(stderr, "usage: par_bench [--seconds S]\n");
            return 2;
        }
    }
    double rt = round_trip_ns(200000);
    if (rt < 0) {
        fprintf(stderr, "par_bench: cannot start a thread\n");
        return 1;
    }
    printf("cache line round trip between two threads: %.0f ns\n", rt);

    fy_error err = {0};
    fy_par *p = fy_par_open(1, 2, &err);
    v8u64 *pool = aligned_alloc(64, POOL_BYTES);
    if (!p || !pool) {
        fprintf(stderr, "par_bench: %s\n", p ? "out of memory" : err.msg);
        fy_par_free(p);
        free(pool);
        return 1;
    }
    memset(pool, 1, POOL_BYTES);
    fy_par_watch(p, 0); /* measure the helper, not the machine's load */
    fy_par_busy(p, 1);
    hand_off(p, secs);
    reads(p, pool, secs);
    fy_par_busy(p, -1);
    fy_par_free(p);
    free(pool);
    return 0;
}
