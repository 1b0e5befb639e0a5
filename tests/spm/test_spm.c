/* test_spm.c - unit tests for src/text/spm: the API contract on hand-built
 * models, and the loader on broken files (empty, truncated at many offsets,
 * corrupted bytes, wrong wire types, absurd lengths). Run under ASan in the
 * sanitizer build, a clean pass shows no read outside the buffers.
 *
 * With FANYI_BUILD_DIR set, the models trained by the spm_models fixture are
 * also truncated and corrupted (they carry a real precompiled charsmap).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/spm.h"
#include "../check.h"
#include "../read_file.h"

/* ---- a tiny protobuf writer for hand-built models ---- */

typedef struct pbw {
    uint8_t *p;
    size_t n, cap;
} pbw;

static void w_raw(pbw *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        if (!w->p) abort();
    }
    memcpy(w->p + w->n, p, n);
    w->n += n;
}
static void w_varint(pbw *w, uint64_t v)
{
    do {
        uint8_t b = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) b |= 0x80;
        w_raw(w, &b, 1);
    } while (v);
}
static void w_key(pbw *w, unsigned field, unsigned wt)
{
    w_varint(w, (uint64_t)field << 3 | wt);
}
static void w_bytes(pbw *w, unsigned field, const void *p, size_t n)
{
    w_key(w, field, 2);
    w_varint(w, n);
    w_raw(w, p, n);
}
static void w_str(pbw *w, unsigned field, const char *s)
{
    w_bytes(w, field, s, strlen(s));
}
static void w_int(pbw *w, unsigned field, int64_t v)
{
    w_key(w, field, 0);
    w_varint(w, (uint64_t)v);
}
static void w_float(pbw *w, unsigned field, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    w_key(w, field, 5);
    w_raw(w, b, 4);
}
static void w_msg(pbw *w, unsigned field, pbw *sub)
{
    w_bytes(w, field, sub->p, sub->n);
    free(sub->p);
    memset(sub, 0, sizeof *sub);
}
static void w_piece(pbw *w, const char *piece, float score, int type)
{
    pbw s = {0};
    w_str(&s, 1, piece);
    w_float(&s, 2, score);
    if (type != 1) w_int(&s, 3, type);
    w_msg(w, 1, &s);
}

enum { UNK = 2, CTRL = 3, USER = 4, UNUSED = 5, BYTE = 6 };

/* The test vocabulary: ids fixed, scores chosen so the best paths are obvious. */
static void put_pieces(pbw *w, int with_pad)
{
    w_piece(w, "<unk>", 0, UNK);                               /* 0 */
    w_piece(w, "<s>", 0, CTRL);                                /* 1 */
    w_piece(w, "</s>", 0, CTRL);                               /* 2 */
    w_piece(w, with_pad ? "<pad>" : "<p>", 0, CTRL);           /* 3 */
    w_piece(w, "\xe2\x96\x81", -1, 1);                         /* 4 ▁ */
    w_piece(w, "\xe2\x96\x81hello", -2, 1);                    /* 5 */
    w_piece(w, "\xe2\x96\x81world", -2.5f, 1);                 /* 6 */
    const char *chars[] = {"h", "e", "l", "o", "w", "r", "d"}; /* 7..13 */
    for (int i = 0; i < 7; i++) w_piece(w, chars[i], -5, 1);
    w_piece(w, "<sep>", 0, USER);  /* 14 */
    w_piece(w, "xyz", -1, UNUSED); /* 15 */
    w_piece(w, "x", -6, 1);        /* 16 */
    w_piece(w, "y", -6, 1);        /* 17 */
    w_piece(w, "z", -6, 1);        /* 18 */
}

static void put_bytes(pbw *w)
{
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        w_piece(w, piece, 0, BYTE); /* 19 + b */
    }
}

static void put_specs(pbw *w, int byte_fallback, int model_type)
{
    pbw t = {0}, n = {0};
    w_str(&t, 2, "test");
    if (model_type) w_int(&t, 3, model_type);
    w_int(&t, 4, 8000);
    if (byte_fallback) w_int(&t, 35, 1);
    w_int(&t, 40, 0);
    w_int(&t, 43, -1); /* a negative int32: a 10-byte varint */
    w_msg(w, 2, &t);
    w_str(&n, 1, "identity");
    w_int(&n, 3, 1);
    w_msg(w, 3, &n);
}

