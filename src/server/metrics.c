/* metrics.c - request counters and the Prometheus text of /metrics: HTTP
 * requests by endpoint and status, latency histogram, the scheduler's
 * queue and batches, the cache, and the process's resident memory. */
#include "nn/backend.h"
#include "server/internal.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SERIES = 128, NLAT = 12 };
static const double lat_bounds[NLAT] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,   0.25,   0.5,   1,    2.5,   10};

struct metrics {
    pthread_mutex_t lock;
    struct series {
        const char *endpoint; /* static strings from the route table */
        int status;
        uint64_t count;
    } s[MAX_SERIES];
    int n;
    struct dseries {
        char direction[3 * FY_LANG_MAX]; /* "zh-en", "de-en-zh", "mixed" */
        int status;
        uint64_t count;
    } d[MAX_SERIES];
    int nd;
    uint64_t lat[NLAT + 1], lat_count;
    double lat_sum;
    uint64_t chars;
};

struct metrics *metrics_new(void)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (m) pthread_mutex_init(&m->lock, NULL);
    return m;
}

void metrics_free(struct metrics *m)
{
    if (!m) return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* Counts a translation request of direction (copied) with status. Lock held. */
static void count_direction(struct metrics *m, const char *direction, int status)
{
    int i = 0;
    while (i < m->nd && (m->d[i].status != status || strcmp(m->d[i].direction, direction))) i++;
    if (i == m->nd && m->nd < MAX_SERIES) {
        m->d[i].status = status;
        m->d[i].count = 0;
        snprintf(m->d[i].direction, sizeof m->d[i].direction, "%s", direction);
        m->nd++;
    }
    if (i < m->nd) m->d[i].count++;
}

void metrics_request(struct metrics *m, const char *endpoint, const char *direction, int status,
                     double seconds, size_t chars)
{
    pthread_mutex_lock(&m->lock);
    int i = 0;
    while (i < m->n && (m->s[i].status != status || strcmp(m->s[i].endpoint, endpoint))) i++;
    if (i == m->n && m->n < MAX_SERIES) m->s[m->n++] = (struct series){endpoint, status, 0};
    if (i < m->n) m->s[i].count++;
    if (direction && *direction) count_direction(m, direction, status);
    int b = 0;
    while (b < NLAT && seconds > lat_bounds[b]) b++;
    m->lat[b]++;
    m->lat_count++;
    m->lat_sum += seconds;
    if (status == 200) m->chars += chars;
    pthread_mutex_unlock(&m->lock);
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
    return rss * sysconf(_SC_PAGESIZE);
}

static void render_requests(fy_buf *b, struct metrics *m)
{
    pthread_mutex_lock(&m->lock);
    fy_buf_printf(b, "# HELP fanyi_requests_total HTTP requests by endpoint and status.\n"
                     "# TYPE fanyi_requests_total counter\n");
    for (int i = 0; i < m->n; i++)
        fy_buf_printf(b, "fanyi_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n",
                      m->s[i].endpoint, m->s[i].status, (unsigned long long)m->s[i].count);
    fy_buf_printf(
        b, "# HELP fanyi_direction_requests_total Translation requests by direction and status.\n"
           "# TYPE fanyi_direction_requests_total counter\n");
    for (int i = 0; i < m->nd; i++)
        fy_buf_printf(b, "fanyi_direction_requests_total{direction=\"%s\",status=\"%d\"} %llu\n",
                      m->d[i].direction, m->d[i].status, (unsigned long long)m->d[i].count);
    fy_buf_printf(b,
                  "# HELP fanyi_request_duration_seconds Time from request headers to response.\n"
                  "# TYPE fanyi_request_duration_seconds histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < NLAT; i++) {
        cum += m->lat[i];
        fy_buf_printf(b, "fanyi_request_duration_seconds_bucket{le=\"%g\"} %llu\n", lat_bounds[i],
                      (unsigned long long)cum);
    }
    fy_buf_printf(b, "fanyi_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                  (unsigned long long)m->lat_count);
    fy_buf_printf(b, "fanyi_request_duration_seconds_sum %.6f\n", m->lat_sum);
    fy_buf_printf(b, "fanyi_request_duration_seconds_count %llu\n",
                  (unsigned long long)m->lat_count);
    fy_buf_printf(
        b,
        "# HELP fanyi_chars_translated_total Characters of text in successful requests.\n"
        "# TYPE fanyi_chars_translated_total counter\nfanyi_chars_translated_total %llu\n",
        (unsigned long long)m->chars);
    pthread_mutex_unlock(&m->lock);
}

static void metric(fy_buf *b, const char *name, const char *type, const char *help,
                   unsigned long long v)
{
    fy_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type, name, v);
}

static void render_scheduler(fy_buf *b, fy_server *s)
{
    fy_scheduler_stats st;
    fy_scheduler_get_stats(s->sched, &st);
    metric(b, "fanyi_queue_depth", "gauge", "Sentences waiting for a worker.", st.queue_depth);
    metric(b, "fanyi_queue_capacity", "gauge", "Most sentences that may wait (--queue).",
           st.queue_max);
    metric(b, "fanyi_sentences_in_flight", "gauge", "Sentences being translated now.",
           st.in_flight);
    metric(b, "fanyi_worker_threads", "gauge", "Translation worker threads.",
           (unsigned long long)st.threads);
    fy_nn_helper_stats hs;
    fy_nn_cpu_helper_stats(&hs);
    metric(b, "fanyi_helper_threads", "gauge",
           "Threads that join a worker's products on idle cores (--helper-threads).",
           (unsigned long long)hs.helpers);
    metric(b, "fanyi_helper_products_total", "counter", "Products a helper thread took part in.",
           (unsigned long long)hs.shared);
    metric(b, "fanyi_helper_backoffs_total", "counter",
           "Times the helpers slept because other threads wanted their cores.",
           (unsigned long long)hs.backoffs);
    metric(b, "fanyi_jobs_total", "counter", "Requests admitted to the scheduler.", st.jobs);
    metric(b, "fanyi_jobs_rejected_total", "counter",
           "Requests refused because the queue was full.", st.rejected);
    metric(b, "fanyi_jobs_timeout_total", "counter", "Requests that passed their deadline.",
           st.timeouts);
    metric(b, "fanyi_jobs_canceled_total", "counter", "Requests cancelled (client gone, shutdown).",
           st.canceled);
    metric(b, "fanyi_jobs_failed_total", "counter", "Requests the engine failed.", st.failed);
    metric(b, "fanyi_batches_total", "counter", "Engine batches run.", st.batches);
    metric(b, "fanyi_sentences_translated_total", "counter", "Sentences translated by the engine.",
           st.batch_sentences);
    metric(b, "fanyi_tokens_translated_total", "counter", "Source tokens translated by the engine.",
           st.batch_tokens);
    metric(b, "fanyi_sentences_cached_total", "counter", "Sentences answered from the cache.",
           st.cache_sentences);
    fy_buf_printf(b, "# HELP fanyi_batch_size Sentences per engine batch.\n"
                     "# TYPE fanyi_batch_size histogram\n");
    uint64_t cum = 0;
    for (int i = 0; i < FY_SCHED_HIST; i++) {
        cum += st.batch_hist[i];
        if (i < FY_SCHED_HIST - 1)
            fy_buf_printf(b, "fanyi_batch_size_bucket{le=\"%d\"} %llu\n", fy_sched_hist_bounds[i],
                          (unsigned long long)cum);
        else
            fy_buf_printf(b, "fanyi_batch_size_bucket{le=\"+Inf\"} %llu\n",
                          (unsigned long long)cum);
    }
    fy_buf_printf(b, "fanyi_batch_size_sum %llu\nfanyi_batch_size_count %llu\n",
                  (unsigned long long)st.batch_sentences, (unsigned long long)st.batches);
}

/* One labelled sample per direction of the registry. */
static void render_models(fy_buf *b, fy_server *s)
{
    static const struct {
        const char *name, *type, *help;
    } m[] = {
        {"fanyi_model_loaded", "gauge", "1 while the direction's model is loaded."},
        {"fanyi_model_memory_bytes", "gauge", "Memory the model took at its last load."},
        {"fanyi_model_loads_total", "counter", "Times the model was loaded."},
        {"fanyi_model_unloads_total", "counter", "Times the model was unloaded to make room."},
        {"fanyi_model_sentences_total", "counter", "Sentences the model translated."},
        {"fanyi_model_batches_total", "counter", "Engine batches the model ran."},
        {"fanyi_model_cache_hits_total", "counter",
         "Sentences of the direction the cache answered."},
    };
    size_t n = fy_registry_count(s->reg);
    fy_direction_info *d = calloc(n ? n : 1, sizeof *d);
    if (!d) {
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < n; i++) fy_registry_info(s->reg, i, &d[i]);
    for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
        fy_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name,
                      m[k].type);
        for (size_t i = 0; i < n; i++) {
            uint64_t v[] = {(uint64_t)d[i].loaded, d[i].bytes,          d[i].loads,
                            d[i].unloads,          d[i].work.sentences, d[i].work.batches,
                            d[i].work.cache_hits};
            fy_buf_printf(b, "%s{direction=\"%s\"} %llu\n", m[k].name, d[i].name,
                          (unsigned long long)v[k]);
        }
    }
    fy_buf_printf(b, "# HELP fanyi_model_load_seconds How long the model's last load took.\n"
                     "# TYPE fanyi_model_load_seconds gauge\n");
    for (size_t i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_model_load_seconds{direction=\"%s\"} %.6f\n", d[i].name,
                      d[i].last_load_s);
    free(d);
    size_t budget, used = fy_registry_memory(s->reg, &budget);
    metric(b, "fanyi_models_memory_bytes", "gauge", "Memory the loaded models take.", used);
    metric(b, "fanyi_models_memory_budget_bytes", "gauge", "--models-memory (0: no limit).",
           budget);
}

