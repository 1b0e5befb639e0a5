/* doc_zip.c - zip archives in memory with libzip: opened from a buffer,
 * checked entry by entry before anything is decompressed, parts read with
 * a hard cap, and written back into a buffer with only the replaced
 * entries recompressed (libzip copies the others' compressed bytes).
 *
 * Zip bombs: the declared sizes are checked first (entry count, the sum of
 * uncompressed sizes, each large entry's compression ratio); an entry that
 * inflates past its declared size when read is refused too, so a lying
 * central directory gains nothing. Names are only ever compared, never used
 * as paths, and an archive with a name that would be unsafe as one (../,
 * absolute, a drive letter, backslashes, control characters) is refused,
 * as is one with two entries of the same name (readers disagree on which
 * one counts).
 */
#include "text/document_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

struct zipdoc {
    char *data; /* the original archive (libzip reads it in place) */
    size_t len;
    zip_source_t *src;
    zip_t *za;
    size_t n;
    const fy_doc_limits *lim;
    char what[16]; /* "docx" for messages */
};

static int zip_error_code(int ze)
{
    switch (ze) {
    case ZIP_ER_MEMORY:
        return FY_ENOMEM;
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_NOPASSWD:
    case ZIP_ER_WRONGPASSWD:
        return FY_EUNSUPPORTED;
    default:
        return FY_EFORMAT;
    }
}

