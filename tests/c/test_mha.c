/*
 * test_mha.c - native unit tests of the layer (c/mha.c, c/train.c, c/kernels.c), built together
 * with the library under AddressSanitizer + UndefinedBehaviorSanitizer by `make test-c`.
 * Exit status 0 only if every check passes. The NumPy cross-check and the course-size figures
 * live in the Node suites (tests/NAME.test.mjs); here the point is memory safety of every path,
 * the error contract, and small-size gradient checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mha.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        checks++;                                                                                  \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static double *normals(uint32_t seed, size_t n)
{
    mha_rng *r = NULL;
    double *x = malloc(n * sizeof(double));
    if (!x || mha_rng_create(MHA_RNG_DEFAULT, seed, 0, &r) != MHA_OK) {
        printf("setup failed\n");
        exit(2);
    }
    mha_rng_standard_normal(r, x, n);
    mha_rng_free(r);
    return x;
}

static double max_abs_diff(const double *a, const double *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        m = fmax(m, fabs(a[i] - b[i]));
    }
    return m;
}

static void test_create_errors(void)
{
    mha_layer *l = (mha_layer *)1;
    CHECK(mha_create(0, 1, &l) == MHA_EDIM && l == NULL, "C = 0");
    CHECK(mha_create(8, 0, &l) == MHA_EDIM, "h = 0");
    CHECK(mha_create(-8, 2, &l) == MHA_EDIM, "C < 0");
    CHECK(mha_create(6, 4, &l) == MHA_EDIVISIBLE, "6 %% 4");
    CHECK(mha_create(8, 2, NULL) == MHA_ENULL, "NULL out");
    mha_free(NULL);
    CHECK(strcmp(mha_strerror(MHA_EDIVISIBLE), "C must be divisible by the number of heads") == 0,
          "message");
    CHECK(strcmp(mha_strerror(12345), "unknown error code") == 0, "unknown code");
    CHECK(strcmp(mha_version(), "0.1.0") == 0, "version %s", mha_version());
    CHECK(mha_params(NULL) == NULL && mha_num_params(NULL) == 0, "NULL layer accessors");
}

static void test_forward_backward_gradcheck(int C, int h, int B, int T, int flags)
{
    mha_layer *l = NULL;
    CHECK(mha_create(C, h, &l) == MHA_OK, "create %d %d", C, h);
    CHECK(mha_init_weights(l, 42, 0, MHA_RNG_DEFAULT, 1.0 / sqrt((double)C)) == MHA_OK, "init");
    const size_t n = (size_t)B * T * C;
    double *X = normals(7, n), *G = normals(8, n), *Y = malloc(n * sizeof(double));
    double *dX = malloc(n * sizeof(double));
    size_t len = 0;
    CHECK(mha_tensor(l, MHA_T_ATT, &len) == NULL && len == 0, "no att before forward");
    CHECK(mha_backward(l, G, dX) == MHA_ENOFORWARD, "backward before forward");
    CHECK(mha_forward(l, X, B, T, flags, Y) == MHA_OK, "forward");
    const double *att = mha_tensor(l, MHA_T_ATT, &len);
    CHECK(att && len == (size_t)B * h * T * T, "att len %zu", len);
    double worst_row = 0.0;
    for (size_t r = 0; att && r < (size_t)B * h * T; r++) {
        double s = 0.0;
        for (int j = 0; j < T; j++) {
            s += att[r * T + j];
            if ((flags & MHA_CAUSAL) && (size_t)j > r % (size_t)T) {
                CHECK(att[r * T + j] == 0.0, "masked entry not 0");
            }
        }
        worst_row = fmax(worst_row, fabs(s - 1.0));
    }
    CHECK(worst_row <= 1e-15, "row sums off by %g", worst_row);
    CHECK(mha_tensor(l, MHA_T_DQ, &len) == NULL, "no dQ before backward");
    CHECK(mha_zero_grad(l) == MHA_OK && mha_backward(l, G, dX) == MHA_OK, "backward");
    CHECK(mha_tensor(l, MHA_T_DQ, &len) != NULL && len == n, "dQ after backward");
    int rank = 0, dims[MHA_MAX_RANK] = {0};
    CHECK(mha_tensor_shape(l, MHA_T_SCORES, &rank, dims) == MHA_OK && rank == 4 && dims[0] == B &&
              dims[1] == h && dims[2] == T && dims[3] == T,
          "scores shape");

    /* the gradient check, every entry, both losses */
    mha_check_row rep[MHA_CHECK_COUNT];
    for (int loss = MHA_LOSS_DOT; loss <= MHA_LOSS_MSE; loss++) {
        CHECK(mha_gradcheck(l, X, B, T, flags, loss, G, MHA_GRADCHECK_EPS, 0, rep) == MHA_OK,
              "gradcheck");
        for (int w = 0; w < MHA_CHECK_COUNT; w++) {
            CHECK(rep[w].checked == rep[w].size, "%s checked %g of %g", mha_check_name(w),
                  rep[w].checked, rep[w].size);
            CHECK(rep[w].max_rel <= 1e-6, "C=%d h=%d B=%d T=%d flags=%d loss=%d %s max_rel %g", C,
                  h, B, T, flags, loss, mha_check_name(w), rep[w].max_rel);
            /* norm-wise: ||a - n|| <= max_rel (||a|| + ||n||), so never above the per-entry max */
            const double want = sqrt(rep[w].ss_diff) /
                                fmax(sqrt(rep[w].ss_analytic) + sqrt(rep[w].ss_numeric), 1e-12);
            CHECK(rep[w].norm_rel == want && rep[w].norm_rel >= 0 &&
                      rep[w].norm_rel <= rep[w].max_rel,
                  "%s norm_rel %g (sums: %g), max_rel %g", mha_check_name(w), rep[w].norm_rel, want,
                  rep[w].max_rel);
        }
    }
    /* the check leaves the forward as it was: same Y bits */
    const double *Yc = mha_tensor(l, MHA_T_Y, &len);
    CHECK(Yc && memcmp(Yc, Y, n * sizeof(double)) == 0, "cache restored after gradcheck");

    /* a sampled check covers exactly `samples` entries */
    CHECK(mha_gradcheck(l, X, B, T, flags, MHA_LOSS_DOT, G, MHA_GRADCHECK_EPS, 5, rep) == MHA_OK,
          "sampled");
    CHECK(rep[MHA_CHECK_WQ].checked == 5, "sampled count %g", rep[MHA_CHECK_WQ].checked);

    /* slices: bad arguments */
    mha_check_row row = {0};
    row.worst = -1;
    CHECK(mha_forward(l, X, B, T, flags, NULL) == MHA_OK, "a forward cancels the preparation");
    CHECK(mha_gradcheck_slice(l, MHA_CHECK_WQ, 0, 0, 1, 1e-3, &row) == MHA_ENOFORWARD,
          "slice unprepared");
    CHECK(mha_gradcheck_prepare(l, X, B, T, flags, MHA_LOSS_DOT, G) == MHA_OK, "prepare");
    CHECK(mha_gradcheck_slice(l, 99, 0, 0, 1, 1e-3, &row) == MHA_ETENSOR, "bad which");
    CHECK(mha_gradcheck_slice(l, MHA_CHECK_WQ, 0, C * C, 1, 1e-3, &row) == MHA_ERANGE, "range");
    CHECK(mha_gradcheck_slice(l, MHA_CHECK_WQ, 0, 0, 1, 0.0, &row) == MHA_EVALUE, "eps 0");
    CHECK(mha_gradcheck_slice(l, MHA_CHECK_WQ, 0, 0, 1, NAN, &row) == MHA_EVALUE, "eps NaN");
    CHECK(mha_gradcheck_slice(l, MHA_CHECK_WQ, 0, 0, 1, 1e-3, &row) == MHA_OK && row.checked == 1,
          "one");
    CHECK(mha_gradcheck(l, X, B, T, flags, 7, G, 1e-3, 0, rep) == MHA_ELOSS, "loss kind");

    free(X);
    free(G);
    free(Y);
    free(dX);
    mha_free(l);
}

