/* segment.h - the text pipeline: input document -> engine sentences -> output.
 *
 * fy_doc_split cuts a document (plain text or HTML) into the sentences the
 * engine must translate and remembers everything else verbatim: whitespace,
 * blank lines, indentation, text with nothing to translate in it, HTML tags,
 * comments, entities, attribute values, <script>/<style>/<pre>/<code>/
 * <textarea>, translate="no" and class="notranslate" content. fy_doc_join
 * puts the engine's translations back in their places.
 *
 *     fy_split_options o;
 *     fy_split_options_default(&o);
 *     o.html = is_html;
 *     o.source = "en"; o.target = "zh";              (default: zh -> en)
 *     o.count_tokens = my_counter; o.count_ctx = translator;   (optional)
 *     fy_doc *doc = fy_doc_split(text, len, &o, &err);
 *     for (i = 0; i < fy_doc_sentence_count(doc); i++)
 *         src[i] = fy_doc_sentence(doc, i, NULL);      -> engine, out[i]
 *     char *result = fy_doc_join(doc, (const char *const *)out, &err);
 *     fy_doc_free(doc);
 *
 * Languages. Each side reads its row of the table of language rules
 * (util/lang_rules.h). What the engine gets depends on the source's: for
 * Chinese (zh, zh-Hant) a segment with Han characters, for Japanese one
 * with Han or kana, for Korean one with Hangul, for every other language
 * one with a letter of any other script (Latin, Cyrillic, Greek, Arabic,
 * Hebrew, Devanagari, Thai...; Han, kana and Hangul there are "another
 * language" and do not count), in each case outside strict protected
 * spans. Segments with nothing of that (digits, punctuation, URLs, code)
 * stay verbatim. How translations are put together depends on the
 * target's: its clean-up (fy_cleanup below), the white space between
 * sentences (none for zh, zh-Hant, ja; one space between sentences that
 * touched in the source for the others) and where inline tags may go
 * (spaces, or character clusters in scripts without spaces).
 *
 * Protected spans (URLs, e-mail addresses, numbers with Latin units, `code`
 * spans, inline <code>/translate="no" elements; for CJK and Korean sources
 * also Latin identifiers such as iPhone or Node.js) never reach the engine
 * when they are a segment of their own. Inside a sentence they are sent as
 * their literal text (the model has seen URLs and numbers in training; a
 * synthetic placeholder is out of distribution and is dropped or translated
 * just as often), and fy_doc_join verifies each one: found verbatim -> kept;
 * found with changed spacing/case -> replaced by the source text; missing ->
 * added back before the sentence's final punctuation, so nothing is ever
 * lost (a number with a unit counts as present when its number is: "50%"
 * may become "50 percent"; `code` found without its backticks gets them
 * back). Latin identifiers are soft: repaired, never forced back in.
 *
 * Placeholders (option placeholders, plain text or HTML): the numbered
 * markers translation plug-ins put where a text had something that is not
 * text ({0}, {{1}}, [2], [[3]], <b0></b0>, <b0/>; Immersive Translate,
 * Kiss Translator) are inline markup: the engine never sees them, and
 * fy_doc_join puts each back unchanged, where it stood relative to the
 * words around it, like an inline tag (at the sentence's edges and
 * between sentences exactly where it was). A numbered pair wrapping text
 * (<i1>link</i1>) is an inline element whose text is translated.
 *
 * Glossary (option glossary, text/glossary.h): each occurrence of one of
 * its source terms is a strict protected span whose engine text is the
 * entry's target term (in the occurrence's case; a keep-as-is term stays
 * as it is), so the engine translates the rest of the sentence around a
 * word it keeps; fy_doc_join finds it in the translation like any strict
 * span (verbatim, else ignoring spacing and case) and writes the target
 * term exactly there, or before the final punctuation when the engine
 * dropped it. Inline tags inside an occurrence (a .docx run boundary)
 * are put after it. URLs, e-mail addresses and `code` win over a term
 * they overlap; a term wins over a number with a unit or a Latin word.
 * A sentence whose only text to translate is glossary terms is "fixed"
 * (fy_doc_sentence_fixed): its engine text, joined as it is, is its
 * translation, and no engine need see it. Raw mode applies the glossary
 * too (the one sentence always goes to the engine).
 *
 * Every function here is pure: no globals, a fy_doc is read-only after
 * fy_doc_split, so any number of threads may read one doc at the same time.
 */
