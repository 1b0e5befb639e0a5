/* spm.c - SentencePiece unigram tokenizer: load, encode, decode.
 *
 * Mirrors Google's sentencepiece 0.1.97 (the spm_encode / spm_decode that
 * the parity tests run) decision for decision: the optimised unigram
 * Viterbi (including its mix of float and double arithmetic, which decides
 * ties), unknown runs merged into one piece, byte fallback, and the decoder's
 * rules for the leading space, byte pieces and U+FFFD. The loaded model is
 * immutable; each call keeps its working memory to itself.
 */
#include "text/spm.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/spm_impl.h"
#include "util/mapfile.h"

#define SPACE_SYMBOL        "\xe2\x96\x81" /* U+2581 */
#define REPLACEMENT_CHAR    "\xef\xbf\xbd" /* U+FFFD */
#define DEFAULT_UNK_SURFACE " \xe2\x81\x87 "

/* ---- piece trie ---- */

static int trie_add_node(spm_trie *t)
{
    if (t->n_nodes == t->cap_nodes) return -1; /* sized up front; never happens */
    size_t i = t->n_nodes++;
    t->normal_id[i] = t->reserved_id[i] = t->viterbi_id[i] = -1;
    t->user_defined[i] = 0;
    return (int)i;
}

static int trie_init(spm_trie *t, size_t total_bytes)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < 256; i++) t->root[i] = -1;
    t->cap_nodes = total_bytes + 1;
    /* every byte may be an edge; trie_compact sizes it to the real count */
    t->nslots = (uint32_t)(total_bytes + total_bytes / 4 + 16);
    t->edges = calloc(t->nslots, sizeof *t->edges);
    t->normal_id = malloc(t->cap_nodes * sizeof *t->normal_id);
    t->reserved_id = malloc(t->cap_nodes * sizeof *t->reserved_id);
    t->viterbi_id = malloc(t->cap_nodes * sizeof *t->viterbi_id);
    t->user_defined = malloc(t->cap_nodes);
    if (!t->edges || !t->normal_id || !t->reserved_id || !t->viterbi_id || !t->user_defined)
        return FY_ENOMEM;
    trie_add_node(t); /* the root */
    return 0;
}

static void trie_free(spm_trie *t)
{
    free(t->edges);
    free(t->normal_id);
    free(t->reserved_id);
    free(t->viterbi_id);
    free(t->user_defined);
    memset(t, 0, sizeof *t);
}

/* Stores edge e = key << 32 | child in the table slots (t's size). */
static void edge_put(uint64_t *slots, const spm_trie *t, uint64_t e)
{
    uint32_t h = spm_trie_slot(t, (uint32_t)(e >> 32));
    while (slots[h]) h = h + 1 == t->nslots ? 0 : h + 1;
    slots[h] = e;
}

/* Moves the edges into a table of twice their number (a shared prefix is
 * one edge, so there are far fewer than the bytes the table was sized for:
 * 8 MB -> 3 MB for a 64000-piece vocabulary). */
static int trie_compact(spm_trie *t)
{
    size_t n = 0;
    for (uint32_t i = 0; i < t->nslots; i++) n += t->edges[i] != 0;
    spm_trie small = *t;
    small.nslots = (uint32_t)(2 * n + 16);
    uint64_t *slots = calloc(small.nslots, sizeof *slots);
    if (!slots) return FY_ENOMEM;
    for (uint32_t i = 0; i < t->nslots; i++)
        if (t->edges[i]) edge_put(slots, &small, t->edges[i]);
    free(t->edges);
    t->edges = slots;
    t->nslots = small.nslots;
    return 0;
}

/* The node for s (created as needed). */
static int32_t trie_insert(spm_trie *t, const uint8_t *s, size_t len)
{
    int32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t next = spm_trie_next(t, node, s[i]);
        if (next < 0) {
            next = trie_add_node(t);
            if (next < 0) return -1;
            if (node == 0) {
                t->root[s[i]] = next;
            } else {
                uint32_t key = (uint32_t)node * 256u + s[i] + 1u;
                edge_put(t->edges, t, (uint64_t)key << 32 | (uint32_t)next);
            }
        }
        node = next;
    }
    return node;
}

