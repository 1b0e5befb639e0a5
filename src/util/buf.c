/* buf.c - the growable byte buffer and array growth. */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int fy_vec_reserve(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = realloc(*v, c * elem);
    if (!p) return FY_ENOMEM;
    *v = p;
    *cap = c;
    return 0;
}

void fy_buf_put(fy_buf *b, const void *s, size_t n)
{
    if (b->oom) return;
    if (fy_vec_reserve((void **)&b->p, &b->cap, b->n + n + 1, 1)) {
        b->oom = 1;
        return;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void fy_buf_putc(fy_buf *b, char c)
{
    fy_buf_put(b, &c, 1);
}

size_t fy_utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

void fy_buf_putcp(fy_buf *b, uint32_t cp)
{
    char o[4];
    fy_buf_put(b, o, fy_utf8_put(o, cp));
}

void fy_buf_printf(fy_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->oom = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        fy_buf_put(b, small, (size_t)n);
        return;
    }
    if (b->oom || fy_vec_reserve((void **)&b->p, &b->cap, b->n + (size_t)n + 1, 1)) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

char *fy_buf_take(fy_buf *b, size_t *len)
{
    if (b->oom) {
        fy_buf_free(b);
        return NULL;
    }
    if (!b->p) fy_buf_put(b, "", 0); /* an empty result is still a string */
    if (b->oom) return NULL;
    char *p = b->p;
    if (len) *len = b->n;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

void fy_buf_free(fy_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->oom = 0;
}
