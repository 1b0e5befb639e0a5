/* test_vk_engine.c - the vulkan backend against the cpu backend on whole
 * models (the synth_models fixture's directories, given as arguments):
 *
 *   - the network, step by step: the same sentences encoded on both, each
 *     slot's shortlist as its columns, rows begun, then decoder steps whose
 *     every row's logits (all of its columns) are compared bit for bit, as
 *     are the greedy picks (id, value, gap) and the beam candidates (path +
 *     logit, k of them) of each row; rows are kept in compaction order and
 *     in a shuffled order (the beam's reordering), so that the SSRU cells
 *     follow their rows on both;
 *   - whole translations through the translator: greedy strings and each
 *     sentence's smallest gap, and beam 4's n-best lists (every text and
 *     score), on a CPU worker and a Vulkan worker.
 *
 * FANYI_VK_LINES (default 8) sentences per model from
 * tests/data/text/<source>_conformance.txt. Skipped (77) without a
 * Vulkan device; CI installs lavapipe, where it runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/bundle.h"
#include "nn/backend.h"
#include "text/spm.h"
#include "translate/translator.h"
#include "../check.h"

#define SKIP      77
#define MAX_LINES 64
#define ROWS      8
#define STEPS     12
#define K         5

typedef struct lines {
    char *v[MAX_LINES];
    int n;
} lines;

static void read_lines(const char *lang, int max, lines *out)
{
    char path[1024];
    const char *src = getenv("FANYI_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/data/text/%s_conformance.txt", src ? src : ".",
             !strncmp(lang, "zh", 2) ? "zh" : "en");
    FILE *f = fopen(path, "r");
    char buf[4096];
    out->n = 0;
    while (f && out->n < max && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        if (buf[0] && strlen(buf) < 300) out->v[out->n++] = strdup(buf);
    }
    if (f) fclose(f);
}

/* ---- the network, step by step ---------------------------------------- */

typedef struct side {
    const fy_nn_backend *be;
    fy_nn_net *net;
    fy_nn_run *run;
} side;

typedef struct netcase {
    const char *name;
    fy_bundle *b;
    fy_nn_spec spec;
    side s[2]; /* cpu, vulkan */
    int32_t ids[ROWS * 128];
    int len[ROWS], ns;
} netcase;

static int side_open(netcase *c, side *s, fy_nn_dev *dev, fy_error *err)
{
    s->be = dev->be;
    if (!(s->net = s->be->net_new(dev, &c->spec, err))) return err->code;
    if (!(s->run = s->be->run_new(s->net, 2048, ROWS, err))) return err->code;
    return 0;
}

static void side_close(side *s)
{
    if (s->run) s->be->run_free(s->run);
    if (s->net) s->be->net_free(s->net);
}

/* ids (+ EOS) of each line, at most ROWS, each under 128 tokens. */
static void encode_lines(netcase *c, const lines *in)
{
    int at = 0;
    c->ns = 0;
    for (int i = 0; i < in->n && c->ns < ROWS; i++) {
        long n = fy_spm_encode(c->b->src_spm, in->v[i], strlen(in->v[i]), c->ids + at, 120, NULL);
        if (n < 0 || n > 120) continue;
        c->ids[at + n] = c->b->src_eos;
        c->len[c->ns++] = (int)n + 1;
        at += (int)n + 1;
    }
}

/* Each slot's shortlist (as the translator makes it) on both sides. */
static int set_columns(netcase *c, fy_error *err)
{
    if (!c->b->shortlist) return 0;
    int V = c->spec.trg_vocab, at = 0, rc = 0;
    int32_t *sel = malloc((size_t)V * sizeof *sel), *cols = malloc((size_t)V * sizeof *cols);
    uint8_t *seen = malloc(fy_shortlist_scratch_bytes(c->b->shortlist, V));
    uint8_t *bits = malloc((size_t)V / 8 + 1);
    for (int s = 0; s < c->ns && rc >= 0; at += c->len[s], s++) {
        long n = fy_shortlist_select_ex(c->b->shortlist, c->ids + at, (size_t)c->len[s], V,
                                        c->b->shared_vocab, sel, (size_t)V, seen, err);
        if (n < 0) {
            rc = (int)n;
            break;
        }
        memset(bits, 0, (size_t)V / 8 + 1);
        for (long i = 0; i < n; i++) bits[sel[i] >> 3] |= (uint8_t)(1u << (sel[i] & 7));
        int nc = 0;
        for (int id = 0; id < V; id++)
            if (bits[id >> 3] & (1u << (id & 7))) cols[nc++] = id;
        for (int k = 0; k < 2 && rc >= 0; k++)
            rc = c->s[k].be->set_columns(c->s[k].run, s, cols, nc, err);
    }
    free(sel);
    free(cols);
    free(seen);
    free(bits);
    return rc;
}

