/* model.h — a Model, and its life cycle: loaded from or saved to a
 * safetensors file, or initialised at random, then freed.
 *
 * The file's tensors are named as in params.h (PyTorch's names); its
 * `__metadata__` records the architecture and the hashes of the two
 * vocabularies the model was trained with, so that a config or vocabulary
 * that disagrees with the weights is an error, not silent garbage. */
#ifndef TRANSLATE_MODEL_H
#define TRANSLATE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/error.h"
#include "arch.h"
#include "params.h"
#include "safetensors.h"

/* A model: its shape and its parameters (what transformer.h computes with). */
typedef struct {
    ModelArch arch;
    Params params;
} Model;

#define MODEL_FORMAT "translate-model"
#define MODEL_FORMAT_VERSION "1"

/* Which vocabularies a model belongs to (vocab_hash of each). */
typedef struct {
    uint64_t source, target;
} VocabHashes;

/* Load `path` into `model` (allocating its parameters), checking that the
 * file's metadata matches `arch` and `hashes` field by field, that every
 * expected tensor is present with the right shape, that there is no other
 * tensor, and that no value is NaN or infinite.  F16/BF16 are widened.
 * Errors: "path: ..." naming the field or tensor. */
int model_load(Model *model, const char *path, const ModelArch *arch, VocabHashes hashes,
               Error *err);

/* model_load for inference only (translating, evaluating): when every
 * matrix and embedding of the file is F16, a float16 kernel runs here
 * (gemm_f16.h) and d_model is a multiple of 16 (a panel's rows), they stay
 * float16 in memory (params.h: the `*_f16` fields; their float fields
 * NULL; the matrices packed into panels), half the bytes and no widening
 * at load; biases and LayerNorms are widened.  Other files load as
 * model_load does.  The same checks and errors.  Such a model
 * runs forward passes (transformer_encode/decode, decode.h, beam.h), never
 * training or saving. */
int model_load_inference(Model *model, const char *path, const ModelArch *arch, VocabHashes hashes,
                         Error *err);
/* Was it loaded so (matrices float16)? */
bool model_is_half(const Model *model);
/* Is the file at `path` a model that a writer of models may replace when
 * told to (translate --init-weights --force, train --overwrite): one that
 * begins as a safetensors file does (safetensors_looks_like: a model cut
 * short too), but not a training checkpoint or an export's file, which
 * are safetensors too (__metadata__ "checkpoint", "export_id"): replaced,
 * another run's resumable state was lost. */
bool model_file_replaceable(const char *path);


/* The longest safetensors header a file of `arch` (plus extra_tensors more,
 * e.g. a checkpoint's optimizer state) can need: 512 bytes per tensor and
 * 64 KiB of metadata.  model_load refuses a longer header before reading
 * it, so a header's parse costs a small multiple of what the model needs,
 * never of the 100 MB the format allows. */
size_t model_header_limit(const ModelArch *arch, size_t extra_tensors);

/* Write `model` to `path` (through common/output_file.h: a regular file is
 * replaced atomically, temp file + rename). */
int model_save(const Model *model, const char *path, VocabHashes hashes, Error *err);

/* The same with the parameters stored as `dtype` (DTYPE_F32 or DTYPE_F16)
 * and more tensors and metadata in the file (a training checkpoint adds
 * the optimizer state). */
int model_save_with(const Model *model, const char *path, VocabHashes hashes, Dtype dtype,
                    const SafeWriteTensor *extra, size_t extra_count, const SafeMeta *meta,
                    size_t meta_count, Error *err);

/* model_load from a file already opened, accepting (and leaving to the
 * caller) the tensors named in `extra_names` (NULL-terminated; NULL: none),
 * e.g. a checkpoint's optimizer state. */
int model_load_from(Model *model, const SafeFile *file, const ModelArch *arch,
                    VocabHashes hashes, const char *const *extra_names, Error *err);

/* Allocate `model` for `arch` and fill it with seeded random values:
 * Xavier-uniform matrices, N(0, 1/D) embeddings, and small random biases
 * and LayerNorm parameters (so that tests exercise every tensor).  The same
 * seed gives the same model on every machine. */
void model_init_random(Model *model, const ModelArch *arch, uint64_t seed);

/* The initialisation training starts from: the same matrices and
 * embeddings, but zero biases and LayerNorms at weight 1, bias 0 (PyTorch
 * starts the attention biases and LayerNorms so; its feed-forward biases,
 * linear1.bias and linear2.bias, start uniform: ours at zero); the queries
 * as `queries` says. */
void model_init_training(Model *model, const ModelArch *arch, uint64_t seed, QueryInit queries);

void model_free(Model *model); /* NULL-safe, leaves it zeroed */

#endif