static pbw model_bytes(int byte_fallback, int with_pad)
{
    pbw w = {0};
    put_pieces(&w, with_pad);
    if (byte_fallback) put_bytes(&w);
    put_specs(&w, byte_fallback, 0);
    return w;
}

/* ---- API ---- */

static int encode_ids(const fy_spm *s, const char *text, int32_t *ids, size_t cap)
{
    fy_error err = {0};
    long n = fy_spm_encode(s, text, strlen(text), ids, cap, &err);
    if (n < 0) printf("encode error: %s\n", err.msg);
    return (int)n;
}

static int ids_are(const int32_t *got, int n, const int32_t *want, int m)
{
    if (n != m) return 0;
    for (int i = 0; i < n; i++)
        if (got[i] != want[i]) return 0;
    return 1;
}

static void test_api(void)
{
    pbw w = model_bytes(0, 1);
    fy_error err = {0};
    fy_spm *s = fy_spm_load(w.p, w.n, "mem.spm", &err);
    CHECKF(s != NULL, "load: %s", err.msg);
    if (!s) return;
    CHECKF(fy_spm_vocab_size(s) == 19, "size %d", fy_spm_vocab_size(s));
    CHECKF(fy_spm_unk_id(s) == 0 && fy_spm_bos_id(s) == 1 && fy_spm_eos_id(s) == 2 &&
               fy_spm_pad_id(s) == 3,
           "special ids %d %d %d %d", fy_spm_unk_id(s), fy_spm_bos_id(s), fy_spm_eos_id(s),
           fy_spm_pad_id(s));
    CHECKF(fy_spm_piece_to_id(s, "\xe2\x96\x81hello", 8) == 5, "piece_to_id");
    CHECKF(fy_spm_piece_to_id(s, "\xe2\x96\x81hellox", 8) == 5, "length respected");
    CHECKF(fy_spm_piece_to_id(s, "nope", 4) == 0, "absent piece is unk");
    CHECKF(fy_spm_piece_to_id(s, "</s>", 4) == 2, "control piece");
    CHECKF(fy_spm_piece_to_id(s, "xyz", 3) == 15, "unused piece");
    CHECKF(fy_spm_piece_to_id(s, "", 0) == 0, "empty piece is unk");
    size_t len = 0;
    const char *p = fy_spm_id_to_piece(s, 6, &len);
    CHECKF(p && len == 8 && !strcmp(p, "\xe2\x96\x81world"), "id_to_piece");
    CHECKF(fy_spm_id_to_piece(s, -1, &len) == NULL, "id -1");
    CHECKF(fy_spm_id_to_piece(s, 19, NULL) == NULL, "id out of range");

    int32_t ids[32];
    int n = encode_ids(s, "hello world", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){5, 6}, 2), "hello world -> %d ids", n);
    n = encode_ids(s, "  hello   world  ", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){5, 6}, 2), "extra spaces removed");
    n = encode_ids(s, "hello !!", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){5, 4, 0}, 3), "unknown run merged: %d", n);
    n = encode_ids(s, "xyz", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){4, 16, 17, 18}, 4), "unused piece skipped: %d", n);
    n = encode_ids(s, "<sep>hello", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){4, 14, 7, 8, 9, 9, 10}, 7), "user-defined symbol: %d", n);
    CHECKF(encode_ids(s, "", ids, 32) == 0, "empty text");
    CHECKF(encode_ids(s, "   ", ids, 32) == 0, "only spaces");

    /* Buffer too small: the full count comes back, nothing past cap is written. */
    int32_t small[3] = {-7, -7, -7};
    n = encode_ids(s, "hello world", small, 1);
    CHECKF(n == 2 && small[0] == 5 && small[1] == -7, "truncated encode %d", n);
    CHECKF(encode_ids(s, "hello world", NULL, 0) == 2, "count only");

    char pieces[64];
    long pl = fy_spm_encode_pieces(s, "hello !!", 8, pieces, sizeof pieces, &err);
    CHECKF(pl == 15 && !strcmp(pieces, "\xe2\x96\x81hello \xe2\x96\x81 !!"), "pieces '%s'", pieces);

    char out[64];
    long r = fy_spm_decode(s, (int32_t[]){1, 5, 6, 2}, 4, out, sizeof out, &err);
    CHECKF(r == 11 && !strcmp(out, "hello world"), "decode '%s'", out);
    r = fy_spm_decode(s, (int32_t[]){5, 0, 6}, 3, out, sizeof out, &err);
    CHECKF(r == 16 && !strcmp(out, "hello \xe2\x81\x87  world"), "decode unk '%s'", out);
    r = fy_spm_decode(s, (int32_t[]){5, 6}, 2, out, 4, &err);
    CHECKF(r == 11 && !strcmp(out, "hel"), "truncated decode %ld '%s'", r, out);
    CHECKF(fy_spm_decode(s, (int32_t[]){5, 6}, 2, NULL, 0, &err) == 11, "decode length only");
    CHECKF(fy_spm_decode(s, NULL, 0, out, sizeof out, &err) == 0 && !out[0], "decode nothing");
    r = fy_spm_decode(s, (int32_t[]){5, 19}, 2, out, sizeof out, &err);
    CHECKF(r == FY_EINVAL && strstr(err.msg, "mem.spm") && strstr(err.msg, "19"), "bad id: %s",
           err.msg);
    const char *pcs[] = {"\xe2\x96\x81hello", "!!", "\xe2\x96\x81world"};
    size_t lens[] = {8, 2, 8};
    r = fy_spm_decode_pieces(s, pcs, lens, 3, out, sizeof out, &err);
    CHECKF(r == 13 && !strcmp(out, "hello!! world"), "decode pieces '%s'", out);
    fy_spm_free(s);
    free(w.p);

    w = model_bytes(0, 0);
    s = fy_spm_load(w.p, w.n, "mem.spm", &err);
    CHECKF(s && fy_spm_pad_id(s) == -1, "no pad piece -> -1");
    fy_spm_free(s);
    free(w.p);
    fy_spm_free(NULL);
}

