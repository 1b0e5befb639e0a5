/* line_reader.c - stdin in pieces for `fanyi translate` (line_reader.h). */
#include "cli/line_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text/segment.h"
#include "util/buf.h"

void lr_block_clear(block *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->p[i].text);
        free(b->p[i].gap);
    }
    b->n = 0;
}

/* Fills r->buf up to its piece size (or the end of the input). 0 or -1. */
static int fill(reader *r)
{
    while (!r->eof && r->len < r->piece) {
        if (fy_vec_reserve((void **)&r->buf, &r->cap, r->piece + 1, 1)) {
            errno = ENOMEM;
            return -1;
        }
        size_t n = fread(r->buf + r->len, 1, r->piece - r->len, r->in);
        r->len += n;
        if (n == 0) {
            if (ferror(r->in)) return -1;
            r->eof = 1;
        }
    }
    return 0;
}

static int horizontal(unsigned char c)
{
    return c == ' ' || c == '\t';
}

/* The run of spaces and tabs around s[i], within (0, n): 1 and [*a, *e),
 * or 0 when it touches an end (it may go on beyond the buffer). */
static int space_run(const unsigned char *s, size_t n, size_t i, size_t *a, size_t *e)
{
    *a = i, *e = i + 1;
    while (*a > 0 && horizontal(s[*a - 1])) (*a)--;
    while (*e < n && horizontal(s[*e])) (*e)++;
    return *a > 0 && *e < n;
}

/* Where to cut a long line in buf[0..n): where the splitter ends its last
 * whole sentence (fy_split_last_end; [*end, *next) is the white space
 * taken out, the join's rules put what belongs there), so the pieces
 * translate as the line would; without two sentences, at the last white
 * space of its second half, else at its last character boundary (a
 * sentence of 32 KiB is cut anyway). *how receives CUT_*. */
static void cut_point(const char *buf, size_t n, const char *source, size_t *end, size_t *next,
                      int *how)
{
    const unsigned char *s = (const unsigned char *)buf;
    size_t a, e;
    if (source && fy_split_last_end(buf, n, source, end, next) && *end > n / 4) {
        *how = *next > *end ? CUT_SPACE : CUT_STOP;
        return;
    }
    for (size_t i = n - 1; i > n / 2; i--)
        if (horizontal(s[i]) && space_run(s, n, i, &a, &e)) {
            *end = a, *next = e, *how = CUT_SPACE;
            return;
        }
    size_t i = n;
    while (i > 1 && (s[i] & 0xC0) == 0x80) i--;
    *end = *next = i, *how = CUT_ANY;
}

/* The next piece of input: a whole line, or a piece of a long one (a whole
 * line however long with r->whole_lines, for --raw, where a cut would
 * change what the engine sees). Returns 1, 0 at the end of the input, -1
 * on a read error (errno). A NUL stays in its line (the pipeline refuses
 * it with its position). */
static int next_piece(reader *r, piece *out)
{
    char *nl;
    for (;;) {
        if (fill(r)) return -1;
        if (r->len == 0) return 0;
        nl = memchr(r->buf, '\n', r->len);
        if (nl || r->eof || !r->whole_lines) break;
        r->piece *= 2;
    }
    size_t take = nl ? (size_t)(nl - r->buf) : r->len, skip = take + (nl != NULL);
    int how = CUT_LINE;
    if (!nl && !r->eof) cut_point(r->buf, r->len, r->source, &take, &skip, &how); /* a long line */
    size_t len = take;
    if (how == CUT_LINE && len > 0 && r->buf[len - 1] == '\r') len--;
    if (!(out->text = malloc(len + 1))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy(out->text, r->buf, len);
    out->text[len] = '\0';
    out->len = len;
    out->ends_line = how == CUT_LINE;
    out->at = r->line_at;
    r->line_at = how == CUT_LINE ? 0 : r->line_at + skip;
    r->consumed += skip;
    out->after = r->after;
    out->gap = r->gap; /* the white space before this piece: it is the piece's now */
    out->gap_len = r->gap_len;
    r->after = how;
    r->gap = how == CUT_SPACE ? strndup(r->buf + take, skip - take) : NULL;
    r->gap_len = r->gap ? skip - take : 0;
    if (how == CUT_SPACE && !r->gap) {
        errno = ENOMEM;
        return -1;
    }
    memmove(r->buf, r->buf + skip, r->len - skip);
    r->len -= skip;
    return 1;
}

/* Reads all of stdin as one text (--html). */
static int read_all(reader *r, piece *out)
{
    fy_buf all = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, r->in)) > 0) fy_buf_put(&all, chunk, n);
    if (ferror(r->in)) {
        fy_buf_free(&all);
        return -1;
    }
    if (!(out->text = fy_buf_take(&all, &out->len))) {
        errno = ENOMEM;
        return -1;
    }
    out->ends_line = 0;
    out->at = 0;
    out->after = CUT_LINE;
    r->consumed = out->len;
    r->eof = 1;
    return 1;
}

long lr_block_read(block *b, reader *r, int whole)
{
    lr_block_clear(b);
    if (whole) {
        if (r->eof) return 0;
        int rc = read_all(r, &b->p[0]);
        if (rc > 0) b->n = 1;
        return rc < 0 ? -1 : (long)b->n;
    }
    while (b->n < b->cap) {
        int rc = next_piece(r, &b->p[b->n]);
        if (rc < 0) return -1;
        if (rc == 0) break;
        b->n++;
    }
    return (long)b->n;
}

size_t lr_piece_bytes(void)
{
    const char *v = getenv("FANYI_TRANSLATE_PIECE");
    long n = v ? atol(v) : 0;
    return n >= 64 && n <= (1L << 30) ? (size_t)n : PIECE_BYTES;
}

void lr_reader_free(reader *r)
{
    free(r->buf);
    free(r->gap);
    r->buf = r->gap = NULL;
}
