/* test_auth_equal.c - the API token comparison (auth_equal in
 * src/server/auth.c): exact equality only, whatever the lengths and
 * wherever the first difference is. Its time depends only on the length of
 * the candidate (a loop with no early exit); that is checked by reading the
 * code, not by timing, which would be flaky on a shared machine. */
#include <stdio.h>
#include <string.h>

#include "server/internal.h"
#include "../check.h"

int main(void)
{
    static const char *const tok = "s3cret-Token_0123456789abcdef";
    const struct {
        const char *got;
        int want;
    } cases[] = {
        {"s3cret-Token_0123456789abcdef", 1},
        {"s3cret-Token_0123456789abcdeF", 0},                              /* last byte */
        {"S3cret-Token_0123456789abcdef", 0},                              /* first byte */
        {"s3cret-Token_0123456789abcde", 0},                               /* a prefix */
        {"s3cret-Token_0123456789abcdefg", 0},                             /* one longer */
        {"s3cret-Token_0123456789abcdefs3cret-Token_0123456789abcdef", 0}, /* repeated */
        {"", 0},
        {"x", 0},
        {"s", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check(auth_equal(cases[i].got, tok) == cases[i].want, "auth_equal: '%s' vs '%s'",
              cases[i].got, tok);
    check(auth_equal("a", "a") == 1, "one byte equal: 'a' vs 'a'");
    check(auth_equal("a", "b") == 0, "one byte differs: 'a' vs 'b'");
    /* A candidate that differs from the token only by bits that cancel out
     * in a sum (not in an OR of XORs). */
    check(auth_equal("ab", "ba") == 0, "swapped bytes: 'ab' vs 'ba'");
    check(auth_equal("\x01\x02", "\x02\x01") == 0, "swapped bits: '\\x01\\x02' vs '\\x02\\x01'");
    /* Lengths that differ by a multiple of 256 (a truncated length compare). */
    char a[300], b[44];
    memset(a, 'k', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memset(b, 'k', sizeof b - 1);
    b[sizeof b - 1] = '\0';
    check(auth_equal(a, b) == 0, "299 vs 43 equal bytes: 'k*299' vs 'k*43'");
    check(auth_equal(b, a) == 0, "43 vs 299 equal bytes: 'k*43' vs 'k*299'");
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
