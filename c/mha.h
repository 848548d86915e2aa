/*
 * mha.h - multi-head self-attention in float64, the public C API of mha-wasm.
 *
 * This is the only header a caller needs. The same code builds natively (gcc/clang, C11) and to
 * WebAssembly (emcc, standalone module); every function below is a wasm export of the same name.
 *
 * Conventions (the course's):
 *   B = batch size, T = tokens (sequence length), C = channels (model width), h = heads, hs = C / h.
 *   All arrays are row-major float64. X is (B,T,C). Weights Wq, Wk, Wv, Wo are (C,C) and used as
 *   Y = X @ W (no bias). Q, K, V are (B,T,C), split into heads as (B,h,T,hs). scores and att are
 *   (B,h,T,T): scores = Q K^T / sqrt(hs) (before the mask), att = softmax over the last axis of the
 *   masked scores. headout is (B,h,T,hs), merged to concat (B,T,C); Y = concat @ Wo.
 *
 * Errors: every function that can fail returns MHA_OK (0) or a negative MHA_E* code; mha_strerror()
 * gives its message. The library never aborts, exits, prints or asserts. On error nothing the caller
 * owns is modified, and a layer stays usable with everything it had already computed (the one
 * exception is documented at mha_train: MHA_EDIVERGED keeps the steps already taken). Each
 * function's comment lists every code it can return; a NULL layer is always MHA_ENULL.
 *
 * Ownership: a layer owns its weights, gradients and forward/backward cache. Pointers returned by
 * mha_params and mha_grads stay valid until mha_free; pointers returned by mha_tensor into the
 * cache stay valid until the next call that grows the cache (mha_forward, mha_train or
 * mha_gradcheck* with a B*T or a B*T*T larger than any seen before: the cache holds (B,T,C) and
 * (B,h,T,T) tensors) or mha_free. Arrays passed in (X, dY,
 * target, aux, weights) stay the caller's and are only read during the call; the library copies
 * what it needs to keep. Output arrays (Y, dX, losses, report, out, ...) are the caller's,
 * allocated by the caller with the size stated, and written only on success (except mha_train's
 * losses, see there). Strings returned by the library are static: never free or modify them.
 * The library has no global mutable state: distinct layers and generators may be used from
 * different threads, but each one by one thread at a time.
 */
#ifndef MHA_H
#define MHA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MHA_VERSION_MAJOR 0
#define MHA_VERSION_MINOR 1
#define MHA_VERSION_PATCH 0

/* ---------------------------------------------------------------------------------------------- */
/* status codes */

/* Every status code, one line each: its name MHA_<name>, its value and mha_strerror's message.
 * MHA_OK is 0; the errors are negative and run -1, -2, ... without gaps. */
/* clang-format off */
#define MHA_STATUSES(STATUS)                                                                       \
    STATUS(OK,           0, "ok")                                                                  \
    /* a required pointer argument is NULL */                                                      \
    STATUS(ENULL,       -1, "a required pointer argument is NULL")                                 \
    /* a size (C, h, B, T, n, steps) is zero or negative */                                        \
    STATUS(EDIM,        -2, "sizes must be positive integers")                                     \
    /* C is not divisible by h */                                                                  \
    STATUS(EDIVISIBLE,  -3, "C must be divisible by the number of heads")                          \
    /* the sizes are too large: a byte count would overflow */                                     \
    STATUS(EOVERFLOW,   -4, "sizes too large: the byte count overflows")                           \
    /* out of memory (the layer is unchanged and still usable) */                                  \
    STATUS(ENOMEM,      -5, "out of memory (nothing was changed)")                                 \
    /* backward or a cached tensor was asked for before any forward; or a gradient-check slice     \
     * without a live mha_gradcheck_prepare */                                                     \
    STATUS(ENOFORWARD,  -6, "no forward pass has been run yet")                                    \
    /* seed out of range for this generator (legacy: 0 ... 2^32-1) */                              \
    STATUS(ESEED,       -7, "seed out of range (the legacy generator takes 0 ... 2^32-1)")         \
    /* unknown random generator kind */                                                            \
    STATUS(ERNG,        -8, "unknown random generator kind")                                       \
    /* unknown bits in flags */                                                                    \
    STATUS(EFLAGS,      -9, "unknown flags")                                                       \
    /* a real-valued argument (lr, scale, eps) is NaN, infinite or out of range */                 \
    STATUS(EVALUE,     -10, "a real-valued argument is NaN, infinite or out of range")             \
    /* unknown tensor id */                                                                        \
    STATUS(ETENSOR,    -11, "unknown tensor id")                                                   \
    /* unknown loss kind */                                                                        \
    STATUS(ELOSS,      -12, "unknown loss kind")                                                   \
    /* an index range lies outside the tensor */                                                   \
    STATUS(ERANGE,     -13, "index range outside the tensor")                                      \
    /* reserved: no function returns it (mha_tensor returns NULL instead) */                       \
    STATUS(ENOBACKWARD, -14, "no backward pass has been run yet")                                  \
    /* training stopped: the loss is no longer finite (weights kept) */                            \
    STATUS(EDIVERGED,  -15, "training diverged: the loss is no longer finite (weights kept from "  \
                            "the last finite step)")                                               \
    /* target/aux points into the layer's own buffers (pass a copy) */                             \
    STATUS(EALIAS,     -16, "an input array points into the layer's own buffers (pass a copy)")
