/* fuzz_tokenizer.c — arbitrary bytes through the tokenizer and both
 * detokenizers.  Invalid text must be refused with a one-line message;
 * valid text must give non-empty tokens without white space or control
 * characters, at increasing byte offsets inside the input. */
#include "fuzz.h"

#include "../../tokenizer/detokenize.h"
#include "../../tokenizer/tokenizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    int han = tokenizer_reads_as_han(text, size);
    FUZZ_CHECK(han >= -1 && han <= 1);
    TokenList tokens;
    Error err = {{0}};
    if (tokenize(text, size, &tokens, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        return 0;
    }
    for (size_t i = 0; i < tokens.count; i++) {
        FUZZ_CHECK(tokens.folded[i][0] != '\0' && tokens.surface[i][0] != '\0');
        FUZZ_CHECK(strpbrk(tokens.folded[i], " \t\r\n") == NULL);
        FUZZ_CHECK(tokens.offset[i] < size);
        FUZZ_CHECK(i == 0 || tokens.offset[i] >= tokens.offset[i - 1]);
    }
    const char *const *folded = (const char *const *)tokens.folded;
    const char *const *surface = (const char *const *)tokens.surface;
    const char *langs[] = {"en", "zh", "xx"};
    for (size_t k = 0; k < sizeof langs / sizeof langs[0]; k++) {
        char *joined = detokenize(folded, surface, tokens.count, langs[k]);
        FUZZ_CHECK(joined != NULL);
        free(joined);
    }
    token_list_free(&tokens);
    return 0;
}
