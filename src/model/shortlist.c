/* shortlist.c - binary lexical shortlist loader and per-batch selection.
 *
 * Facts from marian-dev src/data/shortlist.{h,cpp} (BinaryShortlistGenerator):
 *  - header {magic, checksum, firstNum, bestNum, wordToOffsetSize (= V + 1),
 *    shortListsSize}, then uint64 wordToOffset[V + 1], then uint32 ids;
 *    the file size must be exactly 48 + 8 (V + 1) + 4 total.
 *  - checksum = util::hashMem<uint64_t, uint64_t>(&firstNum, (size - 16) / 8):
 *    boost hash_combine over the uint64 words after magic and checksum (a
 *    trailing odd uint32 is not covered), with std::hash<uint64_t> = identity.
 *  - the reference's content check: wordToOffset[V] == total and every target
 *    id < target vocab size; we also require non-decreasing offsets.
 *  - generate(): ids [0, firstNum) ∩ vocab, then for each distinct source id
 *    (and the id itself when vocabularies are shared) its list; then ids from
 *    firstNum upward that are not selected yet, until the count is a multiple
 *    of 8; the result is ascending.
 */
#include "model/shortlist.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/mapfile.h"

#define HEADER_WORDS 6

struct fy_shortlist {
    fy_mapfile map;
    uint64_t frequent, best, vocab; /* vocab = source vocabulary size V */
    uint64_t total;
    const uint64_t *offsets; /* [V + 1] */
    const uint32_t *ids;     /* [total] */
    int max_target;          /* largest id + 1 */
};

uint64_t fy_shortlist_checksum(const uint64_t *words, size_t n)
{
    uint64_t seed = 0;
    for (size_t i = 0; i < n; i++) seed ^= words[i] + 0x9e3779b9u + (seed << 6) + (seed >> 2);
    return seed;
}

static int validate(fy_shortlist *s, fy_error *err)
{
    const char *path = s->map.path;
    const uint8_t *p = s->map.data;
    size_t size = s->map.size;
    uint64_t h[HEADER_WORDS];
    if (size < sizeof h)
        return fy_err(err, FY_EFORMAT, "%s: too short for a shortlist header (%zu bytes)", path,
                      size);
    memcpy(h, p, sizeof h);
    if (h[0] != FY_SHORTLIST_MAGIC)
        return fy_err(err, FY_EFORMAT, "%s: not a binary shortlist (bad magic 0x%016" PRIx64 ")",
                      path, h[0]);
    uint64_t noff = h[4], total = h[5];
    if (noff < 2 || noff > (size - sizeof h) / 8 || total > size / 4)
        return fy_err(err, FY_EFORMAT,
                      "%s: absurd shortlist sizes (%" PRIu64 " offsets, %" PRIu64 " ids)", path,
                      noff, total);
    uint64_t expect = sizeof h + noff * 8 + total * 4;
    if (expect != size)
        return fy_err(err, FY_EFORMAT, "%s: header says %" PRIu64 " bytes but the file has %zu",
                      path, expect, size);
    if (h[2] > INT32_MAX || h[3] > INT32_MAX || noff - 1 > INT32_MAX)
        return fy_err(err, FY_EFORMAT, "%s: absurd frequent/best counts", path);
    /* The mapping is page-aligned and 48 is a multiple of 8, so the uint64
     * and uint32 arrays are naturally aligned. */
    const uint64_t *words = (const uint64_t *)(p + 16);
    uint64_t sum = fy_shortlist_checksum(words, (size - 16) / 8);
    if (sum != h[1])
        return fy_err(err, FY_EHASH,
                      "%s: checksum mismatch (file 0x%016" PRIx64 ", computed 0x%016" PRIx64
                      "): the shortlist is corrupted",
                      path, h[1], sum);
    s->frequent = h[2];
    s->best = h[3];
    s->vocab = noff - 1;
    s->total = total;
    s->offsets = (const uint64_t *)(p + sizeof h);
    s->ids = (const uint32_t *)(p + sizeof h + noff * 8);
    if (s->offsets[0] != 0 || s->offsets[s->vocab] != total)
        return fy_err(err, FY_EFORMAT, "%s: offsets do not span the id list", path);
    for (uint64_t i = 0; i < s->vocab; i++) {
        if (s->offsets[i] > s->offsets[i + 1])
            return fy_err(err, FY_EFORMAT, "%s: offsets decrease at source id %" PRIu64, path, i);
    }
    uint32_t mx = 0;
    for (uint64_t j = 0; j < total; j++)
        if (s->ids[j] > mx) mx = s->ids[j];
    if (mx >= INT32_MAX) return fy_err(err, FY_EFORMAT, "%s: absurd target id %u", path, mx);
    s->max_target = total ? (int)mx + 1 : 0;
    return 0;
}

