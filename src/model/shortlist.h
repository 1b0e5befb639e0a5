/* shortlist.h - Marian/Bergamot binary lexical shortlist (lex.*.s2t.bin).
 *
 * The file holds, for every source token id, the target ids it most likely
 * translates to; decoding then scores only the union of those ids (plus the
 * globally frequent ones) instead of the whole vocabulary. Format
 * (little-endian): six uint64 header fields (magic 0xF11A48D5013417F5,
 * checksum, frequent, best, source vocab size + 1, total word count), uint64
 * offsets[V+1], uint32 target ids. Mapped read-only and validated on open;
 * immutable afterwards and shareable between threads.
 */
#ifndef FY_MODEL_SHORTLIST_H
#define FY_MODEL_SHORTLIST_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define FY_SHORTLIST_MAGIC 0xF11A48D5013417F5ull

typedef struct fy_shortlist fy_shortlist; /* lex.*.s2t.bin */

/* Maps and validates path (magic, checksum, offsets, ids). NULL on error
 * with a one-line message naming the file; FY_EHASH on checksum mismatch. */
fy_shortlist *fy_shortlist_open(const char *path, fy_error *err);

/* Unmaps and frees; NULL is a no-op. */
void fy_shortlist_free(fy_shortlist *s);

int fy_shortlist_frequent(const fy_shortlist *s); /* 'frequent' from the header */
int fy_shortlist_best(const fy_shortlist *s);
int fy_shortlist_src_vocab_size(const fy_shortlist *s);

/* Largest target id in the file + 1 (for checking against the vocabulary). */
int fy_shortlist_max_target(const fy_shortlist *s);

/* Target ids for a batch: frequent ids + each source id's list, de-duplicated, sorted
   ascending, padded to a multiple of 8 (pad with ids not yet in the set, as the reference
   does — find out exactly); writes up to cap ids, returns the count or a negative code.
   Source ids outside the shortlist's vocabulary contribute nothing (as the reference).
   Needs at most fy_shortlist_select_cap(s, n, trg_vocab_size) output slots. Allocates a
   temporary bitmap of trg_vocab_size bits per call unless one is provided via
   fy_shortlist_select_ws. */
long fy_shortlist_select(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                         int trg_vocab_size, int32_t *out, size_t cap, fy_error *err);

/* Same as fy_shortlist_select, without allocating: seen is caller-provided scratch
   of at least (trg_vocab_size + 7) / 8 bytes (contents ignored on entry). */
long fy_shortlist_select_ws(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                            int trg_vocab_size, int32_t *out, size_t cap, uint8_t *seen,
                            fy_error *err);

/* An upper bound on fy_shortlist_select's result for n source ids. */
size_t fy_shortlist_select_cap(const fy_shortlist *s, size_t n, int trg_vocab_size);

#endif
