/* marian.h - read-only view of a Marian binary model file (model.*.bin).
 *
 * The file is mapped read-only (src/util/mapfile.h) and every header field,
 * name, shape, size, offset and padding is validated when it is opened, so
 * the engine can trust every fy_tensor it gets. Tensors point straight into
 * the mapping; nothing is copied. A fy_marian is immutable after open and may
 * be shared by any number of threads.
 *
 * File format (Marian "binary format version 1", little-endian):
 *   uint64 version (= 1), uint64 tensor count N,
 *   N headers of four uint64: name length incl. NUL, type code, ndim, data bytes,
 *   the N NUL-terminated names, all shapes as int32 (sum of ndim values),
 *   uint64 pad count P and P zero bytes so the data section starts at a
 *   multiple of 256, then each tensor's data, each zero-padded to a multiple
 *   of 256 (the header's data bytes include that padding).
 */
#ifndef FY_MODEL_MARIAN_H
#define FY_MODEL_MARIAN_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Marian type codes: (class << 8) | element size. */
enum { FY_DT_F32 = 0x0404, FY_DT_I8 = 0x0101, FY_DT_INTGEMM8 = 0x4101 };

typedef struct fy_tensor {
    const char *name; /* NUL-terminated, points into the mapping */
    uint32_t type;    /* FY_DT_* */
    int ndim;         /* 1..4 */
    int32_t shape[4]; /* as written in the file header ([in, out] for weight matrices) */
    size_t count;     /* number of elements (product of shape) */
    const void *data; /* into the read-only mapping: float32 / int8 elements */
    float quant_mult; /* FY_DT_INTGEMM8 only: the float32 after the int8 matrix (127/max|W|) */
    size_t bytes;     /* data bytes as stored, padding included (header's data length) */
} fy_tensor;

typedef struct fy_marian fy_marian;

/* Maps and validates the model at path. Returns NULL on error with a
 * one-line message naming the file (and tensor) in err: FY_ENOTFOUND/FY_EIO
 * when it cannot be read, FY_EFORMAT for any inconsistency, FY_EUNSUPPORTED
 * for a valid file using a type or version we do not handle. */
fy_marian *fy_marian_open(const char *path, fy_error *err);

/* Unmaps and frees; NULL is a no-op. Tensors and names die with it. */
void fy_marian_free(fy_marian *m);

/* Number of tensors, including special:model.yml when present. */
size_t fy_marian_tensor_count(const fy_marian *m);

/* The i-th tensor in file order (borrowed, valid until fy_marian_free);
 * NULL when i is out of range. */
const fy_tensor *fy_marian_tensor_at(const fy_marian *m, size_t i);

/* The tensor called name (borrowed), or NULL if absent. */
const fy_tensor *fy_marian_find(const fy_marian *m, const char *name);

/* The text of special:model.yml (NUL-terminated, borrowed), "" if absent. */
const char *fy_marian_yaml(const fy_marian *m);

/* The path given to fy_marian_open (borrowed). */
const char *fy_marian_path(const fy_marian *m);

/* Total size of the mapped file in bytes. */
size_t fy_marian_file_size(const fy_marian *m);

/* A short static name for a type code ("float32", "int8", "intgemm8"). */
const char *fy_dtype_name(uint32_t type);

#endif
