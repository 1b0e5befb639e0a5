/* marian.c - validating loader for Marian binary models (model.*.bin).
 *
 * Layout facts checked against marian-dev src/common/binary.cpp (saveItems /
 * loadItems), io_item.h, types.h and tensors/cpu/integer_common.h:
 *  - header: uint64 version (1), uint64 N, N x {name_len incl. NUL, type,
 *    ndim, data_len} (uint64 each), names, int32 shapes, uint64 pad P, P zero
 *    bytes. The writer picks P = 256 - (pos + 8) % 256, i.e. 1..256 (never 0).
 *  - data: each item's bytes as stored, data_len including padding to 256;
 *    the writer pads to ceil(required / 256) * 256, except special:model.yml
 *    which is written unpadded (yaml length + NUL) and comes last.
 *  - intgemm8 (0x4101): count int8 values immediately followed by one float32
 *    quantisation multiplier (at data + count, before any padding).
 * We accept exactly what the writer produces: the data section and every
 * tensor start on a 256-byte boundary, each data_len between the required
 * bytes and that rounded up to 256, no bytes after the last tensor.
 */
#include "model/marian.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mapfile.h"

#define MARIAN_VERSION   1
#define MARIAN_ALIGN     256
#define MAX_NAME_LEN     4096
#define MAX_TENSORS      (1u << 20)
#define YAML_TENSOR_NAME "special:model.yml"

struct fy_marian {
    fy_mapfile map;
    size_t n;
    fy_tensor *tensors; /* [n] in file order */
    size_t *by_name;    /* [n] indices sorted by name, for fy_marian_find */
    const char *yaml;   /* into the mapping, or "" */
};

/* A bounds-checked little-endian reader over the mapping. */
typedef struct reader {
    const uint8_t *base;
    size_t size, pos;
} reader;

static int read_u64(reader *r, uint64_t *v)
{
    if (r->size - r->pos < 8) return -1;
    memcpy(v, r->base + r->pos, 8);
    r->pos += 8;
    return 0;
}

const char *fy_dtype_name(uint32_t type)
{
    switch (type) {
    case FY_DT_F32:
        return "float32";
    case FY_DT_I8:
        return "int8";
    case FY_DT_INTGEMM8:
        return "intgemm8";
    default:
        return "unknown";
    }
}

/* Marian types that are valid but that we do not run. */
static int known_unsupported(uint64_t type)
{
    switch (type) {
    case 0x0102: /* int16 */
    case 0x0104: /* int32 */
    case 0x0108: /* int64 */
    case 0x0201: /* uint8 */
    case 0x0202: /* uint16 */
    case 0x0204: /* uint32 */
    case 0x0208: /* uint64 */
    case 0x0402: /* float16 */
    case 0x0408: /* float64 */
    case 0x0802: /* packed16 (FBGEMM) */
    case 0x1801: /* packed8avx2 */
    case 0x2801: /* packed8avx512 */
    case 0x4102: /* intgemm16 */
        return 1;
    default:
        return 0;
    }
}

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* qsort has no context argument in C11: a thread-local pointer keeps
 * concurrent loads safe. */
static _Thread_local fy_marian *tl_sort;

static int cmp_name_tl(const void *a, const void *b)
{
    const fy_tensor *t = tl_sort->tensors;
    return strcmp(t[*(const size_t *)a].name, t[*(const size_t *)b].name);
}

/* Builds the name index and rejects duplicate names. */
static int sort_names(fy_marian *m, fy_error *err)
{
    for (size_t i = 0; i < m->n; i++) m->by_name[i] = i;
    tl_sort = m;
    qsort(m->by_name, m->n, sizeof *m->by_name, cmp_name_tl);
    tl_sort = NULL;
    for (size_t i = 1; i < m->n; i++) {
        const char *a = m->tensors[m->by_name[i - 1]].name;
        if (strcmp(a, m->tensors[m->by_name[i]].name) == 0)
            return fy_err(err, FY_EFORMAT, "%s: tensor '%s': duplicate name", m->map.path, a);
    }
    return 0;
}

/* Reads and checks the N fixed-size headers; fills type/ndim/bytes. */
static int parse_headers(fy_marian *m, reader *r, uint64_t *name_len, fy_error *err)
{
    const char *path = m->map.path;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t nl, type, ndim, len;
        if (read_u64(r, &nl) || read_u64(r, &type) || read_u64(r, &ndim) || read_u64(r, &len))
            return fy_err(err, FY_EFORMAT, "%s: truncated in the header of tensor #%zu", path, i);
        if (nl < 2 || nl > MAX_NAME_LEN)
            return fy_err(err, FY_EFORMAT, "%s: tensor #%zu: bad name length %" PRIu64, path, i,
                          nl);
        if (type != FY_DT_F32 && type != FY_DT_I8 && type != FY_DT_INTGEMM8) {
            if (known_unsupported(type))
                return fy_err(err, FY_EUNSUPPORTED,
                              "%s: tensor #%zu: unsupported Marian type 0x%04" PRIx64, path, i,
                              type);
            return fy_err(err, FY_EFORMAT, "%s: tensor #%zu: unknown type code 0x%" PRIx64, path, i,
                          type);
        }
        if (ndim < 1 || ndim > 4)
            return fy_err(err, FY_EFORMAT, "%s: tensor #%zu: bad number of dimensions %" PRIu64,
                          path, i, ndim);
        if (len > m->map.size)
            return fy_err(err, FY_EFORMAT,
                          "%s: tensor #%zu: data length %" PRIu64 " exceeds the file size %zu",
                          path, i, len, m->map.size);
        name_len[i] = nl;
        m->tensors[i].type = (uint32_t)type;
        m->tensors[i].ndim = (int)ndim;
        m->tensors[i].bytes = (size_t)len;
    }
    return 0;
}