/* The node for exactly s, or -1. */
static int32_t trie_find(const spm_trie *t, const uint8_t *s, size_t len)
{
    int32_t node = 0;
    for (size_t i = 0; i < len && node >= 0; i++) node = spm_trie_next(t, node, s[i]);
    return node;
}

/* ---- loading ---- */

static int piece_to_byte(const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    if (n != 6 || memcmp(p, "<0x", 3) || p[5] != '>') return -1;
    const char *hi = memchr(hex, p[3], 16), *lo = memchr(hex, p[4], 16);
    if (!hi || !lo || !p[3] || !p[4]) return -1;
    return (int)(hi - hex) * 16 + (int)(lo - hex);
}

/* Copies the pieces and fills the per-id tables and the trie. */
static int load_pieces(fy_spm *s, const spm_proto *m, fy_error *err)
{
    if (m->n_pieces == 0) return fy_err(err, FY_EFORMAT, "%s: corrupt model: no pieces", s->name);
    size_t total = 0;
    for (size_t i = 0; i < m->n_pieces; i++) total += m->pieces[i].piece.n;
    if (m->n_pieces > INT32_MAX / 2 || total > (1u << 24) - 2)
        return fy_err(err, FY_EFORMAT, "%s: corrupt model: %zu pieces / %zu bytes is too large",
                      s->name, m->n_pieces, total);
    s->n = (int)m->n_pieces;
    size_t n = m->n_pieces;
    s->text = malloc(total + n);
    s->off = malloc((n + 1) * sizeof *s->off);
    s->score = malloc(n * sizeof *s->score);
    s->type = malloc(n);
    s->canon = malloc(n * sizeof *s->canon);
    s->byte_value = malloc(n * sizeof *s->byte_value);
    if (!s->text || !s->off || !s->score || !s->type || !s->canon || !s->byte_value ||
        trie_init(&s->trie, total))
        return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    for (int b = 0; b < 256; b++) s->byte_id[b] = -1;
    s->unk = -1;
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        const spm_proto_piece *pc = &m->pieces[i];
        if (pc->piece.n == 0)
            return fy_err(err, FY_EFORMAT, "%s: corrupt model: piece %zu is empty", s->name, i);
        if (memchr(pc->piece.p, 0, pc->piece.n))
            return fy_err(err, FY_EFORMAT, "%s: corrupt model: piece %zu contains a NUL byte",
                          s->name, i);
        s->off[i] = (uint32_t)pos;
        memcpy(s->text + pos, pc->piece.p, pc->piece.n);
        pos += pc->piece.n;
        s->text[pos++] = '\0';
        s->score[i] = pc->score;
        s->type[i] = (uint8_t)pc->type;
        s->byte_value[i] = -1;
        int32_t node = trie_insert(&s->trie, pc->piece.p, pc->piece.n);
        if (node < 0) return fy_err(err, FY_ENOMEM, "%s: trie overflow", s->name);
        int normal =
            pc->type == SPM_NORMAL || pc->type == SPM_USER_DEFINED || pc->type == SPM_UNUSED;
        int32_t *slot = normal ? &s->trie.normal_id[node] : &s->trie.reserved_id[node];
        if (*slot >= 0)
            return fy_err(err, FY_EFORMAT, "%s: corrupt model: piece \"%.*s\" is defined twice",
                          s->name, (int)pc->piece.n, (const char *)pc->piece.p);
        *slot = (int32_t)i;
        if (normal && pc->type != SPM_UNUSED) s->trie.viterbi_id[node] = (int32_t)i;
        if (pc->type == SPM_USER_DEFINED) s->trie.user_defined[node] = 1;
        if (pc->type == SPM_UNKNOWN) {
            if (s->unk >= 0)
                return fy_err(err, FY_EFORMAT, "%s: corrupt model: more than one unknown piece",
                              s->name);
            s->unk = (int)i;
        }
        if (pc->type == SPM_BYTE) {
            int b = piece_to_byte(pc->piece.p, pc->piece.n);
            if (!m->byte_fallback)
                return fy_err(err, FY_EFORMAT,
                              "%s: corrupt model: byte piece %zu but byte_fallback is off", s->name,
                              i);
            if (b < 0)
                return fy_err(err, FY_EFORMAT, "%s: corrupt model: invalid byte piece %zu", s->name,
                              i);
            s->byte_value[i] = (int16_t)b;
        }
    }
    s->off[n] = (uint32_t)pos;
    if (trie_compact(&s->trie)) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    return 0;
}

