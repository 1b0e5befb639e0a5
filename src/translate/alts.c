/* alts.c - alternative-translation lists and their one-string form. */
#include "translate/alts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "translate/scheduler.h"
#include "util/buf.h"

size_t fy_alts_count(char *const *list)
{
    size_t n = 0;
    while (list && list[n]) n++;
    return n;
}

void fy_alts_free(char **list)
{
    for (size_t i = 0; list && list[i]; i++) free(list[i]);
    free(list);
}

static void put_escaped(fy_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            fy_buf_put(b, "\\\\", 2);
        else if (*s == '\n')
            fy_buf_put(b, "\\n", 2);
        else
            fy_buf_putc(b, *s);
    }
}

char *fy_alts_encode(const char *best, char *const *list)
{
    fy_buf b = {0};
    put_escaped(&b, best);
    for (size_t i = 0; list && list[i]; i++) {
        fy_buf_putc(&b, '\n');
        put_escaped(&b, list[i]);
    }
    return fy_buf_take(&b, NULL);
}

/* The string of one line starting at *s, unescaped; *s moves past it. */
static char *take_line(const char **s)
{
    fy_buf b = {0};
    const char *p = *s;
    for (; *p && *p != '\n'; p++) {
        if (*p == '\\' && (p[1] == '\\' || p[1] == 'n')) {
            fy_buf_putc(&b, p[1] == 'n' ? '\n' : '\\');
            p++;
        } else {
            fy_buf_putc(&b, *p);
        }
    }
    *s = *p ? p + 1 : p;
    return fy_buf_take(&b, NULL);
}

int fy_alts_decode(const char *value, char **best, char ***list)
{
    *best = NULL;
    *list = NULL;
    size_t lines = 1;
    for (const char *p = value; *p; p++) lines += *p == '\n';
    char **l = lines > 1 ? calloc(lines, sizeof *l) : NULL;
    char *b = take_line(&value);
    int ok = b && (lines == 1 || l);
    for (size_t i = 0; ok && i + 1 < lines; i++) ok = (l[i] = take_line(&value)) != NULL;
    if (!ok) {
        free(b);
        fy_alts_free(l);
        return -1;
    }
    *best = b;
    *list = l;
    return 0;
}

char *fy_cache_entry_encode(const char *value, const fy_confidence *conf)
{
    fy_buf b = {0};
    fy_buf_put(&b, value, strlen(value));
    fy_buf_printf(&b, "\x1e%.9g %.9g", (double)conf->score, (double)conf->margin);
    return fy_buf_take(&b, NULL);
}

void fy_cache_entry_decode(char *entry, fy_confidence *conf)
{
    conf->score = NAN;
    conf->margin = INFINITY;
    char *mark = strrchr(entry, '\x1e');
    if (!mark) return;
    *mark = '\0';
    char *end;
    float score = strtof(mark + 1, &end), margin = end > mark + 1 ? strtof(end, &end) : INFINITY;
    conf->score = score;
    conf->margin = margin == margin ? margin : INFINITY;
}
