/* spm_impl.h - internals shared by the SentencePiece files (not public API).
 *
 * spm_proto.c parses the ModelProto wire format into spm_proto (views into
 * the caller's bytes); spm.c builds the read-only fy_spm from it and encodes
 * and decodes; spm_norm.c is the normaliser (precompiled charsmap, whitespace
 * rules) that runs before the unigram Viterbi in spm_viterbi.c.
 */
#ifndef FY_TEXT_SPM_IMPL_H
#define FY_TEXT_SPM_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "text/spm.h"
#include "util/error.h"

/* ---- protobuf view (spm_proto.c) ---- */

typedef struct spm_bytes {
    const uint8_t *p; /* into the parsed buffer; NULL when absent */
    size_t n;
} spm_bytes;

/* Piece types, as ModelProto.SentencePiece.Type numbers them. */
enum {
    SPM_NORMAL = 1,
    SPM_UNKNOWN = 2,
    SPM_CONTROL = 3,
    SPM_USER_DEFINED = 4,
    SPM_UNUSED = 5,
    SPM_BYTE = 6,
};

/* TrainerSpec.model_type */
enum { SPM_MODEL_UNIGRAM = 1, SPM_MODEL_BPE = 2, SPM_MODEL_WORD = 3, SPM_MODEL_CHAR = 4 };

typedef struct spm_proto_piece {
    spm_bytes piece;
    float score;
    int type; /* SPM_* */
} spm_proto_piece;

typedef struct spm_proto_norm {
    int present;
    spm_bytes name;
    spm_bytes charsmap; /* precompiled_charsmap, n == 0 when absent */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
} spm_proto_norm;

typedef struct spm_proto {
    spm_proto_piece *pieces; /* malloc'd */
    size_t n_pieces, cap_pieces;
    int has_trainer_spec;
    int model_type;
    int byte_fallback, treat_whitespace_as_suffix;
    spm_bytes unk_piece, bos_piece, eos_piece, pad_piece; /* n == 0: the default */
    int has_unk_surface;
    spm_bytes unk_surface;
    spm_proto_norm normalizer, denormalizer;
} spm_proto;

/* Parses a serialized ModelProto of size bytes into *out, checking every
 * length and offset; unknown fields are skipped. Returns 0 or FY_EFORMAT /
 * FY_ENOMEM with a message starting with name. *out views data, which must
 * outlive it; release with spm_proto_free (also after a failure). */
int spm_proto_parse(spm_proto *out, const uint8_t *data, size_t size, const char *name,
                    fy_error *err);
void spm_proto_free(spm_proto *m);

/* ---- piece trie (spm.c) ---- */

/* A byte trie over the pieces: the root's children in a direct table, all
 * other edges in one open-addressing hash keyed by (node, byte). */
typedef struct spm_trie {
    int32_t root[256];     /* child of the root per byte, -1 if none */
    uint64_t *edges;       /* (key << 32 | child); key = node * 256 + byte + 1, 0 = empty */
    uint32_t nslots;       /* edges' slots: about twice the edges once loaded */
    int32_t *normal_id;    /* [nodes] normal/user-defined/unused piece ending here, -1 */
    int32_t *reserved_id;  /* [nodes] control/unknown/byte piece ending here, -1 */
    int32_t *viterbi_id;   /* [nodes] normal_id unless that piece is unused, -1 */
    uint8_t *user_defined; /* [nodes] 1 if a user-defined piece ends here */
    size_t n_nodes, cap_nodes;
} spm_trie;

/* The home slot of an edge key: its hash scaled to the table, so that any
 * table size works (a power of two would waste up to half of it). */
static inline uint32_t spm_trie_slot(const spm_trie *t, uint32_t key)
{
    return (uint32_t)((uint64_t)(key * 0x9E3779B1u) * t->nslots >> 32);
}

/* The child of node by byte b, or -1. */
static inline int32_t spm_trie_next(const spm_trie *t, int32_t node, uint8_t b)
{
    if (node == 0) return t->root[b];
    uint32_t key = (uint32_t)node * 256u + b + 1u;
    for (uint32_t h = spm_trie_slot(t, key);;) {
        uint64_t e = t->edges[h];
        uint32_t k = (uint32_t)(e >> 32);
        if (k == key) return (int32_t)(uint32_t)e;
        if (k == 0) return -1;
        h = h + 1 == t->nslots ? 0 : h + 1;
    }
}

/* ---- UTF-8, exactly as SentencePiece's string_util ---- */

/* Length of the character that starts with byte c, judged by c alone. */
static inline size_t spm_one_char_len(uint8_t c)
{
    return (size_t) "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4];
}

/* Whether s (len > 0 bytes) starts with a well-formed character (no
 * surrogates, no overlongs, at most U+10FFFF; a literal U+FFFD counts as
 * well-formed); *mblen receives its length, or 1 when malformed. */
