/* spm_proto.c - the SentencePiece ModelProto wire format, parsed by hand.
 *
 * The schema is small and fixed (sentencepiece_model.proto), so a reader of
 * a few dozen lines beats a protobuf dependency. Every varint, length and
 * offset is checked against the end of its enclosing message; a known field
 * with the wrong wire type or an enum value we do not know is an error, not
 * something to skip silently, because it means the file is not what it
 * claims to be. Unknown fields are skipped, as protobuf does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/spm_impl.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

/* A cursor over one message: [p, end) within the buffer that starts at base. */
typedef struct reader {
    const uint8_t *p, *end, *base;
    const char *name; /* for messages */
    const char *what; /* the message being read, for messages */
    fy_error *err;
} reader;

static int fail_at(reader *r, const uint8_t *at, const char *problem)
{
    return fy_err(r->err, FY_EFORMAT, "%s: corrupt model: %s in %s at byte %zu", r->name, problem,
                  r->what, (size_t)(at - r->base));
}

static int read_varint(reader *r, uint64_t *v)
{
    const uint8_t *start = r->p;
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return fail_at(r, start, "truncated varint");
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) return fail_at(r, start, "varint too long");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail_at(r, start, "varint too long");
}

/* Reads a field key; field numbers are 1 .. 2^29-1. */
static int read_key(reader *r, uint32_t *field, int *wt)
{
    const uint8_t *at = r->p;
    uint64_t k;
    if (read_varint(r, &k)) return FY_EFORMAT;
    *wt = (int)(k & 7);
    uint64_t f = k >> 3;
    if (f == 0 || f > 0x1fffffff) return fail_at(r, at, "invalid field number");
    *field = (uint32_t)f;
    return 0;
}

static int read_len(reader *r, spm_bytes *out)
{
    const uint8_t *at = r->p;
    uint64_t n;
    if (read_varint(r, &n)) return FY_EFORMAT;
    if (n > (uint64_t)(r->end - r->p)) {
        char msg[96];
        snprintf(msg, sizeof msg, "length %llu exceeds the %zu bytes left", (unsigned long long)n,
                 (size_t)(r->end - r->p));
        return fail_at(r, at, msg);
    }
    out->p = r->p;
    out->n = (size_t)n;
    r->p += n;
    return 0;
}

static int skip_field(reader *r, int wt, uint32_t field, int depth);

/* Skips a group up to its matching end-group key. */
static int skip_group(reader *r, uint32_t field, int depth)
{
    if (depth > 32) return fail_at(r, r->p, "groups nested too deeply");
    for (;;) {
        if (r->p >= r->end) return fail_at(r, r->p, "unterminated group");
        uint32_t f = 0;
        int wt = 0;
        const uint8_t *at = r->p;
        if (read_key(r, &f, &wt)) return FY_EFORMAT;
        if (wt == WT_EGROUP) {
            if (f != field) return fail_at(r, at, "mismatched end of group");
            return 0;
        }
        if (skip_field(r, wt, f, depth + 1)) return FY_EFORMAT;
    }
}

static int skip_field(reader *r, int wt, uint32_t field, int depth)
{
    uint64_t v;
    spm_bytes b;
    switch (wt) {
    case WT_VARINT:
        return read_varint(r, &v);
    case WT_I64:
    case WT_I32: {
        size_t n = wt == WT_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n) return fail_at(r, r->p, "truncated fixed-size field");
        r->p += n;
        return 0;
    }
    case WT_LEN:
        return read_len(r, &b);
    case WT_SGROUP:
        return skip_group(r, field, depth);
    default:
        return fail_at(r, r->p, "invalid wire type");
    }
}

static int expect_wt(reader *r, const uint8_t *at, int wt, int want, uint32_t field)
{
    if (wt == want) return 0;
    char msg[80];
    snprintf(msg, sizeof msg, "field %u has wire type %d, expected %d", field, wt, want);
    return fail_at(r, at, msg);
}

static reader sub_reader(const reader *r, spm_bytes b, const char *what)
{
    reader s = *r;
    s.p = b.p;
    s.end = b.p + b.n;
    s.what = what;
    return s;
}

/* ---- ModelProto.SentencePiece ---- */

static int parse_piece(reader *r, spm_proto_piece *pc)
{
    while (r->p < r->end) {
        const uint8_t *at = r->p;
        uint32_t f = 0;
        int wt = 0;
        uint64_t v;
        if (read_key(r, &f, &wt)) return FY_EFORMAT;
        if (f == 1) {
            if (expect_wt(r, at, wt, WT_LEN, f) || read_len(r, &pc->piece)) return FY_EFORMAT;
        } else if (f == 2) {
            if (expect_wt(r, at, wt, WT_I32, f)) return FY_EFORMAT;
            if (r->end - r->p < 4) return fail_at(r, at, "truncated score");
            uint32_t u = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                         (uint32_t)r->p[3] << 24;
            memcpy(&pc->score, &u, 4);
            r->p += 4;
        } else if (f == 3) {
            if (expect_wt(r, at, wt, WT_VARINT, f) || read_varint(r, &v)) return FY_EFORMAT;
            if (v < SPM_NORMAL || v > SPM_BYTE) return fail_at(r, at, "unknown piece type");
            pc->type = (int)v;
        } else if (skip_field(r, wt, f, 0)) {
            return FY_EFORMAT;
        }
    }
    return 0;
}

/* ---- TrainerSpec ---- */

