/* fuzz_spm_load.c - libFuzzer harness for the SentencePiece model parser.
 *
 * The input is a serialized ModelProto (vocab.*.spm). When it loads, the
 * handle is exercised the way the pipeline uses it: every id mapped to its
 * piece and back, a few fixed texts (Chinese, spaces, invalid UTF-8, NUL)
 * encoded, and the ids decoded again, so a model that passes the loader but
 * breaks an invariant the encoder relies on is caught too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/spm.h"

static const char *const texts[] = {
    "你好，世界。Hello world!", "  多个   空格  ", "\xff\xfe\xe4\xb8", "a\0b", "ＡＢＣ１２３😀", "",
};
static const size_t text_lens[] = {0, 0, 4, 3, 0, 0};

static void exercise(const fy_spm *spm)
{
    int n = fy_spm_vocab_size(spm);
    if (n <= 0) abort();
    int limit = n < 4096 ? n : 4096;
    for (int id = 0; id < limit; id++) {
        size_t len = 0;
        const char *p = fy_spm_id_to_piece(spm, id, &len);
        if (!p || strlen(p) > len) abort();
        int back = fy_spm_piece_to_id(spm, p, len);
        if (back < -1 || back >= n) abort();
    }
    if (fy_spm_id_to_piece(spm, n, NULL) != NULL || fy_spm_id_to_piece(spm, -1, NULL) != NULL)
        abort();
    int specials[] = {fy_spm_unk_id(spm), fy_spm_bos_id(spm), fy_spm_eos_id(spm),
                      fy_spm_pad_id(spm)};
    for (size_t i = 0; i < 4; i++)
        if (specials[i] < -1 || specials[i] >= n) abort();

    int32_t ids[256];
    char out[1024];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t len = text_lens[i] ? text_lens[i] : strlen(texts[i]);
        fy_error err = {0};
        long k = fy_spm_encode(spm, texts[i], len, ids, 256, &err);
        if (k < 0) continue;
        size_t m = k < 256 ? (size_t)k : 256;
        for (size_t j = 0; j < m; j++)
            if (ids[j] < 0 || ids[j] >= n) abort();
        fy_spm_decode(spm, ids, m, out, sizeof out, &err);
        fy_spm_encode_pieces(spm, texts[i], len, out, sizeof out, &err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fy_error err = {0};
    fy_spm *spm = fy_spm_load(data, size, "fuzz.spm", &err);
    if (!spm) {
        if (err.code >= 0 || err.msg[0] == 0) abort();
        return 0;
    }
    exercise(spm);
    fy_spm_free(spm);
    return 0;
}
