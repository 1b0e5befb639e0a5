/* backend.h - where the network runs: an operations table over whole
 * computations, one implementation per kind of device.
 *
 * The search (src/translate/translator.c greedy, beam.c beam search) drives
 * a backend through this table only: it never touches network memory. A
 * backend keeps the encoder context, every decoder layer's cross-attention
 * keys and values, the SSRU cells and the logits in its own memory, so
 * that on a GPU only token ids, shortlists and a few numbers per row cross
 * the bus. Every backend computes the CPU engine's bits (tests/gpu compares
 * each with "cpu"): the same logits, so the same choices and strings.
 *
 * Objects:
 *   fy_nn_dev  a device: the CPU, a GPU (backend.c opens them by name);
 *   fy_nn_net  one model's weights on a device: read-only, shared by every
 *              worker on that device;
 *   fy_nn_run  one worker's state on that device (buffers, queue): used by
 *              one thread at a time.
 *
 * A run holds one sub-batch at a time. encode() packs ns source sentences
 * ("slots" 0 .. ns-1); set_columns() gives slot s its output columns (a
 * shortlist); rows are the hypotheses being decoded: rows_begin() starts
 * row r on slot[r] with zeroed SSRU cells, rows_keep() makes new row j
 * continue old row from[j] (greedy compaction, beam reordering); step()
 * runs one decoder step for every row and ends with the selection on the
 * device.
 */
#ifndef FY_NN_BACKEND_H
#define FY_NN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "model/config.h"
#include "model/marian.h"
#include "util/error.h"

typedef struct fy_nn_backend fy_nn_backend;
typedef struct fy_nn_net fy_nn_net;
typedef struct fy_nn_run fy_nn_run;

/* The devices a process can open at once. */
#define FY_NN_DEV_MAX 16

/* A device. Its fields are read-only after fy_nn_devices_open. */
typedef struct fy_nn_dev {
    const fy_nn_backend *be;
    char name[32];  /* "cpu", "vulkan:0", ... */
    char desc[160]; /* what it is, for people: "NVIDIA H200 (discrete GPU)" */
    size_t memory;  /* bytes of device memory; 0 for the host */
    size_t budget;  /* bytes models may take there (0: no limit) */
    int index;      /* position in the opened list */
    int max_rows;   /* rows (sentences) a step should carry to fill it */
    int max_tokens; /* source tokens an encode should carry */
    void *impl;     /* the backend's own device object */
} fy_nn_dev;

/* What a backend builds a model's network from. Everything borrowed: the
 * mapping and config outlive every net made from them. */
typedef struct fy_nn_spec {
    const fy_marian *model;     /* the mapped model file */
    const fy_model_config *cfg; /* its architecture */
    int src_vocab, trg_vocab;   /* embedding rows */
    int trg_unk;                /* the id never chosen (<unk>); -1: none */
    int max_src_len;            /* tokens of one source sentence, EOS included */
    int max_steps;              /* decoder steps of one sentence: positions 0 .. max_steps-1 */
} fy_nn_spec;

/* Greedy selection of one row: what the search's argmax needs. */
typedef struct fy_nn_pick {
    int32_t id;  /* best column's vocabulary id (never trg_unk; the first of
                    equal values in column order); -1 when the row has none */
    float value; /* its logit */
    float gap;   /* value minus the second best (0 when they are equal,
                    +inf when there is no second) */
} fy_nn_pick;

/* One decoder step's arguments. */
typedef struct fy_nn_step {
    int rows;            /* rows to run: 0 .. rows-1 */
    int step;            /* the step (position) of every row */
    const int32_t *last; /* [rows] each row's previous token; -1: the start */
    int k;               /* 0: greedy, into pick. > 0: each row's k best
                            candidates path[r] + logit (a float add, as the
                            CPU does) into topv/topi[r*k ..], best first,
                            equal values in column order, never trg_unk; a
                            row with fewer columns pads with id -1, -inf */
    const float *path;   /* [rows] path scores (k > 0) */
    fy_nn_pick *pick;    /* [rows] out (k == 0) */
    float *topv;         /* [rows*k] out (k > 0) */
    int32_t *topi;       /* [rows*k] out (k > 0) */
} fy_nn_step;

