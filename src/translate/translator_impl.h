/* translator_impl.h - what the engine's files share (not API):
 * translator.c (the translator, workers, segments, greedy decoding, the
 * batch entry points), beam.c (beam search) and output.c. Everything here is
 * internal to src/translate; translator.h is the contract. output.c turns
 * the decoded tokens into texts for both.
 */
#ifndef FY_TRANSLATE_TRANSLATOR_IMPL_H
#define FY_TRANSLATE_TRANSLATOR_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "model/bundle.h"
#include "nn/backend.h"
#include "translate/translator.h"

/* The model's network on one device. */
typedef struct fy_tr_place {
    fy_nn_dev *dev;
    fy_nn_net *net; /* NULL until a worker there needs it */
} fy_tr_place;

/* Where the model's network lives: made at first use on each device, under
 * a lock, so that the translator itself stays read-only. */
typedef struct fy_tr_places {
    pthread_mutex_t lock;
    fy_tr_place at[FY_NN_DEV_MAX + 1]; /* [0]: the CPU, made at open */
    int n;
} fy_tr_places;

struct fy_translator {
    fy_translator_options opt;
    fy_bundle *b; /* files, architecture, vocabularies, shortlist */
    const fy_model_config *cfg;
    fy_spm *src_spm, *trg_spm; /* views of the bundle's */
    int shared_vocab;
    fy_shortlist *shortlist; /* NULL: decode over the whole vocabulary */
    int src_vocab, trg_vocab;
    int src_eos, trg_eos, trg_unk; /* trg_unk -1 when the vocabulary has none */
    int max_out;                   /* output tokens a segment may ever need */
    fy_nn_spec spec;               /* what a backend builds the network from */
    fy_tr_places *places;
};

/* One decoding row: a segment being translated (greedy), or one
 * hypothesis of a segment (beam search). */
typedef struct fy_row {
    int seg;      /* index into the call's segment array */
    int slot;     /* the segment's place in its sub-batch: its source and
                     columns in the backend, fixed while rows move */
    int32_t last; /* previous output token, -1 before the first step */
} fy_row;

/* Beam search's per-row and per-segment scratch (beam.c), carved only
 * when the translator allows beams (max_beam > 1). */
typedef struct fy_beam_scratch {
    float *score;               /* [max_rows] each row's path score */
    int *node;                  /* [max_rows] its last node in its segment's grid */
    fy_row *next;               /* [max_rows] the rows of the next step... */
    float *next_score;          /* [max_rows] ...their path scores */
    int *next_node;             /* [max_rows] ...their nodes */
    int *parent;                /* [max_rows] ...and the row each came from */
    int *first, *count, *width; /* [max_rows] per segment of the sub-batch:
                                   its rows, and how many hypotheses it keeps */
} fy_beam_scratch;

/* A worker: the search's scratch here, the network's state in its
 * backend's run on its device. */
struct fy_worker {
    const fy_translator *t;
    fy_nn_dev *dev;
    const fy_nn_backend *be;
    fy_nn_run *run;
    char *arena; /* the search's scratch, carved once */
    int max_tokens, max_rows;
    int32_t *ids;     /* [max_tokens] packed source ids of a sub-batch */
    int *len;         /* [max_rows] their sentences' lengths */
    fy_row *rows;     /* [max_rows] active rows, in order */
    int *from;        /* [max_rows] rows kept: new row j continues from[j] */
    int *slot;        /* [max_rows] rows begun: row r decodes slot[r] */
    int32_t *last;    /* [max_rows] each row's previous token */
    fy_nn_pick *pick; /* [max_rows] a greedy step's choices */
    int topk;         /* candidates per row of a beam step: max_beam + 1 */
    float *topv;      /* [max_rows][topk] a beam step's candidates */
    int32_t *topi;
    uint8_t *done; /* [max_rows] rows finished this step */
    /* shortlist: one slot's selection at a time */
    int32_t *cols;    /* [trg_vocab] ascending ids */
    uint8_t *bits;    /* [bitmap_bytes] */
    int32_t *sl_out;  /* [trg_vocab] one selection */
    uint8_t *sl_seen; /* fy_shortlist_scratch_bytes */
    size_t bitmap_bytes;
    fy_beam_scratch beam;
    const atomic_int *abort; /* fy_worker_set_abort; NULL: never */
};

