/* test_cache.c - the cache interface: the memory LRU behind the operations
 * table (hits, misses, LRU order, byte budget, value bound, get_many), the
 * tiers with a fake second tier (what each tier is asked, promotion,
 * stores, a tier that fails), the keys (a model's name from its files'
 * content, direction and options; Redis keys) and --redis URLs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "translate/cache.h"
#include "translate/cache_key.h"
#include "translate/cache_redis.h"
#include "../check.h"

static int has(fy_cache *c, const char *model, const char *key, const char *want)
{
    char *v = fy_cache_get(c, model, key);
    int ok = want ? v && !strcmp(v, want) : v == NULL;
    free(v);
    return ok;
}

static fy_cache_stats stats0(fy_cache *c)
{
    fy_cache_stats st[FY_CACHE_TIERS_MAX];
    fy_cache_tier_stats(c, st, FY_CACHE_TIERS_MAX);
    return st[0];
}

/* ---- the LRU --------------------------------------------------------------- */

static void test_basic(void)
{
    fy_cache *c = fy_cache_lru_new(1 << 20, NULL);
    CHECK(c != NULL);
    CHECK(has(c, "m", "你好", NULL));
    fy_cache_put(c, "m", "你好", "Hello");
    CHECK(has(c, "m", "你好", "Hello"));
    CHECK(has(c, "other", "你好", NULL)); /* models never share answers */
    fy_cache_put(c, "m", "你好", "Hi");   /* replace */
    CHECK(has(c, "m", "你好", "Hi"));
    fy_cache_stats st = stats0(c);
    CHECK(st.hits == 2 && st.misses == 2 && st.errors == 0 && st.entries == 1 && st.inserts == 2);
    CHECK(!strcmp(st.tier, "memory") && !st.remote);
    /* model "ab" + sentence "c" must differ from model "a" + sentence "bc" */
    fy_cache_put(c, "ab", "c", "x");
    CHECK(has(c, "a", "bc", NULL));
    CHECK(fy_cache_tier_stats(c, &st, 1) == 1);
    fy_cache_free(c);
    fy_cache_free(NULL);
    CHECK(fy_cache_get(NULL, "m", "x") == NULL); /* no cache: every key misses */
    fy_cache_put(NULL, "m", "x", "y");
    CHECK(fy_cache_tier_stats(NULL, &st, 1) == 0);
}

static void test_lru_budget(void)
{
    /* Each entry costs overhead + ~10 bytes; a 1000-byte budget holds few. */
    fy_cache *c = fy_cache_lru_new(1000, NULL);
    char key[32], val[32];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%03d", i);
        snprintf(val, sizeof val, "v%03d", i);
        fy_cache_put(c, "m", key, val);
        if (i >= 1) CHECK(has(c, "m", "k000", "v000")); /* keep k000 hot */
    }
    fy_cache_stats st = stats0(c);
    CHECK(st.bytes <= 1000);
    CHECK(st.evictions > 0);
    CHECK(st.entries >= 2);
    CHECK(has(c, "m", "k000", "v000")); /* recently used survives */
    CHECK(has(c, "m", "k199", "v199")); /* newest survives */
    CHECK(has(c, "m", "k001", NULL));   /* old and cold went */
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    fy_cache_put(c, "m", "big", big); /* larger than the budget: not stored */
    CHECK(has(c, "m", "big", NULL));
    CHECK(has(c, "m", "k199", "v199"));
    fy_cache_free(c);
}

static void test_value_bound(void)
{
    fy_cache *c = fy_cache_lru_new(64 << 20, NULL);
    char *v = malloc(FY_CACHE_VALUE_MAX + 2);
    memset(v, 'y', FY_CACHE_VALUE_MAX + 1);
    v[FY_CACHE_VALUE_MAX + 1] = '\0';
    fy_cache_put(c, "m", "over", v); /* one byte over the bound */
    CHECK(has(c, "m", "over", NULL));
    v[FY_CACHE_VALUE_MAX] = '\0';
    fy_cache_put(c, "m", "at", v); /* exactly at it */
    CHECK(has(c, "m", "at", v));
    free(v);
    fy_cache_free(c);
}

