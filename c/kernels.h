/*
 * kernels.h - the dense kernels the layer is made of (internal).
 *
 * Row-major float64 matrices. M, K, N are the usual matmul sizes: A is (M,K), B is (K,N) and the
 * product is (M,N). Every kernel sums its K terms in increasing k order starting from 0.0 (or, when
 * accumulating, starting from the value already in out), so results are identical run to run and
 * between the native and the WebAssembly build.
 */
#ifndef MHA_KERNELS_H
#define MHA_KERNELS_H

#include <stddef.h>

/* What a kernel does with the product: MATMUL_SET writes out = product; MATMUL_ADD adds it,
 * out += product, each out[i,j] continuing its sum from the value already there (so
 * `out = a1 @ b1 + a2 @ b2` is one SET call then one ADD call, summed term by term in that order). */
typedef enum { MATMUL_SET = 0, MATMUL_ADD = 1 } matmul_mode;

/* out (M,N) = a (M,K) @ b (K,N) */
void matmul_nn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N);

/* out (M,N) += a (M,K) @ b (K,N), where row i of a starts at a + i*lda (lda >= K): a block of
 * columns of a wider matrix. Each out[i,j] continues its sum from the value already there. */
void matmul_nn_cols_acc(double *out, const double *a, size_t lda, const double *b, size_t M,
                        size_t K, size_t N);

/* out (M,N) = a (M,K) @ b^T, with b stored as (N,K); mode MATMUL_ADD: out += instead */
void matmul_nt(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode);

/* out (M,N) = a^T @ b, with a stored as (K,M) and b as (K,N); mode MATMUL_ADD: out += instead */
void matmul_tn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode);

/* att (T,T) = softmax of each row of scores (T,T), fused with the scaling: every score is first
 * divided by divisor in place (divisor = 1.0: left exactly as it is). With causal != 0 the keys
 * after the query (column > row) are masked: their weight is exactly 0. The max is subtracted
 * before exp. att may be scores itself. */
void softmax_rows(double *att, double *scores, size_t T, double divisor, int causal);

/* dscores (T,T) from att (T,T) and datt (T,T): dscores = att * (datt - rowsum(datt * att)) */
void softmax_backward_rows(double *dscores, const double *att, const double *datt, size_t T);

#endif