static void test_byte_fallback(void)
{
    pbw w = model_bytes(1, 1);
    fy_error err = {0};
    fy_spm *s = fy_spm_load(w.p, w.n, "mem.spm", &err);
    CHECKF(s != NULL, "load byte model: %s", err.msg);
    if (!s) return;
    int32_t ids[32];
    int n = encode_ids(s, "hello \xe4\xb8\xad!", ids, 32);
    CHECKF(ids_are(ids, n, (int32_t[]){5, 4, 19 + 0xe4, 19 + 0xb8, 19 + 0xad, 19 + '!'}, 6),
           "byte fallback: %d", n);
    char out[64];
    long r = fy_spm_decode(s, ids, (size_t)n, out, sizeof out, &err);
    CHECKF(r == 10 && !strcmp(out, "hello \xe4\xb8\xad!"), "byte decode '%s'", out);
    r = fy_spm_decode(s, (int32_t[]){19 + 0xe4, 19 + 'A', 19 + 0xb8}, 3, out, sizeof out, &err);
    CHECKF(r == 7 && !strcmp(out, "\xef\xbf\xbd"
                                  "A\xef\xbf\xbd"),
           "bad bytes -> U+FFFD '%s'", out);
    char pieces[64];
    long pl = fy_spm_encode_pieces(s, "\xe4", 1, pieces, sizeof pieces, &err);
    CHECKF(pl > 0 && !strcmp(pieces, "\xe2\x96\x81 <0xEF> <0xBF> <0xBD>"), "invalid byte '%s'",
           pieces);
    fy_spm_free(s);
    free(w.p);
}

/* ---- loader errors ---- */

static void expect_fail(const void *data, size_t n, const char *what, const char *needle)
{
    fy_error err = {0};
    fy_spm *s = fy_spm_load(data, n, "mem.spm", &err);
    CHECKF(s == NULL, "%s: loaded", what);
    CHECKF(strstr(err.msg, "mem.spm") != NULL, "%s: message lacks the name: %s", what, err.msg);
    if (needle)
        CHECKF(strstr(err.msg, needle) != NULL, "%s: '%s' lacks '%s'", what, err.msg, needle);
    fy_spm_free(s);
}

