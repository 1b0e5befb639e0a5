/* linger.c - lingering close, as nginx does it.
 *
 * When the server answers a request before reading all of its body (413 by
 * Content-Length, 404/405 with a body, a refused framing, a connection over
 * --max-connections), libmicrohttpd sends the answer and closes the socket.
 * Closing a TCP socket with unread bytes in its receive queue, or receiving
 * more after the close, makes the kernel send a reset; a client still
 * writing its body then fails with EPIPE/ECONNRESET and never reads the
 * answer that is waiting for it (Python urllib and http.client, Node's
 * fetch). So such a socket is handed here instead of being closed: the
 * answer and a FIN have gone out, and this thread reads and discards what
 * the client still sends until it closes its end, or for a bounded time and
 * number of bytes, and only then closes.
 *
 * The caller hands over a dup() of the connection's descriptor just before
 * libmicrohttpd closes its own (after which its threads poll it no more),
 * so the socket outlives libmicrohttpd's close and nothing of
 * libmicrohttpd's is touched here.
 */
#include "server/internal.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* One lingering socket. */
typedef struct lsock {
    int fd;
    int64_t until_ms; /* closed then, whatever the client does */
    int64_t quiet_ms; /* ... or when nothing came since then */
    uint64_t left;    /* bytes it may still send */
} lsock;

struct lingerer {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    lsock add[LINGER_MAX]; /* handed over, not yet polled (guarded by lock) */
    size_t nadd;
    size_t open; /* sockets held, added ones included (guarded by lock) */
    uint64_t total;
    int stop;
    pthread_t thread;
    int started;
};

static void ls_close(int fd)
{
    /* SHUT_RDWR first: a refused connection's socket is still open in
     * libmicrohttpd too, which then sees the end of the stream and frees
     * its slot. */
    shutdown(fd, SHUT_RDWR);
    close(fd);
}

/* Reads and drops what is there. Returns 1 when the socket is done with
 * (end of stream, error, or its byte allowance used up). */
static int ls_drain(lsock *ls, int64_t now)
{
    static char sink[65536]; /* only this thread reads into it; never looked at */
    for (;;) {
        ssize_t n = recv(ls->fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n > 0) {
            ls->quiet_ms = now + LINGER_QUIET_MS;
            if ((uint64_t)n >= ls->left) return 1;
            ls->left -= (uint64_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (n < 0 && errno == EINTR) continue;
        return 1;
    }
}

static void *linger_main(void *arg)
{
    lingerer *l = arg;
    lsock *socks = malloc(LINGER_MAX * sizeof *socks);
    struct pollfd *pf = malloc(LINGER_MAX * sizeof *pf);
    size_t n = 0;
    for (;;) {
        pthread_mutex_lock(&l->lock);
        while (!l->stop && !n && !l->nadd) pthread_cond_wait(&l->wake, &l->lock);
        int stop = l->stop;
        for (size_t i = 0; i < l->nadd; i++) {
            if (socks && n < LINGER_MAX)
                socks[n++] = l->add[i];
            else
                ls_close(l->add[i].fd);
        }
        l->nadd = 0;
        pthread_mutex_unlock(&l->lock);
        if (stop || !socks || !pf) break;

        for (size_t i = 0; i < n; i++) pf[i] = (struct pollfd){.fd = socks[i].fd, .events = POLLIN};
        /* 20 ms: newly added sockets wait at most that long (their data
         * waits in the kernel meanwhile). */
        int ready = poll(pf, (nfds_t)n, 20);
        int64_t now = fy_now_ms();
        size_t kept = 0, closed = 0;
        for (size_t i = 0; i < n; i++) {
            lsock *ls = &socks[i];
            int done = ready > 0 && pf[i].revents ? ls_drain(ls, now) : 0;
            if (done || now >= ls->until_ms || now >= ls->quiet_ms) {
                ls_close(ls->fd);
                closed++;
            } else {
                socks[kept++] = *ls;
            }
        }
        n = kept;
        if (closed) {
            pthread_mutex_lock(&l->lock);
            l->open -= closed;
            pthread_mutex_unlock(&l->lock);
        }
    }
    for (size_t i = 0; i < n; i++) ls_close(socks[i].fd);
    free(socks);
    free(pf);
    return NULL;
}

lingerer *linger_new(void)
{
    lingerer *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->wake, NULL);
    if (pthread_create(&l->thread, NULL, linger_main, l)) {
        linger_free(l);
        return NULL;
    }
    l->started = 1;
    return l;
}

void linger_free(lingerer *l)
{
    if (!l) return;
    if (l->started) {
        pthread_mutex_lock(&l->lock);
        l->stop = 1;
        pthread_cond_signal(&l->wake);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->thread, NULL);
    }
    for (size_t i = 0; i < l->nadd; i++) ls_close(l->add[i].fd);
    pthread_cond_destroy(&l->wake);
    pthread_mutex_destroy(&l->lock);
    free(l);
}

int linger_add(lingerer *l, int fd, uint64_t bytes)
{
    int d = l ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (d < 0) return -1;
    int64_t now = fy_now_ms();
    lsock ls = {d, now + LINGER_MS, now + LINGER_QUIET_MS, bytes ? bytes : 1};
    pthread_mutex_lock(&l->lock);
    int ok = !l->stop && l->open < LINGER_MAX && l->nadd < LINGER_MAX;
    if (ok) {
        l->add[l->nadd++] = ls;
        l->open++;
        l->total++;
        pthread_cond_signal(&l->wake);
    }
    pthread_mutex_unlock(&l->lock);
    if (!ok) close(d); /* over the limit: the plain close, as before */
    return ok ? 0 : -1;
}

void linger_counts(lingerer *l, size_t *open, uint64_t *total)
{
    *open = 0;
    *total = 0;
    if (!l) return;
    pthread_mutex_lock(&l->lock);
    *open = l->open;
    *total = l->total;
    pthread_mutex_unlock(&l->lock);
}