/* clang-format on */

#define MHA_STATUS_ID(name, value, message) MHA_##name = value,
enum { MHA_STATUSES(MHA_STATUS_ID) };
#undef MHA_STATUS_ID

/* The message for a status code: a static string owned by the library; never NULL ("unknown error
 * code" for a code that is not an MHA_* status). Cannot fail. */
const char *mha_strerror(int code);

/* The library version as "MAJOR.MINOR.PATCH" from MHA_VERSION_*: a static string owned by the
 * library (web/mha.js reports it as mha.version; package.json carries the same number). Cannot
 * fail. */
const char *mha_version(void);

/* ---------------------------------------------------------------------------------------------- */
/* random streams identical to NumPy's (see docs/numerics.md: "Random numbers") */

enum {
    MHA_RNG_DEFAULT = 0, /* np.random.default_rng(seed): SeedSequence + PCG64, ziggurat normals */
    MHA_RNG_LEGACY = 1   /* np.random.seed(seed); np.random.randn: MT19937, polar Box-Muller */
};

typedef struct mha_rng mha_rng;

/* Creates a generator seeded like NumPy: kind is MHA_RNG_DEFAULT or MHA_RNG_LEGACY, the seed is
 * the non-negative integer seed_hi*2^32+seed_lo. Legacy seeds must be < 2^32 (seed_hi == 0), as
 * NumPy requires. On success *out is a new generator owned by the caller, freed with mha_rng_free.
 * Errors: MHA_ENULL (out), MHA_ERNG (unknown kind), MHA_ESEED (legacy with seed_hi != 0),
 * MHA_ENOMEM. On error *out is set to NULL (when out is not NULL) and nothing is allocated. */
int mha_rng_create(int kind, uint32_t seed_lo, uint32_t seed_hi, mha_rng **out);
/* Frees a generator from mha_rng_create; NULL is allowed. */
void mha_rng_free(mha_rng *rng);

/* Fill out[0..n-1] with the next n values of the stream, exactly as NumPy would return them:
 *   standard_normal: default_rng: rng.standard_normal(n);  legacy: np.random.randn(n)
 *   random:          default_rng: rng.random(n);           legacy: np.random.rand(n)
 *   normal:          loc + scale * z for each standard normal z (rng.normal / np.random.normal)
 * out: n doubles owned by the caller (may be NULL when n == 0, which draws nothing). A (C,C)
 * NumPy draw is the next C*C values in row-major order, so out may be a weight matrix directly.
 * Errors: MHA_ENULL (rng, or out with n > 0), MHA_EVALUE (loc/scale not finite, normal only).
 * On error nothing is drawn: the stream is where it was. */
int mha_rng_standard_normal(mha_rng *rng, double *out, size_t n);
int mha_rng_random(mha_rng *rng, double *out, size_t n);
int mha_rng_normal(mha_rng *rng, double loc, double scale, double *out, size_t n);

/* ---------------------------------------------------------------------------------------------- */
/* the layer */

typedef struct mha_layer mha_layer;

/* flags */
enum {
    MHA_CAUSAL = 1,         /* mask keys after the query (attention exactly 0 above the diagonal) */
    MHA_CHECK_TWO_POINT = 2 /* gradient check only: two-point central differences (see below) */
};

/* Creates a layer of width C with h heads (head size hs = C / h); weights and gradients are zero
 * until mha_init_weights (or until written through mha_params). Allocates 2 * 4*C*C doubles; the
 * forward cache is allocated by the first mha_forward. On success *out is a new layer owned by
 * the caller, freed with mha_free.
 * Errors: MHA_ENULL (out), MHA_EDIM (C <= 0 or h <= 0), MHA_EDIVISIBLE (C % h != 0),
 * MHA_EOVERFLOW (4*C*C doubles overflow size_t), MHA_ENOMEM. On error *out is set to NULL (when
 * out is not NULL) and nothing is allocated. */
int mha_create(int C, int h, mha_layer **out);
/* Frees the layer and everything it owns: every pointer from mha_params, mha_grads and mha_tensor
 * dies with it. NULL is allowed. */
void mha_free(mha_layer *layer);
int mha_layer_C(const mha_layer *layer);     /* C, or 0 for NULL */
int mha_layer_heads(const mha_layer *layer); /* h, or 0 for NULL */

