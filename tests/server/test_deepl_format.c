/* test_deepl_format.c - DeepL's preserve_formatting=1 as the server applies
 * it to a translation (deepl_preserve_formatting in src/server/api_deepl.c):
 * a final . ! ? or 。！？ the source does not end with is dropped, unless
 * the source ends in punctuation of its own; a first Latin letter takes the
 * case of the source's first letter; nothing else changes. */
#include <stdio.h>
#include <string.h>

#include "server/internal.h"

int main(void)
{
    static const struct {
        const char *source, *translation, *want;
    } cases[] = {
        {"hello world", "Hallo Welt.", "hallo Welt"},   /* both rules */
        {"Hello world.", "Hallo Welt.", "Hallo Welt."}, /* the source ends a sentence */
        {"Hello world!", "Hallo Welt.", "Hallo Welt."}, /* any end mark of its own */
        {"Hello world", "Hallo Welt!", "Hallo Welt"},   /* ! added */
        {"Hello world…", "Hallo Welt.", "Hallo Welt."}, /* an ellipsis is punctuation */
        {"Hello world:", "Hallo Welt.", "Hallo Welt."}, /* so is a colon */
        {"你好", "Hello.", "Hello"},                    /* CJK source: no case to keep */
        {"你好", "Hello.  \n", "Hello  \n"},            /* trailing space kept */
        {"你好。", "Hello.", "Hello."},                 /* 。 ends the source */
        {"你好？", "Hello?", "Hello?"},                 /* ？ too */
        {"hello", "你好。", "你好"},                    /* 。 dropped */
        {"hello", "你好！", "你好"},                    /* ！ dropped */
        {"hello", "«Hallo» Welt", "«Hallo» Welt"},      /* only ASCII before the letter */
        {"  good day", "  Guten Tag.", "  guten Tag"},  /* leading space skipped */
        {"GOOD", "gut", "Gut"},                         /* upper case kept */
        {"1. item", "1. Punkt", "1. punkt"},            /* digits before the letter */
        {"hello 123", "Hallo 123.", "hallo 123"},       /* a digit ends the source */
        {"", "Hallo.", "Hallo."},                       /* nothing to follow */
        {"hello", "", ""},
        {"hello", ".", ""},
    };
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", cases[i].translation);
        deepl_preserve_formatting(cases[i].source, buf);
        if (!strcmp(buf, cases[i].want)) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAIL: source '%s', translation '%s': got '%s', want '%s'\n",
                    cases[i].source, cases[i].translation, buf, cases[i].want);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