/* Every row's logits equal, bit for bit. */
static int same_logits(netcase *c, int rows, float *a, float *b)
{
    fy_error err = {0};
    for (int r = 0; r < rows; r++) {
        int na = 0, nb = 0;
        if (c->s[0].be->logits(c->s[0].run, r, a, &na, &err) < 0 ||
            c->s[1].be->logits(c->s[1].run, r, b, &nb, &err) < 0 || na != nb ||
            memcmp(a, b, (size_t)na * sizeof *a)) {
            for (int i = 0; na == nb && i < na; i++)
                if (memcmp(&a[i], &b[i], sizeof *a)) {
                    printf("  row %d column %d: %a != %a\n", r, i, (double)a[i], (double)b[i]);
                    break;
                }
            return 0;
        }
    }
    return 1;
}

/* One greedy step and one beam-candidate step from the same state: picks
 * and candidates equal on both sides. Fills last[] with the picks. */
static void step_both(netcase *c, int rows, int step, int32_t *last, float *la, float *lb)
{
    fy_nn_pick pick[2][ROWS];
    float path[ROWS], tv[2][ROWS * K];
    int32_t ti[2][ROWS * K];
    for (int r = 0; r < rows; r++) path[r] = -0.5f * (float)r;
    fy_error err = {0};
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        fy_nn_step st = {.rows = rows, .step = step, .last = last, .pick = pick[k]};
        ok &= c->s[k].be->step(c->s[k].run, &st, &err) == 0;
    }
    check(ok, "%s: %s", c->name, err.msg[0] ? err.msg : "greedy step runs on both");
    check(same_logits(c, rows, la, lb), "%s: logits identical", c->name);
    check(!memcmp(pick[0], pick[1], (size_t)rows * sizeof pick[0][0]),
          "%s: greedy picks identical (id, value, gap)", c->name);
    for (int k = 0; k < 2; k++) {
        /* The same step again, as a beam step would run it. The cells moved
         * one step: compare what both say, not what greedy said. */
        fy_nn_step st = {.rows = rows,
                         .step = step,
                         .last = last,
                         .k = K,
                         .path = path,
                         .topv = tv[k],
                         .topi = ti[k]};
        ok &= c->s[k].be->step(c->s[k].run, &st, &err) == 0;
    }
    check(ok && !memcmp(tv[0], tv[1], sizeof tv[0]) && !memcmp(ti[0], ti[1], sizeof ti[0]),
          "%s: beam candidates identical (path + logit, order, ids)", c->name);
    for (int r = 0; r < rows; r++) last[r] = pick[0][r].id;
}

static void test_network(const char *name, fy_bundle *b, fy_nn_dev *vk, const lines *in)
{
    netcase c = {.name = name, .b = b};
    c.spec = (fy_nn_spec){.model = b->model,
                          .cfg = &b->cfg,
                          .src_vocab = b->cfg.src_vocab_size,
                          .trg_vocab = b->cfg.trg_vocab_size,
                          .trg_unk = b->trg_unk,
                          .max_src_len = 128,
                          .max_steps = 256};
    fy_error err = {0};
    int rc = side_open(&c, &c.s[0], fy_nn_cpu_device(), &err);
    if (rc >= 0) rc = side_open(&c, &c.s[1], vk, &err);
    check(rc >= 0, "%s: %s", name, err.msg[0] ? err.msg : "nets and runs on both devices");
    encode_lines(&c, in);
    for (int k = 0; rc >= 0 && k < 2; k++)
        rc = c.s[k].be->encode(c.s[k].run, c.ids, c.len, c.ns, &err);
    if (rc >= 0) rc = set_columns(&c, &err);
    int slot[ROWS], from[ROWS];
    int32_t last[ROWS];
    for (int r = 0; r < c.ns; r++) slot[r] = r, last[r] = -1;
    for (int k = 0; rc >= 0 && k < 2; k++) rc = c.s[k].be->rows_begin(c.s[k].run, slot, c.ns, &err);
    check(rc >= 0, "%s: %s", name, err.msg[0] ? err.msg : "encode, columns and rows on both");
    float *la = malloc((size_t)c.spec.trg_vocab * sizeof *la);
    float *lb = malloc((size_t)c.spec.trg_vocab * sizeof *lb);
    int rows = c.ns;
    for (int step = 0; rc >= 0 && rows > 0 && step < STEPS; step++) {
        step_both(&c, rows, step, last, la, lb);
        /* Odd steps: drop the first row (compaction); even: reverse (a
         * beam's reordering) - the cells must follow their rows. */
        int keep = step % 2 ? rows - 1 : rows;
        for (int j = 0; j < keep; j++) from[j] = step % 2 ? j + 1 : rows - 1 - j;
        int32_t moved[ROWS] = {0};
        for (int j = 0; j < keep; j++) moved[j] = last[from[j]] < 0 ? 0 : last[from[j]];
        memcpy(last, moved, (size_t)keep * sizeof *moved);
        for (int k = 0; rc >= 0 && keep > 0 && k < 2; k++)
            rc = c.s[k].be->rows_keep(c.s[k].run, from, keep, &err);
        rows = keep;
    }
    check(rc >= 0, "%s: %s", name, err.msg[0] ? err.msg : "steps and row moves on both");
    free(la);
    free(lb);
    side_close(&c.s[0]);
    side_close(&c.s[1]);
}

