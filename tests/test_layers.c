/* test_layers.c — every backward kernel of layers.h against finite
 * differences, plus the accumulate (+=) contract and the loss by hand.
 *
 * Each check builds a small Problem: the kernel's inputs (random, from a
 * seeded Rng), its output, and a random R that projects the output to a
 * scalar L = Σ out·R (summed in double).  dL/dout is then R, which is what
 * the backward is given; its gradients are compared with numeric ones from
 * central differences, one float perturbed at a time.  The forward kernels
 * work in float, so the differences carry rounding noise (about 1e-5 in
 * the gradient here): the tolerance is absolute + relative, and the
 * largest errors are printed for every operand. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../model/layers.h"
#include "../model/parallel.h"
#include "../model/vector.h"

#define FD_EPS 5e-2f  /* finite-difference step (see numeric_gradient) */
#define FD_ATOL 1e-4  /* pass: |analytic - numeric| <= ATOL + RTOL·max(|a|, |n|) */
#define FD_RTOL 1e-3
#define FD_REL_FLOOR 1e-2 /* the relative error printed divides by at least this */
#define MAX_OPERANDS 3
#define MAX_ALLOCS 16

/* ---- the problem a check works on ---------------------------------------- */

typedef struct {
    const char *name;
    float *x;      /* an input or parameter of the kernel */
    float *grad;   /* where the backward accumulates dL/dx */
    size_t n;
} Operand;

typedef struct Problem Problem;
struct Problem {
    const char *name;
    Operand op[MAX_OPERANDS];
    int ops;
    float *out, *r;  /* output [outs] and the projection R [outs] = dL/dout */
    size_t outs;
    void (*forward)(Problem *);
    void (*backward)(Problem *);  /* accumulates R's gradients into op[].grad */
    /* what the kernels need besides the operands */
    int N, I, O, D, H, V;
    float *mean, *rstd, *probs;   /* values the forward keeps for the backward */
    float *mask;                  /* dropout multipliers after the activation, or NULL */
    int *ids;
    Activation act;
    AttentionShape shape;
    float scale, smoothing;
    bool causal;
    int ignore_id;
    void *allocs[MAX_ALLOCS];
    int nallocs;
};

static void *problem_alloc(Problem *p, size_t n, size_t size)
{
    assert_true(p->nallocs < MAX_ALLOCS);
    return p->allocs[p->nallocs++] = xcalloc(n, size);
}

static void problem_free(Problem *p)
{
    for (int i = 0; i < p->nallocs; i++) free(p->allocs[i]);
    p->nallocs = 0;
}

