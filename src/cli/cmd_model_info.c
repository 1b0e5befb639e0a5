/* cmd_model_info.c - `fanyi model info`: a model's architecture, read from its files.
 *
 * Nothing here is assumed: dimensions, depths, vocabulary sizes, tying,
 * quantisation and shortlist parameters all come from fy_model_inspect,
 * i.e. from the embedded YAML cross-checked against the tensors.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/discover.h"
#include "model/manifest.h"
#include "model/verify.h"
#include "util/path.h"

#define CMD "model info"
#define MIB (1024.0 * 1024.0)

static void usage(void)
{
    printf("usage: fanyi model info [DIR | --models ROOT] [--json]\n\n"
           "Shows the architecture of the model in DIR as read from its files: dimensions,\n"
           "layers, heads, vocabularies, quantisation, shortlist and file sizes. Without\n"
           "DIR: $FANYI_MODEL_DIR, else the zh-en model (or the only model) of the models\n"
           "directory: ROOT, else $FANYI_MODELS_DIR, else ~/.local/share/fanyi/models.\n\n"
           "  --models ROOT  the models directory to take the model from\n"
           "  --json         one JSON object instead of text\n\n"
           "Exit status: 0 shown, 1 the model cannot be loaded (reason on stderr), 2 bad usage.\n");
}

static const char *quantisation(const fy_model_info *in)
{
    if (!in->config.int8) return "float32";
    return in->quant_scales ? "int8 (intgemm8) with activation scales (alphas)" : "int8 (intgemm8)";
}

static const char *embeddings(const fy_model_config *c)
{
    if (c->tied_embeddings_all) return "tied (one Wemb for source, target and output)";
    if (c->tied_embeddings) return "target embedding tied to the output layer";
    return "untied";
}

static void print_text(const char *dir, const fy_model_info *in, const fy_manifest_model *known,
                       int synthetic)
{
    const fy_model_config *c = &in->config;
    const fy_model_files *f = &in->files;
    printf("directory     %s\n", dir);
    if (synthetic)
        printf("synthetic     yes: random weights from fanyi model synth (translations are "
               "gibberish)\n");
    else if (known)
        printf("manifest      %s %s (file names match)\n", known->name, known->version);
    printf("model         %s (%.1f MiB, %zu tensors)\n", fy_path_base(f->model),
           (double)in->model_bytes / MIB, in->tensors);
    printf("encoder       %d layers, %s\n", c->enc_depth, c->enc_cell);
    printf("decoder       %d layers, %s\n", c->dec_depth, c->dec_cell);
    printf("dimensions    emb %d, ffn %d (%s, depth %d enc / %d dec), heads %d\n", c->dim_emb,
           c->dim_ffn, c->ffn_activation, c->ffn_depth, c->dec_ffn_depth, c->heads);
    printf("embeddings    %s\n", embeddings(c));
    printf("quantisation  %s: %zu int8 + %zu float32 tensors, %zu scales\n", quantisation(in),
           in->int8_tensors, in->f32_tensors, in->quant_scales);
    if (in->shared_vocab)
        printf("vocabulary    %s, shared: %d pieces (%.1f MiB)\n", fy_path_base(f->src_vocab),
               in->src_pieces, (double)in->src_vocab_bytes / MIB);
    else
        printf("vocabulary    source %s: %d pieces (%.1f MiB), target %s: %d pieces (%.1f MiB)\n",
               fy_path_base(f->src_vocab), in->src_pieces, (double)in->src_vocab_bytes / MIB,
               fy_path_base(f->trg_vocab), in->trg_pieces, (double)in->trg_vocab_bytes / MIB);
    if (in->has_shortlist)
        printf("shortlist     %s: frequent %d, best %d, %d source ids (%.1f MiB)\n",
               fy_path_base(f->shortlist), in->sl_frequent, in->sl_best, in->sl_src_vocab,
               (double)in->shortlist_bytes / MIB);
    else
        printf("shortlist     none (decoding scores the whole vocabulary)\n");
}

static json_t *file_json(const char *path, uint64_t bytes)
{
    return json_pack("{s:s, s:I}", "name", fy_path_base(path), "bytes", (json_int_t)bytes);
}

static int print_json(const char *dir, const fy_model_info *in, const fy_manifest_model *known,
                      int synthetic)
{
    const fy_model_config *c = &in->config;
    const fy_model_files *f = &in->files;
    json_t *o = json_pack(
        "{s:s, s:o, s:{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:b, s:b, s:b}, "
        "s:{s:b, s:i, s:i, s:o, s:o}, s:{s:s, s:I, s:I, s:I}, s:o}",
        "directory", dir, "model", file_json(f->model, in->model_bytes), "architecture",
        "encoder_cell", c->enc_cell, "decoder_cell", c->dec_cell, "enc_depth", c->enc_depth,
        "dec_depth", c->dec_depth, "dim_emb", c->dim_emb, "dim_ffn", c->dim_ffn, "ffn_depth",
        c->ffn_depth, "heads", c->heads, "ffn_activation", c->ffn_activation, "tied_embeddings_all",
        c->tied_embeddings_all, "tied_embeddings", c->tied_embeddings, "output_bias",
        c->output_bias, "vocabulary", "shared", in->shared_vocab, "src_size", in->src_pieces,
        "trg_size", in->trg_pieces, "src_file", file_json(f->src_vocab, in->src_vocab_bytes),
        "trg_file", file_json(f->trg_vocab, in->trg_vocab_bytes), "quantisation", "type",
        c->int8 ? "intgemm8" : "float32", "int8_tensors", (json_int_t)in->int8_tensors,
        "float32_tensors", (json_int_t)in->f32_tensors, "activation_scales",
        (json_int_t)in->quant_scales, "shortlist",
        in->has_shortlist
            ? json_pack("{s:o, s:i, s:i, s:i}", "file",
                        file_json(f->shortlist, in->shortlist_bytes), "frequent", in->sl_frequent,
                        "best", in->sl_best, "src_ids", in->sl_src_vocab)
            : json_null());
    if (o) json_object_set_new(o, "synthetic", json_boolean(synthetic));
    if (o && known && !synthetic)
        json_object_set_new(
            o, "manifest", json_pack("{s:s, s:s}", "name", known->name, "version", known->version));
    char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
    json_decref(o);
    if (!text) {
        fprintf(stderr, "fanyi %s: cannot format JSON\n", CMD);
        return 1;
    }
    puts(text);
    free(text);
    return 0;
}

int cmd_model_info(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"models", required_argument, NULL, 'M'},
                                         {0}};
    const char *models = NULL;
    int json = 0, c;
    while ((c = cli_getopt(argc, argv, CMD, "hj", opts)) != -1) {
        switch (c) {
        case 'h':
            usage();
            return 0;
        case 'j':
            json = 1;
            break;
        case 'M':
            models = optarg;
            break;
        default:
            return 2;
        }
    }
    const char *dir_arg = optind < argc ? argv[optind++] : NULL;
    if (optind < argc) return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind]);
    if (dir_arg && models) return cli_usage_error(CMD, "DIR and --models exclude each other");
    char *dir = dir_arg ? strdup(dir_arg) : cli_default_model_dir(models);
    if (!dir) {
        fprintf(stderr, "fanyi %s: out of memory\n", CMD);
        return 1;
    }
    fy_error err = {0};
    fy_model_info in;
    int status = 1;
    if (fy_model_inspect(dir, &in, &err)) {
        fprintf(stderr, "fanyi %s: %s\n", CMD, err.msg);
    } else {
        fy_manifest *m = fy_manifest_builtin(NULL, &err);
        const fy_manifest_model *known = fy_model_identify(dir, m);
        int synthetic = cli_model_is_synthetic(dir);
        if (json) {
            status = print_json(dir, &in, known, synthetic);
        } else {
            print_text(dir, &in, known, synthetic);
            status = 0;
        }
        fy_manifest_free(m);
    }
    fy_model_info_free(&in);
    free(dir);
    return status;
}
