/* cmd_bench.c - `fanyi bench`: load time, latency, throughput and memory.
 *
 * Measures what a user of `fanyi serve` gets: the model load, one sentence
 * at a time on one worker (latency percentiles), then every sentence
 * submitted at once through the real scheduler with N workers (dynamic
 * batching), and the process's peak RSS. Figures only mean something
 * side by side with a peer measured in the same run (see bench/peer).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "nn/backend.h"
#include "nn/par.h"
#include "util/clock.h"
#include "translate/confidence.h"
#include "translate/scheduler.h"
#include "translate/translator.h"

/* Used when no --input is given and the WMT test set is not beside us. */
static const char *const default_text[] = {
    "今天天气很好，我们去公园散步吧。",
    "这家公司去年的营业收入增长了百分之十五。",
    "他说明天早上八点在火车站等我。",
    "科学家们发现了一种新的治疗方法，可以有效降低患者的血压。",
    "由于大雨，航班推迟了三个小时。",
    "我们需要在周五之前完成这个项目的所有测试。",
    "这座城市有很多历史悠久的建筑和美丽的公园。",
    "政府宣布将投资更多资金用于教育和医疗。",
    "请把这份文件翻译成英文，并在明天发给我。",
    "她在北京大学学习计算机科学已经三年了。",
    "随着技术的发展，人们的生活方式发生了巨大的变化。",
    "会议将于下午两点在三楼的会议室举行。",
};

typedef struct bench_opts {
    const char *model, *models, *input, *device;
    int threads, sentences, json, beam, batch, scores, helpers;
    double max_length_factor;
} bench_opts;

typedef struct lines {
    char **v;
    size_t n;
} lines;

/* Peak resident set size of this process in MiB (VmHWM), 0 if unknown. */
static double peak_rss_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    double kib = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) kib = strtod(line + 6, NULL);
    fclose(f);
    return kib / 1024.0;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

static int lines_push(lines *l, const char *s, size_t len)
{
    char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v) return -1;
    l->v = v;
    if (!(v[l->n] = strndup(s, len))) return -1;
    l->n++;
    return 0;
}

