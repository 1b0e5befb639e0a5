/* prompt.h - the translation prompts of the plug-ins that call an
 * OpenAI-compatible API, recognised exactly (server module; not API).
 *
 * Immersive Translate, Kiss Translator, openai-translator, pot-desktop and
 * Bob each build a chat request from templates of their own: the target
 * language written into an instruction, the text after it. A template is
 * matched as written in the plug-in's source (the versions in use), so the
 * text and the languages are read back exactly; anything else is refused,
 * never guessed at. Kiss Translator's batch mode sends a JSON object
 * {"targetLanguage", "segments": [{"id", "text"}]} and expects one of three
 * answers (JSON, XML-like or "id | text" lines), as its system prompt says.
 *
 * Glossaries the prompts carry are read back too, so the server applies
 * them instead of ignoring them: Kiss Translator's "glossary" object of its
 * batch JSON ({"term": "translation"}, "" keeping the term), and the
 * "# Glossary:" block of its user prompt ("- term: translation" lines);
 * Immersive Translate's "terms_prompt" in the system message (after "Terms
 * ->" or its translation, the terms as 'source': 'target' pairs joined by
 * ", ", a term's "[domain]" mark dropped).
 *
 * Languages come as the plug-ins write them: codes (zh-CN, en), English
 * names (Simplified Chinese, English, Chinese (Traditional)) or their own
 * names (简体中文, Deutsch, 日本語). Pure functions; thread-safe.
 */
#ifndef FY_SERVER_PROMPT_H
#define FY_SERVER_PROMPT_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/lang.h"

/* How the answer is written. */
enum {
    PROMPT_TEXT,       /* the translation itself */
    PROMPT_KISS_JSON,  /* {"translations":[{"id","text","sourceLanguage"}]} */
    PROMPT_KISS_XML,   /* <root><t id="…" sourceLanguage="…">…</t></root> */
    PROMPT_KISS_LINES, /* "id | text" per line, line breaks as <br> */
};

typedef struct prompt {
    const char *client;       /* "immersive-translate", "kiss-translator",
                                 "openai-translator", "pot-desktop", "bob" */
    char source[FY_LANG_MAX]; /* normalised tag; "" = detect */
    char target[FY_LANG_MAX]; /* normalised tag */
    int html;                 /* the texts are HTML (Kiss Translator escapes what it sends) */
    int format;               /* PROMPT_* */
    size_t n;                 /* texts (1 except in Kiss Translator's batch mode) */
    char **texts;             /* [n] malloc'd, NUL-terminated; lens[i] bytes */
    size_t *lens;
    json_t *ids;      /* batch mode: each segment's id, as sent (owned); else NULL */
    json_t *glossary; /* the prompt's glossary: an object of source term -> target term
                         ("": keep as is), owned; NULL when it has none */
} prompt;

/* Recognises the request made of the system message (NUL-terminated; NULL
 * or "" when there is none) and the last user message (ulen bytes). Returns 0 with *p filled (free
 * it with prompt_free), or -1 with *p empty and a sentence for the client in why (cap bytes): not a
 * prompt of any plug-in known here, or one naming a language this server does not know. */
int prompt_parse(const char *system, const char *user, size_t ulen, prompt *p, char *why,
                 size_t cap);

void prompt_free(prompt *p);

/* The answer, in three parts so that it can be streamed: what comes
 * before the first text, text i's part (translation tr of source language
 * src, a normalised tag or ""; the separator before it included), and what
 * comes after the last. Appended to b. */
void prompt_answer_open(const prompt *p, fy_buf *b);
void prompt_answer_item(const prompt *p, size_t i, const char *tr, size_t len, const char *src,
                        fy_buf *b);
void prompt_answer_close(const prompt *p, fy_buf *b);

/* A language the way Immersive Translate and Kiss Translator write it:
 * zh-CN and zh-TW for Chinese, the tag itself for any other. */
const char *prompt_code_cn(const char *tag);

#endif