/* Weights from a NumPy stream: W = scale * standard_normal((C, C)), drawn in the order
 * Wq, Wk, Wv, Wo from one generator, i.e. in NumPy:
 *   rng = np.random.default_rng(seed)            (or np.random.seed(seed) for MHA_RNG_LEGACY)
 *   Wq = rng.standard_normal((C, C)) * scale; Wk = ...; Wv = ...; Wo = ...
 * The seed is seed_hi*2^32+seed_lo, as for mha_rng_create. Gradients are zeroed; the cache of an
 * earlier forward is left as it was (computed with the old weights) until the next forward.
 * Errors: MHA_ENULL (layer), MHA_EVALUE (scale not finite), MHA_ERNG (unknown rng_kind),
 * MHA_ESEED (legacy with seed_hi != 0). On error the weights are unchanged. */
int mha_init_weights(mha_layer *layer, uint32_t seed_lo, uint32_t seed_hi, int rng_kind,
                     double scale);

/* The parameter buffer [Wq | Wk | Wv | Wo], 4*C*C doubles (each W is (C,C), row-major), and the
 * gradient buffer [dWq | dWk | dWv | dWo] of the same layout. Owned by the layer, writable (write
 * your own weights here), valid until mha_free. Writing does not recompute a cached forward.
 * NULL for a NULL layer; cannot fail otherwise. */
double *mha_params(mha_layer *layer);
double *mha_grads(mha_layer *layer);
size_t mha_num_params(const mha_layer *layer); /* 4*C*C, or 0 for NULL */

/* Forward pass. X (B,T,C) -> Y (B,T,C). Caches X, Q, K, V, scores, att, headout, concat and Y
 * for backward and for mha_tensor. flags: 0 or MHA_CAUSAL.
 * X: B*T*C doubles, the caller's, copied into the cache first (so X may be the layer's own MHA_T_X
 * tensor, or any other of its tensors). Y: B*T*C doubles, the caller's, or NULL (read MHA_T_Y
 * instead). NaN or Inf in X propagate to Y (they are not rejected).
 * The cache grows (one allocation) when B*T is larger than any seen before, which moves every
 * pointer mha_tensor returned; otherwise nothing is allocated. A new forward discards the
 * intermediate gradients of the last backward (mha_tensor returns NULL for them until the next
 * mha_backward) and cancels an mha_gradcheck_prepare.
 * Errors: MHA_ENULL (layer, X), MHA_EDIM (B or T <= 0), MHA_EFLAGS (bits other than MHA_CAUSAL),
 * MHA_EOVERFLOW (the cache's byte count overflows size_t), MHA_ENOMEM (the cache could not grow;
 * the layer keeps its previous cache). */
int mha_forward(mha_layer *layer, const double *X, int B, int T, int flags, double *Y);

/* Backward pass of the last forward, in the 13 steps of the course's lesson 4 (the table's step
 * column): 1 dWo, 2 dconcat, 3 dheadout, 4 dV, 5 datt, 6 dscores, 7 dQ, 8 dK, 9 the merged
 * dQm, dKm, dVm, 10 dWq, 11 dWk, 12 dWv, 13 dX. dY and dX are (B,T,C) of the last forward's B and
 * T: B*T*C doubles each, the caller's. dY is copied first (it may point anywhere, the layer's own
 * tensors included); dX may be NULL (read MHA_T_DX instead).
 * dWq ... dWo are ADDED to the gradient buffer (call mha_zero_grad first); the cached gradients
 * (dY, dconcat, ..., dQm, dKm, dVm, dX) are kept for mha_tensor. Allocates nothing.
 * Errors: MHA_ENULL (layer, dY), MHA_ENOFORWARD (no forward yet). */
int mha_backward(mha_layer *layer, const double *dY, double *dX);
/* Sets the gradient buffer (dWq ... dWo) to zero. Errors: MHA_ENULL (layer). */
int mha_zero_grad(mha_layer *layer);

/* ---------------------------------------------------------------------------------------------- */
/* the tensor table */

/* The largest rank of a tensor: the length of the dims arrays of mha_tensor_shape(_for) */
#define MHA_MAX_RANK 4

/* Shapes, in the course's axes */
enum {
    MHA_SHAPE_CC = 0, /* (C,C)       a weight or its gradient */
    MHA_SHAPE_BTC,    /* (B,T,C)     one vector of C per token */
    MHA_SHAPE_BHTHS,  /* (B,h,T,hs)  split into heads: one vector of hs per head and token */
    MHA_SHAPE_BHTT    /* (B,h,T,T)   one number per head and (query, key) pair */
};

/* What a tensor is */
enum {
    MHA_KIND_PARAM = 0,    /* a weight (in mha_params) */
    MHA_KIND_INPUT,        /* the forward's input X (a copy) */
    MHA_KIND_INTERMEDIATE, /* computed by the forward on the way to Y */
    MHA_KIND_OUTPUT,       /* the forward's result Y */
    MHA_KIND_GRADIENT      /* dL/d(something): of a weight (in mha_grads) or of a cached tensor */
};

