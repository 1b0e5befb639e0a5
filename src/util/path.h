/* path.h - the two questions about a file name the loaders keep asking. */
#ifndef FY_UTIL_PATH_H
#define FY_UTIL_PATH_H

#include <stdint.h>

/* The last component of path (after its last '/'); path itself without
 * one; NULL for NULL. Borrowed from path. */
const char *fy_path_base(const char *path);

/* The size of the file at path in bytes; 0 when it cannot be stat'ed or
 * path is NULL. */
uint64_t fy_path_size(const char *path);

#endif