/* sum(G * Y) with the compensated sum the library uses for its check loss */
static double dot_loss(const double *G, const double *Y, size_t n)
{
    double sum = 0.0, comp = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double term = G[i] * Y[i], t = sum + term;
        comp += fabs(sum) >= fabs(term) ? (sum - t) + term : (term - t) + sum;
        sum = t;
    }
    return sum + comp;
}

/* The loss after setting entry i of checked tensor `which` to x, by full forward passes only:
 * weights through mha_params, X in a copy, intermediates in the cache + mha_forward_from. */
static double loss_by_full_forward(mha_layer *l, const double *X, const double *G, int B, int T,
                                   int flags, int which, size_t i, double x)
{
    const size_t n = (size_t)B * T * (size_t)mha_layer_C(l);
    double *Xp = malloc(n * sizeof(double));
    memcpy(Xp, X, n * sizeof(double));
    double *params = mha_params(l);
    const size_t cc = (size_t)mha_layer_C(l) * (size_t)mha_layer_C(l);
    double saved = 0.0;
    if (which <= MHA_CHECK_WO) {
        saved = params[(size_t)which * cc + i];
        params[(size_t)which * cc + i] = x;
    } else if (which == MHA_CHECK_X) {
        Xp[i] = x;
    }
    mha_forward(l, Xp, B, T, flags, NULL);
    if (which > MHA_CHECK_X) {
        size_t len = 0;
        mha_tensor(l, mha_check_tensor(which), &len)[i] = x;
        mha_forward_from(l, mha_check_tensor(which));
    }
    size_t len = 0;
    const double loss = dot_loss(G, mha_tensor(l, MHA_T_Y, &len), n);
    if (which <= MHA_CHECK_WO) {
        params[(size_t)which * cc + i] = saved;
    }
    free(Xp);
    return loss;
}