/* The stages of the forward, in order. Each computes one line of lesson 3 (for every batch item
 * and head) from what the earlier stages left in the cache; mha_forward_from runs one stage and
 * all those after it. */
enum {
    MHA_STAGE_NONE = -1, /* no stage: the forward cannot restart after this tensor changed */
    MHA_STAGE_QKV = 0,   /* Q, K, V = split_heads(X @ Wq), split_heads(X @ Wk), ... */
    MHA_STAGE_SCORES,    /* scores = Q K^T / sqrt(hs) */
    MHA_STAGE_ATT,       /* att = softmax(mask(scores)) */
    MHA_STAGE_HEADOUT,   /* headout = att @ V */
    MHA_STAGE_CONCAT,    /* concat = merge_heads(headout) */
    MHA_STAGE_Y          /* Y = concat @ Wo */
};

/* Every tensor of the layer, one line each; its line number (from 0) is its id, MHA_T_<id>.
 *   name     the course's name: mha_tensor_name, and the tensor's field in the layer (c/layer.h)
 *   shape    MHA_SHAPE_<shape>
 *   kind     MHA_KIND_<kind>
 *   restart  MHA_STAGE_<restart>: the first stage that reads the tensor, where mha_forward_from
 *            restarts after the caller edited it (NONE: mha_forward_from refuses it)
 *   grad     MHA_T_<grad>: the tensor's gradient (NONE: none)
 *   step     the step of lesson 4's backward that computes it (backward_core in c/mha.c numbers
 *            them 1 ... 13); 0: not computed by the backward
 *   check    1: a row of the gradient check (MHA_CHECK_<id>, rows in table order), which compares
 *            grad with finite differences of the loss over the tensor's entries
 * Weights live in mha_params and their gradients in mha_grads, each in table order; everything
 * else lives in the layer's cache. Adding a tensor is one line here, plus the code computing it. */
/* clang-format off */
#define MHA_TENSORS(TENSOR)                                                                        \
    /*     id        name      shape  kind          restart  grad      step check */               \
    TENSOR(WQ,       Wq,       CC,    PARAM,        NONE,    DWQ,      0,   1)                     \
    TENSOR(WK,       Wk,       CC,    PARAM,        NONE,    DWK,      0,   1)                     \
    TENSOR(WV,       Wv,       CC,    PARAM,        NONE,    DWV,      0,   1)                     \
    TENSOR(WO,       Wo,       CC,    PARAM,        NONE,    DWO,      0,   1)                     \
    TENSOR(DWQ,      dWq,      CC,    GRADIENT,     NONE,    NONE,     10,  0)                     \
    TENSOR(DWK,      dWk,      CC,    GRADIENT,     NONE,    NONE,     11,  0)                     \
    TENSOR(DWV,      dWv,      CC,    GRADIENT,     NONE,    NONE,     12,  0)                     \
    TENSOR(DWO,      dWo,      CC,    GRADIENT,     NONE,    NONE,     1,   0)                     \
    TENSOR(X,        X,        BTC,   INPUT,        NONE,    DX,       0,   1)                     \
    TENSOR(Q,        Q,        BHTHS, INTERMEDIATE, SCORES,  DQ,       0,   1)                     \
    TENSOR(K,        K,        BHTHS, INTERMEDIATE, SCORES,  DK,       0,   1)                     \
    TENSOR(V,        V,        BHTHS, INTERMEDIATE, HEADOUT, DV,       0,   1)                     \
    TENSOR(SCORES,   scores,   BHTT,  INTERMEDIATE, ATT,     DSCORES,  0,   1)                     \
    TENSOR(ATT,      att,      BHTT,  INTERMEDIATE, HEADOUT, DATT,     0,   1)                     \
    TENSOR(HEADOUT,  headout,  BHTHS, INTERMEDIATE, CONCAT,  DHEADOUT, 0,   1)                     \
    TENSOR(CONCAT,   concat,   BTC,   INTERMEDIATE, Y,       DCONCAT,  0,   1)                     \
    TENSOR(Y,        Y,        BTC,   OUTPUT,       NONE,    DY,       0,   0)                     \
    TENSOR(DY,       dY,       BTC,   GRADIENT,     NONE,    NONE,     0,   0)                     \
    TENSOR(DCONCAT,  dconcat,  BTC,   GRADIENT,     NONE,    NONE,     2,   0)                     \
    TENSOR(DHEADOUT, dheadout, BHTHS, GRADIENT,     NONE,    NONE,     3,   0)                     \
    TENSOR(DV,       dV,       BHTHS, GRADIENT,     NONE,    NONE,     4,   0)                     \
    TENSOR(DATT,     datt,     BHTT,  GRADIENT,     NONE,    NONE,     5,   0)                     \
    TENSOR(DSCORES,  dscores,  BHTT,  GRADIENT,     NONE,    NONE,     6,   0)                     \
    TENSOR(DQ,       dQ,       BHTHS, GRADIENT,     NONE,    NONE,     7,   0)                     \
    TENSOR(DK,       dK,       BHTHS, GRADIENT,     NONE,    NONE,     8,   0)                     \
    TENSOR(DQM,      dQm,      BTC,   GRADIENT,     NONE,    NONE,     9,   0)                     \
    TENSOR(DKM,      dKm,      BTC,   GRADIENT,     NONE,    NONE,     9,   0)                     \
    TENSOR(DVM,      dVm,      BTC,   GRADIENT,     NONE,    NONE,     9,   0)                     \
    TENSOR(DX,       dX,       BTC,   GRADIENT,     NONE,    NONE,     13,  0)