#ifndef FY_TEXT_SEGMENT_H
#define FY_TEXT_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_doc fy_doc;

/* Counts the engine tokens of s[0..len) (e.g. fy_translator_count_tokens).
 * Must be thread-safe if splits run concurrently; negative means "unknown"
 * and falls back to the estimate. */
typedef long (*fy_token_counter)(void *ctx, const char *s, size_t len);

typedef struct fy_split_options {
    int html;                      /* input is HTML (fragment or document) */
    int max_tokens;                /* cut longer sentences; <= 0 means 128 */
    fy_token_counter count_tokens; /* NULL: estimate from the script */
    void *count_ctx;               /* passed to count_tokens */
    const char *source; /* language of the text, a tag (util/lang.h: "zh", "zh-Hant", "en",
                           "de", "ja", ...; normalised here); NULL or "" means "zh" */
    const char *target; /* language the translations will be in; NULL or "" means "en" */
    int raw;            /* the text is exactly one sentence (see fy_doc_split) */
    int placeholders;   /* keep translation plug-ins' placeholders in place (below) */
    const struct fy_glossary *glossary; /* terms to enforce (text/glossary.h, compiled; below);
                                           NULL: none. Borrowed during the split only */
} fy_split_options;

/* Fills o with the defaults: plain text, max_tokens 128, estimated counts,
 * zh -> en, not raw. Borrowed strings only: nothing to free. */
void fy_split_options_default(fy_split_options *o);

/* Splits text[0..len) (UTF-8, need not be NUL-terminated). opt may be NULL
 * (defaults); its strings are only read during the call. Returns a new doc
 * the caller frees with fy_doc_free, or NULL with FY_EINVAL ("invalid UTF-8
 * at byte N", "NUL byte at byte N", "unknown source language 'x'", "raw
 * mode is plain text") or FY_ENOMEM in err. A document with nothing to
 * translate for its source language (see Languages above) has 0 sentences,
 * and joins back to the input unchanged. Plain text: a line break always
 * ends a sentence. HTML: block tags (<p>, <div>, <li>, <br>, <h1>...) end
 * one, and a line break in a text node is white space (kept in the output).
 *
 * Sentence ends (any source): 。！？； and line breaks always, … after CJK;
 * ASCII . ! ?, … after Latin text, other scripts' terminators (। ؟ ։ ။ ។
 * ...) and the source's own (Greek ';', Armenian ':': its row's terms)
 * before white space, the end or CJK text, but not before a lower-case word
 * (after Latin text), not after a title (Mr. Dr. Prof. St. vs. e.g. i.e.,
 * and the source's: M. Mme, Hr. bzw., Sra. ...), "No."/"Fig."/"p." (Nr.,
 * S. ...) before a number, a number opening the line ("1. Intro") and,
 * unless a sentence opener follows ("The", "He", "Dann", "Il"...), not
 * after other abbreviations (etc. Inc. Ltd. a.m. usw.), dotted acronyms
 * (U.S.) and initials (J. K. Rowling, А. С. Пушкин); not after a Thai,
 * Lao, Khmer or Burmese letter (an abbreviation mark there). Closing quotes and brackets stay with
 * the sentence they close; decimals, versions and "..." before a lower-case word do not end one.
 *
 * Token counts: count_tokens is called once for each ordinary sentence (on
 * its text as the splitter sees it), more often only for a sentence longer
 * than max_tokens that must be cut (a binary search for each cut, then once
 * per piece); fy_doc_sentence_tokens gives the result back.
 *
 * raw: the text is exactly one sentence: trimmed of ASCII white space
 * (" \t\n\v\f\r"), which is kept around the translation; no splitting,
 * no cutting for length, no protected spans, no clean-up, no HTML (html
 * must be 0); the sentence may contain line breaks if the text does, and
 * fy_doc_join returns lead + translation + trail exactly (invalid bytes of
 * a translation still become U+FFFD). An all-white-space text has 0
 * sentences. */