/* PieceToId: control/unknown/byte pieces first, then the others, else unk. */
static int lookup(const fy_spm *s, const char *piece, size_t len)
{
    int32_t node = trie_find(&s->trie, (const uint8_t *)piece, len);
    if (node >= 0) {
        if (s->trie.reserved_id[node] >= 0) return s->trie.reserved_id[node];
        if (s->trie.normal_id[node] >= 0) return s->trie.normal_id[node];
    }
    return s->unk;
}

static int special_id(const fy_spm *s, spm_bytes name, const char *dflt, int type)
{
    const char *p = name.n ? (const char *)name.p : dflt;
    size_t len = name.n ? strnlen(p, name.n) : strlen(dflt);
    int id = lookup(s, p, len);
    return id >= 0 && s->type[id] == type ? id : -1;
}

/* Checks what the reference checks after reading the pieces, then derives
 * the tables encoding and decoding use. */
static int finish_model(fy_spm *s, const spm_proto *m, fy_error *err)
{
    if (s->unk < 0) return fy_err(err, FY_EFORMAT, "%s: corrupt model: no unknown piece", s->name);
    int any_normal = 0;
    s->min_score = FLT_MAX;
    s->max_score = FLT_MIN;
    for (int i = 0; i < s->n; i++) {
        if (s->type[i] == SPM_NORMAL || s->type[i] == SPM_USER_DEFINED || s->type[i] == SPM_UNUSED)
            any_normal = 1;
        if (s->type[i] == SPM_BYTE)
            s->byte_id[s->byte_value[i]] = lookup(s, s->text + s->off[i], 6);
        if (s->type[i] != SPM_NORMAL) continue;
        if (s->score[i] < s->min_score) s->min_score = s->score[i];
        if (s->max_score < s->score[i]) s->max_score = s->score[i];
    }
    if (!any_normal) return fy_err(err, FY_EFORMAT, "%s: corrupt model: no normal pieces", s->name);
    s->byte_fallback = m->byte_fallback;
    if (s->byte_fallback)
        for (int b = 0; b < 256; b++)
            if (s->byte_id[b] < 0)
                return fy_err(err, FY_EFORMAT,
                              "%s: corrupt model: byte_fallback without all 256 byte pieces",
                              s->name);
    for (int i = 0; i < s->n; i++)
        s->canon[i] = lookup(s, s->text + s->off[i], s->off[i + 1] - s->off[i] - 1);
    s->api_unk = special_id(s, m->unk_piece, "<unk>", SPM_UNKNOWN);
    s->api_bos = special_id(s, m->bos_piece, "<s>", SPM_CONTROL);
    s->api_eos = special_id(s, m->eos_piece, "</s>", SPM_CONTROL);
    s->api_pad = special_id(s, m->pad_piece, "<pad>", SPM_CONTROL);
    s->dummy_prefix_rules =
        m->normalizer.add_dummy_prefix || m->normalizer.remove_extra_whitespaces;
    s->remove_extra_ws = m->normalizer.remove_extra_whitespaces;
    const char *surf = m->has_unk_surface ? (const char *)m->unk_surface.p : DEFAULT_UNK_SURFACE;
    size_t surf_len = m->has_unk_surface ? strnlen(surf, m->unk_surface.n) : strlen(surf);
    s->unk_surface = malloc(surf_len + 1);
    if (!s->unk_surface) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    memcpy(s->unk_surface, surf, surf_len);
    s->unk_surface[surf_len] = '\0';
    s->unk_surface_len = surf_len;
    return 0;
}

