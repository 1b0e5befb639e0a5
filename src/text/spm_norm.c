/* spm_norm.c - SentencePiece text normalisation.
 *
 * What Normalizer::Normalize does, step for step: at each position the
 * longest user-defined symbol is kept verbatim, else the longest key of the
 * precompiled charsmap (a darts-clone double-array trie over UTF-8 bytes
 * whose values index NUL-terminated replacement strings) is replaced, else
 * one character is copied (a malformed byte becomes U+FFFD). Around that:
 * leading, trailing and repeated spaces are dropped (remove_extra_whitespaces),
 * a space is put in front (add_dummy_prefix) and spaces become U+2581
 * (escape_whitespaces). The charsmap comes from the model file, so every
 * array index is checked; a bad index ends the match instead of reading
 * outside the array.
 */
#include <stdlib.h>
#include <string.h>

#include "text/spm_impl.h"

#define SPACE_SYMBOL     "\xe2\x96\x81" /* U+2581 */
#define REPLACEMENT_CHAR "\xef\xbf\xbd" /* U+FFFD */

/* The reference keeps at most this many prefix matches per position. */
enum { MAX_CHARSMAP_RESULTS = 32 };

int spm_norm_init(spm_norm *n, const spm_proto_norm *spec, int treat_ws_as_suffix,
                  const spm_trie *user, const char *name, fy_error *err)
{
    memset(n, 0, sizeof *n);
    n->add_dummy_prefix = spec->add_dummy_prefix;
    n->remove_extra_whitespaces = spec->remove_extra_whitespaces;
    n->escape_whitespaces = spec->escape_whitespaces;
    n->treat_whitespace_as_suffix = treat_ws_as_suffix;
    n->user = user;
    const spm_bytes *blob = &spec->charsmap;
    if (blob->n == 0) return 0;
    /* <trie size: uint32 LE><double array: trie size bytes><strings> */
    if (blob->n <= 4)
        return fy_err(err, FY_EFORMAT, "%s: corrupt model: precompiled charsmap too short", name);
    const uint8_t *b = blob->p;
    uint32_t trie_size =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    if (trie_size > blob->n - 4 || trie_size < 4)
        return fy_err(err, FY_EFORMAT,
                      "%s: corrupt model: charsmap trie size %u does not fit its %zu bytes", name,
                      trie_size, blob->n);
    n->n_units = trie_size / 4;
    n->n_strings = blob->n - 4 - trie_size;
    n->units = malloc(n->n_units * sizeof *n->units);
    n->strings = malloc(n->n_strings + 1);
    if (!n->units || !n->strings) {
        spm_norm_free(n);
        return fy_err(err, FY_ENOMEM, "%s: out of memory", name);
    }
    for (size_t i = 0; i < n->n_units; i++) {
        const uint8_t *u = b + 4 + 4 * i;
        n->units[i] =
            (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(n->strings, b + 4 + trie_size, n->n_strings);
    n->strings[n->n_strings] = '\0';
    return 0;
}

void spm_norm_free(spm_norm *n)
{
    if (!n) return;
    free(n->units);
    free(n->strings);
    memset(n, 0, sizeof *n);
}

int spm_buf_reserve(spm_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < extra) {
        if (cap > SIZE_MAX / 2) return FY_ENOMEM;
        cap *= 2;
    }
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) return FY_ENOMEM;
    if (!b->heap && b->len) memcpy(p, b->p, b->len);
    b->p = p;
    b->cap = cap;
    b->heap = 1;
    return 0;
}

void spm_buf_release(spm_buf *b)
{
    if (b->heap) free(b->p);
    memset(b, 0, sizeof *b);
}

/* darts-clone unit fields */
static inline int unit_has_leaf(uint32_t u)
{
    return (u >> 8) & 1;
}
static inline uint32_t unit_value(uint32_t u)
{
    return u & 0x7fffffffu;
}
static inline uint32_t unit_label(uint32_t u)
{
    return u & 0x800000ffu;
}
static inline uint32_t unit_offset(uint32_t u)
{
    return (u >> 10) << ((u & (1u << 9)) >> 6);
}

/* Length of the longest charsmap key that prefixes s (0 if none); its
 * replacement's offset into strings goes to *value. */