static void test_broken_pieces(void)
{
    struct {
        const char *what, *needle;
        int pieces; /* which piece set */
    } cases[] = {
        {"no unk", "unknown", 0},         {"two unks", "more than one", 1},
        {"duplicate", "twice", 2},        {"empty piece", "empty", 3},
        {"byte w/o fallback", "byte", 4}, {"fallback w/o bytes", "256", 5},
        {"bad byte piece", "byte", 6},    {"only control", "no normal", 7},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        pbw w = {0};
        int k = cases[c].pieces;
        if (k != 0 && k != 7) w_piece(&w, "<unk>", 0, UNK);
        if (k == 1) w_piece(&w, "<unk2>", 0, UNK);
        if (k == 7) w_piece(&w, "<unk>", 0, UNK);
        if (k != 7) w_piece(&w, "a", -1, 1);
        if (k == 2) w_piece(&w, "a", -2, 1);
        if (k == 3) w_piece(&w, "", -2, 1);
        if (k == 4) w_piece(&w, "<0x41>", 0, BYTE);
        if (k == 6) w_piece(&w, "<0x4G>", 0, BYTE);
        put_specs(&w, k == 5 || k == 6, 0);
        expect_fail(w.p, w.n, cases[c].what, cases[c].needle);
        free(w.p);
    }
    pbw w = {0};
    put_pieces(&w, 1);
    put_specs(&w, 0, 2);
    fy_error err = {0};
    fy_spm *s = fy_spm_load(w.p, w.n, "mem.spm", &err);
    CHECKF(!s && err.code == FY_EUNSUPPORTED && strstr(err.msg, "BPE"), "BPE: %s", err.msg);
    free(w.p);
}

static void test_wire_errors(void)
{
    expect_fail("", 0, "empty", "empty");
    pbw good = model_bytes(0, 1);
    for (size_t cut = 0; cut < good.n; cut++) {
        char what[48];
        snprintf(what, sizeof what, "truncated at %zu", cut);
        fy_error err = {0};
        fy_spm *s = fy_spm_load(good.p, cut, "mem.spm", &err);
        if (s || !strstr(err.msg, "mem.spm"))
            expect_fail(good.p, cut, what, NULL);
        else
            passed++;
        fy_spm_free(s);
    }
    struct {
        const char *what, *needle;
        const uint8_t bytes[24];
        size_t n;
    } raw[] = {
        {"model field 1 as varint", "wire type", {0x08, 0x01}, 2},
        {"trainer spec as fixed32", "wire type", {0x15, 1, 2, 3, 4}, 5},
        {"absurd length", "exceeds", {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}, 7},
        {"varint too long",
         "varint",
         {0x98, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
         13},
        {"truncated varint", "truncated", {0x98, 0x06, 0x80}, 3},
        {"field number 0", "field number", {0x00, 0x01}, 2},
        {"wire type 7", "wire type", {0x0f, 0x01}, 2},
        {"wire type 6", "wire type", {0x0e, 0x01}, 2},
        {"unterminated group", "group", {0x33, 0x08, 0x01}, 3},
        {"mismatched group", "group", {0x33, 0x3c}, 2},
        {"truncated fixed64", "truncated", {0x31, 1, 2, 3}, 4},
        {"piece: score as varint", "wire type", {0x0a, 0x02, 0x10, 0x01}, 4},
        {"piece: type 9", "piece type", {0x0a, 0x02, 0x18, 0x09}, 4},
        {"piece: text as varint", "wire type", {0x0a, 0x02, 0x08, 0x01}, 4},
        {"piece: truncated score", "truncated", {0x0a, 0x03, 0x15, 0x00, 0x00}, 5},
        {"piece: length past parent", "exceeds", {0x0a, 0x03, 0x0a, 0x05, 0x41, 0x41, 0x41}, 7},
        {"trainer: model type 9", "model type", {0x12, 0x02, 0x18, 0x09}, 4},
        {"normalizer: flag as string", "wire type", {0x1a, 0x03, 0x1a, 0x01, 0x00}, 5},
        {"no specs", "trainer_spec", {0x0a, 0x03, 0x0a, 0x01, 0x41}, 5},
    };
    for (size_t i = 0; i < sizeof raw / sizeof *raw; i++)
        expect_fail(raw[i].bytes, raw[i].n, raw[i].what, raw[i].needle);

    /* Skipped unknown fields (varint, fixed, groups) are fine. */
    pbw w = {0};
    w_int(&w, 99, 5);
    w_key(&w, 98, 3);
    w_int(&w, 1, 7);
    w_key(&w, 98, 4);
    w_key(&w, 97, 1);
    w_raw(&w, "12345678", 8);
    w_raw(&w, good.p, good.n);
    fy_error err = {0};
    fy_spm *s = fy_spm_load(w.p, w.n, "mem.spm", &err);
    CHECKF(s != NULL, "unknown fields skipped: %s", err.msg);
    fy_spm_free(s);
    free(w.p);

    /* Broken precompiled charsmaps. */
    const struct {
        const char *what;
        const char *blob;
        size_t n;
    } maps[] = {
        {"charsmap 3 bytes", "\x01\x02\x03", 3},
        {"charsmap 4 bytes", "\x04\x00\x00\x00", 4},
        {"charsmap trie too big", "\xff\x00\x00\x00xyzw", 8},
        {"charsmap trie empty", "\x00\x00\x00\x00xyzw", 8},
    };
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
        pbw m = {0}, n = {0};
        put_pieces(&m, 1);
        put_specs(&m, 0, 0);
        w_bytes(&n, 2, maps[i].blob, maps[i].n);
        w_msg(&m, 3, &n); /* merges into the normalizer spec, as protobuf does */
        expect_fail(m.p, m.n, maps[i].what, "charsmap");
        free(m.p);
    }
    free(good.p);

    err = (fy_error){0};
    s = fy_spm_open("/nonexistent/dir/vocab.spm", &err);
    CHECKF(!s && strstr(err.msg, "/nonexistent/dir/vocab.spm"), "missing file: %s", err.msg);
    char path[] = "/tmp/fy_spm_empty_XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        fclose(fdopen(fd, "w"));
        s = fy_spm_open(path, &err);
        CHECKF(!s && strstr(err.msg, path) && strstr(err.msg, "empty"), "empty file: %s", err.msg);
        remove(path);
    }
}

