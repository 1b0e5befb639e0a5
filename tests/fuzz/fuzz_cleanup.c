/* fuzz_cleanup.c - libFuzzer harness for the small text functions:
 * fy_cleanup_english and fy_cleanup_chinese on arbitrary bytes (engine
 * output can be anything), fy_detect (plain and HTML) and
 * fy_detect_language, and fy_utf8_valid, checked against a straightforward
 * reference validator written here from the Unicode definition.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/detect.h"
#include "text/segment.h"

/* Reference: offset of the first ill-formed sequence, or len if none
 * (Unicode table 3-7, well-formed UTF-8 byte sequences). */
static size_t ref_bad_offset(const uint8_t *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return i;
        }
        if (len - i <= need) return i;
        if (s[i + 1] < lo || s[i + 1] > hi) return i;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80) return i;
        i += need + 1;
    }
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t bad = (size_t)-1;
    int ok = fy_utf8_valid(s, size, &bad);
    size_t ref = ref_bad_offset(data, size);
    if (ok != (ref == size) || (!ok && bad != ref)) abort();

    const char *lang = fy_detect_language(s, size);
    if (!lang || (strcmp(lang, "zh") != 0 && strcmp(lang, "en") != 0)) abort();

    for (int html = 0; html < 2; html++) {
        fy_detection d;
        int rc = fy_detect(s, size, html, &d);
        if (rc != (ok ? 0 : FY_EINVAL) || d.n < 0 || d.n > 3 || (!d.script[0] && d.n != 0)) abort();
        for (int k = 0; k < d.n; k++)
            if (!d.top[k].lang[0] || d.top[k].percent < 0 || d.top[k].percent > 100) abort();
    }

    char *(*const cleanups[2])(const char *, size_t) = {fy_cleanup_english, fy_cleanup_chinese};
    for (int k = 0; k < 2; k++) {
        char *clean = cleanups[k](s, size);
        if (!clean) abort();
        size_t clen = strlen(clean);
        /* Clean-up of valid text stays valid; running it again succeeds. */
        if (ok && !fy_utf8_valid(clean, clen, NULL)) abort();
        char *again = cleanups[k](clean, clen);
        if (!again) abort();
        free(again);
        free(clean);
    }
    /* The clean-up of each kind of row of the table of language rules, and
     * the paragraphs of a mixed document (they cover the text in order). */
    static const char *const targets[] = {"fr", "es",      "de", "ar", "hi",
                                          "ja", "zh-Hant", "th", "eo"};
    for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
        char *clean = fy_cleanup(targets[k], s, size);
        if (!clean || (ok && !fy_utf8_valid(clean, strlen(clean), NULL))) abort();
        free(clean);
    }
    fy_detect_part *parts;
    size_t np, at = 0;
    int rc = fy_detect_paragraphs(s, size, 0, &parts, &np);
    if (rc != (ok ? 0 : FY_EINVAL)) abort();
    for (size_t k = 0; k < np; k++) {
        if (parts[k].start != at) abort();
        at += parts[k].len;
    }
    if (rc == 0 && at != size) abort();
    free(parts);
    return 0;
}