static int parse_trainer(reader *r, spm_proto *m)
{
    m->has_trainer_spec = 1;
    while (r->p < r->end) {
        const uint8_t *at = r->p;
        uint32_t f = 0;
        int wt = 0;
        uint64_t v;
        spm_bytes *str = NULL;
        if (read_key(r, &f, &wt)) return FY_EFORMAT;
        switch (f) {
        case 3:  /* model_type */
        case 24: /* treat_whitespace_as_suffix */
        case 35: /* byte_fallback */
            if (expect_wt(r, at, wt, WT_VARINT, f) || read_varint(r, &v)) return FY_EFORMAT;
            if (f == 3) {
                if (v < SPM_MODEL_UNIGRAM || v > SPM_MODEL_CHAR)
                    return fail_at(r, at, "unknown model type");
                m->model_type = (int)v;
            } else if (f == 24) {
                m->treat_whitespace_as_suffix = v != 0;
            } else {
                m->byte_fallback = v != 0;
            }
            continue;
        case 44:
            str = &m->unk_surface;
            m->has_unk_surface = 1;
            break;
        case 45:
            str = &m->unk_piece;
            break;
        case 46:
            str = &m->bos_piece;
            break;
        case 47:
            str = &m->eos_piece;
            break;
        case 48:
            str = &m->pad_piece;
            break;
        default:
            if (skip_field(r, wt, f, 0)) return FY_EFORMAT;
            continue;
        }
        if (expect_wt(r, at, wt, WT_LEN, f) || read_len(r, str)) return FY_EFORMAT;
    }
    return 0;
}

/* ---- NormalizerSpec ---- */

static int parse_norm(reader *r, spm_proto_norm *n)
{
    n->present = 1;
    while (r->p < r->end) {
        const uint8_t *at = r->p;
        uint32_t f = 0;
        int wt = 0;
        uint64_t v;
        if (read_key(r, &f, &wt)) return FY_EFORMAT;
        if (f == 1 || f == 2) {
            if (expect_wt(r, at, wt, WT_LEN, f) || read_len(r, f == 1 ? &n->name : &n->charsmap))
                return FY_EFORMAT;
        } else if (f >= 3 && f <= 5) {
            if (expect_wt(r, at, wt, WT_VARINT, f) || read_varint(r, &v)) return FY_EFORMAT;
            int *flag = f == 3   ? &n->add_dummy_prefix
                        : f == 4 ? &n->remove_extra_whitespaces
                                 : &n->escape_whitespaces;
            *flag = v != 0;
        } else if (skip_field(r, wt, f, 0)) {
            return FY_EFORMAT;
        }
    }
    return 0;
}

static void norm_defaults(spm_proto_norm *n)
{
    memset(n, 0, sizeof *n);
    n->add_dummy_prefix = n->remove_extra_whitespaces = n->escape_whitespaces = 1;
}

static int add_piece(spm_proto *m, reader *r)
{
    if (m->n_pieces == m->cap_pieces) {
        size_t cap = m->cap_pieces ? m->cap_pieces * 2 : 1024;
        spm_proto_piece *p = realloc(m->pieces, cap * sizeof *p);
        if (!p) return fy_err(r->err, FY_ENOMEM, "%s: out of memory", r->name);
        m->pieces = p;
        m->cap_pieces = cap;
    }
    spm_proto_piece *pc = &m->pieces[m->n_pieces++];
    memset(pc, 0, sizeof *pc);
    pc->type = SPM_NORMAL;
    return 0;
}

int spm_proto_parse(spm_proto *out, const uint8_t *data, size_t size, const char *name,
                    fy_error *err)
{
    memset(out, 0, sizeof *out);
    out->model_type = SPM_MODEL_UNIGRAM;
    norm_defaults(&out->normalizer);
    norm_defaults(&out->denormalizer);
    if (size == 0) return fy_err(err, FY_EFORMAT, "%s: empty file", name);
    reader r = {data, data + size, data, name, "ModelProto", err};
    while (r.p < r.end) {
        const uint8_t *at = r.p;
        uint32_t f = 0;
        int wt = 0;
        spm_bytes b;
        if (read_key(&r, &f, &wt)) return FY_EFORMAT;
        if (f < 1 || f > 5 || f == 4) {
            if (skip_field(&r, wt, f, 0)) return FY_EFORMAT;
            continue;
        }
        if (expect_wt(&r, at, wt, WT_LEN, f) || read_len(&r, &b)) return FY_EFORMAT;
        if (f == 1) {
            if (add_piece(out, &r)) return FY_ENOMEM;
            reader s = sub_reader(&r, b, "piece");
            if (parse_piece(&s, &out->pieces[out->n_pieces - 1])) return FY_EFORMAT;
        } else if (f == 2) {
            reader s = sub_reader(&r, b, "trainer_spec");
            if (parse_trainer(&s, out)) return FY_EFORMAT;
        } else {
            reader s = sub_reader(&r, b, f == 3 ? "normalizer_spec" : "denormalizer_spec");
            if (parse_norm(&s, f == 3 ? &out->normalizer : &out->denormalizer)) return FY_EFORMAT;
        }
    }
    /* spm_train always writes both specs after the pieces; a file cut short
     * at a message boundary parses cleanly but lacks them. */
    if (!out->has_trainer_spec)
        return fy_err(err, FY_EFORMAT, "%s: corrupt model: no trainer_spec (truncated file?)",
                      name);
    if (!out->normalizer.present)
        return fy_err(err, FY_EFORMAT, "%s: corrupt model: no normalizer_spec (truncated file?)",
                      name);
    return 0;
}

void spm_proto_free(spm_proto *m)
{
    if (!m) return;
    free(m->pieces);
    memset(m, 0, sizeof *m);
}
