/* spm_viterbi.c - the unigram Viterbi (sentencepiece's Model::EncodeOptimized).
 *
 * For every character position, walk the pieces that start there and keep,
 * for every end position, the best-scoring path; a character no piece of
 * one character covers gets an unknown piece scored min_score - 10. The
 * reference adds piece scores in double and stores path scores in float,
 * and its comparisons (strictly greater wins, first candidate kept on ties)
 * decide equal-score paths, so both are reproduced exactly.
 *
 * The walk is the hot loop of the tokenizer and is bound by memory latency,
 * so the usual path uses a character-level trie (one probe per character,
 * score next to the edge); the byte trie is the fallback for models whose
 * pieces are not all whole characters.
 */
#include <stdlib.h>
#include <string.h>

#include "text/spm_impl.h"

/* The home slot of key: its hash scaled to the table's size. */
static inline uint64_t chars_hash(const spm_chars *c, uint64_t key)
{
    return (uint64_t)(uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) * c->nslots >> 32;
}

static inline uint64_t chars_step(const spm_chars *c, uint64_t h)
{
    return h + 1 == c->nslots ? 0 : h + 1;
}

/* The slot of the edge (node, ch), or NULL. */
static inline const spm_chars_slot *chars_next(const spm_chars *c, int32_t node, uint32_t ch)
{
    uint64_t key = (uint64_t)(uint32_t)node << 32 | ch;
    for (uint64_t h = chars_hash(c, key);; h = chars_step(c, h)) {
        const spm_chars_slot *e = &c->slots[h];
        if (e->child < 0) return NULL;
        if (e->key == key) return e;
    }
}

/* The bytes of the character at s (len bytes, len <= 4) as one number. */
static inline uint32_t pack_char(const uint8_t *s, size_t len)
{
    uint32_t v = s[0];
    if (len > 1) v |= (uint32_t)s[1] << 8;
    if (len > 2) v |= (uint32_t)s[2] << 16;
    if (len > 3) v |= (uint32_t)s[3] << 24;
    return v;
}

/* Whether the piece splits into whole characters by the lengths their first
 * bytes announce (what makes character and byte matching agree). */
static int whole_chars(const char *p, size_t len)
{
    size_t i = 0;
    while (i < len) i += spm_one_char_len((uint8_t)p[i]);
    return i == len;
}

void spm_chars_free(spm_chars *c)
{
    if (!c) return;
    free(c->slots);
    memset(c, 0, sizeof *c);
}

static int in_viterbi(const fy_spm *s, int id)
{
    return s->type[id] == SPM_NORMAL || s->type[id] == SPM_USER_DEFINED;
}

/* Stores the edge (key, child) in c, or returns the slot it already has. */
static spm_chars_slot *chars_put(spm_chars *c, uint64_t key, int32_t child)
{
    uint64_t h = chars_hash(c, key);
    while (c->slots[h].child >= 0 && c->slots[h].key != key) h = chars_step(c, h);
    spm_chars_slot *e = &c->slots[h];
    if (e->child < 0) *e = (spm_chars_slot){key, child, -1};
    return e;
}

static int chars_alloc(spm_chars *c, size_t nslots)
{
    c->nslots = nslots;
    c->slots = malloc(nslots * sizeof *c->slots);
    if (!c->slots) return FY_ENOMEM;
    for (size_t i = 0; i < nslots; i++) c->slots[i].child = -1;
    return 0;
}

/* Moves c's edges into a table of twice their number: shared prefixes make
 * far fewer edges than the characters it was sized for (a 64000-piece
 * vocabulary's table: 25 MB -> about 8 MB). */
static int chars_compact(spm_chars *c, size_t edges)
{
    spm_chars small;
    if (chars_alloc(&small, 2 * edges + 16)) return FY_ENOMEM;
    for (uint64_t i = 0; i < c->nslots; i++)
        if (c->slots[i].child >= 0)
            *chars_put(&small, c->slots[i].key, c->slots[i].child) = c->slots[i];
    free(c->slots);
    *c = small;
    return 0;
}