static int parse_names(fy_marian *m, reader *r, const uint64_t *name_len, fy_error *err)
{
    const char *path = m->map.path;
    for (size_t i = 0; i < m->n; i++) {
        size_t nl = (size_t)name_len[i];
        if (r->size - r->pos < nl)
            return fy_err(err, FY_EFORMAT, "%s: truncated in the name of tensor #%zu", path, i);
        const char *name = (const char *)r->base + r->pos;
        if (name[nl - 1] != '\0')
            return fy_err(err, FY_EFORMAT, "%s: tensor #%zu: name not NUL-terminated", path, i);
        if (strlen(name) != nl - 1)
            return fy_err(err, FY_EFORMAT, "%s: tensor #%zu: NUL inside the name '%s'", path, i,
                          name);
        m->tensors[i].name = name;
        r->pos += nl;
    }
    return 0;
}

static int parse_shapes(fy_marian *m, reader *r, fy_error *err)
{
    for (size_t i = 0; i < m->n; i++) {
        fy_tensor *t = &m->tensors[i];
        size_t need = (size_t)t->ndim * 4;
        if (r->size - r->pos < need)
            return fy_err(err, FY_EFORMAT, "%s: tensor '%s': truncated in its shape", m->map.path,
                          t->name);
        size_t count = 1;
        for (int d = 0; d < t->ndim; d++) {
            int32_t v;
            memcpy(&v, r->base + r->pos + 4 * (size_t)d, 4);
            if (v < 1)
                return fy_err(err, FY_EFORMAT, "%s: tensor '%s': bad dimension %d = %d",
                              m->map.path, t->name, d, (int)v);
            t->shape[d] = v;
            if (count > m->map.size / (size_t)v)
                return fy_err(err, FY_EFORMAT, "%s: tensor '%s': shape larger than the file",
                              m->map.path, t->name);
            count *= (size_t)v;
        }
        for (int d = t->ndim; d < 4; d++) t->shape[d] = 0;
        t->count = count;
        r->pos += need;
    }
    return 0;
}

static void shape_text(const fy_tensor *t, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int d = 0; d < t->ndim && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%d", d ? "x" : "", (int)t->shape[d]);
}

/* Checks one tensor's data placement and type-specific content. */
static int bind_data(fy_marian *m, fy_tensor *t, size_t off, fy_error *err)
{
    const char *path = m->map.path;
    char shp[64];
    shape_text(t, shp, sizeof shp);
    if (off % MARIAN_ALIGN != 0)
        return fy_err(err, FY_EFORMAT,
                      "%s: tensor '%s': data at offset %zu is not 256-byte aligned "
                      "(previous tensor not padded)",
                      path, t->name, off);
    size_t elem = t->type == FY_DT_F32 ? 4 : 1;
    size_t need = t->count * elem + (t->type == FY_DT_INTGEMM8 ? 4 : 0);
    if (t->bytes < need)
        return fy_err(err, FY_EFORMAT,
                      "%s: tensor '%s': data length %zu too short for shape %s %s (%zu bytes)",
                      path, t->name, t->bytes, shp, fy_dtype_name(t->type), need);
    if (t->bytes > round_up(need, MARIAN_ALIGN))
        return fy_err(err, FY_EFORMAT,
                      "%s: tensor '%s': data length %zu inconsistent with shape %s %s "
                      "(%zu bytes + padding to 256)",
                      path, t->name, t->bytes, shp, fy_dtype_name(t->type), need);
    if (m->map.size - off < t->bytes)
        return fy_err(err, FY_EFORMAT,
                      "%s: tensor '%s': truncated (data ends at %zu, file has %zu bytes)", path,
                      t->name, off + t->bytes, m->map.size);
    t->data = m->map.data + off;
    t->quant_mult = 0.0f;
    if (t->type == FY_DT_INTGEMM8) {
        float q;
        memcpy(&q, m->map.data + off + t->count, 4);
        if (!(q > 0.0f) || !isfinite(q))
            return fy_err(err, FY_EFORMAT, "%s: tensor '%s': bad quantization multiplier %g", path,
                          t->name, (double)q);
        t->quant_mult = q;
    }
    if (strcmp(t->name, YAML_TENSOR_NAME) == 0) {
        const char *s = t->data;
        if (t->type != FY_DT_I8 || t->ndim != 1)
            return fy_err(err, FY_EFORMAT, "%s: tensor '%s': expected a 1-D int8 string", path,
                          t->name);
        if (s[t->count - 1] != '\0' || strlen(s) != t->count - 1)
            return fy_err(err, FY_EFORMAT,
                          "%s: tensor '%s': text not NUL-terminated or contains NUL", path,
                          t->name);
        m->yaml = s;
    }
    return 0;
}

