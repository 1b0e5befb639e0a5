/* test_jobstore.c - the disk job store's leases as two processes sharing
 * one directory see them (two stores on it: flock()s of separate opens
 * exclude each other as across processes): a job created with its lease
 * cannot be taken by the other until its maker lets go, one created
 * without can; the maker's own lease renews; a removed job's lease is
 * gone with it; an ended job's state is not reopened; the size bound (FY_ESPACE). The Redis store
 * with no Redis to reach: every call says so (FY_ENET), err given or NULL (the ticker passes NULL),
 * and nothing crashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "translate/jobstore.h"
#include "../check.h"

static const char ID1[] = "0123456789abcdef0123456789abcdef";
static const char ID2[] = "fedcba9876543210fedcba9876543210";
static const char ID3[] = "00000000000000000000000000000003";
static const char ID4[] = "00000000000000000000000000000004";
static const char STATE[] = "{\"state\":\"queued\"}";

static int make(fy_jobstore *s, const char *id, int lease_ms, fy_error *err)
{
    return s->ops->create(s, id, STATE, "hello", 5, 0, lease_ms, err);
}

static int listed(fy_jobstore *s, const char *id)
{
    char(*ids)[33] = NULL;
    size_t n = 0;
    int found = 0;
    if (s->ops->list(s, 1, &ids, &n, NULL)) return -1;
    for (size_t i = 0; i < n; i++) found |= !strcmp(ids[i], id);
    free(ids);
    return found;
}

static void leases(fy_jobstore *a, fy_jobstore *b)
{
    fy_error err = {0};
    /* Created with its lease: the other store never gets it first. */
    CHECK(make(a, ID1, 1000, &err) == 0);
    CHECK(listed(b, ID1) == 1);
    CHECK(b->ops->lease(b, ID1, 1000, &err) == 0);
    CHECK(a->ops->lease(a, ID1, 1000, &err) == 1); /* renewed */
    char *state = NULL;
    CHECK(b->ops->get_state(b, ID1, &state, &err) == 0 && state && !strcmp(state, STATE));
    free(state);
    a->ops->unlease(a, ID1);
    CHECK(b->ops->lease(b, ID1, 1000, &err) == 1); /* its maker let go (or died) */
    CHECK(a->ops->lease(a, ID1, 1000, &err) == 0);
    b->ops->unlease(b, ID1);

    /* Created without: free for anyone. */
    CHECK(make(a, ID2, 0, &err) == 0);
    CHECK(b->ops->lease(b, ID2, 1000, &err) == 1);
    CHECK(a->ops->lease(a, ID2, 1000, &err) == 0);
    b->ops->unlease(b, ID2);

    /* Removed while leased: gone, lease and all. */
    CHECK(make(a, ID3, 1000, &err) == 0);
    CHECK(a->ops->remove(a, ID3, &err) == 0);
    CHECK(listed(b, ID3) == 0);
    fy_error e = {0};
    CHECK(b->ops->lease(b, ID3, 1000, &e) == FY_ENOTFOUND);
    CHECK(make(b, ID3, 1000, &err) == 0); /* the id is free again */
    CHECK(a->ops->lease(a, ID3, 1000, &err) == 0);
}

/* An open state never replaces an ended one (a run that stalled past its
 * lease must not reopen a job finished meanwhile): 1, nothing written. */
static void ended_stays_ended(fy_jobstore *s)
{
    fy_error err = {0};
    char *state = NULL;
    CHECK(make(s, ID4, 0, &err) == 0);
    CHECK(s->ops->put_state(s, ID4, "{\"state\":\"translating\"}", 1, 0, &err) == 0);
    CHECK(s->ops->put_state(s, ID4, "{\"state\":\"done\"}", 0, 0, &err) == 0);
    CHECK(s->ops->put_state(s, ID4, "{\"state\":\"translating\"}", 1, 0, &err) == 1);
    CHECK(s->ops->get_state(s, ID4, &state, &err) == 0 && state && strstr(state, "done"));
    free(state);
    CHECK(s->ops->put_state(s, ID4, "{\"state\":\"done\",\"again\":1}", 0, 0, &err) == 0);
    CHECK(s->ops->remove(s, ID4, &err) == 0);
}

static void bound(const char *dir)
{
    fy_error err = {0};
    fy_jobstore *s = fy_jobstore_dir_open(dir, 12, &err); /* 5 bytes twice, the state too */
    CHECK(s != NULL);
    if (!s) return;
    fy_error e = {0};
    CHECK(make(s, ID1, 1000, &e) == FY_ESPACE && strstr(e.msg, "full"));
    CHECK(listed(s, ID1) == 0);
    fy_jobstore_free(s);
}

/* A loopback port nothing listens on (bound, then closed). */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    int port = -1;
    if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) &&
        !getsockname(fd, (struct sockaddr *)&a, &n))
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

static void redis_down(void)
{
    fy_redis_options o;
    fy_redis_options_default(&o);
    snprintf(o.host, sizeof o.host, "127.0.0.1");
    o.port = closed_port();
    CHECK(o.port > 0);
    fy_error err = {0};
    fy_jobstore *s = fy_jobstore_redis_open(&o, 1 << 20, &err);
    CHECK(s != NULL);
    if (!s) return;
    char(*ids)[33] = NULL;
    size_t n = 0;
    char *state = NULL;
    CHECK(s->ops->list(s, 1, &ids, &n, NULL) == FY_ENET);
    CHECK(s->ops->list(s, 0, &ids, &n, &err) == FY_ENET && strstr(err.msg, "redis"));
    CHECK(s->ops->get_state(s, ID1, &state, NULL) == FY_ENET);
    CHECK(s->ops->lease(s, ID1, 1000, NULL) == FY_ENET);
    CHECK(s->ops->canceled(s, ID1, NULL) == FY_ENET);
    CHECK(s->ops->create(s, ID1, STATE, "hello", 5, 0, 1000, NULL) == FY_ENET);
    CHECK(s->ops->remove(s, ID1, NULL) == FY_ENET);
    CHECK(s->ops->get_state(s, "not an id", &state, NULL) == FY_ENOTFOUND);
    s->ops->unlease(s, ID1);
    fy_jobstore_free(s);
}

int main(void)
{
    char dir[] = "/tmp/fanyi-jobstore-XXXXXX";
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    char jobs[64], small[64];
    snprintf(jobs, sizeof jobs, "%s/jobs", dir);
    snprintf(small, sizeof small, "%s/small", dir);
    fy_error err = {0};
    fy_jobstore *a = fy_jobstore_dir_open(jobs, 1 << 20, &err);
    fy_jobstore *b = a ? fy_jobstore_dir_open(jobs, 1 << 20, &err) : NULL;
    CHECK(a && b);
    if (a && b) leases(a, b);
    if (a) ended_stays_ended(a);
    fy_jobstore_free(a);
    fy_jobstore_free(b);
    bound(small);
    redis_down();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "cannot remove %s\n", dir);
    fy_jobstore_free(NULL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
