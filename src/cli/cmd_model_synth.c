/* cmd_model_synth.c - `fanyi model synth`: a synthetic model directory.
 *
 * Writes model.<name>.bin (float32) or model.<name>.intgemm.alphas.bin
 * (int8), optionally lex.50.50.<name>.s2t.bin, and a SentencePiece vocab:
 * vocab.<name>.spm, or srcvocab/trgvocab.<name>.spm with --separate-vocab.
 * Vocabularies are either copied from --vocab/--src-vocab/--trg-vocab
 * (tests train once and reuse) or trained here with Debian's spm_train on a
 * deterministic pseudo-random corpus (Chinese-like and English-like words
 * drawn from the seed) plus the .txt files of tests/data/text and the
 * .zh/.en files of ../shared/data/wmt when they exist. The model's vocabulary sizes are the vocab
 * files' sizes.
 */
#include <errno.h>
#include <glob.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "model/synth.h"
#include "util/error.h"
#include "util/lang.h"
#include "util/mapfile.h"

#define CMD "model synth"

extern char **environ;

static void usage(FILE *out)
{
    fprintf(out, "usage: fanyi model synth --preset P --seed N --out DIR\n"
                 "                         [--int8] [--shortlist] [--separate-vocab]\n"
                 "                         [--vocab FILE | --src-vocab FILE --trg-vocab FILE]\n"
                 "                         [--name LANGS] [--corpus-lines N] [--output-scales L]\n"
                 "                         [--weights uniform|trained]\n"
                 "                         [--shortlist-ids uniform|zipf]\n"
                 "\n"
                 "Writes a model with the real Firefox Translations layout and random weights.\n"
                 "  --preset P        an architecture: tiny (d256 ffn1536 6/2), base (d512\n"
                 "                    ffn2048 6/2), base-memory (d384 ffn1536 6/4); or one of\n"
                 "                    Mozilla's models, with its precision (int8), vocabulary\n"
                 "                    layout and sizes, file names and file size:\n"
                 "                    firefox-zh-en (base, one 64000-piece vocab.zhen.spm),\n"
                 "                    firefox-en-zh (base-memory, srcvocab.enzh.spm English +\n"
                 "                    trgvocab.enzh.spm Chinese, 32000 pieces each); 8 heads\n"
                 "  --seed N          weights, shortlist and corpus seed\n"
                 "  --out DIR         output directory (created if missing)\n"
                 "  --int8            intgemm8 weights with activation scales (int8shiftAlphaAll)\n"
                 "  --shortlist       also write lex.50.50.LANGS.s2t.bin\n"
                 "  --separate-vocab  encoder_Wemb/decoder_Wemb with srcvocab/trgvocab files\n"
                 "  --vocab FILE      reuse a trained .spm instead of training (shared vocab)\n"
                 "  --src-vocab F, --trg-vocab F   the same for separate vocabularies\n"
                 "  --name LANGS      file name infix (default zhen, or the preset's); it also\n"
                 "                    names the corpus languages (deen: German + English)\n"
                 "  --corpus-lines N  lines per language in the generated corpus (default 20000)\n"
                 "  --output-scales L int8: the output layer's activation scales to write, a\n"
                 "                    comma list of none (none_QuantMultA) and wemb\n"
                 "                    ([decoder_]Wemb_QuantMultA), each optionally =FACTOR on its\n"
                 "                    value (default: those the real models have)\n"
                 "  --weights D       weight matrices and embeddings: uniform (Glorot-uniform,\n"
                 "                    the default) or trained (near-Gaussian, same variance, one\n"
                 "                    value in 2048 an outlier of 4-8 sigma, as trained weights\n"
                 "                    look: few int8 pairs can saturate int16)\n"
                 "  --shortlist-ids D the shortlist's target ids past the 50 frequent ones:\n"
                 "                    uniform (the default) or zipf (probability 1/rank, as a\n"
                 "                    trained lexicon lists mostly frequent pieces, so that a\n"
                 "                    batch's lists overlap as real ones do)\n");
}

