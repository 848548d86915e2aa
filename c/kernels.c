/*
 * kernels.c - matmul in its three orientations and row softmax. See kernels.h for the contract.
 *
 * Two implementations of the matmuls, chosen at compile time:
 *   - the portable scalar loops (every native build, and wasm built without -msimd128);
 *   - WebAssembly SIMD (f64x2), register-blocked 4x4 tiles, when built with -msimd128.
 * Both compute every out[i,j] as the same sequence of roundings: start from 0.0 (or the value
 * already in out when accumulating), then add a[i,k] * b[k,j] for k = 0, 1, ..., K-1, one multiply
 * and one add each (wasm has no fused multiply-add, and the build uses -ffp-contract=off). A SIMD
 * lane does exactly what the scalar loop does for its element, so the two paths give identical
 * bits; the SIMD path only does two elements per instruction and keeps a 4x4 tile in registers.
 */
#include "kernels.h"

#include <math.h>
#include <string.h>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#if !defined(__wasm_simd128__)

/* ---------------------------------------------------------------------------------------------- */
/* portable scalar path */

void matmul_nn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N)
{
    /* a is (M,K), b is (K,N), out is (M,N). i-k-j order: row i of out gathers a[i,k] * row k of b,
     * so every out[i,j] still sums its terms in k order from 0.0. */
    for (size_t i = 0; i < M; i++) {
        double *out_i = out + i * N;
        const double *a_i = a + i * K;
        memset(out_i, 0, N * sizeof(double));
        for (size_t k = 0; k < K; k++) {
            const double a_ik = a_i[k];
            const double *b_k = b + k * N;
            for (size_t j = 0; j < N; j++) {
                out_i[j] += a_ik * b_k[j];
            }
        }
    }
}

void matmul_nt(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               int accumulate)
{
    /* a is (M,K), b is (N,K), out is (M,N): out[i,j] = dot(row i of a, row j of b) */
    for (size_t i = 0; i < M; i++) {
        const double *a_i = a + i * K;
        double *out_i = out + i * N;
        for (size_t j = 0; j < N; j++) {
            const double *b_j = b + j * K;
            double s = accumulate ? out_i[j] : 0.0;
            for (size_t k = 0; k < K; k++) {
                s += a_i[k] * b_j[k];
            }
            out_i[j] = s;
        }
    }
}

void matmul_tn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               int accumulate)
{
    /* a is (K,M), b is (K,N), out is (M,N): out += sum over k of outer(row k of a, row k of b) */
    if (!accumulate) {
        memset(out, 0, M * N * sizeof(double));
    }
    for (size_t k = 0; k < K; k++) {
        const double *a_k = a + k * M;
        const double *b_k = b + k * N;
        for (size_t i = 0; i < M; i++) {
            const double a_ki = a_k[i];
            double *out_i = out + i * N;
            for (size_t j = 0; j < N; j++) {
                out_i[j] += a_ki * b_k[j];
            }
        }
    }
}

#else

/* ---------------------------------------------------------------------------------------------- */
/* WebAssembly SIMD path */

/* A general product out (M,N) (+)= A (M,K) @ B (K,N) where A(i,k) = a[i*a_rs + k*a_cs] and
 * B(k,j) = b[k*b_rs + j*b_cs]. The three orientations are strides of it:
 *   nn: A = a (M,K), B = b (K,N)    -> a_rs = K, a_cs = 1, b_rs = N, b_cs = 1
 *   nt: B = b^T with b stored (N,K) -> b_rs = 1, b_cs = K
 *   tn: A = a^T with a stored (K,M) -> a_rs = 1, a_cs = M
 * K is walked in blocks of KB so a block of B stays in cache; since each out[i,j] is kept as a
 * double between blocks and the blocks run in increasing k, the roundings are the same as one
 * unblocked pass. */
enum { KB = 256 };

typedef struct {
    const double *a, *b;
    size_t a_rs, a_cs, b_rs, b_cs;
} operands;

/* Copy B(k0..k1-1, j0..j0+w-1) into panels of 4 columns: panel[(c/4)*KB*4 + (k-k0)*4 + c%4] for
 * column j0+c, so the tile loop reads its 4 columns contiguously. w is a multiple of 4, up to PW;
 * reading PW columns of a row at once uses whole cache lines of a row-major B. */
enum { PW = 16 };

static void pack_b_panels(double *panel, const operands *op, size_t k0, size_t k1, size_t j0,
                          size_t w)
{
    for (size_t k = k0; k < k1; k++) {
        const double *b_k = op->b + k * op->b_rs + j0 * op->b_cs;
        for (size_t c = 0; c < w; c++) {
            panel[(c / 4) * KB * 4 + (k - k0) * 4 + c % 4] = b_k[c * op->b_cs];
        }
    }
}

