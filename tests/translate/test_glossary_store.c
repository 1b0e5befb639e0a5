/* test_glossary_store.c - stored glossaries (translate/glossary_store.h):
 * create, list by direction, get, update (replace, merge), delete; names and
 * limits; the files (persistence across a reopen, atomic replacement, a
 * damaged file skipped and named); and two stores sharing a real
 * redis-server this test starts on a free loopback port (a write on one is
 * read by the other, deletes too, and a Redis that restarted empty gets the
 * glossaries back). */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "translate/glossary_store.h"

extern char **environ;

static fy_glossary *dict(const char *src, const char *tgt, const char *tsv)
{
    fy_glossary *g = fy_glossary_new(src, tgt, NULL);
    if (!g || fy_glossary_parse(g, tsv, strlen(tsv), FY_GLOSSARY_TSV, NULL) ||
        fy_glossary_compile(g, NULL)) {
        fy_glossary_unref(g);
        return NULL;
    }
    return g;
}

static char logged[2048];
static void log_line(void *user, const char *line)
{
    (void)user;
    snprintf(logged + strlen(logged), sizeof logged - strlen(logged), "%s\n", line);
}

static fy_glossary_store *open_store(const char *dir, const fy_redis_options *ro)
{
    fy_glossary_store_options o;
    fy_glossary_store_options_default(&o);
    o.dir = dir;
    o.redis = ro;
    o.max_glossaries = 3;
    o.log = log_line;
    return fy_glossary_store_open(&o, NULL);
}

/* The target of source term src in glossary id's src_lang -> tgt_lang, or NULL. */
static const char *lookup(fy_glossary_store *s, const char *id, const char *sl, const char *tl,
                          const char *src)
{
    static char out[128];
    fy_glossary *g = fy_glossary_store_get(s, id, sl, tl, NULL);
    const char *a, *b, *found = NULL;
    for (size_t i = 0; g && i < fy_glossary_count(g) && !found; i++)
        if (!fy_glossary_entry(g, i, &a, &b) && !strcmp(a, src)) found = b;
    if (found) snprintf(out, sizeof out, "%s", found);
    fy_glossary_unref(g);
    return found ? out : NULL;
}

