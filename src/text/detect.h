/* detect.h - which language a text is in, and each paragraph of a mixed
 * document.
 *
 * CLD2 (Debian's libcld2, the detector Firefox uses) decides the language;
 * rules on the scripts of the letters decide where CLD2 cannot: short text,
 * text mixing scripts ("我爱 Python 编程", "他说 "deep learning" 很重要"),
 * and Simplified against Traditional Chinese, which CLD2's n-grams often
 * miss.
 *
 *     fy_detection d;
 *     if (fy_detect(text, len, 0, &d) == 0 && d.n > 0) use(d.top[0].lang);
 *
 * Pure and thread-safe: no globals, CLD2's tables are read-only.
 */
#ifndef FY_TEXT_DETECT_H
#define FY_TEXT_DETECT_H

#include <stddef.h>

/* One candidate language. */
typedef struct fy_lang_guess {
    char lang[16]; /* normalised tag (util/lang.h): "en", "zh", "zh-Hant", "he", "nb"... */
    int percent;   /* share of the text's letters in that language, 0..100 */
} fy_lang_guess;

typedef struct fy_detection {
    fy_lang_guess top[3]; /* best first; entries past n are zeroed */
    int n;                /* 0..3; 0 for text without letters */
    int reliable;         /* CLD2's is_reliable, or the script rules were decisive */
    char script[8];       /* dominant script of the letters, by UTF-8 bytes ("Hani",
                             "Latn", "Cyrl", "Arab", "Hang", "Kana", ...), "" if none */
} fy_detection;

/* Detects the language of text[0..len) (UTF-8, need not be NUL-terminated;
 * html: markup, <script>, <style> and translate="no" content are skipped and
 * entities decoded, as fy_doc_split sees the document). URLs, e-mail
 * addresses and `code` are not language and are left out. Only the first
 * 256 KiB of the text are looked at.
 *
 * Decision: text without letters: n = 0, script "". Otherwise the frame
 * decides first: the text without its quotations and brackets (on one
 * line) and without code-like words (identifiers, paths, options, camel
 * case like iPhone, letters with digits like GPT-4), so that a Chinese
 * sentence quoting English words is Chinese and an English paragraph
 * naming someone in Chinese is English. When Han, kana and Hangul are at
 * least half of the frame's letters: at least 1 kana per 8 Han/kana ->
 * "ja"; Hangul the majority of them -> "ko"; else Chinese (Japanese only
 * when CLD2 is sure of it and there is no kana), and Chinese is "zh"
 * (Simplified) unless the text has more characters that exist only in
 * Traditional than only in Simplified (a table of 800 frequent pairs:
 * 这/這 国/國 说/說 会/會 为/為...): "你好，世界。" has none and is "zh".
 * Chinese without any one-form character also lists the other variant
 * second, so the pipeline can take whichever the installed models serve;
 * it is reliable when CLD2 agrees it is CJK. Otherwise CLD2's answer when
 * it is reliable (asked about the frame when it named a CJK language
 * from the quotations), Chinese's variant again by the counts. When CLD2
 * is not reliable: a script written by one language (Thai, Hebrew, Greek,
 * Georgian, Armenian, the Indic scripts except Devanagari and Bengali...)
 * -> that language; else CLD2's best effort when the text has at least 4
 * bytes of letters (good at a word or two of a Latin language), else the
 * script's most common language (Latin "en", Cyrillic "ru", Arabic "ar",
 * Devanagari "hi", Bengali "bn"), not reliable. In text of fewer than 64
 * bytes of letters, letters only some languages of the script use win
 * over CLD2: Cyrillic ў (be), ї є ґ (uk), і (uk, be without и), ј љ њ ћ
 * ђ џ (sr), ы э ё (ru), ъ (bg); Arabic script's ے ں ٹ ڈ ڑ (ur), پ چ ژ گ
 * ک ی (fa), ة ي ى (ar); Devanagari is "hi" unless it has ळ ("mr").
 * CLD2's codes are normalised (zh-Hant stays, iw -> he, no -> nb, jw ->
 * jv, in -> id, sr-ME -> sr); its pseudo-languages (xx-*, un) are dropped.
 * Measured: docs/languages.md.
 *
 * Returns 0 (out filled), FY_EINVAL for invalid UTF-8 or NULL text with
 * len > 0, FY_ENOMEM (out holds n = 0 then). out must be non-NULL. */
int fy_detect(const char *text, size_t len, int html, fy_detection *out);

/* A stretch of a document in one language (fy_detect_paragraphs). */
typedef struct fy_detect_part {
    size_t start, len; /* bytes of the text given */
    fy_detection d;    /* fy_detect of those bytes */
} fy_detect_part;

/* Detects the language of each paragraph of a document that mixes
 * languages (an English report with a Chinese section, a bilingual
 * page): text[0..len) as for fy_detect (html: block elements end a
 * paragraph). Each line (each block in HTML) is detected alone; a line
 * with too little to go on (no letters, or fewer than 24 bytes of letters
 * and not reliable: "OK", "1.", a name) takes the language of the line
 * before it (the first such lines: of the line after them); consecutive
 * lines of one language form a part. The parts cover the text in order,
 * without gaps: the first starts at 0, each next one where the previous
 * ends (before the first character of its first line), the last ends at
 * len; a text without letters is one part with d.n = 0.
 *
 * Returns 0 with *parts (malloc'd, the caller frees it with free()) and
 * *n >= 1 (0 and NULL for an empty text), or FY_EINVAL (invalid UTF-8,
 * NULL text with len > 0) / FY_ENOMEM with *parts NULL and *n 0. */
int fy_detect_paragraphs(const char *text, size_t len, int html, fy_detect_part **parts, size_t *n);

#endif
