/* docstore.c - the document metrics: documents by format and final status,
 * bytes in and out, and the gauges of the document jobs' store
 * (translate/jobs.h holds the documents themselves, on disk or in Redis).
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FORMAT_SERIES = 64 };

struct docs {
    pthread_mutex_t lock;
    struct {
        const char *format; /* static (fy_docfmt_info) or "unknown" */
        int status;
        uint64_t count;
    } series[MAX_FORMAT_SERIES];
    int nseries;
    uint64_t bytes_in, bytes_out;
};

struct docs *docs_new(void)
{
    struct docs *d = calloc(1, sizeof *d);
    if (d) pthread_mutex_init(&d->lock, NULL);
    return d;
}

void docs_free(struct docs *d)
{
    if (!d) return;
    pthread_mutex_destroy(&d->lock);
    free(d);
}

void docs_count(struct docs *d, const char *format, int status, size_t in, size_t out)
{
    pthread_mutex_lock(&d->lock);
    int i = 0;
    while (i < d->nseries && (d->series[i].status != status || strcmp(d->series[i].format, format)))
        i++;
    if (i == d->nseries && i < MAX_FORMAT_SERIES) {
        d->series[i].format = format;
        d->series[i].status = status;
        d->series[i].count = 0;
        d->nseries++;
    }
    if (i < d->nseries) d->series[i].count++;
    d->bytes_in += in;
    d->bytes_out += out;
    pthread_mutex_unlock(&d->lock);
}

static void render_jobs(struct fy_jobs *jobs, fy_buf *b)
{
    fy_jobs_stats st = {0};
    if (jobs) fy_jobs_get_stats(jobs, &st);
    fy_buf_printf(
        b,
        "# HELP fanyi_download_store_bytes Bytes the document jobs' store holds (uploads, "
        "checkpoints, translated files).\n# TYPE fanyi_download_store_bytes gauge\n"
        "fanyi_download_store_bytes %llu\n"
        "# HELP fanyi_download_store_entries Document jobs in the store.\n"
        "# TYPE fanyi_download_store_entries gauge\nfanyi_download_store_entries %zu\n"
        "# HELP fanyi_document_jobs Document jobs of this server: running, or waiting "
        "for their turn.\n# TYPE fanyi_document_jobs gauge\n"
        "fanyi_document_jobs{state=\"running\"} %zu\n"
        "fanyi_document_jobs{state=\"queued\"} %zu\n",
        (unsigned long long)st.store_bytes, st.store_jobs, st.running, st.queued);
    static const char *const names[] = {"started", "resumed",  "done",
                                        "error",   "canceled", "expired"};
    uint64_t v[] = {st.started, st.resumed, st.finished, st.failed, st.canceled, st.expired};
    fy_buf_printf(b, "# HELP fanyi_document_job_events_total What happened to document jobs "
                     "here: started, resumed (taken up from a checkpoint), ended done, error or "
                     "canceled, expired (deleted with their result).\n"
                     "# TYPE fanyi_document_job_events_total counter\n");
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        fy_buf_printf(b, "fanyi_document_job_events_total{event=\"%s\"} %llu\n", names[i],
                      (unsigned long long)v[i]);
}

void docs_render(struct docs *d, struct fy_jobs *jobs, fy_buf *b)
{
    pthread_mutex_lock(&d->lock);
    fy_buf_printf(b, "# HELP fanyi_documents_total Documents by format and status.\n"
                     "# TYPE fanyi_documents_total counter\n");
    for (int i = 0; i < d->nseries; i++)
        fy_buf_printf(b, "fanyi_documents_total{format=\"%s\",status=\"%d\"} %llu\n",
                      d->series[i].format, d->series[i].status,
                      (unsigned long long)d->series[i].count);
    fy_buf_printf(b,
                  "# HELP fanyi_document_bytes_total Bytes of documents received (in) and of "
                  "translated documents produced (out).\n# TYPE fanyi_document_bytes_total "
                  "counter\nfanyi_document_bytes_total{direction=\"in\"} %llu\n"
                  "fanyi_document_bytes_total{direction=\"out\"} %llu\n",
                  (unsigned long long)d->bytes_in, (unsigned long long)d->bytes_out);
    pthread_mutex_unlock(&d->lock);
    render_jobs(jobs, b);
}
