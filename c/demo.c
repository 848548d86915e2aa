/*
 * demo.c - the course's lessons 3 and 4 in a terminal, from the native library (make demo).
 *
 * The course setting: seed 42, B = 2, T = 6, C = 64, h = 4, with X, the weights and dY drawn from
 * one NumPy stream exactly as the companion page and the notebook do:
 *
 *   rng = np.random.default_rng(42)
 *   X = rng.standard_normal((2, 6, 64))
 *   Wq, Wk, Wv, Wo = (rng.standard_normal((64, 64)) / np.sqrt(64) for _ in range(4))
 *   dY = rng.standard_normal((2, 6, 64))
 *
 * It prints lesson 3's shape table (every stage of the forward pass, shapes from mha_tensor_shape)
 * and lesson 4's gradient-check table (mha_gradcheck over every entry, loss L = sum(dY * Y)).
 * Exit status: 0 if every tensor passes (max relative error <= 1e-7), 1 if one fails, 2 if a
 * library call fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mha.h"

enum { SEED = 42, B = 2, T = 6, C = 64, H = 4 };
#define THRESHOLD 1e-7

/* Prints the failed call and returns 2 (the exit status for a library error). */
static int fail(const char *what, int rc)
{
    fprintf(stderr, "demo: %s: %s (%d)\n", what, mha_strerror(rc), rc);
    return 2;
}

/* "(2, 4, 6, 16)" */
static void format_shape(char *buf, size_t size, int rank, const int dims[MHA_MAX_RANK])
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%d", i == 0 ? "(" : ", ", dims[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    if (used < size) {
        snprintf(buf + used, size - used, ")");
    }
}

/* The tensor id whose course name is `name` (mha_tensor_name), or -1. */
static int tensor_id(const char *name)
{
    for (int id = 0; id < MHA_T_COUNT; id++) {
        if (strcmp(mha_tensor_name(id), name) == 0) {
            return id;
        }
    }
    return -1;
}

/* One stream, in the course's order: X, then Wq, Wk, Wv, Wo (written straight into the
 * parameter buffer), then dY. */
static int draw_inputs(mha_layer *layer, mha_rng *rng, double *X, double *dY)
{
    const size_t btc = (size_t)B * T * C, cc = (size_t)C * C;
    int rc;

    if ((rc = mha_rng_standard_normal(rng, X, btc)) != MHA_OK) {
        return fail("mha_rng_standard_normal", rc);
    }
    double *params = mha_params(layer); /* [Wq | Wk | Wv | Wo], owned by the layer */
    if ((rc = mha_rng_standard_normal(rng, params, 4 * cc)) != MHA_OK) {
        return fail("mha_rng_standard_normal", rc);
    }
    const double root = sqrt((double)C);
    for (size_t i = 0; i < 4 * cc; i++) {
        params[i] /= root;
    }
    if ((rc = mha_rng_standard_normal(rng, dY, btc)) != MHA_OK) {
        return fail("mha_rng_standard_normal", rc);
    }
    return 0;
}

/* Lesson 3: the forward pass and the shape at every stage. */
static int lesson3_shapes(mha_layer *layer, const double *X, double *Y)
{
    int rc;
    if ((rc = mha_forward(layer, X, B, T, 0, Y)) != MHA_OK) {
        return fail("mha_forward", rc);
    }
    static const struct {
        const char *tensor, *stage;
    } stages[] = {
        {"X", "input: B sequences of T tokens, C features each"},
        {"Q", "split_heads(X @ Wq): (B,T,C) -> (B,h,T,hs), heads become a batch axis"},
        {"K", "split_heads(X @ Wk)"},
        {"V", "split_heads(X @ Wv)"},
        {"scores", "Q @ K^T / sqrt(hs): one T x T matrix per head"},
        {"att", "softmax(scores) over the last axis: each row sums to 1"},
        {"headout", "att @ V: each head mixes its own V"},
        {"concat", "merge_heads(headout): transpose back, reshape (B,T,C)"},
        {"Y", "concat @ Wo: Wo mixes the heads"},
    };
    printf(
        "Lesson 3 - shapes at every stage (seed %d, B = %d, T = %d, C = %d, h = %d, hs = %d)\n\n",
        SEED, B, T, C, H, C / H);
    printf("  %-8s %-15s %s\n", "tensor", "shape", "stage");
    for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++) {
        int rank, dims[MHA_MAX_RANK];
        char shape[64];
        if ((rc = mha_tensor_shape(layer, tensor_id(stages[s].tensor), &rank, dims)) != MHA_OK) {
            return fail("mha_tensor_shape", rc);
        }
        format_shape(shape, sizeof shape, rank, dims);
        printf("  %-8s %-15s %s\n", stages[s].tensor, shape, stages[s].stage);
    }
    size_t n_att;
    const double *att = mha_tensor(layer, MHA_T_ATT, &n_att);
    double worst_sum = 0.0;
    for (size_t r = 0; r < n_att / T; r++) {
        double sum = 0.0;
        for (int j = 0; j < T; j++) {
            sum += att[r * T + j];
        }
        worst_sum = fmax(worst_sum, fabs(sum - 1.0));
    }
    printf("\n  att rows sum to 1: max |row sum - 1| = %.1e over %zu rows\n", worst_sum, n_att / T);
    printf("  Y[0, 0, :4] = [%.8f, %.8f, %.8f, %.8f]\n\n", Y[0], Y[1], Y[2], Y[3]);
    return 0;
}

