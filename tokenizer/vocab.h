/* vocab.h — token ↔ id, plus each token's usual casing; and building a
 * vocabulary from training text.
 *
 * File format (UTF-8 text, one token per line, id = line number - 1):
 *     token <TAB> cased <TAB> count [<TAB> cased in a word]
 * `token` is the case-folded form the model sees, `cased` the casing it
 * most often had in the training data where it was not the first word of
 * a sentence (anywhere, for a word only ever first; used when writing
 * English), `count` its training frequency.  The optional fourth field is
 * a subword piece's casing inside longer words, given only where it
 * differs from `cased` (below); without it the two are the same.
 * The first four lines are always
 *     <pad> <unk> <s> </s>
 * (ids 0..3).  A line starting with '#' before the first token is a
 * comment.  Tokens never contain TAB or newline (the tokenizer never makes
 * one).  A line may hold at most 4096 bytes; the builder leaves out longer
 * tokens.
 *
 * Two kinds of vocabulary share the format:
 *
 * Word vocabularies: each token is a whole tokenizer token; a token not
 * in the vocabulary is one <unk>.
 *
 * Subword vocabularies (the models shipped in weights/ use these): after the specials come the 448 byte tokens, in
 * this order: "<0xXX>" for each byte 00..FF that can start a UTF-8
 * character (not 80..BF), then "##<0xXX>" for every byte 00..FF.  Then the
 * pieces (tokenizer/bpe.h): a piece that starts a word is written as is
 * ("shang", "中", "."), one that continues a word carries "##" ("##hai").
 * A word token is encoded by greedy longest match from its start (the
 * whole word when it is in the vocabulary: "shanghai" → shang ##hai unless
 * "shanghai" is a piece); a non-word token (Han/kana, punctuation) is one
 * piece; a character with no piece becomes its UTF-8 bytes, the first as
 * "<0xXX>" at the start of a token or "##<0xXX>" inside one, the rest
 * "##<0xXX>".  So nothing is <unk>, and joining a token's pieces (dropping
 * the "##") gives it back byte for byte.  No learned piece holds a digit
 * with anything else: 1990 → 1 ##9 ##9 ##0.  A vocabulary holding any byte
 * token is a subword one and must hold all 448.
 *
 * Casing in a subword vocabulary: a piece's `cased` (with the same "##")
 * is the casing its letters most often had where it occurs, counting the
 * words it encodes, each casing of a word weighted by its count: first
 * where the piece is the whole word and the word is not sentence-initial,
 * else inside longer words (not sentence-initial), else where it is the
 * whole word at a sentence start; the byte tokens' is themselves.  So "t"
 * stays lower case although "Tom" starts with it, and the "s" of "She"
 * says nothing.  A piece's casing inside longer words (the fourth field)
 * counts only those: "st" is "St" as a word ("St Paul"), but lower case in
 * "stairs".  A word written with several pieces takes the `cased` of the
 * whole word when that is a token, else its pieces' casings inside words
 * joined ("Shang" + "##hai" → "Shanghai"); see detokenize.h. */
#ifndef TRANSLATE_VOCAB_H
#define TRANSLATE_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"
#include "../common/output_file.h"
#include "../common/token_ids.h"

/* <pad>, <s> and </s> are the model's (common/token_ids.h); <unk> is ours. */
enum { VOCAB_PAD = TOKEN_PAD, VOCAB_UNK = 1, VOCAB_BOS = TOKEN_BOS, VOCAB_EOS = TOKEN_EOS, VOCAB_SPECIALS = 4 };
/* The byte tokens of a subword vocabulary: 192 starting + 256 continuing. */
enum { VOCAB_BYTE_TOKENS = 448 };

typedef struct Vocab Vocab;

/* Load a vocabulary file.  Errors name path:line ("x.vocab:12: duplicate
 * token 'the'"), a missing/unreadable file, or bad specials. */
Vocab *vocab_load(const char *path, Error *err);
void vocab_free(Vocab *vocab); /* NULL-safe */