static inline int spm_utf8_valid_prefix(const uint8_t *s, size_t len, size_t *mblen)
{
    *mblen = 1;
    uint8_t c = s[0];
    if (c < 0x80) return 1;
    if (len >= 2 && (c & 0xE0) == 0xC0) {
        uint32_t cp = (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
        if ((s[1] & 0xC0) == 0x80 && cp >= 0x80) {
            *mblen = 2;
            return 1;
        }
    } else if (len >= 3 && (c & 0xF0) == 0xE0) {
        uint32_t cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        if ((s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && cp >= 0x800 &&
            (cp < 0xD800 || cp >= 0xE000)) {
            *mblen = 3;
            return 1;
        }
    } else if (len >= 4 && (c & 0xF8) == 0xF0) {
        uint32_t cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
                      (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
        if ((s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 &&
            cp >= 0x10000 && cp <= 0x10FFFF) {
            *mblen = 4;
            return 1;
        }
    }
    return 0;
}

/* ---- normaliser (spm_norm.c) ---- */

typedef struct spm_norm {
    uint32_t *units; /* darts-clone double array, host order; NULL: no charsmap */
    size_t n_units;
    char *strings;    /* normalised forms, NUL-separated, with a final NUL added */
    size_t n_strings; /* bytes in strings excluding the added NUL */
    int add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces;
    int treat_whitespace_as_suffix;
    const spm_trie *user; /* user-defined symbols matched before the charsmap, or NULL */
} spm_norm;

/* Builds the normaliser from its spec (copies the charsmap). Returns 0 or
 * FY_EFORMAT / FY_ENOMEM with a message starting with name. */
int spm_norm_init(spm_norm *n, const spm_proto_norm *spec, int treat_ws_as_suffix,
                  const spm_trie *user, const char *name, fy_error *err);
void spm_norm_free(spm_norm *n);

/* A growable byte buffer that may start on the caller's stack. */
typedef struct spm_buf {
    char *p;
    size_t len, cap;
    int heap; /* p is malloc'd */
} spm_buf;

int spm_buf_reserve(spm_buf *b, size_t extra);
void spm_buf_release(spm_buf *b);

/* Normalises text (len bytes) into out (appended) exactly as SentencePiece's
 * Normalizer::Normalize does. Returns 0 or FY_ENOMEM. */
int spm_normalize(const spm_norm *n, const char *text, size_t len, spm_buf *out);

/* ---- the model (spm.c) and its Viterbi (spm_viterbi.c) ---- */

/* A trie over whole UTF-8 characters for the Viterbi: one hash probe per
 * character instead of one per byte. Each slot holds an edge together with
 * what the Viterbi needs of the piece ending there, so a step touches one
 * cache line. Built only when every normal and user-defined piece is a
 * sequence of whole characters (then it matches exactly what the byte trie
 * matches); otherwise the byte trie is used. */
typedef struct spm_chars_slot {
    uint64_t key;  /* parent node << 32 | the character's bytes, little-endian */
    int32_t child; /* -1: empty slot */
    int32_t id;    /* piece ending at child, -1 if none (or unused) */
} spm_chars_slot;

typedef struct spm_chars {
    spm_chars_slot *slots;
    uint64_t nslots; /* about twice the edges */
} spm_chars;

struct fy_spm {
    char *name;
    int n;                /* number of pieces */
    char *text;           /* every piece, each followed by a NUL */
    uint32_t *off;        /* [n + 1]: piece i is text + off[i], off[i+1] - off[i] - 1 bytes */
    float *score;         /* [n] */
    uint8_t *type;        /* [n] SPM_* */
    int32_t *canon;       /* [n] PieceToId(IdToPiece(id)), what decoding by id really uses */
    int16_t *byte_value;  /* [n] 0..255 for byte pieces, else -1 */
    int32_t byte_id[256]; /* byte fallback pieces, -1 when absent */
    spm_trie trie;
    spm_chars chars; /* the Viterbi's character trie; chars.slots == NULL: use trie */
    spm_norm norm;
    spm_norm denorm; /* used when has_denorm */
    int has_denorm;
    int unk; /* the UNKNOWN piece the model emits */
    int api_unk, api_bos, api_eos, api_pad;
    int byte_fallback;
    int dummy_prefix_rules; /* decoder strips a leading U+2581 */
    int remove_extra_ws;
    float min_score, max_score;
    char *unk_surface;
    size_t unk_surface_len;
};

/* Best path ending at a byte position of the normalised text. */
typedef struct spm_best {
    float score;   /* total score of the best path ending here */
    int32_t start; /* where its last piece starts, -1 while unreached */
    int32_t id;    /* that piece */
} spm_best;

/* Builds s->chars when the pieces allow it (see spm_chars). 0 or FY_ENOMEM. */
int spm_chars_build(fy_spm *s);
void spm_chars_free(spm_chars *c);

/* Unigram Viterbi over the normalised text t[0, size) into best[0, size]. */
void spm_viterbi(const fy_spm *s, const uint8_t *t, int32_t size, spm_best *best);

#endif
