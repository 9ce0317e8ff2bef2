/* params.c — the descriptor list and the flat parameter block. */
#include "params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../common/util.h"
#include "gemm_f16.h"
#include "gemm_i8.h"

typedef struct {
    ParamSpec *items;
    size_t count, cap;
} SpecList;

/* buf = a + b, cut to size - 1 bytes as snprintf("%s%s") would: a model
 * load describes its ~100 tensors four times, and snprintf was 7% of the
 * instructions of translate's start-up (callgrind). */
static void concat(char *buf, size_t size, const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > size - 1) na = size - 1;
    if (nb > size - 1 - na) nb = size - 1 - na;
    memcpy(buf, a, na);
    memcpy(buf + na, b, nb);
    buf[na + nb] = '\0';
}

/* Append one tensor named prefix + suffix; cols == 0 means a vector.  It
 * follows the previous tensor in the flat block. */
static void add_int8(SpecList *list, float **slot, uint16_t **half_slot, Int8Matrix *int8_slot, ParamKind kind,
                     size_t rows, size_t cols, const char *prefix, const char *suffix)
{
    if (list->count == list->cap) {
        list->cap = list->cap ? 2 * list->cap : 64;
        list->items = xrealloc(list->items, list->cap * sizeof *list->items);
    }
    ParamSpec *s = &list->items[list->count++];
    memset(s, 0, sizeof *s);
    if (list->count > 1) s->offset = s[-1].offset + s[-1].numel;
    concat(s->name, sizeof s->name, prefix, suffix);
    s->ndim = cols ? 2 : 1;
    s->shape[0] = rows;
    s->shape[1] = cols;
    s->numel = cols ? rows * cols : rows;
    s->slot = slot;
    s->half_slot = half_slot;
    s->int8_slot = int8_slot;
    s->packed = half_slot && kind == PARAM_MATRIX;
    s->data = *slot;
    s->kind = kind;
}

/* A tensor without an int8 twin. */
static void add(SpecList *list, float **slot, uint16_t **half_slot, ParamKind kind, size_t rows,
                size_t cols, const char *prefix, const char *suffix)
{
    add_int8(list, slot, half_slot, NULL, kind, rows, cols, prefix, suffix);
}

/* nn.MultiheadAttention's four tensors, under prefix "...self_attn." */
static void add_attention(SpecList *l, AttentionParams *p, const char *prefix, size_t D)
{
    add_int8(l, &p->in_proj_weight, &p->in_proj_weight_f16, &p->in_proj_weight_i8, PARAM_MATRIX, 3 * D, D, prefix,
             "in_proj_weight");
    add(l, &p->in_proj_bias, NULL, PARAM_BIAS, 3 * D, 0, prefix, "in_proj_bias");
    add_int8(l, &p->out_proj_weight, &p->out_proj_weight_f16, &p->out_proj_weight_i8, PARAM_MATRIX, D, D, prefix,
             "out_proj.weight");
    add(l, &p->out_proj_bias, NULL, PARAM_BIAS, D, 0, prefix, "out_proj.bias");
}

static void add_ffn(SpecList *l, FeedForwardParams *p, const char *prefix, size_t D, size_t F)
{
    add_int8(l, &p->linear1_weight, &p->linear1_weight_f16, &p->linear1_weight_i8, PARAM_MATRIX, F, D, prefix,
             "linear1.weight");
    add(l, &p->linear1_bias, NULL, PARAM_BIAS, F, 0, prefix, "linear1.bias");
    add_int8(l, &p->linear2_weight, &p->linear2_weight_f16, &p->linear2_weight_i8, PARAM_MATRIX, D, F, prefix,
             "linear2.weight");
    add(l, &p->linear2_bias, NULL, PARAM_BIAS, D, 0, prefix, "linear2.bias");
}

/* A LayerNorm under prefix, e.g. "...layers.0.norm1." */
static void add_norm(SpecList *l, NormParams *p, const char *prefix, size_t D)
{
    add(l, &p->weight, NULL, PARAM_NORM_WEIGHT, D, 0, prefix, "weight");
    add(l, &p->bias, NULL, PARAM_BIAS, D, 0, prefix, "bias");
}

