/* simplify.h — Traditional → Simplified Chinese, character by character,
 * from a table built at run time out of CC-CEDICT's entries.tsv
 * (simplified <TAB> traditional <TAB> ...).
 *
 * Why from CC-CEDICT: the data is already here, and it is the dictionary
 * the rest of the pipeline uses, so no new dependency (OpenCC) is needed.
 * How the table is built (CC-CEDICT lists one entry per reading, and one
 * character may be Simplified in one word and Traditional in another):
 *   - Candidates: characters that a single-character entry writes
 *     differently in Traditional (個 → 个, 後 → 后), so a character never
 *     changes from multi-character evidence alone.
 *   - Never converted: a character that a single-character entry writes
 *     as its Simplified form, the same in both scripts (著 "to write", 乾
 *     "surname Qian", 於 "surname Yu") or not (苧 of 薴, 麽 of 麼): it is
 *     valid Simplified, and converting it would corrupt correct text
 *     (著名 → 着名), while leaving it only misses a Traditional use
 *     (睡著).  It also keeps the table from chains (薴 → 苧 → 苎), so
 *     text simplified twice reads as simplified once.
 *   - The rest by votes over every entry whose two headwords have the same
 *     number of characters, aligned position by position: each position
 *     with traditional t written s (t != s) is a vote "t → s"; each
 *     character c of a Simplified headword is a vote "c stays c".  The
 *     form with the most votes wins; a tie keeps the character, else goes
 *     to the form seen first.  So 么 stays 么 (什么, 怎么 outvote the entry
 *     that lists 么 as the old form of 幺), and 宁 stays 宁, while 麼 → 么,
 *     裡 → 里, 髮 → 发.
 * What it deliberately does not do: phrase-level conversion (OpenCC's
 * 頭髮 → 头发 by context); the votes make the common reading win.  Text
 * that is not valid UTF-8 is returned unchanged (the tokenizer rejects it
 * later). */
#ifndef TRANSLATE_SIMPLIFY_H
#define TRANSLATE_SIMPLIFY_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

typedef struct Simplifier Simplifier;

/* Build the table from `entries_path`; NULL with err = "path:line: ..." on a
 * read error or a line with fewer than two columns. */
Simplifier *simplify_load(const char *entries_path, Error *err);
void simplify_free(Simplifier *s); /* NULL-safe */
/* Characters in the table (the traditional ones that change). */
size_t simplify_size(const Simplifier *s);
/* The Simplified form of code point cp (cp itself when not in the table). */
int32_t simplify_char(const Simplifier *s, int32_t cp);
/* `text` with every mapped character replaced, freshly allocated (free()).
 * *changed (may be NULL) is set to the number of characters replaced. */
char *simplify_text(const Simplifier *s, const char *text, size_t *changed);
/* *text (malloc'd) replaced by simplify_text's copy, the old one freed;
 * returns the number of characters replaced. */
size_t simplify_in_place(const Simplifier *s, char **text);

/* The table as a file: a line "simplified <TAB> traditional" per
 * character, in code point order (the columns of CC-CEDICT's entries, so
 * simplify_load reads it back as the same table too: each line a
 * one-character entry, no chains).  About 30 KB instead of the dictionary's
 * 10 MB, for translating (app/translator.h).  Written through
 * common/output_file.h; 0, or -1 with "path: ...". */
int simplify_save(const Simplifier *s, const char *path, Error *err);
/* Such a table read as it is, without simplify_load's votes (which cost
 * every translating process about 1 ms at its start; read as it is, the
 * table's cost is within hyperfine's noise); NULL
 * with "path:line: ..." for a line that is not two characters outside
 * ASCII and a tab (a CC-CEDICT file is not a table: train
 * --simplify-table makes one), a character listed twice, or no line at
 * all.  A byte order mark before the first line is skipped. */
Simplifier *simplify_load_table(const char *path, Error *err);

#endif