static float *random_floats(Problem *p, Rng *rng, size_t n, float mean, float std)
{
    float *x = problem_alloc(p, n, sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = mean + std * rng_normal(rng);
    return x;
}

/* Add a random operand of n floats with its (zeroed) gradient. */
static float *add_operand(Problem *p, Rng *rng, const char *name, size_t n, float mean,
                          float std)
{
    assert_true(p->ops < MAX_OPERANDS);
    Operand *o = &p->op[p->ops++];
    o->name = name;
    o->n = n;
    o->x = random_floats(p, rng, n, mean, std);
    o->grad = problem_alloc(p, n, sizeof *o->grad);
    return o->x;
}

static void set_output(Problem *p, Rng *rng, size_t n)
{
    p->outs = n;
    p->out = problem_alloc(p, n, sizeof *p->out);
    p->r = random_floats(p, rng, n, 0.0f, 1.0f);
}

static double loss_of(Problem *p)
{
    p->forward(p);
    double L = 0.0;
    for (size_t i = 0; i < p->outs; i++) L += (double)p->out[i] * p->r[i];
    return L;
}

static void zero_grads(Problem *p)
{
    for (int k = 0; k < p->ops; k++) memset(p->op[k].grad, 0, p->op[k].n * sizeof(float));
}

/* ---- the two checks ------------------------------------------------------- */

/* Central difference (L(x+h) - L(x-h)) / 2h with the step h actually
 * taken once x ± h is rounded to float. */
static double central_difference(Problem *p, float *x, float h)
{
    float saved = *x, up = saved + h, down = saved - h;
    *x = up;
    double L_up = loss_of(p);
    *x = down;
    double L_down = loss_of(p);
    *x = saved;
    return (L_up - L_down) / ((double)up - (double)down);
}

/* dL/dx by Richardson extrapolation of two central differences: their
 * error is c·h² + O(h⁴), so (4·D(h/2) - D(h)) / 3 cancels the h² term.
 * That allows a large step, which keeps the float rounding noise of the
 * forward (about 1e-7·|L| / h) small. */
static double numeric_gradient(Problem *p, float *x)
{
    return (4.0 * central_difference(p, x, FD_EPS / 2) - central_difference(p, x, FD_EPS)) / 3.0;
}

/* Compare the backward's gradients with numeric ones.  Prints, for each
 * operand, the largest relative error |a - n| / max(|a|, |n|, REL_FLOOR)
 * (a relative error means little for a gradient that is nearly 0), the
 * largest absolute error and the largest gradient. */
static void check_gradients(Problem *p)
{
    zero_grads(p);
    p->forward(p);   /* the saved values the backward reads */
    p->backward(p);
    int failures = 0;
    for (int k = 0; k < p->ops; k++) {
        Operand *o = &p->op[k];
        double op_worst = 0.0, op_abs = 0.0, op_max = 0.0;
        for (size_t i = 0; i < o->n; i++) {
            double numeric = numeric_gradient(p, &o->x[i]);
            double analytic = o->grad[i];
            double diff = fabs(analytic - numeric);
            double size = fmax(fabs(analytic), fabs(numeric));
            double rel = diff / fmax(size, FD_REL_FLOOR);
            if (rel > op_worst) op_worst = rel;
            if (diff > op_abs) op_abs = diff;
            if (fabs(numeric) > op_max) op_max = fabs(numeric);
            if (diff > FD_ATOL + FD_RTOL * size) {
                if (failures++ < 5)
                    print_error("%s: d%s[%zu] analytic %.6f, numeric %.6f\n", p->name,
                                o->name, i, analytic, numeric);
            }
        }
        printf("  %-30s d%-7s max rel err %.1e, abs %.1e (max |grad| %.2f)\n", p->name,
               o->name, op_worst, op_abs, op_max);
    }
    assert_int_equal(failures, 0);
}

/* A backward called twice on zeroed gradients must give twice the
 * gradients of one call: it adds, and clears nothing. */
static void check_accumulates(Problem *p)
{
    zero_grads(p);
    p->forward(p);
    p->backward(p);
    float *once[MAX_OPERANDS];
    for (int k = 0; k < p->ops; k++) {
        once[k] = xmalloc(p->op[k].n * sizeof(float));
        memcpy(once[k], p->op[k].grad, p->op[k].n * sizeof(float));
    }
    p->backward(p);
    int failures = 0;
    for (int k = 0; k < p->ops; k++) {
        for (size_t i = 0; i < p->op[k].n; i++) {
            double want = 2.0 * once[k][i], got = p->op[k].grad[i];
            if (fabs(got - want) > 1e-6 * (1.0 + fabs(want)) && failures++ < 5)
                print_error("%s: d%s[%zu] = %.7f after two calls, want %.7f\n", p->name,
                            p->op[k].name, i, got, want);
        }
        free(once[k]);
    }
    assert_int_equal(failures, 0);
}

/* ---- the kernels as problems ---------------------------------------------- */

static void linear_fwd(Problem *p)
{
    linear_forward(p->out, p->op[0].x, p->op[1].x, p->op[2].x, p->N, p->I, p->O);
}

static void linear_bwd(Problem *p)
{
    linear_backward(p->op[0].grad, p->op[1].grad, p->op[2].grad, p->r, p->op[0].x, p->op[1].x,
                    p->N, p->I, p->O);
}

static Problem make_linear(Rng *rng)
{
    Problem p = {.name = "linear", .forward = linear_fwd, .backward = linear_bwd,
                 .N = 3, .I = 5, .O = 4};
    add_operand(&p, rng, "in", (size_t)p.N * p.I, 0.0f, 1.0f);
    add_operand(&p, rng, "weight", (size_t)p.O * p.I, 0.0f, 1.0f);
    add_operand(&p, rng, "bias", (size_t)p.O, 0.0f, 1.0f);
    set_output(&p, rng, (size_t)p.N * p.O);
    return p;
}

static void layernorm_fwd(Problem *p)
{
    layernorm_forward(p->out, p->mean, p->rstd, p->op[0].x, p->op[1].x, p->op[2].x, p->N, p->D);
}

static void layernorm_bwd(Problem *p)
{
    layernorm_backward(p->op[0].grad, p->op[1].grad, p->op[2].grad, p->r, p->op[0].x, p->mean,
                       p->rstd, p->op[1].x, p->N, p->D);
}

static Problem make_layernorm(Rng *rng)
{
    Problem p = {.name = "layernorm", .forward = layernorm_fwd, .backward = layernorm_bwd,
                 .N = 3, .D = 8};
    add_operand(&p, rng, "in", (size_t)p.N * p.D, 0.5f, 2.0f);
    add_operand(&p, rng, "weight", (size_t)p.D, 1.0f, 0.3f);
    add_operand(&p, rng, "bias", (size_t)p.D, 0.0f, 0.3f);
    p.mean = problem_alloc(&p, (size_t)p.N, sizeof(float));
    p.rstd = problem_alloc(&p, (size_t)p.N, sizeof(float));
    set_output(&p, rng, (size_t)p.N * p.D);
    return p;
}

/* a + b, with a mask the block's dropout applied to b (a fixed mask
 * stands for the draws). */
static void residual_fwd(Problem *p)
{
    const float *b = p->op[1].x;
    if (p->mask) {
        float *dropped = p->out + p->outs; /* set_output left room */
        for (size_t i = 0; i < p->outs; i++) dropped[i] = b[i] * p->mask[i];
        b = dropped;
    }
    residual_forward(p->out, p->op[0].x, b, p->outs);
}

static void residual_bwd(Problem *p)
{
    residual_backward(p->op[0].grad, p->op[1].grad, p->r, p->mask, p->outs);
}

static float *random_mask(Problem *p, Rng *rng, size_t n)
{
    float *mask = problem_alloc(p, n, sizeof *mask);
    for (size_t i = 0; i < n; i++) mask[i] = rng_uniform(rng) < 0.3f ? 0.0f : 1.0f / 0.7f;
    return mask;
}

static Problem make_residual(Rng *rng, bool dropout)
{
    Problem p = {.name = dropout ? "residual, dropout" : "residual", .forward = residual_fwd,
                 .backward = residual_bwd};
    add_operand(&p, rng, "a", 10, 0.0f, 1.0f);
    add_operand(&p, rng, "b", 10, 0.0f, 1.0f);
    p.outs = 10;
    p.out = problem_alloc(&p, 2 * p.outs, sizeof *p.out);
    p.r = random_floats(&p, rng, p.outs, 0.0f, 1.0f);
    if (dropout) p.mask = random_mask(&p, rng, p.outs);
    return p;
}

/* The activation and, with a mask, the dropout after it as the feed-forward
 * layer applies it: a fixed mask stands for the draws. */
static void activation_fwd(Problem *p)
{
    activation_forward(p->out, p->op[0].x, p->outs, p->act);
    if (p->mask)
        for (size_t i = 0; i < p->outs; i++) p->out[i] *= p->mask[i];
}

static void activation_bwd(Problem *p)
{
    activation_backward(p->op[0].grad, p->r, p->mask, p->op[0].x, p->outs, p->act);
}

static Problem make_activation(Rng *rng, Activation act, bool dropout)
{
    Problem p = {.name = act == ACTIVATION_RELU ? (dropout ? "relu, dropout" : "relu")
                                                : (dropout ? "gelu, dropout" : "gelu"),
                 .forward = activation_fwd, .backward = activation_bwd, .act = act};
    size_t n = 40;
    float *x = add_operand(&p, rng, "in", n, 0.0f, 1.5f);
    /* keep away from ReLU's kink, where a difference straddles 0 */
    for (size_t i = 0; i < n; i++)
        if (fabsf(x[i]) < 0.1f) x[i] += x[i] < 0.0f ? -0.1f : 0.1f;
    set_output(&p, rng, n);
    if (dropout) p.mask = random_mask(&p, rng, n);
    return p;
}

static void embedding_fwd(Problem *p)
{
    embedding_forward(p->out, p->ids, p->op[0].x, p->N, p->D, 3);
}

static void embedding_bwd(Problem *p)
{
    embedding_backward(p->op[0].grad, p->r, p->ids, p->N, p->D);
}

/* Seven tokens from a vocabulary of 6: id 1 three times, id 3 twice,
 * ids 2 and 4 never (their rows must get no gradient). */
static Problem make_embedding(Rng *rng)
{
    static const int ids[] = {1, 3, 1, 5, 1, 0, 3};
    Problem p = {.name = "embedding", .forward = embedding_fwd, .backward = embedding_bwd,
                 .N = 7, .D = 6, .V = 6};
    p.ids = problem_alloc(&p, (size_t)p.N, sizeof(int));
    memcpy(p.ids, ids, sizeof ids);
    add_operand(&p, rng, "table", (size_t)p.V * p.D, 0.0f, 1.0f);
    set_output(&p, rng, (size_t)p.N * p.D);
    return p;
}

static void attention_fwd(Problem *p)
{
    attention_forward(p->out, p->probs, p->op[0].x, p->op[1].x, p->op[2].x, p->shape, p->D, p->H,
                      p->scale, p->causal);
}

static void attention_bwd(Problem *p)
{
    attention_backward(p->op[0].grad, p->op[1].grad, p->op[2].grad, p->r, p->probs, p->op[0].x,
                       p->op[1].x, p->op[2].x, p->shape, p->D, p->H, p->scale, p->causal);
}

typedef struct {
    const char *name;
    AttentionShape shape;  /* first, count, keys, rows, stride */
    int H;
    bool scaled, causal;
} AttentionCase;

static Problem make_attention(Rng *rng, const AttentionCase *c)
{
    Problem p = {.name = c->name, .forward = attention_fwd, .backward = attention_bwd,
                 .D = 8, .H = c->H, .shape = c->shape, .causal = c->causal};
    int dk = p.D / p.H;
    p.scale = c->scaled ? 1.0f / sqrtf((float)dk) : 1.0f;
    add_operand(&p, rng, "q", (size_t)c->shape.count * p.D, 0.0f, 1.0f);
    add_operand(&p, rng, "k", (size_t)c->shape.keys * p.D, 0.0f, 1.0f);
    add_operand(&p, rng, "v", (size_t)c->shape.keys * p.D, 0.0f, 1.0f);
    p.probs = problem_alloc(&p, (size_t)p.H * c->shape.rows * c->shape.stride, sizeof(float));
    set_output(&p, rng, (size_t)c->shape.count * p.D);
    return p;
}

/* The loss is a scalar: out[0] = mean loss, and its backward (which writes)
 * is scaled by R[0] and added, to fit the accumulating Problem. */
static void cross_entropy_fwd(Problem *p)
{
    p->out[0] = cross_entropy_forward(NULL, p->op[0].x, p->ids, p->N, p->V, p->smoothing,
                                      p->ignore_id);
}

static void cross_entropy_bwd(Problem *p)
{
    size_t n = (size_t)p->N * p->V;
    float *d = xmalloc(n * sizeof *d);
    cross_entropy_backward(d, p->op[0].x, p->ids, p->N, p->V, p->smoothing, p->ignore_id);
    for (size_t i = 0; i < n; i++) p->op[0].grad[i] += p->r[0] * d[i];
    free(d);
}

/* Five rows over a vocabulary of 7; with `ignore`, rows 1 and 3 have the
 * ignored target 0 (the pad id). */
static Problem make_cross_entropy(Rng *rng, const char *name, float smoothing, bool ignore)
{
    static const int plain[] = {2, 0, 6, 3, 1}, padded[] = {2, 0, 6, 0, 1};
    Problem p = {.name = name, .forward = cross_entropy_fwd, .backward = cross_entropy_bwd,
                 .N = 5, .V = 7, .smoothing = smoothing, .ignore_id = ignore ? 0 : -100};
    p.ids = problem_alloc(&p, (size_t)p.N, sizeof(int));
    memcpy(p.ids, ignore ? padded : plain, sizeof plain);
    add_operand(&p, rng, "logits", (size_t)p.N * p.V, 0.0f, 2.0f);
    set_output(&p, rng, 1);
    return p;
}

/* ---- tests ------------------------------------------------------------------ */

static void check_problem(Problem p)
{
    check_gradients(&p);
    problem_free(&p);
}

static void test_linear_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 1);
    check_problem(make_linear(&rng));
}

