/* mapfile.h - read-only memory mapping of whole files.
 *
 * Model, shortlist and vocabulary loaders view their files through this:
 * the mapping is read-only and shared, so any number of workers can read it
 * and the pages cost nothing until touched.
 */
#ifndef FY_UTIL_MAPFILE_H
#define FY_UTIL_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_mapfile {
    const uint8_t *data; /* NULL for an empty file */
    size_t size;
    char *path; /* owned copy of the path, for messages */
} fy_mapfile;

/* Maps path read-only into *out. Returns 0, or FY_ENOTFOUND / FY_EIO with a
 * message naming the file. An empty file maps to data == NULL, size == 0. */
int fy_mapfile_open(fy_mapfile *out, const char *path, fy_error *err);

/* Unmaps and clears *f; harmless on a zeroed or already closed struct. */
void fy_mapfile_close(fy_mapfile *f);

#endif
