/* lang.h - language tags as Fanyi names them.
 *
 * A tag is BCP-47-like: a lower-case primary language subtag (2-3 letters),
 * optionally followed by a title-case script subtag ("zh-Hant"). Region
 * subtags are dropped (EN-US -> en, pt-BR -> pt) because no model tells
 * regions apart. Chinese is the exception that matters: "zh" is Simplified
 * Chinese (zh-Hans, zh-CN, zh-SG, zh_Hans, ZH, zh-Hans-CN), "zh-Hant" is
 * Traditional (zh-TW, zh-HK, zh-MO, zt as LibreTranslate writes it).
 *
 * A direction is a pair of tags, written "SRC-TGT" ("zh-en", "zh-Hant-en",
 * "en-zh"): the name of its model directory and of its catalogue entry.
 * Every function here is pure and thread-safe.
 */
#ifndef FY_UTIL_LANG_H
#define FY_UTIL_LANG_H

#include <stddef.h>

/* Bytes a normalised tag needs, NUL included ("zh-Hant" is 8). */
#define FY_LANG_MAX 16
/* Bytes a direction name needs ("zh-Hant-zh-Hant" + NUL fits). */
#define FY_PAIR_MAX (2 * FY_LANG_MAX)

/* Normalises code into out. Returns 1 for "auto" (any case), "" or NULL
 * (out = ""), 0 for a language tag, -1 when code is not one (empty
 * subtags, characters other than letters, digits, '-' and '_', a primary
 * subtag not of 2-3 letters, or too long); out is "" then. */
int fy_lang_normalize(const char *code, char out[FY_LANG_MAX]);

/* Parses a direction name "SRC-TGT" (zh-en, zh-Hant-en, en-zh-Hans,
 * ZH_HANS-EN) into normalised tags. Returns 0, or -1 when name is not two
 * tags joined by '-'. */
int fy_lang_pair_parse(const char *name, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX]);

/* Writes "SRC-TGT" into out (cap bytes, FY_PAIR_MAX is always enough). */
void fy_lang_pair_name(const char *src, const char *tgt, char *out, size_t cap);

/* Splits the infix of Marian model file names ("enzh" of model.enzh.bin,
 * "zhen", "deen") into two tags: 4 letters are 2 + 2; 5 or 6 letters are
 * split around "en" when one end is "en". Returns 0, or -1 when the infix
 * does not name two languages unambiguously. */
int fy_lang_pair_from_infix(const char *infix, char src[FY_LANG_MAX], char tgt[FY_LANG_MAX]);

/* The English name of a normalised tag ("Chinese", "Chinese (Traditional)",
 * "English", "German"; the table of util/lang_rules.h), or the tag itself
 * when it is not one we know. Static storage (or the argument). */
const char *fy_lang_name(const char *tag);

/* 1 when the language's text to translate is Han (and kana): zh, zh-Hant,
 * ja (util/lang_rules.h: FY_SRC_HAN, FY_SRC_JA), else 0. */
int fy_lang_is_cjk(const char *tag);

#endif
