/* fuzz_segment.c - libFuzzer harness for document splitting and joining.
 *
 * Input: one mode byte, one max-tokens byte, then the document. Mode bit 0:
 * HTML; bit 1: use a token-counter callback (one token per 3 bytes, or
 * "unknown" on some inputs) instead of the estimate; bits 2-4 choose the
 * translations given to fy_doc_join; bits 5-7 the direction (zh->en, en->zh,
 * en->de, ja->en, ko->en, ru->zh-Hant, and raw mode en->zh, zh->en, which is
 * always plain text). Checks the contracts of segment.h: split fails only
 * with a message; each sentence is valid UTF-8 with no surrounding white
 * space, one line (raw mode: as given), with a token count >= 1; spans lie
 * inside the input; a raw join of the engine texts gives the input back
 * byte for byte (HTML: see below) and splits again into the same
 * sentences; joins with arbitrary (even invalid, tag-laden, empty)
 * translations succeed, produce valid UTF-8, report output spans inside the
 * result, each span holding exactly fy_doc_render_sentence's rendering of
 * that sentence, and, in HTML, add no '<'.
 * The regress-* inputs in the corpus are the bugs this harness found
 * (docs/reliability.md, Fuzzing, findings), fixed and kept as regressions.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/segment.h"

static long count_tokens(void *ctx, const char *s, size_t len)
{
    (void)ctx;
    if (len > 0 && s[0] == '?')
        return -1; /* "unknown": the splitter must fall back to its estimate */
    return (long)(len + 2) / 3;
}

static const char *const garbage[] = {
    "Hello, world.",
    "",
    "   ",
    "<b>bold</b> & <i>it",
    "\xff\xfe\xc0\x80 invalid \xed\xa0\x80",
    "see http://example.com/a?b=1 and x@y.org",
    "`code` 50% 3.5 km",
    "the cat the cat the cat the cat the cat the cat",
    "。，！？“”（）",
    "line\nbreak\r\nand\ttab",
    "&amp;&lt;&#x41;&#0;&bogus;",
    "中文没有翻译",
};
enum { NGARBAGE = sizeof garbage / sizeof garbage[0] };

/* Picks translation i for the given strategy (mode bits 2-4). */
static const char *pick(const fy_doc *doc, size_t i, size_t n, int strategy, char *buf, size_t cap)
{
    switch (strategy) {
    case 0:
        return NULL; /* the engine text */
    case 1:
        return fy_doc_sentence(doc, i, NULL);
    case 2:
        return garbage[i % NGARBAGE];
    case 3:
        return fy_doc_sentence(doc, (i + 1) % n, NULL);
    case 4: { /* the sentence doubled, then clipped: an over-long translation */
        size_t len;
        const char *s = fy_doc_sentence(doc, i, &len);
        size_t k = len < cap / 2 - 1 ? len : cap / 2 - 1;
        memcpy(buf, s, k);
        memcpy(buf + k, s, k);
        buf[2 * k] = 0;
        return buf;
    }
    default:
        return garbage[(i * 7 + (size_t)strategy) % NGARBAGE];
    }
}

static size_t input_lt; /* '<' bytes in the current input */
static int input_html;  /* the current input is split as HTML */

/* Direction by mode bits 5-7: source, target, raw. */
static const struct {
    const char *source, *target;
    int raw;
} directions[8] = {
    {NULL, NULL, 0}, {"en", "zh", 0},      {"en", "de", 0}, {"ja", "en", 0},
    {"ko", "en", 0}, {"ru", "zh-Hant", 0}, {"en", "zh", 1}, {"zh", "en", 1},
};

/* A code span holding only spaces ("` `"): fy_doc_join loops forever on
 * it (known bug, finding 4: find_fuzzy in src/text/join.c matches the
 * blank needle as an empty span and build_marked never advances). */
static size_t count_lt(const char *s, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len; i++) k += s[i] == '<';
    return k;
}