fy_doc *fy_doc_split(const char *text, size_t len, const fy_split_options *opt, fy_error *err);

/* Frees doc; NULL is harmless. */
void fy_doc_free(fy_doc *doc);

/* The number of sentences to send to the engine (may be 0). */
size_t fy_doc_sentence_count(const fy_doc *doc);

/* Sentence i as the engine must see it: NUL-terminated UTF-8, one line (raw
 * mode: the text as given), no leading/trailing whitespace, HTML tags removed
 * and entities decoded.
 * Borrowed: valid until fy_doc_free. *len (if len non-NULL) receives its
 * length. NULL if i is out of range. */
const char *fy_doc_sentence(const fy_doc *doc, size_t i, size_t *len);

/* 1 when sentence i is fixed (its only text to translate is glossary
 * terms, see Glossary above): its engine text is its translation. 0 for
 * any other sentence or i out of range. */
int fy_doc_sentence_fixed(const fy_doc *doc, size_t i);

/* Where sentence i came from in the input given to fy_doc_split: byte
 * offset *start and length *len (in HTML mode, the span from its first to
 * its last text character, inline tags inside included). For the UI's
 * sentence highlighting. Returns 0, or FY_EINVAL if i is out of range. */
int fy_doc_sentence_span(const fy_doc *doc, size_t i, size_t *start, size_t *len);

/* Flags for fy_doc_join_ex. */
enum {
    FY_JOIN_RAW = 1, /* no clean-up, no inserted spaces: identity round trip */
};

/* The engine-token count the splitter measured for sentence i (with
 * count_tokens when given and not negative, else fy_estimate_tokens' rule);
 * >= 1; 0 if doc is NULL or i is out of range. The scheduler batches with
 * it, so the text is not encoded again. */
long fy_doc_sentence_tokens(const fy_doc *doc, size_t i);

/* Reassembles the document with translations[i] (NUL-terminated UTF-8;
 * invalid bytes become U+FFFD) in place of sentence i. translations, or
 * any entry, may be NULL: that sentence's engine text is used then.
 * Every byte of the input outside the sentences is copied unchanged,
 * except as said here for a zh, zh-Hant or ja target. For each translation
 * that differs from its engine text: the clean-up of the target
 * (fy_cleanup; for a right-to-left target, a U+200F mark before a
 * sentence that starts a line with left-to-right text) is applied and
 * protected spans are restored. Between sentences: for other targets,
 * one space is put between two sentences that touched in the source
 * ("你好。我是" -> "Hello. I am"), but never between pieces of a word cut
 * for length; for zh, zh-Hant, ja no space is ever put, and the spaces and tabs
 * between two translated sentences are dropped when there is no line break
 * between them ("Hello. I am Li." -> "你好。我是李。"; in HTML only those at
 * the ends of the markup between them; kept where both sides are Latin
 * letters or digits, which would otherwise run together).
 * Inline HTML tags and line breaks inside a sentence: a tag touching a
 * protected span (URL, code, Latin identifier) follows that span; any
 * other goes to the same relative position in the translation, snapped to
 * a word boundary (opening tags before a word, closing tags after one; in
 * scripts without spaces a character cluster is a word),
 * never before the one ahead of it in the source, so the tag sequence, and
 * thus well-formedness, is the input's; a line break replaces the nearest
 * space. In HTML mode & < > in translations are escaped, and characters
 * the source wrote as entities are written the same way. Returns a
 * malloc'd NUL-terminated string, or NULL with FY_ENOMEM in err. */
