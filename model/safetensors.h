/* safetensors.h — reading and writing the safetensors format.
 *
 * Layout: 8-byte little-endian header length N, then N bytes of JSON
 * {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 *  ..., "__metadata__": {"key": "string", ...}}, then the raw little-endian
 * tensor bytes; offsets are relative to the end of the header.
 * This module knows nothing about transformers: it opens a file, checks every
 * claim the header makes against the file, and reads tensors by name.
 * Its cJSON stays inside model/safetensors.c: callers see no JSON. */
#ifndef TRANSLATE_SAFETENSORS_H
#define TRANSLATE_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/error.h"

/* DTYPE_I32 is for writing only (train --export's token ids): the reader
 * refuses it like any other dtype it cannot widen to float32. */
typedef enum { DTYPE_F32, DTYPE_F16, DTYPE_BF16, DTYPE_I32 } Dtype;

#define SAFETENSORS_MAX_DIMS 8
#define SAFETENSORS_MAX_HEADER 100000000u /* 100 MB, as the reference implementation (its MAX_HEADER_SIZE) */

typedef struct {
    char *name;
    Dtype dtype;
    int ndim;
    size_t shape[SAFETENSORS_MAX_DIMS];
    size_t numel;           /* product of shape (checked for overflow) */
    size_t offset;          /* of its first byte in the file; may be unaligned */
    size_t nbytes;
} SafeTensor;

typedef struct {
    char *key, *value;
} SafeMeta;

typedef struct {
    const char *path;       /* borrowed from the caller for messages */
    int fd;                 /* open until safetensors_close (tensors are read on demand) */
    bool is_open;
    size_t file_size;
    size_t count;
    SafeTensor *tensors;    /* sorted by data offset */
    size_t meta_count;
    SafeMeta *meta;
} SafeFile;

/* Open and validate `path` (a regular file only, common/input_file.h):
 * header length within the file and the limit,
 * valid JSON object, known dtypes (F32, F16, BF16; anything else is an
 * error naming the tensor), shapes whose product does not overflow, byte
 * size == numel * dtype size, offsets inside the data area and not
 * overlapping.  Errors read "path: tensor 'x': ..." or "path: ...". */
int safetensors_open(const char *path, SafeFile *file, Error *err);
/* The same with a tighter bound on the header, checked before it is read
 * or parsed: JSON costs cJSON ~40 times its size in nodes, so a reader
 * that knows how many tensors it needs refuses a header longer than they
 * can take (model.h: model_header_limit). */
int safetensors_open_limited(const char *path, size_t max_header, SafeFile *file, Error *err);
void safetensors_close(SafeFile *file); /* NULL-safe; leaves file zeroed */

/* Does the regular file at `path` begin as a safetensors file does (an
 * 8-byte header length within the limit, then "{")?  A model, if maybe a
 * broken one (cut short, a bad header): what a writer of models may
 * replace when told to (translate --init-weights --force, train
 * --overwrite), unlike notes, data or a config named as the weights by
 * mistake. */
bool safetensors_looks_like(const char *path);

const SafeTensor *safetensors_find(const SafeFile *file, const char *name);
const char *safetensors_meta(const SafeFile *file, const char *key); /* NULL if absent */

/* Read a tensor of `file` as float32 into `out` (numel floats), widening
 * F16/BF16.  0, or -1 with "path: tensor 'x': cannot read: ..." when the
 * read fails or comes up short (the file was truncated since it was
 * opened). */
int safetensors_to_f32(const SafeFile *file, const SafeTensor *t, float *out, Error *err);
/* The whole file mapped read-only (free with munmap(map, file->file_size)),
 * or NULL when it cannot be (the caller then reads).  Valid after
 * safetensors_close.  A mapping shows the file as it is when read: a file
 * truncated while mapped makes reading past its new end a SIGBUS, so the
 * loader maps only what it checks at once, and files are only ever
 * replaced by rename (common/output_file.h), which leaves a mapped file
 * whole. */
void *safetensors_map(const SafeFile *file);
/* Its nbytes bytes as stored (e.g. to compare two files); same errors. */
int safetensors_read_raw(const SafeFile *file, const SafeTensor *t, void *out, Error *err);
/* Bytes from..from+n-1 of those (within them), as stored; same errors. */
int safetensors_read_part(const SafeFile *file, const SafeTensor *t, size_t from, size_t n, void *out,
                          Error *err);
/* One float16 (bits h) widened by the portable scalar code that
 * safetensors_to_f32 uses where there is no F16C and for the tail of a
 * tensor; exposed so tests can check it on all 65,536 values. */
float safetensors_f16_to_f32_scalar(uint16_t h);

/* Writing: F32 (or F16, or I32) tensors in the order given, metadata as given.  The file is
 * written through common/output_file.h (a temporary file renamed into place,
 * so a crash never leaves a half-written file under `path`).  Data offsets are 8-byte aligned after a
 * header padded with spaces, as the reference writer does. */
typedef struct {
    const char *name;
    int ndim;
    size_t shape[SAFETENSORS_MAX_DIMS];
    const void *data;       /* float32 values; int32 with DTYPE_I32 */
    Dtype dtype;            /* how to store it: DTYPE_F32 (0, the default) or DTYPE_F16
                               (rounded to nearest even; halves the file); or DTYPE_I32,
                               written as given */
} SafeWriteTensor;

int safetensors_write(const char *path, const SafeWriteTensor *tensors, size_t count,
                      const SafeMeta *meta, size_t meta_count, Error *err);

#endif
