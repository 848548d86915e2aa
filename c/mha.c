/*
 * mha.c - the multi-head self-attention layer: create/free, weight init, split_heads/merge_heads,
 * forward, backward, access to every tensor, and single-head attention for lesson 1.
 *
 * B = batch, T = tokens, C = channels, h = heads, hs = C / h. Row-major float64 throughout.
 * Forward (lessons 2-3):  Q,K,V = split_heads(X @ Wq), ...        (B,h,T,hs)
 *                         scores = Q K^T / sqrt(hs)                (B,h,T,T)
 *                         att = softmax(mask(scores))              (B,h,T,T)
 *                         headout = att @ V                        (B,h,T,hs)
 *                         concat = merge_heads(headout)            (B,T,C)
 *                         Y = concat @ Wo                          (B,T,C)
 * Backward (lesson 4) walks the same lines in reverse, in 13 numbered steps; see backward_core.
 */
#include "mha.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layer.h"
#include "rng.h"

/* ---------------------------------------------------------------------------------------------- */
/* messages */

const char *mha_strerror(int code)
{
#define STATUS_MESSAGE(name, value, message)                                                       \
    case MHA_##name: return message;
    switch (code) {
        MHA_STATUSES(STATUS_MESSAGE)
    default: return "unknown error code";
    }
#undef STATUS_MESSAGE
}

#define MHA_STR2(x) #x
#define MHA_STR(x)  MHA_STR2(x)

const char *mha_version(void)
{
    return MHA_STR(MHA_VERSION_MAJOR) "." MHA_STR(MHA_VERSION_MINOR) "." MHA_STR(MHA_VERSION_PATCH);
}

/* ---------------------------------------------------------------------------------------------- */
/* sizes with overflow checks */

/* *out = a * b; returns 0 if it overflows size_t */
static int mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) {
        return 0;
    }
    *out = a * b;
    return 1;
}

/* ---------------------------------------------------------------------------------------------- */
/* the tensor table (MHA_TENSORS in mha.h) */