char *fy_doc_join(const fy_doc *doc, const char *const *translations, fy_error *err);

/* How fy_doc_join joins the translations of two sentences that stood in
 * the source with only the spaces and tabs gap[0..len) between them (len
 * 0: they touched), the first translation ending in code point last and the
 * second starting with first, for target language target (normalised
 * tag): FY_GAP_KEEP (the gap as it is), FY_GAP_DROP (nothing: a target
 * without spaces between sentences, zh ja, and no Latin words would run
 * together), FY_GAP_SPACE (one space:
 * they touched, and the target puts spaces between words). For callers
 * that translate one long text in pieces and print them one after the other. */
enum { FY_GAP_KEEP, FY_GAP_DROP, FY_GAP_SPACE };

/* Where the last whole sentence of plain text[0..len) in language source
 * ends, as fy_doc_split would split it: 1 with the end of that sentence in
 * *end and the start of the next (the last, which may go on past len) in
 * *next, [*end, *next) being the white space between them; 0 when the text
 * holds fewer than two sentences. For cutting a long line into pieces
 * where the splitter cuts it anyway. */
int fy_split_last_end(const char *text, size_t len, const char *source, size_t *end, size_t *next);
int fy_join_gap(uint32_t last, const char *gap, size_t len, uint32_t first, const char *target);

/* fy_doc_join with flags (FY_JOIN_*); out_len (if non-NULL) receives the
 * length; out_spans (if non-NULL, 2 * sentence_count entries) receives the
 * output byte offset and length of each sentence's translation, for the
 * UI's highlighting of the result. */
char *fy_doc_join_ex(const fy_doc *doc, const char *const *translations, int flags, size_t *out_len,
                     size_t *out_spans, fy_error *err);

/* Sentence i rendered from translation exactly as fy_doc_join renders it in
 * the document (clean-up for the target, protected spans restored, inline
 * tags placed, HTML escaping/entities), without what the join adds or drops
 * between sentences. translation NULL: the engine text. Returns a malloc'd
 * NUL-terminated string (*len its length if len non-NULL), or NULL with
 * FY_EINVAL (i out of range, doc NULL) / FY_ENOMEM in err. For streaming:
 * the concatenation of the document's literal pieces and these renderings
 * is the join (modulo the inter-sentence spacing rules above); fy_doc_join
 * renders every sentence with this same code. */
char *fy_doc_render_sentence(const fy_doc *doc, size_t i, const char *translation, size_t *len,
                             fy_error *err);

/* What fy_doc_join writes between sentence k - 1 and sentence k when they
 * are translated as prev and translation (NULL: the engine text): the
 * literal text between them, with the spacing rules above applied; for
 * k = 0 everything before the first sentence, for k = the sentence count
 * everything after the last (translation unused). So a stream of, per
 * sentence, this and fy_doc_render_sentence, then the part after the last,
 * is the join exactly, whatever comes later (the one exception: after a
 * sentence that renders as nothing, a space the join would add between
 * the sentences around it). Returns a malloc'd NUL-terminated string (*len
 * its length if len non-NULL), or NULL with FY_EINVAL (k out of range)
 * or FY_ENOMEM in err. */
char *fy_doc_join_before(const fy_doc *doc, size_t k, const char *prev, const char *translation,
                         size_t *len, fy_error *err);

/* "zh" or "en": "zh" when fy_detect (text/detect.h) says Chinese (zh or
 * zh-Hant), else "en" (also for invalid UTF-8 and text without letters).
 * Kept for callers that only know these two; new code calls fy_detect.
 * Static storage. */
const char *fy_detect_language(const char *text, size_t len);

