/* fuzz_safetensors.c — arbitrary bytes as a weights file (written to a
 * scratch file, then safetensors_open).  What the reader accepts must be
 * safe to use: every tensor inside the data area, of numel * dtype-size
 * bytes, convertible to float32.  Then the same file through the model
 * loader with the tiny config's architecture, which checks the metadata,
 * the shapes and the values. */
#include "fuzz.h"

#include "../../model/safetensors.h"
#include "../../model/model.h"

#include "../../tokenizer/vocab.h"

/* configs/tiny.yaml's architecture and vocabularies, so that the tiny
 * model's own file (a seed) passes the metadata check and mutations of it
 * reach the tensor checks. */
static ModelArch tiny = {
    .d_model = 16, .heads = 2, .encoder_layers = 2, .decoder_layers = 2, .d_ff = 32,
    .activation = ACTIVATION_GELU, .norm_first = 1, .max_len = 32, .scale_attention = 1,
    .tied_output = 1,
};
static VocabHashes hashes;

static void load_vocabs(void)
{
    if (tiny.src_vocab) return;
    Error err = {{0}};
    Vocab *src = vocab_load("tests/data/tiny.src.vocab", &err);
    Vocab *tgt = src ? vocab_load("tests/data/tiny.tgt.vocab", &err) : NULL;
    if (!tgt) {
        fprintf(stderr, "fuzz_safetensors: %s (run from the repository root)\n", err.message);
        abort();
    }
    tiny.src_vocab = vocab_size(src);
    tiny.tgt_vocab = vocab_size(tgt);
    hashes = (VocabHashes){vocab_hash(src), vocab_hash(tgt)};
    vocab_free(src);
    vocab_free(tgt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    load_vocabs();
    const char *path = fuzz_scratch_file(".safetensors", data, size);
    SafeFile file;
    Error err = {{0}};
    if (safetensors_open(path, &file, &err)) {
        FUZZ_CHECK(fuzz_one_line(err.message));
        return 0;
    }
    for (size_t i = 0; i < file.count; i++) {
        const SafeTensor *t = &file.tensors[i];
        FUZZ_CHECK(t->offset >= 8 && t->offset + t->nbytes <= file.file_size);
        FUZZ_CHECK(t->nbytes == t->numel * (t->dtype == DTYPE_F32 ? 4 : 2));
        float *out = malloc(t->numel ? t->numel * sizeof *out : 1);
        FUZZ_CHECK(out != NULL);
        FUZZ_CHECK(safetensors_to_f32(&file, t, out, &err) == 0);
        free(out);
        FUZZ_CHECK(safetensors_find(&file, t->name) != NULL);
    }
    Model model;
    if (model_load_from(&model, &file, &tiny, hashes, NULL, &err) == 0)
        model_free(&model);
    else
        FUZZ_CHECK(fuzz_one_line(err.message));
    safetensors_close(&file);
    return 0;
}
