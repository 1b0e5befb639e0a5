/* fuzz_prompt.c - libFuzzer harness for the plug-ins' prompt recogniser
 * (server/prompt.h): arbitrary bytes as the system message (before the
 * first NUL; none without one) and the user message (after it). A prompt
 * is either refused with a reason or read back into texts that lie within
 * the user message's length, with a known answer format, and its answer can
 * be written for any translations. Messages hold no NUL, as in the server.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/prompt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *nul = memchr(data, 0, size);
    char *system = NULL;
    const char *user = (const char *)data;
    size_t ulen = size;
    if (nul) {
        size_t slen = (size_t)(nul - (const char *)data);
        system = malloc(slen + 1);
        if (!system) return 0;
        memcpy(system, data, slen);
        system[slen] = '\0';
        user = nul + 1;
        ulen = size - slen - 1;
    }
    /* The server passes no NUL (a body with one is a 400). */
    if (memchr(user, 0, ulen)) {
        free(system);
        return 0;
    }
    prompt p;
    char why[256];
    why[0] = '\0';
    if (prompt_parse(system, user, ulen, &p, why, sizeof why) != 0) {
        if (!why[0] || !memchr(why, 0, sizeof why)) abort();
    } else {
        if (!p.client || !p.target[0] || p.format < PROMPT_TEXT || p.format > PROMPT_KISS_LINES)
            abort();
        if (p.format == PROMPT_TEXT && p.n != 1) abort();
        for (size_t i = 0; i < p.n; i++)
            if (!p.texts[i] || strlen(p.texts[i]) != p.lens[i] || p.lens[i] > ulen) abort();
        fy_buf b = {0};
        prompt_answer_open(&p, &b);
        for (size_t i = 0; i < p.n; i++)
            prompt_answer_item(&p, i, p.texts[i], p.lens[i], i % 2 ? "" : "en", &b);
        prompt_answer_close(&p, &b);
        fy_buf_free(&b);
        prompt_free(&p);
    }
    free(system);
    return 0;
}
