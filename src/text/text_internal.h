/* text_internal.h - the pure pieces behind segment.h, shared with the tests.
 *
 * Not API: the server and the CLI use segment.h only. Each step of the
 * pipeline is a function of its inputs (no globals), so tests can drive the
 * splitter, span finder, HTML flattener and long-sentence cutter alone.
 */
#ifndef FY_TEXT_INTERNAL_H
#define FY_TEXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "text/segment.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/lang_rules.h"

/* ---- UTF-8 and character classes -------------------------------------- */

/* Decodes the code point at s[i] (i < len). *n receives its byte length
 * (>= 1). An invalid or truncated sequence decodes as U+FFFD, n = 1. */
uint32_t fy_utf8_get(const char *s, size_t len, size_t i, size_t *n);
/* Start of the character that ends at i (i > 0); never below 0. */
size_t fy_utf8_back(const char *s, size_t i);
/* 1 if the NUL-terminated UTF-8 string set holds code point cp. */
int fy_utf8_has(const char *set, uint32_t cp);
int fy_cp_is_han(uint32_t cp);   /* CJK unified ideographs (all blocks) */
int fy_cp_is_cjk(uint32_t cp);   /* Han, kana, hangul, CJK/full-width punctuation */
int fy_cp_is_space(uint32_t cp); /* ASCII white space, NBSP, U+3000, U+2000..200A... */
int fy_cp_is_lower(uint32_t cp); /* lower-case Latin, Greek, Cyrillic, Armenian letter */

/* The ISO 15924 code of the script of letter cp ("Latn", "Hani", "Kana" for
 * hiragana and katakana, "Hang", "Cyrl"...), or NULL if cp is not a letter
 * (digits, punctuation, symbols, marks outside the scripts' letter ranges).
 * A table of the letter ranges of the scripts in use today (script.c), not
 * the whole Unicode database. Static strings. */
const char *fy_cp_script(uint32_t cp);
int fy_cp_is_letter(uint32_t cp); /* fy_cp_script(cp) != NULL */
int fy_cp_is_kana(uint32_t cp);   /* hiragana, katakana (also half-width) */
int fy_cp_is_hangul(uint32_t cp); /* syllables and jamo */
/* A combining mark that belongs to the character before it (Thai, Lao,
 * Khmer and Myanmar vowel and tone signs, the combining diacritics). */
int fy_cp_is_mark(uint32_t cp);
/* A character that belongs to the one after it: Thai and Lao vowels
 * written before their consonant, the Khmer and Myanmar stacking signs. */
int fy_cp_joins_next(uint32_t cp);
/* A letter of a script written without spaces between words: Han, kana,
 * Thai, Lao, Khmer, Myanmar. */
int fy_cp_is_unspaced(uint32_t cp);
/* Simple case mapping of the cased scripts in use (case.c): the lower-case
 * form for comparing without regard to case, and the upper-case form; a
 * character without one maps to itself. */
uint32_t fy_cp_fold(uint32_t cp);
uint32_t fy_cp_upper(uint32_t cp);

/* ---- protected spans --------------------------------------------------- */

enum {
    FY_SPAN_URL = 1,
    FY_SPAN_EMAIL,
    FY_SPAN_CODE,    /* `code` */
    FY_SPAN_NUMUNIT, /* 3.5GHz, 25°C, 50%, $10 */
    FY_SPAN_WORD,    /* Latin identifier inside Chinese: iPhone, Node.js, GPT-4 (soft) */
    FY_SPAN_TERM,    /* a glossary's source term (glossary.h): replaced by its target */
};

typedef struct fy_span {
    size_t start, len;
    int kind;      /* FY_SPAN_* */
    uint32_t term; /* FY_SPAN_TERM: the glossary entry */
} fy_span;

typedef struct fy_spans {
    fy_span *v;
    size_t n, cap;
} fy_spans;

/* Appends the protected spans of s[0..len) to out, in order and without
 * overlaps. Spans never contain '\n'. words: also FY_SPAN_WORD (only
 * useful where Latin is not the text's own script). 0 or FY_ENOMEM. */
