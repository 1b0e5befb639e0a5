/* test_backend_cpu.c - the cpu backend's output layer over shortlists:
 * each row's logits of a batched step are bit-identical to the same
 * sentence's alone (one row), whether the step scored its rows over the
 * union of their lists or one row at a time (backend_cpu.c score_listed:
 * the union from 8 rows when rows x union <= 3 x the lists' total).
 * Overlapping lists go one row at a time at 3 rows and take the union at 8
 * and 12 (through the AVX-512 panel product); disjoint ones go one row at
 * a time at 3, 8 and 12. On int8 micro models with uniform and with
 * trained-like weights (the latter on the VNNI product where the CPU has
 * it), on every kernel path the CPU supports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/config.h"
#include "model/marian.h"
#include "model/synth.h"
#include "nn/backend.h"
#include "nn/cpu.h"
#include "../check.h"

enum { D = 64, DFFN = 128, LAYERS = 2, HEADS = 8, V = 256, MAXR = 12, STEPS = 3 };

/* Slot s's columns: overlapping lists (a shared half of ids 0 .. 127
 * and 16 ids of its own) or disjoint ones (ids s, s + 12, ...), ascending. */
static int columns(int s, int overlap, int32_t *cols)
{
    int n = 0;
    for (int id = 0; id < V; id++) {
        int take = overlap ? (id < 128 && id % 2 == 0) || (id >= 128 && (id - 128) % MAXR == s)
                           : id % MAXR == s;
        if (take) cols[n++] = id;
    }
    return n;
}

/* Source ids of sentence s (length 3 + s % 4, EOS 0 last). */
static int sentence(int s, int32_t *ids)
{
    int len = 3 + s % 4;
    for (int i = 0; i < len - 1; i++) ids[i] = 2 + (s * 7 + i * 13) % (V - 2);
    ids[len - 1] = 0;
    return len;
}

/* Runs STEPS greedy-like steps (fixed previous tokens) for sentences
 * first .. first + rows - 1 and keeps every row's logits of the last step
 * in out[row][V] and their counts in nout[row]. */
static int run(fy_nn_net *net, int first, int rows, int overlap, float (*out)[V], int *nout)
{
    fy_error err = {0};
    fy_nn_run *r = fy_nn_cpu.run_new(net, 256, MAXR, &err);
    if (!r) return -1;
    int32_t ids[256], cols[V], last[MAXR];
    int len[MAXR], slot[MAXR], ntok = 0;
    for (int i = 0; i < rows; i++) {
        len[i] = sentence(first + i, ids + ntok);
        ntok += len[i];
        slot[i] = i;
    }
    int rc = fy_nn_cpu.encode(r, ids, len, rows, &err);
    for (int i = 0; rc == 0 && i < rows; i++) {
        int n = columns(first + i, overlap, cols);
        rc = fy_nn_cpu.set_columns(r, i, cols, n, &err);
    }
    if (rc == 0) rc = fy_nn_cpu.rows_begin(r, slot, rows, &err);
    fy_nn_pick pick[MAXR];
    for (int step = 0; rc == 0 && step < STEPS; step++) {
        for (int i = 0; i < rows; i++) last[i] = step == 0 ? -1 : 2 + (first + i + step) % 50;
        fy_nn_step st = {.rows = rows, .step = step, .last = last, .pick = pick};
        rc = fy_nn_cpu.step(r, &st, &err);
    }
    for (int i = 0; rc == 0 && i < rows; i++) rc = fy_nn_cpu.logits(r, i, out[i], &nout[i], &err);
    if (rc) printf("backend: %s\n", err.msg);
    fy_nn_cpu.run_free(r);
    return rc;
}

static void test_model(const char *path, const char *name)
{
    fy_error err = {0};
    fy_marian *m = fy_marian_open(path, &err);
    fy_model_config cfg;
    if (!m || fy_model_config_read(m, &cfg, &err)) {
        check(0, "micro model opens (%s)", err.msg);
        fy_marian_free(m);
        return;
    }
    fy_nn_spec spec = {.model = m,
                       .cfg = &cfg,
                       .src_vocab = V,
                       .trg_vocab = V,
                       .trg_unk = 1,
                       .max_src_len = 64,
                       .max_steps = 64};
    static float batch[MAXR][V], alone[1][V];
    for (int isa = FY_ISA_REF; isa <= FY_ISA_AVX512VNNI; isa++) {
        if (fy_cpu_force_isa((fy_isa)isa)) continue;
        fy_nn_net *net = fy_nn_cpu.net_new(fy_nn_cpu_device(), &spec, &err);
        if (!net) {
            check(0, "net builds (%s)", err.msg);
            continue;
        }
        for (int overlap = 0; overlap < 2; overlap++) {
            static const int nrows[] = {3, 8, MAXR};
            for (int t = 0; t < 3; t++) {
                int rows = nrows[t];
                int nb[MAXR], na, same = 1;
                if (run(net, 0, rows, overlap, batch, nb)) same = 0;
                for (int i = 0; same && i < rows; i++) {
                    same = run(net, i, 1, overlap, alone, &na) == 0 && na == nb[i] &&
                           !memcmp(alone[0], batch[i], (size_t)na * sizeof(float));
                }
                char what[160];
                snprintf(what, sizeof what, "%s, %s, %s lists, %d rows", name,
                         fy_isa_name((fy_isa)isa), overlap ? "overlapping (union)" : "disjoint",
                         rows);
                check(same, "each row's logits in a batch == alone (%s)", what);
            }
        }
        fy_nn_cpu.net_free(net);
    }
    fy_marian_free(m);
}

int main(void)
{
    fy_isa auto_isa = fy_cpu_isa();
    for (int t = 0; t < 2; t++) {
        char path[] = "/tmp/fy-test-backend-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0) return 1;
        close(fd);
        fy_error err = {0};
        fy_synth_options so = {.dim_emb = D,
                               .dim_ffn = DFFN,
                               .enc_depth = LAYERS,
                               .dec_depth = LAYERS,
                               .heads = HEADS,
                               .src_vocab_size = V,
                               .trg_vocab_size = V,
                               .int8 = 1,
                               .seed = 3,
                               .emb_scale = 20.0f,
                               .weights = t ? FY_SYNTH_WEIGHTS_TRAINED : FY_SYNTH_WEIGHTS_UNIFORM};
        if (fy_synth_write_model(path, &so, &err) < 0) {
            printf("synth: %s\n", err.msg);
            unlink(path);
            return 1;
        }
        test_model(path, t ? "trained weights" : "uniform weights");
        unlink(path);
    }
    fy_cpu_force_isa(auto_isa);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