/* NULL skips a gradient without disturbing the others. */
static void test_linear_null_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 2);
    Problem p = make_linear(&rng);
    linear_backward(p.op[0].grad, p.op[1].grad, p.op[2].grad, p.r, p.op[0].x, p.op[1].x, p.N,
                    p.I, p.O);
    for (int k = 0; k < 3; k++) {
        float *alone = xcalloc(p.op[k].n, sizeof(float));
        linear_backward(k == 0 ? alone : NULL, k == 1 ? alone : NULL, k == 2 ? alone : NULL, p.r,
                        p.op[0].x, p.op[1].x, p.N, p.I, p.O);
        assert_memory_equal(alone, p.op[k].grad, p.op[k].n * sizeof(float));
        free(alone);
    }
    problem_free(&p);
}

static void test_layernorm_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 3);
    check_problem(make_layernorm(&rng));
}

static void test_residual_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 4);
    check_problem(make_residual(&rng, false));
    check_problem(make_residual(&rng, true));
}

static void test_relu_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 5);
    check_problem(make_activation(&rng, ACTIVATION_RELU, false));
    check_problem(make_activation(&rng, ACTIVATION_RELU, true));
}

static void test_gelu_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 6);
    check_problem(make_activation(&rng, ACTIVATION_GELU, false));
    check_problem(make_activation(&rng, ACTIVATION_GELU, true));
}

