/* lang_rules.h - what Fanyi knows about each language: one row per tag.
 *
 * The one table of language rules, read by everything that treats a
 * language as itself instead of as "Chinese or not": the sentence splitter
 * (what is text to translate, which characters end a sentence, the
 * abbreviations before a '.'), the joiner (white space between sentences,
 * where inline tags may go), the clean-up of translations (punctuation and
 * quotation marks as the language writes them, right-to-left marks), and
 * the UI and APIs (English and native names, writing direction). Like
 * ggml's type_traits: a const array of rows, no code in the table, each
 * consumer reading the fields it needs.
 *
 * Every language of the built-in catalogue of Firefox directions has a row
 * (tests/text checks it against src/model/catalogue.c), and so do a few
 * the rules are about although no Firefox model serves them yet (zh-Hant,
 * th, lo, km, my, hy, ka, ur, mr, ne, pa, br, sr-Latn). A tag without a row
 * gets fy_lang_rules_default: letters of any script but Han, kana and
 * Hangul are its text, one space between sentences, tags at spaces, and a
 * clean-up that only removes decoder loops and doubled white space: it never
 * rewrites the language's punctuation to English.
 *
 * Pure data, thread-safe, static storage.
 */
#ifndef FY_UTIL_LANG_RULES_H
#define FY_UTIL_LANG_RULES_H

#include <stddef.h>
#include <stdint.h>

/* What is text to translate in a source language (the splitter's
 * "wanted" characters; everything else stays verbatim). */
enum {
    FY_SRC_ALPHA, /* letters of any script other than Han, kana, Hangul */
    FY_SRC_HAN,   /* Han (Chinese) */
    FY_SRC_JA,    /* Han or kana */
    FY_SRC_KO,    /* Hangul */
};

/* What the joiner puts between two translated sentences that touched. */
enum {
    FY_SPACING_SPACE, /* one space; spaces between sentences kept */
    FY_SPACING_NONE,  /* nothing; spaces and tabs between them dropped (zh, ja) */
};

/* Where an inline tag may be put inside a translated sentence. */
enum {
    FY_TAGS_WORDS, /* at spaces between words */
    FY_TAGS_CHARS, /* between any two characters of a script written without
                      spaces (Han, kana, Thai, Lao, Khmer, Myanmar), never
                      inside a character's cluster of combining marks */
};

/* Which clean-up a translation into the language gets. */
enum {
    FY_CLEAN_NEUTRAL, /* decoder loops and doubled spaces only */
    FY_CLEAN_ALPHA,   /* words between spaces, by the flags below */
    FY_CLEAN_CJK,     /* full-width punctuation, no spaces between characters */
};

/* Punctuation rules of the clean-up (flags). */
enum {
    FY_LR_FULLWIDTH = 1 << 0, /* CJK punctuation in the translation -> ASCII */
    FY_LR_TIGHT = 1 << 1,     /* no space before , . ! ? ; : ) and the script's own
                                 terminators; doubled , ; ! ? .. collapsed */
    FY_LR_FRENCH = 1 << 2,    /* a narrow no-break space (U+202F) before ; : ! ?
                                 and inside « » */
    FY_LR_INVERTED = 1 << 3,  /* ¿ ¡ open a question, an exclamation (es) */
    FY_LR_ARABIC = 1 << 4,    /* , ; ? next to Arabic letters -> ، ؛ ؟ */
    FY_LR_DANDA = 1 << 5,     /* a final '.' after a letter of the script -> । */
    FY_LR_RTL_MARK = 1 << 6,  /* U+200F before a paragraph's translation that
                                 starts with left-to-right text */
    FY_LR_NO_DOT_END = 1 << 7 /* '.' after a letter of the language's script is an
                                 abbreviation mark, never a sentence end (th, lo,
                                 km, my) */
};

/* Words before a '.' that the splitter treats specially (for one
 * language; space-separated, compared case-insensitively except openers,
 * dotted ones written with their inner dots: "e.g", "z.b"). */
typedef struct fy_abbrevs {
    const char *never;    /* '.' never ends a sentence after them (titles: Mr Dr) */
    const char *numbered; /* ... only when a number follows (No. 5, S. 12) */
    const char *may_end;  /* end one only before a sentence opener (etc. Inc.) */
    const char *openers;  /* capitalised words that open sentences (The He) */
} fy_abbrevs;

typedef struct fy_lang_rules {
    const char *tag;           /* normalised tag (util/lang.h): "fr", "zh-Hant"; "" default */
    const char *name;          /* English name: "French", "Chinese (Traditional)" */
    const char *native;        /* the language's own name: "français", "繁體中文" */
    const char *script;        /* ISO 15924 code of its usual script: "Latn", "Hani" */
    uint8_t rtl;               /* written right to left */
    uint8_t source;            /* FY_SRC_*: what the splitter sends to the engine */
    uint8_t spacing;           /* FY_SPACING_*: between sentences */
    uint8_t tags;              /* FY_TAGS_*: inline tags inside a sentence */
    uint8_t cleanup;           /* FY_CLEAN_* */
    uint16_t flags;            /* FY_LR_* */
    uint32_t quotes[2];        /* opening and closing quotation marks a pair of straight
                                  double quotes becomes; 0: kept as written */
    const char *terms;         /* sentence terminators of this language only (UTF-8), on
                                  top of those of every script: ";" for Greek */
    const fy_abbrevs *abbrevs; /* its own; English's count for every language (its
                                  words and names turn up everywhere), and so do the
                                  rules for initials, dotted acronyms, list numbers */
} fy_lang_rules;

/* The row of a normalised tag, or fy_lang_rules_default() when the table
 * has none (tag NULL or "" too). Never NULL. */
const fy_lang_rules *fy_lang_rules_of(const char *tag);

/* The row for languages without one of their own (tag ""). */
const fy_lang_rules *fy_lang_rules_default(void);

/* Row i of the table (sorted by tag), NULL past the end: for listing and
 * tests. */
const fy_lang_rules *fy_lang_rules_at(size_t i);

#endif