static int has_user_defined(const fy_spm *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->type[i] == SPM_USER_DEFINED) return 1;
    return 0;
}

fy_spm *fy_spm_load(const void *data, size_t size, const char *name, fy_error *err)
{
    spm_proto m;
    fy_spm *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name ? name : "(memory)"))) {
        free(s);
        fy_err(err, FY_ENOMEM, "%s: out of memory", name ? name : "(memory)");
        return NULL;
    }
    if (spm_proto_parse(&m, data, size, s->name, err)) goto fail;
    if (m.model_type != SPM_MODEL_UNIGRAM) {
        static const char *const kinds[] = {"", "unigram", "BPE", "word", "char"};
        fy_err(err, FY_EUNSUPPORTED, "%s: %s models are not supported (only unigram)", s->name,
               kinds[m.model_type]);
        goto fail;
    }
    if (load_pieces(s, &m, err) || finish_model(s, &m, err)) goto fail;
    if (spm_chars_build(s)) {
        fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
        goto fail;
    }
    if (spm_norm_init(&s->norm, &m.normalizer, m.treat_whitespace_as_suffix,
                      has_user_defined(s) ? &s->trie : NULL, s->name, err))
        goto fail;
    if (m.denormalizer.present && m.denormalizer.charsmap.n > 0) {
        if (spm_norm_init(&s->denorm, &m.denormalizer, 0, NULL, s->name, err)) goto fail;
        s->has_denorm = 1;
    }
    spm_proto_free(&m);
    return s;
fail:
    spm_proto_free(&m);
    fy_spm_free(s);
    return NULL;
}

fy_spm *fy_spm_open(const char *path, fy_error *err)
{
    fy_mapfile f;
    if (fy_mapfile_open(&f, path, err)) return NULL;
    fy_spm *s = fy_spm_load(f.data, f.size, path, err);
    fy_mapfile_close(&f);
    return s;
}

void fy_spm_free(fy_spm *s)
{
    if (!s) return;
    free(s->name);
    free(s->text);
    free(s->off);
    free(s->score);
    free(s->type);
    free(s->canon);
    free(s->byte_value);
    free(s->unk_surface);
    trie_free(&s->trie);
    spm_chars_free(&s->chars);
    spm_norm_free(&s->norm);
    spm_norm_free(&s->denorm);
    free(s);
}

/* ---- lookups ---- */

int fy_spm_vocab_size(const fy_spm *s)
{
    return s->n;
}

size_t fy_spm_memory_bytes(const fy_spm *s)
{
    size_t n = (size_t)s->n;
    size_t pieces =
        s->off[n] + (n + 1) * sizeof *s->off +
        n * (sizeof *s->score + sizeof *s->type + sizeof *s->canon + sizeof *s->byte_value);
    size_t trie =
        s->trie.nslots * sizeof *s->trie.edges + s->trie.n_nodes * (3 * sizeof(int32_t) + 1);
    size_t chars = s->chars.slots ? s->chars.nslots * sizeof *s->chars.slots : 0;
    size_t norm = s->norm.n_units * sizeof *s->norm.units + s->norm.n_strings +
                  s->denorm.n_units * sizeof *s->denorm.units + s->denorm.n_strings;
    return sizeof *s + pieces + trie + chars + norm;
}

