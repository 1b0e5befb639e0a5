#include "util/path.h"

#include <string.h>
#include <sys/stat.h>

const char *fy_path_base(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

uint64_t fy_path_size(const char *path)
{
    struct stat st;
    return path && !stat(path, &st) ? (uint64_t)st.st_size : 0;
}
