/*
 * rng.h - NumPy-identical random streams (internal header; the public API is in mha.h).
 *
 * Two generators, selected by `kind` (MHA_RNG_DEFAULT / MHA_RNG_LEGACY from mha.h):
 *
 *   MHA_RNG_DEFAULT  np.random.default_rng(seed): the integer seed is turned into 32-bit
 *                    entropy words, mixed by SeedSequence into 4 u64 words, which seed PCG64
 *                    (128-bit LCG, XSL-RR output). Doubles are (next64 >> 11) * 2^-53, normals
 *                    come from NumPy's 256-layer ziggurat.
 *   MHA_RNG_LEGACY   np.random.seed(seed) / RandomState(seed): MT19937 seeded with init_genrand,
 *                    53-bit doubles from two 32-bit outputs, normals from the polar Box-Muller
 *                    method with one cached value.
 *
 * The specification is /work/shared/docs/numpy-rng.md (sections A and B); the section numbers
 * quoted in rng.c refer to it. Transcendental functions come from npmath.h, never from libm.
 *
 * The layer code embeds a `struct mha_rng` (or keeps one on the stack) and uses rng_init plus
 * the rng_next_* functions, so it needs no allocation. A struct must be seeded with rng_init
 * before any other use.
 */
#ifndef MHA_RNG_H
#define MHA_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "mha.h"

#define MT19937_N 624

/* An unsigned 128-bit integer as two 64-bit halves (no __int128 needed). */
typedef struct {
    uint64_t hi;
    uint64_t lo;
} rng_u128;

/* PCG64 state (A.4). `state` and `inc` are the 128-bit LCG state and (odd) increment.
 * `buf32` / `has_buf32` is the one-word buffer of next32: the high half of a 64-bit output
 * waiting to be handed out. next64 and next_double neither use nor clear it. */
typedef struct {
    rng_u128 state;
    rng_u128 inc;
    uint32_t buf32;
    int has_buf32;
} pcg64_state;

/* MT19937 state (B.1, B.2): the 624-word key, the read position `pos` (624 means "regenerate
 * the block before the next draw"), and the cached Gaussian of the polar method (B.4):
 * `gauss` is valid only while `has_gauss` is nonzero. Seeding clears the cache. */
typedef struct {
    uint32_t key[MT19937_N];
    int pos;
    int has_gauss;
    double gauss;
} mt19937_state;

/* A generator. Only the member matching `kind` is meaningful; the other one is left zeroed. */
struct mha_rng {
    int kind;         /* MHA_RNG_DEFAULT or MHA_RNG_LEGACY */
    pcg64_state pcg;  /* used when kind == MHA_RNG_DEFAULT */
    mt19937_state mt; /* used when kind == MHA_RNG_LEGACY */
};

/* Seeds an existing struct like NumPy with the integer seed seed_hi*2^32 + seed_lo.
 * Returns MHA_OK, MHA_ENULL (r is NULL), MHA_ERNG (unknown kind) or MHA_ESEED (legacy seed
 * >= 2^32, i.e. seed_hi != 0). On error *r is left unchanged. */
int rng_init(struct mha_rng *r, int kind, uint32_t seed_lo, uint32_t seed_hi);

/* The next value of the stream of rng.standard_normal() / np.random.randn(). */
double rng_next_standard_normal(struct mha_rng *r);

/* The next value of the stream of rng.random() / np.random.rand(), in [0, 1). */
double rng_next_double(struct mha_rng *r);

/* ---- stage-level functions, exposed for unit tests (tests/c/test_rng.c) ---- */

/* SeedSequence (A.2, A.3): mixes n_entropy 32-bit words (least significant first; n_entropy may
 * be 0, which behaves like [0]) into the pool and writes generate_state(4, uint64) as 8 u32
 * words to out32[0..7]. */
void seed_sequence(const uint32_t *entropy, size_t n_entropy, uint32_t out32[8]);

/* PCG64 seeding from the 8 SeedSequence words (A.4), and its raw outputs. */
void pcg64_seed(pcg64_state *p, const uint32_t words[8]);
uint64_t pcg64_next64(pcg64_state *p);
uint32_t pcg64_next32(pcg64_state *p);
double pcg64_next_double(pcg64_state *p);

/* MT19937 (B.1, B.2): classic init_genrand seeding (also clears the Gaussian cache) and the
 * tempered 32-bit output. */
void mt19937_seed(mt19937_state *m, uint32_t seed);
uint32_t mt19937_next32(mt19937_state *m);
double mt19937_next_double(mt19937_state *m);

#endif /* MHA_RNG_H */