fy_shortlist *fy_shortlist_open(const char *path, fy_error *err)
{
    fy_shortlist *s = calloc(1, sizeof *s);
    if (!s) {
        fy_err(err, FY_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    if (fy_mapfile_open(&s->map, path, err) || validate(s, err)) {
        fy_shortlist_free(s);
        return NULL;
    }
    return s;
}

void fy_shortlist_free(fy_shortlist *s)
{
    if (!s) return;
    fy_mapfile_close(&s->map);
    free(s);
}

int fy_shortlist_frequent(const fy_shortlist *s)
{
    return (int)s->frequent;
}

int fy_shortlist_best(const fy_shortlist *s)
{
    return (int)s->best;
}

int fy_shortlist_src_vocab_size(const fy_shortlist *s)
{
    return (int)s->vocab;
}

int fy_shortlist_max_target(const fy_shortlist *s)
{
    return s->max_target;
}

size_t fy_shortlist_scratch_bytes(const fy_shortlist *s, int trg_vocab_size)
{
    return ((size_t)s->vocab + 7) / 8 + ((size_t)(trg_vocab_size > 0 ? trg_vocab_size : 0) + 7) / 8;
}

#define BIT_GET(b, i) ((b)[(i) >> 3] >> ((i)&7) & 1)
#define BIT_SET(b, i) ((b)[(i) >> 3] |= (uint8_t)(1u << ((i)&7)))

long fy_shortlist_select_ex(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                            int trg_vocab_size, int shared, int32_t *out, size_t cap, uint8_t *seen,
                            fy_error *err)
{
    if (trg_vocab_size < 1)
        return fy_err(err, FY_EINVAL, "%s: bad target vocabulary size %d", s->map.path,
                      trg_vocab_size);
    size_t V = (size_t)trg_vocab_size;
    uint8_t *src_seen = seen, *trg = seen + (s->vocab + 7) / 8;
    memset(seen, 0, fy_shortlist_scratch_bytes(s, trg_vocab_size));
    for (size_t i = 0; i < s->frequent && i < V; i++) BIT_SET(trg, i);
    for (size_t k = 0; k < n; k++) {
        int32_t w = src_ids[k];
        if (w < 0 || (uint64_t)w >= s->vocab || (shared && (size_t)w >= V))
            return fy_err(err, FY_EINVAL, "%s: source id %d outside the vocabulary (%" PRIu64 ")",
                          s->map.path, (int)w, s->vocab);
        if (shared) BIT_SET(trg, (size_t)w);
        if (BIT_GET(src_seen, (size_t)w)) continue;
        BIT_SET(src_seen, (size_t)w);
        for (uint64_t j = s->offsets[w]; j < s->offsets[w + 1]; j++) {
            if (s->ids[j] >= V)
                return fy_err(err, FY_EINVAL, "%s: target id %u >= target vocabulary size %d",
                              s->map.path, s->ids[j], trg_vocab_size);
            BIT_SET(trg, s->ids[j]);
        }
    }
    size_t count = 0;
    for (size_t i = 0; i < V; i++) count += BIT_GET(trg, i);
    /* intgemm needs a multiple of 8 columns: fill with the lowest free ids
     * from `frequent` up, like the reference. */
    for (size_t i = s->frequent; i < V && count % 8 != 0; i++) {
        if (!BIT_GET(trg, i)) {
            BIT_SET(trg, i);
            count++;
        }
    }
    if (count > cap)
        return fy_err(err, FY_ELIMIT, "%s: %zu shortlist ids do not fit in %zu", s->map.path, count,
                      cap);
    size_t k = 0;
    for (size_t i = 0; i < V; i++)
        if (BIT_GET(trg, i)) out[k++] = (int32_t)i;
    return (long)k;
}

long fy_shortlist_select(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                         int trg_vocab_size, int32_t *out, size_t cap, fy_error *err)
{
    if (trg_vocab_size < 1)
        return fy_err(err, FY_EINVAL, "%s: bad target vocabulary size %d", s->map.path,
                      trg_vocab_size);
    uint8_t *seen = malloc(fy_shortlist_scratch_bytes(s, trg_vocab_size));
    if (!seen) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->map.path);
    long r = fy_shortlist_select_ex(s, src_ids, n, trg_vocab_size, 0, out, cap, seen, err);
    free(seen);
    return r;
}
