/* error.c - formatting of fy_error messages. */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int fy_err(fy_error *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int fy_err_prefix(fy_error *err, const char *fmt, ...)
{
    if (!err) return FY_EINVAL;
    char prefix[FY_ERROR_MSG_MAX], old[FY_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    /* Truncation is acceptable: messages are for people, and stay one line. */
    size_t n = strlen(prefix);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, prefix, n);
    memcpy(err->msg + n, ": ", 2);
    size_t room = sizeof err->msg - n - 3;
    size_t m = strlen(old);
    if (m > room) m = room;
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = '\0';
    return err->code;
}

void fy_err_clear(fy_error *err)
{
    if (!err) return;
    err->code = 0;
    err->msg[0] = '\0';
}
