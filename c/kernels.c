/*
 * kernels.c - matmul in its three orientations and row softmax. See kernels.h for the contract.
 *
 * Two implementations of the matmuls, chosen at compile time:
 *   - the portable scalar loops (every native build, and wasm built without -msimd128);
 *   - WebAssembly SIMD (f64x2), register-blocked 4x4 tiles, when built with -msimd128.
 * Both compute every out[i,j] as the same sequence of roundings: start from 0.0 (or the value
 * already in out with MATMUL_ADD), then add a[i,k] * b[k,j] for k = 0, 1, ..., K-1, one multiply
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

void matmul_nn_cols_acc(double *out, const double *a, size_t lda, const double *b, size_t M,
                        size_t K, size_t N)
{
    /* row i of a is a + i*lda, b is (K,N), out is (M,N). i-k-j order: row i of out gathers
     * a[i,k] * row k of b, so every out[i,j] still sums its terms in k order. */
    for (size_t i = 0; i < M; i++) {
        double *out_i = out + i * N;
        const double *a_i = a + i * lda;
        for (size_t k = 0; k < K; k++) {
            const double a_ik = a_i[k];
            const double *b_k = b + k * N;
            for (size_t j = 0; j < N; j++) {
                out_i[j] += a_ik * b_k[j];
            }
        }
    }
}

void matmul_nn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N)
{
    /* a is (M,K), b is (K,N), out is (M,N): every out[i,j] sums its terms in k order from 0.0 */
    memset(out, 0, M * N * sizeof(double));
    matmul_nn_cols_acc(out, a, K, b, M, K, N);
}

void matmul_nt(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode)
{
    /* a is (M,K), b is (N,K), out is (M,N): out[i,j] = dot(row i of a, row j of b) */
    for (size_t i = 0; i < M; i++) {
        const double *a_i = a + i * K;
        double *out_i = out + i * N;
        for (size_t j = 0; j < N; j++) {
            const double *b_j = b + j * K;
            double s = mode == MATMUL_ADD ? out_i[j] : 0.0;
            for (size_t k = 0; k < K; k++) {
                s += a_i[k] * b_j[k];
            }
            out_i[j] = s;
        }
    }
}