int fy_find_spans_ex(const char *s, size_t len, int words, fy_spans *out);
/* fy_find_spans_ex with words. */
int fy_find_spans(const char *s, size_t len, fy_spans *out);
/* Strict spans must reach the output; soft ones (words) are only repaired. */
int fy_span_is_strict(int kind);

/* ---- sentence splitting ------------------------------------------------- */

typedef struct fy_range {
    size_t start, len;
    int glue;    /* cut in the middle of a word: no space may be put before it */
    long tokens; /* fy_cut_long: the piece's count if it was measured, else 0 */
} fy_range;

typedef struct fy_ranges {
    fy_range *v;
    size_t n, cap;
} fy_ranges;

/* Appends the sentences of s[0..len), a text in the language of row r
 * (NULL: the default row), to out: trimmed of white space, non-empty,
 * never across '\n' or '\r', never inside a span (spans sorted, as
 * fy_find_spans gives them). The terminators of every script end a
 * sentence by their neighbours, and so do the row's own (terms); the row's
 * abbreviations and FY_LR_NO_DOT_END decide about a '.'. 0 or FY_ENOMEM. */
int fy_split_sentences(const char *s, size_t len, const fy_spans *spans, const fy_lang_rules *r,
                       fy_ranges *out);

/* Token estimate for text without a model: Han/kana characters count one,
 * Latin words one per 6 letters, digits one per 3, punctuation one, + EOS. */
long fy_estimate_tokens(const char *s, size_t len);
/* count(ctx, s, len) if count is given and not negative, else the estimate. */
long fy_token_count(const char *s, size_t len, fy_token_counter count, void *ctx);

/* Cuts the sentence s[0..len) into pieces of at most max_tokens (counted by
 * count or the estimate), each cut at the best boundary in its reach: after
 * '，' or '、', then after ';' or ',', then at a space, then at any character
 * boundary outside spans (glue set). Appends trimmed pieces (offsets relative
 * to s) to out; nothing is dropped. A sentence that fits is counted once and
 * appended whole with its count in tokens; so is the last piece when its
 * count is known. 0 or FY_ENOMEM. */
int fy_cut_long(const char *s, size_t len, int max_tokens, fy_token_counter count, void *ctx,
                const fy_spans *spans, fy_ranges *out);

/* ---- clean-up ------------------------------------------------------------ */

enum {
    FY_TOK_LINK = 1, /* URL, e-mail, span marker: never changed */
    FY_TOK_SOLO = 2, /* never collapsed as a repeated unit of one token */
    FY_TOK_GAP = 4,  /* white space before it */
};

/* A word of engine output, s[a..a+n), for the clean-ups. */
typedef struct fy_tok {
    size_t a, n;
    unsigned flags; /* FY_TOK_* */
    int cls;        /* the caller's character class */
} fy_tok;

/* The word passes of the clean-up (cleanup.c) for a language with spaces
 * between words: flags FY_LR_FULLWIDTH and FY_LR_TIGHT of util/lang_rules.h
 * (both: fy_cleanup_english); decoder loops and white space always.
 * malloc'd, NULL when out of memory. */
char *fy_cleanup_words(const char *s, size_t len, unsigned flags);
/* The Chinese clean-up (cleanup_zh.c) in the style of row r: 、 for
 * Japanese's comma, the row's quotation marks. */
char *fy_cleanup_cjk(const char *s, size_t len, const fy_lang_rules *r);
/* The clean-up of a translation into the language of row r (NULL: the
 * default row), as fy_doc_join applies it (cleanup_lang.c). */
char *fy_cleanup_for(const fy_lang_rules *r, const char *s, size_t len);

/* Drops decoder loops from w[0..n) (tokens of s): an n-gram of up to 8
 * tokens occurring more than 3 times in a row is kept once (compared by
 * bytes, white space ignored). Returns the new count; w is compacted. */
size_t fy_collapse_repeats(const char *s, fy_tok *w, size_t n);

/* ---- language detection ---------------------------------------------------- */