/* clang-format on */

/* Helpers of the generated lists: MHA_IF_1(x) is x, MHA_IF_0(x) is nothing */
#define MHA_IF_0(...)
#define MHA_IF_1(...) __VA_ARGS__

/* The tensor ids MHA_T_WQ ... MHA_T_DX, from the table */
#define MHA_T_ID(id, ...) MHA_T_##id,
enum { MHA_T_NONE = -1, MHA_TENSORS(MHA_T_ID) MHA_T_COUNT };
#undef MHA_T_ID

/* The rows of the gradient check MHA_CHECK_WQ ... MHA_CHECK_CONCAT: the table's lines with
 * check = 1, in table order. The first five are the layer's inputs (weights and X); the rest are
 * intermediates, perturbed in the cache and propagated forward from there. */
#define MHA_CHECK_ID(id, name, shape, kind, restart, grad, step, check)                            \
    MHA_IF_##check(MHA_CHECK_##id, )
enum { MHA_TENSORS(MHA_CHECK_ID) MHA_CHECK_COUNT };
#undef MHA_CHECK_ID

/* The table, for programs that cannot expand the macro (web/mha.js builds its lists from these):
 * the number of tensors (MHA_T_COUNT); tensor id's kind (MHA_KIND_*), restart stage (MHA_STAGE_*,
 * MHA_STAGE_NONE included), gradient (an MHA_T_* id or MHA_T_NONE) and backward step (0 ... 13);
 * each returns -1 for an unknown id (that is MHA_STAGE_NONE and MHA_T_NONE as well). Cannot fail
 * otherwise. */
int mha_tensor_count(void);
int mha_tensor_kind(int id);
int mha_tensor_stage(int id);
int mha_tensor_grad(int id);
int mha_tensor_step(int id);

/* The name of tensor `id` as the course writes it ("Wq", "scores", "dscores", ...): a static
 * string owned by the library, or NULL if the id is unknown (ids run from 0 to MHA_T_COUNT-1). */
const char *mha_tensor_name(int id);

/* The gradients lesson 4 shows, in the order its backward computes them: the i-th (from 0) is
 * tensor mha_grad_order(i), MHA_T_NONE past the last. They are the gradients of the course's
 * tensors (those the table names as some tensor's grad) that the backward computes (step > 0),
 * by step: dWo, dconcat, dheadout, dV, datt, dscores, dQ, dK, dWq, dWk, dWv, dX. (The merged
 * dQm, dKm, dVm of step 9 are the gradients of X @ Wq, X @ Wk, X @ Wv, which are not tensors of
 * the table.) Cannot fail. */
int mha_grad_order(int i);

/* The tensor checked by row `which` of the gradient check (an MHA_T_* id), or MHA_T_NONE if
 * which is not in 0 ... MHA_CHECK_COUNT-1. Cannot fail. */
int mha_check_tensor(int which);

/* The name of checked tensor `which` ("Wq", ..., "X", "Q", ..., "concat"): a static string owned
 * by the library, the same as mha_tensor_name of the tensor it checks; NULL if which is not in
 * 0 ... MHA_CHECK_COUNT-1. */
const char *mha_check_name(int which);

/* The shape of tensor `id` for a layer of width C with h heads and a forward of size (B,T),
 * without any layer: writes its rank (2, 3 or 4) to *rank and its dims to dims[0..rank-1] (both
 * the caller's): (C,C), (B,T,C), (B,h,T,hs) or (B,h,T,T) by the table's shape column.
 * Errors: MHA_ENULL (rank, dims), MHA_ETENSOR (unknown id), MHA_EDIM (B, T, C or h <= 0),
 * MHA_EDIVISIBLE (C % h != 0). Nothing is written on error. */
int mha_tensor_shape_for(int id, int B, int T, int C, int h, int *rank, int dims[MHA_MAX_RANK]);

/* Recompute everything downstream of one cached intermediate after the caller edited it in place
 * (through mha_tensor), with the last forward's B, T and flags: `stage` is the tensor's id, and
 * the forward runs again from the tensor's restart stage (the table's restart column) on: Q or K:
 * from scores (scores, att, headout, concat and Y); scores: from att; V or att: from headout;
 * headout: from concat; concat: Y. Used by the gradient check of intermediates and by the page's
 * "perturb one head" view. Allocates nothing; discards the last backward's intermediate gradients
 * and cancels an mha_gradcheck_prepare, as mha_forward does.
 * Errors: MHA_ENULL (layer), MHA_ETENSOR (the tensor has no restart stage: only the seven above
 * have one), MHA_ENOFORWARD. */
