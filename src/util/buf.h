/* buf.h - the one growable byte buffer (and array growth) of the program.
 *
 * Appends never fail loudly: an allocation failure sets oom, later appends
 * are ignored, and fy_buf_take reports it by returning NULL, so a caller
 * builds a whole string and checks once. The contents are always
 * NUL-terminated once anything was appended.
 */
#ifndef FY_UTIL_BUF_H
#define FY_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct fy_buf {
    char *p;
    size_t n, cap;
    int oom; /* set once an allocation failed; later puts are ignored */
} fy_buf;

void fy_buf_put(fy_buf *b, const void *s, size_t n);
void fy_buf_putc(fy_buf *b, char c);
/* Appends code point cp (<= U+10FFFF) as UTF-8. */
void fy_buf_putcp(fy_buf *b, uint32_t cp);
/* Appends printf-formatted text. */
void fy_buf_printf(fy_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the NUL-terminated contents (ownership passes to the caller; *len
 * its length if len is non-NULL), or NULL if any put ran out of memory
 * (the buffer is freed then). The buffer is empty afterwards. */
char *fy_buf_take(fy_buf *b, size_t *len);
void fy_buf_free(fy_buf *b);

/* Encodes cp (<= U+10FFFF) as UTF-8 into o; returns its length (1..4). */
size_t fy_utf8_put(char *o, uint32_t cp);

/* Ensures *v (elements of size elem) has room for need elements, growing
 * by doubling. 0 or FY_ENOMEM (then *v is unchanged). */
int fy_vec_reserve(void **v, size_t *cap, size_t need, size_t elem);

#endif
