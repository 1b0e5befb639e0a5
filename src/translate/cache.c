/* cache.c - the cache interface's entry points (NULL is "no cache") and
 * the tiers: memory -> Redis -> engine. */
#include "translate/cache.h"

#include <stdlib.h>
#include <string.h>

/* Loopback answers in ~0.1 ms and a LAN in ~0.5 ms; the upper buckets show
 * a Redis that is struggling before the timeout cuts it off. */
const double fy_cache_rtt_bounds[FY_CACHE_RTT_BUCKETS - 1] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25};

int fy_cache_get_many(fy_cache *c, const fy_cache_key *keys, size_t n, char **values,
                      int64_t deadline_ms)
{
    for (size_t i = 0; i < n; i++) values[i] = NULL;
    if (!c || !n) return 0;
    return c->ops->get_many(c, keys, n, values, deadline_ms);
}

void fy_cache_put_many(fy_cache *c, const fy_cache_key *keys, const char *const *values, size_t n)
{
    if (c && n) c->ops->put_many(c, keys, values, n);
}

size_t fy_cache_tier_stats(fy_cache *c, fy_cache_stats *out, size_t cap)
{
    if (cap) memset(out, 0, cap * sizeof *out);
    return c ? c->ops->stats(c, out, cap) : 0;
}

void fy_cache_free(fy_cache *c)
{
    if (c) c->ops->free(c);
}

char *fy_cache_get(fy_cache *c, const char *model, const char *text)
{
    fy_cache_key k = {model, text};
    char *v = NULL;
    fy_cache_get_many(c, &k, 1, &v, 0);
    return v;
}

void fy_cache_put(fy_cache *c, const char *model, const char *text, const char *translation)
{
    fy_cache_key k = {model, text};
    fy_cache_put_many(c, &k, &translation, 1);
}

/* ---- tiers --------------------------------------------------------------- */

typedef struct tiers {
    fy_cache base;
    fy_cache *t[FY_CACHE_TIERS_MAX];
    size_t n;
} tiers;

/* Copies the hits tier k found into the tiers before it, so that the next
 * lookup of these keys stops at the nearest tier. */
static void promote(tiers *c, size_t k, const fy_cache_key *keys, char *const *values, size_t n)
{
    for (size_t e = 0; e < k; e++) fy_cache_put_many(c->t[e], keys, (const char *const *)values, n);
}

/* Asks tier k for the m keys still missing (their indexes in miss[]) and
 * fills values[] with its hits; returns how many keys are still missing
 * (compacted at the front of miss[]). sub/sv are scratch of m entries. */
static size_t ask_tier(tiers *c, size_t k, const fy_cache_key *keys, char **values, size_t *miss,
                       size_t m, fy_cache_key *sub, char **sv, int64_t deadline_ms)
{
    for (size_t j = 0; j < m; j++) sub[j] = keys[miss[j]];
    fy_cache_get_many(c->t[k], sub, m, sv, deadline_ms);
    size_t left = 0, found = 0;
    for (size_t j = 0; j < m; j++) {
        if (sv[j]) {
            values[miss[j]] = sv[j];
            sub[found] = sub[j];
            sv[found++] = sv[j];
        } else {
            miss[left++] = miss[j];
        }
    }
    if (found && k) promote(c, k, sub, sv, found);
    return left;
}

static int tiers_get_many(fy_cache *base, const fy_cache_key *keys, size_t n, char **values,
                          int64_t deadline_ms)
{
    tiers *c = (tiers *)base;
    size_t *miss = malloc(n * sizeof *miss);
    fy_cache_key *sub = malloc(n * sizeof *sub);
    char **sv = malloc(n * sizeof *sv);
    size_t m = n;
    if (!miss || !sub || !sv) {
        m = 0; /* out of memory: every key misses, the engine still answers */
    }
    for (size_t i = 0; i < m; i++) miss[i] = i;
    for (size_t k = 0; k < c->n && m; k++)
        m = ask_tier(c, k, keys, values, miss, m, sub, sv, deadline_ms);
    free(miss);
    free(sub);
    free(sv);
    int hits = 0;
    for (size_t i = 0; i < n; i++) hits += values[i] != NULL;
    return hits;
}

static void tiers_put_many(fy_cache *base, const fy_cache_key *keys, const char *const *values,
                           size_t n)
{
    tiers *c = (tiers *)base;
    for (size_t k = 0; k < c->n; k++) fy_cache_put_many(c->t[k], keys, values, n);
}

static size_t tiers_stats(fy_cache *base, fy_cache_stats *out, size_t cap)
{
    tiers *c = (tiers *)base;
    size_t at = 0;
    for (size_t k = 0; k < c->n; k++) {
        fy_cache_stats one[FY_CACHE_TIERS_MAX];
        size_t got = fy_cache_tier_stats(c->t[k], one, FY_CACHE_TIERS_MAX);
        for (size_t i = 0; i < got && i < FY_CACHE_TIERS_MAX; i++, at++)
            if (at < cap) out[at] = one[i];
    }
    return at;
}

static void tiers_free(fy_cache *base)
{
    tiers *c = (tiers *)base;
    for (size_t k = 0; k < c->n; k++) fy_cache_free(c->t[k]);
    free(c);
}

static const fy_cache_ops tiers_ops = {tiers_get_many, tiers_put_many, tiers_stats, tiers_free};

fy_cache *fy_cache_tiers_new(fy_cache *const *t, size_t n, fy_error *err)
{
    tiers *c = NULL;
    if (n < 1 || n > FY_CACHE_TIERS_MAX) {
        fy_err(err, FY_EINVAL, "cache: %zu tiers (1 to %d)", n, FY_CACHE_TIERS_MAX);
        goto fail;
    }
    for (size_t k = 0; k < n; k++) {
        if (t[k]) continue;
        fy_err(err, FY_EINVAL, "cache: tier %zu is missing", k);
        goto fail;
    }
    if (!(c = calloc(1, sizeof *c))) {
        fy_err(err, FY_ENOMEM, "cache: out of memory");
        goto fail;
    }
    c->base.ops = &tiers_ops;
    memcpy(c->t, t, n * sizeof *t);
    c->n = n;
    return &c->base;
fail:
    for (size_t k = 0; k < n; k++) fy_cache_free(t[k]);
    return NULL;
}