int mha_forward_from(mha_layer *layer, int stage);

/* Pointer to tensor `id` (an MHA_T_* id) and its element count in *len (len may be NULL): the
 * layer's own memory, readable and writable, laid out with the shape mha_tensor_shape gives. The
 * weights and their gradients (shape (C,C)) point into mha_params / mha_grads and live until
 * mha_free; the cached tensors (every other shape) live until the cache grows (see mha_forward) or
 * mha_free. Returns NULL with *len = 0 if layer is NULL, the id is unknown or the tensor does not
 * exist yet: cached tensors before a forward, and cached gradients (dY, dconcat, ..., dX) when no
 * mha_backward, mha_train step or mha_gradcheck ran since the last forward or mha_forward_from. */
double *mha_tensor(mha_layer *layer, int id, size_t *len);

/* The shape of tensor `id` in the layer: mha_tensor_shape_for with the layer's C and h and the
 * last forward's B and T. Cached gradients have a shape once a forward ran, even before their
 * backward.
 * Errors: MHA_ENULL (layer, rank, dims), MHA_ETENSOR (unknown id), MHA_ENOFORWARD (a cached
 * tensor before any forward). Nothing is written on error. */
int mha_tensor_shape(const mha_layer *layer, int id, int *rank, int dims[MHA_MAX_RANK]);

/* ---------------------------------------------------------------------------------------------- */
/* loss, optimiser, training */

/* Mean squared error over n elements: *loss = mean((Y - target)^2) (compensated sum); dY (may be
 * NULL) receives dloss/dY = 2 (Y - target) / n. Y, target, dY: n doubles each, the caller's; dY
 * may be the same array as Y or target. No layer involved, nothing allocated.
 * Errors: MHA_ENULL (Y, target, loss), MHA_EDIM (n == 0). */
int mha_mse_loss(const double *Y, const double *target, size_t n, double *loss, double *dY);

/* One step of gradient descent: params -= lr * grads (the cache is not recomputed).
 * Errors: MHA_ENULL (layer), MHA_EVALUE (lr not finite); on error the weights are unchanged. */
int mha_sgd_step(mha_layer *layer, double lr);

/* `steps` steps of gradient descent on the MSE loss between forward(X) and target (both (B,T,C),
 * B*T*C doubles, the caller's; X may point into the layer, target may not).
 * Each step: zero_grad, forward, loss, backward, sgd_step. losses[s] is the loss before step s
 * (losses: `steps` doubles of the caller's, or NULL). X and target must be finite (MHA_EVALUE
 * otherwise: a NaN would silently destroy the weights). Afterwards the cache holds the forward and
 * backward of the last step (before its update) and the gradient buffer that step's gradient.
 * If the loss stops being finite (lr far too large), training stops before that step's update and
 * returns MHA_EDIVERGED: the weights are those of the last finite step, losses[s] holds the
 * non-finite loss and the remaining losses are NaN. steps == 0 only validates (nothing changes).
 * Errors: MHA_ENULL (layer, X, target), MHA_EDIM (B or T <= 0, steps < 0), MHA_EFLAGS,
 * MHA_EOVERFLOW, MHA_EALIAS (target points into the layer's own buffers, which every step
 * rewrites), MHA_EVALUE (lr, X or target not finite), MHA_ENOMEM (cache growth, as mha_forward),
 * MHA_EDIVERGED. All but MHA_EDIVERGED are reported before anything changes. */
int mha_train(mha_layer *layer, const double *X, const double *target, int B, int T, int flags,
              double lr, int steps, double *losses);

/* ---------------------------------------------------------------------------------------------- */
/* gradient check (float64 central finite differences) */

enum {
    MHA_LOSS_DOT = 0, /* L = sum(G * Y), aux = G (B,T,C): dL/dY = G */
    MHA_LOSS_MSE = 1  /* L = mean((Y - aux)^2), aux = target (B,T,C) */
};

/* Relative errors are |a - n| / max(|a|, |n|, MHA_GRADCHECK_TINY) */
#define MHA_GRADCHECK_TINY 1e-12
/* The floor of the sum form |a - n| / max(|a| + |n|, MHA_GRADCHECK_SUM_FLOOR) (cs231n's notes) */
#define MHA_GRADCHECK_SUM_FLOOR 1e-8
/* The default step of the five-point finite differences */
#define MHA_GRADCHECK_EPS 1e-3

