/*
 * train.c - MSE loss, SGD step, the training loop (lesson 5) and the finite-difference gradient
 * check (lesson 4).
 *
 * B = batch, T = tokens, C = channels, h = heads, hs = C / h.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layer.h"
#include "mha.h"

/* ---------------------------------------------------------------------------------------------- */
/* loss and optimiser */

/* Neumaier-compensated running sum: the finite-difference check subtracts nearby losses, so the
 * rounding of the sum itself must stay far below the differences being measured. */
typedef struct {
    double sum, comp;
} csum;

static void csum_add(csum *s, double term)
{
    const double t = s->sum + term;
    s->comp += fabs(s->sum) >= fabs(term) ? (s->sum - t) + term : (term - t) + s->sum;
    s->sum = t;
}

/* mean((Y - target)^2) over n elements */
static double mse_value(const double *Y, const double *target, size_t n)
{
    csum s = {0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        const double d = Y[i] - target[i];
        csum_add(&s, d * d);
    }
    return (s.sum + s.comp) / (double)n;
}

/* dY = dloss/dY = 2 (Y - target) / n */
static void mse_grad(double *dY, const double *Y, const double *target, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dY[i] = 2.0 * (Y[i] - target[i]) / (double)n;
    }
}

int mha_mse_loss(const double *Y, const double *target, size_t n, double *loss, double *dY)
{
    if (!Y || !target || !loss) {
        return MHA_ENULL;
    }
    if (n == 0) {
        return MHA_EDIM;
    }
    const double value = mse_value(Y, target, n);
    if (dY) {
        mse_grad(dY, Y, target, n);
    }
    *loss = value;
    return MHA_OK;
}

static void sgd_update(mha_layer *l, double lr)
{
    const size_t n = mha_num_params(l);
    for (size_t i = 0; i < n; i++) {
        l->params[i] -= lr * l->grads[i];
    }
}

int mha_sgd_step(mha_layer *l, double lr)
{
    if (!l) {
        return MHA_ENULL;
    }
    if (!isfinite(lr)) {
        return MHA_EVALUE;
    }
    sgd_update(l, lr);
    return MHA_OK;
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            return 0;
        }
    }
    return 1;
}

