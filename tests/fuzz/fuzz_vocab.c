/* fuzz_vocab.c — arbitrary bytes as a vocabulary file (written to a
 * scratch file, then vocab_load).  An accepted vocabulary starts with the
 * four specials, maps every token back to its own id and has a casing
 * (and one inside words) for each. */
#include "fuzz.h"

#include "../../tokenizer/vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch_file(".vocab", data, size);
    Error err = {{0}};
    Vocab *v = vocab_load(path, &err);
    if (!v) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        return 0;
    }
    FUZZ_CHECK(vocab_size(v) >= VOCAB_SPECIALS);
    FUZZ_CHECK(strcmp(vocab_token(v, VOCAB_UNK), "<unk>") == 0);
    for (int id = 0; id < vocab_size(v); id++) {
        FUZZ_CHECK(vocab_id(v, vocab_token(v, id)) == id);
        FUZZ_CHECK(vocab_cased(v, id)[0] != '\0');
        int continues;
        FUZZ_CHECK(vocab_piece(v, id, VOCAB_CASED_IN_WORD, &continues) != NULL);
    }
    vocab_free(v);
    return 0;
}