/* A remote tier's connection, breaker, writes and round trips. */
static void render_remote(fy_buf *b, const fy_cache_stats *t)
{
    static const struct {
        const char *suffix, *type, *help;
    } m[] = {
        {"up", "gauge", "1 while the tier is connected and answering."},
        {"breaker_open", "gauge", "1 while the circuit breaker keeps requests off the tier."},
        {"breaker_opened_total", "counter", "Times the circuit breaker opened."},
        {"writes_total", "counter", "Translations the tier stored."},
        {"writes_dropped_total", "counter",
         "Translations not sent (queue full, tier down or too slow)."},
        {"write_errors_total", "counter", "Translations the tier refused to store."},
    };
    uint64_t v[] = {(uint64_t)t->up, (uint64_t)t->breaker_open, t->breaker_opened,
                    t->writes,       t->writes_dropped,         t->write_errors};
    for (size_t k = 0; k < sizeof m / sizeof *m; k++)
        fy_buf_printf(b,
                      "# HELP fanyi_cache_%s_%s %s\n# TYPE fanyi_cache_%s_%s %s\n"
                      "fanyi_cache_%s_%s %llu\n",
                      t->tier, m[k].suffix, m[k].help, t->tier, m[k].suffix, m[k].type, t->tier,
                      m[k].suffix, (unsigned long long)v[k]);
    fy_buf_printf(b,
                  "# HELP fanyi_cache_%s_round_trip_seconds Round trips to the tier.\n"
                  "# TYPE fanyi_cache_%s_round_trip_seconds histogram\n",
                  t->tier, t->tier);
    uint64_t cum = 0;
    for (int i = 0; i < FY_CACHE_RTT_BUCKETS - 1; i++) {
        cum += t->rtt[i];
        fy_buf_printf(b, "fanyi_cache_%s_round_trip_seconds_bucket{le=\"%g\"} %llu\n", t->tier,
                      fy_cache_rtt_bounds[i], (unsigned long long)cum);
    }
    fy_buf_printf(b,
                  "fanyi_cache_%s_round_trip_seconds_bucket{le=\"+Inf\"} %llu\n"
                  "fanyi_cache_%s_round_trip_seconds_sum %.6f\n"
                  "fanyi_cache_%s_round_trip_seconds_count %llu\n",
                  t->tier, (unsigned long long)t->rtt_count, t->tier, t->rtt_sum, t->tier,
                  (unsigned long long)t->rtt_count);
}

