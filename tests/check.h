/* check.h - counted checks for the C tests: check() counts one and prints
 * the message of a failed one; main returns `failed ? 1 : 0`.
 * Header-only (static): each test is one executable.
 */
#ifndef FY_TESTS_CHECK_H
#define FY_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int passed, failed;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

#endif
