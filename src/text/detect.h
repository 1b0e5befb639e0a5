/* detect.h - which language a text is in.
 *
 * CLD2 (Debian's libcld2, the detector Firefox uses) decides the language;
 * rules on the scripts of the letters decide where CLD2 cannot: short text,
 * text mixing scripts ("我爱 Python 编程"), and Simplified against
 * Traditional Chinese in short text, which CLD2's n-grams often miss.
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
 * Decision: text without letters: n = 0, script "". Otherwise CLD2's answer
 * when it is reliable, except that for Chinese text with fewer than 50 Han
 * characters the Simplified/Traditional counts below decide when they are
 * one-sided. When CLD2 is not reliable, the scripts decide: letters with at
 * least 1 kana per 8 Han/kana, Han or kana the majority -> "ja"; Hangul the
 * majority -> "ko"; Han the majority -> Chinese, "zh" or "zh-Hant" by
 * counting characters that exist in only one of the two forms (a table of
 * over 250 frequent pairs: 这/這 国/國 说/說 会/會 为/為...; no evidence ->
 * CLD2's variant if it named one, else "zh"); a script written by one
 * language (Thai, Hebrew, Greek, Georgian, Armenian, the Indic scripts
 * except Devanagari and Bengali...) -> that language; otherwise CLD2's
 * unreliable best effort when the text has at least 16 bytes of letters,
 * else the script's most common language (Latin "en", Cyrillic "ru",
 * Arabic "ar", Devanagari "hi", Bengali "bn"), not reliable. CLD2's codes
 * are normalised (zh-Hant stays, iw -> he, no -> nb, jw -> jv, in -> id,
 * sr-ME -> sr); its pseudo-languages (xx-*, un) are dropped.
 *
 * Returns 0 (out filled), FY_EINVAL for invalid UTF-8 or NULL text with
 * len > 0, FY_ENOMEM (out holds n = 0 then). out must be non-NULL. */
int fy_detect(const char *text, size_t len, int html, fy_detection *out);

#endif
