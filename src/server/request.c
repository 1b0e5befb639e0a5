/* request.c - a request's life (created on its first call, freed by
 * libmicrohttpd's completion notice) and its wait state: the only code
 * that suspends a connection, resumes it, and decides what a waiting
 * request does next (see internal.h for who calls what).
 *
 * The state is r->w, under r->lock. Producers and cutters only record and
 * wake; the owner, the HTTP thread libmicrohttpd runs the connection in,
 * takes what they recorded and acts. That keeps the work's cancellation
 * (which must not race the owner's own calls into a document job) and the
 * answer in one thread, and makes shutdown safe: once a request is cut it
 * never sleeps again, and the cut resumes it if it slept, so when
 * libmicrohttpd stops (which aborts the process if a connection is still
 * suspended) every connection has been resumed.
 */
#include "server/internal.h"

#include <ctype.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/list.h"

/* ---- life ------------------------------------------------------------------- */

static int id_char_ok(int c)
{
    return isalnum(c) || c == '-' || c == '_' || c == '.' || c == ':';
}

/* X-Request-Id: the client's own when it is sane, else a fresh one. */
static void req_set_id(req *r)
{
    const char *given = req_header(r, "X-Request-Id");
    size_t n = given ? strlen(given) : 0;
    int ok = n > 0 && n < sizeof r->id;
    for (size_t i = 0; ok && i < n; i++) ok = id_char_ok((unsigned char)given[i]);
    if (ok) {
        memcpy(r->id, given, n + 1);
        return;
    }
    pthread_mutex_lock(&r->srv->lock);
    uint64_t k = ++r->srv->next_id;
    pthread_mutex_unlock(&r->srv->lock);
    snprintf(r->id, sizeof r->id, "%08llx-%06llx", (unsigned long long)r->srv->started_s,
             (unsigned long long)k);
}

req *req_new(fy_server *s, struct MHD_Connection *conn)
{
    req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->srv = s;
    r->conn = conn;
    r->start_us = fy_now_us();
    r->endpoint = "unknown";
    pthread_mutex_init(&r->lock, NULL);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->cn = ci ? ci->socket_context : NULL;
    req_set_id(r);
    pthread_mutex_lock(&s->lock);
    FY_LIST_PUSH(s->live, r);
    s->nlive++;
    pthread_mutex_unlock(&s->lock);
    return r;
}

void req_free(req *r)
{
    fy_server *s = r->srv;
    pthread_mutex_lock(&s->lock);
    FY_LIST_UNLINK(s->live, r);
    s->nlive--;
    s->mem_used -= r->charge;
    s->mem_freed += r->charge;
    pthread_mutex_unlock(&s->lock);
    fy_request_free(r->q); /* cancels first: no callbacks after this, safe to free r */
    for (int k = 0; k < r->ngl; k++) fy_glossary_unref(r->gl[k]);
    json_decref(r->in);
    if (r->ctx_free) r->ctx_free(r->ctx);
    free(r->body);
    fy_buf_free(&r->ev);
    doc_req_free(r);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* ---- reports ----------------------------------------------------------------- */

/* r->lock held. */
static void wake(req *r)
{
    r->w.events++;
    if (r->w.suspended) {
        r->w.suspended = 0;
        MHD_resume_connection(r->conn);
    }
}

void req_work_begin(req *r)
{
    pthread_mutex_lock(&r->lock);
    r->w.pending = 1;
    r->w.done = 0;
    pthread_mutex_unlock(&r->lock);
}

void req_work_done(req *r, int status)
{
    pthread_mutex_lock(&r->lock);
    r->w.done = 1;
    r->w.status = status;
    wake(r);
    pthread_mutex_unlock(&r->lock);
}

void req_notify(req *r)
{
    wake(r);
}

void req_cut(req *r, int why)
{
    pthread_mutex_lock(&r->lock);
    if (!r->w.cut) r->w.cut = why;
    wake(r);
    pthread_mutex_unlock(&r->lock);
}

int req_cut_all(fy_server *s)
{
    /* Set before the walk: a request created after it (not in the walk)
     * sees the flag and never sleeps (req_look). */
    atomic_store(&s->stopping, 1);
    int n = 0;
    pthread_mutex_lock(&s->lock);
    for (req *r = s->live; r; r = r->next) {
        pthread_mutex_lock(&r->lock);
        n += r->w.pending && !r->w.done;
        if (!r->w.cut) r->w.cut = CUT_STOP;
        wake(r);
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

int req_cut_reason(req *r)
{
    pthread_mutex_lock(&r->lock);
    int why = r->w.cut;
    pthread_mutex_unlock(&r->lock);
    if (!why && atomic_load(&r->srv->stopping)) why = CUT_STOP;
    return why;
}

int req_gone(const req *r)
{
    return r->w.cut == CUT_GONE;
}

/* libmicrohttpd does not watch a suspended connection, so a client that
 * gives up while its translation waits would cost work until the job
 * ends. The watcher looks at the sockets of sleeping requests; a peer that
 * has closed gets its request cut (the owner then cancels the job). */
static int peer_closed(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return 0;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) != 1) return 0;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void req_watch_gone(fy_server *s)
{
    pthread_mutex_lock(&s->lock);
    for (req *r = s->live; r; r = r->next) {
        /* Under r->lock: a sleeping connection is not touched by MHD, so
         * its descriptor stays valid while we look. */
        pthread_mutex_lock(&r->lock);
        if (r->w.suspended && !r->w.cut && peer_closed(r->conn)) {
            r->w.cut = CUT_GONE;
            wake(r);
        }
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

/* ---- the owner ---------------------------------------------------------------- */

void req_cancel(req *r)
{
    if (r->cancel)
        r->cancel(r);
    else
        fy_request_cancel(r->q);
    pthread_mutex_lock(&r->lock);
    r->w.pending = 0;
    pthread_mutex_unlock(&r->lock);
}

int req_look(req *r, int *status, unsigned long *events)
{
    if (events) *events = r->w.events;
    if (r->w.done) {
        r->w.done = 0;
        r->w.pending = 0;
        *status = r->w.status;
        return WAIT_DONE;
    }
    if (!r->w.cut && atomic_load(&r->srv->stopping)) r->w.cut = CUT_STOP;
    if (r->w.cut) {
        *status = r->w.cut;
        return WAIT_CUT;
    }
    return WAIT_PENDING;
}

int req_sleep(req *r, unsigned long events)
{
    if (r->w.events != events || r->w.cut || r->w.done) return -1;
    r->w.suspended = 1;
    MHD_suspend_connection(r->conn);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

enum MHD_Result req_cut_reply(req *r)
{
    if (req_cut_reason(r) == CUT_GONE) return MHD_NO; /* nobody to answer: close */
    return reply_error(r, 503,
                       "the server is shutting down and could not finish this request in time; "
                       "retry (another replica, or this one once it is back)");
}

enum MHD_Result req_park(req *r)
{
    int status;
    unsigned long events;
    pthread_mutex_lock(&r->lock);
    int state = req_look(r, &status, &events);
    /* Nothing can be reported while r->lock is held: this sleeps. */
    if (state == WAIT_PENDING && !req_sleep(r, events)) return MHD_YES;
    pthread_mutex_unlock(&r->lock);
    if (state == WAIT_DONE) return r->resume(r, status);
    req_cancel(r);
    return req_cut_reply(r);
}
