/* metrics.h — corpus BLEU and chrF2, computed exactly as sacrebleu 2.x does.
 *
 * Both metrics are corpus-level: they sum integer statistics over all
 * sentence pairs and only then form a score, so the corpus score is NOT the
 * mean of sentence scores.  A caller therefore streams pairs into a stats
 * struct (`*_add`) and asks for the score once at the end (`*_score`); the
 * corpus is never held in memory.
 *
 *     BleuStats bleu = {0};
 *     ChrfStats chrf = {0};
 *     for each (hyp, ref) pair:
 *         bleu_add(&bleu, hyp, ref, metric_tokenize_for_lang("zh"));
 *         chrf_add(&chrf, hyp, ref);
 *     printf("BLEU %.2f chrF2 %.2f\n", bleu_score(&bleu), chrf_score(&chrf));
 *
 * The definitions are sacrebleu's defaults with one reference per sentence:
 *   BLEU  `corpus_bleu(hyps, [refs], tokenize=...)`: word n-grams up to 4,
 *         clipped counts, brevity penalty, smooth_method "exp", cased.
 *         Tokeniser "13a" (mteval-v13a) or "zh" (every CJK character
 *         separated, then the 13a punctuation rules).
 *   chrF2 `corpus_chrf(hyps, [refs])`: character n-grams up to 6 with all
 *         whitespace removed, no word n-grams, beta 2, no eps smoothing.
 * Scores are on sacrebleu's 0..100 scale.  Strings are UTF-8 sentences
 * (NUL-terminated, usually without '\n'); invalid bytes never crash, each
 * counts as one character of its own. */
#ifndef TRANSLATE_METRICS_H
#define TRANSLATE_METRICS_H

#include <stddef.h>

typedef enum {
    METRIC_TOKENIZE_13A, /* sacrebleu "13a": English and other spaced scripts */
    METRIC_TOKENIZE_ZH,  /* sacrebleu "zh": Chinese */
} MetricTokenize;

/* The tokeniser sacrebleu would pick for a target language code:
 * "zh" gives METRIC_TOKENIZE_ZH, anything else (or NULL) METRIC_TOKENIZE_13A. */
MetricTokenize metric_tokenize_for_lang(const char *lang);

/* The tokenised form of one sentence as BLEU sees it: tokens separated by
 * single spaces, no leading or trailing space.  Returns a new string the
 * caller frees.  Exposed so tests and curious readers can see the split. */
char *metric_tokenize(const char *text, MetricTokenize tok);

#define BLEU_MAX_ORDER 4

/* BLEU's sufficient statistics; start from all zeros. */
typedef struct {
    size_t hyp_len;                 /* hypothesis tokens */
    size_t ref_len;                 /* reference tokens */
    size_t correct[BLEU_MAX_ORDER]; /* [n-1]: clipped matching n-grams */
    size_t total[BLEU_MAX_ORDER];   /* [n-1]: hypothesis n-grams */
} BleuStats;

/* Tokenise one hypothesis/reference pair and add its counts to `stats`. */
void bleu_add(BleuStats *stats, const char *hyp, const char *ref, MetricTokenize tok);

/* Add `from`'s counts to `into`: a corpus' statistics are its sentences'
 * summed (bootstrap.h sums resampled sentences this way). */
void bleu_merge(BleuStats *into, const BleuStats *from);

/* Corpus BLEU in 0..100 from summed statistics (0 for an empty corpus). */
double bleu_score(const BleuStats *stats);

#define CHRF_ORDER 6
#define CHRF_BETA 2

/* chrF's sufficient statistics, per character n-gram order; start from zeros. */
typedef struct {
    size_t hyp[CHRF_ORDER];   /* [n-1]: hypothesis n-grams (see chrf_add) */
    size_t ref[CHRF_ORDER];   /* [n-1]: reference n-grams */
    size_t match[CHRF_ORDER]; /* [n-1]: clipped matching n-grams */
} ChrfStats;

/* Add one pair's character n-gram counts to `stats` (no tokenisation:
 * chrF only drops whitespace). */
void chrf_add(ChrfStats *stats, const char *hyp, const char *ref);

/* Add `from`'s counts to `into`, as bleu_merge. */
void chrf_merge(ChrfStats *into, const ChrfStats *from);

/* Corpus chrF2 in 0..100 from summed statistics (0 for an empty corpus). */
double chrf_score(const ChrfStats *stats);

#endif