/* One 4x4 tile of out at (i0, j0), k from k0 to k1-1, B from the packed panel */
static void tile4x4(double *out, size_t ldo, const operands *op, const double *panel, size_t i0,
                    size_t j0, size_t k0, size_t k1)
{
    double *o0 = out + i0 * ldo + j0, *o1 = o0 + ldo, *o2 = o1 + ldo, *o3 = o2 + ldo;
    v128_t c00 = wasm_v128_load(o0), c01 = wasm_v128_load(o0 + 2);
    v128_t c10 = wasm_v128_load(o1), c11 = wasm_v128_load(o1 + 2);
    v128_t c20 = wasm_v128_load(o2), c21 = wasm_v128_load(o2 + 2);
    v128_t c30 = wasm_v128_load(o3), c31 = wasm_v128_load(o3 + 2);
    const size_t a_rs = op->a_rs, a_cs = op->a_cs;
    const double *a0 = op->a + i0 * a_rs + k0 * a_cs, *a1 = a0 + a_rs, *a2 = a1 + a_rs, *a3 = a2 + a_rs;
    const double *p = panel;
    for (size_t k = k0; k < k1; k++, p += 4, a0 += a_cs, a1 += a_cs, a2 += a_cs, a3 += a_cs) {
        const v128_t b0 = wasm_v128_load(p), b1 = wasm_v128_load(p + 2);
        v128_t x = wasm_f64x2_splat(*a0);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(x, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(x, b1));
        x = wasm_f64x2_splat(*a1);
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(x, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(x, b1));
        x = wasm_f64x2_splat(*a2);
        c20 = wasm_f64x2_add(c20, wasm_f64x2_mul(x, b0));
        c21 = wasm_f64x2_add(c21, wasm_f64x2_mul(x, b1));
        x = wasm_f64x2_splat(*a3);
        c30 = wasm_f64x2_add(c30, wasm_f64x2_mul(x, b0));
        c31 = wasm_f64x2_add(c31, wasm_f64x2_mul(x, b1));
    }
    wasm_v128_store(o0, c00); wasm_v128_store(o0 + 2, c01);
    wasm_v128_store(o1, c10); wasm_v128_store(o1 + 2, c11);
    wasm_v128_store(o2, c20); wasm_v128_store(o2 + 2, c21);
    wasm_v128_store(o3, c30); wasm_v128_store(o3 + 2, c31);
}

/* One element, k from k0 to k1-1: the scalar loop of the portable path */
static void element(double *out, size_t ldo, const operands *op, size_t i, size_t j, size_t k0,
                    size_t k1)
{
    double s = out[i * ldo + j];
    const double *a_i = op->a + i * op->a_rs;
    const double *b_j = op->b + j * op->b_cs;
    for (size_t k = k0; k < k1; k++) {
        s += a_i[k * op->a_cs] * b_j[k * op->b_rs];
    }
    out[i * ldo + j] = s;
}

static void gemm(double *out, const operands *op, size_t M, size_t K, size_t N, int accumulate)
{
    double panel[KB * PW];   /* B(k0..k1-1, j0..j0+PW-1), packed in panels of 4 columns */
    if (!accumulate) {
        memset(out, 0, M * N * sizeof(double));
    }
    const size_t M4 = M - M % 4, N4 = N - N % 4;
    for (size_t k0 = 0; k0 < K; k0 += KB) {
        const size_t k1 = K - k0 < KB ? K : k0 + KB;
        for (size_t jb = 0; jb < N4; jb += PW) {
            const size_t w = N4 - jb < PW ? N4 - jb : PW;
            pack_b_panels(panel, op, k0, k1, jb, w);
            for (size_t i0 = 0; i0 < M4; i0 += 4) {
                for (size_t c = 0; c < w; c += 4) {
                    tile4x4(out, N, op, panel + (c / 4) * KB * 4, i0, jb + c, k0, k1);
                }
            }
            for (size_t i = M4; i < M; i++) {
                for (size_t j = jb; j < jb + w; j++) {
                    element(out, N, op, i, j, k0, k1);
                }
            }
        }
        for (size_t i = 0; i < M; i++) {
            for (size_t j = N4; j < N; j++) {
                element(out, N, op, i, j, k0, k1);
            }
        }
    }
}

void matmul_nn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N)
{
    const operands op = {a, b, K, 1, N, 1};
    gemm(out, &op, M, K, N, 0);
}

void matmul_nt(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               int accumulate)
{
    const operands op = {a, b, K, 1, 1, K};
    gemm(out, &op, M, K, N, accumulate);
}

void matmul_tn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               int accumulate)
{
    const operands op = {a, b, 1, M, N, 1};
    gemm(out, &op, M, K, N, accumulate);
}

#endif

/* ---------------------------------------------------------------------------------------------- */
/* softmax rows (both builds) */

void softmax_rows(double *att, const double *scores, size_t T, int causal)
{
    /* scores, att are (T,T); row t is query t, column t2 is key t2 */
    for (size_t t = 0; t < T; t++) {
        const double *scores_t = scores + t * T;
        double *att_t = att + t * T;
        const size_t valid = causal ? t + 1 : T;   /* keys 0 .. valid-1 take part */
        double maxval = -INFINITY;
        for (size_t t2 = 0; t2 < valid; t2++) {
            if (scores_t[t2] > maxval) {
                maxval = scores_t[t2];
            }
        }
        double sum = 0.0;
        for (size_t t2 = 0; t2 < valid; t2++) {
            att_t[t2] = exp(scores_t[t2] - maxval);
            sum += att_t[t2];
        }
        for (size_t t2 = 0; t2 < valid; t2++) {
            att_t[t2] /= sum;
        }
        for (size_t t2 = valid; t2 < T; t2++) {
            att_t[t2] = 0.0;
        }
    }
}

void softmax_backward_rows(double *dscores, const double *att, const double *datt, size_t T)
{
    /* in the forward pass this was att[t,:] = softmax(scores[t,:]), so
     * dscores[t,j] = att[t,j] * (datt[t,j] - sum_k datt[t,k] * att[t,k]).
     * Masked keys have att == 0 and get dscores == 0 exactly. */
    for (size_t t = 0; t < T; t++) {
        const double *att_t = att + t * T;
        const double *datt_t = datt + t * T;
        double *dscores_t = dscores + t * T;
        double dot = 0.0;
        for (size_t t2 = 0; t2 < T; t2++) {
            dot += datt_t[t2] * att_t[t2];
        }
        for (size_t t2 = 0; t2 < T; t2++) {
            dscores_t[t2] = att_t[t2] * (datt_t[t2] - dot);
        }
    }
}
