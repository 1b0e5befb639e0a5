/* gen_seeds.c - writes the tiny model and shortlist seeds of the fuzz corpora.
 *
 * Real fuzz seeds should be valid files, but the synthetic models the tests
 * use are megabytes; this writes the same layout (src/model/synth.h) at toy
 * sizes (d=8, one layer, 24-piece vocabulary), a few KB each, so the fuzzer
 * starts from inputs that pass every check. Run by hand when the formats
 * change, through tests/fuzz/make_corpus.sh (see docs/reliability.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "model/marian.h"
#include "model/synth.h"

/* Writes the YAML embedded in model file path to dir/name (fuzz_config seeds). */
static int dump_yaml(const char *path, const char *dir, const char *name)
{
    fy_error err = {0};
    char out[4096];
    fy_marian *m = fy_marian_open(path, &err);
    if (!m) {
        fprintf(stderr, "gen_seeds: %s\n", err.msg);
        return 1;
    }
    snprintf(out, sizeof out, "%s/%s", dir, name);
    FILE *f = fopen(out, "wb");
    int bad = !f || fputs(fy_marian_yaml(m), f) < 0;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) fprintf(stderr, "gen_seeds: cannot write %s\n", out);
    fy_marian_free(m);
    return bad;
}

static int model(const char *dir, const char *name, int int8, int separate)
{
    fy_synth_options o;
    fy_error err = {0};
    if (fy_synth_preset("tiny", &o, &err) != 0) goto fail;
    o.dim_emb = 8;
    o.dim_ffn = 16;
    o.enc_depth = 1;
    o.dec_depth = 1;
    o.heads = 2;
    o.src_vocab_size = 24;
    o.trg_vocab_size = 24;
    o.int8 = int8;
    o.separate_vocab = separate;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (fy_synth_write_model(path, &o, &err) != 0) goto fail;
    return 0;
fail:
    fprintf(stderr, "gen_seeds: %s\n", err.msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: gen_seeds MARIAN_DIR SHORTLIST_DIR CONFIG_DIR\n");
        return 2;
    }
    int bad = model(argv[1], "tiny-f32.bin", 0, 0) + model(argv[1], "tiny-int8.bin", 1, 0) +
              model(argv[1], "tiny-int8-sep.bin", 1, 1);
    char path[4096];
    snprintf(path, sizeof path, "%s/tiny-int8.bin", argv[1]);
    bad += dump_yaml(path, argv[3], "tiny-int8.yml");
    snprintf(path, sizeof path, "%s/tiny-int8-sep.bin", argv[1]);
    bad += dump_yaml(path, argv[3], "tiny-int8-sep.yml");
    fy_error err = {0};
    snprintf(path, sizeof path, "%s/lex-24x24.bin", argv[2]);
    if (fy_synth_write_shortlist(path, 24, 24, 4, 3, FY_SYNTH_LEX_UNIFORM, 1, &err) != 0) {
        fprintf(stderr, "gen_seeds: %s\n", err.msg);
        bad++;
    }
    snprintf(path, sizeof path, "%s/lex-40x16.bin", argv[2]);
    if (fy_synth_write_shortlist(path, 40, 16, 0, 2, FY_SYNTH_LEX_UNIFORM, 2, &err) != 0) {
        fprintf(stderr, "gen_seeds: %s\n", err.msg);
        bad++;
    }
    return bad ? 1 : 0;
}