static void test_disabled(void)
{
    fy_cache *c = fy_cache_lru_new(0, NULL);
    fy_cache_put(c, "m", "a", "b");
    CHECK(has(c, "m", "a", NULL));
    fy_cache_free(c);
}

static void test_many(void)
{
    /* Grow the table well past its first size and read everything back,
     * in one get_many. */
    enum { N = 5000 };
    fy_cache *c = fy_cache_lru_new(64 << 20, NULL);
    static char keys[N][32], vals[N][32];
    static fy_cache_key k[N];
    static char *got[N];
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof keys[i], "句子%d", i);
        snprintf(vals[i], sizeof vals[i], "sentence %d", i);
        fy_cache_put(c, "m", keys[i], vals[i]);
        k[i] = (fy_cache_key){"m", keys[i]};
    }
    k[N / 2].model = "n"; /* one key of another model: a miss in the middle */
    CHECK(fy_cache_get_many(c, k, N, got, 0) == N - 1);
    int ok = 1;
    for (int i = 0; i < N; i++) {
        ok &= i == N / 2 ? got[i] == NULL : got[i] && !strcmp(got[i], vals[i]);
        free(got[i]);
    }
    CHECK(ok);
    fy_cache_stats st = stats0(c);
    CHECK(st.hits == N - 1 && st.misses == 1);
    fy_cache_free(c);
}

/* ---- tiers, with a fake second tier ------------------------------------------ */

/* Answers "<text>!" for texts that start with "r", fails every lookup when
 * broken, and remembers what it was asked and given. */
typedef struct fake_tier {
    fy_cache base;
    int broken;
    int get_calls, put_calls, keys_asked, keys_put;
    char last_put[64];
    fy_cache_stats st;
} fake_tier;

static int fake_get(fy_cache *c, const fy_cache_key *keys, size_t n, char **values, int64_t dl)
{
    fake_tier *f = (fake_tier *)c;
    (void)dl;
    f->get_calls++;
    f->keys_asked += (int)n;
    if (f->broken) {
        f->st.errors += n;
        return FY_EIO;
    }
    int hits = 0;
    for (size_t i = 0; i < n; i++) {
        if (keys[i].text[0] != 'r') continue;
        values[i] = malloc(strlen(keys[i].text) + 2);
        sprintf(values[i], "%s!", keys[i].text);
        hits++;
    }
    f->st.hits += (uint64_t)hits;
    f->st.misses += n - (uint64_t)hits;
    return hits;
}

static void fake_put(fy_cache *c, const fy_cache_key *keys, const char *const *values, size_t n)
{
    fake_tier *f = (fake_tier *)c;
    f->put_calls++;
    f->keys_put += (int)n;
    snprintf(f->last_put, sizeof f->last_put, "%s=%s", keys[n - 1].text, values[n - 1]);
}

static size_t fake_stats(fy_cache *c, fy_cache_stats *out, size_t cap)
{
    if (cap) *out = ((fake_tier *)c)->st;
    return 1;
}

static int fake_freed;

static void fake_free(fy_cache *c)
{
    (void)c; /* lives on the test's stack */
    fake_freed++;
}

static const fy_cache_ops fake_ops = {fake_get, fake_put, fake_stats, fake_free};

static void fake_init(fake_tier *f)
{
    memset(f, 0, sizeof *f);
    f->base.ops = &fake_ops;
    f->st.tier = "fake";
}

static fy_cache *two_tiers(fake_tier *f, size_t budget)
{
    fy_cache *t[2] = {fy_cache_lru_new(budget, NULL), &f->base};
    return fy_cache_tiers_new(t, 2, NULL);
}

