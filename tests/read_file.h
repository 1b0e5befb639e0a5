/* read_file.h - whole files for the C tests and the benchmarks they build:
 * read_file() returns a file's bytes with a NUL after them, so a text file
 * can be used as a string.
 * Header-only (static): each test is one executable.
 */
#ifndef FY_TESTS_READ_FILE_H
#define FY_TESTS_READ_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* path's bytes and a NUL (*len: their count, the NUL not counted), or NULL
 * when the file cannot be opened or read. The caller frees it. */
static __attribute__((unused)) char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
    char *p = n >= 0 && !fseek(f, 0, SEEK_SET) ? malloc((size_t)n + 1) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    if (p) {
        p[n] = '\0';
        *len = (size_t)n;
    }
    return p;
}

#endif
