/* cache.c - LRU of sentence translations: a chained hash table whose
 * entries also sit on one recency list, all under one mutex (lookups are
 * tiny next to a translation, so one lock is not the bottleneck). */
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

struct fy_cache {
    pthread_mutex_t lock;
    entry **buckets;
    size_t nbuckets; /* power of two */
    entry *head, *tail;
    fy_cache_stats st;
};

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

fy_cache *fy_cache_new(size_t budget_bytes, fy_error *err)
{
    fy_cache *c = calloc(1, sizeof *c);
    if (!c) goto fail;
    c->nbuckets = 1024;
    c->buckets = calloc(c->nbuckets, sizeof *c->buckets);
    if (!c->buckets) goto fail;
    pthread_mutex_init(&c->lock, NULL);
    c->st.budget = budget_bytes;
    return c;
fail:
    if (c) free(c->buckets);
    free(c);
    fy_err(err, FY_ENOMEM, "cache: out of memory");
    return NULL;
}

void fy_cache_free(fy_cache *c)
{
    if (!c) return;
    for (entry *e = c->head, *n; e; e = n) {
        n = e->next;
        free(e);
    }
    free(c->buckets);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int key_equal(const entry *e, uint64_t h, const char *model, size_t ml, const char *sentence,
                     size_t sl)
{
    return e->hash == h && e->key_len == ml + 1 + sl && !memcmp(e->data, model, ml + 1) &&
           !memcmp(e->data + ml + 1, sentence, sl);
}

/* Returns the address of the chain link pointing at the entry, or at the
 * chain's terminating NULL when absent. */
static entry **find_slot(fy_cache *c, uint64_t h, const char *model, const char *sentence)
{
    size_t ml = strlen(model), sl = strlen(sentence);
    entry **p = &c->buckets[h & (c->nbuckets - 1)];
    while (*p && !key_equal(*p, h, model, ml, sentence, sl)) p = &(*p)->next_hash;
    return p;
}

static void list_unlink(fy_cache *c, entry *e)
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

static void list_push_front(fy_cache *c, entry *e)
{
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static void remove_entry(fy_cache *c, entry *e)
{
    entry **p = &c->buckets[e->hash & (c->nbuckets - 1)];
    while (*p != e) p = &(*p)->next_hash;
    *p = e->next_hash;
    list_unlink(c, e);
    c->st.entries--;
    c->st.bytes -= e->bytes;
    free(e);
}

char *fy_cache_get(fy_cache *c, const char *model, const char *sentence)
{
    if (!c) return NULL;
    uint64_t h = hash_key(model, sentence);
    char *copy = NULL;
    pthread_mutex_lock(&c->lock);
    entry *e = c->st.budget ? *find_slot(c, h, model, sentence) : NULL;
    if (e) {
        list_unlink(c, e);
        list_push_front(c, e);
        copy = strdup(e->value);
    }
    if (copy)
        c->st.hits++;
    else
        c->st.misses++;
    pthread_mutex_unlock(&c->lock);
    return copy;
}

/* Doubles the bucket array when chains grow long; failure just keeps the
 * old table (slower, still correct). */
static void maybe_grow(fy_cache *c)
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

void fy_cache_put(fy_cache *c, const char *model, const char *sentence, const char *translation)
{
    if (!c || !c->st.budget) return;
    size_t ml = strlen(model), sl = strlen(sentence), vl = strlen(translation);
    size_t bytes = ENTRY_OVERHEAD + ml + 1 + sl + vl + 1;
    if (bytes > c->st.budget) return;
    entry *e = malloc(sizeof *e + ml + 1 + sl + vl + 1);
    if (!e) return;
    e->hash = hash_key(model, sentence);
    e->key_len = ml + 1 + sl;
    e->bytes = bytes;
    memcpy(e->data, model, ml + 1);
    memcpy(e->data + ml + 1, sentence, sl);
    e->value = e->data + e->key_len;
    memcpy(e->value, translation, vl + 1);
    e->prev = e->next = NULL;

    pthread_mutex_lock(&c->lock);
    entry *old = *find_slot(c, e->hash, model, sentence);
    if (old) remove_entry(c, old);
    while (c->tail && c->st.bytes + bytes > c->st.budget) {
        remove_entry(c, c->tail);
        c->st.evictions++;
    }
    maybe_grow(c);
    entry **slot = &c->buckets[e->hash & (c->nbuckets - 1)];
    e->next_hash = *slot;
    *slot = e;
    list_push_front(c, e);
    c->st.entries++;
    c->st.bytes += bytes;
    c->st.inserts++;
    pthread_mutex_unlock(&c->lock);
}

void fy_cache_get_stats(fy_cache *c, fy_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    *out = c->st;
    pthread_mutex_unlock(&c->lock);
}
