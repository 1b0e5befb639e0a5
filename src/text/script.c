/* script.c - which script a letter belongs to.
 *
 * The splitter asks "is there a letter to translate here?" and the language
 * detector "which script do the letters mostly use?". Both need the letters
 * of every script in use, but not the whole Unicode character database: a
 * sorted table of ranges holding letters (and the combining vowel signs of
 * the Brahmic scripts, which are part of their words) is enough. Digits,
 * punctuation and symbols inside a script's block are left out of its
 * ranges, so "١٢٣" or "।" is not text to translate.
 */
#include "text/text_internal.h"

#include <stddef.h>

typedef struct range {
    uint32_t lo, hi;
    const char *script;
} range;

/* Sorted by lo, not overlapping. */
static const range letters[] = {
    {0x0041, 0x005A, "Latn"},   {0x0061, 0x007A, "Latn"}, {0x00AA, 0x00AA, "Latn"},
    {0x00BA, 0x00BA, "Latn"},   {0x00C0, 0x00D6, "Latn"}, {0x00D8, 0x00F6, "Latn"},
    {0x00F8, 0x02AF, "Latn"},   {0x0370, 0x0373, "Grek"}, {0x0376, 0x0377, "Grek"},
    {0x037B, 0x037D, "Grek"},   {0x037F, 0x037F, "Grek"}, {0x0386, 0x0386, "Grek"},
    {0x0388, 0x03F5, "Grek"},   {0x03F7, 0x03FF, "Grek"}, {0x0400, 0x0481, "Cyrl"},
    {0x048A, 0x052F, "Cyrl"},   {0x0531, 0x0556, "Armn"}, {0x0560, 0x0588, "Armn"},
    {0x05D0, 0x05EA, "Hebr"},   {0x05EF, 0x05F2, "Hebr"}, {0x0620, 0x065F, "Arab"},
    {0x066E, 0x06D3, "Arab"},   {0x06D5, 0x06D5, "Arab"}, {0x06E5, 0x06E6, "Arab"},
    {0x06EE, 0x06EF, "Arab"},   {0x06FA, 0x06FC, "Arab"}, {0x06FF, 0x06FF, "Arab"},
    {0x0710, 0x074F, "Syrc"},   {0x0750, 0x077F, "Arab"}, {0x0780, 0x07B1, "Thaa"},
    {0x07CA, 0x07EA, "Nkoo"},   {0x08A0, 0x08FF, "Arab"}, {0x0900, 0x0963, "Deva"},
    {0x0971, 0x097F, "Deva"},   {0x0980, 0x09E3, "Beng"}, {0x09F0, 0x09F1, "Beng"},
    {0x0A00, 0x0A63, "Guru"},   {0x0A70, 0x0A75, "Guru"}, {0x0A80, 0x0AE3, "Gujr"},
    {0x0AF9, 0x0AFF, "Gujr"},   {0x0B00, 0x0B63, "Orya"}, {0x0B71, 0x0B71, "Orya"},
    {0x0B80, 0x0BD7, "Taml"},   {0x0C00, 0x0C63, "Telu"}, {0x0C80, 0x0CE3, "Knda"},
    {0x0CF1, 0x0CF2, "Knda"},   {0x0D00, 0x0D63, "Mlym"}, {0x0D7A, 0x0D7F, "Mlym"},
    {0x0D80, 0x0DDF, "Sinh"},   {0x0DF2, 0x0DF3, "Sinh"}, {0x0E01, 0x0E3A, "Thai"},
    {0x0E40, 0x0E4E, "Thai"},   {0x0E81, 0x0ECE, "Laoo"}, {0x0EDC, 0x0EDF, "Laoo"},
    {0x0F00, 0x0F00, "Tibt"},   {0x0F40, 0x0FBC, "Tibt"}, {0x1000, 0x103F, "Mymr"},
    {0x1050, 0x108F, "Mymr"},   {0x109A, 0x109F, "Mymr"}, {0x10A0, 0x10FA, "Geor"},
    {0x10FC, 0x10FF, "Geor"},   {0x1100, 0x11FF, "Hang"}, {0x1200, 0x135A, "Ethi"},
    {0x1380, 0x138F, "Ethi"},   {0x13A0, 0x13FF, "Cher"}, {0x1401, 0x166C, "Cans"},
    {0x166F, 0x167F, "Cans"},   {0x1780, 0x17D3, "Khmr"}, {0x1820, 0x18AA, "Mong"},
    {0x1C80, 0x1C8F, "Cyrl"},   {0x1C90, 0x1CBF, "Geor"}, {0x1D00, 0x1DBF, "Latn"},
    {0x1E00, 0x1EFF, "Latn"},   {0x1F00, 0x1FBC, "Grek"}, {0x1FC2, 0x1FCC, "Grek"},
    {0x1FD0, 0x1FDB, "Grek"},   {0x1FE0, 0x1FEC, "Grek"}, {0x1FF2, 0x1FFC, "Grek"},
    {0x2C60, 0x2C7F, "Latn"},   {0x2D00, 0x2D2F, "Geor"}, {0x2D80, 0x2DDF, "Ethi"},
    {0x2DE0, 0x2DFF, "Cyrl"},   {0x3005, 0x3005, "Hani"}, {0x3007, 0x3007, "Hani"},
    {0x3021, 0x3029, "Hani"},   {0x3038, 0x303B, "Hani"}, {0x3041, 0x3096, "Kana"},
    {0x309D, 0x309F, "Kana"},   {0x30A1, 0x30FA, "Kana"}, {0x30FC, 0x30FF, "Kana"},
    {0x3105, 0x312F, "Bopo"},   {0x3131, 0x318E, "Hang"}, {0x31A0, 0x31BF, "Bopo"},
    {0x31F0, 0x31FF, "Kana"},   {0x3400, 0x4DBF, "Hani"}, {0x4E00, 0x9FFF, "Hani"},
    {0xA000, 0xA48C, "Yiii"},   {0xA640, 0xA66E, "Cyrl"}, {0xA67F, 0xA69F, "Cyrl"},
    {0xA720, 0xA7FF, "Latn"},   {0xA960, 0xA97C, "Hang"}, {0xAB30, 0xAB6F, "Latn"},
    {0xAC00, 0xD7A3, "Hang"},   {0xD7B0, 0xD7FB, "Hang"}, {0xF900, 0xFAFF, "Hani"},
    {0xFB00, 0xFB06, "Latn"},   {0xFB1D, 0xFB4F, "Hebr"}, {0xFB50, 0xFD3D, "Arab"},
    {0xFD50, 0xFDFB, "Arab"},   {0xFE70, 0xFEFC, "Arab"}, {0xFF21, 0xFF3A, "Latn"},
    {0xFF41, 0xFF5A, "Latn"},   {0xFF66, 0xFF9F, "Kana"}, {0xFFA0, 0xFFDC, "Hang"},
    {0x20000, 0x3134F, "Hani"},
};