/* ---- real models from the fixture ---- */

static const char *const samples[] = {
    "今天天气很好，我们去公园散步吧。The weather is nice.",
    "ＡＢＣ１２３，。！ ﬁ ① ｱｲｳ 😀👍🏽 \t tab  spaces ",
    "\xe4\xb8\x80\x80\xff\xc3 bad bytes \xf0\x9f",
    "",
};

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Exercises a (possibly corrupted but loadable) model a little. */
static void use_model(const fy_spm *s)
{
    int32_t ids[512];
    char out[2048];
    fy_error err = {0};
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        long n = fy_spm_encode(s, samples[i], strlen(samples[i]), ids, 512, &err);
        if (n > 0) fy_spm_decode(s, ids, n < 512 ? (size_t)n : 512, out, sizeof out, &err);
        fy_spm_encode_pieces(s, samples[i], strlen(samples[i]), out, sizeof out, &err);
    }
}

static void test_real_model(const char *path, int stride)
{
    size_t n;
    uint8_t *data = (uint8_t *)read_file(path, &n);
    if (!data) {
        printf("skip %s (not found)\n", path);
        return;
    }
    fy_error err = {0};
    fy_spm *s = fy_spm_load(data, n, "real.spm", &err);
    CHECKF(s != NULL, "%s: %s", path, err.msg);
    if (s) use_model(s);
    fy_spm_free(s);
    int bad = 0;
    for (size_t cut = 0; cut < n; cut += (cut < 2048 || n - cut < 2048) ? 1 : (size_t)stride) {
        uint8_t *copy = malloc(cut ? cut : 1); /* exact size, so ASan sees overreads */
        memcpy(copy, data, cut);
        s = fy_spm_load(copy, cut, "real.spm", &err);
        /* Only a cut right before the optional trailing messages (self-test data,
         * denormalizer spec: fields 4 and 5) leaves a valid, shorter model. */
        int boundary = cut < n && (data[cut] == 0x22 || data[cut] == 0x2a);
        if ((s && !boundary) || (!s && !strstr(err.msg, "real.spm"))) {
            if (bad++ < 5)
                printf("truncation at %zu of %s: %s\n", cut, path, s ? "loaded" : err.msg);
        }
        fy_spm_free(s);
        free(copy);
    }
    CHECKF(bad == 0, "%s: %d truncations not rejected", path, bad);
    int loaded = 0, unnamed = 0;
    for (int trial = 0; trial < 200; trial++) {
        uint8_t *copy = malloc(n);
        memcpy(copy, data, n);
        int flips = 1 + (int)(next_rand() % 8);
        for (int f = 0; f < flips; f++) copy[next_rand() % n] = (uint8_t)next_rand();
        s = fy_spm_load(copy, n, "real.spm", &err);
        if (s) {
            loaded++;
            use_model(s);
        } else if (!strstr(err.msg, "real.spm")) {
            unnamed++;
        }
        fy_spm_free(s);
        free(copy);
    }
    CHECKF(unnamed == 0, "%s: corrupt model errors without the name", path);
    printf("%s: %zu bytes, corruption trials: %d of 200 still loaded (and were used)\n", path, n,
           loaded);
    free(data);
}

