/* test_lang.c - language tags, direction names and file-name infixes. */
#include <stdio.h>
#include <string.h>

#include "util/lang.h"

static int failures;

static void check_norm(const char *code, int want_rc, const char *want)
{
    char out[FY_LANG_MAX];
    int rc = fy_lang_normalize(code, out);
    if (rc != want_rc || strcmp(out, want)) {
        printf("FAIL normalize(%s) = %d '%s', want %d '%s'\n", code ? code : "NULL", rc, out,
               want_rc, want);
        failures++;
    }
}

static void check_pair(const char *name, int want_rc, const char *src, const char *tgt)
{
    char s[FY_LANG_MAX], t[FY_LANG_MAX];
    int rc = fy_lang_pair_parse(name, s, t);
    if (rc != want_rc || strcmp(s, src) || strcmp(t, tgt)) {
        printf("FAIL pair(%s) = %d '%s' '%s', want %d '%s' '%s'\n", name, rc, s, t, want_rc, src,
               tgt);
        failures++;
    }
}

static void check_infix(const char *infix, int want_rc, const char *src, const char *tgt)
{
    char s[FY_LANG_MAX], t[FY_LANG_MAX];
    int rc = fy_lang_pair_from_infix(infix, s, t);
    if (rc != want_rc || strcmp(s, src) || strcmp(t, tgt)) {
        printf("FAIL infix(%s) = %d '%s' '%s'\n", infix, rc, s, t);
        failures++;
    }
}

int main(void)
{
    /* Every code a client dialect sends for Chinese and English. */
    const char *zh[] = {"zh", "ZH", "zh-CN", "zh_CN", "zh-Hans", "zh_Hans", "zh-SG", "zh-Hans-CN"};
    for (size_t i = 0; i < sizeof zh / sizeof *zh; i++) check_norm(zh[i], 0, "zh");
    const char *zt[] = {"zt", "ZT", "zh-TW", "zh_TW", "zh-Hant", "zh-HK", "zh-MO", "zh-Hant-TW"};
    for (size_t i = 0; i < sizeof zt / sizeof *zt; i++) check_norm(zt[i], 0, "zh-Hant");
    const char *en[] = {"en", "EN", "EN-US", "EN-GB", "en_us", "en-Latn-US"};
    for (size_t i = 0; i < sizeof en / sizeof *en; i++) check_norm(en[i], 0, "en");
    check_norm("auto", 1, "");
    check_norm("AUTO", 1, "");
    check_norm("", 1, "");
    check_norm(NULL, 1, "");
    check_norm("PT-BR", 0, "pt");
    check_norm("sr-Latn", 0, "sr-Latn");
    check_norm("de", 0, "de");
    check_norm("e", -1, "");
    check_norm("english", -1, "");
    check_norm("zh-", -1, "");
    check_norm("zh--CN", -1, "");
    check_norm("zh CN", -1, "");
    check_norm("d\xc3\xa9", -1, "");

    check_pair("zh-en", 0, "zh", "en");
    check_pair("en-zh", 0, "en", "zh");
    check_pair("zh-Hant-en", 0, "zh-Hant", "en");
    check_pair("en-zh-Hant", 0, "en", "zh-Hant");
    check_pair("zh-Hans-en", 0, "zh", "en");
    check_pair("en-zh-Hans", 0, "en", "zh");
    check_pair("de-en", 0, "de", "en");
    check_pair("zh", -1, "", "");
    check_pair("zh-en-de", -1, "", "");
    check_pair("zhen", -1, "", "");
    check_pair("-en", -1, "", "");
    check_pair("zh-", -1, "", "");

    check_infix("zhen", 0, "zh", "en");
    check_infix("enzh", 0, "en", "zh");
    check_infix("deen", 0, "de", "en");
    check_infix("enfil", 0, "en", "fil");
    check_infix("filen", 0, "fil", "en");
    check_infix("zhe", -1, "", "");
    check_infix("dexyz", -1, "", "");
    check_infix("zh3n", -1, "", "");

    char name[FY_PAIR_MAX];
    fy_lang_pair_name("zh-Hant", "en", name, sizeof name);
    if (strcmp(name, "zh-Hant-en")) printf("FAIL pair_name %s\n", name), failures++;
    if (strcmp(fy_lang_name("zh-Hant"), "Chinese (Traditional)") ||
        strcmp(fy_lang_name("xx"), "xx"))
        printf("FAIL lang_name\n"), failures++;
    if (!fy_lang_is_cjk("zh") || !fy_lang_is_cjk("ja") || fy_lang_is_cjk("ko") ||
        fy_lang_is_cjk("en"))
        printf("FAIL is_cjk\n"), failures++;
    printf("%s\n", failures ? "FAILED" : "all lang tests passed");
    return failures != 0;
}
