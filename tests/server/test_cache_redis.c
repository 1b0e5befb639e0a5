/* test_cache_redis.c - the Redis tier against a real redis-server this test
 * starts on a free loopback port (and kills): round trips, TTL, what comes
 * back is checked, the size bound, AUTH and SELECT, a Redis that is down
 * (breaker, one log line, recovery by itself), one that accepts connections
 * but never answers (deadlines hold), and concurrent callers (TSan). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "translate/cache_key.h"
#include "translate/cache_redis.h"
#include "util/clock.h"
#include "../check.h"

extern char **environ;

/* Waits up to ms milliseconds for cond, checking every 10 ms. */
#define WAIT_FOR(cond, ms)                                                                         \
    do {                                                                                           \
        for (int w_ = 0; w_ < (ms) / 10 && !(cond); w_++) usleep(10000);                           \
    } while (0)

/* ---- a redis-server of our own --------------------------------------------- */

static pid_t server_pid;

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static redisContext *client(int port)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c && c->err) {
        redisFree(c);
        return NULL;
    }
    return c;
}

/* Starts redis-server on 127.0.0.1:port (password: NULL for none) and
 * waits until it answers; 0 or -1. */
static int server_start(int port, const char *password)
{
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    const char *argv[] = {"redis-server", "--bind", "127.0.0.1",     "--port", p,   "--save", "",
                          "--appendonly", "no",     "--requirepass", password, NULL};
    if (!password) argv[9] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&server_pid, "redis-server", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        fprintf(stderr, "cannot start redis-server (scripts/setup.sh installs it)\n");
        return -1;
    }
    redisContext *c = NULL;
    for (int i = 0; i < 500 && !(c = client(port)); i++) usleep(10000);
    if (c) redisFree(c);
    return c ? 0 : -1;
}

static void server_kill(void)
{
    if (server_pid <= 0) return;
    kill(server_pid, SIGKILL);
    waitpid(server_pid, NULL, 0);
    server_pid = 0;
}

/* ---- the tier under test --------------------------------------------------- */

typedef struct logbook {
    pthread_mutex_t lock;
    int lines, unavailable, again;
} logbook;

static void log_line(void *user, const char *line)
{
    logbook *b = user;
    pthread_mutex_lock(&b->lock);
    b->lines++;
    b->unavailable += strstr(line, "unavailable") != NULL;
    b->again += strstr(line, "available again") != NULL;
    pthread_mutex_unlock(&b->lock);
}

static int log_count(logbook *b, int *unavailable, int *again)
{
    pthread_mutex_lock(&b->lock);
    int n = b->lines;
    if (unavailable) *unavailable = b->unavailable;
    if (again) *again = b->again;
    pthread_mutex_unlock(&b->lock);
    return n;
}

static fy_redis_options opts(int port, logbook *b)
{
    fy_redis_options o;
    fy_redis_options_default(&o);
    o.port = port;
    o.timeout_ms = 2000; /* generous: sanitizer builds on a loaded machine are slow, and a
                            lookup over it would be an error where a count is checked */
    o.retry_ms = 100;
    if (b) {
        memset(b, 0, sizeof *b);
        pthread_mutex_init(&b->lock, NULL);
        o.log = log_line;
        o.log_user = b;
    }
    return o;
}

static fy_cache_stats st(fy_cache *c)
{
    fy_cache_stats s;
    fy_cache_tier_stats(c, &s, 1);
    return s;
}

#define MODEL "zh-en:00112233445566778899aabbccddeeff"

static void test_round_trip(int port)
{
    fy_redis_options o = opts(port, NULL);
    o.ttl_s = 1000;
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    WAIT_FOR(st(c).up, 5000);
    CHECK(st(c).up && !strcmp(st(c).tier, "redis") && st(c).remote);
    fy_cache_key k[4] = {
        {MODEL, "你好。"}, {MODEL, "再见。"}, {"en-zh:x", "你好。"}, {MODEL, "无"}};
    const char *v[3] = {"Hello.", "Goodbye.", "你好。"};
    fy_cache_put_many(c, k, v, 3);
    WAIT_FOR(st(c).writes == 3, 5000);
    CHECK(st(c).writes == 3 && st(c).writes_dropped == 0);
    /* Stored under the documented key, with the TTL. */
    redisContext *r = client(port);
    char key[FY_CACHE_REDIS_KEY_MAX];
    fy_cache_redis_key(MODEL, "你好。", key);
    redisReply *rep = redisCommand(r, "GET %s", key);
    CHECK(rep && rep->type == REDIS_REPLY_STRING && !strcmp(rep->str, "Hello."));
    freeReplyObject(rep);
    rep = redisCommand(r, "TTL %s", key);
    CHECK(rep && rep->type == REDIS_REPLY_INTEGER && rep->integer > 0 && rep->integer <= 1000);
    freeReplyObject(rep);
    redisFree(r);
    char *got[4];
    CHECK(fy_cache_get_many(c, k, 4, got, 0) == 3);
    CHECK(got[0] && !strcmp(got[0], "Hello.") && got[1] && !strcmp(got[1], "Goodbye."));
    CHECK(got[2] && !strcmp(got[2], "你好。") && !got[3]); /* models do not share */
    for (int i = 0; i < 4; i++) free(got[i]);
    /* A round's time is counted after its callers are woken. */
    WAIT_FOR(st(c).rtt_count >= 2, 5000);
    fy_cache_stats s = st(c);
    CHECK(s.hits == 3 && s.misses == 1 && s.errors == 0 && s.rtt_count >= 2);
    uint64_t in_buckets = 0;
    for (int i = 0; i < FY_CACHE_RTT_BUCKETS; i++) in_buckets += s.rtt[i];
    CHECK(in_buckets == s.rtt_count && s.rtt_sum > 0);
    fy_cache_free(c);
}

