/* check.h - counted checks for the C tests: check() counts one and prints
 * the message of a failed one; CHECK(cond) names a failed one by its file,
 * line and text, CHECKF(cond, fmt, ...) by its file, line and a message
 * (whose arguments are evaluated only when it fails); main returns
 * `failed ? 1 : 0`.
 * Header-only (static): each test is one executable.
 */
#ifndef FY_TESTS_CHECK_H
#define FY_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int passed, failed;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
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

#define CHECK(cond) check((cond) != 0, "%s:%d: %s", __FILE__, __LINE__, #cond)

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (cond) {                                                                                \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL: %s:%d: ", __FILE__, __LINE__);                                           \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

#endif