static void test_embedding_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 7);
    check_problem(make_embedding(&rng));
}

/* Repeated ids sum: row 1 (three occurrences) gets exactly the sum of the
 * three scaled output rows; unused rows stay 0. */
static void test_embedding_repeated_ids_accumulate(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 8);
    Problem p = make_embedding(&rng);
    embedding_backward(p.op[0].grad, p.r, p.ids, p.N, p.D);
    float s = sqrtf((float)p.D);
    for (int i = 0; i < p.D; i++) {
        float want = 0.0f;
        for (int t = 0; t < p.N; t++)
            if (p.ids[t] == 1) want += p.r[t * p.D + i] * s;
        assert_float_equal(p.op[0].grad[1 * p.D + i], want, 1e-6);
        assert_true(p.op[0].grad[2 * p.D + i] == 0.0f);
        assert_true(p.op[0].grad[4 * p.D + i] == 0.0f);
    }
    problem_free(&p);
}

static void check_attention(const AttentionCase *cases, size_t n, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    for (size_t i = 0; i < n; i++) check_problem(make_attention(&rng, &cases[i]));
}

static void test_attention_gradients(void **state)
{
    (void)state;
    static const AttentionCase cases[] = {
        {"attention self", {0, 5, 5, 5, 5}, 2, true, false},
        {"attention self causal", {0, 5, 5, 5, 5}, 2, true, true},
    };
    check_attention(cases, sizeof cases / sizeof cases[0], 9);
}

/* Tq != Tk: 3 queries attend to 6 keys (cross-attention), and 6 queries
 * to 4 keys. */
static void test_attention_cross_gradients(void **state)
{
    (void)state;
    static const AttentionCase cases[] = {
        {"attention cross 3x6", {0, 3, 6, 3, 6}, 2, true, false},
        {"attention cross 6x4", {0, 6, 4, 6, 4}, 2, true, false},
    };
    check_attention(cases, sizeof cases / sizeof cases[0], 10);
}

static void test_attention_unscaled_gradients(void **state)
{
    (void)state;
    static const AttentionCase cases[] = {
        {"attention unscaled", {0, 4, 4, 4, 4}, 2, false, false},
        {"attention unscaled causal", {0, 4, 4, 4, 4}, 2, false, true},
    };
    check_attention(cases, sizeof cases / sizeof cases[0], 11);
}

static void test_attention_heads_gradients(void **state)
{
    (void)state;
    static const AttentionCase cases[] = {
        {"attention 1 head", {0, 4, 4, 4, 4}, 1, true, true},
        {"attention 4 heads", {0, 4, 4, 4, 4}, 4, true, true},
        {"attention 8 heads (d_k 1)", {0, 3, 5, 3, 5}, 8, true, false},
    };
    check_attention(cases, sizeof cases / sizeof cases[0], 12);
}

/* The general contract: queries starting at position first > 0, a
 * probability block with more rows and a wider stride than used, and a
 * single cached decoding step. */
static void test_attention_general_shape_gradients(void **state)
{
    (void)state;
    static const AttentionCase cases[] = {
        {"attention first 2 causal", {2, 3, 6, 7, 9}, 2, true, true},
        {"attention first 1 stride 6", {1, 2, 4, 4, 6}, 2, true, false},
        {"attention decoding step", {3, 1, 4, 6, 6}, 2, true, true},
    };
    check_attention(cases, sizeof cases / sizeof cases[0], 13);
}

static void test_cross_entropy_gradients(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 14);
    check_problem(make_cross_entropy(&rng, "cross-entropy", 0.0f, false));
    check_problem(make_cross_entropy(&rng, "cross-entropy smoothed", 0.1f, false));
    check_problem(make_cross_entropy(&rng, "cross-entropy ignored rows", 0.0f, true));
    check_problem(make_cross_entropy(&rng, "cross-entropy smoothed ignored", 0.1f, true));
}

