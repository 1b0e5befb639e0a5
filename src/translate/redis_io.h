/* redis_io.h - one hiredis connection driven with deadlines (internal to
 * the Redis tier; cache_redis.c is its only user).
 *
 * hiredis' blocking calls wait per read and write (SO_RCVTIMEO), so a
 * server that trickles bytes could hold a caller far past its timeout.
 * Here the socket is non-blocking and every wait is a poll() until one
 * absolute deadline (fy_now_us() time) for the whole exchange. Any failure
 * leaves a one-line reason in err and the connection unusable (close it).
 */
#ifndef FY_TRANSLATE_REDIS_IO_H
#define FY_TRANSLATE_REDIS_IO_H

#include <hiredis/hiredis.h>
#include <stdint.h>

#include "translate/cache_redis.h"

typedef struct rio {
    redisContext *c; /* NULL when not connected */
    char err[128];
} rio;

/* Connects to o's server and authenticates (AUTH, SELECT, PING) before
 * deadline_us. 0 or -1 (reason in io->err, io closed). */
int rio_connect(rio *io, const fy_redis_options *o, int64_t deadline_us);

/* Closes the connection (harmless when closed). */
void rio_close(rio *io);

/* 1 when an idle connection has something to read (the server closed it,
 * e.g. its idle timeout): it must not carry the next round. */
int rio_stale(rio *io);

/* Buffers one command (argv copied). 0 or -1. */
int rio_append(rio *io, int argc, const char **argv, const size_t *len);

/* Writes everything buffered before deadline_us. 0 or -1. */
int rio_flush(rio *io, int64_t deadline_us);

/* The next reply (free with freeReplyObject), or NULL after a failure or
 * at deadline_us. */
redisReply *rio_reply(rio *io, int64_t deadline_us);

#endif
