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

#include "model/bundle.h"
#include "nn/decoder.h"
#include "nn/encoder.h"
#include "translate/translator.h"

struct fy_translator {
    fy_translator_options opt;
    fy_bundle *b; /* files, architecture, vocabularies, shortlist */
    const fy_model_config *cfg;
    fy_spm *src_spm, *trg_spm; /* views of the bundle's */
    int shared_vocab;
    fy_shortlist *shortlist; /* NULL: decode over the whole vocabulary */
    int src_vocab, trg_vocab;
    int src_eos, trg_eos, trg_unk; /* trg_unk -1 when the vocabulary has none */
    /* Source (slot 0) and separate target (slot 1) embeddings [vocab][d],
     * in the mapped file: float32, or int8 rows that lookups dequantise. */
    fy_nn_embedding emb[2];
    int trg_slot;    /* 0 (tied embeddings) or 1 */
    float emb_scale; /* sqrt(d) */
    float *pos;      /* [npos][d] sinusoidal position table */
    int npos;
    int max_out; /* output tokens a segment may ever need */
    fy_encoder *enc;
    fy_decoder *dec;
};

/* One decoding row: a segment being translated (greedy), or one
 * hypothesis of a segment (beam search). */
typedef struct fy_row {
    int seg;      /* index into the call's segment array */
    int slot;     /* the segment's place in its sub-batch: its source rows
                     (off/len) and shortlist bitmap, fixed while rows move */
    int32_t last; /* previous output token, -1 before the first step */
} fy_row;

/* Beam search's per-row and per-segment scratch (beam.c), carved only
 * when the translator allows beams (max_beam > 1). */
typedef struct fy_beam_scratch {
    float *state2;              /* [dec_depth][max_rows][d] SSRU cells of the next rows */
    float *score;               /* [max_rows] each row's path score */
    int *node;                  /* [max_rows] its last node in its segment's grid */
    fy_row *next;               /* [max_rows] the rows of the next step... */
    float *next_score;          /* [max_rows] ...their path scores */
    int *next_node;             /* [max_rows] ...their nodes */
    int *parent;                /* [max_rows] ...and the row each came from */
    int *first, *count, *width; /* [max_rows] per segment of the sub-batch:
                                   its rows, and how many hypotheses it keeps */
} fy_beam_scratch;

struct fy_worker {
    const fy_translator *t;
    char *arena;
    size_t arena_bytes;
    int max_tokens, max_rows;
    /* encoder side */
    int32_t *ids;   /* [max_tokens] packed source ids */
    int *off, *len; /* [max_rows] each segment's rows */
    float *x;       /* [max_tokens][d] embeddings, then encoder context */
    fy_encoder_scratch enc;
    /* decoder side */
    float *keys, *values; /* [dec_depth][max_tokens·d] cross-attention K/V (decoder.h) */
    float *state;         /* [dec_depth][max_rows][d] SSRU cells */
    float *dx;            /* [max_rows][d] step input / top hidden state */
    fy_decoder_scratch dec;
    float *logits;          /* [max_rows][trg_vocab] */
    fy_row *rows;           /* [max_rows] active rows, in order */
    int *row_off, *row_len; /* [max_rows] their sources, aligned with rows */
    uint8_t *done;          /* [max_rows] rows finished this step */
    /* shortlist: each row is scored on its own list only (a batch's union
     * is several times longer, so scoring it for every row cost more than
     * the batch saved); lists and logits rows are V apart, and only the
     * pages a list uses are ever touched */
    int32_t *cols;    /* [max_rows][trg_vocab] each segment's ids, ascending */
    int *ncols;       /* [max_rows] their counts */
    uint8_t *allowed; /* [max_rows][bitmap_bytes] each segment's shortlist */
    int32_t *sl_out;  /* [trg_vocab] one selection */
    uint8_t *sl_seen; /* fy_shortlist_scratch_bytes */
    size_t bitmap_bytes;
    fy_beam_scratch beam;
    void *lin;               /* linear-layer scratch */
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

/* Packs the segments idx[0..ns) into the worker and runs the encoder and
 * the cross-attention projection over them. Returns the token count. */
int fy_tr_encode_rows(const fy_translator *t, fy_worker *w, const fy_sentence *sent,
                      const fy_segment *segs, const int *idx, int ns);

/* Fills slot r's shortlist (bitmap and ascending ids) for sentence s. */
int fy_tr_shortlist_row(const fy_translator *t, fy_worker *w, const fy_sentence *s, int r,
                        fy_error *err);

/* Embeds row r's previous token (or the empty start) at decoder step step
 * into w->dx. */
void fy_tr_embed_row(const fy_translator *t, fy_worker *w, int r, int step);

/* Logits of rows [0, rows): row r's start at r·trg_vocab, over its
 * shortlist's columns (w->cols of its slot) or the whole vocabulary. */
void fy_tr_score_rows(const fy_translator *t, fy_worker *w, int rows);
/* One decoder step of the first rows active rows (greedy and beam alike):
 * embeds each row's last token, runs the decoder, scores. FY_ECANCELED
 * when w's abort flag is set, else 0. */
int fy_tr_step_rows(const fy_translator *t, fy_worker *w, int rows, int ntok, int step,
                    fy_error *err);

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