struct fy_nn_backend {
    const char *name; /* "cpu", "vulkan" */
    /* A model's weights on dev. Fails with FY_ENOMEM when dev's budget or
     * memory cannot take it, FY_EUNSUPPORTED for a model the backend cannot
     * run (the message says why), FY_EDEVICE when the device is gone. */
    fy_nn_net *(*net_new)(fy_nn_dev *dev, const fy_nn_spec *spec, fy_error *err);
    void (*net_free)(fy_nn_net *net);          /* NULL harmless; every run freed first */
    size_t (*net_bytes)(const fy_nn_net *net); /* memory it holds beyond the mapping */
    /* One worker's state for batches of at most max_tokens source tokens and
     * max_rows rows (and slots). */
    size_t (*run_bytes)(const fy_nn_net *net, int max_tokens, int max_rows);
    fy_nn_run *(*run_new)(fy_nn_net *net, int max_tokens, int max_rows, fy_error *err);
    void (*run_free)(fy_nn_run *run); /* NULL harmless */
    /* Optional: gives the run's memory back until it is used again. */
    void (*run_trim)(fy_nn_run *run);
    /* Encodes ns sentences (ids packed one after another, len[s] tokens
     * each, EOS included) into slots 0 .. ns-1: the encoder and every
     * decoder layer's cross-attention keys and values. Forgets the previous
     * sub-batch (its columns and rows). */
    int (*encode)(fy_nn_run *run, const int32_t *ids, const int *len, int ns, fy_error *err);
    /* Slot s's output columns: ncols ascending vocabulary ids (copied), or
     * cols == NULL for the whole vocabulary (the default after encode). */
    int (*set_columns)(fy_nn_run *run, int slot, const int32_t *cols, int ncols, fy_error *err);
    /* Row r decodes slot[r], its SSRU cells zeroed, for r < rows. */
    int (*rows_begin)(fy_nn_run *run, const int *slot, int rows, fy_error *err);
    /* New row j continues old row from[j] (its slot and cells), j < rows. */
    int (*rows_keep)(fy_nn_run *run, const int *from, int rows, fy_error *err);
    /* One decoder step: embeddings, SSRU layers, cross-attention, FFN,
     * logits over each row's columns, then the selection (see fy_nn_step). */
    int (*step)(fy_nn_run *run, const fy_nn_step *st, fy_error *err);
    /* Tests: row r's logits of the last step over its slot's columns into
     * out (room for the vocabulary), *ncols of them. */
    int (*logits)(fy_nn_run *run, int row, float *out, int *ncols, fy_error *err);
    /* Optional: bytes of dev's own memory its nets and runs hold now. */
    size_t (*dev_used)(const fy_nn_dev *dev);
};

/* dev_used of dev's backend, 0 where it keeps no account (the host). */
size_t fy_nn_dev_used(const fy_nn_dev *dev);

extern const fy_nn_backend fy_nn_cpu;

/* The host CPU as a device (its kernel path in desc). Always available. */
fy_nn_dev *fy_nn_cpu_device(void);

/* Starts `helpers` threads (0 .. FY_PAR_MAX_HELPERS, nn/par.h) that join a
 * CPU worker's matrix products while fewer than cores workers compute
 * (cores: those the process means to use, e.g. its workers: in a container
 * with a CPU limit, not the host's); 0 stops them. Call while no worker
 * computes (at start-up and shut-down). Returns 0, or an error code with
 * err set. */
int fy_nn_cpu_helpers(int helpers, int cores, fy_error *err);

/* The CPU's helper threads now, the products they took part in and the
 * times they slept because other threads wanted their cores (metrics). */
typedef struct fy_nn_helper_stats {
    int helpers;
    long shared, backoffs;
} fy_nn_helper_stats;
void fy_nn_cpu_helper_stats(fy_nn_helper_stats *st);

/* The helpers for cores cores by default: cores - 1, at most
 * FY_PAR_MAX_HELPERS. */
int fy_nn_cpu_default_helpers(long cores);

/* A worker starts (+1) or ends (-1) a computation on dev: on the CPU, its
 * products then share the helpers (fy_nn_cpu_helpers); elsewhere nothing. */
void fy_nn_dev_busy(fy_nn_dev *dev, int delta);

/* Opens the devices spec names, comma-separated: "cpu", "vulkan" (every
 * Vulkan device), "vulkan:N", or "auto" (every GPU found, else the CPU;
 * Vulkan is asked only when the machine has a GPU device node).
 * NULL or "" means "cpu". On success *out holds *n devices (at most
 * FY_NN_DEV_MAX) until fy_nn_devices_close. Fails with FY_EINVAL for a bad
 * spec, FY_EUNSUPPORTED / FY_ENOTFOUND when a named device is not there
 * (the message says why: no Vulkan loader, no such device, ...). */
int fy_nn_devices_open(const char *spec, fy_nn_dev ***out, int *n, fy_error *err);

/* Closes what fy_nn_devices_open opened (the CPU device is static). */
void fy_nn_devices_close(fy_nn_dev **devs, int n);

/* The selections the CPU backend computes, for backends' tests: row lg of
 * ncols logits over cols (NULL: ids 0 .. ncols-1). */
fy_nn_pick fy_nn_pick_row(const float *lg, const int32_t *cols, int ncols, int32_t unk);
/* k best of path + lg[c] into topv/topi (padding id -1, -inf); see fy_nn_step. */
void fy_nn_topk_row(const float *lg, const int32_t *cols, int ncols, int32_t unk, float path, int k,
                    float *topv, int32_t *topi);

#endif