/* Lookups per tier and result; the memory tier's size under the names the
 * single LRU had (zeros without a memory tier); each remote tier's state. */
static void render_cache(fy_buf *b, fy_cache *cache)
{
    fy_cache_stats t[FY_CACHE_TIERS_MAX], mem = {0};
    size_t n = fy_cache_tier_stats(cache, t, FY_CACHE_TIERS_MAX);
    n = n < FY_CACHE_TIERS_MAX ? n : FY_CACHE_TIERS_MAX;
    fy_buf_printf(b, "# HELP fanyi_cache_lookups_total Sentence lookups by cache tier and result.\n"
                     "# TYPE fanyi_cache_lookups_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *res[] = {"hit", "miss", "error"};
        uint64_t v[] = {t[i].hits, t[i].misses, t[i].errors};
        for (int k = 0; k < 3; k++)
            fy_buf_printf(b, "fanyi_cache_lookups_total{tier=\"%s\",result=\"%s\"} %llu\n",
                          t[i].tier, res[k], (unsigned long long)v[k]);
        if (!strcmp(t[i].tier, "memory")) mem = t[i];
    }
    metric(b, "fanyi_cache_hits_total", "counter", "Memory cache hits.", mem.hits);
    metric(b, "fanyi_cache_misses_total", "counter", "Memory cache misses.", mem.misses);
    metric(b, "fanyi_cache_entries", "gauge", "Sentences in the memory cache.", mem.entries);
    metric(b, "fanyi_cache_bytes", "gauge", "Bytes the memory cache holds.", mem.bytes);
    metric(b, "fanyi_cache_evictions_total", "counter", "Entries evicted from the memory cache.",
           mem.evictions);
    for (size_t i = 0; i < n; i++)
        if (t[i].remote) render_remote(b, &t[i]);
}

/* The device named name among the server's (NULL: not given). */
const fy_nn_dev *server_device(fy_server *s, const char *name)
{
    for (int i = 0; name && i < s->o.ndevices; i++)
        if (!strcmp(s->o.devices[i]->name, name)) return s->o.devices[i];
    return NULL;
}