int fy_spm_unk_id(const fy_spm *s)
{
    return s->api_unk;
}
int fy_spm_bos_id(const fy_spm *s)
{
    return s->api_bos;
}
int fy_spm_eos_id(const fy_spm *s)
{
    return s->api_eos;
}
int fy_spm_pad_id(const fy_spm *s)
{
    return s->api_pad;
}

int fy_spm_piece_to_id(const fy_spm *s, const char *piece, size_t len)
{
    return lookup(s, piece, len);
}

const char *fy_spm_id_to_piece(const fy_spm *s, int id, size_t *len)
{
    if (id < 0 || id >= s->n) return NULL;
    if (len) *len = s->off[id + 1] - s->off[id] - 1;
    return s->text + s->off[id];
}

/* ---- encoding ---- */

/* One piece of the result: normalised bytes [begin, end) and its id. An
 * unknown piece with byte fallback stands for one byte piece per byte. */
typedef struct seg {
    int32_t begin, end, id;
} seg;

/* Working memory of one encode call. */
typedef struct encoding {
    spm_buf norm;
    char norm_stack[1024];
    void *heap; /* best nodes + segments */
    seg *segs;
    size_t n_segs;
} encoding;

/* Backtracks into segs (in order) and merges runs of unknown pieces unless
 * they become byte pieces. Returns the number of segments. */
static size_t backtrack(const fy_spm *s, const spm_best *best, int32_t size, seg *segs)
{
    size_t n = 0;
    for (int32_t end = size; end > 0;) {
        const spm_best *b = &best[end];
        segs[n++] = (seg){b->start, end, b->id};
        end = b->start;
    }
    for (size_t i = 0; i < n / 2; i++) {
        seg tmp = segs[i];
        segs[i] = segs[n - 1 - i];
        segs[n - 1 - i] = tmp;
    }
    if (s->byte_fallback) return n;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w > 0 && segs[i].id == s->unk && segs[w - 1].id == s->unk)
            segs[w - 1].end = segs[i].end;
        else
            segs[w++] = segs[i];
    }
    return w;
}

static void encoding_free(encoding *e)
{
    spm_buf_release(&e->norm);
    free(e->heap);
}

/* Normalises and segments text into e; release with encoding_free. */
static int encode_segments(const fy_spm *s, const char *text, size_t len, encoding *e,
                           fy_error *err)
{
    e->heap = NULL;
    e->segs = NULL;
    e->n_segs = 0;
    e->norm = (spm_buf){e->norm_stack, 0, sizeof e->norm_stack, 0};
    if (len > (size_t)INT32_MAX / 8)
        return fy_err(err, FY_ELIMIT, "%s: input of %zu bytes is too long to encode", s->name, len);
    if (spm_normalize(&s->norm, text, len, &e->norm))
        return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    if (e->norm.len > (size_t)INT32_MAX / 2)
        return fy_err(err, FY_ELIMIT, "%s: input is too long to encode", s->name);
    int32_t size = (int32_t)e->norm.len;
    if (size == 0) return 0;
    e->heap = malloc((size_t)(size + 1) * sizeof(spm_best) + (size_t)size * sizeof(seg));
    if (!e->heap) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    spm_best *best = e->heap;
    e->segs = (seg *)(best + size + 1);
    spm_viterbi(s, (const uint8_t *)e->norm.p, size, best);
    e->n_segs = backtrack(s, best, size, e->segs);
    return 0;
}

long fy_spm_encode(const fy_spm *s, const char *text, size_t len, int32_t *ids, size_t cap,
                   fy_error *err)
{
    encoding e;
    int rc = encode_segments(s, text, len, &e, err);
    if (rc) {
        encoding_free(&e);
        return rc;
    }
    size_t n = 0;
    const uint8_t *t = (const uint8_t *)e.norm.p;
    for (size_t i = 0; i < e.n_segs; i++) {
        const seg *g = &e.segs[i];
        if (g->id == s->unk && s->byte_fallback) {
            for (int32_t k = g->begin; k < g->end; k++, n++)
                if (n < cap) ids[n] = s->byte_id[t[k]];
        } else {
            if (n < cap) ids[n] = g->id;
            n++;
        }
    }
    encoding_free(&e);
    return (long)n;
}

