/* names.h — training pairs that teach copying Latin-letter words: a name
 * both sides of a pair share (Tom / 汤姆, Boston / 波士顿) replaced on both
 * sides by one random word of Latin letters (Tom / 汤姆 → Kavelo / Kavelo).
 *
 * Why: a name, brand or placeholder the vocabulary has never seen should
 * pass through a translation unchanged ("I bought an iPhone." → 我买了一个
 * iPhone。).  The Chinese of our sources almost never holds Latin letters
 * (the 2025 Tatoeba additions none, the Wiktionary examples none, train.tsv
 * 234 lines, mostly "Tom"), so the models never saw a word copied and
 * replaced one with Chinese they knew ("I bought an iPhone." → 我买了一台风。).
 *
 * The names come from a CC-CEDICT file: an entry of two or more Han
 * characters whose first usable sense (cedict_glosses: the first it keeps)
 * is one capitalised word ("Boston, capital
 * of Massachusetts" → Boston; "Tom (name)" → Tom) or two joined by "or"
 * ("Mary or Marie (name)" → Mary, Marie).  "United States" and other
 * names of several words are left out: one word of the two would be
 * replaced.  A pair has a name when its English holds the word once, as a
 * whole word with its capital, and its Chinese holds the headword once.
 *
 * The replacement is drawn from a hash of the pair, so a pair always gets
 * the same word (a resumed run sees the same data).  Its shape is drawn
 * too, as the words a user types take them: one capital ("X", as in a
 * placeholder or "Plan B"), a pronounceable name ("Kavelo"), an acronym
 * of 2 to 4 capitals ("NBA"), or a name behind a small letter ("iKavo"). */
#ifndef TRANSLATE_NAMES_H
#define TRANSLATE_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/error.h"

typedef struct NameTable NameTable;

/* The names of the CC-CEDICT entries.tsv at `path` (simplified <TAB>
 * traditional <TAB> pinyin <TAB> senses), or NULL with err set. */
NameTable *names_load(const char *path, Error *err);
void names_free(NameTable *names); /* NULL-safe */
size_t names_count(const NameTable *names); /* (English word, headword) entries */

/* If the pair (english, chinese) has a name, its copies with the name
 * replaced by a random Latin word (freshly allocated: free() both), and
 * true; else false and both NULL. */
bool names_to_latin(const NameTable *names, const char *english, const char *chinese,
                    char **english_out, char **chinese_out);

#endif