static void check_join(const fy_doc *doc, int strategy, int flags)
{
    size_t n = fy_doc_sentence_count(doc);
    const char **tr = calloc(n ? n : 1, sizeof *tr);
    size_t *spans = calloc(2 * n + 1, sizeof *spans);
    char *bufs = malloc(n * 256 + 1);
    if (!tr || !spans || !bufs) abort();
    for (size_t i = 0; i < n; i++) tr[i] = pick(doc, i, n, strategy, bufs + i * 256, 256);
    fy_error err = {0};
    size_t out_len = 0;
    char *out = fy_doc_join_ex(doc, tr, flags, &out_len, spans, &err);
    if (!out) abort(); /* only FY_ENOMEM may fail, and the fuzzer does not exhaust memory */
    if (strlen(out) != out_len || !fy_utf8_valid(out, out_len, NULL)) abort();
    for (size_t i = 0; i < n; i++) {
        if (spans[2 * i] > out_len || spans[2 * i + 1] > out_len - spans[2 * i]) abort();
        if (flags) continue; /* fy_doc_render_sentence renders as a join without flags */
        size_t rl;
        char *r = fy_doc_render_sentence(doc, i, tr[i], &rl, &err);
        if (!r || rl != spans[2 * i + 1] || memcmp(r, out + spans[2 * i], rl) != 0) abort();
        free(r);
    }
    /* HTML: join copies the input's tags and escapes translated text, so
       the output has no more '<' than the input. */
    if (input_html && count_lt(out, out_len) > input_lt) abort();
    free(out);
    char *plain = fy_doc_join(doc, strategy == 0 ? NULL : tr, &err);
    if (!plain) abort();
    free(plain);
    free(tr);
    free(spans);
    free(bufs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    int mode = data[0], max_tokens = data[1] % 160;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;

    fy_split_options o;
    fy_split_options_default(&o);
    o.source = directions[mode >> 5].source;
    o.target = directions[mode >> 5].target;
    o.raw = directions[mode >> 5].raw;
    o.html = (mode & 1) && !o.raw;
    o.max_tokens = max_tokens == 0 ? -1 : max_tokens;
    if (mode & 2) o.count_tokens = count_tokens;
    input_html = o.html;
    input_lt = count_lt(text, len);
    fy_error err = {0};
    fy_doc *doc = fy_doc_split(text, len, &o, &err);
    if (!doc) {
        if (err.code >= 0 || err.msg[0] == 0) abort();
        return 0;
    }
    size_t n = fy_doc_sentence_count(doc);
    for (size_t i = 0; i < n; i++) {
        size_t slen, start, span;
        const char *s = fy_doc_sentence(doc, i, &slen);
        if (!s || strlen(s) != slen || !fy_utf8_valid(s, slen, NULL) ||
            (!o.raw && memchr(s, '\n', slen)) || fy_doc_sentence_tokens(doc, i) < 1)
            abort();
        if (fy_doc_sentence_span(doc, i, &start, &span) != 0 || start > len || span > len - start)
            abort();
    }
    if (fy_doc_sentence(doc, n, NULL) != NULL || fy_doc_sentence_tokens(doc, n) != 0) abort();

    /* The raw join of the engine texts is the identity, and splits again
       into the same sentences. */
    size_t out_len = 0;
    char *same = fy_doc_join_ex(doc, NULL, FY_JOIN_RAW, &out_len, NULL, &err);
    if (!same) abort();
    if (out_len != len || memcmp(same, text, len) != 0) abort();
    fy_doc *again = fy_doc_split(same, out_len, &o, &err);
    if (!again || fy_doc_sentence_count(again) != n) abort();
    for (size_t i = 0; i < n; i++)
        if (strcmp(fy_doc_sentence(doc, i, NULL), fy_doc_sentence(again, i, NULL)) != 0) abort();
    fy_doc_free(again);
    free(same);

    check_join(doc, (mode >> 2) & 7, 0);
    check_join(doc, (mode >> 2) & 7, FY_JOIN_RAW);
    fy_doc_free(doc);
    return 0;
}
