/* acts.c — sizing and carving the activations (see acts.h). */
#include "acts.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parallel.h"

/* ---- sizes --------------------------------------------------------------- */

ActsSize acts_size_full(const ModelArch *arch, int src_rows, int tgt_rows, int longest)
{
    size_t H = (size_t)arch->heads;
    ActsSize s = {src_rows, tgt_rows, tgt_rows, 0, 0, 0, false, false, false};
    /* Σ_b S_b² <= longest · Σ_b S_b, and likewise for the other maps. */
    s.enc_probs = H * (size_t)longest * (size_t)src_rows;
    s.dec_probs = H * (size_t)longest * (size_t)tgt_rows;
    s.cross_probs = H * (size_t)longest * (size_t)tgt_rows;
    return s;
}

ActsSize acts_size_steps(const ModelArch *arch, int targets, int cap, int src_rows, int src_longest)
{
    size_t H = (size_t)arch->heads, B = (size_t)targets, T = (size_t)cap, Ns = (size_t)src_rows;
    ActsSize s = {src_rows, targets, targets * cap, 0, 0, 0, false, false, false};
    s.enc_probs = H * (size_t)src_longest * Ns;
    s.dec_probs = H * B * T * T;
    s.cross_probs = H * T * Ns; /* Σ_b T · S_b */
    return s;
}

ActsSize acts_size_batched(ActsSize size)
{
    size.one_encoder_layer = true;
    return size;
}

ActsSize acts_size_gradient(ActsSize size)
{
    ASSERT(!size.one_encoder_layer); /* backward reads every layer's activations */
    size.dropout = false;
    size.gradient = true;
    return size;
}

/* ---- carving ------------------------------------------------------------- */

/* Buffers are carved from one block: a first pass with base == NULL only
 * measures, the second assigns. */
typedef struct {
    float *base;
    size_t used;
} Carver;

/* Every buffer starts on a cache line: the block does (first_line) and
 * each size is rounded up to LINE_FLOATS.  The kernels load 16 floats at a
 * time along rows; from a row that starts off a line every such load
 * straddles two lines and costs two.  (Rows of 256 floats were, but a
 * buffer of one float per row, the mean or rstd of a layer norm, shifted
 * everything carved after it.) */
enum { LINE_FLOATS = 64 / sizeof(float) };

static float *carve(Carver *c, size_t n)
{
    float *p = c->base ? c->base + c->used : NULL;
    c->used += (n + LINE_FLOATS - 1) / LINE_FLOATS * LINE_FLOATS;
    return p;
}

/* The first cache line in an allocation of LINE_FLOATS floats more than
 * the block needs.  (calloc, not aligned_alloc and memset: a fresh large
 * block comes zeroed from the kernel, its pages touched only when used.) */
static float *first_line(void *allocation)
{
    return (float *)(((uintptr_t)allocation + 63) & ~(uintptr_t)63);
}

static void carve_norm(Carver *c, NormActs *a, size_t N, size_t D, bool gradient)
{
    a->out = carve(c, N * D);
    a->mean = gradient ? NULL : carve(c, N);
    a->rstd = gradient ? NULL : carve(c, N);
}

static void carve_attention(Carver *c, AttentionActs *a, size_t q_rows, size_t kv_rows,
                            size_t probs, size_t D, bool dropout, bool gradient)
{
    a->q = carve(c, q_rows * D);
    a->k = carve(c, kv_rows * D);
    a->v = carve(c, kv_rows * D);
    a->probs = gradient ? NULL : carve(c, probs);
    if (!gradient) {  /* else carve_written */
        a->context = carve(c, q_rows * D);
        a->out = carve(c, q_rows * D);
    }
    a->out_mask = dropout ? carve(c, q_rows * D) : NULL;
}

static void carve_ffn(Carver *c, FeedForwardActs *a, size_t N, size_t D, size_t F, bool dropout,
                      bool gradient)
{
    if (!gradient) {  /* else carve_written */
        a->hidden_pre = carve(c, N * F);
        a->hidden = carve(c, N * F);
        a->out = carve(c, N * D);
    }
    a->hidden_mask = dropout ? carve(c, N * F) : NULL;
    a->out_mask = dropout ? carve(c, N * D) : NULL;
}