const char *fy_cp_script(uint32_t cp)
{
    size_t lo = 0, hi = sizeof letters / sizeof *letters;
    if (cp < 0x41) return NULL;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < letters[mid].lo)
            hi = mid;
        else if (cp > letters[mid].hi)
            lo = mid + 1;
        else
            return letters[mid].script;
    }
    return NULL;
}

int fy_cp_is_letter(uint32_t cp)
{
    return fy_cp_script(cp) != NULL;
}

int fy_cp_is_kana(uint32_t cp)
{
    return (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x309D && cp <= 0x309F) ||
           (cp >= 0x30A1 && cp <= 0x30FA) || (cp >= 0x30FC && cp <= 0x30FF) ||
           (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF66 && cp <= 0xFF9F);
}

int fy_cp_is_hangul(uint32_t cp)
{
    return (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x1100 && cp <= 0x11FF) ||
           (cp >= 0x3131 && cp <= 0x318E) || (cp >= 0xA960 && cp <= 0xA97C) ||
           (cp >= 0xD7B0 && cp <= 0xD7FB) || (cp >= 0xFFA0 && cp <= 0xFFDC);
}

/* Latin Extended-A alternates upper/lower case, with the parity flipping at
 * U+0138 (kra, lower) and U+0149 (n-apostrophe, lower). */
static int latin_ext_a_lower(uint32_t cp)
{
    if (cp <= 0x0137) return cp & 1;
    if (cp <= 0x0148) return cp == 0x0138 || !(cp & 1);
    if (cp <= 0x0177) return cp == 0x0149 || (cp & 1);
    return cp == 0x017F || (cp >= 0x0179 && !(cp & 1));
}

int fy_cp_is_lower(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'a' && cp <= 'z';
    if (cp >= 0x00DF && cp <= 0x00FF) return cp != 0x00F7;
    if (cp >= 0x0100 && cp <= 0x017F) return latin_ext_a_lower(cp);
    if (cp >= 0x0180 && cp <= 0x024F) return 0; /* mixed; rare at a sentence start */
    if (cp >= 0x03AC && cp <= 0x03CE) return 1; /* Greek */
    if (cp >= 0x0430 && cp <= 0x045F) return 1; /* Cyrillic */
    if (cp >= 0x0460 && cp <= 0x04FF) return cp & 1;
    if (cp >= 0x0561 && cp <= 0x0587) return 1; /* Armenian */
    if (cp >= 0x1E00 && cp <= 0x1EFF) return cp & 1;
    return 0;
}

int fy_cp_is_mark(uint32_t cp)
{
    return (cp >= 0x0300 && cp <= 0x036F) || cp == 0x0E31 || (cp >= 0x0E34 && cp <= 0x0E3A) ||
           (cp >= 0x0E47 && cp <= 0x0E4E) || cp == 0x0EB1 || (cp >= 0x0EB4 && cp <= 0x0EBC) ||
           (cp >= 0x0EC8 && cp <= 0x0ECE) || (cp >= 0x17B4 && cp <= 0x17D3) || cp == 0x17DD ||
           (cp >= 0x102B && cp <= 0x103E) || (cp >= 0x1056 && cp <= 0x1059) ||
           (cp >= 0x105E && cp <= 0x1060) || (cp >= 0x1062 && cp <= 0x1064) ||
           (cp >= 0x1067 && cp <= 0x106D) || (cp >= 0x1071 && cp <= 0x1074) ||
           (cp >= 0x1082 && cp <= 0x108D) || cp == 0x108F || (cp >= 0x109A && cp <= 0x109D);
}

int fy_cp_joins_next(uint32_t cp)
{
    return (cp >= 0x0E40 && cp <= 0x0E44) || (cp >= 0x0EC0 && cp <= 0x0EC4) || cp == 0x17D2 ||
           cp == 0x1039;
}

int fy_cp_is_unspaced(uint32_t cp)
{
    return fy_cp_is_han(cp) || fy_cp_is_kana(cp) || (cp >= 0x0E01 && cp <= 0x0EFF) ||
           (cp >= 0x1780 && cp <= 0x17FF) || (cp >= 0x1000 && cp <= 0x109F);
}