/* One row of the gradient-check table, one field a line (every field is a double, so a report
 * is a flat Float64Array in JS; web/mha.js finds each field through mha_constant_*, see below).
 * A non-finite gradient counts as an infinite error.
 * Two figures of merit: max_rel is per entry, |a - n| / max(|a|, |n|, MHA_GRADCHECK_TINY), and
 * strict (one tiny entry, where rounding noise is large relative to it, sets it); norm_rel is
 * the norm-wise ||a - n|| / (||a|| + ||n||) = sqrt(ss_diff) / (sqrt(ss_analytic) +
 * sqrt(ss_numeric)) over the checked entries (denominator at least MHA_GRADCHECK_TINY), which
 * weighs each entry by its size: the figure many courses print. It lies in [0, 1]; a non-finite
 * gradient, or sums of squares that overflow (gradients beyond ~1e154), make it infinite. */
/* clang-format off */
#define MHA_CHECK_ROW_FIELDS(FIELD)                                                                \
    FIELD(size)        /* elements in the tensor */                                                \
    FIELD(checked)     /* elements compared */                                                     \
    FIELD(max_abs)     /* max |analytic - numeric| */                                              \
    FIELD(max_rel)     /* max relative error */                                                    \
    FIELD(max_rel_sum) /* max |a - n| / max(|a| + |n|, MHA_GRADCHECK_SUM_FLOOR) */                 \
    FIELD(worst)       /* index of the element with the largest relative error (-1: none) */       \
    FIELD(analytic)    /* analytic gradient at `worst` */                                          \
    FIELD(numeric)     /* numeric gradient at `worst` */                                           \
    FIELD(mean_rel)    /* mean relative error over the checked elements */                         \
    FIELD(ss_diff)     /* sum over the checked elements of (analytic - numeric)^2 */               \
    FIELD(ss_analytic) /* sum of analytic^2 */                                                     \
    FIELD(ss_numeric)  /* sum of numeric^2 */                                                      \
    FIELD(norm_rel)    /* norm-wise relative error, from the three sums (see above) */
/* clang-format on */

#define MHA_DOUBLE_FIELD(name) double name;
typedef struct {
    MHA_CHECK_ROW_FIELDS(MHA_DOUBLE_FIELD)
} mha_check_row;
#undef MHA_DOUBLE_FIELD

/* Compares the analytic gradient of the loss with float64 central differences, the five-point
 * stencil (8 (L(x+eps) - L(x-eps)) - (L(x+2eps) - L(x-2eps))) / (12 eps), whose error is O(eps^4):
 * with eps = MHA_GRADCHECK_EPS the rounding in L stays far below even small gradients. With
 * MHA_CHECK_TWO_POINT in flags, the two-point stencil a notebook writes instead,
 * (L(x+eps) - L(x-eps)) / (2 eps), error O(eps^2) (a step near 1e-5 balances it against the
 * rounding in L, which grows as 1/eps). The loss is summed with compensation. It checks the entries of every checked tensor:
 * all of them (samples == 0) or `samples` entries spread evenly over each tensor (sampled mode,
 * for large sizes: position j checks entry floor(j * size / samples); samples >= size checks all).
 * X (B,T,C) and aux (B,T,C: G for MHA_LOSS_DOT, the target for MHA_LOSS_MSE) are B*T*C doubles of
 * the caller's, copied first; X may point into the layer, aux may not. report: MHA_CHECK_COUNT
 * rows of the caller's, indexed by MHA_CHECK_*, written only on success. Afterwards the weights
 * are exactly as before, the gradient buffer holds the analytic gradient of this loss (it is
 * zeroed first), and the cache holds the unperturbed forward and backward. Allocates when the
 * cache grows, and (h-1)*B*T*C doubles of partial sums of Y that the layer keeps for later checks
 * (without that memory the check runs anyway, slower). Cost: five partial forwards per checked
 * entry (four perturbed, one restoring; three for two points); an entry that changes one head recomputes only that
 * head's attention and the part of Y = concat @ Wo from that head's columns on.
 * Errors: MHA_ENULL (report, layer, X, aux), MHA_EVALUE (eps not finite or <= 0), MHA_EDIM
 * (samples < 0, B or T <= 0), MHA_EFLAGS, MHA_EOVERFLOW, MHA_ELOSS (loss_kind not MHA_LOSS_*),
 * MHA_EALIAS (aux points into the layer's own buffers), MHA_ENOMEM (cache growth). */
int mha_gradcheck(mha_layer *layer, const double *X, int B, int T, int flags, int loss_kind,
                  const double *aux, double eps, int samples, mha_check_row *report);

