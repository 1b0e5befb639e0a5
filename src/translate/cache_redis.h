/* cache_redis.h - the shared tier: translations kept in Redis for every
 * replica (hiredis 0.14 from Debian: plain TCP, RESP2, no TLS).
 *
 * One I/O thread owns the one connection. A lookup (get_many) is one MGET:
 * the caller queues it and waits, at most timeout_ms (or until its own
 * deadline), for the I/O thread, which sends every lookup waiting at that
 * moment in one pipelined write, so concurrent requests share a round
 * trip. A caller that runs out of time counts its keys as errors and goes
 * on without them (the engine translates them). A store (put_many) queues
 * the values and returns at once; the I/O thread sends them as pipelined
 * `SET key value EX ttl` behind the lookups of its next round. The queue is
 * bounded: when it is full, values are dropped (counted).
 *
 * Failures. A round fails when it cannot connect, times out, loses the
 * connection, or gets an error reply to MGET, AUTH or SELECT; the
 * connection is then closed and the next round connects again. A failed
 * connect, or `failures` failed rounds in a row, opens the circuit
 * breaker: lookups count as errors at once and stores are dropped, without
 * touching the network, and one line is logged. Every retry_ms the I/O
 * thread tries to connect (AUTH, SELECT, PING) by itself; when that works
 * the breaker closes and one line is logged. An error reply to a SET
 * (e.g. Redis out of memory) is only counted: lookups still work.
 *
 * What comes back is checked: a value longer than value_max, with a NUL
 * byte or not valid UTF-8 counts as a miss. Tier name "redis".
 */
#ifndef FY_TRANSLATE_CACHE_REDIS_H
#define FY_TRANSLATE_CACHE_REDIS_H

#include <stddef.h>

#include "translate/cache.h"
#include "util/error.h"

typedef struct fy_redis_options {
    char host[256];     /* name, IPv4 or IPv6 address */
    int port;           /* default 6379 */
    char user[128];     /* "" : AUTH with the password alone (or no AUTH) */
    char password[256]; /* "" : no AUTH */
    int db;             /* SELECT (default 0) */
    int ttl_s;          /* EX of every SET (default 7 days; 0: no expiry) */
    int timeout_ms;     /* connecting, and each round trip (default 50) */
    size_t value_max;   /* longest value stored or accepted (default FY_CACHE_VALUE_MAX) */
    size_t queue_max;   /* values waiting to be sent (default 4096) */
    int failures;       /* failed rounds in a row that open the breaker (default 3) */
    int retry_ms;       /* how long the breaker stays open between tries (default 1000) */
    /* Called with one line (no newline) when the tier becomes usable or
     * unusable; NULL: silent. Runs on the I/O thread. */
    void (*log)(void *user, const char *line);
    void *log_user;
} fy_redis_options;

/* Fills *o with the defaults above and host "127.0.0.1". */
void fy_redis_options_default(fy_redis_options *o);

/* Sets host, port, user, password and db of *o from
 * redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] (HOST may be [IPv6]; USER and
 * PASSWORD may use %XX escapes; the port defaults to 6379, the db to 0).
 * Other fields are left alone. Returns 0, or FY_EINVAL with a message
 * (rediss:// is refused: this hiredis has no TLS). */
int fy_redis_parse_url(const char *url, fy_redis_options *o, fy_error *err);

/* Starts the tier: the I/O thread connects in the background (a Redis that
 * is down is not an error here: the breaker opens and the server goes on
 * without it). NULL with FY_EINVAL (bad options) or FY_ENOMEM. */
fy_cache *fy_cache_redis_new(const fy_redis_options *o, fy_error *err);

#endif
