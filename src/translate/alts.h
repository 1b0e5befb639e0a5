/* alts.h - lists of alternative translations (a sentence's next-best
 * hypotheses after its translation): NULL-terminated arrays of malloc'd
 * strings, and the forms a cache entry holds.
 *
 * The one-string form is the translation and then each alternative, one
 * per line, with '\' written "\\" and a line break "\n" (translations may
 * hold line breaks, never NUL), so any list survives a cache that stores
 * C strings.
 *
 * A cache entry is the translation (beam 1) or the one-string form (beam
 * search), then U+001E and the confidence ("%.9g %.9g": score and margin,
 * scheduler.h's fy_confidence). U+001E never occurs in a translation (the
 * engine drops C0 controls but tab, LF and CR: translate/output.c).
 */
#ifndef FY_TRANSLATE_ALTS_H
#define FY_TRANSLATE_ALTS_H

#include <stddef.h>

/* Number of strings in list (NULL: 0). */
size_t fy_alts_count(char *const *list);

/* Frees every string and the array; NULL harmless. */
void fy_alts_free(char **list);

/* The one-string form of best and list (may be NULL): malloc'd, NULL when
 * out of memory. */
char *fy_alts_encode(const char *best, char *const *list);

/* Reads the one-string form: *best (malloc'd) and *list (malloc'd
 * NULL-terminated array, or NULL when there is no alternative). 0, or -1
 * when out of memory (nothing is returned then). */
int fy_alts_decode(const char *value, char **best, char ***list);

/* The cache entry of value (a translation or a one-string form) with conf:
 * malloc'd, NULL when out of memory. */
struct fy_confidence;
char *fy_cache_entry_encode(const char *value, const struct fy_confidence *conf);

/* Splits a cache entry in place: entry keeps the value, *conf receives the
 * confidence ({NAN, INFINITY} for an entry without one). */
void fy_cache_entry_decode(char *entry, struct fy_confidence *conf);

#endif
