/* test_par.c - the helper team (src/nn/par.c): every item runs exactly
 * once, also with two workers at once; idle helpers take part; helpers
 * stay out while no worker or every core has one, and back off while other
 * threads want their cores; a linear layer gives the same bits with
 * helpers as without. Run under ThreadSanitizer too (label threads).
 * Tests of the sharing itself turn the contention watch off (fy_par_watch):
 * other tests may load the machine. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "xorshift.h"
#include "nn/gemm.h"
#include "nn/ops.h"
#include "nn/par.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { MAX_ITEMS = 64 };

typedef struct counts {
    int runs[MAX_ITEMS];
    int spin; /* busy work per item (loop iterations) */
} counts;

static void count_item(void *arg, int item)
{
    counts *c = arg;
    volatile unsigned x = 0;
    for (int i = 0; i < c->spin; i++) x += (unsigned)i;
    c->runs[item]++;
}

/* n products of 1 .. MAX_ITEMS items; 0 when each item of each ran once. */
static int run_products(fy_par *p, int n, int spin)
{
    int bad = 0;
    for (int r = 0; r < n; r++) {
        counts c = {.spin = spin};
        int items = 1 + r % MAX_ITEMS;
        fy_par_for(p, items, count_item, &c);
        for (int i = 0; i < MAX_ITEMS; i++) bad += c.runs[i] != (i < items);
    }
    return bad;
}

typedef struct worker_args {
    fy_par *p;
    int products, spin;
} worker_args;

static void *worker(void *arg)
{
    const worker_args *w = arg;
    fy_par_busy(w->p, +1);
    long bad = run_products(w->p, w->products, w->spin);
    fy_par_busy(w->p, -1);
    return (void *)bad;
}

/* n workers at once on p's team, each running run_products; checks each. */
static void run_workers(fy_par *p, int n, int products, int spin)
{
    worker_args w = {p, products, spin};
    pthread_t th[4];
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, worker, &w);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(th[i], &r);
        CHECKF(r == NULL, "worker %d: %ld products ran an item other than once", i, (long)r);
    }
}

static void test_items(void)
{
    fy_error err = {0};
    fy_par *p = fy_par_open(2, 4, &err);
    CHECKF(p, "open: %s", err.msg);
    if (!p) return;
    fy_par_watch(p, 0);
    CHECK(fy_par_threads(p) == 3);
    CHECK(run_products(NULL, 200, 0) == 0); /* no team: all on the caller */
    fy_par_busy(p, +1);
    CHECK(run_products(p, 3000, 0) == 0);
    /* Helpers wake for a worker and take part within moments; slow items
     * leave them time to claim some. Bounded: 10 s. */
    double t0 = now_s();
    int bad = 0;
    while (fy_par_shared(p) == 0 && now_s() - t0 < 10) bad += run_products(p, 64, 20000);
    CHECK(bad == 0);
    CHECKF(fy_par_shared(p) > 0, "no helper took part in %.1f s", now_s() - t0);
    fy_par_busy(p, -1);
    /* Two workers at once, each claiming helpers. */
    run_workers(p, 2, 2000, 200);
    fy_par_free(p);
    fy_par_free(NULL);
}

/* Three workers on one team of three helpers, short items: a helper done
 * with one worker's job is soon taken by another while the first still
 * looks at it. (While a helper's block was out of its worker's reach, a
 * worker taking back its helper from GO could take another worker's GO,
 * whose block then ran nowhere: this caught it in 2 of 3 runs.) */
static void test_shared_team(void)
{
    fy_error err = {0};
    fy_par *p = fy_par_open(3, 16, &err);
    CHECKF(p, "open: %s", err.msg);
    if (!p) return;
    fy_par_watch(p, 0);
    run_workers(p, 3, 30000, 0);
    CHECKF(fy_par_shared(p) > 0, "no helper took part");
    fy_par_free(p);
}

static void test_full_cores(void)
{
    fy_error err = {0};
    fy_par *p = fy_par_open(1, 2, &err);
    CHECKF(p, "open: %s", err.msg);
    if (!p) return;
    /* No worker marked busy: no helper wakes (a caller outside a worker's
     * computation, or the moments between two). */
    CHECK(run_products(p, 200, 2000) == 0);
    CHECKF(fy_par_shared(p) == 0 && fy_par_awake(p) == 0,
           "a helper took part %ld times with no worker busy", fy_par_shared(p));
    fy_par_busy(p, +2); /* as many workers as cores */
    /* The helper notices and sleeps; until then it may still take part. */
    double t0 = now_s();
    while (fy_par_awake(p) > 0 && now_s() - t0 < 10) run_products(p, 8, 0);
    CHECKF(fy_par_awake(p) == 0, "the helper still spins with every core busy");
    long before = fy_par_shared(p);
    CHECK(run_products(p, 500, 2000) == 0);
    CHECKF(fy_par_shared(p) == before, "the helper took part %ld times with every core busy",
           fy_par_shared(p) - before);
    fy_par_busy(p, -2);
    fy_par_free(p);
}

