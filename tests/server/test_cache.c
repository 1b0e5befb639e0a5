/* test_cache.c - the sentence cache: hits, misses, LRU order, byte budget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "translate/cache.h"

static int passed, failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            passed++;                                                                              \
        else {                                                                                     \
            failed++;                                                                              \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                        \
        }                                                                                          \
    } while (0)

static int has(fy_cache *c, const char *model, const char *key, const char *want)
{
    char *v = fy_cache_get(c, model, key);
    int ok = want ? v && !strcmp(v, want) : v == NULL;
    free(v);
    return ok;
}

static void test_basic(void)
{
    fy_cache *c = fy_cache_new(1 << 20, NULL);
    CHECK(c != NULL);
    CHECK(has(c, "m", "你好", NULL));
    fy_cache_put(c, "m", "你好", "Hello");
    CHECK(has(c, "m", "你好", "Hello"));
    CHECK(has(c, "other", "你好", NULL)); /* models never share answers */
    fy_cache_put(c, "m", "你好", "Hi");   /* replace */
    CHECK(has(c, "m", "你好", "Hi"));
    fy_cache_stats st;
    fy_cache_get_stats(c, &st);
    CHECK(st.hits == 2 && st.misses == 2 && st.entries == 1 && st.inserts == 2);
    /* model "ab" + sentence "c" must differ from model "a" + sentence "bc" */
    fy_cache_put(c, "ab", "c", "x");
    CHECK(has(c, "a", "bc", NULL));
    fy_cache_free(c);
    fy_cache_free(NULL);
}

static void test_lru_budget(void)
{
    /* Each entry costs overhead + ~10 bytes; a 1000-byte budget holds few. */
    fy_cache *c = fy_cache_new(1000, NULL);
    char key[32], val[32];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "k%03d", i);
        snprintf(val, sizeof val, "v%03d", i);
        fy_cache_put(c, "m", key, val);
        if (i >= 1) CHECK(has(c, "m", "k000", "v000")); /* keep k000 hot */
    }
    fy_cache_stats st;
    fy_cache_get_stats(c, &st);
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

static void test_disabled(void)
{
    fy_cache *c = fy_cache_new(0, NULL);
    fy_cache_put(c, "m", "a", "b");
    CHECK(has(c, "m", "a", NULL));
    fy_cache_free(c);
}

static void test_many(void)
{
    /* Grow the table well past its first size and read everything back. */
    fy_cache *c = fy_cache_new(64 << 20, NULL);
    char key[32], val[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "句子%d", i);
        snprintf(val, sizeof val, "sentence %d", i);
        fy_cache_put(c, "m", key, val);
    }
    int ok = 1;
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "句子%d", i);
        snprintf(val, sizeof val, "sentence %d", i);
        ok &= has(c, "m", key, val);
    }
    CHECK(ok);
    fy_cache_free(c);
}

int main(void)
{
    test_basic();
    test_lru_budget();
    test_disabled();
    test_many();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
