/* cache_lru.c - the memory tier: an LRU of sentence translations, a
 * chained hash table whose entries also sit on one recency list, all under
 * one mutex (lookups are tiny next to a translation, so one lock is not the
 * bottleneck; a job's keys are looked up under one locking). */
#include "translate/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *next_hash;   /* chain in a bucket */
    struct entry *prev, *next; /* recency list, head = most recent */
    uint64_t hash;
    size_t key_len; /* model + '\0' + sentence */
    size_t bytes;   /* what this entry costs against the budget */
    char *value;    /* points into data after the key */
    char data[];    /* key bytes, then value + NUL */
} entry;

typedef struct lru {
    fy_cache base; /* first: a fy_cache * is an lru * */
    pthread_mutex_t lock;
    entry **buckets;
    size_t nbuckets; /* power of two */
    entry *head, *tail;
    fy_cache_stats st;
} lru;

enum { ENTRY_OVERHEAD = sizeof(entry) + 2 * sizeof(void *) };

static uint64_t hash_key(const char *model, const char *sentence)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)model; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* separator no UTF-8 text contains */
    for (const unsigned char *p = (const unsigned char *)sentence; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return h;
}

static int key_equal(const entry *e, uint64_t h, const char *model, size_t ml, const char *sentence,
                     size_t sl)
{
    return e->hash == h && e->key_len == ml + 1 + sl && !memcmp(e->data, model, ml + 1) &&
           !memcmp(e->data + ml + 1, sentence, sl);
}

/* Returns the address of the chain link pointing at the entry, or at the
 * chain's terminating NULL when absent. */
static entry **find_slot(lru *c, uint64_t h, const char *model, const char *sentence)
{
    size_t ml = strlen(model), sl = strlen(sentence);
    entry **p = &c->buckets[h & (c->nbuckets - 1)];
    while (*p && !key_equal(*p, h, model, ml, sentence, sl)) p = &(*p)->next_hash;
    return p;
}

static void list_unlink(lru *c, entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void list_push_front(lru *c, entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static void remove_entry(lru *c, entry *e)
{
    entry **p = &c->buckets[e->hash & (c->nbuckets - 1)];
    while (*p != e) p = &(*p)->next_hash;
    *p = e->next_hash;
    list_unlink(c, e);
    c->st.entries--;
    c->st.bytes -= e->bytes;
    free(e);
}

/* Doubles the bucket array when chains grow long; failure just keeps the
 * old table (slower, still correct). */
static void maybe_grow(lru *c)
{
    if (c->st.entries < c->nbuckets) return;
    size_t n = c->nbuckets * 2;
    entry **b = calloc(n, sizeof *b);
    if (!b) return;
    for (size_t i = 0; i < c->nbuckets; i++) {
        for (entry *e = c->buckets[i], *next; e; e = next) {
            next = e->next_hash;
            e->next_hash = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
        }
    }
    free(c->buckets);
    c->buckets = b;
    c->nbuckets = n;
}

/* A copy of the value of (model, sentence), marked most recently used;
 * NULL on a miss. Lock held. */
static char *lookup(lru *c, const char *model, const char *sentence)
{
    entry *e = c->st.budget ? *find_slot(c, hash_key(model, sentence), model, sentence) : NULL;
    if (!e) return NULL;
    list_unlink(c, e);
    list_push_front(c, e);
    return strdup(e->value);
}

static int lru_get_many(fy_cache *base, const fy_cache_key *keys, size_t n, char **values,
                        int64_t deadline_ms)
{
    (void)deadline_ms; /* never waits */
    lru *c = (lru *)base;
    int hits = 0;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < n; i++) {
        values[i] = lookup(c, keys[i].model, keys[i].text);
        hits += values[i] != NULL;
    }
    c->st.hits += (uint64_t)hits;
    c->st.misses += n - (uint64_t)hits;
    pthread_mutex_unlock(&c->lock);
    return hits;
}

/* A new entry for (model, sentence) -> translation, NULL when it does not
 * belong in the cache (too large) or memory is short. */
static entry *entry_new(const lru *c, const char *model, const char *sentence,
                        const char *translation)
{
    size_t ml = strlen(model), sl = strlen(sentence), vl = strlen(translation);
    size_t bytes = ENTRY_OVERHEAD + ml + 1 + sl + vl + 1;
    if (bytes > c->st.budget || vl > FY_CACHE_VALUE_MAX) return NULL;
    entry *e = malloc(sizeof *e + ml + 1 + sl + vl + 1);
    if (!e) return NULL;
    e->hash = hash_key(model, sentence);
    e->key_len = ml + 1 + sl;
    e->bytes = bytes;
    memcpy(e->data, model, ml + 1);
    memcpy(e->data + ml + 1, sentence, sl);
    e->value = e->data + e->key_len;
    memcpy(e->value, translation, vl + 1);
    e->prev = e->next = NULL;
    return e;
}

/* Puts e in, replacing an older value, evicting the least recently used
 * entries to stay within the budget. Lock held. */
static void insert(lru *c, entry *e)
{
    entry *old = c->buckets[e->hash & (c->nbuckets - 1)];
    while (old && (old->hash != e->hash || old->key_len != e->key_len ||
                   memcmp(old->data, e->data, e->key_len)))
        old = old->next_hash;
    if (old) remove_entry(c, old);
    while (c->tail && c->st.bytes + e->bytes > c->st.budget) {
        remove_entry(c, c->tail);
        c->st.evictions++;
    }
    maybe_grow(c);
    entry **slot = &c->buckets[e->hash & (c->nbuckets - 1)];
    e->next_hash = *slot;
    *slot = e;
    list_push_front(c, e);
    c->st.entries++;
    c->st.bytes += e->bytes;
    c->st.inserts++;
}

static void lru_put_many(fy_cache *base, const fy_cache_key *keys, const char *const *values,
                         size_t n)
{
    lru *c = (lru *)base;
    if (!c->st.budget) return;
    for (size_t i = 0; i < n; i++) {
        entry *e = entry_new(c, keys[i].model, keys[i].text, values[i]);
        if (!e) continue;
        pthread_mutex_lock(&c->lock);
        insert(c, e);
        pthread_mutex_unlock(&c->lock);
    }
}

static size_t lru_stats(fy_cache *base, fy_cache_stats *out, size_t cap)
{
    lru *c = (lru *)base;
    if (!cap) return 1;
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
    return 1;
}

static void lru_free(fy_cache *base)
{
    lru *c = (lru *)base;
    for (entry *e = c->head, *n; e; e = n) {
        n = e->next;
        free(e);
    }
    free(c->buckets);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static const fy_cache_ops lru_ops = {lru_get_many, lru_put_many, lru_stats, lru_free};

fy_cache *fy_cache_lru_new(size_t budget_bytes, fy_error *err)
{
    lru *c = calloc(1, sizeof *c);
    if (!c) goto fail;
    c->nbuckets = 1024;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->buckets) goto fail;
    pthread_mutex_init(&c->lock, NULL);
    c->base.ops = &lru_ops;
    c->st.tier = "memory";
    c->st.up = 1;
    c->st.budget = budget_bytes;
    return &c->base;
fail:
    if (c) free(c->buckets);
    free(c);
    fy_err(err, FY_ENOMEM, "cache: out of memory");
    return NULL;
}

fy_cache *fy_cache_new(size_t budget_bytes, fy_error *err)
{
    return fy_cache_lru_new(budget_bytes, err);
}
