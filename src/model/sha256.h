/* sha256.h - streaming SHA-256 (OpenSSL libcrypto EVP) for model files.
 *
 * Downloads are hashed as the bytes arrive, and a resumed download first
 * re-hashes the part already on disk, so a file is never read twice.
 */
#ifndef FY_MODEL_SHA256_H
#define FY_MODEL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct fy_sha256 fy_sha256;

/* A new hash context, already reset; NULL when out of memory. */
fy_sha256 *fy_sha256_new(void);

/* Frees the context; NULL is a no-op. */
void fy_sha256_free(fy_sha256 *h);

/* Starts a new digest (discards everything hashed so far). Returns 0 or FY_ENOMEM. */
int fy_sha256_reset(fy_sha256 *h);

/* Adds n bytes. */
void fy_sha256_update(fy_sha256 *h, const void *data, size_t n);

/* Finishes the digest into hex (64 lowercase digits + NUL); reset before reuse. */
void fy_sha256_hex(fy_sha256 *h, char hex[65]);

/* Adds the first n bytes of the open file fd (read from offset 0, leaving
 * the file offset unspecified). path names the file in messages. Returns 0,
 * FY_EIO on a read error, FY_EFORMAT when the file is shorter than n. */
int fy_sha256_update_fd(fy_sha256 *h, int fd, uint64_t n, const char *path, fy_error *err);

/* Hashes the whole file at path into hex; *size (if non-NULL) gets its size.
 * Returns 0, FY_ENOTFOUND, FY_EIO or FY_ENOMEM with a message naming the file. */
int fy_sha256_file(const char *path, char hex[65], uint64_t *size, fy_error *err);

#endif