/* The check recomputes only what an entry changes (one head's attention, Y from that head's
 * columns on, from kept partial sums); its numeric derivative must still be the stencil over
 * full forwards bit for bit, for entries of every head. */
static void test_gradcheck_entries_match_full_forwards(void)
{
    const int C = 12, h = 3, B = 2, T = 5, flags = MHA_CAUSAL;
    const double eps = MHA_GRADCHECK_EPS;
    mha_layer *l = NULL;
    CHECK(mha_create(C, h, &l) == MHA_OK, "create");
    CHECK(mha_init_weights(l, 3, 0, MHA_RNG_DEFAULT, 0.3) == MHA_OK, "init");
    const size_t n = (size_t)B * T * C;
    double *X = normals(11, n), *G = normals(12, n);
    /* (which, entry): entries in heads 0, 1 and 2 (hs = 4) and batch items 0 and 1 */
    const struct {
        int which;
        size_t i;
    } cases[] = {
        {MHA_CHECK_WQ, 5 * 12 + 1},
        {MHA_CHECK_WQ, 2 * 12 + 6},
        {MHA_CHECK_WK, 7 * 12 + 11},
        {MHA_CHECK_WV, 0 * 12 + 9},
        {MHA_CHECK_WV, 11 * 12 + 4},
        {MHA_CHECK_WO, 9 * 12 + 3},
        {MHA_CHECK_X, 1 * 60 + 2 * 12 + 7},
        {MHA_CHECK_Q, (1 * 3 + 2) * 20 + 3 * 4 + 1},
        {MHA_CHECK_K, (0 * 3 + 1) * 20 + 2 * 4},
        {MHA_CHECK_V, (1 * 3 + 1) * 20 + 4 * 4 + 3},
        {MHA_CHECK_SCORES, (1 * 3 + 2) * 25 + 4 * 5 + 2},
        {MHA_CHECK_ATT, (0 * 3 + 2) * 25 + 3 * 5 + 1},
        {MHA_CHECK_HEADOUT, (1 * 3 + 2) * 20 + 7},
        {MHA_CHECK_CONCAT, 1 * 60 + 3 * 12 + 10},
        {MHA_CHECK_CONCAT, 0 * 60 + 1 * 12 + 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int which = cases[c].which;
        const size_t i = cases[c].i;
        mha_check_row row = {0};
        row.worst = -1.0;
        CHECK(mha_gradcheck_prepare(l, X, B, T, flags, MHA_LOSS_DOT, G) == MHA_OK, "prepare");
        size_t len = 0;
        const double *p = which <= MHA_CHECK_WO ? mha_params(l) + (size_t)which * C * C
                                                : mha_tensor(l, mha_check_tensor(which), &len);
        const double x = p[i];
        CHECK(mha_gradcheck_slice(l, which, 0, (int)i, 1, eps, &row) == MHA_OK, "slice");
        const double d2 = loss_by_full_forward(l, X, G, B, T, flags, which, i, x + 2.0 * eps) -
                          loss_by_full_forward(l, X, G, B, T, flags, which, i, x - 2.0 * eps);
        const double d1 = loss_by_full_forward(l, X, G, B, T, flags, which, i, x + eps) -
                          loss_by_full_forward(l, X, G, B, T, flags, which, i, x - eps);
        const double numeric = (8.0 * d1 - d2) / (12.0 * eps);
        CHECK(row.numeric == numeric, "%s[%zu]: check %.17g, full forwards %.17g",
              mha_check_name(which), i, row.numeric, numeric);
        /* the two-point stencil a notebook writes, (L(x+e) - L(x-e)) / 2e, at its e = 1e-5 */
        const double e2 = 1e-5;
        mha_check_row two = {0};
        two.worst = -1.0;
        CHECK(mha_gradcheck_prepare(l, X, B, T, flags | MHA_CHECK_TWO_POINT, MHA_LOSS_DOT, G) ==
                  MHA_OK,
              "prepare two-point");
        CHECK(mha_gradcheck_slice(l, which, 0, (int)i, 1, e2, &two) == MHA_OK, "slice two-point");
        const double d = loss_by_full_forward(l, X, G, B, T, flags, which, i, x + e2) -
                         loss_by_full_forward(l, X, G, B, T, flags, which, i, x - e2);
        CHECK(two.numeric == d / (2.0 * e2), "%s[%zu]: two-point %.17g, full forwards %.17g",
              mha_check_name(which), i, two.numeric, d / (2.0 * e2));
        /* cs231n's form: |a - n| / max(|a| + |n|, 1e-8), by hand */
        const double a = two.analytic, num = two.numeric;
        const double sum_form = fabs(a - num) / fmax(fabs(a) + fabs(num), 1e-8);
        CHECK(two.max_rel_sum == sum_form, "%s[%zu]: max_rel_sum %.17g, by hand %.17g",
              mha_check_name(which), i, two.max_rel_sum, sum_form);
    }
    /* the two-point flag belongs to the check: a forward refuses it */
    CHECK(mha_forward(l, X, B, T, MHA_CHECK_TWO_POINT, NULL) == MHA_EFLAGS, "forward two-point");
    free(X);
    free(G);
    mha_free(l);
}

static void test_split_merge_single_head(void)
{
    const int B = 2, T = 3, C = 8, h = 4;
    const size_t n = (size_t)B * T * C;
    double *x = normals(1, n), *s = malloc(n * sizeof(double)), *m = malloc(n * sizeof(double));
    CHECK(mha_split_heads(x, B, T, C, h, s) == MHA_OK, "split");
    CHECK(mha_merge_heads(s, B, T, C, h, m) == MHA_OK, "merge");
    CHECK(memcmp(x, m, n * sizeof(double)) == 0, "round trip exact");
    /* split moves x[b, t, head*hs + d] to s[b, head, t, d] */
    CHECK(s[((1 * h + 3) * T + 2) * 2 + 1] == x[(1 * T + 2) * C + 3 * 2 + 1], "index formula");
    CHECK(mha_split_heads(x, B, T, C, 3, s) == MHA_EDIVISIBLE, "split C %% h");
    CHECK(mha_merge_heads(NULL, B, T, C, h, m) == MHA_ENULL, "merge NULL");

    /* with one head, the layer's attention equals single-head attention with Wq, Wk, Wv */
    mha_layer *l = NULL;
    CHECK(mha_create(C, 1, &l) == MHA_OK, "create");
    mha_init_weights(l, 3, 0, MHA_RNG_LEGACY, 0.5);
    CHECK(mha_forward(l, x, B, T, MHA_CAUSAL, NULL) == MHA_OK, "forward");
    const double *W = mha_params(l);
    double att[2 * 3 * 3], out[2 * 3 * 8];
    CHECK(mha_single_head(x, B, T, C, C, W, W + C * C, W + 2 * C * C, MHA_CAUSAL, att, out) ==
              MHA_OK,
          "single");
    size_t len;
    CHECK(max_abs_diff(att, mha_tensor(l, MHA_T_ATT, &len), sizeof att / sizeof att[0]) == 0.0,
          "att equal");
    CHECK(max_abs_diff(out, mha_tensor(l, MHA_T_HEADOUT, &len), sizeof out / sizeof out[0]) == 0.0,
          "out equal");
    CHECK(mha_single_head(x, B, T, C, C, W, W, W, 4, att, out) == MHA_EFLAGS, "flags");
    mha_free(l);
    free(x);
    free(s);
    free(m);
}

static void test_train_and_errors(void)
{
    const int C = 16, h = 4, B = 2, T = 5;
    const size_t n = (size_t)B * T * C;
    mha_layer *l = NULL;
    CHECK(mha_create(C, h, &l) == MHA_OK, "create");
    CHECK(mha_init_weights(l, 5, 0, MHA_RNG_DEFAULT, 0.25) == MHA_OK, "init");
    CHECK(mha_init_weights(l, 5, 1, MHA_RNG_LEGACY, 0.25) == MHA_ESEED, "legacy seed");
    CHECK(mha_init_weights(l, 5, 0, 9, 0.25) == MHA_ERNG, "rng kind");
    CHECK(mha_init_weights(l, 5, 0, MHA_RNG_DEFAULT, INFINITY) == MHA_EVALUE, "scale");
    double *X = normals(11, n), *target = normals(12, n), losses[10];
    double *Y0 = malloc(n * sizeof(double)), *Y1 = malloc(n * sizeof(double));
    CHECK(mha_forward(l, X, B, T, 0, Y0) == MHA_OK, "forward");

    /* errors leave the layer as it was */
    CHECK(mha_forward(l, X, 0, T, 0, Y1) == MHA_EDIM, "B = 0");
    CHECK(mha_forward(l, X, B, T, 2, Y1) == MHA_EFLAGS, "flags");
    CHECK(mha_forward(l, NULL, B, T, 0, Y1) == MHA_ENULL, "X NULL");
    CHECK(mha_forward(l, X, 1 << 30, 1 << 30, 0, Y1) == MHA_EOVERFLOW, "overflow");
    /* 1 x 300000 tokens needs ~2.9 TB of attention: the allocation fails cleanly */
    CHECK(mha_forward(l, X, 1, 300000, 0, Y1) == MHA_ENOMEM, "out of memory");
    CHECK(mha_forward_from(l, MHA_T_Y) == MHA_ETENSOR, "forward_from Y");
    size_t len;
    const double *Yc = mha_tensor(l, MHA_T_Y, &len);
    CHECK(Yc && len == n && memcmp(Yc, Y0, n * sizeof(double)) == 0, "cache kept after errors");
    CHECK(mha_forward(l, X, B, T, 0, Y1) == MHA_OK && memcmp(Y0, Y1, n * sizeof(double)) == 0,
          "same bits");

    /* forward_from after editing headout of one head changes Y */
    double *headout = mha_tensor(l, MHA_T_HEADOUT, &len);
    headout[0] += 1.0;
    CHECK(mha_forward_from(l, MHA_T_HEADOUT) == MHA_OK, "forward_from");
    CHECK(max_abs_diff(mha_tensor(l, MHA_T_Y, &len), Y0, n) > 0.0, "Y changed");

    /* training: the loss goes down step by step; the same run twice gives the same bits */
    double *W0 = malloc(mha_num_params(l) * sizeof(double));
    memcpy(W0, mha_params(l), mha_num_params(l) * sizeof(double));
    CHECK(mha_train(l, X, target, B, T, 0, 0.5, 10, losses) == MHA_OK, "train");
    for (int s = 1; s < 10; s++) {
        CHECK(losses[s] < losses[s - 1], "loss %d: %g >= %g", s, losses[s], losses[s - 1]);
    }
    double losses2[10];
    memcpy(mha_params(l), W0, mha_num_params(l) * sizeof(double));
    CHECK(mha_train(l, X, target, B, T, 0, 0.5, 10, losses2) == MHA_OK, "train again");
    CHECK(memcmp(losses, losses2, sizeof losses) == 0, "reproducible");

    /* divergence stops before the update that would make the weights non-finite */
    CHECK(mha_train(l, X, target, B, T, 0, 1e300, 10, losses) == MHA_EDIVERGED, "diverged");
    int finite = 1;
    for (size_t i = 0; i < mha_num_params(l); i++) {
        finite &= isfinite(mha_params(l)[i]) != 0;
    }
    CHECK(finite, "weights finite after divergence");
    X[3] = NAN;
    CHECK(mha_train(l, X, target, B, T, 0, 0.1, 1, losses) == MHA_EVALUE, "NaN in X rejected");
    CHECK(mha_train(l, X, target, B, T, 0, NAN, 1, losses) == MHA_EVALUE, "lr NaN");
    CHECK(mha_sgd_step(l, INFINITY) == MHA_EVALUE, "sgd lr inf");
    CHECK(mha_mse_loss(Y0, Y1, 0, losses, NULL) == MHA_EDIM, "mse n 0");

    /* NaN in forward data propagates (documented) */
    CHECK(mha_forward(l, X, B, T, 0, Y1) == MHA_OK && isnan(Y1[0]), "forward propagates NaN");

    free(W0);
    free(X);
    free(target);
    free(Y0);
    free(Y1);
    mha_free(l);
}

/* The tensor table: every id has a name, a kind, a shape that mha_tensor_shape_for and
 * mha_tensor_shape agree on, and its own memory (no two tensors overlap); the check rows, lesson
 * 4's gradient order and the constants table follow it. */
static void test_tensor_table(void)
{
    const int C = 12, h = 3, B = 2, T = 5;
    mha_layer *l = NULL;
    CHECK(mha_create(C, h, &l) == MHA_OK, "create");
    mha_init_weights(l, 4, 0, MHA_RNG_DEFAULT, 0.3);
    const size_t n = (size_t)B * T * C;
    double *X = normals(21, n), *G = normals(22, n);
    CHECK(mha_forward(l, X, B, T, 0, NULL) == MHA_OK && mha_backward(l, G, NULL) == MHA_OK, "run");
    CHECK(mha_tensor_count() == MHA_T_COUNT, "count");
    const double *p[MHA_T_COUNT];
    size_t len[MHA_T_COUNT];
    for (int id = 0; id < MHA_T_COUNT; id++) {
        const char *name = mha_tensor_name(id);
        CHECK(name && mha_tensor_kind(id) >= MHA_KIND_PARAM &&
                  mha_tensor_kind(id) <= MHA_KIND_GRADIENT,
              "id %d", id);
        for (int other = 0; other < id; other++) {
            CHECK(strcmp(name, mha_tensor_name(other)) != 0, "%s twice", name);
        }
        int rank = 0, dims[MHA_MAX_RANK] = {0}, rank2 = 0, dims2[MHA_MAX_RANK] = {0};
        CHECK(mha_tensor_shape(l, id, &rank, dims) == MHA_OK &&
                  mha_tensor_shape_for(id, B, T, C, h, &rank2, dims2) == MHA_OK && rank == rank2 &&
                  memcmp(dims, dims2, sizeof dims) == 0,
              "%s shape", name);
        size_t size = 1;
        for (int d = 0; d < rank; d++) {
            size *= (size_t)dims[d];
        }
        p[id] = mha_tensor(l, id, &len[id]);
        CHECK(p[id] && len[id] == size, "%s: %zu elements, shape says %zu", name, len[id], size);
        const int grad = mha_tensor_grad(id);
        CHECK(grad == MHA_T_NONE || mha_tensor_kind(grad) == MHA_KIND_GRADIENT, "%s grad", name);
        for (int other = 0; other < id; other++) { /* as integers: different allocations */
            const uintptr_t a = (uintptr_t)p[id], b = (uintptr_t)p[other];
            const int apart =
                a + len[id] * sizeof(double) <= b || b + len[other] * sizeof(double) <= a;
            CHECK(apart, "%s overlaps %s", name, mha_tensor_name(other));
        }
    }
    CHECK(mha_tensor_name(MHA_T_COUNT) == NULL && mha_tensor_kind(-1) == -1, "unknown ids");
    CHECK(mha_tensor_shape_for(MHA_T_Q, B, T, C, 5, &(int){0}, (int[MHA_MAX_RANK]){0}) ==
              MHA_EDIVISIBLE,
          "shape_for C %% h");
    /* the check rows: table order, each compared with the tensor's gradient */
    for (int w = 0; w < MHA_CHECK_COUNT; w++) {
        const int id = mha_check_tensor(w);
        CHECK(id != MHA_T_NONE && mha_tensor_grad(id) != MHA_T_NONE, "row %d", w);
        CHECK(w == 0 || id > mha_check_tensor(w - 1), "row %d in table order", w);
        CHECK(strcmp(mha_check_name(w), mha_tensor_name(id)) == 0, "row %d name", w);
    }
    CHECK(mha_check_tensor(MHA_CHECK_COUNT) == MHA_T_NONE, "rows end");
    /* lesson 4's gradients, by backward step */
    const char *order[] = {"dWo", "dconcat", "dheadout", "dV",  "datt", "dscores",
                           "dQ",  "dK",      "dWq",      "dWk", "dWv",  "dX"};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++) {
        CHECK(strcmp(mha_tensor_name(mha_grad_order(i)), order[i]) == 0, "grad order %d", i);
    }
    CHECK(mha_grad_order((int)(sizeof order / sizeof order[0])) == MHA_T_NONE, "grad order ends");
    /* the constants by name: each once; a few values */
    for (int i = 0; i < mha_constant_count(); i++) {
        for (int j = 0; j < i; j++) {
            CHECK(strcmp(mha_constant_name(i), mha_constant_name(j)) != 0, "%s twice",
                  mha_constant_name(i));
        }
        if (strcmp(mha_constant_name(i), "MHA_ENOFORWARD") == 0) {
            CHECK(mha_constant_value(i) == MHA_ENOFORWARD, "MHA_ENOFORWARD");
        }
        if (strcmp(mha_constant_name(i), "offsetof(mha_check_row, worst)") == 0) {
            CHECK(mha_constant_value(i) == (double)offsetof(mha_check_row, worst), "worst");
        }
    }
    CHECK(mha_constant_name(mha_constant_count()) == NULL && isnan(mha_constant_value(-1)), "end");
    CHECK(mha_cache_bytes(B, T, C, h) > 0.0 && mha_cache_bytes(B, T, C, 5) == 0.0, "cache bytes");
    free(X);
    free(G);
    mha_free(l);
}

