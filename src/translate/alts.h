/* alts.h - lists of alternative translations (a sentence's next-best
 * hypotheses after its translation): NULL-terminated arrays of malloc'd
 * strings, and the one-string form a cache entry of beam search holds.
 *
 * The one-string form is the translation and then each alternative, one
 * per line, with '\' written "\\" and a line break "\n" (translations may
 * hold line breaks, never NUL), so any list survives a cache that stores
 * C strings.
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

#endif
