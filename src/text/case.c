/* case.c - simple (one code point to one) case mapping of the cased
 * scripts in use: Latin (ASCII, Latin-1, Extended-A, the Extended-B letters
 * of Vietnamese, Pinyin, Romanian and African orthographies, Extended
 * Additional), Greek, Cyrillic, Armenian, Georgian and full-width Latin.
 *
 * Glossaries match source terms without regard to case and give the target
 * term the case of the occurrence (glossary.c); that needs lower and upper
 * case, not the whole Unicode database. A table of ranges, each either an
 * offset (A-Z -> a-z) or a run of alternating pairs (Ā ā Ă ă ...), and the
 * few single pairs around them. Characters outside it map to themselves.
 */
#include "text/text_internal.h"

#include <stddef.h>

enum { OFFSET, PAIRS_EVEN, PAIRS_ODD };

/* Upper-case code points [lo, hi]: OFFSET maps cp to cp + delta; PAIRS_EVEN
 * (PAIRS_ODD) holds pairs whose upper case is the even (odd) code point and
 * whose lower case is the next one. Sorted by lo, not overlapping. */
typedef struct crange {
    uint32_t lo, hi;
    int kind;
    int32_t delta;
} crange;

static const crange ranges[] = {
    {0x0041, 0x005A, OFFSET, 32},    {0x00C0, 0x00D6, OFFSET, 32},
    {0x00D8, 0x00DE, OFFSET, 32},    {0x0100, 0x012F, PAIRS_EVEN, 1},
    {0x0132, 0x0137, PAIRS_EVEN, 1}, {0x0139, 0x0148, PAIRS_ODD, 1},
    {0x014A, 0x0177, PAIRS_EVEN, 1}, {0x0179, 0x017E, PAIRS_ODD, 1},
    {0x01A0, 0x01A5, PAIRS_EVEN, 1}, {0x01AF, 0x01B0, PAIRS_ODD, 1},
    {0x01CD, 0x01DC, PAIRS_ODD, 1},  {0x01DE, 0x01EF, PAIRS_EVEN, 1},
    {0x01F8, 0x021F, PAIRS_EVEN, 1}, {0x0222, 0x0233, PAIRS_EVEN, 1},
    {0x0386, 0x0386, OFFSET, 38},    {0x0388, 0x038A, OFFSET, 37},
    {0x038C, 0x038C, OFFSET, 64},    {0x038E, 0x038F, OFFSET, 63},
    {0x0391, 0x03A1, OFFSET, 32},    {0x03A3, 0x03AB, OFFSET, 32},
    {0x0400, 0x040F, OFFSET, 80},    {0x0410, 0x042F, OFFSET, 32},
    {0x0460, 0x0481, PAIRS_EVEN, 1}, {0x048A, 0x04BF, PAIRS_EVEN, 1},
    {0x04C0, 0x04C0, OFFSET, 15},    {0x04C1, 0x04CE, PAIRS_ODD, 1},
    {0x04D0, 0x052F, PAIRS_EVEN, 1}, {0x0531, 0x0556, OFFSET, 48},
    {0x10A0, 0x10C5, OFFSET, 7264},  {0x1C90, 0x1CBA, OFFSET, -3008},
    {0x1CBD, 0x1CBF, OFFSET, -3008}, {0x1E00, 0x1E95, PAIRS_EVEN, 1},
    {0x1EA0, 0x1EFF, PAIRS_EVEN, 1}, {0xFF21, 0xFF3A, OFFSET, 32},
};

/* The range holding upper-case cp, or NULL. */
static const crange *upper_range(uint32_t cp)
{
    size_t lo = 0, hi = sizeof ranges / sizeof *ranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ranges[mid].hi < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == sizeof ranges / sizeof *ranges || cp < ranges[lo].lo) return NULL;
    const crange *r = &ranges[lo];
    if (r->kind == PAIRS_EVEN && (cp & 1)) return NULL;
    if (r->kind == PAIRS_ODD && !(cp & 1)) return NULL;
    return r;
}

uint32_t fy_cp_fold(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    switch (cp) {
    case 0x0130: /* İ: Turkish; its full folding is two code points */
        return 'i';
    case 0x0178: /* Ÿ */
        return 0x00FF;
    case 0x017F: /* long s */
        return 's';
    case 0x03C2: /* final sigma */
        return 0x03C3;
    case 0x1E9E: /* capital sharp s */
        return 0x00DF;
    default:
        break;
    }
    const crange *r = upper_range(cp);
    return r ? (uint32_t)((int32_t)cp + r->delta) : cp;
}

/* The range holding lower-case cp, or NULL (the mapping run backwards). */
static const crange *lower_range(uint32_t cp)
{
    for (size_t k = 0; k < sizeof ranges / sizeof *ranges; k++) {
        const crange *r = &ranges[k];
        uint32_t up = (uint32_t)((int32_t)cp - r->delta);
        if (up < r->lo || up > r->hi) continue;
        if (r->kind == PAIRS_EVEN && (up & 1)) continue;
        if (r->kind == PAIRS_ODD && !(up & 1)) continue;
        return r;
    }
    return NULL;
}

uint32_t fy_cp_upper(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'a' && cp <= 'z' ? cp - 32 : cp;
    switch (cp) {
    case 0x00FF:
        return 0x0178;
    case 0x0131: /* dotless i */
        return 'I';
    case 0x03C2:
        return 0x03A3;
    default:
        break;
    }
    const crange *r = lower_range(cp);
    return r ? (uint32_t)((int32_t)cp - r->delta) : cp;
}