/* A gradient set's buffers that backward writes whole before anything
 * reads them (layers.h's WRITES but the logits'), carved after the
 * logits, where acts_zero_gradient does not clear: each block's output,
 * each attention's context and each feed-forward hidden layer, before and
 * after the activation.  For en-zh's 2,500-token batches, 97 of the 179
 * MB a step used to clear. */
static void carve_written_attention(Carver *c, AttentionActs *a, size_t N, size_t D)
{
    a->context = carve(c, N * D);
    a->out = carve(c, N * D);
}

static void carve_written_ffn(Carver *c, FeedForwardActs *a, size_t N, size_t D, size_t F)
{
    a->hidden_pre = carve(c, N * F);
    a->hidden = carve(c, N * F);
    a->out = carve(c, N * D);
}

static void carve_written(Carver *c, Activations *a, const ModelArch *arch)
{
    size_t D = (size_t)arch->d_model, F = (size_t)arch->d_ff;
    size_t Ns = (size_t)a->size.src_rows, Nt = (size_t)a->size.tgt_rows;
    for (int l = 0; l < arch->encoder_layers; l++) {
        carve_written_attention(c, &a->encoder[l].self_attn, Ns, D);
        carve_written_ffn(c, &a->encoder[l].ffn, Ns, D, F);
    }
    for (int l = 0; l < arch->decoder_layers; l++) {
        carve_written_attention(c, &a->decoder[l].self_attn, Nt, D);
        carve_written_attention(c, &a->decoder[l].cross_attn, Nt, D);
        carve_written_ffn(c, &a->decoder[l].ffn, Nt, D, F);
    }
}

static void carve_all(Carver *c, Activations *a, const ModelArch *arch)
{
    size_t D = (size_t)arch->d_model, F = (size_t)arch->d_ff, V = (size_t)arch->tgt_vocab;
    size_t Ns = (size_t)a->size.src_rows, Nt = (size_t)a->size.tgt_rows;
    bool drop = a->size.dropout, grad = a->size.gradient;
    a->src_x = carve(c, Ns * D);
    a->src_mask = drop ? carve(c, Ns * D) : NULL;
    for (int l = 0; l < arch->encoder_layers; l++) {
        EncoderLayerActs *e = &a->encoder[l];
        if (l > 0 && a->size.one_encoder_layer) {
            *e = a->encoder[0];
            continue;
        }
        carve_attention(c, &e->self_attn, Ns, Ns, a->size.enc_probs, D, drop, grad);
        carve_ffn(c, &e->ffn, Ns, D, F, drop, grad);
        carve_norm(c, &e->norm1, Ns, D, grad);
        carve_norm(c, &e->norm2, Ns, D, grad);
        e->res1 = carve(c, Ns * D);
        e->res2 = carve(c, Ns * D);
    }
    carve_norm(c, &a->encoder_norm, Ns, D, grad);
    a->tgt_x = carve(c, Nt * D);
    a->tgt_mask = drop ? carve(c, Nt * D) : NULL;
    for (int l = 0; l < arch->decoder_layers; l++) {
        DecoderLayerActs *d = &a->decoder[l];
        carve_attention(c, &d->self_attn, Nt, (size_t)a->size.kv_rows, a->size.dec_probs, D, drop, grad);
        carve_attention(c, &d->cross_attn, Nt, Ns, a->size.cross_probs, D, drop, grad);
        carve_ffn(c, &d->ffn, Nt, D, F, drop, grad);
        carve_norm(c, &d->norm1, Nt, D, grad);
        carve_norm(c, &d->norm2, Nt, D, grad);
        carve_norm(c, &d->norm3, Nt, D, grad);
        d->res1 = carve(c, Nt * D);
        d->res2 = carve(c, Nt * D);
        d->res3 = carve(c, Nt * D);
    }
    carve_norm(c, &a->decoder_norm, Nt, D, grad);
    a->logits = carve(c, Nt * V); /* from here on, not cleared: see acts_zero_gradient */
    if (grad) carve_written(c, a, arch);
}