/* Lesson 4's steps 9 and 13 and the accumulation of the weight gradients, recomputed here with
 * plain loops in the order the backward promises: the same bits. */
static void test_backward_steps(void)
{
    const int C = 12, h = 3, B = 2, T = 4;
    const size_t BT = (size_t)B * T, n = BT * C, CC = (size_t)C * C;
    mha_layer *l = NULL;
    CHECK(mha_create(C, h, &l) == MHA_OK, "create");
    mha_init_weights(l, 6, 0, MHA_RNG_DEFAULT, 0.3);
    double *X = normals(31, n), *G = normals(32, n), *merged = malloc(n * sizeof(double));
    CHECK(mha_forward(l, X, B, T, MHA_CAUSAL, NULL) == MHA_OK, "forward");
    CHECK(mha_zero_grad(l) == MHA_OK && mha_backward(l, G, NULL) == MHA_OK, "backward");
    size_t len;
    /* 9. dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV) */
    const int split[3] = {MHA_T_DQ, MHA_T_DK, MHA_T_DV},
              whole[3] = {MHA_T_DQM, MHA_T_DKM, MHA_T_DVM};
    for (int k = 0; k < 3; k++) {
        CHECK(mha_merge_heads(mha_tensor(l, split[k], &len), B, T, C, h, merged) == MHA_OK,
              "merge");
        CHECK(memcmp(merged, mha_tensor(l, whole[k], &len), n * sizeof(double)) == 0, "%s",
              mha_tensor_name(whole[k]));
    }
    /* 13. dX = dQm @ Wq^T + dKm @ Wk^T + dVm @ Wv^T: one sum per entry, the three products' terms
     * in that order */
    const double *W = mha_params(l), *dX = mha_tensor(l, MHA_T_DX, &len);
    size_t same = 0;
    for (size_t r = 0; r < BT; r++) {
        for (size_t j = 0; j < (size_t)C; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++) {
                const double *dm = mha_tensor(l, whole[k], &len) + r * C, *Wk = W + k * CC;
                for (size_t c = 0; c < (size_t)C; c++) {
                    s += dm[c] * Wk[j * C + c];
                }
            }
            same += s == dX[r * C + j];
        }
    }
    CHECK(same == n, "dX: %zu of %zu entries the same bits", same, n);
    /* weight gradients add up over calls: the second backward continues each sum */
    double *g1 = malloc(4 * CC * sizeof(double));
    memcpy(g1, mha_grads(l), 4 * CC * sizeof(double));
    CHECK(mha_backward(l, G, NULL) == MHA_OK, "second backward");
    const double *g2 = mha_grads(l), *dQm = mha_tensor(l, MHA_T_DQM, &len);
    same = 0;
    for (size_t i = 0; i < (size_t)C; i++) {
        for (size_t j = 0; j < (size_t)C; j++) {
            double s = g1[i * C + j]; /* dWq += X^T @ dQm */
            for (size_t r = 0; r < BT; r++) {
                s += X[r * C + i] * dQm[r * C + j];
            }
            same += s == g2[i * C + j];
        }
    }
    CHECK(same == CC, "dWq accumulated: %zu of %zu entries the same bits", same, CC);
    free(g1);
    free(X);
    free(G);
    free(merged);
    mha_free(l);
}