/* Reads up to max non-empty lines of path, or the built-in text. */
static int read_input(const char *path, int max, lines *out)
{
    memset(out, 0, sizeof *out);
    if (!path) {
        for (size_t i = 0; (int)out->n < max; i++) {
            const char *s = default_text[i % (sizeof default_text / sizeof *default_text)];
            if (lines_push(out, s, strlen(s))) return -1;
        }
        return 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((int)out->n < max && (len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
        if (len > 0 && lines_push(out, line, (size_t)len)) break;
    }
    free(line);
    fclose(f);
    return out->n ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, size_t n, double p)
{
    size_t i = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[i ? i - 1 : 0];
}

typedef struct single_result {
    double p50, p90, p99, per_s;
    long out_tokens;  /* target tokens (EOS not counted); batching does not change them */
    double out_per_s; /* of them */
    double cpu_s;     /* CPU time of the phase (every thread of the process) */
} single_result;

/* CPU seconds the process has used (user + system). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* One sentence per call on one worker: what an interactive user waits
 * (with the CPU's helpers when fy_nn_cpu_helpers started some). */
static int bench_single(const fy_translator *t, fy_nn_dev *dev, const lines *in, int beam,
                        single_result *r, fy_error *err)
{
    fy_worker *w = fy_worker_new_on(t, dev, err);
    if (!w) return err->code;
    double *ms = calloc(in->n, sizeof *ms);
    int rc = ms ? 0 : fy_err(err, FY_ENOMEM, "out of memory");
    double total = 0, cpu0 = cpu_seconds();
    r->out_tokens = 0;
    for (size_t i = 0; !rc && i < in->n; i++) {
        char *out = NULL;
        const char *src = in->v[i];
        fy_translate_info info = {0};
        double t0 = fy_now_s();
        rc = fy_translate_beam(t, w, &src, 1, beam, &out, NULL, &info, err);
        ms[i] = (fy_now_s() - t0) * 1e3;
        total += ms[i];
        r->out_tokens += info.out_tokens;
        free(out);
    }
    r->cpu_s = cpu_seconds() - cpu0;
    if (!rc) {
        qsort(ms, in->n, sizeof *ms, cmp_double);
        r->p50 = percentile(ms, in->n, 50);
        r->p90 = percentile(ms, in->n, 90);
        r->p99 = percentile(ms, in->n, 99);
        r->per_s = (double)in->n / (total / 1e3);
        r->out_per_s = (double)r->out_tokens / (total / 1e3);
    }
    free(ms);
    fy_worker_free(w);
    return rc;
}

/* ---- batched, through the real scheduler ---- */

typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t done, failed;
} waiter;

static void on_done(void *user, int status)
{
    waiter *wt = user;
    pthread_mutex_lock(&wt->mu);
    wt->done++;
    if (status) wt->failed++;
    pthread_cond_signal(&wt->cv);
    pthread_mutex_unlock(&wt->mu);
}

typedef struct batch_result {
    double per_s, tokens_per_s, mean_batch, batch_ms;
    double cpu_s; /* CPU time of the phase, every thread */
} batch_result;

/* The batched run's one device: the CPU with `threads` workers and the
 * translator's batches, another with one worker per `threads` and its own
 * batches; --batch sets the batch size either way. */
static void bench_device(const bench_opts *o, fy_nn_dev *dev, const fy_translator_options *to,
                         fy_scheduler_options *so)
{
    int cpu = dev == fy_nn_cpu_device();
    so->devices[0] = (fy_sched_device){
        .dev = cpu ? NULL : dev,
        .name = dev->name,
        .threads = o->threads,
        .max_batch_sentences = o->batch ? o->batch
                               : cpu    ? to->max_batch_sentences
                                        : dev->max_rows,
        .max_batch_tokens = cpu ? to->max_batch_tokens : dev->max_tokens,
    };
    if (o->batch && so->devices[0].max_batch_tokens < o->batch * 128)
        so->devices[0].max_batch_tokens = o->batch * 128;
    so->ndevices = 1;
}

static int bench_batched(fy_translator *t, const bench_opts *o, fy_nn_dev *dev, const lines *in,
                         batch_result *r, fy_error *err)
{
    const fy_translator_options *to = fy_translator_options_get(t);
    int beam = o->beam;
    fy_scheduler_options so;
    fy_scheduler_options_default(&so);
    so.queue_max = in->n;
    bench_device(o, dev, to, &so);
    fy_engine engine;
    if (o->scores) /* what fanyi serve runs: the sentences' confidence too */
        fy_translator_engine_scored(t, "bench", &engine);
    else
        fy_translator_engine(t, "bench", &engine);
    fy_route route = {{&engine}, 1, NULL};
    fy_scheduler *s = fy_scheduler_open(&so, err);
    if (!s) return err->code;
    long tokens = 0;
    for (size_t i = 0; i < in->n; i++)
        tokens += fy_translator_count_tokens(t, in->v[i], strlen(in->v[i]));

    waiter wt = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    fy_job **jobs = calloc(in->n, sizeof *jobs);
    int rc = jobs ? 0 : fy_err(err, FY_ENOMEM, "out of memory");
    fy_job_callbacks cb = {.on_done = on_done, .user = &wt};
    double t0 = fy_now_s(), cpu0 = cpu_seconds();
    size_t submitted = 0;
    for (; !rc && submitted < in->n; submitted++) {
        fy_sentence_in src = {in->v[submitted], 0, &route, beam, 0, 0, NULL};
        if (!(jobs[submitted] = fy_scheduler_submit(s, &src, 1, 0, &cb, err))) rc = err->code;
    }
    pthread_mutex_lock(&wt.mu);
    while (wt.done < submitted) pthread_cond_wait(&wt.cv, &wt.mu);
    pthread_mutex_unlock(&wt.mu);
    double secs = fy_now_s() - t0;
    r->cpu_s = cpu_seconds() - cpu0;
    if (!rc && wt.failed) rc = fy_err(err, FY_EINVAL, "%zu sentences failed", wt.failed);

    fy_scheduler_stats st;
    fy_scheduler_get_stats(s, &st);
    r->per_s = (double)in->n / secs;
    r->tokens_per_s = (double)tokens / secs;
    r->mean_batch = st.batches ? (double)st.batch_sentences / (double)st.batches : 0;
    fy_device_stats ds;
    fy_scheduler_device_stats(s, &ds, 1);
    r->batch_ms = ds.batches ? ds.busy_seconds * 1e3 / (double)ds.batches : 0;
    for (size_t i = 0; i < submitted; i++) fy_job_release(jobs[i]);
    free(jobs);
    fy_scheduler_free(s);
    return rc;
}

/* ---- command ---- */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: fanyi bench [--model DIR | --models ROOT] [--threads N] [--input FILE]\n"
        "                   [--sentences N] [--max-length-factor F] [--beam N]\n"
        "                   [--device D] [--batch N] [--helper-threads N] [--scores] [--json]\n\n"
        "Measures model load time, one-sentence-at-a-time latency (p50/p90/p99, one\n"
        "worker: on one thread, then with the helper threads that fanyi serve gives\n"
        "a worker while cores are idle), batched throughput through the real\n"
        "scheduler (N threads, every sentence submitted at once), and peak RSS.\n\n"
        "  --model DIR            model directory (default: $FANYI_MODEL_DIR, else the\n"
        "                         zh-en model, or the only model, of the models dir)\n"
        "  --models ROOT          the models directory (default: $FANYI_MODELS_DIR,\n"
        "                         else ~/.local/share/fanyi/models)\n"
        "  --threads N            scheduler workers for the batched run (default: cores)\n"
        "  --input FILE           one sentence a line (default: ../shared/data/wmt/wmt19.zh\n"
        "                         when present, else built-in Chinese sentences)\n"
        "  --sentences N          how many lines to use (default 200)\n"
        "  --max-length-factor F  output length limit per source token (default 2.0)\n"
        "  --beam N               beam search width, 1 .. 16 (default 1: greedy)\n"
        "  --device D             where to translate: cpu (default), vulkan:N, auto\n"
        "                         (the first device it opens; see fanyi devices)\n"
        "  --batch N              sentences per batch of the batched run (default: the\n"
        "                         device's: 32 on the CPU); its mean time is reported\n"
        "  --helper-threads N     threads that join the worker's products on idle\n"
        "                         cores, 0 .. %d (default: cores - 1, at most %d; 0: no\n"
        "                         helped run)\n"
        "  --scores               the batched run also computes each sentence's confidence\n"
        "                         (the n-best score and margin, as fanyi serve does)\n"
        "  --json                 one JSON object instead of a table\n",
        FY_PAR_MAX_HELPERS, FY_PAR_MAX_HELPERS);
}