#define TENSOR_INFO(id, name, shape, kind, restart, grad, step, check)                             \
    {#name, MHA_SHAPE_##shape, MHA_KIND_##kind, MHA_STAGE_##restart, MHA_T_##grad, step, check},
const tensor_info tensor_table[MHA_T_COUNT] = {MHA_TENSORS(TENSOR_INFO)};
#undef TENSOR_INFO

#define CHECK_TENSOR_ID(id, name, shape, kind, restart, grad, step, check)                         \
    MHA_IF_##check(MHA_T_##id, )
const int check_tensor_id[MHA_CHECK_COUNT] = {MHA_TENSORS(CHECK_TENSOR_ID)};
#undef CHECK_TENSOR_ID

/* The layer's named fields and its tensor[] array are the same pointers */
_Static_assert(offsetof(struct mha_layer, dX) ==
                   offsetof(struct mha_layer, tensor) + MHA_T_DX * sizeof(double *),
               "the tensor fields of struct mha_layer follow the table");

/* Where a tensor lives: weights in params, their gradients in grads (both (C,C)), everything else
 * in the cache, in blocks of B*T*C elements ((B,T,C) and (B,h,T,hs)) or B*h*T*T ((B,h,T,T)). */
static int in_cache(int id)
{
    return tensor_table[id].shape != MHA_SHAPE_CC;
}
static int is_bhtt(int id)
{
    return tensor_table[id].shape == MHA_SHAPE_BHTT;
}
#define COUNT_BTC(id, name, shape, ...)                                                            \
    +(MHA_SHAPE_##shape == MHA_SHAPE_BTC || MHA_SHAPE_##shape == MHA_SHAPE_BHTHS)
#define COUNT_BHTT(id, name, shape, ...) +(MHA_SHAPE_##shape == MHA_SHAPE_BHTT)
enum {
    CACHE_BTC = 2 MHA_TENSORS(COUNT_BTC), /* the cached tensors of B*T*C elements, work and aux */
    CACHE_BHTT = 0 MHA_TENSORS(COUNT_BHTT)
};
#undef COUNT_BTC
#undef COUNT_BHTT

/* Element counts of the per-forward tensors: btc = B*T*C, bhtt = B*h*T*T, and the total bytes of
 * the cache block (CACHE_BTC blocks of btc + CACHE_BHTT of bhtt doubles). MHA_OK or
 * MHA_EOVERFLOW. */
static int cache_sizes(int B, int T, int C, int h, size_t *btc, size_t *bhtt, size_t *bytes)
{
    size_t bt, bh, bht, n_btc, n_bhtt, a, b, total;
    if (!mul_size((size_t)B, (size_t)T, &bt) || !mul_size(bt, (size_t)C, &n_btc) ||
        !mul_size((size_t)B, (size_t)h, &bh) || !mul_size(bh, (size_t)T, &bht) ||
        !mul_size(bht, (size_t)T, &n_bhtt) || !mul_size(n_btc, CACHE_BTC, &a) ||
        !mul_size(n_bhtt, CACHE_BHTT, &b) || a > SIZE_MAX - b ||
        !mul_size(a + b, sizeof(double), &total)) {
        return MHA_EOVERFLOW;
    }
    *btc = n_btc;
    *bhtt = n_bhtt;
    *bytes = total;
    return MHA_OK;
}

size_t tensor_size(const mha_layer *l, int id)
{
    const size_t C = (size_t)l->C, BT = (size_t)l->B * (size_t)l->T;
    switch (tensor_table[id].shape) {
    case MHA_SHAPE_CC: return C * C;
    case MHA_SHAPE_BHTT: return BT * (size_t)l->h * (size_t)l->T;
    default: return BT * C; /* (B,T,C) and (B,h,T,hs) */
    }
}

/* Point the weights at their slices of params and their gradients at theirs of grads, (C,C)
 * each, in table order. */
static void weights_layout(mha_layer *l)
{
    const size_t CC = (size_t)l->C * (size_t)l->C;
    double *param = l->params, *grad = l->grads;
    for (int id = 0; id < MHA_T_COUNT; id++) {
        if (in_cache(id)) {
            continue;
        }
        if (tensor_table[id].kind == MHA_KIND_PARAM) {
            l->tensor[id] = param;
            param += CC;
        } else {
            l->tensor[id] = grad;
            grad += CC;
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* create / free */

int mha_create(int C, int h, mha_layer **out)
{
    if (!out) {
        return MHA_ENULL;
    }
    *out = NULL;
    if (C <= 0 || h <= 0) {
        return MHA_EDIM;
    }
    if (C % h != 0) {
        return MHA_EDIVISIBLE;
    }
    size_t cc, n, bytes;
    if (!mul_size((size_t)C, (size_t)C, &cc) || !mul_size(cc, 4, &n) ||
        !mul_size(n, sizeof(double), &bytes)) {
        return MHA_EOVERFLOW;
    }
    mha_layer *l = calloc(1, sizeof *l);
    if (!l) {
        return MHA_ENOMEM;
    }
    l->params = calloc(n, sizeof(double));
    l->grads = calloc(n, sizeof(double));
    if (!l->params || !l->grads) {
        free(l->params);
        free(l->grads);
        free(l);
        return MHA_ENOMEM;
    }
    l->C = C;
    l->h = h;
    l->hs = C / h;
    weights_layout(l);
    *out = l;
    return MHA_OK;
}

void mha_free(mha_layer *l)
{
    if (!l) {
        return;
    }
    free(l->params);
    free(l->grads);
    free(l->cache);
    free(l->gc_partial);
    free(l);
}

int mha_layer_C(const mha_layer *l)
{
    return l ? l->C : 0;
}
int mha_layer_heads(const mha_layer *l)
{
    return l ? l->h : 0;
}
double *mha_params(mha_layer *l)
{
    return l ? l->params : NULL;
}
double *mha_grads(mha_layer *l)
{
    return l ? l->grads : NULL;
}
size_t mha_num_params(const mha_layer *l)
{
    return l ? 4 * (size_t)l->C * (size_t)l->C : 0;
}

int mha_init_weights(mha_layer *l, uint32_t seed_lo, uint32_t seed_hi, int rng_kind, double scale)
{
    if (!l) {
        return MHA_ENULL;
    }
    if (!isfinite(scale)) {
        return MHA_EVALUE;
    }
    struct mha_rng rng;
    int rc = rng_init(&rng, rng_kind, seed_lo, seed_hi);
    if (rc != MHA_OK) {
        return rc;
    }
    /* NumPy: W = rng.standard_normal((C, C)) * scale for Wq, Wk, Wv, Wo in turn; a (C,C) draw
     * fills row-major, so the four matrices are simply the next 4*C*C values of the stream. */
    const size_t n = mha_num_params(l);
    for (size_t i = 0; i < n; i++) {
        l->params[i] = rng_next_standard_normal(&rng) * scale;
    }
    memset(l->grads, 0, n * sizeof(double));
    return MHA_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* the cache */

/* Point every cached tensor at its slice of the cache block, in table order: those of B*T*C
 * elements first, then work and aux, then those of B*h*T*T. */
static void cache_layout(mha_layer *l)
{
    double *p = l->cache;
    for (int id = 0; id < MHA_T_COUNT; id++) {
        if (in_cache(id) && !is_bhtt(id)) {
            l->tensor[id] = p;
            p += l->cap_btc;
        }
    }
    l->work = p;
    l->aux = p + l->cap_btc;
    p += 2 * l->cap_btc;
    for (int id = 0; id < MHA_T_COUNT; id++) {
        if (is_bhtt(id)) {
            l->tensor[id] = p;
            p += l->cap_bhtt;
        }
    }
}

void layer_cache_holds(mha_layer *l, int forward, int backward)
{
    l->have_forward = forward;
    l->have_backward = backward;
    l->gc_ready = 0;
}

/* Doubles in a cache block of these capacities */
static size_t cache_doubles(size_t cap_btc, size_t cap_bhtt)
{
    return CACHE_BTC * cap_btc + CACHE_BHTT * cap_bhtt;
}

int layer_reserve(mha_layer *l, int B, int T, const double *X)
{
    size_t btc, bhtt, bytes;
    int rc = cache_sizes(B, T, l->C, l->h, &btc, &bhtt, &bytes);
    if (rc != MHA_OK) {
        return rc;
    }
    if (l->cache && btc <= l->cap_btc && bhtt <= l->cap_bhtt) {
        return MHA_OK;
    }
    /* grow each part to the larger of what we have and what is needed */
    size_t new_btc = btc > l->cap_btc ? btc : l->cap_btc;
    size_t new_bhtt = bhtt > l->cap_bhtt ? bhtt : l->cap_bhtt;
    size_t a, b;
    if (!mul_size(new_btc, CACHE_BTC, &a) || !mul_size(new_bhtt, CACHE_BHTT, &b) ||
        a > SIZE_MAX - b || !mul_size(a + b, sizeof(double), &bytes)) {
        return MHA_EOVERFLOW;
    }
    double *block = malloc(bytes);
    if (!block) {
        return MHA_ENOMEM; /* the old cache and everything in it stay as they were */
    }
    double *old = l->cache;
    l->cache = block;
    l->cap_btc = new_btc;
    l->cap_bhtt = new_bhtt;
    layer_cache_holds(l, 0, 0);
    cache_layout(l);
    if (X) {
        /* X may live in the old block (the layer's own MHA_T_X): copy it before that goes */
        memcpy(l->X, X, btc * sizeof(double));
    }
    free(old);
    return MHA_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* split_heads / merge_heads (lesson 2) */

/* x (B,T,C) -> out (B,h,T,hs): reshape to (B,T,h,hs), then swap the T and h axes */
static void split_heads(double *out, const double *x, size_t B, size_t T, size_t C, size_t h)
{
    const size_t hs = C / h;
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < T; t++) {
            const double *x_bt = x + (b * T + t) * C;
            for (size_t head = 0; head < h; head++) {
                memcpy(out + ((b * h + head) * T + t) * hs, x_bt + head * hs, hs * sizeof(double));
            }
        }
    }
}

/* x (B,h,T,hs) -> out (B,T,C): the exact inverse of split_heads */
static void merge_heads(double *out, const double *x, size_t B, size_t T, size_t C, size_t h)
{
    const size_t hs = C / h;
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < T; t++) {
            double *out_bt = out + (b * T + t) * C;
            for (size_t head = 0; head < h; head++) {
                memcpy(out_bt + head * hs, x + ((b * h + head) * T + t) * hs, hs * sizeof(double));
            }
        }
    }
}

static int check_split_args(const double *x, int B, int T, int C, int h, const double *out)
{
    if (!x || !out) {
        return MHA_ENULL;
    }
    if (B <= 0 || T <= 0 || C <= 0 || h <= 0) {
        return MHA_EDIM;
    }
    if (C % h != 0) {
        return MHA_EDIVISIBLE;
    }
    size_t btc, bhtt, bytes;
    return cache_sizes(B, T, C, 1, &btc, &bhtt, &bytes);
}

int mha_split_heads(const double *x, int B, int T, int C, int h, double *out)
{
    int rc = check_split_args(x, B, T, C, h, out);
    if (rc == MHA_OK) {
        split_heads(out, x, (size_t)B, (size_t)T, (size_t)C, (size_t)h);
    }
    return rc;
}

int mha_merge_heads(const double *x, int B, int T, int C, int h, double *out)
{
    int rc = check_split_args(x, B, T, C, h, out);
    if (rc == MHA_OK) {
        merge_heads(out, x, (size_t)B, (size_t)T, (size_t)C, (size_t)h);
    }
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* forward (lesson 3) */

void forward_project(mha_layer *l, int which)
{
    /* Q = split_heads(X @ Wq): (B,T,C) @ (C,C) -> (B,T,C) -> (B,h,T,hs); which = 1, 2: K, V */
    const size_t B = (size_t)l->B, T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h;
    double *dst = which == 0 ? l->Q : which == 1 ? l->K : l->V;
    matmul_nn(l->work, l->X, l->params + (size_t)which * C * C, B * T, C, C);
    split_heads(dst, l->work, B, T, C, h);
}

void forward_heads(mha_layer *l, int from, size_t b0, size_t b1, size_t h0, size_t h1)
{
    const size_t T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h, hs = (size_t)l->hs;
    const double root = sqrt((double)hs);
    const int causal = (l->flags & MHA_CAUSAL) != 0;

    for (size_t b = b0; b < b1; b++) {
        for (size_t head = h0; head < h1; head++) {
            const size_t bh = b * h + head;
            const double *q_bh = l->Q + bh * T * hs, *k_bh = l->K + bh * T * hs;
            const double *v_bh = l->V + bh * T * hs;
            double *scores_bh = l->scores + bh * T * T, *att_bh = l->att + bh * T * T;
            double *headout_bh = l->headout + bh * T * hs;
            if (from <= MHA_STAGE_SCORES) {
                /* scores = q k^T / sqrt(hs), the division done by the softmax's first pass */
                matmul_nt(scores_bh, q_bh, k_bh, T, hs, T, MATMUL_SET); /* (T,hs) @ (hs,T) */
                softmax_rows(att_bh, scores_bh, T, root, causal);       /* (T,T), rows sum to 1 */
            } else if (from == MHA_STAGE_ATT) {
                softmax_rows(att_bh, scores_bh, T, 1.0, causal);
            }
            if (from <= MHA_STAGE_HEADOUT) {
                matmul_nn(headout_bh, att_bh, v_bh, T, T, hs); /* (T,T) @ (T,hs) */
            }
            if (from <= MHA_STAGE_CONCAT) {
                /* concat[b, t, head*hs : (head+1)*hs] = headout[b, head, t, :] */
                for (size_t t = 0; t < T; t++) {
                    memcpy(l->concat + (b * T + t) * C + head * hs, headout_bh + t * hs,
                           hs * sizeof(double));
                }
            }
        }
    }
}

void forward_output_rows(mha_layer *l, size_t b0, size_t b1, size_t head, const double *partial)
{
    /* Y[b0:b1] = concat[b0:b1] @ Wo: (n,T,C) @ (C,C). The sum over c runs head by head (concat's
     * columns are the heads side by side), so from `head` on it continues from partial[b0:b1]. */
    const size_t T = (size_t)l->T, C = (size_t)l->C, hs = (size_t)l->hs;
    const double *Wo = l->Wo;
    double *Y = l->Y + b0 * T * C;
    const size_t rows = (b1 - b0) * T, c0 = head * hs;
    if (head == 0) {
        matmul_nn(Y, l->concat + b0 * T * C, Wo, rows, C, C);
        return;
    }
    memcpy(Y, partial + b0 * T * C, rows * C * sizeof(double));
    matmul_nn_cols_acc(Y, l->concat + b0 * T * C + c0, C, Wo + c0 * C, rows, C - c0, C);
}

void forward_from(mha_layer *l, int from)
{
    if (from <= MHA_STAGE_QKV) {
        forward_project(l, 0);
        forward_project(l, 1);
        forward_project(l, 2);
    }
    forward_heads(l, from < MHA_STAGE_SCORES ? MHA_STAGE_SCORES : from, 0, (size_t)l->B, 0,
                  (size_t)l->h);
    forward_output_rows(l, 0, (size_t)l->B, 0, NULL);
}

void forward_project_column(mha_layer *l, int which, size_t j)
{
    /* column j of X @ W: for every (b,t), sum_c X[b,t,c] W[c,j], in the order matmul_nn uses,
     * written to Q/K/V[b, j / hs, t, j % hs] */
    const size_t B = (size_t)l->B, T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h;
    const size_t hs = (size_t)l->hs, head = j / hs, d = j % hs;
    const double *W = l->params + (size_t)which * C * C;
    double *dst = which == 0 ? l->Q : which == 1 ? l->K : l->V;
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < T; t++) {
            const double *x_bt = l->X + (b * T + t) * C;
            double s = 0.0;
            for (size_t c = 0; c < C; c++) {
                s += x_bt[c] * W[c * C + j];
            }
            dst[((b * h + head) * T + t) * hs + d] = s;
        }
    }
}

void forward_project_row(mha_layer *l, size_t b, size_t t)
{
    /* row (b,t) of X @ Wq, X @ Wk, X @ Wv, split into the heads */
    const size_t T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h, hs = (size_t)l->hs;
    double *dsts[3] = {l->Q, l->K, l->V};
    for (int which = 0; which < 3; which++) {
        matmul_nn(l->work, l->X + (b * T + t) * C, l->params + (size_t)which * C * C, 1, C, C);
        for (size_t head = 0; head < h; head++) {
            memcpy(dsts[which] + ((b * h + head) * T + t) * hs, l->work + head * hs,
                   hs * sizeof(double));
        }
    }
}

void forward_output_column(mha_layer *l, size_t j)
{
    /* column j of Y = concat @ Wo, in the order matmul_nn uses */
    const size_t BT = (size_t)l->B * (size_t)l->T, C = (size_t)l->C;
    const double *Wo = l->Wo;
    for (size_t bt = 0; bt < BT; bt++) {
        const double *concat_bt = l->concat + bt * C;
        double s = 0.0;
        for (size_t c = 0; c < C; c++) {
            s += concat_bt[c] * Wo[c * C + j];
        }
        l->Y[bt * C + j] = s;
    }
}

/* 1 if the n doubles at p overlap the n_block doubles at block (compared as integers: the arrays
 * may be unrelated objects) */
static int overlaps(const double *p, size_t n, const double *block, size_t n_block)
{
    if (!p || !block || n == 0 || n_block == 0) {
        return 0;
    }
    const uintptr_t lo = (uintptr_t)block, hi = lo + n_block * sizeof(double);
    const uintptr_t a = (uintptr_t)p, b = a + n * sizeof(double);
    return a < hi && lo < b;
}

int layer_owns(const mha_layer *l, const double *p, size_t n)
{
    const size_t np = mha_num_params(l);
    return overlaps(p, n, l->cache, cache_doubles(l->cap_btc, l->cap_bhtt)) ||
           overlaps(p, n, l->params, np) || overlaps(p, n, l->grads, np);
}

int check_forward_args(const mha_layer *l, const double *X, int B, int T, int flags)
{
    if (!l || !X) {
        return MHA_ENULL;
    }
    if (B <= 0 || T <= 0) {
        return MHA_EDIM;
    }
    if (flags & ~MHA_CAUSAL) {
        return MHA_EFLAGS;
    }
    size_t btc, bhtt, bytes;
    return cache_sizes(B, T, l->C, l->h, &btc, &bhtt, &bytes);
}

int layer_begin_forward(mha_layer *l, const double *X, int B, int T, int flags)
{
    int rc = check_forward_args(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    double *old_cache = l->cache;
    rc = layer_reserve(l, B, T, X);
    if (rc != MHA_OK) {
        return rc;
    }
    if (l->cache == old_cache) {
        memmove(l->X, X, (size_t)B * (size_t)T * (size_t)l->C * sizeof(double));
    } /* else layer_reserve copied X into the new block's l->X */
    l->B = B;
    l->T = T;
    l->flags = flags;
    layer_cache_holds(l, 1, 0);
    return MHA_OK;
}

int mha_forward(mha_layer *l, const double *X, int B, int T, int flags, double *Y)
{
    int rc = layer_begin_forward(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    forward_from(l, MHA_STAGE_QKV);
    if (Y) {
        memmove(Y, l->Y, (size_t)B * (size_t)T * (size_t)l->C * sizeof(double));
    }
    return MHA_OK;
}

int mha_forward_from(mha_layer *l, int stage)
{
    if (!l) {
        return MHA_ENULL;
    }
    const int from = mha_tensor_stage(stage); /* `stage` is the edited tensor's id */
    if (from == MHA_STAGE_NONE) {
        return MHA_ETENSOR;
    }
    if (!l->have_forward) {
        return MHA_ENOFORWARD;
    }
    forward_from(l, from);
    layer_cache_holds(l, 1, 0);
    return MHA_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* backward (lesson 4) */

/* x[0..n-1] /= d */
static void divide(double *x, size_t n, double d)
{
    for (size_t i = 0; i < n; i++) {
        x[i] /= d;
    }
}

/* Lesson 4's 13 steps in its order (the table's step column), each under the forward line it
 * differentiates. Weight gradients are added to the gradient buffer (MATMUL_ADD: the API
 * accumulates them over calls); every other gradient is set. Per (batch item, head) = bh, the
 * (B,h,T,hs) tensors hold T*hs numbers and the (B,h,T,T) ones T*T. */
void backward_core(mha_layer *l)
{
    const size_t B = (size_t)l->B, T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h;
    const size_t hs = (size_t)l->hs, BT = B * T, BH = B * h, Ths = T * hs, TT = T * T;
    const double root = sqrt((double)hs);

    /* forward: Y = concat @ Wo                           (B,T,C) = (B,T,C) @ (C,C) */
    /*  1. dWo += concat^T @ dY                           (C,C) */
    matmul_tn(l->dWo, l->concat, l->dY, C, BT, C, MATMUL_ADD);
    /*  2. dconcat = dY @ Wo^T                            (B,T,C) */
    matmul_nt(l->dconcat, l->dY, l->Wo, BT, C, C, MATMUL_SET);

    /* forward: concat = merge_heads(headout)             (B,T,C) <- (B,h,T,hs) */
    /*  3. dheadout = split_heads(dconcat)                (B,h,T,hs) */
    split_heads(l->dheadout, l->dconcat, B, T, C, h);

    /* forward: headout = att @ V                         per bh: (T,hs) = (T,T) @ (T,hs) */
    /*  4. dV = att^T @ dheadout                          (B,h,T,hs) */
    for (size_t bh = 0; bh < BH; bh++) {
        matmul_tn(l->dV + bh * Ths, l->att + bh * TT, l->dheadout + bh * Ths, T, T, hs, MATMUL_SET);
    }
    /*  5. datt = dheadout @ V^T                          (B,h,T,T) */
    for (size_t bh = 0; bh < BH; bh++) {
        matmul_nt(l->datt + bh * TT, l->dheadout + bh * Ths, l->V + bh * Ths, T, hs, T, MATMUL_SET);
    }

    /* forward: att = softmax(mask(scores))               per row of T */
    /*  6. dscores = att * (datt - rowsum(datt * att))    (B,h,T,T); masked entries: att = 0 */
    for (size_t bh = 0; bh < BH; bh++) {
        softmax_backward_rows(l->dscores + bh * TT, l->att + bh * TT, l->datt + bh * TT, T);
    }

    /* forward: scores = Q @ K^T / sqrt(hs)               per bh: (T,T) = (T,hs) @ (hs,T) */
    /*  7. dQ = dscores @ K / sqrt(hs)                    (B,h,T,hs) */
    for (size_t bh = 0; bh < BH; bh++) {
        matmul_nn(l->dQ + bh * Ths, l->dscores + bh * TT, l->K + bh * Ths, T, T, hs);
        divide(l->dQ + bh * Ths, Ths, root);
    }
    /*  8. dK = dscores^T @ Q / sqrt(hs)                  (B,h,T,hs) */
    for (size_t bh = 0; bh < BH; bh++) {
        matmul_tn(l->dK + bh * Ths, l->dscores + bh * TT, l->Q + bh * Ths, T, T, hs, MATMUL_SET);
        divide(l->dK + bh * Ths, Ths, root);
    }

    /* forward: Q = split_heads(X @ Wq), K = split_heads(X @ Wk), V = split_heads(X @ Wv) */
    /*  9. dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)   (B,T,C) each */
    merge_heads(l->dQm, l->dQ, B, T, C, h);
    merge_heads(l->dKm, l->dK, B, T, C, h);
    merge_heads(l->dVm, l->dV, B, T, C, h);
    /* 10. dWq += X^T @ dQm                               (C,C) */
    matmul_tn(l->dWq, l->X, l->dQm, C, BT, C, MATMUL_ADD);
    /* 11. dWk += X^T @ dKm                               (C,C) */
    matmul_tn(l->dWk, l->X, l->dKm, C, BT, C, MATMUL_ADD);
    /* 12. dWv += X^T @ dVm                               (C,C) */
    matmul_tn(l->dWv, l->X, l->dVm, C, BT, C, MATMUL_ADD);
    /* 13. dX = dQm @ Wq^T + dKm @ Wk^T + dVm @ Wv^T      (B,T,C): X feeds all three projections.
     *     One sum per entry: the terms of the first product, then the second's, then the
     *     third's, each added in k order (SET, then ADD, ADD). */
    matmul_nt(l->dX, l->dQm, l->Wq, BT, C, C, MATMUL_SET);
    matmul_nt(l->dX, l->dKm, l->Wk, BT, C, C, MATMUL_ADD);
    matmul_nt(l->dX, l->dVm, l->Wv, BT, C, C, MATMUL_ADD);
}

int mha_backward(mha_layer *l, const double *dY, double *dX)
{
    if (!l || !dY) {
        return MHA_ENULL;
    }
    if (!l->have_forward) {
        return MHA_ENOFORWARD;
    }
    const size_t btc = (size_t)l->B * (size_t)l->T * (size_t)l->C;
    memmove(l->dY, dY, btc * sizeof(double));
    backward_core(l);
    layer_cache_holds(l, 1, 1); /* the gradients no longer hold the prepared check's */
    if (dX) {
        memmove(dX, l->dX, btc * sizeof(double));
    }
    return MHA_OK;
}

int mha_zero_grad(mha_layer *l)
{
    if (!l) {
        return MHA_ENULL;
    }
    memset(l->grads, 0, mha_num_params(l) * sizeof(double));
    return MHA_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* tensor access */

static int known(int id)
{
    return id >= 0 && id < MHA_T_COUNT;
}

int mha_tensor_count(void)
{
    return MHA_T_COUNT;
}
const char *mha_tensor_name(int id)
{
    return known(id) ? tensor_table[id].name : NULL;
}
int mha_tensor_kind(int id)
{
    return known(id) ? tensor_table[id].kind : -1;
}
int mha_tensor_stage(int id)
{
    return known(id) ? tensor_table[id].restart : MHA_STAGE_NONE;
}
int mha_tensor_grad(int id)
{
    return known(id) ? tensor_table[id].grad : MHA_T_NONE;
}
int mha_tensor_step(int id)
{
    return known(id) ? tensor_table[id].step : -1;
}

/* 1 if tensor `id` is the grad of some tensor of the table */
static int is_some_grad(int id)
{
    for (int t = 0; t < MHA_T_COUNT; t++) {
        if (tensor_table[t].grad == id) {
            return 1;
        }
    }
    return 0;
}

int mha_grad_order(int i)
{
    int k = 0; /* gradients listed so far */
    for (int step = 1; step <= MHA_T_COUNT; step++) {
        for (int id = 0; id < MHA_T_COUNT; id++) {
            if (tensor_table[id].step == step && is_some_grad(id) && k++ == i) {
                return id;
            }
        }
    }
    return MHA_T_NONE;
}

int mha_check_tensor(int which)
{
    return which >= 0 && which < MHA_CHECK_COUNT ? check_tensor_id[which] : MHA_T_NONE;
}

const char *mha_check_name(int which)
{
    return mha_tensor_name(mha_check_tensor(which));
}

/* The shape of tensor `id` (a known one) for these sizes: rank and dims */
static void shape_of(int id, int B, int T, int C, int h, int *rank, int dims[MHA_MAX_RANK])
{
    switch (tensor_table[id].shape) {
    case MHA_SHAPE_CC:
        *rank = 2;
        dims[0] = C;
        dims[1] = C;
        break;
    case MHA_SHAPE_BTC:
        *rank = 3;
        dims[0] = B;
        dims[1] = T;
        dims[2] = C;
        break;
    case MHA_SHAPE_BHTHS:
        *rank = 4;
        dims[0] = B;
        dims[1] = h;
        dims[2] = T;
        dims[3] = C / h;
        break;
    default: /* MHA_SHAPE_BHTT */
        *rank = 4;
        dims[0] = B;
        dims[1] = h;
        dims[2] = T;
        dims[3] = T;
        break;
    }
}

int mha_tensor_shape_for(int id, int B, int T, int C, int h, int *rank, int dims[MHA_MAX_RANK])
{
    if (!rank || !dims) {
        return MHA_ENULL;
    }
    if (!known(id)) {
        return MHA_ETENSOR;
    }
    if (B <= 0 || T <= 0 || C <= 0 || h <= 0) {
        return MHA_EDIM;
    }
    if (C % h != 0) {
        return MHA_EDIVISIBLE;
    }
    shape_of(id, B, T, C, h, rank, dims);
    return MHA_OK;
}

int mha_tensor_shape(const mha_layer *l, int id, int *rank, int dims[MHA_MAX_RANK])
{
    if (!l || !rank || !dims) {
        return MHA_ENULL;
    }
    if (!known(id)) {
        return MHA_ETENSOR;
    }
    if (in_cache(id) && !l->have_forward) {
        return MHA_ENOFORWARD;
    }
    shape_of(id, l->B, l->T, l->C, l->h, rank, dims);
    return MHA_OK;
}

/* 1 if tensor `id` holds values: the weights and their gradients always; the cached tensors
 * after a forward, and the cached gradients after a backward of that forward */
static int tensor_exists(const mha_layer *l, int id)
{
    if (!in_cache(id)) {
        return 1;
    }
    if (tensor_table[id].kind == MHA_KIND_GRADIENT) {
        return l->have_forward && l->have_backward;
    }
    return l->have_forward;
}

double *mha_tensor(mha_layer *l, int id, size_t *len)
{
    if (len) {
        *len = 0;
    }
    if (!l || !known(id) || !tensor_exists(l, id)) {
        return NULL;
    }
    if (len) {
        *len = tensor_size(l, id);
    }
    return l->tensor[id];
}

/* ---------------------------------------------------------------------------------------------- */
/* the header's numbers by name */

typedef struct {
    const char *name;
    double value;
} constant;

#define CONSTANT(name)                        {#name, (double)(name)},
#define STATUS_CONSTANT(name, value, message) CONSTANT(MHA_##name)
#define TENSOR_CONSTANT(id, ...)              CONSTANT(MHA_T_##id)
#define CHECK_CONSTANT(id, name, shape, kind, restart, grad, step, check)                          \
    MHA_IF_##check(CONSTANT(MHA_CHECK_##id))
#define ROW_OFFSET(field)                                                                          \
    {"offsetof(mha_check_row, " #field ")", (double)offsetof(mha_check_row, field)},
#define SIZE_OF(type) {"sizeof(" #type ")", (double)sizeof(type)},
/* clang-format off */
static const constant constants[] = {
    MHA_STATUSES(STATUS_CONSTANT)
    CONSTANT(MHA_VERSION_MAJOR) CONSTANT(MHA_VERSION_MINOR) CONSTANT(MHA_VERSION_PATCH)
    CONSTANT(MHA_RNG_DEFAULT) CONSTANT(MHA_RNG_LEGACY)
    CONSTANT(MHA_CAUSAL) CONSTANT(MHA_CHECK_TWO_POINT) CONSTANT(MHA_MAX_RANK)
    CONSTANT(MHA_SHAPE_CC) CONSTANT(MHA_SHAPE_BTC) CONSTANT(MHA_SHAPE_BHTHS)
    CONSTANT(MHA_SHAPE_BHTT)
    CONSTANT(MHA_KIND_PARAM) CONSTANT(MHA_KIND_INPUT) CONSTANT(MHA_KIND_INTERMEDIATE)
    CONSTANT(MHA_KIND_OUTPUT) CONSTANT(MHA_KIND_GRADIENT)
    CONSTANT(MHA_STAGE_NONE) CONSTANT(MHA_STAGE_QKV) CONSTANT(MHA_STAGE_SCORES)
    CONSTANT(MHA_STAGE_ATT) CONSTANT(MHA_STAGE_HEADOUT) CONSTANT(MHA_STAGE_CONCAT)
    CONSTANT(MHA_STAGE_Y)
    CONSTANT(MHA_T_NONE) MHA_TENSORS(TENSOR_CONSTANT) CONSTANT(MHA_T_COUNT)
    MHA_TENSORS(CHECK_CONSTANT) CONSTANT(MHA_CHECK_COUNT)
    CONSTANT(MHA_LOSS_DOT) CONSTANT(MHA_LOSS_MSE)
    CONSTANT(MHA_GRADCHECK_TINY) CONSTANT(MHA_GRADCHECK_SUM_FLOOR) CONSTANT(MHA_GRADCHECK_EPS)
    SIZE_OF(mha_check_row) MHA_CHECK_ROW_FIELDS(ROW_OFFSET)
    SIZE_OF(int) SIZE_OF(size_t) SIZE_OF(void *) SIZE_OF(double)
};
/* clang-format on */
#undef CONSTANT
#undef STATUS_CONSTANT
#undef TENSOR_CONSTANT
#undef CHECK_CONSTANT
#undef ROW_OFFSET
#undef SIZE_OF

enum { N_CONSTANTS = sizeof constants / sizeof constants[0] };

int mha_constant_count(void)
{
    return N_CONSTANTS;
}
const char *mha_constant_name(int i)
{
    return i >= 0 && i < N_CONSTANTS ? constants[i].name : NULL;
}
double mha_constant_value(int i)
{
    return i >= 0 && i < N_CONSTANTS ? constants[i].value : NAN;
}

double mha_cache_bytes(int B, int T, int C, int h)
{
    if (B <= 0 || T <= 0 || C <= 0 || h <= 0 || C % h != 0) {
        return 0.0;
    }
    const double btc = (double)B * (double)T * (double)C;
    const double bhtt = (double)B * (double)h * (double)T * (double)T;
    return (CACHE_BTC * btc + CACHE_BHTT * bhtt) * (double)sizeof(double);
}

/* ---------------------------------------------------------------------------------------------- */
/* single-head attention (lesson 1) */

int mha_single_head(const double *X, int B, int T, int C, int hs, const double *Wq,
                    const double *Wk, const double *Wv, int flags, double *att, double *out)
{
    if (!X || !Wq || !Wk || !Wv) {
        return MHA_ENULL;
    }
    if (B <= 0 || T <= 0 || C <= 0 || hs <= 0) {
        return MHA_EDIM;
    }
    if (flags & ~MHA_CAUSAL) {
        return MHA_EFLAGS;
    }
    /* temporaries: q, k, v (B,T,hs) and att (B,T,T) */
    size_t bt, bths, btt, btc, n, bytes, tmp;
    if (!mul_size((size_t)B, (size_t)T, &bt) || !mul_size(bt, (size_t)hs, &bths) ||
        !mul_size(bt, (size_t)T, &btt) || !mul_size(bt, (size_t)C, &btc) ||
        !mul_size(bths, 3, &n) || n > SIZE_MAX - btt ||
        !mul_size(n + btt, sizeof(double), &bytes) || !mul_size((size_t)C, (size_t)hs, &tmp) ||
        !mul_size(btc, sizeof(double), &tmp)) {
        return MHA_EOVERFLOW;
    }
    double *q = malloc(bytes);
    if (!q) {
        return MHA_ENOMEM;
    }
    double *k = q + bths, *v = k + bths, *a = v + bths;
    const size_t Ts = (size_t)T, HS = (size_t)hs, Cs = (size_t)C;
    matmul_nn(q, X, Wq, bt, Cs, HS); /* (B*T,C) @ (C,hs) */
    matmul_nn(k, X, Wk, bt, Cs, HS);
    matmul_nn(v, X, Wv, bt, Cs, HS);
    for (size_t b = 0; b < (size_t)B; b++) {
        double *a_b = a + b * Ts * Ts;
        matmul_nt(a_b, q + b * Ts * HS, k + b * Ts * HS, Ts, HS, Ts, MATMUL_SET); /* q k^T (T,T) */
        softmax_rows(a_b, a_b, Ts, sqrt((double)HS), flags & MHA_CAUSAL); /* / sqrt(hs), softmax */
        if (out) {
            matmul_nn(out + b * Ts * HS, a_b, v + b * Ts * HS, Ts, Ts, HS);
        }
    }
    if (att) {
        memcpy(att, a, btt * sizeof(double));
    }
    free(q);
    return MHA_OK;
}
