/* backend_cpu.h - the cpu backend's bound network, for other backends
 * (internal to src/nn): a device backend binds the model through the cpu
 * backend (one loader, one set of checks) and copies what it needs. */
#ifndef FY_NN_BACKEND_CPU_H
#define FY_NN_BACKEND_CPU_H

#include "nn/backend.h"
#include "nn/decoder.h"
#include "nn/encoder.h"

typedef struct fy_nn_cpu_parts {
    int d;
    const fy_encoder *enc;
    const fy_decoder *dec;
    fy_nn_embedding src, trg; /* source and target embeddings (the same when tied) */
    float emb_scale;          /* sqrt(d) */
    const float *pos;         /* [npos][d] sinusoid table */
    int npos;
} fy_nn_cpu_parts;

/* net (made by fy_nn_cpu.net_new) as parts, borrowed while it lives. */
void fy_nn_cpu_parts_get(const fy_nn_net *net, fy_nn_cpu_parts *out);

#endif