/* Values another writer put there are used only when they could be ours. */
static void test_checked_values(int port)
{
    fy_redis_options o = opts(port, NULL);
    o.value_max = 16;
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    WAIT_FOR(st(c).up, 5000);
    const char *texts[] = {"ok", "nul", "utf8", "long"};
    const char *vals[] = {"fine", "a\0b", "\xff\xfe", "0123456789abcdefg"};
    size_t lens[] = {4, 3, 2, 17};
    redisContext *r = client(port);
    fy_cache_key k[4];
    for (int i = 0; i < 4; i++) {
        char key[FY_CACHE_REDIS_KEY_MAX];
        fy_cache_redis_key(MODEL, texts[i], key);
        freeReplyObject(redisCommand(r, "SET %s %b", key, vals[i], lens[i]));
        k[i] = (fy_cache_key){MODEL, texts[i]};
    }
    char *got[4];
    CHECK(fy_cache_get_many(c, k, 4, got, 0) == 1);
    CHECK(got[0] && !strcmp(got[0], "fine") && !got[1] && !got[2] && !got[3]);
    free(got[0]);
    /* Over the bound: not sent at all. */
    fy_cache_key big = {MODEL, "big"};
    const char *bigv = "0123456789abcdefg";
    fy_cache_put_many(c, &big, &bigv, 1);
    fy_cache_key small = {MODEL, "small"};
    const char *smallv = "0123456789abcdef";
    fy_cache_put_many(c, &small, &smallv, 1);
    WAIT_FOR(st(c).writes == 1, 5000);
    usleep(50000);
    CHECK(st(c).writes == 1);
    char key[FY_CACHE_REDIS_KEY_MAX];
    fy_cache_redis_key(MODEL, "big", key);
    redisReply *rep = redisCommand(r, "EXISTS %s", key);
    CHECK(rep && rep->integer == 0);
    freeReplyObject(rep);
    redisFree(r);
    fy_cache_free(c);
}

static void test_auth_and_db(void)
{
    int port = free_port();
    CHECK(server_start(port, "s3cret") == 0);
    logbook b;
    fy_redis_options o = opts(port, &b);
    snprintf(o.password, sizeof o.password, "wrong");
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    WAIT_FOR(st(c).breaker_open, 5000);
    fy_cache_stats s = st(c);
    CHECK(s.breaker_open && !s.up && strstr(s.last_error, "AUTH refused"));
    fy_cache_free(c);
    CHECK(log_count(&b, NULL, NULL) == 1);

    o = opts(port, NULL);
    fy_redis_parse_url("redis://:s3cret@127.0.0.1", &o, NULL);
    o.port = port;
    o.db = 3;
    c = fy_cache_redis_new(&o, NULL);
    fy_cache_put(c, MODEL, "db", "three");
    WAIT_FOR(st(c).writes == 1, 5000);
    CHECK(st(c).writes == 1 && !st(c).breaker_open);
    redisContext *r = client(port);
    char key[FY_CACHE_REDIS_KEY_MAX];
    fy_cache_redis_key(MODEL, "db", key);
    freeReplyObject(redisCommand(r, "AUTH s3cret"));
    freeReplyObject(redisCommand(r, "SELECT 3"));
    redisReply *rep = redisCommand(r, "GET %s", key);
    CHECK(rep && rep->type == REDIS_REPLY_STRING && !strcmp(rep->str, "three"));
    freeReplyObject(rep);
    redisFree(r);
    fy_cache_free(c);
    server_kill();
}

/* Down at start, up later, killed, up again: no lookup waits, one line per
 * change, and the tier comes back by itself. */
