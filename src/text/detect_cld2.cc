/* detect_cld2.cc - CLD2 (a C++ library) behind one C function.
 *
 * The rest of Fanyi is C; this file is the only place that includes CLD2's
 * headers, and no exception may cross back into C: an allocation failure
 * inside CLD2 becomes FY_ENOMEM.
 */
#include <climits>
#include <cstdio> /* compact_lang_det.h uses FILE without including it */
#include <cstring>

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

extern "C" {
#include "text/cld2_bridge.h"
#include "util/error.h"
}

static void copy_code(char out[16], CLD2::Language lang)
{
    const char *c = CLD2::LanguageCode(lang);
    std::snprintf(out, 16, "%s", c ? c : "un");
}

extern "C" int fy_cld2_detect(const char *text, size_t len, int best_effort, fy_cld2_result *out)
{
    std::memset(out, 0, sizeof *out);
    CLD2::CLDHints hints = {NULL, NULL, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    CLD2::Language lang3[3] = {CLD2::UNKNOWN_LANGUAGE, CLD2::UNKNOWN_LANGUAGE,
                               CLD2::UNKNOWN_LANGUAGE};
    int percent3[3] = {0, 0, 0}, text_bytes = 0, valid_prefix = 0;
    double score3[3];
    bool reliable = false;
    int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;
    int flags = best_effort ? CLD2::kCLDFlagBestEffort : 0;
    try {
        CLD2::ExtDetectLanguageSummaryCheckUTF8(text, n, true, &hints, flags, lang3, percent3,
                                                score3, NULL, &text_bytes, &reliable,
                                                &valid_prefix);
    } catch (...) {
        return FY_ENOMEM; /* std::bad_alloc: nothing else is thrown by CLD2 */
    }
    for (int k = 0; k < 3; k++) {
        copy_code(out->code[k], lang3[k]);
        out->percent[k] = percent3[k];
    }
    out->reliable = reliable;
    return 0;
}