/* Lesson 4: the gradient check of every entry, loss L = sum(dY * Y). */
static int lesson4_check(mha_layer *layer, const double *X, const double *dY, const double *Y)
{
    const size_t btc = (size_t)B * T * C;
    int rc;
    mha_check_row report[MHA_CHECK_COUNT];
    if ((rc = mha_gradcheck(layer, X, B, T, 0, MHA_LOSS_DOT, dY, MHA_GRADCHECK_EPS, 0, report)) !=
        MHA_OK) {
        return fail("mha_gradcheck", rc);
    }
    double loss = 0.0;
    for (size_t i = 0; i < btc; i++) {
        loss += dY[i] * Y[i];
    }
    printf("Lesson 4 - gradient check: loss L = sum(dY * Y) = %.10f\n", loss);
    printf("  numeric = (8 (L(x+eps) - L(x-eps)) - (L(x+2eps) - L(x-2eps))) / 12 eps, eps = %g\n",
           MHA_GRADCHECK_EPS);
    printf("  relative error = |a - n| / max(|a|, |n|, %g); a tensor passes if max rel <= %g\n\n",
           MHA_GRADCHECK_TINY, THRESHOLD);
    printf("  %-8s %-15s %11s %10s %10s  %s\n", "tensor", "shape", "checked", "max abs", "max rel",
           "result");
    int passed = 0;
    double entries = 0.0;
    for (int w = 0; w < MHA_CHECK_COUNT; w++) {
        const mha_check_row *row = &report[w];
        const char *name = mha_check_name(w);
        int rank, dims[MHA_MAX_RANK];
        char shape[64], checked[32];
        if ((rc = mha_tensor_shape(layer, tensor_id(name), &rank, dims)) != MHA_OK) {
            return fail("mha_tensor_shape", rc);
        }
        format_shape(shape, sizeof shape, rank, dims);
        snprintf(checked, sizeof checked, "%.0f/%.0f", row->checked, row->size);
        const int ok = row->checked == row->size && row->max_rel <= THRESHOLD;
        passed += ok;
        entries += row->checked;
        printf("  %-8s %-15s %11s %10.1e %10.1e  %s\n", name, shape, checked, row->max_abs,
               row->max_rel, ok ? "pass" : "FAIL");
    }
    printf("\n  %d of %d tensors pass (%.0f entries checked)\n", passed, MHA_CHECK_COUNT, entries);
    return passed == MHA_CHECK_COUNT ? 0 : 1;
}

static int run(mha_layer *layer, mha_rng *rng, double *X, double *dY, double *Y)
{
    int rc;
    if ((rc = draw_inputs(layer, rng, X, dY)) != 0) return rc;
    if ((rc = lesson3_shapes(layer, X, Y)) != 0) return rc;
    return lesson4_check(layer, X, dY, Y);
}

int main(void)
{
    const size_t btc = (size_t)B * T * C;
    mha_layer *layer = NULL;
    mha_rng *rng = NULL;
    double *X = malloc(btc * sizeof *X), *dY = malloc(btc * sizeof *dY),
           *Y = malloc(btc * sizeof *Y);
    int status;
    int rc;

    printf("mha-wasm %s - native C demo\n\n", mha_version());
    if (!X || !dY || !Y) {
        status = fail("malloc", MHA_ENOMEM);
    } else if ((rc = mha_create(C, H, &layer)) != MHA_OK) {
        status = fail("mha_create", rc);
    } else if ((rc = mha_rng_create(MHA_RNG_DEFAULT, SEED, 0, &rng)) != MHA_OK) {
        status = fail("mha_rng_create", rc);
    } else {
        status = run(layer, rng, X, dY, Y);
    }
    mha_rng_free(rng);
    mha_free(layer);
    free(X);
    free(dY);
    free(Y);
    return status;
}
