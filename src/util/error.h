/* error.h - error values shared by every module.
 *
 * Library code never exits: a function returns 0 on success or a negative
 * FY_E* code, and writes a one-line, human-readable message into the
 * caller's fy_error (which may be NULL when the caller does not care).
 */
#ifndef FY_UTIL_ERROR_H
#define FY_UTIL_ERROR_H

#define FY_ERROR_MSG_MAX 512

typedef struct fy_error {
    int code;                   /* last FY_E* code, 0 if none */
    char msg[FY_ERROR_MSG_MAX]; /* NUL-terminated message */
} fy_error;

enum {
    FY_OK = 0,
    FY_EINVAL = -1,       /* bad argument or bad input data */
    FY_EIO = -2,          /* a file or socket operation failed */
    FY_EFORMAT = -3,      /* a file is corrupt, truncated or inconsistent */
    FY_ENOMEM = -4,       /* allocation failed or an arena ran out */
    FY_EUNSUPPORTED = -5, /* valid, but a feature we do not implement */
    FY_ENOTFOUND = -6,    /* a file, tensor or item does not exist */
    FY_ENET = -7,         /* network failure */
    FY_EHASH = -8,        /* size or checksum mismatch */
    FY_ELIMIT = -9,       /* a configured limit was exceeded */
    FY_EBUSY = -10,       /* queue full, try again later */
    FY_ETIMEOUT = -11,    /* deadline passed */
    FY_ECANCELED = -12,   /* the caller gave up */
    FY_EDEVICE = -13,     /* a compute device failed (a GPU lost, hung or refusing): the
                             work can run again elsewhere */
    FY_EDEVMEM = -14,     /* a compute device ran out of its own memory */
    FY_ESPACE = -15,      /* a store is full (the document jobs' disk or Redis) */
};

/* Formats the message into err (if non-NULL), stores code, returns code. */
int fy_err(fy_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes an existing message ("context: old message"); returns err->code. */
int fy_err_prefix(fy_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err (if non-NULL). */
void fy_err_clear(fy_error *err);

#endif
