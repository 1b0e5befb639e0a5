/* harness.h - the few helpers the text tests share: counted checks, whole
 * files, C-like escapes and the "### name" case files of tests/data/text/.
 * Header-only (static functions): each test is one executable.
 */
#ifndef FY_TESTS_TEXT_HARNESS_H
#define FY_TESTS_TEXT_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../read_file.h"

static int hex_digit(int c)
{
    return c >= '0' && c <= '9'                     ? c - '0'
           : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                    : -1;
}

/* Appends code point cp to o[*k] as UTF-8 (cp < 0x10000). */
static void put_utf8(char *o, size_t *k, unsigned cp)
{
    if (cp < 0x80) {
        o[(*k)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*k)++] = (char)(0xC0 | (cp >> 6));
        o[(*k)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        o[(*k)++] = (char)(0xE0 | (cp >> 12));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[(*k)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* s[0..n) with \\ \t \n \s (space) \xHH \uHHHH decoded; malloc'd, *out_len its
 * length (it may hold any byte). */
static char *unescape(const char *s, size_t n, size_t *out_len)
{
    char *o = malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 >= n) {
            o[k++] = s[i];
            continue;
        }
        char c = s[++i];
        if (c == 't')
            o[k++] = '\t';
        else if (c == 'n')
            o[k++] = '\n';
        else if (c == 's')
            o[k++] = ' ';
        else if (c == 'x' && i + 2 < n && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0)
            o[k++] = (char)(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2])), i += 2;
        else if (c == 'u' && i + 4 < n && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0 &&
                 hex_digit(s[i + 3]) >= 0 && hex_digit(s[i + 4]) >= 0)
            put_utf8(o, &k,
                     (unsigned)(hex_digit(s[i + 1]) << 12 | hex_digit(s[i + 2]) << 8 |
                                hex_digit(s[i + 3]) << 4 | hex_digit(s[i + 4]))),
                i += 4;
        else
            o[k++] = c;
    }
    o[k] = '\0';
    *out_len = k;
    return o;
}

/* One case of a "### name" file: its header line and up to 3 parts, the
 * lines between the separators "---" and "===" (joined with '\n'; the
 * blank lines ending the last part belong to no part). Borrowed from the
 * file's text, which is modified. */
typedef struct test_case {
    char *name;
    char *part[3];
    int nparts;
} test_case;

/* Calls fn for each case of text (modified in place); returns the count. */
static int for_each_case(char *text, void (*fn)(const test_case *, void *), void *arg)
{
    int count = 0;
    char *p = strstr(text, "\n### ");
    while (p) {
        test_case c = {0};
        c.name = p + 5;
        char *eol = strchr(c.name, '\n');
        if (!eol) break;
        *eol = '\0';
        char *body = eol + 1, *next = strstr(body, "\n### ");
        char *end = next ? next : body + strlen(body);
        while (end > body && end[-1] == '\n') end--;
        char saved = *end;
        *end = '\0';
        c.part[c.nparts++] = body;
        for (char *q = body; (q = strchr(q, '\n')) && c.nparts < 3;) {
            if ((!strncmp(q, "\n---", 4) || !strncmp(q, "\n===", 4)) && (q[4] == '\n' || !q[4])) {
                *q = '\0';
                c.part[c.nparts++] = q[4] ? q + 5 : q + 4;
                q = c.part[c.nparts - 1];
                continue;
            }
            q++;
        }
        fn(&c, arg);
        count++;
        *end = saved;
        p = next;
    }
    return count;
}

/* The value of option key ("src=") in a case name, copied into out. */
static const char *case_option(const char *name, const char *key, const char *def, char *out,
                               size_t cap)
{
    const char *p = strstr(name, key);
    if (!p) return def;
    p += strlen(key);
    size_t n = strcspn(p, " ");
    snprintf(out, cap, "%.*s", (int)n, p);
    return out;
}

#endif