static size_t charsmap_match(const spm_norm *n, const uint8_t *s, size_t len, uint32_t *value)
{
    size_t longest = 0, found = 0;
    uint32_t pos = unit_offset(n->units[0]);
    for (size_t i = 0; i < len && found < MAX_CHARSMAP_RESULTS; i++) {
        pos ^= s[i];
        if (pos >= n->n_units) break;
        uint32_t u = n->units[pos];
        if (unit_label(u) != s[i]) break;
        pos ^= unit_offset(u);
        if (unit_has_leaf(u)) {
            if (pos >= n->n_units) break;
            longest = i + 1;
            *value = unit_value(n->units[pos]);
            found++;
        }
    }
    return longest;
}

/* Longest user-defined symbol that prefixes s, 0 if none. */
static size_t user_match(const spm_trie *t, const uint8_t *s, size_t len)
{
    size_t longest = 0;
    int32_t node = 0;
    for (size_t i = 0; i < len; i++) {
        node = spm_trie_next(t, node, s[i]);
        if (node < 0) break;
        if (t->user_defined[node]) longest = i + 1;
    }
    return longest;
}

/* Normalises the first character(s) of s: returns how many input bytes are
 * consumed and points *out / *out_len at their normalised form. */
static size_t norm_prefix(const spm_norm *n, const uint8_t *s, size_t len, const char **out,
                          size_t *out_len)
{
    if (n->user) {
        size_t m = user_match(n->user, s, len);
        if (m) {
            *out = (const char *)s;
            *out_len = m;
            return m;
        }
    }
    if (n->units) {
        uint32_t v = 0;
        size_t m = charsmap_match(n, s, len, &v);
        /* An offset past the strings is a corrupt charsmap: copy instead. */
        if (m && v < n->n_strings) {
            *out = n->strings + v;
            *out_len = strlen(*out);
            return m;
        }
    }
    size_t mblen;
    if (!spm_utf8_valid_prefix(s, len, &mblen)) {
        *out = REPLACEMENT_CHAR;
        *out_len = 3;
        return 1;
    }
    *out = (const char *)s;
    *out_len = mblen;
    return mblen;
}

static void put_ws(const spm_norm *n, spm_buf *out)
{
    if (n->escape_whitespaces) {
        memcpy(out->p + out->len, SPACE_SYMBOL, 3);
        out->len += 3;
    } else {
        out->p[out->len++] = ' ';
    }
}

/* Drops trailing spaces (U+2581 when escaping) appended after base. */
static void trim_trailing(const spm_norm *n, spm_buf *out, size_t base)
{
    const char *sp = n->escape_whitespaces ? SPACE_SYMBOL : " ";
    size_t k = n->escape_whitespaces ? 3 : 1;
    while (out->len - base >= k && !memcmp(out->p + out->len - k, sp, k)) out->len -= k;
}

int spm_normalize(const spm_norm *n, const char *text, size_t len, spm_buf *out)
{
    const uint8_t *s = (const uint8_t *)text;
    const char *sp;
    size_t splen, c;
    if (n->remove_extra_whitespaces) {
        while (len > 0) {
            c = norm_prefix(n, s, len, &sp, &splen);
            if (splen != 1 || sp[0] != ' ') break;
            s += c;
            len -= c;
        }
    }
    if (len == 0) return 0;
    size_t base = out->len;
    if (spm_buf_reserve(out, len * 3 + 8)) return FY_ENOMEM;
    if (!n->treat_whitespace_as_suffix && n->add_dummy_prefix) put_ws(n, out);
    int prev_space = n->remove_extra_whitespaces;
    while (len > 0) {
        c = norm_prefix(n, s, len, &sp, &splen);
        while (prev_space && splen > 0 && sp[0] == ' ') sp++, splen--;
        if (splen > 0) {
            if (spm_buf_reserve(out, splen * 3 + 3)) return FY_ENOMEM;
            for (size_t i = 0; i < splen; i++) {
                if (n->escape_whitespaces && sp[i] == ' ') {
                    memcpy(out->p + out->len, SPACE_SYMBOL, 3);
                    out->len += 3;
                } else {
                    out->p[out->len++] = sp[i];
                }
            }
            prev_space = sp[splen - 1] == ' ';
        }
        s += c;
        len -= c;
        if (!n->remove_extra_whitespaces) prev_space = 0;
    }
    if (n->remove_extra_whitespaces) trim_trailing(n, out, base);
    if (n->treat_whitespace_as_suffix && n->add_dummy_prefix) {
        if (spm_buf_reserve(out, 3)) return FY_ENOMEM;
        put_ws(n, out);
    }
    return 0;
}