/* Buffer for "<layer prefix><part>" names. */
static const char *join(char *buf, size_t size, const char *layer, const char *part)
{
    concat(buf, size, layer, part);
    return buf;
}

size_t params_describe(const ModelArch *arch, Params *p, ParamSpec **specs)
{
    SpecList l = {0};
    size_t D = (size_t)arch->d_model, F = (size_t)arch->d_ff;
    char layer[64], part[96];
    add(&l, &p->src_embed, &p->src_embed_f16, PARAM_EMBEDDING, (size_t)arch->src_vocab, D, "src_embed.",
        "weight");
    add_int8(&l, &p->tgt_embed, &p->tgt_embed_f16, arch->tied_output ? &p->generator_weight_i8 : NULL,
             PARAM_EMBEDDING, (size_t)arch->tgt_vocab, D, "tgt_embed.", "weight");
    l.items[l.count - 1].packed = arch->tied_output; /* the generator's too */
    for (int i = 0; i < arch->encoder_layers; i++) {
        EncoderLayerParams *e = &p->encoder[i];
        snprintf(layer, sizeof layer, "transformer.encoder.layers.%d.", i);
        add_attention(&l, &e->self_attn, join(part, sizeof part, layer, "self_attn."), D);
        add_ffn(&l, &e->ffn, layer, D, F);
        add_norm(&l, &e->norm1, join(part, sizeof part, layer, "norm1."), D);
        add_norm(&l, &e->norm2, join(part, sizeof part, layer, "norm2."), D);
    }
    add_norm(&l, &p->encoder_norm, "transformer.encoder.norm.", D);
    for (int i = 0; i < arch->decoder_layers; i++) {
        DecoderLayerParams *d = &p->decoder[i];
        snprintf(layer, sizeof layer, "transformer.decoder.layers.%d.", i);
        add_attention(&l, &d->self_attn, join(part, sizeof part, layer, "self_attn."), D);
        add_attention(&l, &d->cross_attn, join(part, sizeof part, layer, "multihead_attn."), D);
        add_ffn(&l, &d->ffn, layer, D, F);
        add_norm(&l, &d->norm1, join(part, sizeof part, layer, "norm1."), D);
        add_norm(&l, &d->norm2, join(part, sizeof part, layer, "norm2."), D);
        add_norm(&l, &d->norm3, join(part, sizeof part, layer, "norm3."), D);
    }
    add_norm(&l, &p->decoder_norm, "transformer.decoder.norm.", D);
    if (!arch->tied_output)
        add_int8(&l, &p->generator_weight, &p->generator_weight_f16, &p->generator_weight_i8, PARAM_MATRIX,
                 (size_t)arch->tgt_vocab, D, "generator.", "weight");
    add(&l, &p->generator_bias, NULL, PARAM_BIAS, (size_t)arch->tgt_vocab, 0, "generator.", "bias");
    *specs = l.items;
    return l.count;
}

size_t params_layout(const ModelArch *arch, ParamSpec **specs)
{
    /* Describe a Params with only its per-layer arrays, then unbind the
     * specs from it: their sizes and offsets are all a caller reads. */
    Params p = {0};
    p.encoder = xcalloc((size_t)arch->encoder_layers, sizeof *p.encoder);
    p.decoder = xcalloc((size_t)arch->decoder_layers, sizeof *p.decoder);
    size_t n = params_describe(arch, &p, specs);
    for (size_t i = 0; i < n; i++) (*specs)[i].slot = NULL, (*specs)[i].half_slot = NULL;
    free(p.encoder);
    free(p.decoder);
    return n;
}

/* The end of the last tensor. */
static size_t total_floats(const ParamSpec *specs, size_t n)
{
    return n ? specs[n - 1].offset + specs[n - 1].numel : 0;
}

size_t params_count(const ModelArch *arch)
{
    ParamSpec *specs;
    size_t n = params_layout(arch, &specs), count = total_floats(specs, n);
    free(specs);
    return count;
}

size_t params_tensor_count(const ModelArch *arch)
{
    ParamSpec *specs;
    size_t n = params_layout(arch, &specs);
    free(specs);
    return n;
}