/* FY_ECANCELED once w's abort flag is set (checked between decoder steps). */
static inline int fy_tr_aborted(const fy_worker *w, fy_error *err)
{
    if (!w->abort || !atomic_load_explicit(w->abort, memory_order_relaxed)) return 0;
    return fy_err(err, FY_ECANCELED, "translation cancelled");
}

/* A source sentence: its pieces followed by one EOS slot. */
typedef struct fy_sentence {
    int32_t *ids; /* [npieces + 1], ids[npieces] = EOS */
    int npieces;
    float gap;
} fy_sentence;

/* A finished hypothesis of a segment (beam search), or its greedy result. */
typedef struct fy_hyp {
    int32_t *tok; /* [segment cap] its tokens, EOS left out */
    int ntok;
    int len;     /* decoding steps it took: ntok, + 1 when it ended on EOS */
    float path;  /* the sum of its tokens' logits, EOS's included */
    float score; /* path normalised by length (fy_translator_options) */
    int node;    /* its last node in the search grid */
} fy_hyp;

/* One step's choice in a segment's beam search grid. */
typedef struct fy_bnode {
    int32_t word;
    int32_t parent; /* the node it extends, -1 for the first step's */
} fy_bnode;

/* A segment: at most FY_SEGMENT_TOKENS - 1 pieces of one sentence + EOS. */
typedef struct fy_segment {
    int sent;
    int first; /* first piece in the sentence */
    int npieces;
    float limit;  /* stop after step t when t + 1 >= limit */
    int32_t *out; /* [cap] output ids (no EOS): the best translation */
    int nout, cap;
    float path; /* greedy: the sum of the chosen tokens' logits */
    int eos;    /* greedy: it ended on EOS */
    /* beam search: nhyp finished hypotheses (at most the beam), best first
     * once the search is over; out then views hyp[0]'s tokens */
    fy_hyp *hyp;
    int nhyp;
    fy_bnode *nodes; /* [cap x beam] the search grid */
    int nnodes;
} fy_segment;

/* ---- translator.c's helpers that beam.c uses ---- */

/* Encodes the segments idx[0..ns) into the worker's backend as slots
 * 0 .. ns-1, each with its shortlist's columns. 0 or a negative code. */
int fy_tr_encode_slots(const fy_translator *t, fy_worker *w, const fy_sentence *sent,
                       const fy_segment *segs, const int *idx, int ns, fy_error *err);

/* The normalised score of a hypothesis of len steps with path score path. */
float fy_tr_normalise(const fy_translator *t, float path, int len);

/* ---- output.c ---- */

/* Each sentence's translation into out[0..n) (malloc'd), and its n-best
 * list into nbest (when not NULL; every segment has its hyp list then). */
int fy_tr_assemble(const fy_translator *t, const fy_segment *segs, int nseg, size_t n, char **out,
                   fy_nbest *nbest, fy_error *err);

/* Greedy results as one-hypothesis lists (hyps: one per segment). */
void fy_tr_greedy_hyps(const fy_translator *t, fy_segment *segs, int nseg, fy_hyp *hyps);

/* The texts of nb after its best one that differ from best and from each
 * other, into *out: a NULL-terminated list (alts.h) taking the texts out
 * of nb, or NULL when none. 0 or FY_ENOMEM. */
int fy_tr_alternatives(fy_nbest *nb, const char *best, char ***out, fy_error *err);

/* ---- beam.c ---- */

/* Beam search of the segments idx[0..ns) with beam hypotheses each (2 ..
 * t's max_beam; ns x beam <= the worker's rows): fills each segment's hyp
 * (best first), out/nout (the best) and its sentence's gap. segs[].hyp and
 * .nodes must have room for beam hypotheses and cap x beam nodes. */
int fy_beam_decode_rows(const fy_translator *t, fy_worker *w, fy_sentence *sent, fy_segment *segs,
                        const int *idx, int ns, int beam, fy_error *err);

#endif