/* Appends len bytes to out[0, cap-1) at *pos, counting what does not fit. */
static void put(char *out, size_t cap, size_t *pos, const char *p, size_t len)
{
    if (*pos < cap) {
        size_t room = cap - 1 - *pos;
        memcpy(out + *pos, p, len < room ? len : room);
    }
    *pos += len;
}

long fy_spm_encode_pieces(const fy_spm *s, const char *text, size_t len, char *out, size_t cap,
                          fy_error *err)
{
    encoding e;
    int rc = encode_segments(s, text, len, &e, err);
    if (rc) {
        encoding_free(&e);
        return rc;
    }
    size_t pos = 0;
    const char *t = e.norm.p;
    for (size_t i = 0; i < e.n_segs; i++) {
        const seg *g = &e.segs[i];
        if (g->id == s->unk && s->byte_fallback) {
            for (int32_t k = g->begin; k < g->end; k++) {
                char piece[8];
                snprintf(piece, sizeof piece, "<0x%02X>", (uint8_t)t[k]);
                if (pos > 0) put(out, cap, &pos, " ", 1);
                put(out, cap, &pos, piece, 6);
            }
        } else {
            if (pos > 0) put(out, cap, &pos, " ", 1);
            put(out, cap, &pos, t + g->begin, (size_t)(g->end - g->begin));
        }
    }
    if (cap > 0) out[pos < cap ? pos : cap - 1] = '\0';
    encoding_free(&e);
    return (long)pos;
}

/* ---- decoding ---- */

/* One piece to decode: its text and the id PieceToId gives it. */
typedef struct dpiece {
    const char *p;
    size_t len;
    int id;
} dpiece;

static int append(spm_buf *b, const char *p, size_t len)
{
    if (spm_buf_reserve(b, len)) return FY_ENOMEM;
    memcpy(b->p + b->len, p, len);
    b->len += len;
    return 0;
}

/* Appends the text of byte pieces [begin, end): valid UTF-8 sequences as
 * they are, each byte of a malformed one as U+FFFD. */
static int decode_bytes(const fy_spm *s, const dpiece *pc, size_t begin, size_t end, spm_buf *b)
{
    size_t i = begin;
    while (i < end) {
        uint8_t win[4] = {0};
        size_t n = 0, mblen;
        while (n < 4 && i + n < end) win[n] = (uint8_t)s->byte_value[pc[i + n].id], n++;
        int rc = spm_utf8_valid_prefix(win, n, &mblen) ? append(b, (const char *)win, mblen)
                                                       : append(b, REPLACEMENT_CHAR, 3);
        if (rc) return rc;
        i += mblen;
    }
    return 0;
}

/* Appends one non-byte piece (DecodeSentencePiece); *bos_ws_seen tells
 * whether it consumed the leading space of the text. */
static int decode_piece(const fy_spm *s, const dpiece *pc, int is_bos_ws, int *bos_ws_seen,
                        spm_buf *b)
{
    *bos_ws_seen = 0;
    int type = s->type[pc->id];
    if (type == SPM_CONTROL) return 0;
    if (type == SPM_UNKNOWN) {
        size_t ulen = s->off[pc->id + 1] - s->off[pc->id] - 1;
        if (ulen == pc->len && !memcmp(s->text + s->off[pc->id], pc->p, ulen))
            return append(b, s->unk_surface, s->unk_surface_len);
        return append(b, pc->p, pc->len);
    }
    const char *p = pc->p, *end = pc->p + pc->len;
    if (is_bos_ws && s->dummy_prefix_rules && pc->len >= 3 && !memcmp(p, SPACE_SYMBOL, 3)) {
        p += 3;
        *bos_ws_seen = !s->remove_extra_ws;
    }
    if (spm_buf_reserve(b, (size_t)(end - p))) return FY_ENOMEM;
    while (p < end) {
        if (end - p >= 3 && !memcmp(p, SPACE_SYMBOL, 3)) {
            b->p[b->len++] = ' ';
            p += 3;
        } else {
            b->p[b->len++] = *p++;
        }
    }
    return 0;
}

