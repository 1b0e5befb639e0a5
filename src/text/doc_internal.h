/* doc_internal.h - the layout of a fy_doc, shared by segment.c (split) and
 * join.c (join). Not API.
 */
#ifndef FY_TEXT_DOC_INTERNAL_H
#define FY_TEXT_DOC_INTERNAL_H

#include "text/text_internal.h"
#include "util/lang.h"
#include "util/lang_rules.h"

enum { A_WS = 100 }; /* anchor kind beside FY_EV_OPEN/CLOSE/OTHER */

typedef struct anchor {
    size_t pos;      /* byte offset in the engine text */
    size_t src, len; /* source bytes it stands for */
    int kind;
    int markup; /* A_WS: inline tags or placeholders inside the white space */
} anchor;

typedef struct pspan {
    size_t pos, len;    /* in the engine text */
    size_t src, srclen; /* source bytes written in its place (unless rep) */
    int strict;
    int kind;     /* FY_SPAN_*, 0 for an untouched HTML element */
    int rep;      /* a glossary term: written as the doc's rep[repat .. + len] */
    size_t repat; /* (the engine text holds the same bytes) */
} pspan;

typedef struct ent {
    uint32_t cp;     /* a character the source wrote as an entity (or raw & < >) */
    size_t src, len; /* how the source wrote it */
} ent;

typedef struct sent {
    char *text; /* engine text, NUL-terminated */
    size_t len;
    long tokens; /* engine tokens, as the splitter measured them (>= 1) */
    size_t src, srclen;
    size_t a0, na; /* anchors */
    size_t p0, np; /* protected spans */
    size_t e0, ne; /* entity forms */
    int para;      /* first text of its line or block: a paragraph's direction
                      may depend on it (FY_LR_RTL_MARK) */
    int terms;     /* glossary terms among its spans */
    int fixed;     /* only glossary terms to translate: no engine needed */
} sent;

enum { P_LIT, P_VERB, P_SENT };

typedef struct piece {
    int kind;
    size_t src, len;      /* source bytes (P_LIT, P_VERB) */
    size_t sent;          /* P_SENT */
    int touch;            /* text piece with no white space or block before it */
    int glue;             /* cut inside a word: never a space before it */
    uint32_t first, last; /* P_VERB: its first and last characters */
} piece;

struct fy_doc {
    char *src;
    size_t src_len;
    int html;
    int raw;                        /* one sentence, no processing */
    const fy_lang_rules *src_rules; /* the source's row: what to translate, sentence ends */
    const fy_lang_rules *tgt_rules; /* the target's: clean-up, spacing, tag placement */
    char source[FY_LANG_MAX];       /* normalised tags */
    char target[FY_LANG_MAX];
    piece *pc;
    size_t npc, cap_pc;
    sent *st;
    size_t nst, cap_st;
    anchor *an;
    size_t nan, cap_an;
    pspan *sp;
    size_t nsp, cap_sp;
    ent *en;
    size_t nen, cap_en;
    fy_buf rep; /* the glossary terms' output (pspan.repat) */
};

#endif