int mha_train(mha_layer *l, const double *X, const double *target, int B, int T, int flags,
              double lr, int steps, double *losses)
{
    int rc = check_forward_args(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    if (!target) {
        return MHA_ENULL;
    }
    if (steps < 0) {
        return MHA_EDIM;
    }
    const size_t n = (size_t)B * (size_t)T * (size_t)l->C;
    if (layer_owns(l, target, n)) {
        return MHA_EALIAS; /* every step rewrites the cache */
    }
    if (!isfinite(lr) || !all_finite(X, n) || !all_finite(target, n)) {
        return MHA_EVALUE;
    }
    if (steps == 0) {
        return MHA_OK;
    }
    rc = layer_begin_forward(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    for (int s = 0; s < steps; s++) {
        /* one step: zero_grad, forward, loss, backward, sgd_step */
        memset(l->grads, 0, mha_num_params(l) * sizeof(double));
        forward_from(l, MHA_STAGE_QKV);
        const double loss = mse_value(l->Y, target, n);
        if (losses) {
            losses[s] = loss;
        }
        if (!isfinite(loss)) {
            for (int r = s + 1; losses && r < steps; r++) {
                losses[r] = NAN;
            }
            return MHA_EDIVERGED;
        }
        mse_grad(l->dY, l->Y, target, n);
        backward_core(l);
        layer_cache_holds(l, 1, 1);
        sgd_update(l, lr);
    }
    /* the cache holds the forward/backward of the last step, before its update */
    return MHA_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* gradient check */

/* The checked tensor `which` (MHA_CHECK_*): its id, its values p, its analytic gradient g (the
 * table's grad), n elements */
typedef struct {
    int which, id;
    double *p, *g;
    size_t n;
} check_target;

static int check_target_of(mha_layer *l, int which, check_target *ct)
{
    const int id = mha_check_tensor(which);
    if (id == MHA_T_NONE) {
        return MHA_ETENSOR;
    }
    ct->which = which;
    ct->id = id;
    ct->p = l->tensor[id];
    ct->g = l->tensor[tensor_table[id].grad];
    ct->n = tensor_size(l, id);
    return MHA_OK;
}

/* Rows b0..b1-1 of Y after a change confined to head `head`'s columns of concat (head = 0: any
 * change): from the prepared partial sums when there are some */
static void output_rows_after(mha_layer *l, size_t b0, size_t b1, size_t head)
{
    const size_t btc = (size_t)l->B * (size_t)l->T * (size_t)l->C;
    if (head > 0 && l->gc_partial_ok) {
        forward_output_rows(l, b0, b1, head, l->gc_partial + (head - 1) * btc);
    } else {
        forward_output_rows(l, b0, b1, 0, NULL);
    }
}

/* After element i of the checked tensor changed, recompute exactly the part of the forward that
 * depends on it (the same bits a full forward would give) */
static void recompute_after(mha_layer *l, const check_target *ct, size_t i)
{
    const size_t B = (size_t)l->B, T = (size_t)l->T, C = (size_t)l->C, h = (size_t)l->h;
    const size_t hs = (size_t)l->hs;
    switch (ct->which) {
    case MHA_CHECK_WQ:
    case MHA_CHECK_WK:
    case MHA_CHECK_WV: {
        /* W[c, j] feeds column j of Q/K/V, i.e. head j / hs of every batch item */
        const size_t j = i % C, head = j / hs;
        forward_project_column(l, ct->which - MHA_CHECK_WQ, j);
        forward_heads(l, ct->which == MHA_CHECK_WV ? MHA_STAGE_HEADOUT : MHA_STAGE_SCORES, 0, B,
                      head, head + 1);
        output_rows_after(l, 0, B, head);
        break;
    }
    case MHA_CHECK_WO:
        forward_output_column(l, i % C); /* Wo[c, j] feeds column j of Y */
        break;
    case MHA_CHECK_X: {
        const size_t b = i / (T * C), t = (i / C) % T; /* X[b, t, :] feeds row t of Q, K, V */
        forward_project_row(l, b, t);
        forward_heads(l, MHA_STAGE_SCORES, b, b + 1, 0, h);
        output_rows_after(l, b, b + 1, 0);
        break;
    }
    case MHA_CHECK_Q:
    case MHA_CHECK_K:
    case MHA_CHECK_V:
    case MHA_CHECK_SCORES:
    case MHA_CHECK_ATT:
    case MHA_CHECK_HEADOUT: {
        /* an entry of one (batch item, head) of a (B,h,T,hs) or (B,h,T,T) tensor: that head's
         * attention runs again from the tensor's restart stage (the table's), then its rows of Y */
        const size_t per_head = tensor_table[ct->id].shape == MHA_SHAPE_BHTT ? T * T : T * hs;
        const size_t bh = i / per_head;
        forward_heads(l, tensor_table[ct->id].restart, bh / h, bh / h + 1, bh % h, bh % h + 1);
        output_rows_after(l, bh / h, bh / h + 1, bh % h);
        break;
    }
    default: { /* concat (B,T,C): rows of Y */
        const size_t b = i / (T * C), head = (i % C) / hs;
        output_rows_after(l, b, b + 1, head);
        break;
    }
    }
}

/* The partial sums of Y = concat @ Wo before each head g = 1..h-1 (see gc_partial in layer.h),
 * from the prepared forward. Without the memory for them the check still works, only slower. */
static void prepare_partials(mha_layer *l)
{
    const size_t BT = (size_t)l->B * (size_t)l->T, C = (size_t)l->C, hs = (size_t)l->hs;
    const size_t btc = BT * C, heads_before = (size_t)l->h - 1;
    const double *Wo = l->Wo;
    l->gc_partial_ok = 0;
    if (heads_before == 0 || btc == 0 || heads_before > SIZE_MAX / sizeof(double) / btc) {
        return; /* one head, or more partial sums than a size_t can count: none */
    }
    const size_t n = heads_before * btc;
    if (n > l->gc_partial_cap) {
        double *block = malloc(n * sizeof(double));
        if (!block) {
            return;
        }
        free(l->gc_partial);
        l->gc_partial = block;
        l->gc_partial_cap = n;
    }
    for (size_t g = 1; g < (size_t)l->h; g++) {
        double *partial = l->gc_partial + (g - 1) * btc; /* columns 0 .. g*hs-1 */
        if (g == 1) {
            memset(partial, 0, btc * sizeof(double));
        } else {
            memcpy(partial, partial - btc, btc * sizeof(double));
        }
        matmul_nn_cols_acc(partial, l->concat + (g - 1) * hs, C, Wo + (g - 1) * hs * C, BT, hs, C);
    }
    l->gc_partial_ok = 1;
}

/* The loss of the cached Y: sum(G * Y) or mean((Y - target)^2), with G / target in l->aux */
static double check_loss(const mha_layer *l)
{
    const size_t n = (size_t)l->B * (size_t)l->T * (size_t)l->C;
    if (l->gc_loss == MHA_LOSS_MSE) {
        return mse_value(l->Y, l->aux, n);
    }
    csum s = {0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        csum_add(&s, l->aux[i] * l->Y[i]);
    }
    return s.sum + s.comp;
}

/* The loss with element i of the checked tensor set to x (the element is left at x) */
static double loss_at(mha_layer *l, const check_target *ct, size_t i, double x)
{
    ct->p[i] = x;
    recompute_after(l, ct, i);
    return check_loss(l);
}

int mha_gradcheck_prepare(mha_layer *l, const double *X, int B, int T, int flags, int loss_kind,
                          const double *aux)
{
    const int two_point = (flags & MHA_CHECK_TWO_POINT) != 0;
    flags &= ~MHA_CHECK_TWO_POINT; /* the forward's own flags */
    int rc = check_forward_args(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    if (!aux) {
        return MHA_ENULL;
    }
    if (loss_kind != MHA_LOSS_DOT && loss_kind != MHA_LOSS_MSE) {
        return MHA_ELOSS;
    }
    if (layer_owns(l, aux, (size_t)B * (size_t)T * (size_t)l->C)) {
        return MHA_EALIAS;
    }
    rc = layer_begin_forward(l, X, B, T, flags);
    if (rc != MHA_OK) {
        return rc;
    }
    const size_t n = (size_t)B * (size_t)T * (size_t)l->C;
    memmove(l->aux, aux, n * sizeof(double));
    l->gc_loss = loss_kind;
    l->gc_two_point = two_point;
    forward_from(l, MHA_STAGE_QKV);
    if (loss_kind == MHA_LOSS_MSE) {
        mse_grad(l->dY, l->Y, l->aux, n);
    } else {
        memcpy(l->dY, l->aux, n * sizeof(double));
    }
    memset(l->grads, 0, mha_num_params(l) * sizeof(double));
    backward_core(l);
    layer_cache_holds(l, 1, 1);
    prepare_partials(l);
    l->gc_ready = 1; /* after layer_cache_holds, which cancels any earlier preparation */
    return MHA_OK;
}

/* ||a - n|| / (||a|| + ||n||) from a row's sums of squares; infinite when a sum is not finite */
static double norm_rel(const mha_check_row *row)
{
    if (!isfinite(row->ss_diff) || !isfinite(row->ss_analytic) || !isfinite(row->ss_numeric)) {
        return INFINITY;
    }
    const double norms = sqrt(row->ss_analytic) + sqrt(row->ss_numeric);
    return sqrt(row->ss_diff) / fmax(norms, MHA_GRADCHECK_TINY);
}

/* dL/dx at element i of the checked tensor (now x), by the prepared stencil; leaves the element
 * perturbed (the caller restores it) */
static double numeric_gradient(mha_layer *l, const check_target *ct, size_t i, double x, double eps)
{
    const double d1 = loss_at(l, ct, i, x + eps) - loss_at(l, ct, i, x - eps);
    if (l->gc_two_point) {
        return d1 / (2.0 * eps); /* two points, as a notebook writes it: error O(e^2) */
    }
    /* five-point central stencil: L'(x) = (8 (L(x+e) - L(x-e)) - (L(x+2e) - L(x-2e))) / 12e,
     * error O(e^4) instead of O(e^2), so e can be large enough that rounding in L stays far
     * below the gradients being checked */
    const double d2 = loss_at(l, ct, i, x + 2.0 * eps) - loss_at(l, ct, i, x - 2.0 * eps);
    return (8.0 * d1 - d2) / (12.0 * eps);
}

int mha_gradcheck_slice(mha_layer *l, int which, int samples, int first, int count, double eps,
                        mha_check_row *row)
{
    if (!l || !row) {
        return MHA_ENULL;
    }
    if (!l->gc_ready) {
        return MHA_ENOFORWARD;
    }
    if (!isfinite(eps) || eps <= 0.0) {
        return MHA_EVALUE;
    }
    if (samples < 0 || first < 0 || count < 0) {
        return MHA_EDIM;
    }
    check_target ct;
    int rc = check_target_of(l, which, &ct);
    if (rc != MHA_OK) {
        return rc;
    }
    /* sample position j checks element floor(j * n / samples); samples == 0 means every element */
    const size_t positions = samples == 0 || (size_t)samples >= ct.n ? ct.n : (size_t)samples;
    if ((size_t)first > positions || (size_t)count > positions - (size_t)first) {
        return MHA_ERANGE;
    }
    row->size = (double)ct.n;
    for (size_t j = (size_t)first; j < (size_t)first + (size_t)count; j++) {
        const size_t i =
            positions == ct.n ? j : (size_t)floor((double)j * (double)ct.n / (double)positions);
        const double x = ct.p[i];
        const double numeric = numeric_gradient(l, &ct, i, x, eps);
        ct.p[i] = x;
        recompute_after(l, &ct, i); /* the next element starts from the unperturbed forward */
        const double analytic = ct.g[i];
        double abs_err = fabs(analytic - numeric);
        double denom = fmax(fmax(fabs(analytic), fabs(numeric)), MHA_GRADCHECK_TINY);
        double rel = abs_err / denom;
        /* a - n overflows only when the signs differ, and then |a - n| = |a| + |n|: the ratio is 1 */
        double rel_sum = isinf(abs_err) ? 1.0
                                        : abs_err / fmax(fabs(analytic) + fabs(numeric),
                                                         MHA_GRADCHECK_SUM_FLOOR);
        if (!isfinite(analytic) || !isfinite(numeric)) {
            abs_err = rel = rel_sum = INFINITY;
        }
        row->max_rel_sum = fmax(row->max_rel_sum, rel_sum);
        if (row->worst < 0 || rel > row->max_rel) {
            row->max_rel = rel;
            row->worst = (double)i;
            row->analytic = analytic;
            row->numeric = numeric;
        }
        row->max_abs = fmax(row->max_abs, abs_err);
        row->mean_rel = (row->mean_rel * row->checked + rel) / (row->checked + 1.0);
        row->checked += 1.0;
        row->ss_diff += abs_err * abs_err;
        row->ss_analytic += analytic * analytic;
        row->ss_numeric += numeric * numeric;
    }
    row->norm_rel = norm_rel(row);
    return MHA_OK;
}

int mha_gradcheck(mha_layer *l, const double *X, int B, int T, int flags, int loss_kind,
                  const double *aux, double eps, int samples, mha_check_row *report)
{
    if (!report) {
        return MHA_ENULL;
    }
    if (!isfinite(eps) || eps <= 0.0) {
        return MHA_EVALUE;
    }
    if (samples < 0) {
        return MHA_EDIM;
    }
    int rc = mha_gradcheck_prepare(l, X, B, T, flags, loss_kind, aux);
    if (rc != MHA_OK) {
        return rc;
    }
    for (int which = 0; which < MHA_CHECK_COUNT; which++) {
        mha_check_row *row = &report[which];
        memset(row, 0, sizeof *row);
        row->worst = -1.0;
        const size_t n = tensor_size(l, mha_check_tensor(which));
        const size_t positions = samples == 0 || (size_t)samples >= n ? n : (size_t)samples;
        const size_t chunk = 1u << 20; /* slices take int counts */
        for (size_t first = 0; first < positions && (size_t)first <= (size_t)INT_MAX;
             first += chunk) {
            const size_t count = positions - first < chunk ? positions - first : chunk;
            rc = mha_gradcheck_slice(l, which, samples, (int)first, (int)count, eps, row);
            if (rc != MHA_OK) {
                return rc;
            }
        }
    }
    return MHA_OK;
}