/* Parses and validates the whole mapping into m. */
static int parse(fy_marian *m, fy_error *err)
{
    const char *path = m->map.path;
    reader r = {m->map.data, m->map.size, 0};
    uint64_t version, n;
    if (read_u64(&r, &version) || read_u64(&r, &n))
        return fy_err(err, FY_EFORMAT, "%s: too short for a Marian model header (%zu bytes)", path,
                      m->map.size);
    if (version != MARIAN_VERSION)
        return fy_err(err, FY_EFORMAT,
                      "%s: not a Marian binary model (version field %" PRIu64 ", expected 1)", path,
                      version);
    if (n == 0 || n > MAX_TENSORS || n > (m->map.size - 16) / 32)
        return fy_err(err, FY_EFORMAT, "%s: absurd tensor count %" PRIu64 " for a %zu-byte file",
                      path, n, m->map.size);
    m->n = (size_t)n;
    m->tensors = calloc(m->n, sizeof *m->tensors);
    m->by_name = calloc(m->n, sizeof *m->by_name);
    uint64_t *name_len = calloc(m->n, sizeof *name_len);
    int rc = FY_ENOMEM;
    if (!m->tensors || !m->by_name || !name_len) {
        fy_err(err, rc, "%s: out of memory", path);
        goto out;
    }
    if ((rc = parse_headers(m, &r, name_len, err)) || (rc = parse_names(m, &r, name_len, err)) ||
        (rc = parse_shapes(m, &r, err)))
        goto out;
    uint64_t pad;
    rc = FY_EFORMAT;
    if (read_u64(&r, &pad)) {
        fy_err(err, rc, "%s: truncated before the data section", path);
        goto out;
    }
    if (pad > MARIAN_ALIGN || pad > r.size - r.pos || (r.pos + pad) % MARIAN_ALIGN != 0) {
        fy_err(err, rc,
               "%s: bad header padding %" PRIu64 " at offset %zu (data must start on a "
               "256-byte boundary within the file)",
               path, pad, r.pos);
        goto out;
    }
    for (uint64_t i = 0; i < pad; i++) {
        if (r.base[r.pos + i] != 0) {
            fy_err(err, rc, "%s: non-zero header padding byte at offset %zu", path,
                   (size_t)(r.pos + i));
            goto out;
        }
    }
    size_t off = r.pos + (size_t)pad;
    for (size_t i = 0; i < m->n; i++) {
        if ((rc = bind_data(m, &m->tensors[i], off, err))) goto out;
        off += m->tensors[i].bytes;
    }
    rc = FY_EFORMAT;
    if (off != m->map.size) {
        fy_err(err, rc, "%s: %zu unexpected bytes after the last tensor", path, m->map.size - off);
        goto out;
    }
    rc = sort_names(m, err);
out:
    free(name_len);
    return rc;
}

fy_marian *fy_marian_open(const char *path, fy_error *err)
{
    fy_marian *m = calloc(1, sizeof *m);
    if (!m) {
        fy_err(err, FY_ENOMEM, "%s: out of memory", path);
        return NULL;
    }
    m->yaml = "";
    if (fy_mapfile_open(&m->map, path, err)) goto fail;
    if (m->map.size == 0) {
        fy_err(err, FY_EFORMAT, "%s: empty file", path);
        goto fail;
    }
    if (parse(m, err)) goto fail;
    return m;
fail:
    fy_marian_free(m);
    return NULL;
}

void fy_marian_free(fy_marian *m)
{
    if (!m) return;
    fy_mapfile_close(&m->map);
    free(m->tensors);
    free(m->by_name);
    free(m);
}

size_t fy_marian_tensor_count(const fy_marian *m)
{
    return m->n;
}

const fy_tensor *fy_marian_tensor_at(const fy_marian *m, size_t i)
{
    return i < m->n ? &m->tensors[i] : NULL;
}

const fy_tensor *fy_marian_find(const fy_marian *m, const char *name)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const fy_tensor *t = &m->tensors[m->by_name[mid]];
        int c = strcmp(name, t->name);
        if (c == 0) return t;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const char *fy_marian_yaml(const fy_marian *m)
{
    return m->yaml;
}

const char *fy_marian_path(const fy_marian *m)
{
    return m->map.path;
}

size_t fy_marian_file_size(const fy_marian *m)
{
    return m->map.size;
}
