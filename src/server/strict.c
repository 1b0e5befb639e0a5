/* strict.c - RFC 9112 framing checks on what libmicrohttpd lets through.
 *
 * libmicrohttpd 0.9.75 parses the request line and the header fields but is
 * lenient where a lenient server behind a proxy can be made to read a
 * different request than the proxy did (request smuggling): it takes the
 * first of two Content-Length fields, reads a body "until close" for any
 * Transfer-Encoding but a bare "chunked", keeps a bare CR in a value, cuts a
 * value at a NUL byte without a trace, keeps white space before the colon
 * as part of the name, and needs no Host. Its one strictness option
 * (MHD_OPTION_STRICT_FOR_CLIENT) covers only Host and spaces in the URL and
 * answers in HTML, so every check is here, run on the first call for a
 * request, before routing: a refused request gets the server's JSON error
 * and the connection is closed (with a lingering close) because its
 * framing cannot be trusted.
 *
 * A plain "Transfer-Encoding: chunked" (in HTTP/1.1, without a
 * Content-Length) is accepted: libmicrohttpd decodes the chunks strictly
 * (hexadecimal sizes only, 413 past 64 bits, 400 for anything else, the
 * connection closed after either; extensions skipped, trailers parsed into
 * its bounded memory pool and never read by us), and body.c applies the
 * same limits as to a body with a length. Every other coding is refused
 * here (docs/reliability.md, "Chunked request bodies").
 */
#include "server/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* What one pass over the header fields found. */
typedef struct scan {
    uintptr_t base, end; /* the header block in libmicrohttpd's read buffer */
    int in_buffer;       /* the fields point into it (see fields_adjacent) */
    uintptr_t prev_end;  /* where the previous field's value ended */
    int hosts, lengths, encodings, hidden;
    char te[128]; /* the Transfer-Encoding fields, joined by ", " */
    size_t te_len;
    int te_long;
    char bad[160]; /* the first bad name or value, described */
} scan;

/* RFC 9110 §5.6.2 tchar. */
static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A NUL byte inside a value is invisible through the API: libmicrohttpd
 * ends the value there and drops the rest of the line. The fields still
 * point into its read buffer in the order they came, each line ending in
 * CRLF or LF, and the block ends with an empty line, so between the end of
 * one value and the start of the next name there are 1 or 2 bytes, and 2
 * to 4 after the last value: any more were hidden behind a NUL (or were an
 * obsolete line folding, which RFC 9112 §5.2 also answers with 400). Only
 * addresses are compared, no byte outside the strings is read. If the
 * first field does not point into the block at all (a libmicrohttpd that
 * copies fields), the check cannot be made and is skipped. */
static void fields_adjacent(scan *sc, const char *key, size_t klen, const char *val, size_t vlen)
{
    uintptr_t k = (uintptr_t)key, v = (uintptr_t)val;
    if (!sc->prev_end) {
        sc->in_buffer = sc->base && k > sc->base && v + vlen <= sc->end;
    } else if (sc->in_buffer) {
        uintptr_t gap = k - sc->prev_end;
        if (k < sc->prev_end || gap > 2) sc->hidden = 1;
    }
    if (sc->in_buffer && (k < sc->base || v < k + klen + 1 || v + vlen > sc->end)) sc->hidden = 1;
    sc->prev_end = v + vlen;
}

