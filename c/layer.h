/*
 * layer.h - the layer struct and the internal stages shared by mha.c and train.c (internal).
 *
 * B = batch, T = tokens, C = channels, h = heads, hs = C / h.
 * One allocation holds the parameters, one the gradients, one the forward/backward cache. The
 * cache grows to the largest B*T*C and B*h*T*T seen (never shrinks, never per call); the tensor
 * pointers below are recomputed from it by cache_layout after every growth.
 */
#ifndef MHA_LAYER_H
#define MHA_LAYER_H

#include "mha.h"

/* One line of the tensor table (MHA_TENSORS in mha.h), as values */
typedef struct {
    const char *name;
    int shape;   /* MHA_SHAPE_* */
    int kind;    /* MHA_KIND_* */
    int restart; /* MHA_STAGE_* */
    int grad;    /* MHA_T_* */
    int step;    /* lesson 4's backward step, 0: none */
    int check;   /* 1: a row of the gradient check */
} tensor_info;

extern const tensor_info tensor_table[MHA_T_COUNT]; /* by MHA_T_* id */
extern const int check_tensor_id[MHA_CHECK_COUNT];  /* by MHA_CHECK_* row: an MHA_T_* id */

/* The layer's field for one line of the table: double *Wq; double *Wk; ... */
#define LAYER_TENSOR_FIELD(id, name, ...) double *name;

struct mha_layer {
    int C, h, hs;
    double *params; /* (4,C,C): Wq, Wk, Wv, Wo */
    double *grads;  /* (4,C,C): dWq, dWk, dWv, dWo */

    double *cache;            /* one block: every other tensor of the table, then work and aux */
    size_t cap_btc, cap_bhtt; /* capacity of the block, in elements per tensor */

    int B, T, flags;                 /* sizes of the last forward */
    int have_forward, have_backward; /* set by layer_cache_holds only */
    int gc_loss;      /* gradient check: loss kind prepared by mha_gradcheck_prepare */
    int gc_two_point; /* ... and its stencil: 1 for MHA_CHECK_TWO_POINT, 0 for five points */
    int gc_ready;

    /* Every tensor of the table, by id (l->tensor[MHA_T_Q]) or by its course name (l->Q), shaped
     * as the table says: the weights point into params, their gradients into grads, the rest into
     * cache (set by layer_reserve). */
    union {
        double *tensor[MHA_T_COUNT];
        struct {
            MHA_TENSORS(LAYER_TENSOR_FIELD)
        };
    };
    double *work; /* (B,T,C) scratch: X @ W before split_heads */
    double *aux;  /* (B,T,C) gradient check: G or target */

    /* gradient check: (h-1, B,T,C) partial sums of Y = concat @ Wo over the heads before head g
     * (g = 1..h-1), so a check entry that changes only head g's columns of concat recomputes Y
     * from there. Own allocation, grown by mha_gradcheck_prepare, which sets gc_partial_ok when
     * they are there; only read while gc_ready (which every forward, backward or train clears). */
    double *gc_partial;
    size_t gc_partial_cap; /* doubles */
    int gc_partial_ok;
};

/* The number of elements of tensor `id` for the layer's C, h and the last forward's B, T */
size_t tensor_size(const mha_layer *l, int id);

/* Make room for a forward of size (B,T); on failure the layer is unchanged. When the cache is
 * reallocated and X is not NULL, the B*T*C doubles at X are copied to the new l->X first (X may
 * point into the old cache). */
int layer_reserve(mha_layer *l, int B, int T, const double *X);

/* What the cache holds now: a forward (1 or 0) and a backward of that forward (1 or 0). The one
 * place these flags change; each change also cancels a prepared gradient check (gc_ready), which
 * mha_gradcheck_prepare sets again afterwards. */
void layer_cache_holds(mha_layer *l, int forward, int backward);

/* Run the forward pass from stage `from` (MHA_STAGE_*) on the cache (sizes l->B, l->T, flags) */
void forward_from(mha_layer *l, int from);

/* One projection only: which = 0 (Q from Wq), 1 (K from Wk), 2 (V from Wv); no later stage. */
void forward_project(mha_layer *l, int which);

/* The forward from stage `from` (>= MHA_STAGE_SCORES) up to concat, restricted to batches b0..b1-1
 * and heads h0..h1-1: attention and merge for those (batch, head) pairs. Gives the same bits as
 * the full forward_from for the entries it writes. */
void forward_heads(mha_layer *l, int from, size_t b0, size_t b1, size_t h0, size_t h1);

/* Rows b0..b1-1 of Y = concat @ Wo, the same bits as the full forward. With head > 0, partial
 * (B,T,C) must hold the sums over concat's columns before head*hs (gc_partial) and only those
 * columns from head*hs on are multiplied. */
void forward_output_rows(mha_layer *l, size_t b0, size_t b1, size_t head, const double *partial);

/* Recompute single entries of the projections with the same arithmetic as the full matmul:
 * column j of Q/K/V (which = 0/1/2) for all (b,t); row (b,t) of Q, K and V; column j of Y. */
void forward_project_column(mha_layer *l, int which, size_t j);
void forward_project_row(mha_layer *l, size_t b, size_t t);
void forward_output_column(mha_layer *l, size_t j);

/* Backward of the cached forward with l->dY already filled: fills the intermediate gradients,
 * adds to l->grads, writes l->dX. */
void backward_core(mha_layer *l);

/* Validate, reserve the cache, copy X (memmove: X may alias the cache) and record B, T, flags;
 * the caller then runs forward_from(l, MHA_STAGE_QKV). On error the layer is unchanged. */
int layer_begin_forward(mha_layer *l, const double *X, int B, int T, int flags);

/* 1 if the n doubles at p overlap the layer's cache, parameters or gradients */
int layer_owns(const mha_layer *l, const double *p, size_t n);

/* Validates B, T and flags and the byte counts for a forward; MHA_OK or an error code. */
int check_forward_args(const mha_layer *l, const double *X, int B, int T, int flags);

#endif