/* The clean-up fy_doc_join applies to a translation into target (a
 * language tag; unknown or invalid: the default row) of s[0..len), by the
 * table of language rules (util/lang_rules.h): the Chinese clean-up below
 * in the row's style for zh, zh-Hant, ja (、 and 「」 for Japanese, 「」 for
 * Traditional Chinese); for the languages with spaces between words the
 * English passes below as the row's flags say (full-width punctuation to
 * ASCII, no space before , . ! ? ; :), then the language's punctuation: a
 * pair of straight double quotes becomes its quotation marks (« » French,
 * Russian..., „ “ German, Czech..., „ ” Polish, Romanian, Hungarian, ” ”
 * Swedish, Finnish; English “ ” too where the language opens with „ or ”),
 * a narrow no-break space before ; : ! ? » and after « (French, Breton),
 * ¿ ¡ before a question or exclamation that lacks them (Spanish), , ; ?
 * after an Arabic word -> ، ؛ ؟ (Arabic, Persian, Urdu), a final '.'
 * after the script's letter -> । (Hindi, Bengali, Nepali, Punjabi). A
 * language without a row only loses decoder loops and doubled spaces: its
 * punctuation is never rewritten. Well-formed text of a language comes
 * back unchanged. Returns a malloc'd string, NULL if out of memory. */
char *fy_cleanup(const char *target, const char *s, size_t len);

/* Clean-up of English engine output: full-width punctuation -> ASCII,
 * spaces before punctuation removed, doubled punctuation and spaces fixed,
 * an n-gram (n <= 8 words) repeated more than 3 times in a row kept once.
 * URL and e-mail tokens are left as they are. Returns a malloc'd
 * NUL-terminated string, or NULL if out of memory. */
char *fy_cleanup_english(const char *s, size_t len);

/* Clean-up of Chinese (and Japanese) engine output s[0..len). Pure; any
 * bytes (invalid UTF-8 passes through unchanged). Returns a malloc'd
 * NUL-terminated string, or NULL if out of memory. Rules, in order:
 *  1. ASCII punctuation next to CJK text becomes full-width: a run of
 *     , . ? ! : ; whose nearest non-space neighbour on either side is a
 *     CJK character (Han, kana, CJK or full-width punctuation) maps to
 *     ， 。 ？ ！ ： ；, and so does a final . ? ! after Latin text or a
 *     digit in text that has Han or kana ("我用 iPhone." -> "我用 iPhone。");
 *     "..." or "…" after CJK -> "……"; ( ) -> （ ） when the pair encloses
 *     Han or kana; a pair of straight double quotes around Han or kana ->
 *     “ ”. Never inside numbers (3.14, 1,000, 10:30: a single . , : between
 *     digits), after a dotted Latin word (U.S., v2.0, e.g.) unless CJK
 *     precedes, inside Latin words, URLs, e-mail addresses or `code`, nor
 *     in the join's span markers (0xFF + 3 continuation bytes: opaque
 *     Latin words).
 *  2. An n-gram (n <= 8 units: a CJK character or a Latin word) repeated
 *     more than 3 times in a row is kept once; a single CJK character is
 *     never collapsed alone (哈哈哈哈 is a word).
 *  3. Doubled punctuation collapsed: a run of one of 。，、；： is kept once,
 *     and ，、； before 。！？ are dropped ("，。" -> "。"); ！！ and ？？
 *     are kept (emphasis).
 *  4. White space: none between two CJK characters nor next to CJK or
 *     full-width punctuation (“ ” … — count as such); elsewhere (a
 *     CJK/Latin or CJK/digit boundary, or between Latin words) a run
 *     becomes one space, and none is ever added ("我用 iPhone" and
 *     "我用iPhone" stay, "我用   iPhone" -> "我用 iPhone"); leading and
 *     trailing white space trimmed. */
char *fy_cleanup_chinese(const char *s, size_t len);

/* 1 if s[0..len) is valid UTF-8 (no overlongs, surrogates or code points
 * above U+10FFFF), else 0 and *bad_offset (if non-NULL) receives the byte
 * offset of the first invalid sequence. Never reads past s + len. */
int fy_utf8_valid(const char *s, size_t len, size_t *bad_offset);

#endif
