/* confidence.c - the scheduler's engine call with the sentences' scores
 * (confidence.h), over the search's public entry point. */
#include "translate/confidence.h"

#include <math.h>
#include <stdlib.h>

#include "translate/translator_impl.h"

static int translate_scored(void *ctx, void *worker, const char *const *src, size_t n, int beam,
                            char **out, char ***alts, fy_confidence *conf, fy_error *err)
{
    fy_nbest *nb = calloc(n ? n : 1, sizeof *nb);
    fy_translate_info *info = calloc(n ? n : 1, sizeof *info);
    int rc = nb && info ? fy_translate_beam(ctx, worker, src, n, beam, out, nb, info, err)
                        : fy_err(err, FY_ENOMEM, "out of memory");
    for (size_t i = 0; rc >= 0 && i < n; i++) {
        conf[i].score = nb[i].n ? nb[i].hyp[0].score : NAN;
        conf[i].margin = info[i].min_gap;
        if (beam > 1) rc = fy_tr_alternatives(&nb[i], out[i], &alts[i], err);
    }
    for (size_t i = 0; nb && i < n; i++) fy_nbest_clear(&nb[i]);
    free(nb);
    free(info);
    return rc;
}

void fy_translator_engine_scored(const fy_translator *t, const char *name, fy_engine *e)
{
    fy_translator_engine(t, name, e);
    e->translate_scored = translate_scored;
}