/* ------------------------------------------------------------ corpus */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Zipf-like rank in [0, n): dense head, long tail (so spm sees both frequent
 * whole words and many rare substrings). */
static int zipf(uint64_t *s, int n)
{
    double u = (double)(rng_next(s) >> 11) / 9007199254740992.0;
    int r = (int)((double)n * u * u * u);
    return r < n ? r : n - 1;
}

/* A Latin-script word from syllable tables; German (de) adds its letters
 * and longer compounds, so its vocabulary is not the English one. */
static void latin_word(uint64_t *s, int de, char *w, size_t cap)
{
    static const char *on[] = {"b",  "c",  "d",  "f",  "g",  "h",  "j",  "k",  "l",  "m",
                               "n",  "p",  "r",  "s",  "t",  "v",  "w",  "y",  "z",  "bl",
                               "br", "ch", "cl", "cr", "dr", "fl", "fr", "gl", "gr", "pl",
                               "pr", "sh", "sk", "sl", "sp", "st", "th", "tr", "wh", ""};
    static const char *nu[] = {"a", "e", "i", "o", "u", "ai", "ea", "ee", "oo", "ou", "ie", "y"};
    static const char *co[] = {"", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck"};
    static const char *de_on[] = {"sch", "z", "pf", "kn", "w", "ge", "st", "sp", "b", "d", "f",
                                  "g",   "h", "k",  "l",  "m", "n",  "r",  "s",  "t", "v", ""};
    static const char *de_nu[] = {"a", "e", "i", "o", "u", "ä", "ö", "ü", "ei", "au", "eu", "ie"};
    static const char *de_co[] = {"", "", "n", "r", "s", "t", "ß", "ch", "ng", "tz", "ck", "lt"};
    size_t k = 0;
    int syl = 1 + (int)(rng_next(s) % (de ? 5 : 4));
    w[0] = '\0';
    for (int i = 0; i < syl; i++) {
        if (de)
            k += (size_t)snprintf(w + k, cap - k, "%s%s%s", de_on[rng_next(s) % 22],
                                  de_nu[rng_next(s) % 12], de_co[rng_next(s) % 12]);
        else
            k += (size_t)snprintf(w + k, cap - k, "%s%s%s", on[rng_next(s) % 40],
                                  nu[rng_next(s) % 12], co[rng_next(s) % 13]);
        if (k >= cap) break;
    }
}

static size_t put_utf8(char *p, uint32_t c)
{
    p[0] = (char)(0xE0 | (c >> 12));
    p[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    p[2] = (char)(0x80 | (c & 0x3F));
    return 3;
}

static void zh_word(uint64_t *s, char *w)
{
    size_t k = 0;
    int n = 1 + (int)(rng_next(s) % 3);
    for (int i = 0; i < n; i++) k += put_utf8(w + k, 0x4E00 + (uint32_t)zipf(s, 4000));
    w[k] = '\0';
}

static int is_han_lang(const char *lang)
{
    return fy_lang_is_cjk(lang);
}

/* A seed per language, so that each gets its own lexicon. */
static uint64_t lang_seed(uint64_t seed, const char *lang)
{
    uint64_t h = 0;
    for (const char *p = lang; *p; p++) h = h << 8 | (uint8_t)*p;
    return seed ^ h;
}

/* Lexicons of word types, then lines of Zipf-drawn words. */
static int write_lines(FILE *f, uint64_t seed, const char *lang, int lines)
{
    enum { TYPES = 60000, WMAX = 48 };
    int zh = is_han_lang(lang), de = !strcmp(lang, "de");
    char(*lex)[WMAX] = malloc((size_t)TYPES * WMAX);
    if (!lex) return FY_ENOMEM;
    uint64_t s = lang_seed(seed, lang);
    for (int i = 0; i < TYPES; i++) {
        if (zh)
            zh_word(&s, lex[i]);
        else
            latin_word(&s, de, lex[i], WMAX);
    }
    for (int l = 0; l < lines; l++) {
        int n = 6 + (int)(rng_next(&s) % 20);
        for (int i = 0; i < n; i++) {
            const char *w = lex[zipf(&s, TYPES)];
            if (zh)
                fputs(i && rng_next(&s) % 9 == 0 ? "，" : "", f);
            else if (i)
                fputc(' ', f);
            fputs(w, f);
        }
        fputs(zh ? "。\n" : ".\n", f);
    }
    free(lex);
    return ferror(f) ? FY_EIO : 0;
}

/* 1 when the line holds a CJK ideograph (U+3400..U+9FFF, 3-byte UTF-8). */
static int has_han(const char *line)
{
    for (const unsigned char *p = (const unsigned char *)line; *p; p++)
        if (*p >= 0xE3 && *p <= 0xE9 && p[1] >= 0x80) {
            unsigned c = (unsigned)(*p & 0x0F) << 12 | (unsigned)(p[1] & 0x3F) << 6;
            if (c >= 0x3400 && c <= 0x9FFF) return 1;
        }
    return 0;
}

/* Appends every file matching pattern (sorted by glob) to f; without_han:
 * only the lines without Chinese (a Latin-script vocabulary's corpus). */
static void append_glob(FILE *f, const char *pattern, int without_han)
{
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) return;
    char line[65536];
    for (size_t i = 0; i < g.gl_pathc; i++) {
        FILE *in = fopen(g.gl_pathv[i], "rb");
        if (!in) continue;
        while (fgets(line, sizeof line, in))
            if (!without_han || !has_han(line)) fputs(line, f);
        fclose(in);
    }
    globfree(&g);
}

/* The corpus for a vocabulary of the languages langs[0..nlangs): generated
 * lines per language, the WMT test sets of those languages under
 * $FANYI_SHARED_DIR/data/wmt, and the project's tests/data/text files (only
 * their lines without Chinese when no language is written in Han). */
static int write_corpus(const char *path, const char *const *langs, int nlangs, uint64_t seed,
                        int lines)
{
    FILE *f = fopen(path, "wb");
    if (!f) return FY_EIO;
    int rc = 0, han = 0;
    const char *src = getenv("FANYI_SOURCE_DIR");
    const char *shared = getenv("FANYI_SHARED_DIR");
    char pat[4096];
    for (int i = 0; i < nlangs && !rc; i++) {
        han |= is_han_lang(langs[i]);
        rc = write_lines(f, seed, langs[i], lines);
        snprintf(pat, sizeof pat, "%s/data/wmt/*.%s", shared ? shared : "../shared", langs[i]);
        append_glob(f, pat, 0);
    }
    snprintf(pat, sizeof pat, "%s/tests/data/text/*.txt", src ? src : ".");
    append_glob(f, pat, !han);
    if (fclose(f) != 0 || rc) return rc ? rc : FY_EIO;
    return 0;
}

/* ------------------------------------------------------------ vocab */

/* Number of pieces in a SentencePiece ModelProto: the count of top-level
 * field 1 (repeated SentencePiece, wire type 2). -1 if malformed. */
static int spm_piece_count(const uint8_t *p, size_t n)
{
    size_t i = 0;
    int count = 0;
    while (i < n) {
        uint64_t key = 0, len = 0;
        for (int sh = 0; i < n && sh < 64; sh += 7) {
            key |= (uint64_t)(p[i] & 0x7F) << sh;
            if (!(p[i++] & 0x80)) goto key_done;
        }
        return -1;
    key_done:
        if ((key & 7) == 0) { /* varint */
            while (i < n && (p[i] & 0x80)) i++;
            i++;
            continue;
        }
        if ((key & 7) == 5) {
            i += 4;
            continue;
        }
        if ((key & 7) == 1) {
            i += 8;
            continue;
        }
        if ((key & 7) != 2) return -1;
        for (int sh = 0; i < n && sh < 64; sh += 7) {
            len |= (uint64_t)(p[i] & 0x7F) << sh;
            if (!(p[i++] & 0x80)) goto len_done;
        }
        return -1;
    len_done:
        if (len > n - i) return -1;
        if (key >> 3 == 1) count++;
        i += (size_t)len;
    }
    return i == n ? count : -1;
}

static int vocab_size(const char *path, int *out)
{
    fy_mapfile m;
    fy_error err = {0};
    if (fy_mapfile_open(&m, path, &err)) {
        fprintf(stderr, "fanyi model synth: %s\n", err.msg);
        return -1;
    }
    int n = spm_piece_count(m.data, m.size);
    fy_mapfile_close(&m);
    if (n < 8) {
        fprintf(stderr, "fanyi model synth: %s: not a SentencePiece model\n", path);
        return -1;
    }
    *out = n;
    return 0;
}

static int copy_file(const char *from, const char *to)
{
    fy_mapfile m;
    fy_error err = {0};
    int rc = fy_mapfile_open(&m, from, &err);
    if (!rc) rc = fy_write_file_atomic(to, m.data ? (const void *)m.data : "", m.size, &err);
    fy_mapfile_close(&m);
    if (rc) fprintf(stderr, "fanyi model synth: %s\n", err.msg);
    return rc;
}

/* Runs spm_train in work (a directory of its own) on work/corpus.txt,
 * writing work/vocab.model. It runs there with relative paths because the
 * model records its --input and --model_prefix: so the same corpus gives
 * the same bytes wherever and whenever it is trained. 0 or -1. */
static int run_spm_train(const char *work, int pieces, uint64_t seed, cli_progress *pg)
{
    char a_size[64], a_seed[64];
    snprintf(a_size, sizeof a_size, "--vocab_size=%d", pieces);
    snprintf(a_seed, sizeof a_seed, "--random_seed=%u", (unsigned)(seed & 0x7fffffff));
    /* Marian's conventions: </s> = 0, <unk> = 1, no <s>, no padding id. */
    char *argv[] = {"spm_train",
                    "--input=corpus.txt",
                    "--model_prefix=vocab",
                    a_size,
                    "--model_type=unigram",
                    "--byte_fallback=true",
                    "--normalization_rule_name=nmt_nfkc",
                    "--character_coverage=0.9995",
                    "--bos_id=-1",
                    "--eos_id=0",
                    "--unk_id=1",
                    "--pad_id=-1",
                    "--num_threads=2",
                    "--minloglevel=2",
                    a_seed,
                    NULL};
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status = -1;
    int rc = posix_spawn_file_actions_init(&fa);
    if (!rc) rc = posix_spawn_file_actions_addchdir_np(&fa, work);
    if (!rc) rc = posix_spawnp(&pid, "spm_train", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    /* It takes seconds to a minute: a terminal sees the time go by. */
    while (rc == 0) {
        pid_t got = waitpid(pid, &status, pg->on ? WNOHANG : 0);
        if (got == pid) break;
        if (got < 0 && errno != EINTR) {
            status = -1;
            break;
        }
        cli_progress_draw(pg, 0,
                          "fanyi model synth: training a %d-piece vocabulary (spm_train), %.0f s",
                          pieces, cli_progress_elapsed(pg));
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    cli_progress_done(pg);
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "fanyi model synth: spm_train failed (%s)\n",
                rc ? strerror(rc) : "see its messages above");
        return -1;
    }
    return 0;
}

/* Trains a pieces-piece vocabulary with spm_train on a corpus of the
 * languages langs[0..nlangs); the model lands at dst (atomically renamed). */
static int train_vocab(const char *dir, const char *dst, const char *const *langs, int nlangs,
                       int pieces, uint64_t seed, int lines, cli_progress *pg)
{
    char work[4096], corpus[4200], model[4200], vocab[4200], tag[FY_PAIR_MAX];
    snprintf(tag, sizeof tag, "%s%s", langs[0], nlangs > 1 ? langs[1] : "");
    snprintf(work, sizeof work, "%s/.synth-vocab-%s-%ld", dir, tag, (long)getpid());
    snprintf(corpus, sizeof corpus, "%s/corpus.txt", work);
    snprintf(model, sizeof model, "%s/vocab.model", work);
    snprintf(vocab, sizeof vocab, "%s/vocab.vocab", work);
    if (mkdir(work, 0777) != 0) {
        fprintf(stderr, "fanyi model synth: %s: cannot create: %s\n", work, strerror(errno));
        return -1;
    }
    int rc = -1;
    cli_progress_draw(pg, 1, "fanyi model synth: writing a training corpus (%d lines a language)",
                      lines);
    if (write_corpus(corpus, langs, nlangs, seed, lines)) {
        cli_progress_done(pg);
        fprintf(stderr, "fanyi model synth: %s: cannot write the training corpus\n", corpus);
    } else if (run_spm_train(work, pieces, seed, pg) == 0) {
        if (rename(model, dst) == 0)
            rc = 0;
        else
            fprintf(stderr, "fanyi model synth: %s: cannot rename: %s\n", dst, strerror(errno));
    }
    unlink(corpus);
    unlink(vocab);
    unlink(model);
    rmdir(work);
    return rc;
}

/* ------------------------------------------------------------ command */

/* mkdir -p: creates dir and any missing parents. */
static int make_dirs(const char *dir)
{
    char p[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof p) return -1;
    memcpy(p, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
        p[i] = c;
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

typedef struct args {
    const char *preset, *out, *name, *vocab, *src_vocab, *trg_vocab;
    int int8, shortlist, separate, have_seed, have_lex;
    long seed, corpus_lines;
    unsigned out_scales; /* FY_SYNTH_SCALE_* bits, 0 = the real set */
    fy_synth_weights weights;
    fy_synth_lex lex;
    float none_factor, wemb_factor; /* 0 = 1 */
} args;

/* --output-scales LIST: comma-separated "none" and "wemb", each optionally
 * "=FACTOR" (a positive number multiplying its analytic value). */
static int parse_scales(const char *text, args *a)
{
    char buf[128];
    if (strlen(text) >= sizeof buf) return cli_usage_error(CMD, "--output-scales: too long");
    memcpy(buf, text, strlen(text) + 1);
    a->out_scales = 0;
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        double f = 1.0;
        if (eq) {
            *eq = '\0';
            if (cli_parse_double(CMD, "--output-scales", eq + 1, 0.0, 1e6, &f)) return 2;
        }
        unsigned bit = !strcmp(item, "none")   ? FY_SYNTH_SCALE_NONE
                       : !strcmp(item, "wemb") ? FY_SYNTH_SCALE_WEMB
                                               : 0;
        if (!bit || (a->out_scales & bit))
            return cli_usage_error(CMD, "--output-scales: '%s' is not none or wemb (once each)",
                                   item);
        a->out_scales |= bit;
        *(bit == FY_SYNTH_SCALE_NONE ? &a->none_factor : &a->wemb_factor) = (float)f;
    }
    if (!a->out_scales) return cli_usage_error(CMD, "--output-scales: empty list");
    return 0;
}

static int parse_args(int argc, char **argv, args *a)
{
    enum {
        O_SEP = 256,
        O_INT8,
        O_SL,
        O_VOCAB,
        O_SRC,
        O_TRG,
        O_NAME,
        O_LINES,
        O_SCALES,
        O_WEIGHTS,
        O_LEX
    };
    static const struct option longopts[] = {{"preset", required_argument, NULL, 'p'},
                                             {"seed", required_argument, NULL, 's'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"separate-vocab", no_argument, NULL, O_SEP},
                                             {"int8", no_argument, NULL, O_INT8},
                                             {"shortlist", no_argument, NULL, O_SL},
                                             {"vocab", required_argument, NULL, O_VOCAB},
                                             {"src-vocab", required_argument, NULL, O_SRC},
                                             {"trg-vocab", required_argument, NULL, O_TRG},
                                             {"name", required_argument, NULL, O_NAME},
                                             {"corpus-lines", required_argument, NULL, O_LINES},
                                             {"output-scales", required_argument, NULL, O_SCALES},
                                             {"weights", required_argument, NULL, O_WEIGHTS},
                                             {"shortlist-ids", required_argument, NULL, O_LEX},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->corpus_lines = 20000;
    int c;
    while ((c = cli_getopt(argc, argv, CMD, "h", longopts)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return 0;
        case 'p':
            a->preset = optarg;
            break;
        case 'o':
            a->out = optarg;
            break;
        case 's':
            if (cli_parse_long(CMD, "--seed", optarg, 0, 2147483647L, &a->seed)) return 2;
            a->have_seed = 1;
            break;
        case O_SEP:
            a->separate = 1;
            break;
        case O_INT8:
            a->int8 = 1;
            break;
        case O_SL:
            a->shortlist = 1;
            break;
        case O_VOCAB:
            a->vocab = optarg;
            break;
        case O_SRC:
            a->src_vocab = optarg;
            break;
        case O_TRG:
            a->trg_vocab = optarg;
            break;
        case O_NAME:
            a->name = optarg;
            break;
        case O_LINES:
            if (cli_parse_long(CMD, "--corpus-lines", optarg, 1000, 10000000, &a->corpus_lines))
                return 2;
            break;
        case O_SCALES:
            if (parse_scales(optarg, a)) return 2;
            break;
        case O_WEIGHTS:
            if (fy_synth_weights_parse(optarg, &a->weights))
                return cli_usage_error(CMD, "--weights: '%s' is not uniform or trained", optarg);
            break;
        case O_LEX:
            if (fy_synth_lex_parse(optarg, &a->lex))
                return cli_usage_error(CMD, "--shortlist-ids: '%s' is not uniform or zipf", optarg);
            a->have_lex = 1;
            break;
        default:
            return 2;
        }
    }
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (!a->preset) return cli_usage_error(CMD, "--preset is required");
    if (!a->out) return cli_usage_error(CMD, "--out is required");
    if (!a->have_seed) return cli_usage_error(CMD, "--seed is required");
    if (a->name && (!a->name[0] || strchr(a->name, '/'))) return cli_usage_error(CMD, "bad --name");
    if (a->have_lex && !a->shortlist)
        return cli_usage_error(CMD, "--shortlist-ids needs --shortlist");
    if (!a->src_vocab != !a->trg_vocab)
        return cli_usage_error(CMD, "give both --src-vocab and --trg-vocab");
    return -1;
}

/* The vocabulary options against the layout (after apply_preset). */
static int check_vocab_options(const args *a)
{
    if (a->separate && a->vocab)
        return cli_usage_error(CMD, "--separate-vocab takes --src-vocab and --trg-vocab");
    if (!a->separate && (a->src_vocab || a->trg_vocab))
        return cli_usage_error(CMD, "--src-vocab/--trg-vocab need --separate-vocab");
    return 0;
}

/* The languages the vocabularies are trained on: from the file-name infix
 * ("enzh" = en + zh, "deen"), zh + en when it does not name two. */
static void corpus_langs(const char *name, char src[FY_LANG_MAX], char trg[FY_LANG_MAX])
{
    if (fy_lang_pair_from_infix(name, src, trg) != 0) {
        snprintf(src, FY_LANG_MAX, "zh");
        snprintf(trg, FY_LANG_MAX, "en");
    }
}

/* Puts the vocab file(s) in place (copied, or trained with the sizes in o)
 * and sets o's vocabulary sizes to theirs. */
static int make_vocabs(const args *a, fy_synth_options *o, cli_progress *pg)
{
    char src[4096], trg[4096], sl[FY_LANG_MAX], tl[FY_LANG_MAX];
    if (o->separate_vocab) {
        snprintf(src, sizeof src, "%s/srcvocab.%s.spm", a->out, a->name);
        snprintf(trg, sizeof trg, "%s/trgvocab.%s.spm", a->out, a->name);
    } else {
        snprintf(src, sizeof src, "%s/vocab.%s.spm", a->out, a->name);
        snprintf(trg, sizeof trg, "%s", src);
    }
    corpus_langs(a->name, sl, tl);
    const char *both[2] = {sl, tl}, *s1[1] = {sl}, *t1[1] = {tl};
    uint64_t seed = (uint64_t)a->seed;
    int lines = (int)a->corpus_lines;
    if (o->separate_vocab && a->src_vocab) {
        if (copy_file(a->src_vocab, src) || copy_file(a->trg_vocab, trg)) return -1;
    } else if (o->separate_vocab) {
        if (train_vocab(a->out, src, s1, 1, o->src_vocab_size, seed, lines, pg) ||
            train_vocab(a->out, trg, t1, 1, o->trg_vocab_size, seed, lines, pg))
            return -1;
    } else if (a->vocab) {
        if (copy_file(a->vocab, src)) return -1;
    } else if (train_vocab(a->out, src, both, 2, o->src_vocab_size, seed, lines, pg)) {
        return -1;
    }
    int ns, nt;
    if (vocab_size(src, &ns) || vocab_size(trg, &nt)) return -1;
    /* A real model's preset fixes its vocabulary sizes; the others take the files'. */
    if (fy_synth_preset_infix(a->preset) && (ns != o->src_vocab_size || nt != o->trg_vocab_size)) {
        fprintf(stderr,
                "fanyi model synth: preset %s needs vocabularies of %d and %d pieces, not %d "
                "and %d\n",
                a->preset, o->src_vocab_size, o->trg_vocab_size, ns, nt);
        return -1;
    }
    o->src_vocab_size = ns;
    o->trg_vocab_size = nt;
    return 0;
}

/* Applies what a real model's preset fixes (precision, vocabulary layout,
 * file names) to the options; refuses options that contradict it. */
static int apply_preset(args *a, const fy_synth_options *o)
{
    const char *infix = fy_synth_preset_infix(a->preset);
    if (!infix) return 0;
    if (a->separate && !o->separate_vocab)
        return cli_usage_error(CMD, "preset %s has a shared vocabulary (no --separate-vocab)",
                               a->preset);
    if (!o->separate_vocab && (a->src_vocab || a->trg_vocab))
        return cli_usage_error(CMD, "preset %s has a shared vocabulary: use --vocab", a->preset);
    if (o->separate_vocab && a->vocab)
        return cli_usage_error(CMD,
                               "preset %s has separate vocabularies: use --src-vocab and "
                               "--trg-vocab",
                               a->preset);
    a->separate = o->separate_vocab;
    a->int8 = 1;
    if (!a->name) a->name = infix;
    return 0;
}

int cmd_model_synth(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    fy_synth_options o;
    fy_error err = {0};
    if (fy_synth_preset(a.preset, &o, &err)) return cli_usage_error(CMD, "%s", err.msg);
    if ((rc = apply_preset(&a, &o)) || (rc = check_vocab_options(&a))) return rc;
    if (!a.name) a.name = "zhen";
    if (make_dirs(a.out) != 0) {
        fprintf(stderr, "fanyi model synth: %s: cannot create: %s\n", a.out, strerror(errno));
        return 1;
    }
    o.seed = (uint64_t)a.seed;
    o.int8 = a.int8;
    o.separate_vocab = a.separate;
    o.out_scales = a.out_scales;
    o.none_scale_factor = a.none_factor;
    o.wemb_scale_factor = a.wemb_factor;
    o.weights = a.weights;
    cli_progress pg;
    cli_progress_start(&pg, 1);
    if (make_vocabs(&a, &o, &pg)) return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.%s%s.bin", a.out, a.name,
             a.int8 ? ".intgemm.alphas" : "");
    cli_progress_draw(&pg, 1, "fanyi model synth: writing %s", path);
    rc = fy_synth_write_model(path, &o, &err);
    if (!rc && a.shortlist) {
        snprintf(path, sizeof path, "%s/lex.50.50.%s.s2t.bin", a.out, a.name);
        cli_progress_draw(&pg, 1, "fanyi model synth: writing %s", path);
        rc = fy_synth_write_shortlist(path, o.src_vocab_size, o.trg_vocab_size, 50, 50, a.lex,
                                      o.seed, &err);
    }
    cli_progress_done(&pg);
    if (rc) {
        fprintf(stderr, "fanyi model synth: %s\n", err.msg);
        return 1;
    }
    return 0;
}