static int parse(int argc, char **argv, bench_opts *o)
{
    static const struct option opts[] = {{"model", required_argument, NULL, 'm'},
                                         {"threads", required_argument, NULL, 't'},
                                         {"input", required_argument, NULL, 'i'},
                                         {"sentences", required_argument, NULL, 'n'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"max-length-factor", required_argument, NULL, 'f'},
                                         {"beam", required_argument, NULL, 'B'},
                                         {"device", required_argument, NULL, 'D'},
                                         {"batch", required_argument, NULL, 'b'},
                                         {"models", required_argument, NULL, 'M'},
                                         {"scores", no_argument, NULL, 'S'},
                                         {"helper-threads", required_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {0}};
    long v;
    int c;
    while ((c = cli_getopt(argc, argv, "bench", "m:t:i:n:jf:B:D:b:h", opts)) != -1) {
        switch (c) {
        case 'D':
            o->device = optarg;
            break;
        case 'b':
            if (cli_parse_long("bench", "--batch", optarg, 1, 4096, &v)) return 2;
            o->batch = (int)v;
            break;
        case 'm':
            o->model = optarg;
            break;
        case 'M':
            o->models = optarg;
            break;
        case 'i':
            o->input = optarg;
            break;
        case 'j':
            o->json = 1;
            break;
        case 't':
            if (cli_parse_long("bench", "--threads", optarg, 1, 256, &v)) return 2;
            o->threads = (int)v;
            break;
        case 'n':
            if (cli_parse_long("bench", "--sentences", optarg, 1, 1000000, &v)) return 2;
            o->sentences = (int)v;
            break;
        case 'f':
            if (cli_parse_double("bench", "--max-length-factor", optarg, 0, 16,
                                 &o->max_length_factor))
                return 2;
            break;
        case 'B':
            if (cli_parse_long("bench", "--beam", optarg, 1, FY_BEAM_MAX, &v)) return 2;
            o->beam = (int)v;
            break;
        case 'S':
            o->scores = 1;
            break;
        case 'H':
            if (cli_parse_long("bench", "--helper-threads", optarg, 0, FY_PAR_MAX_HELPERS, &v))
                return 2;
            o->helpers = (int)v;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
    if (o->model && o->models)
        return cli_usage_error("bench", "--model and --models exclude each other");
    return 0;
}

/* The helped one-at-a-time run as a JSON member (empty without one). */
static void json_helped(const bench_opts *o, const single_result *h)
{
    if (o->helpers)
        printf(",\"helpers\":%d,\"single_helped\":{\"p50_ms\":%.2f,\"p90_ms\":%.2f,"
               "\"p99_ms\":%.2f,\"sentences_per_s\":%.2f,\"out_tokens_per_s\":%.1f,"
               "\"cpu_s\":%.3f}",
               o->helpers, h->p50, h->p90, h->p99, h->per_s, h->out_per_s, h->cpu_s);
}

static void report(const bench_opts *o, const fy_nn_dev *dev, const char *dir, size_t n,
                   double load_ms, const single_result *s, const single_result *h,
                   const batch_result *b, double rss)
{
    if (o->json) {
        printf("{\"model\":\"%s\",\"device\":\"%s\",\"device_desc\":\"%s\",\"sentences\":%zu,"
               "\"threads\":%d,\"beam\":%d,\"max_length_factor\":%.2f,"
               "\"load_ms\":%.1f,\"out_tokens\":%ld,\"single\":{\"p50_ms\":%.2f,"
               "\"p90_ms\":%.2f,\"p99_ms\":%.2f,\"sentences_per_s\":%.2f,"
               "\"out_tokens_per_s\":%.1f,\"cpu_s\":%.3f},\"batched\":{\"sentences_per_s\":%.2f,"
               "\"tokens_per_s\":%.1f,\"out_tokens_per_s\":%.1f,\"mean_batch\":%.2f,"
               "\"batch_ms\":%.2f,\"cpu_s\":%.3f},\"peak_rss_mib\":%.1f",
               dir, dev->name, dev->desc, n, o->threads, o->beam, o->max_length_factor, load_ms,
               s->out_tokens, s->p50, s->p90, s->p99, s->per_s, s->out_per_s, s->cpu_s, b->per_s,
               b->tokens_per_s, b->per_s * (double)s->out_tokens / (double)n, b->mean_batch,
               b->batch_ms, b->cpu_s, rss);
        json_helped(o, h);
        printf("}\n");
        return;
    }
    printf("model           %s\n", dir);
    printf("device          %s (%s)\n", dev->name, dev->desc);
    printf("sentences       %zu (max-length-factor %.2f, beam %d)\n", n, o->max_length_factor,
           o->beam);
    printf("load            %.1f ms\n", load_ms);
    printf("single, 1 thr   p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  %.2f sentences/s  %.0f output "
           "tokens/s  (CPU %.2f s)\n",
           s->p50, s->p90, s->p99, s->per_s, s->out_per_s, s->cpu_s);
    if (o->helpers)
        printf("single, +%d hlp  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  %.2f sentences/s  %.0f "
               "output tokens/s  (CPU %.2f s)\n",
               o->helpers, h->p50, h->p90, h->p99, h->per_s, h->out_per_s, h->cpu_s);
    printf("batched, %d thr  %.2f sentences/s  %.0f source tokens/s  %.0f output tokens/s  mean "
           "batch %.1f (%.1f ms)  (CPU %.2f s)\n",
           o->threads, b->per_s, b->tokens_per_s, b->per_s * (double)s->out_tokens / (double)n,
           b->mean_batch, b->batch_ms, b->cpu_s);
    printf("output tokens   %ld (EOS not counted; the same one at a time and batched)\n",
           s->out_tokens);
    printf("peak RSS        %.1f MiB\n", rss);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o = {.sentences = 200, .max_length_factor = 2.0, .beam = 1};
    o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (o.threads < 1) o.threads = 1;
    o.helpers = fy_nn_cpu_default_helpers(sysconf(_SC_NPROCESSORS_ONLN));
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    if (!o.input && access("../shared/data/wmt/wmt19.zh", R_OK) == 0)
        o.input = "../shared/data/wmt/wmt19.zh";

    lines in;
    if (read_input(o.input, o.sentences, &in)) {
        fprintf(stderr, "fanyi bench: %s: cannot read any sentence\n", o.input);
        lines_free(&in);
        return 1;
    }
    char *dir = o.model ? strdup(o.model) : cli_default_model_dir(o.models);
    fy_translator_options to;
    fy_translator_options_default(&to);
    to.max_length_factor = (float)o.max_length_factor;
    to.max_beam = o.beam;
    fy_error err = {0};
    fy_nn_dev **devs = NULL;
    int ndevs = 0;
    rc = fy_nn_devices_open(o.device ? o.device : "cpu", &devs, &ndevs, &err);
    double t0 = fy_now_s();
    fy_translator *t = !rc && dir ? fy_translator_open(dir, &to, &err) : NULL;
    double load_ms = (fy_now_s() - t0) * 1e3;
    single_result s = {0}, h = {0};
    batch_result b = {0};
    rc = t ? 0 : -1;
    if (devs[0] != fy_nn_cpu_device()) o.helpers = 0; /* they share CPU products only */
    if (!rc) rc = bench_single(t, devs[0], &in, o.beam, &s, &err);
    /* Then with helpers, as fanyi serve runs; the batched run too. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!rc && o.helpers && (rc = fy_nn_cpu_helpers(o.helpers, (int)cores, &err)) == 0)
        rc = bench_single(t, devs[0], &in, o.beam, &h, &err);
    if (!rc) rc = bench_batched(t, &o, devs[0], &in, &b, &err);
    if (rc)
        fprintf(stderr, "fanyi bench: %s\n", err.msg[0] ? err.msg : "out of memory");
    else
        report(&o, devs[0], dir, in.n, load_ms, &s, &h, &b, peak_rss_mib());
    fy_nn_cpu_helpers(0, 0, &err);
    fy_translator_free(t);
    fy_nn_devices_close(devs, ndevs);
    free(dir);
    lines_free(&in);
    return rc ? 1 : 0;
}
