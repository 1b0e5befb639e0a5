/* mapfile.c - read-only mmap of whole files. */
#include "util/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int fy_mapfile_open(fy_mapfile *out, const char *path, fy_error *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int code = errno == ENOENT ? FY_ENOTFOUND : FY_EIO;
        return fy_err(err, code, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fy_err(err, FY_EIO, "%s: not a regular file", path);
    }
    out->size = (size_t)st.st_size;
    if (out->size > 0) {
        void *p = mmap(NULL, out->size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            return fy_err(err, FY_EIO, "%s: cannot map: %s", path, strerror(errno));
        }
        out->data = p;
    }
    close(fd);
    out->path = strdup(path);
    if (!out->path) {
        fy_mapfile_close(out);
        return fy_err(err, FY_ENOMEM, "%s: out of memory", path);
    }
    return 0;
}

void fy_mapfile_close(fy_mapfile *f)
{
    if (!f) return;
    if (f->data) munmap((void *)f->data, f->size);
    free(f->path);
    memset(f, 0, sizeof *f);
}
