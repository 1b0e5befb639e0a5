/* sha256.c - SHA-256 over OpenSSL's EVP interface. */
#include "model/sha256.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read granularity for hashing files already on disk. */
#define HASH_CHUNK (1 << 20)

struct fy_sha256 {
    EVP_MD_CTX *ctx;
};

fy_sha256 *fy_sha256_new(void)
{
    fy_sha256 *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ctx = EVP_MD_CTX_new();
    if (!h->ctx || fy_sha256_reset(h)) {
        fy_sha256_free(h);
        return NULL;
    }
    return h;
}

void fy_sha256_free(fy_sha256 *h)
{
    if (!h) return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}

int fy_sha256_reset(fy_sha256 *h)
{
    return EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) == 1 ? 0 : FY_ENOMEM;
}

void fy_sha256_update(fy_sha256 *h, const void *data, size_t n)
{
    EVP_DigestUpdate(h->ctx, data, n);
}

void fy_sha256_hex(fy_sha256 *h, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->ctx, md, &n);
    for (unsigned int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

int fy_sha256_update_fd(fy_sha256 *h, int fd, uint64_t n, const char *path, fy_error *err)
{
    unsigned char *buf = malloc(HASH_CHUNK);
    if (!buf) return fy_err(err, FY_ENOMEM, "%s: out of memory", path);
    uint64_t off = 0;
    int rc = 0;
    while (off < n) {
        size_t want = n - off < HASH_CHUNK ? (size_t)(n - off) : HASH_CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            rc = fy_err(err, FY_EIO, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (got == 0) {
            rc = fy_err(err, FY_EFORMAT, "%s: file shrank while reading", path);
            break;
        }
        fy_sha256_update(h, buf, (size_t)got);
        off += (uint64_t)got;
    }
    free(buf);
    return rc;
}

int fy_sha256_file(const char *path, char hex[65], uint64_t *size, fy_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fy_err(err, errno == ENOENT ? FY_ENOTFOUND : FY_EIO, "%s: cannot open: %s", path,
                      strerror(errno));
    struct stat st;
    fy_sha256 *h = NULL;
    int rc;
    if (fstat(fd, &st)) {
        rc = fy_err(err, FY_EIO, "%s: cannot stat: %s", path, strerror(errno));
    } else if (!(h = fy_sha256_new())) {
        rc = fy_err(err, FY_ENOMEM, "%s: out of memory", path);
    } else {
        rc = fy_sha256_update_fd(h, fd, (uint64_t)st.st_size, path, err);
        if (!rc) fy_sha256_hex(h, hex);
        if (!rc && size) *size = (uint64_t)st.st_size;
    }
    fy_sha256_free(h);
    close(fd);
    return rc;
}