static void test_tiers_lookup(void)
{
    fake_tier f;
    fake_init(&f);
    fy_cache *c = two_tiers(&f, 1 << 20);
    fy_cache_put(c, "m", "mem", "M"); /* both tiers get it */
    CHECK(f.put_calls == 1 && !strcmp(f.last_put, "mem=M"));
    fy_cache_key k[4] = {{"m", "mem"}, {"m", "remote"}, {"m", "nowhere"}, {"m", "r2"}};
    char *v[4];
    CHECK(fy_cache_get_many(c, k, 4, v, 0) == 3);
    CHECK(v[0] && !strcmp(v[0], "M") && v[1] && !strcmp(v[1], "remote!") && !v[2]);
    CHECK(v[3] && !strcmp(v[3], "r2!"));
    /* One call to the second tier, for the three keys memory missed. */
    CHECK(f.get_calls == 1 && f.keys_asked == 3);
    /* Its hits were promoted into memory, and not written back to it. */
    CHECK(f.put_calls == 1);
    CHECK(has(c, "m", "remote", "remote!") && f.get_calls == 1);
    fy_cache_stats st[FY_CACHE_TIERS_MAX];
    CHECK(fy_cache_tier_stats(c, st, FY_CACHE_TIERS_MAX) == 2);
    CHECK(!strcmp(st[0].tier, "memory") && !strcmp(st[1].tier, "fake"));
    CHECK(st[0].hits == 2 && st[0].misses == 3); /* mem, then remote again; 3 misses */
    CHECK(st[1].hits == 2 && st[1].misses == 1);
    for (int i = 0; i < 4; i++) free(v[i]);
    fy_cache_free(c);
    CHECK(fake_freed == 1); /* the tiers own their tiers */
}

static void test_tiers_failing(void)
{
    fake_tier f;
    fake_init(&f);
    f.broken = 1;
    fy_cache *c = two_tiers(&f, 1 << 20);
    fy_cache_put(c, "m", "mem", "M");
    fy_cache_key k[2] = {{"m", "mem"}, {"m", "remote"}};
    char *v[2];
    CHECK(fy_cache_get_many(c, k, 2, v, 0) == 1); /* memory still answers */
    CHECK(v[0] && !strcmp(v[0], "M") && v[1] == NULL);
    fy_cache_stats st[2];
    fy_cache_tier_stats(c, st, 2);
    CHECK(st[1].errors == 1 && st[1].hits == 0);
    free(v[0]);
    fy_cache_free(c);

    /* No memory tier (--cache-mb 0 with --redis): every key reaches it. */
    fake_init(&f);
    fy_cache *only[1] = {&f.base};
    c = fy_cache_tiers_new(only, 1, NULL);
    CHECK(has(c, "m", "r", "r!") && has(c, "m", "r", "r!") && f.get_calls == 2);
    fy_cache_free(c);

    fy_error err = {0};
    CHECK(fy_cache_tiers_new(only, 0, &err) == NULL && err.code == FY_EINVAL);
    fake_freed = 0;
    fy_cache *gap[2] = {&f.base, NULL};
    CHECK(fy_cache_tiers_new(gap, 2, &err) == NULL && fake_freed == 1); /* owned even then */
}

static void test_tiers_disabled_memory(void)
{
    /* A zero-budget memory tier in front: promotion stores nothing, the
     * second tier is asked again. */
    fake_tier f;
    fake_init(&f);
    fy_cache *c = two_tiers(&f, 0);
    CHECK(has(c, "m", "rx", "rx!") && has(c, "m", "rx", "rx!") && f.get_calls == 2);
    fy_cache_free(c);
}

