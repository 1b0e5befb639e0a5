/* spm.h - SentencePiece tokenizer (unigram models), identical to Google's tools.
 *
 * Loads a serialized SentencePiece ModelProto (`vocab.*.spm`), normalises and
 * encodes UTF-8 text to piece ids with the unigram model (Viterbi, byte
 * fallback, unknown handling as spm_encode), and decodes ids back to text as
 * spm_decode does. BPE, word and char models are rejected at load.
 *
 * Thread-safety: a loaded fy_spm is read-only; any number of threads may
 * encode and decode with one handle at the same time.
 */
#ifndef FY_TEXT_SPM_H
#define FY_TEXT_SPM_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_spm fy_spm;

/* Loads the model file at path (read once, not kept open). Returns a new
 * handle the caller frees with fy_spm_free, or NULL with a one-line message
 * naming the file and the problem in err (empty, truncated, corrupt,
 * unsupported model type). */
fy_spm *fy_spm_open(const char *path, fy_error *err);

/* Like fy_spm_open but from memory: data (size bytes) is copied from as
 * needed and not retained. name is used in messages (e.g. the path). */
fy_spm *fy_spm_load(const void *data, size_t size, const char *name, fy_error *err);

/* Frees the handle; NULL is harmless. */
void fy_spm_free(fy_spm *spm);

/* Number of pieces (ids are 0 .. size-1). */
int fy_spm_vocab_size(const fy_spm *spm);

/* Bytes the handle's tables take (pieces, tries, normaliser). */
size_t fy_spm_memory_bytes(const fy_spm *spm);

/* Special ids from the trainer spec, or -1 when the model has none. */
int fy_spm_unk_id(const fy_spm *spm);
int fy_spm_bos_id(const fy_spm *spm);
int fy_spm_eos_id(const fy_spm *spm);
int fy_spm_pad_id(const fy_spm *spm);

/* The id of the piece (len bytes, not NUL-terminated), or the unk id when the
 * vocabulary has no such piece. Unused pieces are found like the others. */
int fy_spm_piece_to_id(const fy_spm *spm, const char *piece, size_t len);

/* The piece text of id (borrowed, valid until fy_spm_free, NUL-terminated);
 * *len (if non-NULL) receives its length. NULL if id is out of range. */
const char *fy_spm_id_to_piece(const fy_spm *spm, int id, size_t *len);

/* Encodes UTF-8 text (len bytes, need not be NUL-terminated) to ids, as
 * `spm_encode --output_format=id` would for that line. Malformed UTF-8 is
 * handled as the reference does: each byte that does not start a well-formed
 * character (overlongs, surrogates, > U+10FFFF, stray or missing
 * continuation bytes) becomes one U+FFFD during normalisation, which then
 * encodes like any other character (unknown, or bytes EF BF BD with byte
 * fallback). NUL bytes are ordinary characters. Stores up to cap ids in ids (which may be NULL when
 * cap is 0); returns the number of ids the full encoding has (> cap means
 * the output was truncated: call again with a bigger buffer), or a negative
 * FY_E* code with a message in err. Allocates a scratch buffer sized to the
 * input per call; nothing is shared between calls. */
long fy_spm_encode(const fy_spm *spm, const char *text, size_t len, int32_t *ids, size_t cap,
                   fy_error *err);

/* Decodes n ids to UTF-8 text as spm_decode does (byte pieces reassembled,
 * malformed byte sequences become U+FFFD, control pieces dropped, U+2581 back
 * to spaces, the leading space of the first piece removed). Writes up to
 * cap-1 bytes plus a NUL into out (out may be NULL when cap is 0); returns the
 * full length excluding the NUL (>= cap means truncated), or a negative
 * FY_E* code (an id out of range is FY_EINVAL). */
long fy_spm_decode(const fy_spm *spm, const int32_t *ids, size_t n, char *out, size_t cap,
                   fy_error *err);

/* Encodes like fy_spm_encode but produces the pieces, as
 * `spm_encode --output_format=piece`: each piece is written as its text
 * followed by one space separator except the last (e.g. "▁Hello ▁world"),
 * into out (up to cap-1 bytes plus a NUL). Returns the full length excluding
 * the NUL, or a negative code. For byte-fallback pieces this is "<0xE4>". */
long fy_spm_encode_pieces(const fy_spm *spm, const char *text, size_t len, char *out, size_t cap,
                          fy_error *err);

/* Decodes pieces (n texts: pieces[i] of lens[i] bytes) as
 * `spm_decode --input_format=piece` does: each text is looked up as
 * fy_spm_piece_to_id would, a text that is no piece decodes as itself.
 * Output and result as fy_spm_decode. */
long fy_spm_decode_pieces(const fy_spm *spm, const char *const *pieces, const size_t *lens,
                          size_t n, char *out, size_t cap, fy_error *err);

#endif
