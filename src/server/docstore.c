/* docstore.c - translated documents waiting to be downloaded
 * (GET /download_file/...), and the document metrics.
 *
 * Results live in memory only, each for --download-ttl seconds, all of
 * them together within --download-store-mb: storing one first drops the
 * expired ones, then the oldest until it fits. Ids are 128 random bits
 * (getrandom), so a download URL is a capability nobody can guess. Each
 * server process has its own store: behind a load balancer a download must
 * reach the replica that translated the file (or clients use the native
 * endpoint, which returns the file in its answer).
 */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

typedef struct stored {
    char id[33];
    char *name, *mime;
    char *data;
    size_t len;
    int64_t expires;
    struct stored *prev, *next; /* oldest first */
} stored;

enum { MAX_FORMAT_SERIES = 64 };

struct docs {
    pthread_mutex_t lock;
    stored *head, *tail;
    size_t bytes, count, cap;
    int ttl_s;
    struct {
        const char *format; /* static (fy_docfmt_info) or "unknown" */
        int status;
        uint64_t count;
    } series[MAX_FORMAT_SERIES];
    int nseries;
    uint64_t bytes_in, bytes_out, evicted;
};

static int64_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec;
}

struct docs *docs_new(size_t cap_bytes, int ttl_s)
{
    struct docs *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    pthread_mutex_init(&d->lock, NULL);
    d->cap = cap_bytes;
    d->ttl_s = ttl_s;
    return d;
}

static void drop(struct docs *d, stored *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        d->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        d->tail = e->prev;
    d->bytes -= e->len;
    d->count--;
    free(e->name);
    free(e->mime);
    free(e->data);
    free(e);
}

void docs_free(struct docs *d)
{
    if (!d) return;
    while (d->head) drop(d, d->head);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static int random_id(char id[33])
{
    unsigned char r[16];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return -1;
    for (int i = 0; i < 16; i++) snprintf(id + 2 * i, 3, "%02x", r[i]);
    return 0;
}

int docs_put(struct docs *d, char *data, size_t len, const char *name, const char *mime,
             char id[33])
{
    if (len > d->cap || random_id(id)) return -1;
    stored *e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(name)) || !(e->mime = strdup(mime))) {
        if (e) free(e->name);
        free(e);
        return -1;
    }
    memcpy(e->id, id, 33);
    e->data = data;
    e->len = len;
    pthread_mutex_lock(&d->lock);
    int64_t now = now_s();
    e->expires = now + d->ttl_s;
    for (stored *x = d->head, *nx; x; x = nx) {
        nx = x->next;
        if (x->expires <= now) drop(d, x);
    }
    while (d->head && d->bytes + len > d->cap) {
        drop(d, d->head);
        d->evicted++;
    }
    e->prev = d->tail;
    if (d->tail)
        d->tail->next = e;
    else
        d->head = e;
    d->tail = e;
    d->bytes += len;
    d->count++;
    pthread_mutex_unlock(&d->lock);
    return 0;
}

int docs_get(struct docs *d, const char *id, const char *name, char **data, size_t *len,
             char *mime, size_t mime_cap)
{
    int found = 0;
    pthread_mutex_lock(&d->lock);
    int64_t now = now_s();
    for (stored *e = d->head; e && !found; e = e->next) {
        if (strcmp(e->id, id) || e->expires <= now || (name && strcmp(e->name, name))) continue;
        *data = malloc(e->len ? e->len : 1);
        if (*data) {
            if (e->len) memcpy(*data, e->data, e->len);
            *len = e->len;
            snprintf(mime, mime_cap, "%s", e->mime);
            found = 1;
        } else {
            found = -1;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return found;
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

void docs_render(struct docs *d, fy_buf *b)
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
    fy_buf_printf(b,
                  "# HELP fanyi_download_store_bytes Translated documents held for download.\n"
                  "# TYPE fanyi_download_store_bytes gauge\nfanyi_download_store_bytes %zu\n"
                  "# HELP fanyi_download_store_entries Documents held for download.\n"
                  "# TYPE fanyi_download_store_entries gauge\nfanyi_download_store_entries %zu\n"
                  "# HELP fanyi_download_store_evictions_total Documents dropped before their "
                  "time to make room.\n# TYPE fanyi_download_store_evictions_total counter\n"
                  "fanyi_download_store_evictions_total %llu\n",
                  d->bytes, d->count, (unsigned long long)d->evicted);
    pthread_mutex_unlock(&d->lock);
}
