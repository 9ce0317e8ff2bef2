/* cedict.h — CC-CEDICT entries as (English gloss, Simplified headword)
 * training pairs: which senses make a usable short translation, and how
 * they are cleaned.
 *
 * A dictionary gloss is a definition, not a translation, and most of the
 * trouble is in the senses that would teach the model the wrong thing.
 * The rules, each with why:
 *   - Headwords: only Han characters.  "%", "110", "AA制", pinyin-only or
 *     Latin entries are not Chinese text a translation would output.
 *   - A sense is dropped when it starts with "CL:" (a classifier list, not
 *     a meaning), "variant of", "old variant of", "archaic variant of",
 *     "Japanese variant of", "erhua variant of" (the meaning is elsewhere;
 *     the pair would map English to a rare form), "see ", "see also",
 *     "used in" (pointers to other words), "abbr. for/of/to", "short for",
 *     "short name for" (沪 is not how one writes "Shanghai"), "surname "
 *     ("surname Li" → 李 would teach a name as a word), "also written",
 *     "also pr.", "Taiwan pr.", "pr. " (pronunciation notes).
 *   - Notes in parentheses ("(pharm.) capsule", "Shanghai municipality
 *     (abbr. to 沪)") and pinyin in brackets ("个[ge4]") are removed, the
 *     words outside them kept.
 *   - Only the first alternative of a sense: text after the first ',' or
 *     ';' is cut ("pickled vegetables, especially Chinese cabbage" →
 *     "pickled vegetables"): what follows is usually a gloss of the gloss.
 *   - A sense still holding Han characters after that is dropped (it
 *     explains with other Chinese words: "one of the Eight Trigrams 八卦").
 *   - At most CEDICT_MAX_WORDS words, with a Latin letter: longer glosses
 *     are definitions, and a model fed them answers with definitions.
 *   - At most CEDICT_MAX_SENSES senses per entry, the first ones (the
 *     dictionary lists the main meaning first): one rare entry with ten
 *     senses should not weigh ten times a common one. */
#ifndef TRANSLATE_CEDICT_H
#define TRANSLATE_CEDICT_H

#include <stdbool.h>
#include <stddef.h>

#define CEDICT_MAX_WORDS 4
#define CEDICT_MAX_SENSES 3

/* The columns of entries.tsv (../shared/data/cc-cedict/README), which
 * sources.c (the glosses), names.c (the names) and simplify.c (the
 * Traditional → Simplified table) read through corpus_load. */
enum { CEDICT_SIMPLIFIED = 0, CEDICT_TRADITIONAL = 1, CEDICT_PINYIN = 2, CEDICT_SENSES = 3 };

/* Is `simplified` a headword we train on (Han characters only)? */
bool cedict_headword_ok(const char *simplified);
/* The usable glosses of one entry's senses (the " / "-separated column),
 * cleaned as above: up to `max` strings, each freshly allocated (free()).
 * Returns how many. */
size_t cedict_glosses(const char *senses, char **out, size_t max);

#endif