/* Every accumulating backward, called twice, doubles its gradients. */
static void test_backward_accumulates(void **state)
{
    (void)state;
    static const AttentionCase attn = {"attention", {1, 3, 5, 4, 6}, 2, true, true};
    Rng rng;
    rng_seed(&rng, 15);
    Problem problems[] = {
        make_linear(&rng), make_layernorm(&rng), make_embedding(&rng), make_attention(&rng, &attn),
    };
    for (size_t i = 0; i < sizeof problems / sizeof problems[0]; i++) {
        check_accumulates(&problems[i]);
        problem_free(&problems[i]);
    }
}

static void fill_nan(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = NAN;
}

/* The backwards that WRITE a gradient never read it: over NaNs, and
 * called twice, they give what one call gives on zeros, while the
 * gradients beside it are added to as usual. */
static void test_backward_writes(void **state)
{
    (void)state;
    Rng rng;
    rng_seed(&rng, 16);
    for (int k = 0; k < 4; k++) {
        Problem p = make_activation(&rng, k < 2 ? ACTIVATION_RELU : ACTIVATION_GELU, k % 2);
        Operand *in = &p.op[0];
        p.forward(&p);
        p.backward(&p); /* on zeros */
        float *want = xmalloc(in->n * sizeof *want);
        memcpy(want, in->grad, in->n * sizeof *want);
        fill_nan(in->grad, in->n);
        p.backward(&p);
        p.backward(&p);
        for (size_t i = 0; i < in->n; i++)
            if (in->grad[i] != want[i]) fail_msg("%s: d_in[%zu] = %g, want %g", p.name, i, in->grad[i], want[i]);
        free(want);
        problem_free(&p);
    }
    /* residual: d_a added to, d_b (the block's) written */
    for (int k = 0; k < 2; k++) {
        Problem p = make_residual(&rng, k);
        p.forward(&p);
        p.backward(&p); /* on zeros */
        float want_a[10], want_b[10];
        memcpy(want_a, p.op[0].grad, sizeof want_a);
        memcpy(want_b, p.op[1].grad, sizeof want_b);
        fill_nan(p.op[1].grad, 10);
        p.backward(&p);
        for (int i = 0; i < 10; i++)
            if (p.op[0].grad[i] != 2.0f * want_a[i] || p.op[1].grad[i] != want_b[i])
                fail_msg("%s: [%d]: da %g (want %g), db %g (want %g)", p.name, i, p.op[0].grad[i],
                         2.0f * want_a[i], p.op[1].grad[i], want_b[i]);
        problem_free(&p);
    }
    /* linear: d_in written; d_weight and d_bias, which hold something
     * already, added to as linear_backward adds to them */
    Problem p = make_linear(&rng);
    float *before[3];
    for (int k = 1; k < 3; k++) {
        before[k] = random_floats(&p, &rng, p.op[k].n, 0.0f, 1.0f);
        memcpy(p.op[k].grad, before[k], p.op[k].n * sizeof(float));
    }
    linear_backward(p.op[0].grad, p.op[1].grad, p.op[2].grad, p.r, p.op[0].x, p.op[1].x, p.N, p.I, p.O);
    float *want[3];
    for (int k = 0; k < 3; k++) {
        want[k] = xmalloc(p.op[k].n * sizeof(float));
        memcpy(want[k], p.op[k].grad, p.op[k].n * sizeof(float));
        if (k) memcpy(p.op[k].grad, before[k], p.op[k].n * sizeof(float));
    }
    fill_nan(p.op[0].grad, p.op[0].n);
    linear_backward_writing_input(p.op[0].grad, p.op[1].grad, p.op[2].grad, p.r, p.op[0].x, p.op[1].x,
                                  p.N, p.I, p.O);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < p.op[k].n; i++)
            if (p.op[k].grad[i] != want[k][i])
                fail_msg("linear, writing d_in: d%s[%zu] = %g, want %g", p.op[k].name, i, p.op[k].grad[i],
                         want[k][i]);
        free(want[k]);
    }
    problem_free(&p);
}

/* activation_backward with a dropout mask gives the bits of
 * dropout_backward in place and then the activation's backward alone
 * (the two passes it replaced, which added to a cleared gradient: the
 * same bits but for the sign of a zero), however the loop is cut between
 * threads. */
static void test_activation_backward_through_dropout_is_the_two_passes(void **state)
{
    (void)state;
    enum { N = 3 * 4096 + 1001 };
    Rng rng;
    rng_seed(&rng, 17);
    float *in = xmalloc(N * sizeof *in), *d_out = xmalloc(N * sizeof *d_out);
    float *mask = xmalloc(N * sizeof *mask), *masked = xmalloc(N * sizeof *masked);
    float *want = xmalloc(N * sizeof *want), *got = xmalloc(N * sizeof *got);
    for (int i = 0; i < N; i++) {
        in[i] = rng_normal(&rng);
        d_out[i] = rng_normal(&rng);
        mask[i] = rng_uniform(&rng) < 0.15f ? 0.0f : 1.0f / 0.85f;
    }
    for (int act = 0; act < 2; act++) {
        Activation a = act ? ACTIVATION_GELU : ACTIVATION_RELU;
        memcpy(masked, d_out, N * sizeof *masked);
        dropout_backward(masked, mask, N);
        activation_backward(want, masked, NULL, in, N, a);
        for (int threads = 1; threads <= 3; threads++) {
            parallel_set_threads(threads);
            parallel_force_split(true);
            fill_nan(got, N);
            activation_backward(got, d_out, mask, in, N, a);
            parallel_force_split(false);
            parallel_set_threads(1);
            if (memcmp(got, want, N * sizeof *got) != 0)
                fail_msg("%s, %d threads: not the two passes' bits", act ? "gelu" : "relu", threads);
        }
    }
    free(in);
    free(d_out);
    free(mask);
    free(masked);
    free(want);
    free(got);
}

