/*
 * kernels.c - portable scalar kernels: matmul in its three orientations and row softmax.
 * See kernels.h for the contract (shapes, summation order).
 */
#include "kernels.h"

#include <math.h>
#include <string.h>

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
