/* cache_redis_url.c - redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] and the
 * Redis tier's defaults. */
#include "translate/cache_redis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fy_redis_options_default(fy_redis_options *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->host, sizeof o->host, "127.0.0.1");
    o->port = 6379;
    o->ttl_s = 7 * 24 * 3600;
    o->timeout_ms = 50;
    o->value_max = FY_CACHE_VALUE_MAX;
    o->queue_max = 4096;
    o->failures = 3;
    o->retry_ms = 1000;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Copies s[0..n) into out (cap bytes) decoding %XX. 0, or -1 when it does
 * not fit, has a bad escape or decodes to a NUL. */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1, lo = hi >= 0 ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi | lo) == 0) return -1;
            c = hi * 16 + lo;
            i += 2;
        }
        if (k + 1 >= cap) return -1;
        out[k++] = (char)c;
    }
    out[k] = '\0';
    return 0;
}

/* A decimal in [min, max] filling all of s[0..n). */
static int number(const char *s, size_t n, long min, long max, long *out)
{
    if (!n || n > 9) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max) return -1;
    *out = v;
    return 0;
}

/* HOST[:PORT] of s[0..n) into o. */
static int host_port(const char *s, size_t n, fy_redis_options *o)
{
    const char *end = s + n, *colon;
    const char *h = s;
    size_t hl;
    if (n && *s == '[') { /* [IPv6] */
        const char *rb = memchr(s, ']', n);
        if (!rb) return -1;
        h = s + 1;
        hl = (size_t)(rb - h);
        colon = rb + 1 < end ? rb + 1 : NULL;
        if (colon && *colon != ':') return -1;
    } else {
        colon = memchr(s, ':', n);
        hl = colon ? (size_t)(colon - s) : n;
    }
    long port = 6379;
    if (colon && number(colon + 1, (size_t)(end - colon - 1), 1, 65535, &port)) return -1;
    if (!hl || hl >= sizeof o->host || memchr(h, '/', hl) || memchr(h, '@', hl)) return -1;
    memcpy(o->host, h, hl);
    o->host[hl] = '\0';
    o->port = (int)port;
    return 0;
}

/* [USER]:PASSWORD of s[0..n) into o. */
static int userinfo(const char *s, size_t n, fy_redis_options *o)
{
    const char *colon = memchr(s, ':', n);
    if (!colon) return -1; /* redis://NAME@ would be ambiguous: a user without password */
    size_t ul = (size_t)(colon - s);
    if (decode(s, ul, o->user, sizeof o->user)) return -1;
    return decode(colon + 1, n - ul - 1, o->password, sizeof o->password);
}

int fy_redis_parse_url(const char *url, fy_redis_options *o, fy_error *err)
{
    static const char scheme[] = "redis://";
    if (!strncmp(url, "rediss://", 9))
        return fy_err(err, FY_EINVAL, "--redis: rediss:// (TLS) is not supported (hiredis 0.14)");
    if (strncmp(url, scheme, sizeof scheme - 1))
        return fy_err(err, FY_EINVAL, "--redis: expected redis://[:PASSWORD@]HOST:PORT[/DB]");
    fy_redis_options t = *o;
    t.user[0] = t.password[0] = '\0';
    t.db = 0;
    const char *s = url + sizeof scheme - 1;
    const char *slash = strchr(s, '/'), *end = slash ? slash : s + strlen(s);
    const char *at = memchr(s, '@', (size_t)(end - s));
    long db = 0;
    /* Which part is wrong, never its text: it may hold the password. */
    const char *bad = strpbrk(s, "?#") ? "a ?query or #fragment is not allowed" : NULL;
    if (!bad && at && userinfo(s, (size_t)(at - s), &t))
        bad = "bad [USER]:PASSWORD before '@' (%XX escapes, at most 255 bytes)";
    if (!bad && host_port(at ? at + 1 : s, (size_t)(end - (at ? at + 1 : s)), &t))
        bad = "bad HOST[:PORT] (a name, an address or [IPv6]; port 1-65535)";
    if (!bad && slash && slash[1] && number(slash + 1, strlen(slash + 1), 0, 1 << 20, &db))
        bad = "bad /DB (a number)";
    if (bad)
        return fy_err(err, FY_EINVAL,
                      "--redis: %s (expected "
                      "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB])",
                      bad);
    t.db = (int)db;
    *o = t;
    return 0;
}
