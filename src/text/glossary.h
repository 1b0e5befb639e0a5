/* glossary.h - a user's terms for one direction, and finding them in text.
 *
 * A glossary maps source terms to the exact target terms a translation
 * must use ("Kraftwerk" -> "power plant"), for one source and one target
 * language; an entry whose target is empty or the source term itself is
 * "keep as is" (a product name the engine must not translate). The
 * splitter (segment.h, fy_split_options.glossary) finds the terms, and the
 * joiner puts each entry's target in the translation through the
 * protected-span machinery, so the rest of the sentence is translated
 * around it.
 *
 * Matching, built once per glossary as an Aho-Corasick automaton over the
 * source terms' UTF-8 (one pass over the text, whatever the number of
 * terms):
 *  - case: for a source language whose row of the language rules
 *    (util/lang_rules.h) sends letters of any script (FY_SRC_ALPHA: Latin,
 *    Cyrillic, Greek...; also "" for a glossary of any language), letters
 *    compare without regard to case (simple case folding of the cased
 *    scripts); for Chinese, Japanese and Korean sources, exactly.
 *  - word boundaries: a term that starts (ends) with a letter, digit or
 *    mark of a script written with spaces does not match after (before)
 *    another one ("AI" is not in "SAID", in English or inside Chinese);
 *    characters of scripts without spaces (Han, kana, Thai, Lao, Khmer,
 *    Myanmar) need none, and neither does a Hangul term's end (Korean
 *    particles follow the noun: 서울에서).
 *  - overlaps: the leftmost match wins, of those the longest; matches never
 *    overlap.
 *  - spacing: a term matches the text as written (one space in the term
 *    is one space in the text; HTML white space counts as one space).
 * Output (fy_glossary_render): the target term as written, except that
 * an occurrence in capitals (two or more upper-case letters, no lower-case
 * one) gets the target in capitals, and an occurrence that capitalises a
 * term written in lower case ("Apple" for "apple", at a sentence start)
 * gets the target's first letter capitalised; keep-as-is entries give the
 * occurrence itself.
 *
 * Life cycle: fy_glossary_new, fy_glossary_add (or fy_glossary_parse) for
 * each entry, fy_glossary_compile; from then on the glossary is immutable
 * and reference counted (fy_glossary_ref / fy_glossary_unref), and any
 * number of threads may match with it at once.
 */
#ifndef FY_TEXT_GLOSSARY_H
#define FY_TEXT_GLOSSARY_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/error.h"

typedef struct fy_glossary fy_glossary;

/* Limits (DeepL's for a term; entries per glossary bound the automaton:
 * about 50 bytes a source byte). */
#define FY_GLOSSARY_TERM_MAX    1024  /* bytes of a source or target term */
#define FY_GLOSSARY_ENTRIES_MAX 10000 /* entries of one glossary */
#define FY_GLOSSARY_HASH_LEN    16    /* hex digits of fy_glossary_hash */

/* Entry formats: DeepL's TSV (source TAB target per line) and CSV (RFC
 * 4180 quoting; optional third and fourth columns: the source and target
 * languages, which must be the glossary's; a first line "source,target"
 * is a header). Empty lines are skipped; white space around a term is
 * dropped. */
enum { FY_GLOSSARY_TSV, FY_GLOSSARY_CSV };

/* An empty glossary for source -> target (language tags, normalised here;
 * "" or NULL: any language, for an inline glossary whose direction is the
 * request's). NULL with FY_EINVAL (not a language tag) or FY_ENOMEM. */
fy_glossary *fy_glossary_new(const char *source, const char *target, fy_error *err);

/* Adds source term s[0..slen) -> target term t[0..tlen) (t NULL or tlen 0:
 * keep as is). Before fy_glossary_compile only. Returns 0, or FY_EINVAL
 * with a message quoting the term ("the source term is empty", "... is not
 * valid UTF-8", "... is longer than 1024 bytes", "... contains a control
 * character (U+0009)", "duplicate source term 'Apple' (already in entry 3)"
 * — duplicates as the glossary compares them, so "apple" and "Apple" are
 * one term in English), FY_ELIMIT (more than FY_GLOSSARY_ENTRIES_MAX), or
 * FY_ENOMEM. Nothing is added on error. */
int fy_glossary_add(fy_glossary *g, const char *s, size_t slen, const char *t, size_t tlen,
                    fy_error *err);

/* Adds every entry of text[0..len) in format (FY_GLOSSARY_TSV, _CSV).
 * Errors as fy_glossary_add, the message prefixed with "line N: ", and
 * FY_EINVAL for a line that is not an entry ("line 4: no tab between the
 * source and the target term"); the entries of earlier lines stay added. */
int fy_glossary_parse(fy_glossary *g, const char *text, size_t len, int format, fy_error *err);

/* Builds the matcher and the content hash; the glossary is immutable
 * afterwards. 0 or FY_ENOMEM. Compiling twice is harmless. */
int fy_glossary_compile(fy_glossary *g, fy_error *err);

/* Another reference to g (returned); g NULL harmless. */
fy_glossary *fy_glossary_ref(fy_glossary *g);

/* Drops a reference; the last one frees g. NULL harmless. */
void fy_glossary_unref(fy_glossary *g);

/* Its languages as given to fy_glossary_new (normalised; "" for any). */
const char *fy_glossary_source(const fy_glossary *g);
const char *fy_glossary_target(const fy_glossary *g);

/* Number of entries. */
size_t fy_glossary_count(const fy_glossary *g);

/* Entry i's source and target terms (borrowed, NUL-terminated; the target
 * is "" for keep as is). 0, or FY_EINVAL when i is out of range. */
int fy_glossary_entry(const fy_glossary *g, size_t i, const char **source, const char **target);

/* Bytes of its terms (what a store counts against its limits). */
size_t fy_glossary_bytes(const fy_glossary *g);

/* A hash of its languages and entries, in order (FY_GLOSSARY_HASH_LEN
 * lower-case hex digits; 64 bits of FNV-1a): equal for equal glossaries,
 * so it names the glossary's content in cache keys. After compile; "" before. */
const char *fy_glossary_hash(const fy_glossary *g);

/* The entries as text in format (TSV: a keep-as-is entry's target is its
 * source term, as DeepL writes it; CSV quoted where needed), one per line.
 * malloc'd, NUL-terminated (*len its length if non-NULL); NULL when out
 * of memory. */
char *fy_glossary_export(const fy_glossary *g, int format, size_t *len);

/* One occurrence of a term: text[start .. start + len) is entry's source. */
typedef struct fy_term_match {
    size_t start, len;
    uint32_t entry;
} fy_term_match;

/* Appends the occurrences of g's terms in text[0..len) (valid UTF-8), in
 * order and without overlaps (see Matching above), to the growable array
 * *out (*n used, *cap allocated; free(*out) when done). Compiled glossaries
 * only. 0, or FY_ENOMEM (what was found so far stays). */
int fy_glossary_match(const fy_glossary *g, const char *text, size_t len, fy_term_match **out,
                      size_t *n, size_t *cap);

/* Appends to b what occurrence occ[0..occ_len) of entry becomes (see
 * Output above). */
void fy_glossary_render(const fy_glossary *g, uint32_t entry, const char *occ, size_t occ_len,
                        fy_buf *b);

/* 1 when entry keeps its source term as it is. */
int fy_glossary_keeps(const fy_glossary *g, uint32_t entry);

#endif