/* ---- keys ------------------------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdef", s[i])) return 0;
    return 1;
}

/* A fake model directory: four small files with the given model bytes. */
static fy_model_files model_dir(const char *dir, const char *model_bytes)
{
    mkdir(dir, 0700);
    static char p[4][4][256];
    static int which;
    char(*q)[256] = p[which++ % 4];
    snprintf(q[0], 256, "%s/model.zhen.intgemm.alphas.bin", dir);
    snprintf(q[1], 256, "%s/lex.50.50.zhen.s2t.bin", dir);
    snprintf(q[2], 256, "%s/srcvocab.zhen.spm", dir);
    snprintf(q[3], 256, "%s/trgvocab.zhen.spm", dir);
    write_file(q[0], model_bytes);
    write_file(q[1], "shortlist");
    write_file(q[2], "source vocabulary");
    write_file(q[3], "target vocabulary");
    return (fy_model_files){(char *)dir, q[0], q[1], q[2], q[3]};
}

static void test_model_name(void)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "/tmp/fanyi-test-cache-%d-a", (int)getpid());
    snprintf(b, sizeof b, "/tmp/fanyi-test-cache-%d-b", (int)getpid());
    fy_model_files fa = model_dir(a, "weights");
    fy_model_files fb = model_dir(b, "weights"); /* the same content elsewhere */
    char n1[FY_CACHE_NAME_MAX], n2[FY_CACHE_NAME_MAX];
    fy_error err = {0};
    CHECK(fy_cache_model_name("zh-en", &fa, 1, 2.0f, n1, &err) == 0);
    CHECK(!strncmp(n1, "zh-en:", 6) && strlen(n1) == 6 + 32 && is_hex(n1 + 6, 32));
    CHECK(fy_cache_model_name("zh-en", &fb, 1, 2.0f, n2, &err) == 0 && !strcmp(n1, n2));
    /* Whatever changes the output changes the name. */
    CHECK(fy_cache_model_name("zh-en", &fa, 0, 2.0f, n2, &err) == 0 && strcmp(n1, n2));
    CHECK(fy_cache_model_name("zh-en", &fa, 1, 1.5f, n2, &err) == 0 && strcmp(n1, n2));
    CHECK(fy_cache_model_name("zh-Hant-en", &fa, 1, 2.0f, n2, &err) == 0 &&
          strcmp(n1 + 6, n2 + 11));
    write_file(fb.model, "weightz"); /* one byte of the model */
    CHECK(fy_cache_model_name("zh-en", &fb, 1, 2.0f, n2, &err) == 0 && strcmp(n1, n2));
    write_file(fb.model, "weights");
    write_file(fb.trg_vocab, "target vocabularY"); /* one byte of a vocabulary */
    CHECK(fy_cache_model_name("zh-en", &fb, 1, 2.0f, n2, &err) == 0 && strcmp(n1, n2));
    /* A shared vocabulary (the same path twice) hashes like two equal files. */
    fy_model_files shared = fa;
    shared.trg_vocab = shared.src_vocab;
    CHECK(fy_cache_model_name("zh-en", &shared, 1, 2.0f, n2, &err) == 0 && strcmp(n1, n2));
    unlink(fb.model);
    CHECK(fy_cache_model_name("zh-en", &fb, 1, 2.0f, n2, &err) == FY_ENOTFOUND);
    CHECK(strstr(err.msg, "model.zhen") != NULL);
    fy_model_files *all[] = {&fa, &fb};
    for (int i = 0; i < 2; i++) {
        unlink(all[i]->model);
        unlink(all[i]->shortlist);
        unlink(all[i]->src_vocab);
        unlink(all[i]->trg_vocab);
        rmdir(all[i]->dir);
    }
}