static void test_down_and_back(void)
{
    int port = free_port();
    logbook b;
    fy_redis_options o = opts(port, &b);
    o.timeout_ms = 2000; /* far above what answering "at once" may take on a busy machine */
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    WAIT_FOR(st(c).breaker_open, 5000);
    CHECK(st(c).breaker_open && st(c).breaker_opened == 1);
    int64_t t0 = fy_now_us();
    CHECK(fy_cache_get(c, MODEL, "x") == NULL);
    CHECK(fy_now_us() - t0 < 500000); /* the open breaker answers without the timeout */
    fy_cache_put(c, MODEL, "x", "y");
    fy_cache_stats s = st(c);
    CHECK(s.errors == 1 && s.writes_dropped == 1 && s.hits == 0);
    usleep(350000); /* several retries fail: still one line */
    int unavailable, again;
    CHECK(log_count(&b, &unavailable, &again) == 1 && unavailable == 1);

    CHECK(server_start(port, NULL) == 0);
    WAIT_FOR(st(c).up, 5000);
    CHECK(st(c).up && !st(c).breaker_open);
    fy_cache_put(c, MODEL, "x", "y");
    WAIT_FOR(st(c).writes == 1, 5000);
    char *v = fy_cache_get(c, MODEL, "x");
    CHECK(v && !strcmp(v, "y"));
    free(v);
    /* the line is written after the state changes: wait for it too */
    WAIT_FOR(log_count(&b, NULL, NULL) >= 2, 5000);
    CHECK(log_count(&b, &unavailable, &again) == 2 && again == 1);

    server_kill();
    CHECK(fy_cache_get(c, MODEL, "x") == NULL); /* the connection is gone: an error */
    WAIT_FOR(st(c).breaker_open, 5000);
    CHECK(st(c).breaker_open && st(c).breaker_opened == 2 && st(c).errors >= 2);
    CHECK(server_start(port, NULL) == 0);
    WAIT_FOR(st(c).up, 5000);
    CHECK(st(c).up);
    WAIT_FOR(log_count(&b, NULL, NULL) >= 4, 5000);
    CHECK(log_count(&b, &unavailable, &again) == 4 && unavailable == 2 && again == 2);
    fy_cache_free(c);
    server_kill();
}

/* A server that accepts connections (the kernel does, from the listen
 * backlog) and never answers. */
static void test_never_answers(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 16) == 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    logbook b;
    fy_redis_options o = opts(ntohs(a.sin_port), &b);
    o.timeout_ms = 2000; /* the I/O thread is stuck in its first handshake for 2 s */
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    fy_cache_key k = {MODEL, "x"};
    char *v = NULL;
    int64_t t0 = fy_now_us();
    int rc = fy_cache_get_many(c, &k, 1, &v, fy_now_ms() + 50); /* the caller's deadline */
    int64_t waited = fy_now_us() - t0;
    CHECK(rc < 0 && v == NULL && waited >= 40000 && waited < 1000000);
    WAIT_FOR(st(c).breaker_open, 5000);
    fy_cache_stats s = st(c);
    CHECK(s.breaker_open && strstr(s.last_error, "timed out") && s.errors == 1);
    fy_cache_free(c);
    CHECK(log_count(&b, NULL, NULL) == 1);

    o.timeout_ms = 100; /* without a deadline: the tier's own timeout */
    c = fy_cache_redis_new(&o, NULL);
    t0 = fy_now_us();
    rc = fy_cache_get_many(c, &k, 1, &v, 0);
    waited = fy_now_us() - t0;
    CHECK(rc < 0 && waited < 1000000);
    fy_cache_free(c);
    close(fd);
}

typedef struct hammer {
    fy_cache *c;
    int id, errors, wrong;
} hammer;

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    for (int i = 0; i < 100; i++) {
        char text[32], value[32];
        snprintf(text, sizeof text, "t%d-%d", h->id, i % 10);
        snprintf(value, sizeof value, "v%d-%d", h->id, i % 10);
        fy_cache_key k = {MODEL, text};
        char *got = NULL;
        if (fy_cache_get_many(h->c, &k, 1, &got, 0) < 0) h->errors++;
        if (got && strcmp(got, value)) h->wrong++;
        if (!got) fy_cache_put(h->c, MODEL, text, value);
        free(got);
    }
    return NULL;
}

static void test_concurrent(int port)
{
    fy_redis_options o = opts(port, NULL);
    fy_cache *c = fy_cache_redis_new(&o, NULL);
    WAIT_FOR(st(c).up, 5000);
    hammer h[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        h[i] = (hammer){c, i, 0, 0};
        pthread_create(&t[i], NULL, hammer_main, &h[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) CHECK(h[i].errors == 0 && h[i].wrong == 0);
    fy_cache_stats s = st(c);
    CHECK(s.hits + s.misses == 400 && s.hits > 0);
    fy_cache_free(c);
}

int main(void)
{
    signal(SIGPIPE, SIG_DFL); /* the tier must not need the caller to ignore it */
    int port = free_port();
    if (server_start(port, NULL)) {
        fprintf(stderr, "FAIL: no redis-server\n");
        return 1;
    }
    test_round_trip(port);
    test_checked_values(port);
    test_concurrent(port);
    server_kill();
    test_auth_and_db();
    test_down_and_back();
    test_never_answers();
    server_kill();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