static atomic_int hogs_stop;

static void *hog(void *arg)
{
    (void)arg;
    volatile unsigned x = 0;
    while (!atomic_load_explicit(&hogs_stop, memory_order_relaxed)) x++;
    return NULL;
}

/* The first two CPUs this thread may run on, in a and b; -1 if fewer. */
static int two_cpus(const cpu_set_t *all, int *a, int *b)
{
    *a = *b = -1;
    for (int c = 0; c < CPU_SETSIZE && *b < 0; c++)
        if (CPU_ISSET(c, all)) *(*a < 0 ? a : b) = c;
    return *b < 0 ? -1 : 0;
}

static int pin_self(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

/* Spinning threads take a helper's core: it waits for it while it helps,
 * and the team backs off (bounded: 10 s). The helper and two spinning
 * threads share one CPU, the worker has another to itself: left to the
 * scheduler, a helper spins only while its worker runs and sleeps soon
 * after, its awake spells shorter than a time slice, so whether it is ever
 * preempted would be chance. A helper inherits its creator's CPUs. */
static void test_contention(void)
{
    cpu_set_t all;
    int a, b;
    if (access("/proc/thread-self/schedstat", R_OK) ||
        pthread_getaffinity_np(pthread_self(), sizeof all, &all) || two_cpus(&all, &a, &b)) {
        printf("test_contention: skipped (no schedstat, or fewer than 2 CPUs)\n");
        return;
    }
    enum { HOGS = 2 };
    fy_error err = {0};
    CHECK(pin_self(a) == 0);
    fy_par *p = fy_par_open(1, 2, &err);
    CHECKF(p, "open: %s", err.msg);
    pthread_t th[HOGS];
    atomic_store(&hogs_stop, 0);
    int started = 0;
    while (p && started < HOGS && !pthread_create(&th[started], NULL, hog, NULL)) started++;
    CHECKF(!p || started == HOGS, "started %d of %d spinning threads", started, HOGS);
    CHECK(pin_self(b) == 0);
    if (p && started == HOGS) {
        fy_par_busy(p, +1);
        double t0 = now_s();
        int bad = 0;
        while (fy_par_backoffs(p) == 0 && now_s() - t0 < 10) bad += run_products(p, 64, 2000);
        CHECK(bad == 0);
        CHECKF(fy_par_backoffs(p) > 0,
               "no back-off in %.1f s with %d spinning threads on the helper's CPU", now_s() - t0,
               HOGS);
        fy_par_busy(p, -1);
    }
    atomic_store(&hogs_stop, 1);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    fy_par_free(p);
    CHECK(pthread_setaffinity_np(pthread_self(), sizeof all, &all) == 0);
}

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint32_t next_u32(void)
{
    return xorshift_next(&rng);
}

/* One product for a helped run: l alone (cols, n as fy_linear_forward
 * takes them; relu: all columns through fy_linear_forward_relu), or, with
 * count > 0, the layers of set as one job (all columns; y then each
 * layer's outputs after the one before's). */
typedef struct forward_args {
    const fy_linear *l;
    const float *x;
    int m, n;
    const int32_t *cols;
    void *scratch;
    float *y;
    int relu;
    const fy_linear *const *set;
    int count;
} forward_args;

static void run_forward(const forward_args *a)
{
    if (a->relu) {
        fy_linear_forward_relu(a->l, a->x, a->m, a->scratch, a->y);
    } else if (a->count) {
        float *ys[FY_LINEAR_SET_MAX], *y = a->y;
        for (int i = 0; i < a->count; i++) {
            ys[i] = y;
            y += (size_t)a->m * fy_linear_out(a->set[i]);
        }
        fy_linear_forward_set(a->set, a->count, a->x, a->m, a->scratch, ys);
    } else {
        fy_linear_forward(a->l, a->x, a->m, a->cols, a->n, a->scratch, a->y);
    }
}

/* Runs the product with p attached until a helper took part in a run
 * (bounded: 200 runs) or its bytes of output differ from want; returns
 * whether they stayed equal and counts in *helped whether a helper took
 * part. */
static int same_with_helpers(fy_par *p, const forward_args *a, const float *want, size_t bytes,
                             int *helped)
{
    long before = fy_par_shared(p);
    int same = 1;
    for (int run = 0; run < 200 && same && fy_par_shared(p) == before; run++) {
        memset(a->y, 0, bytes);
        fy_par_attach(p);
        run_forward(a);
        fy_par_attach(NULL);
        same = !memcmp(want, a->y, bytes);
    }
    *helped += fy_par_shared(p) > before;
    return same;
}

/* A layer's output with and without helpers: the same bits, for every row
 * count (one-row steps, row kernels, panels) and for column subsets, each
 * until a helper took part in a helped run (bounded: 200 runs). */
static void test_linear(void)
{
    enum { N = 1024, K = 512, M = 40 };
    fy_error err = {0};
    int8_t *w = malloc((size_t)N * K);
    float *bias = malloc(N * sizeof *bias), *x = malloc((size_t)M * K * sizeof *x);
    float *y0 = malloc((size_t)M * N * sizeof *y0), *y1 = malloc((size_t)M * N * sizeof *y1);
    int32_t cols[300];
    /* |w| <= 40, like trained weights: no pair can saturate, so the layer
     * takes the VNNI product, and the one-row copy where there is one. */
    for (size_t i = 0; i < (size_t)N * K; i++) w[i] = (int8_t)((int)(next_u32() % 81) - 40);
    for (int j = 0; j < N; j++) bias[j] = (float)(next_u32() % 1000) / 500.0f - 1.0f;
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
    for (int c = 0; c < 300; c++) cols[c] = c * 3 + c % 3;
    fy_linear *l = fy_linear_new_i8(w, N, K, 1.0f, 64.0f, bias, &err);
    fy_par *p = fy_par_open(2, 4, &err);
    void *scratch = aligned_alloc(64, fy_linear_scratch_bytes(l, M) + 64);
    CHECKF(l && p && scratch, "setup: %s", err.msg);
    float *first = malloc(N * sizeof *first); /* m = 1, all columns, in the [n][k] layout */
    /* Both layouts at one row: with the one-row copy (where the path has
     * one), helpers take whole panels of it, and the bits are the same. */
    for (int one_row = 0; one_row < 2 && l && p && scratch && first; one_row++) {
        int helped = 0;
        CHECK(!one_row || fy_linear_prepare_one_row(l, &err) == 0);
        fy_par_watch(p, 0);
        fy_par_busy(p, +1);
        static const int ms[] = {1, 2, 3, 5, 8, 17, 40};
        for (size_t t = 0; t < sizeof ms / sizeof *ms; t++)
            for (int sub = 0; sub < 2; sub++) {
                int m = ms[t], n = sub ? 300 : N;
                const int32_t *cs = sub ? cols : NULL;
                fy_par_attach(NULL);
                fy_linear_forward(l, x, m, cs, n, scratch, y0);
                if (m == 1 && !sub && !one_row) memcpy(first, y0, N * sizeof *first);
                if (m == 1 && !sub && one_row)
                    CHECKF(!memcmp(first, y0, N * sizeof *first),
                           "one row: the one-row layout (%zu bytes) gives other bits",
                           fy_linear_one_row_bytes(l));
                forward_args a = {l, x, m, n, cs, scratch, y1, 0, NULL, 0};
                CHECKF(same_with_helpers(p, &a, y0, (size_t)m * n * sizeof *y0, &helped),
                       "m = %d, %s%s: outputs differ with helpers", m, sub ? "subset" : "all",
                       one_row ? " (one-row copy)" : "");
                if (sub) continue;
                /* The negatives cleared by each item: fy_relu's bits. */
                fy_relu(y0, (size_t)m * N);
                a.relu = 1;
                fy_par_attach(NULL);
                run_forward(&a);
                int same = !memcmp(y0, y1, (size_t)m * N * sizeof *y0) &&
                           same_with_helpers(p, &a, y0, (size_t)m * N * sizeof *y0, &helped);
                CHECKF(same, "m = %d%s: relu product differs from the product, then relu", m,
                       one_row ? " (one-row copy)" : "");
            }
        fy_par_busy(p, -1);
        CHECKF(helped > 0, "no helper took part in any layer");
    }
    fy_par_free(p);
    fy_linear_free(l);
    free(first);
    free(scratch);
    free(w);
    free(bias);
    free(x);
    free(y0);
    free(y1);
}

/* Layers of one input as one job (fy_linear_forward_set: a decoder
 * layer's SSRU, an attention's query, key and value): each output the
 * bits of its layer alone, without helpers and with them (until a helper
 * took part; bounded: 200 runs), at one row on both layouts and at
 * several rows. The second layer has other weights (uniform: pairs that
 * can saturate), width and activation scale; the third, other weights
 * and weight scale but the first's activation scale, so it reads the
 * first's quantised input. N1 x K, N2 x K: at one row on the one-row
 * layout, layers this small stay whole (an item each), larger ones are
 * cut in panels. */
static void test_linear_set(int count, int N1, int N2, int K)
{
    enum { M = 17 };
    fy_error err = {0};
    const int n[3] = {N1, N2, N1};
    int total = 0;
    for (int i = 0; i < count; i++) total += n[i];
    int8_t *w = malloc((size_t)(N1 + N2 + N1) * K);
    float *x = malloc((size_t)M * K * sizeof *x), *want = malloc((size_t)M * total * 4);
    float *got = malloc((size_t)M * total * 4);
    for (size_t i = 0; i < (size_t)N1 * K; i++) w[i] = (int8_t)((int)(next_u32() % 81) - 40);
    for (size_t i = (size_t)N1 * K; i < (size_t)(N1 + N2) * K; i++)
        w[i] = (int8_t)((int)(next_u32() % 255) - 127);
    for (size_t i = (size_t)(N1 + N2) * K; i < (size_t)(N1 + N2 + N1) * K; i++)
        w[i] = (int8_t)((int)(next_u32() % 61) - 30);
    for (size_t i = 0; i < (size_t)M * K; i++) x[i] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
    fy_linear *l[3] = {
        fy_linear_new_i8(w, N1, K, 1.0f, 64.0f, NULL, &err),
        fy_linear_new_i8(w + (size_t)N1 * K, N2, K, 0.5f, 20.0f, NULL, &err),
        fy_linear_new_i8(w + (size_t)(N1 + N2) * K, N1, K, 2.0f, 64.0f, NULL, &err),
    };
    const fy_linear *set[3] = {l[0], l[1], l[2]};
    fy_par *p = fy_par_open(1, 2, &err);
    int ok = l[0] && l[1] && l[2] && p;
    void *scratch = aligned_alloc(64, ok ? fy_linear_set_scratch_bytes(set, count, M) : 64);
    ok = ok && scratch && want && got;
    CHECKF(ok, "setup: %s", err.msg);
    int helped = 0;
    fy_par_watch(p, 0);
    fy_par_busy(p, +1);
    for (int one_row = 0; one_row < 2 && ok; one_row++) {
        for (int i = 0; i < count && one_row; i++)
            CHECK(fy_linear_prepare_one_row(l[i], &err) == 0);
        static const int ms[] = {1, 3, 17};
        for (size_t t = 0; t < sizeof ms / sizeof *ms; t++) {
            int m = ms[t];
            size_t bytes = (size_t)m * total * sizeof *got;
            fy_par_attach(NULL);
            for (int i = 0, c = 0; i < count; c += n[i++])
                fy_linear_forward(l[i], x, m, NULL, 0, scratch, want + (size_t)m * c);
            forward_args a = {NULL, x, m, 0, NULL, scratch, got, 0, set, count};
            run_forward(&a);
            int same = !memcmp(want, got, bytes) && same_with_helpers(p, &a, want, bytes, &helped);
            CHECKF(same,
                   "set of %d (%dx%d, %dx%d), m = %d%s: outputs differ from each layer's alone",
                   count, N1, K, N2, K, m, one_row ? " (one-row copies)" : "");
        }
    }
    fy_par_busy(p, -1);
    CHECKF(helped > 0, "no helper took part in a set of %d (%dx%d, %dx%d)", count, N1, K, N2, K);
    fy_par_free(p);
    for (int i = 0; i < 3; i++) fy_linear_free(l[i]);
    free(scratch);
    free(w);
    free(x);
    free(want);
    free(got);
}

int main(void)
{
    fy_error err = {0};
    CHECK(!fy_par_open(0, 2, &err) && err.code == FY_EINVAL);
    CHECK(!fy_par_open(FY_PAR_MAX_HELPERS + 1, 2, &err) && err.code == FY_EINVAL);
    test_items();
    test_shared_team();
    test_full_cores();
    test_contention();
    test_linear();
    test_linear_set(2, 512, 768, 512);
    test_linear_set(2, 384, 384, 384);
    test_linear_set(3, 512, 768, 512);
    test_linear_set(3, 384, 384, 384);
    printf("test_par: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