static void test_redis_key(void)
{
    char k1[FY_CACHE_REDIS_KEY_MAX], k2[FY_CACHE_REDIS_KEY_MAX];
    const char *model = "zh-en:0123456789abcdef0123456789abcdef";
    int n = fy_cache_redis_key(model, "你好。", k1);
    CHECK(n == (int)strlen(k1) && n == 8 + 38 + 1 + 32);
    CHECK(!strncmp(k1, "fanyi:3:zh-en:0123456789abcdef0123456789abcdef:", 47));
    CHECK(is_hex(k1 + 47, 32));
    /* sha256("abc") starts ba7816bf8f01cfea414140de5dae2223: a known vector. */
    CHECK(fy_cache_redis_key("m", "abc", k2) > 0 &&
          !strcmp(k2, "fanyi:3:m:ba7816bf8f01cfea414140de5dae2223"));
    CHECK(fy_cache_redis_key(model, "你好。", k2) == n && !strcmp(k1, k2));
    CHECK(fy_cache_redis_key(model, "你好!", k2) == n && strcmp(k1, k2));
    CHECK(fy_cache_redis_key("zh-en:0123456789abcdef0123456789abcdee", "你好。", k2) == n &&
          strcmp(k1, k2));
    /* Bounded whatever the sentence. */
    char *longtext = malloc(100001);
    memset(longtext, 'a', 100000);
    longtext[100000] = '\0';
    CHECK(fy_cache_redis_key(model, longtext, k2) == n);
    free(longtext);
    char toolong[FY_CACHE_NAME_MAX + 1];
    memset(toolong, 'm', FY_CACHE_NAME_MAX);
    toolong[FY_CACHE_NAME_MAX] = '\0';
    CHECK(fy_cache_redis_key(toolong, "x", k2) == -1);
}

/* ---- URLs ------------------------------------------------------------------ */

static void test_url(void)
{
    fy_redis_options o;
    fy_redis_options_default(&o);
    CHECK(o.port == 6379 && o.timeout_ms == 50 && o.ttl_s == 604800 &&
          !strcmp(o.host, "127.0.0.1"));
    CHECK(fy_redis_parse_url("redis://cache.local:6380/2", &o, NULL) == 0);
    CHECK(!strcmp(o.host, "cache.local") && o.port == 6380 && o.db == 2 && !o.password[0]);
    CHECK(fy_redis_parse_url("redis://:s%40cret@127.0.0.5:7000", &o, NULL) == 0);
    CHECK(!strcmp(o.host, "127.0.0.5") && o.port == 7000 && !strcmp(o.password, "s@cret"));
    CHECK(!o.user[0] && o.db == 0);
    CHECK(fy_redis_parse_url("redis://fanyi:pw@[::1]:6379/0", &o, NULL) == 0);
    CHECK(!strcmp(o.host, "::1") && !strcmp(o.user, "fanyi") && !strcmp(o.password, "pw"));
    CHECK(fy_redis_parse_url("redis://localhost", &o, NULL) == 0 && o.port == 6379);
    CHECK(!o.password[0]); /* not kept from the URL before */
    const char *bad[] = {"http://x:1",         "redis://",          "redis://:6379",
                         "redis://h:0",        "redis://h:65536",   "redis://h:12ab",
                         "redis://h:1/x",      "redis://h:1/1?a=b", "redis://user@h:1",
                         "redis://:p%zz@h:1",  "redis://:p%00@h:1", "redis://[::1:6379",
                         "redis://[::1]x:6379"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fy_error err = {0};
        int rc = fy_redis_parse_url(bad[i], &o, &err);
        CHECK(rc == FY_EINVAL);
        if (rc != FY_EINVAL) fprintf(stderr, "  accepted %s\n", bad[i]);
        CHECK(!strstr(err.msg, "p%")); /* never echoes a password */
    }
    fy_error err = {0};
    CHECK(fy_redis_parse_url("rediss://h:1", &o, &err) == FY_EINVAL && strstr(err.msg, "TLS"));
    CHECK(!strcmp(o.host, "localhost")); /* a bad URL leaves the options alone */
}

int main(void)
{
    test_basic();
    test_lru_budget();
    test_value_bound();
    test_disabled();
    test_many();
    test_tiers_lookup();
    test_tiers_failing();
    test_tiers_disabled_memory();
    test_model_name();
    test_redis_key();
    test_url();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