int vocab_size(const Vocab *vocab);
/* Is it a subword vocabulary (see above)? */
int vocab_is_subword(const Vocab *vocab);
/* id of a case-folded token, or VOCAB_UNK when absent. */
int vocab_id(const Vocab *vocab, const char *token);
/* The folded token / its usual casing for an id in [0, size). */
const char *vocab_token(const Vocab *vocab, int id);
const char *vocab_cased(const Vocab *vocab, int id);
/* A stable hash of the token list (not counts, not casing): recorded in the
 * weights file so a model is never run with the wrong vocabulary. */
uint64_t vocab_hash(const Vocab *vocab);

/* The ids of one token (a `folded` string from tokenize) into ids[], with
 * ends[k] the byte in `token` where piece k ends (the last is its length).
 * Both arrays need room for strlen(token) entries (never more pieces than
 * bytes).  Returns the number of ids: 1 in a word vocabulary (VOCAB_UNK
 * when absent), at least 1 in a subword one (never VOCAB_UNK). */
size_t vocab_encode_token(const Vocab *vocab, const char *token, int *ids, size_t *ends);

/* Which of a token's forms vocab_piece gives: the folded token, its
 * casing, or its casing inside longer words. */
typedef enum { VOCAB_FOLDED, VOCAB_CASED, VOCAB_CASED_IN_WORD } VocabForm;

/* What piece `id` adds to its word when pieces are joined: its token in
 * `form`, without the "##"; for a byte token that one byte (as a 1-byte
 * string; "" for 0x00, which no text has).  *continues: does it continue
 * the word before it?  In a word vocabulary: the token itself, never
 * continuing.  Specials are themselves. */
const char *vocab_piece(const Vocab *vocab, int id, VocabForm form, int *continues);

/* Building a vocabulary from training text (tokenizer/vocab_builder.c;
 * app/train.c's --vocab and --recase, and the tests, use it).
 * Counts are per folded token; with each count goes the token's casing
 * there, kept apart for sentence-initial words (the first word of a text,
 * or after . ? ! and any quotes), whose capital says nothing.  A token's
 * usual casing is the most frequent of its other occurrences, or of all of
 * them when it was only ever sentence-initial (ties by bytes). */
typedef struct VocabBuilder VocabBuilder;
VocabBuilder *vocab_builder_new(void);
/* Tokenise one text and add its tokens, each counted `weight` times (a
 * data source's sampling weight; > 0).  -1 with err for text the tokenizer
 * rejects ("invalid UTF-8 at byte 7"); nothing is added then. */
int vocab_builder_add_text(VocabBuilder *b, const char *text, size_t len, double weight, Error *err);
/* Add one token occurrence, counted once, not sentence-initial. */
void vocab_builder_add(VocabBuilder *b, const char *folded, const char *surface);
/* The writers below fill `out` (common/output_file.h), which the caller
 * opened on the vocabulary's path and then commits, or aborts when they
 * fail: a model's two vocabularies are replaced together or not at all
 * (app/train.c prepares both before it commits either), as the model
 * records the hashes of both.  Messages name output_file_name(out). */
/* A word vocabulary: the `max_size - 4` most frequent tokens (ties by
 * bytes) with a count of at least `min_count`. */
int vocab_builder_write(const VocabBuilder *b, OutputFile *out, int max_size, int min_count, Error *err);
/* A subword vocabulary of at most `max_size` entries (specials, the 448
 * byte tokens, then pieces learned by tokenizer/bpe.h from the counts,
 * none rarer than `min_count`).  Fails when max_size leaves no room for a
 * piece.  Same counts, same file. */
int vocab_builder_write_subword(const VocabBuilder *b, OutputFile *out, int max_size, int min_count,
                                Error *err);
/* The subword vocabulary at output_file_name(out), rewritten into `out`
 * with its casings taken from b's counts: the same tokens in the same
 * order (so the same ids and hash: a model trained with it still loads)
 * and the same counts.  For a vocabulary built before its casing rules
 * changed, or from other text. */
int vocab_builder_recase(const VocabBuilder *b, OutputFile *out, Error *err);
void vocab_builder_free(VocabBuilder *b); /* NULL-safe */

#endif
