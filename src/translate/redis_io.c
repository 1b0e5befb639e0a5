/* redis_io.c - a non-blocking hiredis connection under one deadline. */
#include "translate/redis_io.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "util/clock.h"

static int fail(rio *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(rio *io, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(io->err, sizeof io->err, fmt, ap);
    va_end(ap);
    rio_close(io);
    return -1;
}

void rio_close(rio *io)
{
    if (io->c) redisFree(io->c);
    io->c = NULL;
}

/* Waits until the socket is ready for events or deadline_us passes. */
static int wait_fd(rio *io, short events, int64_t deadline_us)
{
    for (;;) { /* bounded by the deadline; EINTR only repeats the wait */
        int64_t left = deadline_us - fy_now_us();
        if (left <= 0) return fail(io, "timed out");
        struct pollfd p = {io->c->fd, events, 0};
        int n = poll(&p, 1, (int)((left + 999) / 1000));
        if (n > 0) return 0;
        if (n < 0 && errno != EINTR) return fail(io, "poll: %s", strerror(errno));
    }
}

int rio_append(rio *io, int argc, const char **argv, const size_t *len)
{
    if (!io->c) return -1;
    if (redisAppendCommandArgv(io->c, argc, argv, len) != REDIS_OK)
        return fail(io, "cannot buffer a command: %s", io->c->errstr);
    return 0;
}

int rio_flush(rio *io, int64_t deadline_us)
{
    int done = 0;
    while (io->c && !done) { /* each pass writes, or waits under the deadline */
        if (redisBufferWrite(io->c, &done) != REDIS_OK) return fail(io, "write: %s", io->c->errstr);
        if (!done && wait_fd(io, POLLOUT, deadline_us)) return -1;
    }
    return io->c ? 0 : -1;
}

redisReply *rio_reply(rio *io, int64_t deadline_us)
{
    while (io->c) { /* each pass parses, or reads after a wait under the deadline */
        void *reply = NULL;
        if (redisGetReplyFromReader(io->c, &reply) != REDIS_OK) {
            fail(io, "bad reply: %s", io->c->errstr);
            return NULL;
        }
        if (reply) return reply;
        if (wait_fd(io, POLLIN, deadline_us)) return NULL;
        if (redisBufferRead(io->c) != REDIS_OK) {
            fail(io, "read: %s", io->c->errstr);
            return NULL;
        }
    }
    return NULL;
}

int rio_stale(rio *io)
{
    if (!io->c) return 0;
    struct pollfd p = {io->c->fd, POLLIN, 0};
    return poll(&p, 1, 0) != 0;
}

/* Sends AUTH / SELECT / PING and checks every answer. */
static int handshake(rio *io, const fy_redis_options *o, int64_t deadline_us)
{
    char db[16];
    snprintf(db, sizeof db, "%d", o->db);
    const char *auth[] = {"AUTH", o->user, o->password}, *auth1[] = {"AUTH", o->password};
    const char *sel[] = {"SELECT", db}, *ping[] = {"PING"};
    const char *sent[3];
    int n = 0, rc = 0;
    if (*o->password) {
        rc |= *o->user ? rio_append(io, 3, auth, NULL) : rio_append(io, 2, auth1, NULL);
        sent[n++] = "AUTH";
    }
    if (o->db) rc |= rio_append(io, 2, sel, NULL), sent[n++] = "SELECT";
    rc |= rio_append(io, 1, ping, NULL), sent[n++] = "PING";
    if (rc || rio_flush(io, deadline_us)) return -1;
    for (int i = 0; i < n; i++) {
        redisReply *r = rio_reply(io, deadline_us);
        if (!r) return -1;
        int bad = r->type == REDIS_REPLY_ERROR;
        if (bad) fail(io, "%s refused: %.80s", sent[i], r->str);
        freeReplyObject(r);
        if (bad) return -1;
    }
    return 0;
}

int rio_connect(rio *io, const fy_redis_options *o, int64_t deadline_us)
{
    rio_close(io);
    io->c = redisConnectNonBlock(o->host, o->port);
    if (!io->c) return fail(io, "out of memory");
    if (io->c->err) return fail(io, "connect: %s", io->c->errstr);
    if (wait_fd(io, POLLOUT, deadline_us)) return fail(io, "connect: timed out");
    int soerr = 0;
    socklen_t len = sizeof soerr;
    if (getsockopt(io->c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr)
        return fail(io, "connect: %s", strerror(soerr ? soerr : errno));
    redisEnableKeepAlive(io->c);
    return handshake(io, o, deadline_us);
}