/* One labelled sample per device of a per-device family. */
static void device_family(fy_buf *b, const char *name, const char *type, const char *help)
{
    fy_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void render_devices(fy_buf *b, fy_server *s)
{
    fy_device_stats ds[FY_SCHED_DEVICES];
    int n = fy_scheduler_device_stats(s->sched, ds, FY_SCHED_DEVICES);
    if (n > FY_SCHED_DEVICES) n = FY_SCHED_DEVICES;
    device_family(b, "fanyi_device_sentences_total", "counter",
                  "Sentences the workers of a device translated.");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_sentences_total{device=\"%s\"} %llu\n", ds[i].name,
                      (unsigned long long)ds[i].sentences);
    device_family(b, "fanyi_device_batches_total", "counter", "Batches a device ran.");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_batches_total{device=\"%s\"} %llu\n", ds[i].name,
                      (unsigned long long)ds[i].batches);
    device_family(b, "fanyi_device_busy_seconds_total", "counter",
                  "Time a device's workers spent running batches, summed over its workers.");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_busy_seconds_total{device=\"%s\"} %.6f\n", ds[i].name,
                      ds[i].busy_seconds);
    device_family(b, "fanyi_device_given_back_total", "counter",
                  "Sentences of batches a failed device gave back to the other devices.");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_given_back_total{device=\"%s\"} %llu\n", ds[i].name,
                      (unsigned long long)ds[i].given_back);
    device_family(b, "fanyi_device_failed", "gauge",
                  "1 once a device failed (lost, out of memory, hung): it takes no more work.");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_failed{device=\"%s\"} %d\n", ds[i].name, ds[i].failed);
    device_family(b, "fanyi_device_memory_bytes", "gauge",
                  "Device memory the models and workers hold there (0 on the host).");
    for (int i = 0; i < n; i++)
        fy_buf_printf(b, "fanyi_device_memory_bytes{device=\"%s\"} %zu\n", ds[i].name,
                      fy_nn_dev_used(server_device(s, ds[i].name)));
}

char *metrics_render(fy_server *s, size_t *len)
{
    /* Read before the counters: a request is counted before it leaves the
     * live list, so a scrape that shows only itself in progress has every
     * earlier request in its counts (read after, one finishing meanwhile
     * could be missing from the counts yet gone from the gauge). */
    pthread_mutex_lock(&s->lock);
    size_t live = s->nlive;
    pthread_mutex_unlock(&s->lock);
    fy_buf b = {0};
    render_requests(&b, s->metrics);
    render_scheduler(&b, s);
    render_devices(&b, s);
    render_models(&b, s);
    docs_render(s->docs, s->jobs, &b);
    render_cache(&b, s->cache);
    metric(&b, "fanyi_http_requests_in_progress", "gauge", "HTTP requests being handled.", live);
    pthread_mutex_lock(&s->lock);
    size_t mem_used = s->mem_used;
    uint64_t mem_refused = s->mem_refused;
    pthread_mutex_unlock(&s->lock);
    metric(&b, "fanyi_request_memory_bytes", "gauge",
           "Memory reserved by the requests in progress (their bodies and what is built from "
           "them).",
           mem_used);
    metric(&b, "fanyi_request_memory_budget_bytes", "gauge", "--request-memory.",
           s->o.request_memory);
    metric(&b, "fanyi_request_memory_refused_total", "counter",
           "Requests answered 503 because --request-memory was in use.", mem_refused);
    pthread_mutex_lock(&s->conn_lock);
    size_t nconns = s->nconns;
    uint64_t refused = s->conns_refused, timed_out = s->conns_timed_out;
    pthread_mutex_unlock(&s->conn_lock);
    metric(&b, "fanyi_connections_open", "gauge", "Open HTTP connections.", nconns);
    metric(&b, "fanyi_connections_refused_total", "counter",
           "Connections refused at --max-connections.", refused);
    metric(&b, "fanyi_connections_timed_out_total", "counter",
           "Connections closed because a request took longer than --read-timeout to arrive.",
           timed_out);
    size_t lingering;
    uint64_t lingered;
    linger_counts(s->linger, &lingering, &lingered);
    metric(&b, "fanyi_connections_lingering", "gauge",
           "Connections answered early, read to their end before the close.", lingering);
    metric(&b, "fanyi_connections_lingered_total", "counter",
           "Connections closed by lingering close.", lingered);
    metric(&b, "process_resident_memory_bytes", "gauge", "Resident memory (RSS) in bytes.",
           (unsigned long long)rss_bytes());
    metric(&b, "fanyi_uptime_seconds", "gauge", "Seconds since the server started.",
           (unsigned long long)(time(NULL) - s->started_s));
    return fy_buf_take(&b, len);
}