static int decode_all(const fy_spm *s, const dpiece *pc, size_t n, spm_buf *b)
{
    size_t byte_start = 0;
    int is_bos_ws = 1, bos_ws_seen = 0, rc;
    for (size_t i = 0; i < n; i++) {
        if (s->type[pc[i].id] == SPM_BYTE) continue;
        if ((rc = decode_bytes(s, pc, byte_start, i, b))) return rc;
        if (bos_ws_seen || b->len > 0) is_bos_ws = 0;
        byte_start = i + 1;
        if ((rc = decode_piece(s, &pc[i], is_bos_ws, &bos_ws_seen, b))) return rc;
    }
    return decode_bytes(s, pc, byte_start, n, b);
}

/* Decodes pc[0, n) into out (cap bytes incl. NUL); applies the model's
 * denormaliser when it has one. */
static long decode_out(const fy_spm *s, const dpiece *pc, size_t n, char *out, size_t cap,
                       fy_error *err)
{
    char stack[1024], stack2[1024];
    spm_buf b = {stack, 0, sizeof stack, 0}, d = {stack2, 0, sizeof stack2, 0};
    int rc = decode_all(s, pc, n, &b);
    spm_buf *res = &b;
    if (!rc && s->has_denorm) {
        rc = spm_normalize(&s->denorm, b.p, b.len, &d);
        res = &d;
    }
    long total = (long)res->len;
    if (rc) {
        total = fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    } else if (cap > 0) {
        size_t k = res->len < cap - 1 ? res->len : cap - 1;
        memcpy(out, res->p, k);
        out[k] = '\0';
    }
    spm_buf_release(&b);
    spm_buf_release(&d);
    return total;
}

long fy_spm_decode(const fy_spm *s, const int32_t *ids, size_t n, char *out, size_t cap,
                   fy_error *err)
{
    dpiece stack[256];
    stack[0] = (dpiece){NULL, 0, 0};
    if (n > SIZE_MAX / sizeof(dpiece)) return fy_err(err, FY_ELIMIT, "%s: too many ids", s->name);
    dpiece *pc = n <= 256 ? stack : malloc(n * sizeof *pc);
    if (!pc) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= s->n) {
            if (pc != stack) free(pc);
            return fy_err(err, FY_EINVAL, "%s: invalid id %d", s->name, (int)ids[i]);
        }
        pc[i].p = s->text + s->off[ids[i]];
        pc[i].len = s->off[ids[i] + 1] - s->off[ids[i]] - 1;
        pc[i].id = s->canon[ids[i]];
    }
    long r = decode_out(s, pc, n, out, cap, err);
    if (pc != stack) free(pc);
    return r;
}

long fy_spm_decode_pieces(const fy_spm *s, const char *const *pieces, const size_t *lens, size_t n,
                          char *out, size_t cap, fy_error *err)
{
    dpiece stack[256];
    stack[0] = (dpiece){NULL, 0, 0};
    if (n > SIZE_MAX / sizeof(dpiece)) return fy_err(err, FY_ELIMIT, "%s: too many ids", s->name);
    dpiece *pc = n <= 256 ? stack : malloc(n * sizeof *pc);
    if (!pc) return fy_err(err, FY_ENOMEM, "%s: out of memory", s->name);
    for (size_t i = 0; i < n; i++) {
        pc[i].p = pieces[i];
        pc[i].len = lens[i];
        pc[i].id = lookup(s, pieces[i], lens[i]);
    }
    long r = decode_out(s, pc, n, out, cap, err);
    if (pc != stack) free(pc);
    return r;
}