/* `a` zeroed but for its size and per-layer arrays (allocated), and the
 * floats its buffers take. */
static size_t acts_start(Activations *a, const ModelArch *arch, ActsSize size)
{
    memset(a, 0, sizeof *a);
    a->size = size;
    a->heads = arch->heads;
    a->encoder = xcalloc((size_t)arch->encoder_layers, sizeof *a->encoder);
    a->decoder = xcalloc((size_t)arch->decoder_layers, sizeof *a->decoder);
    Carver measure = {NULL, 0};
    carve_all(&measure, a, arch);
    return measure.used;
}

/* Point every buffer of `a` (from acts_start) into `block` of `floats`,
 * in `allocation` (first_line). */
static void acts_carve(Activations *a, const ModelArch *arch, float *block, void *allocation, size_t floats)
{
    a->allocation = allocation;
    a->block = block;
    a->block_size = floats;
    Carver assign = {block, 0};
    carve_all(&assign, a, arch);
}

void acts_alloc(Activations *a, const ModelArch *arch, ActsSize size)
{
    size_t floats = acts_start(a, arch, size);
    void *allocation = xcalloc(floats + LINE_FLOATS, sizeof(float));
    acts_carve(a, arch, first_line(allocation), allocation, floats);
}

static bool covers(ActsSize have, ActsSize need)
{
    return have.src_rows >= need.src_rows && have.tgt_rows >= need.tgt_rows && have.kv_rows >= need.kv_rows &&
           have.enc_probs >= need.enc_probs && have.dec_probs >= need.dec_probs &&
           have.cross_probs >= need.cross_probs && (!have.one_encoder_layer || need.one_encoder_layer);
}

size_t acts_bytes(const ModelArch *arch, ActsSize size)
{
    Activations a;
    size_t floats = acts_start(&a, arch, size);
    acts_free(&a);
    return floats * sizeof(float);
}

bool acts_reserve(Activations *work, const ModelArch *arch, ActsSize size)
{
    if (work->block && covers(work->size, size)) return true;
    Activations fresh;
    size_t floats = acts_start(&fresh, arch, size);
    void *allocation = calloc(floats + LINE_FLOATS, sizeof(float));
    if (!allocation) {
        acts_free(&fresh);
        return false;
    }
    acts_free(work);
    acts_carve(&fresh, arch, first_line(allocation), allocation, floats);
    *work = fresh;
    return true;
}

/* As it is when every buffer is at least that big (the passes locate
 * everything from the batch, within those bounds), else reallocated to the
 * larger of each size, so a few calls settle on one allocation. */
void acts_fit(Activations *work, const ModelArch *a, ActsSize need)
{
    if (work->block && covers(work->size, need)) return;
    if (work->block) {
        /* Every size at least what it was, and one that must grow by half
         * more again: batches in no particular order (--eval's) each grew
         * one size a little and got a fresh block, whose pages faulted in
         * anew (~200,000 page faults, a quarter of --eval's time). */
        ActsSize have = work->size;
#define GROW(f) if (have.f >= need.f) need.f = have.f; else need.f += need.f / 2
        GROW(src_rows); GROW(tgt_rows); GROW(kv_rows); GROW(enc_probs); GROW(dec_probs); GROW(cross_probs);
#undef GROW
        acts_free(work);
    }
    acts_alloc(work, a, need);
}

/* Zeroing was 6% of a 1-thread training step on an Intel Xeon (perf): the
 * logits' gradient alone is Nt·V floats, 31 of the 291 MB then zeroed. */
void acts_zero_gradient(Activations *g)
{
    ASSERT(g->size.gradient);
    parallel_zero(g->block, (size_t)(g->logits - g->block));
}

void acts_free(Activations *a)
{
    if (!a) return;
    free(a->allocation);
    free(a->encoder);
    free(a->decoder);
    memset(a, 0, sizeof *a);
}