static void test_growth(void)
{
    /* the cache grows to the largest (B,T) seen and is reused: shapes shrink and grow freely */
    mha_layer *l = NULL;
    mha_create(8, 2, &l);
    mha_init_weights(l, 1, 0, MHA_RNG_DEFAULT, 0.3);
    const int sizes[][2] = {{1, 3}, {4, 2}, {1, 9}, {2, 2}, {3, 5}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const int B = sizes[k][0], T = sizes[k][1];
        double *X = normals((uint32_t)k, (size_t)B * T * 8), *G = normals(99, (size_t)B * T * 8);
        CHECK(mha_forward(l, X, B, T, MHA_CAUSAL, NULL) == MHA_OK, "forward %d %d", B, T);
        CHECK(mha_backward(l, G, NULL) == MHA_OK, "backward");
        mha_check_row rep[MHA_CHECK_COUNT];
        CHECK(mha_gradcheck(l, X, B, T, MHA_CAUSAL, MHA_LOSS_DOT, G, 1e-3, 0, rep) == MHA_OK,
              "gradcheck");
        for (int w = 0; w < MHA_CHECK_COUNT; w++) {
            CHECK(rep[w].max_rel <= 1e-6, "B=%d T=%d %s %g", B, T, mha_check_name(w),
                  rep[w].max_rel);
        }
        free(X);
        free(G);
    }
    mha_free(l);
}

int main(void)
{
    test_create_errors();
    test_forward_backward_gradcheck(8, 2, 2, 3, 0);
    test_forward_backward_gradcheck(8, 2, 2, 3, MHA_CAUSAL);
    test_forward_backward_gradcheck(12, 3, 1, 5, MHA_CAUSAL);
    test_forward_backward_gradcheck(6, 1, 3, 1, 0);
    test_gradcheck_entries_match_full_forwards();
    test_split_merge_single_head();
    test_train_and_errors();
    test_growth();
    test_tensor_table();
    test_backward_steps();
    printf("test_mha: %d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