/* The same check in pieces, for callers that show progress (the page runs it in chunks):
 * mha_gradcheck_prepare runs forward + backward for the loss (zeroing the gradient buffer first),
 * copying X and aux as mha_gradcheck does (flags: MHA_CAUSAL and MHA_CHECK_TWO_POINT, which
 * the slices follow); then each mha_gradcheck_slice checks sample positions
 * first ... first+count-1 of tensor `which` (MHA_CHECK_*; out of `samples` positions, 0 = every
 * entry) and merges them into *row (the caller's), which the caller zeroes with worst = -1 before
 * its first slice; row->size is set to the tensor's size. A slice leaves weights and cache as it
 * found them. Any mha_forward, mha_forward_from, mha_backward or mha_train in between cancels the
 * preparation (MHA_ENOFORWARD). Don't change the weights in between
 * (mha_init_weights, mha_sgd_step, writes through mha_params): the check would compare the
 * prepared gradient with differences of the new weights.
 * Errors of mha_gradcheck_prepare: MHA_ENULL (layer, X, aux), MHA_EDIM (B or T <= 0),
 * MHA_EFLAGS, MHA_EOVERFLOW, MHA_ELOSS, MHA_EALIAS (aux), MHA_ENOMEM (cache growth).
 * Errors of mha_gradcheck_slice: MHA_ENULL (layer, row), MHA_ENOFORWARD (not prepared, or
 * cancelled), MHA_EVALUE (eps not finite or <= 0), MHA_EDIM (samples, first or count < 0),
 * MHA_ETENSOR (which), MHA_ERANGE (first + count past the number of positions). Nothing is
 * written on error. */
int mha_gradcheck_prepare(mha_layer *layer, const double *X, int B, int T, int flags, int loss_kind,
                          const double *aux);
int mha_gradcheck_slice(mha_layer *layer, int which, int samples, int first, int count, double eps,
                        mha_check_row *row);

/* ---------------------------------------------------------------------------------------------- */
/* building blocks of the lessons (no layer needed) */

/* split_heads: x (B,T,C) -> out (B,h,T,hs); merge_heads: x (B,h,T,hs) -> out (B,T,C).
 * x and out: B*T*C doubles each, the caller's; they must not overlap. Pure data movement (no
 * allocation), so merge_heads(split_heads(x)) == x exactly.
 * Errors: MHA_ENULL (x, out), MHA_EDIM (B, T, C or h <= 0), MHA_EDIVISIBLE (C % h != 0),
 * MHA_EOVERFLOW (the byte counts of these sizes overflow size_t). Nothing is written on error. */
int mha_split_heads(const double *x, int B, int T, int C, int h, double *out);
int mha_merge_heads(const double *x, int B, int T, int C, int h, double *out);

/* Single-head self-attention with its own projections (lesson 1): X (B,T,C), Wq/Wk/Wv (C,hs),
 * all the caller's and only read. att (B,T,T) = softmax(mask(X Wq (X Wk)^T / sqrt(hs))),
 * out (B,T,hs) = att X Wv: the caller's, either may be NULL, written after the inputs are read.
 * hs is any positive size (C need not be divisible by it). flags: 0 or MHA_CAUSAL. Uses one
 * temporary allocation of 3*B*T*hs + B*T*T doubles, freed before it returns.
 * Errors: MHA_ENULL (X, Wq, Wk, Wv), MHA_EDIM (B, T, C or hs <= 0), MHA_EFLAGS, MHA_EOVERFLOW,
 * MHA_ENOMEM. Nothing is written on error. */
int mha_single_head(const double *X, int B, int T, int C, int hs, const double *Wq,
                    const double *Wk, const double *Wv, int flags, double *att, double *out);

/* ---------------------------------------------------------------------------------------------- */
/* this header's numbers, for bindings (web/mha.js reads all of its numbers from here) */

/* Every constant of this header by its C name, with its value: the status codes ("MHA_OK",
 * "MHA_ENOFORWARD", ...), MHA_VERSION_*, MHA_RNG_*, MHA_CAUSAL, MHA_MAX_RANK, MHA_SHAPE_*,
 * MHA_KIND_*, MHA_STAGE_*, the tensor ids MHA_T_* (with MHA_T_NONE and MHA_T_COUNT), the check
 * rows MHA_CHECK_* (with MHA_CHECK_COUNT), MHA_LOSS_*, MHA_GRADCHECK_*, the layout of
 * mha_check_row ("sizeof(mha_check_row)", "offsetof(mha_check_row, max_rel)", ...) and the sizes
 * of the ABI's types ("sizeof(int)", "sizeof(size_t)", "sizeof(void *)", "sizeof(double)").
 * Entry i, from 0 to mha_constant_count()-1, is named mha_constant_name(i) (a static string owned
 * by the library) and worth mha_constant_value(i); outside that range the name is NULL and the
 * value NaN. Cannot fail. */
int mha_constant_count(void);
const char *mha_constant_name(int i);
double mha_constant_value(int i);

/* The bytes of the cache a layer of width C with h heads needs for a forward of size (B,T) (the
 * allocation mha_forward makes when B*T or B*T*T grows), as a double: exact, even where a size_t
 * would overflow. 0 if a size is <= 0 or C % h != 0. Cannot fail. */
double mha_cache_bytes(int B, int T, int C, int h);

#ifdef __cplusplus
}
#endif

#endif /* MHA_H */
