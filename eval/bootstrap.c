/* bootstrap.c — paired bootstrap resampling of BLEU and chrF2 (see bootstrap.h). */
#include "bootstrap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

/* sacrebleu's seed value (SACREBLEU_SEED's default), in our own generator:
 * the draws, and so the intervals, are not numpy's and will not match
 * sacrebleu's figures to the digit. */
enum { BOOTSTRAP_SEED = 12345 };

/* One sentence's statistics of either metric, so the resampling loop below
 * is written once for both: how to sum them and how to score the sum. */
typedef union {
    BleuStats bleu;
    ChrfStats chrf;
} AnyStats;

typedef struct {
    size_t size; /* bytes of one sentence's statistics in the caller's array */
    void (*merge)(AnyStats *into, const void *from);
    double (*score)(const AnyStats *sum);
} Metric;

static void merge_bleu(AnyStats *into, const void *from) { bleu_merge(&into->bleu, from); }
static double score_bleu(const AnyStats *sum) { return bleu_score(&sum->bleu); }
static void merge_chrf(AnyStats *into, const void *from) { chrf_merge(&into->chrf, from); }
static double score_chrf(const AnyStats *sum) { return chrf_score(&sum->chrf); }

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

void bootstrap_interval(double *values, int n, double *low, double *high)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    /* 2.5% of the values below the interval, 2.5% above: of 1000, the
     * 26th and the 975th in order. */
    *low = values[(int)floor(0.025 * n)];
    *high = values[(int)ceil(0.975 * n) - 1];
}

static void resample(const Metric *m, const void *a, const void *b, size_t n, int resamples,
                     BootstrapResult *out)
{
    ASSERT(resamples >= 1);
    const unsigned char *sentences_a = a, *sentences_b = b;
    AnyStats sum_a, sum_b;
    memset(&sum_a, 0, sizeof sum_a);
    memset(&sum_b, 0, sizeof sum_b);
    for (size_t i = 0; i < n; i++) {
        m->merge(&sum_a, sentences_a + i * m->size);
        m->merge(&sum_b, sentences_b + i * m->size);
    }
    out->score_a = m->score(&sum_a);
    out->score_b = m->score(&sum_b);
    out->difference = out->score_b - out->score_a;

    double *differences = xmalloc((size_t)resamples * sizeof *differences);
    Rng rng;
    rng_seed(&rng, BOOTSTRAP_SEED);
    out->b_higher = 0;
    for (int r = 0; r < resamples; r++) {
        memset(&sum_a, 0, sizeof sum_a);
        memset(&sum_b, 0, sizeof sum_b);
        for (size_t k = 0; k < n; k++) {
            /* The same sentence for both systems: that pairing is what makes
             * the test see small differences a set's luck would hide.  (The
             * modulo's bias is below n / 2^64: negligible.) */
            size_t i = (size_t)(rng_next(&rng) % n);
            m->merge(&sum_a, sentences_a + i * m->size);
            m->merge(&sum_b, sentences_b + i * m->size);
        }
        differences[r] = m->score(&sum_b) - m->score(&sum_a);
        out->b_higher += differences[r] > 0.0;
    }
    bootstrap_interval(differences, resamples, &out->low, &out->high);
    out->resamples = resamples;
    free(differences);
}

void bootstrap_bleu(const BleuStats *a, const BleuStats *b, size_t n, int resamples,
                    BootstrapResult *out)
{
    const Metric bleu = {sizeof *a, merge_bleu, score_bleu};
    resample(&bleu, a, b, n, resamples, out);
}

void bootstrap_chrf(const ChrfStats *a, const ChrfStats *b, size_t n, int resamples,
                    BootstrapResult *out)
{
    const Metric chrf = {sizeof *a, merge_chrf, score_chrf};
    resample(&chrf, a, b, n, resamples, out);
}

const char *bootstrap_verdict(const BootstrapResult *r)
{
    if (r->low > 0.0) return "measurably higher";
    if (r->high < 0.0) return "measurably lower";
    return "no measurable difference";
}