/* V = 3, logits (1, 2, 3): log Σ exp = 3 + log(1 + e⁻¹ + e⁻²) = 3.4076059644.
 * Row 0, target 2: -log p₂ = 0.4076059644.
 * Row 1, target 0: -log p₀ = 2.4076059644.
 * Row 2 is ignored.  Mean over the 2 counted rows: 1.4076059644.
 * With ε = 0.1: row loss = 0.9·(-log p_t) + 0.1·mean_c(-log p_c), and
 * mean_c(-log p_c) = (2.4076 + 1.4076 + 0.4076)/3 = 1.4076059644, so
 * row 0 = 0.5076059644, row 1 = 2.3076059644, mean 1.4076059644. */
static void test_cross_entropy_by_hand(void **state)
{
    (void)state;
    static const float logits[] = {1, 2, 3, 1, 2, 3, 5, -1, 0};
    static const int targets[] = {2, 0, -1};
    float losses[3];
    float mean = cross_entropy_forward(losses, logits, targets, 3, 3, 0.0f, -1);
    assert_float_equal(losses[0], 0.4076059644f, 1e-6);
    assert_float_equal(losses[1], 2.4076059644f, 1e-6);
    assert_float_equal(losses[2], 0.0f, 0.0);
    assert_float_equal(mean, 1.4076059644f, 1e-6);
    mean = cross_entropy_forward(losses, logits, targets, 3, 3, 0.1f, -1);
    assert_float_equal(losses[0], 0.5076059644f, 1e-6);
    assert_float_equal(losses[1], 2.3076059644f, 1e-6);
    assert_float_equal(mean, 1.4076059644f, 1e-6);
}

/* Huge logits: a naive exp would overflow to inf. */
static void test_cross_entropy_stable(void **state)
{
    (void)state;
    static const float logits[] = {1000, 1001, 1002};
    static const int targets[] = {2};
    float loss = cross_entropy_forward(NULL, logits, targets, 1, 3, 0.0f, -1);
    assert_float_equal(loss, 0.4076059644f, 1e-5);
    float d[3];
    cross_entropy_backward(d, logits, targets, 1, 3, 0.0f, -1);
    for (int c = 0; c < 3; c++) assert_true(isfinite(d[c]));
    assert_float_equal(d[0] + d[1] + d[2], 0.0f, 1e-6);
}

/* The backward writes: stale values are overwritten, ignored rows become
 * 0, and with every row ignored the loss and gradients are 0. */
static void test_cross_entropy_backward_writes(void **state)
{
    (void)state;
    static const float logits[] = {1, 2, 3, 0, 0, 0};
    static const int targets[] = {2, 7};
    float d[6] = {9, 9, 9, 9, 9, 9};
    cross_entropy_backward(d, logits, targets, 2, 3, 0.1f, 7);
    assert_float_equal(d[0] + d[1] + d[2], 0.0f, 1e-6);  /* Σ_c (p_c - q_c) = 0 */
    assert_true(d[0] > 0.0f && d[2] < 0.0f);
    for (int c = 3; c < 6; c++) assert_true(d[c] == 0.0f);

    static const int all_ignored[] = {7, 7};
    assert_true(cross_entropy_forward(NULL, logits, all_ignored, 2, 3, 0.1f, 7) == 0.0f);
    cross_entropy_backward(d, logits, all_ignored, 2, 3, 0.1f, 7);
    for (int c = 0; c < 6; c++) assert_true(d[c] == 0.0f);
}

/* The fused version the training step uses equals forward + backward. */
static void test_cross_entropy_fused_equals_separate(void **state)
{
    (void)state;
    enum { N = 5, V = 37 };
    float logits[N * V], d_sep[N * V], d_fused[N * V];
    Rng rng;
    rng_seed(&rng, 11);
    for (int i = 0; i < N * V; i++) logits[i] = 6.0f * rng_normal(&rng);
    const int targets[N] = {3, 0, 36, 7, 0};
    for (int pass = 0; pass < 2; pass++) {
        float smoothing = pass ? 0.1f : 0.0f;
        float loss = cross_entropy_forward(NULL, logits, targets, N, V, smoothing, 0);
        cross_entropy_backward(d_sep, logits, targets, N, V, smoothing, 0);
        float fused = cross_entropy_forward_backward(d_fused, logits, targets, N, V, smoothing, 0);
        assert_float_equal(loss, fused, 1e-6);
        for (int i = 0; i < N * V; i++) assert_float_equal(d_sep[i], d_fused[i], 1e-7);
    }
}

/* Attention's masked and unused probabilities are exactly 0 whatever the
 * buffer held, and each visible row sums to 1. */