void matmul_tn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode)
{
    /* a is (K,M), b is (K,N), out is (M,N): out += sum over k of outer(row k of a, row k of b) */
    if (mode == MATMUL_SET) {
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
 *
 * Blocking, outermost first: columns of out in blocks of NC, k in blocks of KC, rows in blocks of
 * MC. For each (NC, KC) block, B(k-block, j-block) is copied once into panels of 4 columns
 * (unless it can be read in place, see gemm); for each MC block, A(i-block, k-block) is copied
 * into panels of 4 rows. Every 4x4 tile of out then reads its 4 rows of A and 4 columns of B as
 * two contiguous streams, whatever the orientation, which is what lets the tile loop run at the
 * speed of its arithmetic; the copies themselves move two doubles per instruction. Panels are
 * padded with zeros at the edges; an edge tile is computed in a scratch tile and only its real
 * part is copied back, so padding never reaches out. The first k block writes out (from 0.0)
 * with MATMUL_SET, so out needs no clearing first.
 *
 * Each out[i,j] is kept as a double between k blocks and the blocks run in increasing k, so the
 * roundings are exactly those of one unblocked pass in k order. */
typedef struct {
    const double *a, *b;
    size_t a_rs, a_cs, b_rs, b_cs;
} operands;

enum { MR = 4, NR = 4 };              /* the register tile: 4 rows x 4 columns of out */
enum { KC = 128, MC = 64, NC = 128 }; /* packed A block MC*KC (64 KiB), B block KC*NC (128 KiB) */

/* One full panel (4 lanes) whose lanes are contiguous (lane_stride 1: tn's A, B's rows): two
 * vector copies per k */
static void pack_lanes_contiguous(double *dst, const double *s, size_t kc, size_t k_stride)
{
    for (size_t k = 0; k < kc; k++, s += k_stride, dst += 4) {
        wasm_v128_store(dst, wasm_v128_load(s));
        wasm_v128_store(dst + 2, wasm_v128_load(s + 2));
    }
}

/* One full panel whose k runs are contiguous (k_stride 1: rows of A, nt's B): two k at a time,
 * the four rows' pairs transposed with shuffles */
static void pack_k_contiguous(double *dst, const double *s, size_t kc, size_t lane_stride)
{
    const double *r0 = s, *r1 = r0 + lane_stride, *r2 = r1 + lane_stride, *r3 = r2 + lane_stride;
    size_t k = 0;
    for (; k + 2 <= kc; k += 2, dst += 8) {
        const v128_t v0 = wasm_v128_load(r0 + k), v1 = wasm_v128_load(r1 + k);
        const v128_t v2 = wasm_v128_load(r2 + k), v3 = wasm_v128_load(r3 + k);
        wasm_v128_store(dst, wasm_i64x2_shuffle(v0, v1, 0, 2));     /* k:   rows 0, 1 */
        wasm_v128_store(dst + 2, wasm_i64x2_shuffle(v2, v3, 0, 2)); /* k:   rows 2, 3 */
        wasm_v128_store(dst + 4, wasm_i64x2_shuffle(v0, v1, 1, 3)); /* k+1: rows 0, 1 */
        wasm_v128_store(dst + 6, wasm_i64x2_shuffle(v2, v3, 1, 3)); /* k+1: rows 2, 3 */
    }
    if (k < kc) {
        dst[0] = r0[k];
        dst[1] = r1[k];
        dst[2] = r2[k];
        dst[3] = r3[k];
    }
}

/* Copy n lanes (rows of A or columns of B) of kc values each into panels of 4 lanes:
 * dst[(l/4)*4*kc + k*4 + l%4] = src[l*lane_stride + k*k_stride], zero past the last lane.
 * A(i0.., k0..) packs with lane_stride = a_rs, k_stride = a_cs; B(k0.., j0..) with b_cs, b_rs. */
static void pack_panels(double *dst, const double *src, size_t n, size_t kc, size_t lane_stride,
                        size_t k_stride)
{
    for (size_t l0 = 0; l0 < n; l0 += 4, dst += 4 * kc) {
        const size_t lanes = n - l0 < 4 ? n - l0 : 4;
        const double *s = src + l0 * lane_stride;
        if (lanes == 4 && lane_stride == 1) {
            pack_lanes_contiguous(dst, s, kc, k_stride);
            continue;
        }
        if (lanes == 4 && k_stride == 1) {
            pack_k_contiguous(dst, s, kc, lane_stride);
            continue;
        }
        for (size_t k = 0; k < kc; k++, s += k_stride) {
            size_t l = 0;
            for (; l < lanes; l++) {
                dst[k * 4 + l] = s[l * lane_stride];
            }
            for (; l < 4; l++) {
                dst[k * 4 + l] = 0.0;
            }
        }
    }
}

/* out tile (4,4) at o (row stride ldo) = (from_zero ? 0 : out tile) + A panel (kc,4 rows) .
 * B (kc,4 columns), where the 4 values of B for step k are bp[k*ldb .. k*ldb+3]: a packed panel
 * (ldb = 4) or B itself. Eight f64x2 accumulators; per k: two loads of B, four broadcasts of A,
 * 8 multiplies, 8 adds. */
static void tile4x4(double *o, size_t ldo, int from_zero, const double *ap, const double *bp,
                    size_t ldb, size_t kc)
{
    double *o0 = o, *o1 = o0 + ldo, *o2 = o1 + ldo, *o3 = o2 + ldo;
    const v128_t zero = wasm_f64x2_splat(0.0);
    v128_t c00 = zero, c01 = zero, c10 = zero, c11 = zero;
    v128_t c20 = zero, c21 = zero, c30 = zero, c31 = zero;
    if (!from_zero) {
        c00 = wasm_v128_load(o0);
        c01 = wasm_v128_load(o0 + 2);
        c10 = wasm_v128_load(o1);
        c11 = wasm_v128_load(o1 + 2);
        c20 = wasm_v128_load(o2);
        c21 = wasm_v128_load(o2 + 2);
        c30 = wasm_v128_load(o3);
        c31 = wasm_v128_load(o3 + 2);
    }
    for (size_t k = 0; k < kc; k++, ap += MR, bp += ldb) {
        const v128_t b0 = wasm_v128_load(bp), b1 = wasm_v128_load(bp + 2);
        v128_t x = wasm_v128_load64_splat(ap);
        c00 = wasm_f64x2_add(c00, wasm_f64x2_mul(x, b0));
        c01 = wasm_f64x2_add(c01, wasm_f64x2_mul(x, b1));
        x = wasm_v128_load64_splat(ap + 1);
        c10 = wasm_f64x2_add(c10, wasm_f64x2_mul(x, b0));
        c11 = wasm_f64x2_add(c11, wasm_f64x2_mul(x, b1));
        x = wasm_v128_load64_splat(ap + 2);
        c20 = wasm_f64x2_add(c20, wasm_f64x2_mul(x, b0));
        c21 = wasm_f64x2_add(c21, wasm_f64x2_mul(x, b1));
        x = wasm_v128_load64_splat(ap + 3);
        c30 = wasm_f64x2_add(c30, wasm_f64x2_mul(x, b0));
        c31 = wasm_f64x2_add(c31, wasm_f64x2_mul(x, b1));
    }
    wasm_v128_store(o0, c00);
    wasm_v128_store(o0 + 2, c01);
    wasm_v128_store(o1, c10);
    wasm_v128_store(o1 + 2, c11);
    wasm_v128_store(o2, c20);
    wasm_v128_store(o2 + 2, c21);
    wasm_v128_store(o3, c30);
    wasm_v128_store(o3 + 2, c31);
}

/* The tile at o that has only rows x cols real entries (an edge of out) */
static void edge_tile(double *o, size_t ldo, int from_zero, size_t rows, size_t cols,
                      const double *ap, const double *bp, size_t ldb, size_t kc)
{
    double tile[MR * NR] = {0};
    for (size_t r = 0; r < rows && !from_zero; r++) {
        memcpy(tile + r * NR, o + r * ldo, cols * sizeof(double));
    }
    tile4x4(tile, NR, 0, ap, bp, ldb, kc);
    for (size_t r = 0; r < rows; r++) {
        memcpy(o + r * ldo, tile + r * NR, cols * sizeof(double));
    }
}

/* Products too small for packing to pay (a head's scores at the course's T = 6): row i of out
 * gathers A(i,k) * row k of B for k = 0, 1, ..., the scalar path's i-k-j order, so each out[i,j]
 * still sums its terms in k order; with contiguous rows of B the compiler vectorises along j. */
enum { SMALL_GEMM = 4096 }; /* M*K*N multiply-adds */

static void gemm_small(double *out, const operands *op, size_t M, size_t K, size_t N,
                       matmul_mode mode)
{
    for (size_t i = 0; i < M; i++) {
        double *out_i = out + i * N;
        if (mode == MATMUL_SET) {
            memset(out_i, 0, N * sizeof(double));
        }
        for (size_t k = 0; k < K; k++) {
            const double a_ik = op->a[i * op->a_rs + k * op->a_cs];
            const double *b_k = op->b + k * op->b_rs;
            if (op->b_cs == 1) {
                for (size_t j = 0; j < N; j++) {
                    out_i[j] += a_ik * b_k[j];
                }
            } else {
                for (size_t j = 0; j < N; j++) {
                    out_i[j] += a_ik * b_k[j * op->b_cs];
                }
            }
        }
    }
}

static void gemm(double *out, const operands *op, size_t M, size_t K, size_t N, matmul_mode mode)
{
    if ((double)M * (double)K * (double)N <= SMALL_GEMM) { /* in double: no size_t wrap */
        gemm_small(out, op, M, K, N, mode);
        return;
    }
    double apack[MC * KC]; /* A block, panels of 4 rows */
    double bpack[KC * NC]; /* B block, panels of 4 columns */
    /* When M is one block of rows, each B panel serves at most MC/4 tiles and packing it would
     * cost about as much as the product: B with contiguous rows (nn, tn) is then read in place,
     * 4 columns of a row per step. Only a last panel of fewer than 4 columns is still packed,
     * for its zero padding. */
    const int b_in_place = op->b_cs == 1 && M <= MC; /* K >= 1 here: K = 0 is a tiny product */
    for (size_t j0 = 0; j0 < N; j0 += NC) {
        const size_t nc = N - j0 < NC ? N - j0 : NC;
        const size_t packed_from = b_in_place ? nc - nc % NR : 0; /* columns j0+packed_from.. */
        for (size_t k0 = 0; k0 < K; k0 += KC) {
            const size_t kc = K - k0 < KC ? K - k0 : KC;
            const int from_zero = mode == MATMUL_SET && k0 == 0; /* the first k block writes out */
            const double *b_block = op->b + k0 * op->b_rs + j0 * op->b_cs;
            pack_panels(bpack, b_block + packed_from * op->b_cs, nc - packed_from, kc, op->b_cs,
                        op->b_rs);
            for (size_t i0 = 0; i0 < M; i0 += MC) {
                const size_t mc = M - i0 < MC ? M - i0 : MC;
                pack_panels(apack, op->a + i0 * op->a_rs + k0 * op->a_cs, mc, kc, op->a_rs,
                            op->a_cs);
                for (size_t jr = 0; jr < nc; jr += NR) { /* B panel stays in L1 ... */
                    const int packed = jr >= packed_from;
                    const double *bp = packed ? bpack + (jr - packed_from) * kc : b_block + jr;
                    const size_t ldb = packed ? NR : op->b_rs;
                    for (size_t ir = 0; ir < mc; ir += MR) { /* ... while A panels stream */
                        double *o = out + (i0 + ir) * N + j0 + jr;
                        const double *ap = apack + ir * kc;
                        if (mc - ir >= MR && nc - jr >= NR) {
                            tile4x4(o, N, from_zero, ap, bp, ldb, kc);
                        } else {
                            edge_tile(o, N, from_zero, mc - ir < MR ? mc - ir : MR,
                                      nc - jr < NR ? nc - jr : NR, ap, bp, ldb, kc);
                        }
                    }
                }
            }
        }
    }
}

void matmul_nn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N)
{
    const operands op = {a, b, K, 1, N, 1};
    gemm(out, &op, M, K, N, MATMUL_SET);
}

void matmul_nn_cols_acc(double *out, const double *a, size_t lda, const double *b, size_t M,
                        size_t K, size_t N)
{
    const operands op = {a, b, lda, 1, N, 1};
    gemm(out, &op, M, K, N, MATMUL_ADD);
}

void matmul_nt(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode)
{
    const operands op = {a, b, K, 1, 1, K};
    gemm(out, &op, M, K, N, mode);
}

void matmul_tn(double *out, const double *a, const double *b, size_t M, size_t K, size_t N,
               matmul_mode mode)
{
    const operands op = {a, b, 1, M, N, 1};
    gemm(out, &op, M, K, N, mode);
}

#endif

/* ---------------------------------------------------------------------------------------------- */
/* softmax rows (both builds) */

void softmax_rows(double *att, double *scores, size_t T, double divisor, int causal)
{
    /* scores, att are (T,T); row t is query t, column t2 is key t2. One pass per row divides the
     * scores (all T of them: they are kept unmasked) and finds the max over the keys that take
     * part; the next exponentiates and sums; the last normalises. */
    for (size_t t = 0; t < T; t++) {
        double *scores_t = scores + t * T;
        double *att_t = att + t * T;
        const size_t valid = causal ? t + 1 : T; /* keys 0 .. valid-1 take part */
        double maxval = -INFINITY;
        for (size_t t2 = 0; t2 < T; t2++) {
            if (divisor != 1.0) {
                scores_t[t2] /= divisor;
            }
            if (t2 < valid && scores_t[t2] > maxval) {
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
