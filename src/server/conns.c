/* conns.c - connection tracking, apart from requests (see peer in
 * internal.h): past --max-connections a new connection gets a 503 at once
 * and lingers; one whose request has not fully arrived within
 * --read-timeout is shut down by the watcher; one answered before its body
 * was read gets a lingering close (linger.c). */
#include "server/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "util/clock.h"
#include "util/list.h"

/* Marks whether cn is waiting for (part of) a request; receiving restarts
 * its read deadline (keep-alive: the next request). Returns 1 if the
 * watcher has cut the connection. */
int conn_set_receiving(fy_server *s, peer *cn, int receiving)
{
    if (!cn) return 0;
    pthread_mutex_lock(&s->conn_lock);
    cn->receiving = receiving;
    if (receiving) cn->since_ms = fy_now_ms();
    int cut = cn->cut;
    pthread_mutex_unlock(&s->conn_lock);
    return cut;
}

/* The socket context of a refused connection: the request it may already
 * have sent is never run. */
static peer refused_peer;

int conn_refused(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci && ci->socket_context == &refused_peer;
}

/* A connection over --max-connections: a 503 now beats a client hanging in
 * the listen backlog (where MHD leaves it once its own limit is reached). */
static void conn_refuse(fy_server *s, int fd)
{
    static const char body[] = "{\"error\":{\"code\":\"unavailable\",\"message\":\"too many open "
                               "connections; retry later\"}}";
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "HTTP/1.1 503 Service Unavailable\r\n"
                     "Content-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n"
                     "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
                     sizeof body - 1, body);
    /* Best effort (the socket is new, its buffer empty). The client may be
     * sending its request already: closing on it would reset the
     * connection and lose the 503, so only our side is shut, and the
     * socket lingers until the client closes (linger.c ends with SHUT_RDWR,
     * which makes MHD drop the connection too). Over HTTPS the client
     * expects a TLS handshake, not text: the close alone refuses it. */
    if (n > 0 && !s->tls_cert) (void)send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    if (linger_add(s->linger, fd, LINGER_BYTES)) shutdown(fd, SHUT_RDWR);
}

/* MHD_OPTION_NOTIFY_CONNECTION: tracks every connection (STARTED, CLOSED
 * run in the connection's HTTP thread; CLOSED before MHD closes the socket,
 * so the watcher never shuts down a descriptor that was reused). */
void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                 enum MHD_ConnectionNotificationCode code)
{
    fy_server *s = cls;
    peer *cn = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (!cn || cn == &refused_peer) return;
        *socket_context = NULL;
        /* MHD closes the socket after this: a duplicate keeps it open. */
        if (cn->linger) linger_add(s->linger, cn->fd, cn->linger);
        pthread_mutex_lock(&s->conn_lock);
        FY_LIST_UNLINK(s->conns, cn);
        s->nconns--;
        pthread_mutex_unlock(&s->conn_lock);
        free(cn);
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return;
    cn = calloc(1, sizeof *cn);
    pthread_mutex_lock(&s->conn_lock);
    int full = s->nconns >= (size_t)s->o.max_connections;
    if (full) {
        s->conns_refused++;
    } else if (cn) {
        *cn = (peer){.fd = ci->connect_fd, .since_ms = fy_now_ms(), .receiving = 1};
        FY_LIST_PUSH(s->conns, cn);
        s->nconns++;
        *socket_context = cn;
    }
    pthread_mutex_unlock(&s->conn_lock);
    if (full) {
        free(cn);
        *socket_context = &refused_peer;
        conn_refuse(s, ci->connect_fd);
    }
}

/* Shuts down the connections whose request is late: MHD then sees the end
 * of the stream in its own thread and closes them. */
void conns_check(fy_server *s)
{
    if (s->o.read_timeout_s <= 0) return;
    int64_t late = fy_now_ms() - (int64_t)s->o.read_timeout_s * 1000;
    pthread_mutex_lock(&s->conn_lock);
    for (peer *cn = s->conns; cn; cn = cn->next) {
        if (!cn->receiving || cn->cut || cn->since_ms > late) continue;
        shutdown(cn->fd, SHUT_RDWR);
        cn->cut = 1;
        s->conns_timed_out++;
    }
    pthread_mutex_unlock(&s->conn_lock);
}

/* An answer went out before the request's body was read: libmicrohttpd
 * will close the connection after it, and the rest of the body, which the
 * client may still be sending, is read and dropped first (linger.c). A
 * declared body longer than LINGER_BYTES is not waited for. */
void linger_arm(req *r)
{
    if (!r->cn) return;
    const char *cl = req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = req_header(r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    uint64_t n = cl ? strtoull(cl, NULL, 10) : 0;
    if (te || r->close) n = LINGER_BYTES;
    if (n && n <= LINGER_BYTES) r->cn->linger = n;
}