int spm_chars_build(fy_spm *s)
{
    spm_chars *c = &s->chars;
    memset(c, 0, sizeof *c);
    size_t edges = 0;
    for (int i = 0; i < s->n; i++) {
        if (!in_viterbi(s, i)) continue;
        const char *p = s->text + s->off[i];
        size_t len = s->off[i + 1] - s->off[i] - 1;
        if (!whole_chars(p, len)) return 0; /* the byte trie it is */
        edges += len;
    }
    if (chars_alloc(c, edges + edges / 2 + 16)) return FY_ENOMEM;
    int32_t nodes = 1; /* 0 is the root */
    for (int i = 0; i < s->n; i++) {
        if (!in_viterbi(s, i)) continue;
        const uint8_t *p = (const uint8_t *)s->text + s->off[i];
        size_t len = s->off[i + 1] - s->off[i] - 1;
        int32_t node = 0;
        spm_chars_slot *e = NULL;
        for (size_t k = 0; k < len;) {
            size_t cl = spm_one_char_len(p[k]);
            uint64_t key = (uint64_t)(uint32_t)node << 32 | pack_char(p + k, cl);
            e = chars_put(c, key, nodes);
            if (e->child == nodes) nodes++;
            node = e->child;
            k += cl;
        }
        /* Pieces are unique, so no other piece ends at this edge. */
        e->id = i;
    }
    return chars_compact(c, (size_t)nodes - 1);
}

/* Offers the piece (id, score, user) spanning [start, end) to best[end]. */
static inline void relax(const fy_spm *s, spm_best *best, int32_t start, int32_t end, int32_t id,
                         float piece_score, int user, float till_here)
{
    /* The reference's arithmetic: a double score plus a float path score,
     * compared against the stored float, stored as float. */
    double score = user ? (double)((float)(end - start) * s->max_score) - 0.1 : (double)piece_score;
    double cand = score + (double)till_here;
    spm_best *b = &best[end];
    if (b->start == -1 || cand > (double)b->score) *b = (spm_best){(float)cand, start, id};
}

static inline void relax_unk(const fy_spm *s, spm_best *best, int32_t start, int32_t end,
                             float till_here)
{
    float cand = (s->min_score - 10.0f) + till_here;
    spm_best *b = &best[end];
    if (b->start == -1 || cand > b->score) *b = (spm_best){cand, start, s->unk};
}

static void viterbi_chars(const fy_spm *s, const uint8_t *t, int32_t size, spm_best *best)
{
    const spm_chars *c = &s->chars;
    int32_t mblen;
    for (int32_t start = 0; start < size; start += mblen) {
        const float till_here = best[start].score;
        mblen = (int32_t)spm_one_char_len(t[start]);
        if (mblen > size - start) mblen = size - start;
        int has_single = 0;
        int32_t node = 0, k = start;
        while (k < size) {
            int32_t cl = (int32_t)spm_one_char_len(t[k]);
            if (cl > size - k) break; /* a cut character matches no whole-character piece */
            const spm_chars_slot *e = chars_next(c, node, pack_char(t + k, (size_t)cl));
            if (!e) break;
            node = e->child;
            k += cl;
            if (e->id < 0) continue;
            relax(s, best, start, k, e->id, s->score[e->id], s->type[e->id] == SPM_USER_DEFINED,
                  till_here);
            if (k - start == mblen) has_single = 1;
        }
        if (!has_single) relax_unk(s, best, start, start + mblen, till_here);
    }
}

static void viterbi_bytes(const fy_spm *s, const uint8_t *t, int32_t size, spm_best *best)
{
    int32_t mblen;
    for (int32_t start = 0; start < size; start += mblen) {
        const float till_here = best[start].score;
        mblen = (int32_t)spm_one_char_len(t[start]);
        if (mblen > size - start) mblen = size - start;
        int has_single = 0;
        int32_t node = 0;
        for (int32_t k = start; k < size;) {
            node = spm_trie_next(&s->trie, node, t[k++]);
            if (node < 0) break;
            int32_t id = s->trie.viterbi_id[node];
            if (id < 0) continue;
            relax(s, best, start, k, id, s->score[id], s->type[id] == SPM_USER_DEFINED, till_here);
            if (k - start == mblen) has_single = 1;
        }
        if (!has_single) relax_unk(s, best, start, start + mblen, till_here);
    }
}

void spm_viterbi(const fy_spm *s, const uint8_t *t, int32_t size, spm_best *best)
{
    for (int32_t i = 0; i <= size; i++) best[i] = (spm_best){0.0f, -1, -1};
    if (s->chars.slots)
        viterbi_chars(s, t, size, best);
    else
        viterbi_bytes(s, t, size, best);
}