static void test_local(const char *dir)
{
    fy_glossary_store *s = open_store(dir, NULL);
    fy_error err = {0};
    fy_glossary *ende = dict("en", "de", "power plant\tKraftwerk\napple\tApfel\n");
    fy_glossary *deen = dict("de", "en", "Kraftwerk\tpower plant\n");
    fy_glossary *both[] = {ende, deen};
    fy_glossary_meta m;
    check(s && !fy_glossary_store_create(s, "Energy", both, 2, &m, &err), "create: %s", err.msg);
    check(strlen(m.id) == 36 && m.id[14] == '4' && m.ndicts == 2 && m.dicts[0].entries == 2 &&
              !strcmp(m.dicts[1].source, "de") && m.created_ms > 0,
          "its description: %s", m.id);
    char id[FY_GSTORE_ID_MAX];
    snprintf(id, sizeof id, "%s", m.id);
    check(fy_glossary_store_create(s, "", both, 2, NULL, &err) == FY_EINVAL &&
              strstr(err.msg, "name is empty"),
          "empty name: %s", err.msg);
    check(fy_glossary_store_create(s, "a\nb", both, 1, NULL, &err) == FY_EINVAL, "control char");
    fy_glossary *twice[] = {ende, ende};
    check(fy_glossary_store_create(s, "x", twice, 2, NULL, &err) == FY_EINVAL &&
              strstr(err.msg, "two dictionaries for en -> de"),
          "one dictionary per direction: %s", err.msg);
    check(!strcmp(lookup(s, id, "en", "de", "apple"), "Apfel"), "get en->de");
    check(fy_glossary_store_get(s, id, "en", "fr", &err) == NULL && err.code == FY_ENOTFOUND &&
              strstr(err.msg, "has no dictionary for en -> fr"),
          "no such direction: %s", err.msg);
    check(fy_glossary_store_get(s, "nope", "en", "de", &err) == NULL &&
              !strcmp(err.msg, "no glossary 'nope'"),
          "no such glossary: %s", err.msg);
    fy_glossary_meta *list;
    size_t n;
    fy_glossary *fr = dict("en", "fr", "apple\tpomme\n");
    check(!fy_glossary_store_create(s, "French", &fr, 1, &m, &err), "second");
    check(!fy_glossary_store_list(s, "en", "de", &list, &n, &err) && n == 1 &&
              !strcmp(list[0].name, "Energy"),
          "list by direction");
    free(list);
    check(!fy_glossary_store_list(s, NULL, NULL, &list, &n, &err) && n == 2, "list all");
    free(list);
    /* Merge: new entries win; replace: the dictionary is the new one. */
    fy_glossary *more = dict("en", "de", "apple\tApfelbaum\npear\tBirne\n");
    check(!fy_glossary_store_update(s, id, "Energy 2", &more, 1, FY_GSTORE_MERGE, &m, &err) &&
              m.dicts[0].entries == 3 && !strcmp(m.name, "Energy 2"),
          "merge: %s", err.msg);
    check(!strcmp(lookup(s, id, "en", "de", "apple"), "Apfelbaum") &&
              !strcmp(lookup(s, id, "en", "de", "power plant"), "Kraftwerk"),
          "merged entries");
    check(!fy_glossary_store_update(s, id, NULL, &more, 1, FY_GSTORE_REPLACE, &m, &err) &&
              m.dicts[0].entries == 2 && !lookup(s, id, "en", "de", "power plant"),
          "replace");
    check(!fy_glossary_store_delete_dict(s, id, "de", "en", &err) &&
              !fy_glossary_store_meta(s, id, &m, &err) && m.ndicts == 1,
          "delete a dictionary");
    fy_glossary *third = dict("en", "it", "a\tb\n"), *fourth = dict("en", "es", "a\tb\n");
    check(!fy_glossary_store_create(s, "Third", &third, 1, NULL, &err) &&
              fy_glossary_store_create(s, "Fourth", &fourth, 1, NULL, &err) == FY_ELIMIT &&
              strstr(err.msg, "at most 3 glossaries"),
          "the limit: %s", err.msg);
    /* Reopen: everything is back from the files. */
    fy_glossary_store_free(s);
    s = open_store(dir, NULL);
    check(s && !fy_glossary_store_meta(s, id, &m, &err) && !strcmp(m.name, "Energy 2") &&
              !strcmp(lookup(s, id, "en", "de", "pear"), "Birne"),
          "persistence across a reopen: %s", err.msg);
    check(!fy_glossary_store_list(s, NULL, NULL, &list, &n, &err) && n == 3, "three after reopen");
    free(list);
    /* A damaged file is skipped, named in the log, and left alone. */
    char path[512];
    snprintf(path, sizeof path, "%s/00000000-0000-4000-8000-000000000000.glossary", dir);
    FILE *f = fopen(path, "w");
    fputs("fanyi glossary 1\nid 00000000-0000-4000-8000-000000000000\nname x\ndict en de 5\na\tb\n",
          f);
    fclose(f);
    fy_glossary_store_free(s);
    logged[0] = '\0';
    s = open_store(dir, NULL);
    check(NULL != strstr(logged,
                         "00000000-0000-4000-8000-000000000000.glossary: line 5: the file ends "
                         "inside a dictionary; skipped"),
          "a damaged file is named: %s", logged);
    check(access(path, F_OK) == 0, "and left where it is");
    unlink(path);
    check(!fy_glossary_store_delete(s, id, &err) &&
              fy_glossary_store_meta(s, id, &m, &err) == FY_ENOTFOUND,
          "delete");
    snprintf(path, sizeof path, "%s/%s.glossary", dir, id);
    check(access(path, F_OK) != 0, "its file is gone");
    fy_glossary_store_free(s);
    fy_glossary_unref(ende);
    fy_glossary_unref(deen);
    fy_glossary_unref(fr);
    fy_glossary_unref(more);
    fy_glossary_unref(third);
    fy_glossary_unref(fourth);
}

/* ---- Redis ------------------------------------------------------------------------ */

static pid_t redis_pid;

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

static int redis_start(int port)
{
    char p[16];
    snprintf(p, sizeof p, "%d", port);
    const char *argv[] = {"redis-server", "--bind", "127.0.0.1",    "--port", p,
                          "--save",       "",       "--appendonly", "no",     NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&redis_pid, "redis-server", &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) return -1;
    redisContext *c = NULL;
    for (int i = 0; i < 500 && !(c = client(port)); i++) usleep(10000);
    if (c) redisFree(c);
    return c ? 0 : -1;
}

