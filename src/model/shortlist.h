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

/* Largest target id in the file + 1 (0 for no lists): the engine checks it against the
 * target vocabulary size at load time. */
int fy_shortlist_max_target(const fy_shortlist *s);

/* Target ids for a batch: frequent ids + each source id's list, de-duplicated, sorted
   ascending, padded to a multiple of 8 (pad with ids not yet in the set, as the reference
   does — find out exactly); writes up to cap ids, returns the count or a negative code.
   Exactly Marian's BinaryShortlistGenerator::generate: ids [0, frequent) (capped at
   trg_vocab_size), plus every listed target of each distinct source id; then, while the
   count is not a multiple of 8, the smallest unselected ids >= frequent are added (so the
   count can stay unaligned only when the vocabulary runs out). This is the non-shared form
   (separate source/target vocabularies); with one shared vocabulary use
   fy_shortlist_select_ex(..., shared = 1), which also adds each source id itself, as the
   reference does when source and target vocab are the same object.
   Errors: FY_EINVAL for a source id outside [0, src vocab size) or a list target id
   >= trg_vocab_size; FY_ELIMIT when cap is too small (nothing useful in out);
   FY_ENOMEM. Allocates a temporary bitmap per call: use fy_shortlist_select_ex with
   scratch in hot paths. */
long fy_shortlist_select(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                         int trg_vocab_size, int32_t *out, size_t cap, fy_error *err);

/* As fy_shortlist_select, with the shared-vocabulary rule and without allocating:
   seen is caller-provided scratch of fy_shortlist_scratch_bytes(s, trg_vocab_size)
   bytes (contents ignored on entry). */
long fy_shortlist_select_ex(const fy_shortlist *s, const int32_t *src_ids, size_t n,
                            int trg_vocab_size, int shared, int32_t *out, size_t cap, uint8_t *seen,
                            fy_error *err);

/* Scratch bytes fy_shortlist_select_ex needs (one bit per source and target id). */
size_t fy_shortlist_scratch_bytes(const fy_shortlist *s, int trg_vocab_size);

/* Marian's shortlist checksum over n uint64 words (those after magic and
 * checksum): boost-style hash_combine, std::hash<uint64_t> being the identity. */
uint64_t fy_shortlist_checksum(const uint64_t *words, size_t n);

#endif