void params_alloc(Params *p, const ModelArch *arch)
{
    memset(p, 0, sizeof *p);
    p->encoder = xcalloc((size_t)arch->encoder_layers, sizeof *p->encoder);
    p->decoder = xcalloc((size_t)arch->decoder_layers, sizeof *p->decoder);
    ParamSpec *specs;
    size_t n = params_describe(arch, p, &specs);
    p->count = total_floats(specs, n);
    p->data = big_calloc(p->count, sizeof(float));
    for (size_t i = 0; i < n; i++) *specs[i].slot = p->data + specs[i].offset;
    if (arch->tied_output) p->generator_weight = p->tgt_embed;
    free(specs);
}

void params_alloc_half(Params *p, const ModelArch *arch, bool with_block)
{
    memset(p, 0, sizeof *p);
    p->encoder = xcalloc((size_t)arch->encoder_layers, sizeof *p->encoder);
    p->decoder = xcalloc((size_t)arch->decoder_layers, sizeof *p->decoder);
    ParamSpec *specs;
    size_t n = params_describe(arch, p, &specs);
    for (size_t i = 0; i < n; i++) {
        if (specs[i].packed)
            p->panels_count += gemm_f16_panels_size((int)specs[i].shape[0], (int)specs[i].shape[1]);
        else if (specs[i].half_slot) p->half_count += specs[i].numel;
        else p->count += specs[i].numel;
    }
    if (with_block) p->half = big_calloc(p->half_count, sizeof(uint16_t));
    p->panels = big_calloc(p->panels_count, sizeof(uint16_t));
    p->data = big_calloc(p->count, sizeof(float));
    size_t floats = 0, halves = 0, packed = 0;
    for (size_t i = 0; i < n; i++) {
        if (specs[i].packed) {
            *specs[i].half_slot = p->panels + packed;
            packed += gemm_f16_panels_size((int)specs[i].shape[0], (int)specs[i].shape[1]);
        } else if (specs[i].half_slot) {
            *specs[i].half_slot = p->half ? p->half + halves : NULL;
            halves += specs[i].numel;
        } else {
            *specs[i].slot = p->data + floats;
            floats += specs[i].numel;
        }
    }
    if (arch->tied_output) p->generator_weight_f16 = p->tgt_embed_f16;
    free(specs);
}

void params_quantize_int8(Params *p, const ModelArch *arch)
{
    ParamSpec *specs;
    size_t n = params_describe(arch, p, &specs), values = 0, rows = 0;
    for (size_t i = 0; i < n; i++)
        if (specs[i].int8_slot) {
            values += specs[i].numel;
            rows += specs[i].shape[0];
        }
    /* the scales first (float alignment), then the values from a 64-byte
     * boundary (a cache line: the kernels stream them) */
    size_t scale_bytes = (rows * sizeof(float) + 63) & ~(size_t)63;
    p->int8_bytes = scale_bytes + values;
    p->int8 = big_calloc(p->int8_bytes, 1);
    float *scales = p->int8, *row = NULL;
    int8_t *q = (int8_t *)p->int8 + scale_bytes;
    for (size_t i = 0; i < n; i++) {
        const ParamSpec *s = &specs[i];
        if (!s->int8_slot) continue;
        size_t R = s->shape[0], C = s->shape[1];
        row = xrealloc(row, C * sizeof *row);
        const float *f32 = *s->slot;
        const uint16_t *f16 = s->half_slot ? *s->half_slot : NULL;
        *s->int8_slot = (Int8Matrix){q, scales};
        for (size_t r = 0; r < R; r++) {
            if (f16 && s->packed) gemm_f16_panel_row(row, f16, (int)r, (int)C);
            else if (f16) gemm_f16_widen(row, f16 + r * C, C);
            else memcpy(row, f32 + r * C, C * sizeof *row);
            scales[r] = gemm_i8_quantize_row(q + r * C, row, (int)C);
        }
        q += R * C;
        scales += R;
    }
    free(row);
    free(specs);
}

void params_free(Params *p)
{
    if (!p) return;
    big_free(p->int8, p->int8_bytes, 1);
    big_free(p->half, p->half_count, sizeof(uint16_t));
    big_free(p->panels, p->panels_count, sizeof(uint16_t));
    if (p->map) munmap(p->map, p->map_bytes);
    big_free(p->data, p->count, sizeof(float));
    free(p->encoder);
    free(p->decoder);
    memset(p, 0, sizeof *p);
}