static void redis_kill(void)
{
    if (redis_pid <= 0) return;
    kill(redis_pid, SIGKILL);
    waitpid(redis_pid, NULL, 0);
    redis_pid = 0;
}

static void test_shared(const char *dir_a, const char *dir_b)
{
    int port = free_port();
    if (redis_start(port)) {
        check(0, "cannot start redis-server (scripts/setup.sh installs it)");
        return;
    }
    fy_redis_options ro;
    fy_redis_options_default(&ro);
    ro.port = port;
    fy_glossary_store *a = open_store(dir_a, &ro), *b = open_store(dir_b, &ro);
    fy_error err = {0};
    fy_glossary *d = dict("en", "de", "apple\tApfel\n");
    fy_glossary_meta m;
    check(a && b && !fy_glossary_store_create(a, "Shared", &d, 1, &m, &err), "create on A: %s",
          err.msg);
    char id[FY_GSTORE_ID_MAX];
    snprintf(id, sizeof id, "%s", m.id);
    check(lookup(b, id, "en", "de", "apple") &&
              !strcmp(lookup(b, id, "en", "de", "apple"), "Apfel"),
          "B reads what A wrote");
    fy_glossary *d2 = dict("en", "de", "apple\tApfelmus\n");
    check(!fy_glossary_store_update(b, id, NULL, &d2, 1, FY_GSTORE_REPLACE, NULL, &err),
          "update on B: %s", err.msg);
    check(!strcmp(lookup(a, id, "en", "de", "apple"), "Apfelmus"), "A reads B's update");
    fy_glossary_meta *list;
    size_t n;
    check(!fy_glossary_store_list(b, NULL, NULL, &list, &n, &err) && n == 1, "B lists it");
    free(list);
    /* Redis restarts empty: A puts its glossary back on its next read. */
    redisContext *c = client(port);
    redisReply *r = c ? redisCommand(c, "FLUSHALL") : NULL;
    freeReplyObject(r);
    check(!strcmp(lookup(a, id, "en", "de", "apple"), "Apfelmus"), "A still has it");
    r = c ? redisCommand(c, "SISMEMBER fanyi:glossaries %s", id) : NULL;
    check(r && r->type == REDIS_REPLY_INTEGER && r->integer == 1, "and put it back into Redis");
    freeReplyObject(r);
    check(!fy_glossary_store_delete(b, id, &err), "delete on B: %s", err.msg);
    check(fy_glossary_store_get(a, id, "en", "de", &err) == NULL && err.code == FY_ENOTFOUND,
          "A sees the delete");
    char path[512];
    snprintf(path, sizeof path, "%s/%s.glossary", dir_a, id);
    check(access(path, F_OK) != 0, "A dropped its file of a glossary deleted elsewhere");
    /* Redis down: writes fail (the replicas never disagree), reads serve
     * what is in memory. */
    fy_glossary *d3 = dict("en", "fr", "apple\tpomme\n");
    check(!fy_glossary_store_create(a, "Kept", &d3, 1, &m, &err), "create: %s", err.msg);
    snprintf(id, sizeof id, "%s", m.id);
    if (c) redisFree(c);
    redis_kill();
    check(fy_glossary_store_create(a, "Lost", &d3, 1, NULL, &err) == FY_ENET &&
              strstr(err.msg, "(Redis) cannot be reached"),
          "a write without Redis: %s", err.msg);
    check(!strcmp(lookup(a, id, "en", "fr", "apple"), "pomme"), "a read without Redis");
    fy_glossary_store_free(a);
    fy_glossary_store_free(b);
    fy_glossary_unref(d);
    fy_glossary_unref(d2);
    fy_glossary_unref(d3);
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') snprintf(path, sizeof path, "%s/%s", dir, e->d_name), unlink(path);
    if (d) closedir(d);
    rmdir(dir);
}

int main(void)
{
    char base[] = "/tmp/fanyi-gstore-XXXXXX";
    if (!mkdtemp(base)) return 1;
    char dir[256], a[256], b[256];
    snprintf(dir, sizeof dir, "%s/local/glossaries", base); /* created on the first write */
    snprintf(a, sizeof a, "%s/a", base);
    snprintf(b, sizeof b, "%s/b", base);
    test_local(dir);
    test_shared(a, b);
    rm_dir(dir);
    char local[256];
    snprintf(local, sizeof local, "%s/local", base);
    rmdir(local);
    rm_dir(a);
    rm_dir(b);
    rmdir(base);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
