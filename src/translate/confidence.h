/* confidence.h - the engine the scheduler runs, with each sentence's
 * confidence (scheduler.h, fy_confidence).
 *
 * fy_translator_engine (translator.h) reports each sentence's smallest
 * logit gap only; this one asks the search for the n-best list too (one
 * hypothesis for greedy decoding, where it costs a second SentencePiece
 * decode of the sentence; the beam's list anyway), and reports the best
 * hypothesis' score (fy_hypothesis.score: the path score over its length)
 * with the gap. The translations are fy_translator_engine's, bit for bit.
 */
#ifndef FY_TRANSLATE_CONFIDENCE_H
#define FY_TRANSLATE_CONFIDENCE_H

#include "translate/scheduler.h"
#include "translate/translator.h"

/* fy_translator_engine(t, name, e) with e->translate_scored set. */
void fy_translator_engine_scored(const fy_translator *t, const char *name, fy_engine *e);

#endif