/* Why a name cannot be trusted as a relative path, or NULL. */
static const char *unsafe_name(const char *s)
{
    if (!*s) return "an empty name";
    if (s[0] == '/') return "an absolute path";
    if (((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') && s[1] == ':') return "a drive letter";
    for (const char *p = s; *p; p++) {
        if (*p == '\\') return "a backslash";
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return "a control character";
    }
    for (const char *p = s; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') return "a '..' component";
        p += n;
        if (*p) p++;
    }
    return NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Two entries with one name? */
static int check_unique(zipdoc *z, fy_error *err)
{
    const char **names = calloc(z->n ? z->n : 1, sizeof *names);
    if (!names) return fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; i < z->n; i++) names[i] = zipdoc_name(z, i);
    qsort(names, z->n, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 1; i < z->n && !rc; i++)
        if (!strcmp(names[i - 1], names[i]))
            rc = fy_err(err, FY_EFORMAT, "the %s archive has two entries named '%.200s'", z->what,
                        names[i]);
    free(names);
    return rc;
}

static int check_entries(zipdoc *z, fy_error *err)
{
    const fy_doc_limits *lim = z->lim;
    if (z->n > lim->max_entries)
        return fy_err(err, FY_ELIMIT, "the %s archive has %zu entries; the limit is %zu", z->what,
                      z->n, lim->max_entries);
    uint64_t total = 0;
    for (size_t i = 0; i < z->n; i++) {
        zip_stat_t st;
        if (zip_stat_index(z->za, i, 0, &st))
            return fy_err(err, FY_EFORMAT, "the %s archive is corrupt: %s", z->what,
                          zip_strerror(z->za));
        const char *name = (st.valid & ZIP_STAT_NAME) ? st.name : "";
        const char *why = unsafe_name(name);
        if (why)
            return fy_err(err, FY_EFORMAT,
                          "the %s archive has an entry named '%.200s', which is %s: refused",
                          z->what, name, why);
        if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
            return fy_err(
                err, FY_EUNSUPPORTED,
                "the %s archive is encrypted (entry '%.200s'); send it without a password", z->what,
                name);
        uint64_t size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
        uint64_t comp = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0;
        total += size;
        if (total > lim->max_unpacked)
            return fy_err(err, FY_ELIMIT,
                          "the %s archive unpacks to more than %zu bytes (the limit): refused",
                          z->what, lim->max_unpacked);
        if (size > ((uint64_t)1 << 20) && size / (comp ? comp : 1) > lim->max_ratio)
            return fy_err(err, FY_ELIMIT,
                          "entry '%.200s' of the %s archive expands %llu times (%llu bytes from "
                          "%llu); the limit is %u: refused as a zip bomb",
                          name, z->what, (unsigned long long)(size / (comp ? comp : 1)),
                          (unsigned long long)size, (unsigned long long)comp, lim->max_ratio);
    }
    return check_unique(z, err);
}

zipdoc *zipdoc_open(const char *data, size_t len, const fy_doc_limits *lim, const char *what,
                    fy_error *err)
{
    zipdoc *z = calloc(1, sizeof *z);
    zip_error_t ze;
    zip_error_init(&ze);
    if (!z || !(z->data = malloc(len ? len : 1))) {
        free(z);
        fy_err(err, FY_ENOMEM, "out of memory");
        return NULL;
    }
    if (len) memcpy(z->data, data, len);
    z->len = len;
    z->lim = lim;
    snprintf(z->what, sizeof z->what, "%s", what);
    z->src = zip_source_buffer_create(z->data, len, 0, &ze);
    if (!z->src) goto fail;
    z->za = zip_open_from_source(z->src, ZIP_CHECKCONS, &ze);
    if (!z->za) goto fail;
    zip_source_keep(z->src); /* it outlives zip_close: the written archive is read from it */
    zip_int64_t n = zip_get_num_entries(z->za, 0);
    z->n = n > 0 ? (size_t)n : 0;
    if (check_entries(z, err)) {
        zipdoc_free(z);
        return NULL;
    }
    zip_error_fini(&ze);
    return z;
fail:
    if (zip_error_code_zip(&ze) == ZIP_ER_EXISTS)
        fy_err(err, FY_EFORMAT, "the %s archive has two entries with the same name", what);
    else
        fy_err(err, zip_error_code(zip_error_code_zip(&ze)),
               "the %s file is not a valid zip archive (%s)", what, zip_error_strerror(&ze));
    zip_error_fini(&ze);
    zipdoc_free(z);
    return NULL;
}

void zipdoc_free(zipdoc *z)
{
    if (!z) return;
    if (z->za) zip_discard(z->za);
    if (z->src) zip_source_free(z->src);
    free(z->data);
    free(z);
}

size_t zipdoc_count(const zipdoc *z)
{
    return z->n;
}

const char *zipdoc_name(const zipdoc *z, size_t i)
{
    const char *s = zip_get_name(z->za, i, ZIP_FL_ENC_GUESS);
    return s ? s : "";
}

long zipdoc_find(const zipdoc *z, const char *name)
{
    zip_int64_t i = zip_name_locate(z->za, name, 0);
    return i < 0 ? -1 : (long)i;
}

char *zipdoc_read(zipdoc *z, size_t i, size_t *len, fy_error *err)
{
    const char *name = zipdoc_name(z, i);
    zip_stat_t st;
    if (zip_stat_index(z->za, i, 0, &st) || !(st.valid & ZIP_STAT_SIZE)) {
        fy_err(err, FY_EFORMAT, "%s: cannot read the entry", name);
        return NULL;
    }
    if (st.size > z->lim->max_part) {
        fy_err(err, FY_ELIMIT, "%s unpacks to %llu bytes; the limit for one part is %zu", name,
               (unsigned long long)st.size, z->lim->max_part);
        return NULL;
    }
    zip_file_t *f = zip_fopen_index(z->za, i, 0);
    if (!f) {
        int ze = zip_error_code_zip(zip_get_error(z->za));
        fy_err(err, zip_error_code(ze), "%s: %s", name, zip_strerror(z->za));
        return NULL;
    }
    size_t cap = (size_t)st.size;
    char *buf = malloc(cap + 2);
    size_t got = 0;
    int rc = buf ? 0 : fy_err(err, FY_ENOMEM, "out of memory");
    while (!rc) {
        /* One byte more than declared is asked for: getting it means the
         * entry inflates past what the directory says. */
        zip_int64_t r = zip_fread(f, buf + got, cap + 1 - got);
        if (r < 0)
            rc = fy_err(err, zip_error_code(zip_error_code_zip(zip_file_get_error(f))), "%s: %s",
                        name, zip_file_strerror(f));
        else if (r == 0)
            break;
        else if ((got += (size_t)r) > cap)
            rc = fy_err(err, FY_ELIMIT, "%s inflates past its declared %zu bytes: refused", name,
                        cap);
    }
    zip_fclose(f);
    if (rc) {
        free(buf);
        return NULL;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

int zipdoc_replace(zipdoc *z, size_t i, char *data, size_t len, fy_error *err)
{
    zip_stat_t st;
    int keep = !zip_stat_index(z->za, i, 0, &st) && (st.valid & ZIP_STAT_MTIME);
    zip_source_t *s = zip_source_buffer(z->za, data, len, 1);
    if (!s) {
        free(data);
        return fy_err(err, FY_ENOMEM, "out of memory");
    }
    if (zip_file_replace(z->za, i, s, 0)) {
        zip_source_free(s);
        return fy_err(err, FY_EFORMAT, "%s: %s", zipdoc_name(z, i), zip_strerror(z->za));
    }
    /* The entry keeps its time: a document translated twice, or in two
     * parts (a resumed job), is the same file byte for byte. */
    if (keep) zip_file_set_mtime(z->za, i, st.mtime, 0);
    return 0;
}

/* Reads the whole source (the written archive) into out. */
static int source_read_all(zip_source_t *src, fy_buf *out, fy_error *err)
{
    if (zip_source_open(src) < 0)
        return fy_err(err, FY_EFORMAT, "cannot read the written archive: %s",
                      zip_error_strerror(zip_source_error(src)));
    char chunk[65536];
    zip_int64_t r;
    while ((r = zip_source_read(src, chunk, sizeof chunk)) > 0) fy_buf_put(out, chunk, (size_t)r);
    zip_source_close(src);
    if (r < 0) return fy_err(err, FY_EFORMAT, "cannot read the written archive");
    return out->oom ? fy_err(err, FY_ENOMEM, "out of memory") : 0;
}

int zipdoc_write(zipdoc *z, fy_buf *out, fy_error *err)
{
    if (!z->za) return fy_err(err, FY_EINVAL, "the %s archive was written already", z->what);
    int rc = 0;
    if (zip_close(z->za) < 0) {
        rc = fy_err(err, FY_EFORMAT, "cannot write the %s archive: %s", z->what,
                    zip_strerror(z->za));
        zip_discard(z->za);
    }
    z->za = NULL;
    return rc ? rc : source_read_all(z->src, out, err);
}