/* detect.c's table of Simplified/Traditional pairs: UTF-8, each pair one
 * Simplified character followed by its Traditional form (for the tests). */
const char *fy_zh_variant_pairs(void);

/* The frame of the detection sample s[0..len) (detect_rules.c): the text
 * with quotations, brackets (on one line) and code-like ASCII words
 * (identifiers, paths, options, camel case, letters with digits) replaced
 * by a space. malloc'd (never empty), NULL when out of memory. */
char *fy_detect_frame(const char *s, size_t len, size_t *out_len);
/* The language that letters only some languages of script use say the
 * short text s[0..n) is in (Cyrillic ў і ї є ґ ј љ ... ы э ё ъ, Arabic
 * script's Urdu and Persian letters, Devanagari's ळ), or NULL. */
const char *fy_letter_rule(const char *s, size_t n, const char *script);

/* ---- HTML flattening ---------------------------------------------------- */

enum {
    FY_EV_OPEN = 1, /* inline start tag: <b>, <a href=...> */
    FY_EV_CLOSE,    /* inline end tag */
    FY_EV_OTHER,    /* comment, inline void element (<img>), empty object */
    FY_EV_OBJECT,   /* untouched inline element (<code>, translate="no"): one U+FFFC in flat */
};

typedef struct fy_event {
    size_t pos;      /* flat offset: the event comes just before flat[pos] */
    size_t src, len; /* its bytes in the source */
    int kind;        /* FY_EV_* */
} fy_event;

/* A document as the splitter sees it: flat text plus, for each flat byte,
 * the source bytes it came from. Plain text: flat == source. HTML: text
 * nodes with entities decoded, white space as ' ', block tags and untouched
 * blocks as '\n', untouched inline elements as U+FFFC; inline tags and
 * comments are zero-width events. */
typedef struct fy_flat {
    char *text;
    size_t len;
    size_t *s0, *s1; /* [len]: source range of each flat byte (HTML only: plain
                        text maps to itself, so it needs no 16 bytes a byte) */
    fy_event *ev;    /* sorted by pos */
    size_t nev, cap_ev;
} fy_flat;

/* Where the source bytes of flat byte i start, and where they end. */
static inline size_t fy_flat_src0(const fy_flat *f, size_t i)
{
    if (f->s0) return f->s0[i];
    while (i > 0 && ((unsigned char)f->text[i] & 0xC0) == 0x80) i--;
    return i;
}

static inline size_t fy_flat_src1(const fy_flat *f, size_t i)
{
    if (f->s1) return f->s1[i];
    for (i++; i < f->len && ((unsigned char)f->text[i] & 0xC0) == 0x80;) i++;
    return i;
}

/* Flattens src[0..len) (valid UTF-8). html selects the mode; placeholders:
 * the plug-ins' placeholders (fy_placeholder_at) become inline events, in
 * plain text as in HTML. 0 or FY_ENOMEM; malformed HTML is not an error
 * (unclosed tags run to the end). */
int fy_flatten(const char *src, size_t len, int html, int placeholders, fy_flat *out);

/* The placeholder a translation plug-in put at s[i], if there is one:
 * {N}, {{N}}, [N], [[N]] and <xN></xN>, <xN/> (one FY_EV_OTHER each), or
 * <xN> / </xN> of a pair wrapping text (FY_EV_OPEN / FY_EV_CLOSE), where N
 * is 1-4 digits and x 1-8 ASCII letters. Returns its length in bytes and
 * its event kind in *kind, or 0. */
size_t fy_placeholder_at(const char *s, size_t len, size_t i, int *kind);
void fy_flat_free(fy_flat *f);

/* Decodes the HTML character reference at s[i] ('&'); on success returns
 * its length and stores the code point, else 0. */
size_t fy_html_entity(const char *s, size_t len, size_t i, uint32_t *cp);

/* Text content of an HTML fragment (tags dropped, entities decoded, white
 * space runs as one space, trimmed), appended to b. */
void fy_html_text(const char *s, size_t len, fy_buf *b);

#endif
