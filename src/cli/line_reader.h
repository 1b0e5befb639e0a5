/* line_reader.h - stdin for `fanyi translate`, in pieces: whole lines, and
 * lines longer than a piece (64 KiB) cut where a sentence ends, so that
 * memory stays bounded whatever a line's length (cmd_translate.c joins the
 * translated pieces back as the whole line would have been joined).
 */
#ifndef FY_CLI_LINE_READER_H
#define FY_CLI_LINE_READER_H

#include <stdint.h>
#include <stdio.h>

/* A line longer than this is translated in pieces, each cut where a
 * sentence ends (after white space, else after a full stop), so memory
 * stays bounded whatever the line's length (FANYI_TRANSLATE_PIECE, bytes,
 * lets tests use small pieces). */
#define PIECE_BYTES (64 * 1024)

enum { CUT_LINE, CUT_SPACE, CUT_STOP, CUT_ANY };

typedef struct piece {
    char *text;
    size_t len;
    size_t at;     /* where it starts in its line (bytes) */
    int ends_line; /* the line's last piece: a line break follows it */
    int after;     /* how the piece before it, of the same line, was cut (CUT_*) */
    char *gap;     /* CUT_SPACE: the spaces and tabs between that piece and this one */
    size_t gap_len;
} piece;

/* Set up with .in, .piece = lr_piece_bytes(), .whole_lines (--raw: never
 * cut a line), .source and .after = CUT_LINE, the rest zero; freed with
 * lr_reader_free. */
typedef struct reader {
    FILE *in;
    char *buf; /* bytes read but not yet handed out */
    size_t len, cap, piece;
    int eof, whole_lines;
    const char *source; /* the source language when known, else NULL */
    int after;          /* CUT_LINE when the next piece starts a line */
    char *gap;          /* the white space the last cut took out (CUT_SPACE) */
    size_t gap_len;
    size_t line_at;    /* bytes of the current line handed out so far */
    uint64_t consumed; /* bytes of the input handed out so far */
} reader;

/* Pieces read together (one request of the pipeline); p is the caller's
 * array of cap, the pieces' strings are the block's. */
typedef struct block {
    piece *p; /* [n] */
    size_t n, cap;
} block;

/* Frees the pieces' text and empties b (its array stays). */
void lr_block_clear(block *b);

/* Reads up to b->cap pieces; returns how many (0 at end of input), -1 on a
 * read error (errno). whole: the whole input is one piece (--html). */
long lr_block_read(block *b, reader *r, int whole);

/* The piece size: PIECE_BYTES, or $FANYI_TRANSLATE_PIECE (tests). */
size_t lr_piece_bytes(void);

/* Frees what r holds (not r->in). */
void lr_reader_free(reader *r);

#endif
