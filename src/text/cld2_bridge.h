/* cld2_bridge.h - the C view of CLD2, implemented in detect_cld2.cc (the
 * one C++ file of the text module). Not API: fy_detect (detect.h) is.
 */
#ifndef FY_TEXT_CLD2_BRIDGE_H
#define FY_TEXT_CLD2_BRIDGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fy_cld2_result {
    char code[3][16]; /* CLD2's codes, best first ("en", "zh-Hant", "iw", "un"...) */
    int percent[3];   /* of the text's letters, 0..100 */
    int reliable;     /* CLD2's is_reliable */
} fy_cld2_result;

/* Runs CLD2 on the plain text text[0..len) (valid UTF-8; at most INT_MAX
 * bytes are looked at). best_effort: an answer even for text CLD2 finds too
 * short (kCLDFlagBestEffort). Fills out; returns 0, or FY_ENOMEM when CLD2
 * could not allocate. Thread-safe. */
int fy_cld2_detect(const char *text, size_t len, int best_effort, fy_cld2_result *out);

#ifdef __cplusplus
}
#endif

#endif