static void test_attention_masked_cells_are_zero(void **state)
{
    (void)state;
    enum { T = 3, D = 2, STRIDE = 4 };
    const float q[T * D] = {1, 0, 0, 1, 1, 1}, k[T * D] = {1, 2, 0, 1, 3, 0}, v[T * D] = {1, 0, 0, 1, 2, 2};
    float out[T * D], probs[T * STRIDE];
    for (int i = 0; i < T * STRIDE; i++) probs[i] = 7.0f;
    AttentionShape shape = {0, T, T, T, STRIDE};
    attention_forward(out, probs, q, k, v, shape, D, 1, 1.0f, true);
    for (int i = 0; i < T; i++) {
        float sum = 0.0f;
        for (int j = 0; j < STRIDE; j++) {
            if (j > i && probs[i * STRIDE + j] != 0.0f)
                fail_msg("query %d, key %d: %g, want exactly 0", i, j, (double)probs[i * STRIDE + j]);
            sum += probs[i * STRIDE + j];
        }
        assert_float_equal(sum, 1.0f, 1e-6f);
    }
    assert_float_equal(probs[0], 1.0f, 0.0f); /* the first query sees only itself */
}

/* Scores far apart (0, 100, 200) must not overflow: the softmax subtracts
 * the row's maximum, wherever it is. */
static void test_attention_softmax_of_large_scores(void **state)
{
    (void)state;
    enum { D = 2, KEYS = 3, STRIDE = 4 };
    const float q[D] = {1, 0}, k[KEYS * D] = {0, 0, 100, 0, 200, 0}, v[KEYS * D] = {1, 0, 0, 1, 5, 6};
    float out[D], probs[STRIDE] = {7, 7, 7, 7};
    AttentionShape shape = {0, 1, KEYS, 1, STRIDE};
    attention_forward(out, probs, q, k, v, shape, D, 1, 1.0f, false);
    /* comparisons a NaN fails (cmocka's assert_float_equal lets NaN pass) */
    if (!(probs[0] >= 0.0f && probs[0] < 1e-30f && probs[1] >= 0.0f && probs[1] < 1e-30f &&
          probs[2] == 1.0f && probs[3] == 0.0f && fabsf(out[0] - 5.0f) < 1e-6f && fabsf(out[1] - 6.0f) < 1e-6f))
        fail_msg("probs %g %g %g %g, out %g %g; want 0 0 1 0, 5 6", (double)probs[0], (double)probs[1],
                 (double)probs[2], (double)probs[3], (double)out[0], (double)out[1]);
}

/* Dropout's mask is the generator's stream read two decisions per draw in
 * order (the top 24 bits, then the next 24), however the loop is cut
 * between threads or vectorised, and the generator ends where that many
 * draws leave it.  An odd length ending mid-draw, over several of the
 * loop's parts. */
static void test_dropout_mask_is_the_stream_in_order(void **state)
{
    (void)state;
    enum { N = 3 * 4096 + 1001 };
    const float p = 0.3f, keep = 1.0f / (1.0f - p);
    uint32_t threshold = (uint32_t)(p * (float)(1u << 24));
    float *x = malloc(N * sizeof *x), *mask = malloc(N * sizeof *mask);
    for (int threads = 1; threads <= 3; threads++) {
        parallel_set_threads(threads);
        parallel_force_split(true);
        for (int i = 0; i < N; i++) x[i] = 1.0f + (float)i;
        Rng rng, want;
        rng_seed(&rng, 77);
        rng_seed(&want, 77);
        dropout_forward(x, mask, N, p, &rng);
        parallel_force_split(false);
        parallel_set_threads(1);
        for (int i = 0; i < N; i += 2) {
            uint64_t bits = rng_next(&want);
            uint32_t top = (uint32_t)(bits >> 40), next = (uint32_t)((bits >> 16) & 0xffffff);
            for (int k = 0; k < 2 && i + k < N; k++) {
                float m = (k ? next : top) < threshold ? 0.0f : keep;
                if (mask[i + k] != m || x[i + k] != (1.0f + (float)(i + k)) * m)
                    fail_msg("%d threads: element %d: mask %g, want %g", threads, i + k, mask[i + k], m);
            }
        }
        assert_true(rng.state == want.state);
    }
    free(x);
    free(mask);
}

/* The row forms of vector.h give the bits of the one-row loops they
 * replaced in attention (vec_dot per row; y += w·x a row at a time, in row
 * order), on lengths with and without a tail past whole vectors. */
static void test_vector_row_forms_are_the_one_row_loops(void **state)
{
    (void)state;
    enum { MAX_ROWS = 9, MAX_N = 70, STRIDE = MAX_N + 3 };
    static const int lengths[] = {1, 7, 8, 16, 19, 64, 70};
    Rng rng;
    rng_seed(&rng, 5);
    float rows[MAX_ROWS * STRIDE], a[MAX_N], w[MAX_ROWS];
    for (size_t i = 0; i < MAX_ROWS * STRIDE; i++) rows[i] = rng_normal(&rng);
    for (int i = 0; i < MAX_N; i++) a[i] = rng_normal(&rng);
    for (int j = 0; j < MAX_ROWS; j++) w[j] = rng_normal(&rng);
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
        int n = lengths[l];
        for (int count = 0; count <= MAX_ROWS; count++) {
            float dots[MAX_ROWS + 1], y[MAX_N], want_y[MAX_N], each[MAX_ROWS * STRIDE], want_each[MAX_ROWS * STRIDE];
            dots[count] = 42.0f; /* past the last row: never written */
            vec_dot_rows(dots, a, rows, STRIDE, count, n);
            assert_true(dots[count] == 42.0f);
            for (int j = 0; j < count; j++) {
                float want = vec_dot(a, rows + j * STRIDE, n);
                if (memcmp(&dots[j], &want, sizeof want) != 0)
                    fail_msg("vec_dot_rows n=%d count=%d row %d: %.9g, vec_dot %.9g", n, count, j, dots[j], want);
            }
            memcpy(y, a, sizeof y);
            memcpy(want_y, a, sizeof want_y);
            vec_axpy_rows(y, w, rows, STRIDE, count, n);
            for (int j = 0; j < count; j++)
                for (int i = 0; i < n; i++) want_y[i] += w[j] * rows[j * STRIDE + i];
            /* all of y: nothing past n written either */
            if (memcmp(y, want_y, sizeof y) != 0) fail_msg("vec_axpy_rows n=%d count=%d", n, count);
            memcpy(each, rows, sizeof each);
            memcpy(want_each, rows, sizeof want_each);
            vec_axpy_each(each, STRIDE, w, a, count, n);
            for (int j = 0; j < count; j++)
                for (int i = 0; i < n; i++) want_each[j * STRIDE + i] += w[j] * a[i];
            if (memcmp(each, want_each, sizeof each) != 0) fail_msg("vec_axpy_each n=%d count=%d", n, count);
        }
        float y[MAX_N], want_y[MAX_N];
        memcpy(y, rows, sizeof y);
        memcpy(want_y, rows, sizeof want_y);
        vec_add(y, a, n);
        for (int i = 0; i < n; i++) want_y[i] += a[i];
        if (memcmp(y, want_y, sizeof y) != 0) fail_msg("vec_add n=%d", n);
    }
}

