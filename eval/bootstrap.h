/* bootstrap.h — is one system's score on a test set really higher than
 * another's, or is the difference the luck of which sentences the set
 * holds?  Paired bootstrap resampling (Koehn, "Statistical Significance
 * Tests for Machine Translation Evaluation", 2004).
 *
 * Both systems translated the same n sentences; each sentence's metric
 * statistics are kept (metrics.h: bleu_add into a zeroed BleuStats per
 * sentence).  A resample draws n sentence numbers with replacement; both
 * systems are scored on that same draw (paired), and the difference
 * recorded.  Over many resamples the middle 95% of the differences is the
 * interval: when it holds only positive values, B is better on sets like
 * this one, not just on this one.
 *
 *     BootstrapResult r;
 *     bootstrap_bleu(bleu_a, bleu_b, n, BOOTSTRAP_RESAMPLES, &r);
 *     printf("%+.2f in [%+.2f, %+.2f]\n", r.difference, r.low, r.high);
 *
 * The draws come from a fixed seed: the same inputs give the same interval
 * on every machine and every run. */
#ifndef TRANSLATE_BOOTSTRAP_H
#define TRANSLATE_BOOTSTRAP_H

#include <stddef.h>

#include "metrics.h"

/* As sacrebleu's paired bootstrap (--paired-bs-n's default).  Its test is
 * another: a p-value from the resampled scores; ours is the interval. */
enum { BOOTSTRAP_RESAMPLES = 1000 };

typedef struct {
    double score_a, score_b; /* on the whole set */
    double difference;       /* score_b - score_a */
    double low, high;        /* the middle 95% of the resamples' differences */
    int b_higher;            /* resamples where B scored strictly higher */
    int resamples;
} BootstrapResult;

/* Per-sentence statistics a[i], b[i] of the two systems for sentences
 * 0..n-1 (resamples >= 1; n = 0 scores both 0). */
void bootstrap_bleu(const BleuStats *a, const BleuStats *b, size_t n, int resamples,
                    BootstrapResult *out);
void bootstrap_chrf(const ChrfStats *a, const ChrfStats *b, size_t n, int resamples,
                    BootstrapResult *out);

/* The middle 95% of n values (n >= 1; sorts them in place): *low is the
 * value with 2.5% of them below it, *high with 2.5% above. */
void bootstrap_interval(double *values, int n, double *low, double *high);

/* B's score against A's: "measurably higher" or "measurably lower" when
 * the whole interval is above or below zero, else "no measurable
 * difference". */
const char *bootstrap_verdict(const BootstrapResult *r);

#endif
