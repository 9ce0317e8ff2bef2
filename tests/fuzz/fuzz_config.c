/* fuzz_config.c — arbitrary bytes as a YAML config (written to a scratch
 * file, then config_load).  A rejection is one line naming the file; an
 * accepted config satisfies the ranges config.h promises. */
#include "fuzz.h"

#include "../../app/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch_file(".yaml", data, size);
    Config cfg;
    Error err = {{0}};
    if (config_load(path, &cfg, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        FUZZ_CHECK(strncmp(err.message, path, strlen(path)) == 0);
        return 0;
    }
    const ModelArch *a = &cfg.arch;
    FUZZ_CHECK(a->d_model >= 1 && a->heads >= 1 && a->d_model % a->heads == 0);
    FUZZ_CHECK(a->encoder_layers >= 1 && a->decoder_layers >= 1 && a->d_ff >= 1);
    FUZZ_CHECK(a->max_len >= 2);
    FUZZ_CHECK(cfg.weights_path && cfg.source_vocab_path && cfg.target_vocab_path);
    FUZZ_CHECK(cfg.decode.beam >= 1);
    config_free(&cfg);
    return 0;
}