/* vec_exp_sum: each exponential within 2 ulp of expf (exactly 0 below -87,
 * a NaN kept), and the sum in vector.h's order of 8 partial sums, whatever
 * the clone's vector width: lanes i mod 8 over the whole blocks of 8, the
 * tree, then the rest one by one.  Every length up to 200: around 8 and
 * 16 (the loop's blocks) and far past them. */
static void test_exp_sum_order_and_values(void **state)
{
    (void)state;
    enum { MAX_N = 200 }; /* enough blocks of 16 that a reordering shows in the rounding */
    Rng rng;
    rng_seed(&rng, 11);
    float a[MAX_N], out[MAX_N];
    for (int i = 0; i < MAX_N; i++) a[i] = -fabsf(rng_normal(&rng)) * (i % 5 == 0 ? 40.0f : 3.0f);
    a[3] = 0.0f;
    a[4] = -87.5f;
    a[5] = -INFINITY;
    a[6] = -87.0f;
    for (int n = 1; n <= MAX_N; n++) {
        float sum = vec_exp_sum(out, a, 0.0f, n);
        float acc[8] = {0};
        int whole = n / 8 * 8;
        for (int i = 0; i < whole; i++) acc[i % 8] += out[i];
        float want = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (int i = whole; i < n; i++) want += out[i];
        if (memcmp(&sum, &want, sizeof sum) != 0) fail_msg("vec_exp_sum n=%d: %.9g, in order %.9g", n, sum, want);
        float without_out = vec_exp_sum(NULL, a, 0.0f, n);
        if (memcmp(&sum, &without_out, sizeof sum) != 0) fail_msg("vec_exp_sum n=%d: out NULL gives another sum", n);
    }
    for (int i = 0; i < MAX_N; i++) {
        if (a[i] < -87.0f) {
            if (out[i] != 0.0f || signbit(out[i])) fail_msg("e^%g = %g, not +0", a[i], out[i]);
        } else if (fabsf(out[i] - expf(a[i])) > 2.0f * (nextafterf(expf(a[i]), INFINITY) - expf(a[i]))) {
            fail_msg("e^%.9g = %.9g, expf %.9g", a[i], out[i], expf(a[i]));
        }
    }
    float nan_in[17] = {0};
    nan_in[16] = NAN; /* past the block of 16: the one-by-one path */
    nan_in[2] = NAN;  /* inside it */
    vec_exp_sum(out, nan_in, 0.0f, 17);
    assert_true(isnan(out[2]) && isnan(out[16]) && out[1] == 1.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross_entropy_fused_equals_separate),
        cmocka_unit_test(test_attention_masked_cells_are_zero),
        cmocka_unit_test(test_attention_softmax_of_large_scores),
        cmocka_unit_test(test_linear_gradients),
        cmocka_unit_test(test_linear_null_gradients),
        cmocka_unit_test(test_layernorm_gradients),
        cmocka_unit_test(test_residual_gradients),
        cmocka_unit_test(test_relu_gradients),
        cmocka_unit_test(test_gelu_gradients),
        cmocka_unit_test(test_embedding_gradients),
        cmocka_unit_test(test_embedding_repeated_ids_accumulate),
        cmocka_unit_test(test_attention_gradients),
        cmocka_unit_test(test_attention_cross_gradients),
        cmocka_unit_test(test_attention_unscaled_gradients),
        cmocka_unit_test(test_attention_heads_gradients),
        cmocka_unit_test(test_attention_general_shape_gradients),
        cmocka_unit_test(test_cross_entropy_gradients),
        cmocka_unit_test(test_backward_accumulates),
        cmocka_unit_test(test_backward_writes),
        cmocka_unit_test(test_activation_backward_through_dropout_is_the_two_passes),
        cmocka_unit_test(test_cross_entropy_by_hand),
        cmocka_unit_test(test_cross_entropy_stable),
        cmocka_unit_test(test_cross_entropy_backward_writes),
        cmocka_unit_test(test_dropout_mask_is_the_stream_in_order),
        cmocka_unit_test(test_vector_row_forms_are_the_one_row_loops),
        cmocka_unit_test(test_exp_sum_order_and_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