static enum MHD_Result field(void *cls, enum MHD_ValueKind kind, const char *key, size_t klen,
                             const char *val, size_t vlen)
{
    (void)kind;
    scan *sc = cls;
    fields_adjacent(sc, key, klen, val, vlen);
    int name_ok = klen > 0;
    for (size_t i = 0; i < klen; i++) name_ok &= is_tchar((unsigned char)key[i]);
    if (!name_ok && !sc->bad[0])
        snprintf(sc->bad, sizeof sc->bad,
                 "header name '%.60s' is not a token (white space before the colon?)", key);
    for (size_t i = 0; val && i < vlen && !sc->bad[0]; i++) {
        unsigned char c = (unsigned char)val[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            snprintf(sc->bad, sizeof sc->bad, "header '%.60s' holds the control byte 0x%02x", key,
                     c);
    }
    if (!strcasecmp(key, "Host")) sc->hosts++;
    if (!strcasecmp(key, "Content-Length")) sc->lengths++;
    if (!strcasecmp(key, "Transfer-Encoding")) {
        size_t need = (sc->encodings ? 2 : 0) + vlen;
        if (sc->te_len + need >= sizeof sc->te) {
            sc->te_long = 1;
        } else {
            if (sc->encodings) memcpy(sc->te + sc->te_len, ", ", 2), sc->te_len += 2;
            memcpy(sc->te + sc->te_len, val, vlen);
            sc->te_len += vlen;
            sc->te[sc->te_len] = '\0';
        }
        sc->encodings++;
    }
    return MHD_YES;
}

/* The framing of a Transfer-Encoding list: 0 for a plain "chunked" (see
 * the top), 501 for codings before a final chunked that this server does
 * not implement, 400 when chunked is not the final coding (the body's
 * length cannot be known: RFC 9112 §6.3). */
static int check_te(const scan *sc, char *msg, size_t cap)
{
    if (sc->te_long) {
        snprintf(msg, cap, "Transfer-Encoding is too long");
        return 400;
    }
    const char *last = sc->te + sc->te_len;
    while (last > sc->te && (last[-1] == ' ' || last[-1] == '\t')) last--;
    const char *p = last;
    while (p > sc->te && p[-1] != ',') p--;
    while (p < last && (*p == ' ' || *p == '\t')) p++;
    if ((size_t)(last - p) != 7 || strncasecmp(p, "chunked", 7)) {
        snprintf(msg, cap,
                 "Transfer-Encoding '%.60s' does not end in chunked: the body's length cannot be "
                 "known",
                 sc->te);
        return 400;
    }
    if (p != sc->te) {
        /* RFC 9112 §6.1: chunked is applied once, last. */
        const char *c = sc->te;
        while ((c = strcasestr(c, "chunked")) && c < p) {
            if (c == sc->te || c[-1] == ',' || c[-1] == ' ' || c[-1] == '\t') {
                snprintf(msg, cap, "Transfer-Encoding '%.60s' applies chunked twice", sc->te);
                return 400;
            }
            c += 7;
        }
        snprintf(msg, cap, "Transfer-Encoding '%.60s' is not implemented; send a Content-Length",
                 sc->te);
        return 501;
    }
    return 0;
}

int req_strict(struct MHD_Connection *conn, const char *method, const char *version, char *msg,
               size_t cap)
{
    scan sc = {0};
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (ci && method) {
        sc.base = (uintptr_t)method;
        sc.end = sc.base + ci->header_size;
    }
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, field, &sc);
    if (sc.in_buffer && sc.prev_end && (sc.end - sc.prev_end < 2 || sc.end - sc.prev_end > 4))
        sc.hidden = 1;
    int http11 = !strcmp(version, MHD_HTTP_VERSION_1_1);
    if (sc.bad[0]) {
        snprintf(msg, cap, "%s", sc.bad);
        return 400;
    }
    if (sc.hidden) {
        snprintf(msg, cap,
                 "malformed header block (a NUL byte in a header value, or an "
                 "obsolete line folding)");
        return 400;
    }
    if (http11 && !sc.hosts) {
        snprintf(msg, cap, "an HTTP/1.1 request needs a Host header");
        return 400;
    }
    if (sc.hosts > 1) {
        snprintf(msg, cap, "more than one Host header");
        return 400;
    }
    if (sc.lengths > 1) {
        snprintf(msg, cap, "more than one Content-Length header");
        return 400;
    }
    if (sc.encodings && sc.lengths) {
        snprintf(msg, cap, "both Transfer-Encoding and Content-Length");
        return 400;
    }
    if (sc.encodings && !http11) {
        snprintf(msg, cap, "Transfer-Encoding in an HTTP/1.0 request");
        return 400;
    }
    if (sc.encodings) return check_te(&sc, msg, cap);
    return 0;
}

const char *req_origin_form(const char *url)
{
    /* RFC 9112 §3.2.2: a server MUST accept the absolute form
     * (GET http://host/health HTTP/1.1), as a proxy sends it. */
    size_t n = !strncasecmp(url, "http://", 7) ? 7 : !strncasecmp(url, "https://", 8) ? 8 : 0;
    if (!n) return url;
    const char *path = strchr(url + n, '/');
    return path ? path : "/";
}