/* ---- concurrency: one shared handle, several threads ---- */

typedef struct job {
    const fy_spm *s;
    char **lines;
    size_t n;
    long *expect; /* per line: id count, then checksum */
    int bad;
} job;

static long checksum(const int32_t *ids, long n)
{
    unsigned long h = (unsigned long)n; /* unsigned: wraps by definition */
    for (long i = 0; i < n; i++) h = h * 31 + (uint32_t)ids[i];
    return (long)(h >> 1);
}

static void *encode_all(void *arg)
{
    job *j = arg;
    int32_t *ids = malloc(sizeof *ids * 65536);
    char *out = malloc(262144);
    fy_error err = {0};
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < j->n; i++) {
            long n = fy_spm_encode(j->s, j->lines[i], strlen(j->lines[i]), ids, 65536, &err);
            if (n != j->expect[2 * i] || checksum(ids, n) != j->expect[2 * i + 1]) j->bad++;
            if (n > 0) fy_spm_decode(j->s, ids, (size_t)n, out, 262144, &err);
        }
    }
    free(ids);
    free(out);
    return NULL;
}

static void test_threads(const char *model, const char *text)
{
    size_t size;
    char *data = read_file(text, &size);
    fy_error err = {0};
    fy_spm *s = fy_spm_open(model, &err);
    if (!data || !s) {
        printf("skip threads (%s)\n", s ? text : err.msg);
        free(data);
        fy_spm_free(s);
        return;
    }
    data = realloc(data, size + 1);
    data[size] = '\0';
    size_t n = 0;
    char **lines = malloc(sizeof *lines * (size + 1));
    for (char *p = data, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = p + strlen(p) - 1;
        else
            *nl = '\0';
        lines[n++] = p;
        if (!nl[1]) break;
    }
    long *expect = malloc(sizeof *expect * 2 * n);
    int32_t *ids = malloc(sizeof *ids * 65536);
    for (size_t i = 0; i < n; i++) {
        expect[2 * i] = fy_spm_encode(s, lines[i], strlen(lines[i]), ids, 65536, &err);
        expect[2 * i + 1] = checksum(ids, expect[2 * i]);
    }
    enum { T = 4 };
    pthread_t th[T];
    job jobs[T];
    for (int t = 0; t < T; t++) {
        jobs[t] = (job){s, lines, n, expect, 0};
        pthread_create(&th[t], NULL, encode_all, &jobs[t]);
    }
    int bad = 0;
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        bad += jobs[t].bad;
    }
    CHECKF(bad == 0, "%d lines encoded differently in threads", bad);
    printf("threads: %d x 3 x %zu lines on one handle\n", T, n);
    free(ids);
    free(expect);
    free(lines);
    free(data);
    fy_spm_free(s);
}

int main(void)
{
    test_api();
    test_byte_fallback();
    test_broken_pieces();
    test_wire_errors();
    const char *build = getenv("FANYI_BUILD_DIR");
    if (build) {
        const char *names[] = {"nfkc_bf", "identity", "nfkc_uds", "suffix"};
        for (int i = 0; i < 4; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/tests/spm/models/%s.model", build, names[i]);
            test_real_model(path, i == 0 ? 211 : 1009);
        }
        const char *src = getenv("FANYI_SOURCE_DIR");
        if (src) {
            char model[4096], text[4096];
            snprintf(model, sizeof model, "%s/tests/spm/models/nfkc_bf.model", build);
            snprintf(text, sizeof text, "%s/tests/data/text/mixed.txt", src);
            test_threads(model, text);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