/* ---- whole translations ------------------------------------------------- */

static void free_lists(char **out, fy_nbest *nb, int n)
{
    for (int i = 0; i < n; i++) {
        free(out[i]);
        if (nb) fy_nbest_clear(&nb[i]);
    }
}

static void test_translations(const char *name, const char *dir, fy_nn_dev *vk, const lines *in)
{
    fy_translator_options o;
    fy_translator_options_default(&o);
    o.max_beam = 4;
    fy_error err = {0};
    fy_translator *t = fy_translator_open(dir, &o, &err);
    fy_worker *w[2] = {t ? fy_worker_new(t, &err) : NULL, NULL};
    if (w[0]) w[1] = fy_worker_new_on(t, vk, &err);
    check(w[0] && w[1], "%s: %s", name, err.msg[0] ? err.msg : "workers on both devices");
    for (int beam = 1; w[1] && beam <= 4; beam += 3) {
        char *out[2][MAX_LINES];
        fy_nbest nb[2][MAX_LINES];
        fy_translate_info info[2][MAX_LINES];
        int rc = 0;
        for (int k = 0; k < 2; k++)
            rc |= fy_translate_beam(t, w[k], (const char *const *)in->v, (size_t)in->n, beam,
                                    out[k], nb[k], info[k], &err);
        check(rc == 0, "%s: %s", name, err.msg[0] ? err.msg : "translations on both devices");
        if (rc) continue;
        int same = 1, lists = 1;
        for (int i = 0; i < in->n; i++) {
            same &= !strcmp(out[0][i], out[1][i]) &&
                    info[0][i].out_tokens == info[1][i].out_tokens &&
                    !memcmp(&info[0][i].min_gap, &info[1][i].min_gap, sizeof(float));
            lists &= nb[0][i].n == nb[1][i].n;
            for (int j = 0; lists && j < nb[0][i].n; j++)
                lists &= !strcmp(nb[0][i].hyp[j].text, nb[1][i].hyp[j].text) &&
                         !memcmp(&nb[0][i].hyp[j].score, &nb[1][i].hyp[j].score, sizeof(float));
            if (strcmp(out[0][i], out[1][i]))
                printf("  line %d: cpu \"%s\" vulkan \"%s\"\n", i, out[0][i], out[1][i]);
        }
        check(same, "%s: %s", name,
              beam == 1 ? "greedy translations identical" : "beam 4 translations identical");
        check(lists, "%s: %s", name,
              beam == 1 ? "greedy lists identical" : "beam 4 n-best lists identical");
        free_lists(out[0], nb[0], in->n);
        free_lists(out[1], nb[1], in->n);
    }
    fy_worker_free(w[1]);
    fy_worker_free(w[0]);
    fy_translator_free(t);
}

int main(int argc, char **argv)
{
    fy_nn_dev **devs = NULL;
    int ndevs = 0;
    fy_error err = {0};
    if (fy_nn_devices_open("vulkan:0", &devs, &ndevs, &err) < 0) {
        printf("skipped: %s\n", err.msg);
        return SKIP;
    }
    const char *env = getenv("FANYI_VK_LINES");
    int nlines = env ? atoi(env) : 8;
    if (nlines < 1 || nlines > MAX_LINES) nlines = 8;
    printf("device: %s (%s)\n", devs[0]->name, devs[0]->desc);
    for (int a = 1; a < argc; a++) {
        const char *name = strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a];
        fy_bundle *b = fy_bundle_open(argv[a], 1, &err);
        check(b != NULL, "%s: %s", name, err.msg);
        if (!b) continue;
        lines in;
        read_lines(b->source[0] ? b->source : "zh", nlines, &in);
        check(in.n > 0, "%s: test sentences", name);
        test_network(name, b, devs[0], &in);
        test_translations(name, argv[a], devs[0], &in);
        for (int i = 0; i < in.n; i++) free(in.v[i]);
        fy_bundle_free(b);
    }
    fy_nn_devices_close(devs, ndevs);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
