/*
 * rng.c - NumPy-identical random streams, bit for bit (see rng.h and numpy-rng.md).
 *
 * Build with -ffp-contract=off: several expressions below (loc + scale*z, x1*x1 + x2*x2, the
 * ziggurat wedge test) must be rounded after every operation, exactly as NumPy does.
 * log / exp / log1p come from npmath.h so that the last bits do not depend on the platform libm.
 */
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npmath.h"
#include "ziggurat_tables.h"

/* ============================================================================================ */
/* SeedSequence (A.2, A.3)                                                                       */
/* ============================================================================================ */

#define SS_INIT_A     0x43b0d7e5u
#define SS_MULT_A     0x931e8875u
#define SS_INIT_B     0x8b51f9ddu
#define SS_MULT_B     0x58f38dedu
#define SS_MIX_MULT_L 0xca01f9ddu
#define SS_MIX_MULT_R 0x4973f715u
#define SS_POOL       4

/* Hashes one word with the running multiplier *h, which advances on every call. */
static uint32_t ss_hash(uint32_t v, uint32_t *h)
{
    v ^= *h;
    *h *= SS_MULT_A;
    v *= *h;
    v ^= v >> 16;
    return v;
}

/* Combines two words into one (wrap-around u32 arithmetic). */
static uint32_t ss_mix(uint32_t x, uint32_t y)
{
    uint32_t r = SS_MIX_MULT_L * x - SS_MIX_MULT_R * y;
    r ^= r >> 16;
    return r;
}

void seed_sequence(const uint32_t *entropy, size_t n_entropy, uint32_t out32[8])
{
    uint32_t pool[SS_POOL];
    uint32_t h = SS_INIT_A; /* one multiplier shared by all three mixing phases */
    uint32_t g = SS_INIT_B; /* a fresh multiplier for the output stage */
    size_t i, s, d;
    int k;

    /* 1. Fill the pool with the hashed entropy, padding with hashed zeros. */
    for (i = 0; i < SS_POOL; i++) pool[i] = ss_hash(i < n_entropy ? entropy[i] : 0u, &h);

    /* 2. Let every pool word influence every other one; pool[s] is read after earlier
     *    rounds may already have changed it. */
    for (s = 0; s < SS_POOL; s++)
        for (d = 0; d < SS_POOL; d++)
            if (d != s) pool[d] = ss_mix(pool[d], ss_hash(pool[s], &h));

    /* 3. Entropy beyond the pool size is folded into every pool word (hashed anew each time). */
    for (s = SS_POOL; s < n_entropy; s++)
        for (d = 0; d < SS_POOL; d++) pool[d] = ss_mix(pool[d], ss_hash(entropy[s], &h));

    /* generate_state: 8 output words, cycling over the pool with the second multiplier. */
    for (k = 0; k < 8; k++) {
        uint32_t v = pool[k % SS_POOL];
        v ^= g;
        g *= SS_MULT_B;
        v *= g;
        v ^= v >> 16;
        out32[k] = v;
    }
}

/* ============================================================================================ */
/* PCG64 (A.4): 128-bit LCG with the XSL-RR output, using only 64-bit integers                  */
/* ============================================================================================ */

#define PCG_MULT_HI 0x2360ED051FC65DA4ULL
#define PCG_MULT_LO 0x4385DF649FCCF645ULL

/* Full 64x64 -> 128-bit product, built from four 32x32 -> 64-bit partial products. */
static rng_u128 mul_64x64(uint64_t a, uint64_t b)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    /* The middle column: at most 3 * (2^32 - 1) < 2^34, so it cannot overflow. */
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    rng_u128 r;
    r.lo = (mid << 32) | (p00 & 0xffffffffu);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return r;
}

/* a + b mod 2^128, carrying from the low half into the high half. */
static rng_u128 add_128(rng_u128 a, rng_u128 b)
{
    rng_u128 r;
    r.lo = a.lo + b.lo;
    r.hi = a.hi + b.hi + (r.lo < a.lo ? 1u : 0u);
    return r;
}

/* One LCG step: state = state * MULT + inc (mod 2^128). Only the low 128 bits of the product
 * are needed: lo*lo in full, plus the two cross terms added to its high half (the hi*hi term
 * lies entirely above bit 127). */
static void pcg64_step(pcg64_state *p)
{
    rng_u128 prod = mul_64x64(p->state.lo, PCG_MULT_LO);
    prod.hi += p->state.hi * PCG_MULT_LO + p->state.lo * PCG_MULT_HI;
    p->state = add_128(prod, p->inc);
}

void pcg64_seed(pcg64_state *p, const uint32_t words[8])
{
    uint64_t w64[4];
    rng_u128 initstate, initseq;
    int j;

    /* Pair the SeedSequence words little-endian into four u64 words. */
    for (j = 0; j < 4; j++) w64[j] = (uint64_t)words[2 * j] | ((uint64_t)words[2 * j + 1] << 32);

    /* The first word of each pair of u64 is the high half. */
    initstate.hi = w64[0];
    initstate.lo = w64[1];
    initseq.hi = w64[2];
    initseq.lo = w64[3];

    /* inc = (initseq << 1) | 1: always odd, which gives the LCG its full period. */
    p->inc.hi = (initseq.hi << 1) | (initseq.lo >> 63);
    p->inc.lo = (initseq.lo << 1) | 1u;

    /* state = 0; step; state += initstate; step. */
    p->state.hi = 0;
    p->state.lo = 0;
    pcg64_step(p);
    p->state = add_128(p->state, initstate);
    pcg64_step(p);

    p->buf32 = 0;
    p->has_buf32 = 0;
}

uint64_t pcg64_next64(pcg64_state *p)
{
    uint64_t x;
    unsigned rot;

    /* Advance first, then derive the output from the new state: fold the halves together
     * (XSL) and rotate right by the top 6 bits of the state (RR). */
    pcg64_step(p);
    x = p->state.hi ^ p->state.lo;
    rot = (unsigned)(p->state.hi >> 58);
    /* A rotation by 0 must not shift by 64 (undefined in C). */
    return rot == 0 ? x : (x >> rot) | (x << (64u - rot));
}

uint32_t pcg64_next32(pcg64_state *p)
{
    uint64_t x;

    /* Hand out the buffered high half if there is one; otherwise split a fresh 64-bit output,
     * returning the low half now and keeping the high half for the next call. */
    if (p->has_buf32) {
        p->has_buf32 = 0;
        return p->buf32;
    }
    x = pcg64_next64(p);
    p->buf32 = (uint32_t)(x >> 32);
    p->has_buf32 = 1;
    return (uint32_t)x;
}

double pcg64_next_double(pcg64_state *p)
{
    /* The top 53 bits, scaled by 2^-53: exact, uniform on [0, 1). */
    return (double)(pcg64_next64(p) >> 11) * (1.0 / 9007199254740992.0);
}

/* ============================================================================================ */
/* Ziggurat standard normal (A.5)                                                               */
/* ============================================================================================ */

#define ZIG_R     3.6541528853610087963519472518
#define ZIG_R_INV 0.27366123732975827203338247596

static double pcg64_standard_normal(pcg64_state *p)
{
    for (;;) {
        /* 1. One 64-bit word gives the layer (bits 0-7), the sign (bit 8) and a 52-bit
         *    magnitude (bits 9-60); the top 3 bits are unused. */
        uint64_t r = pcg64_next64(p);
        unsigned idx = (unsigned)(r & 0xffu);
        unsigned sign = (unsigned)((r >> 8) & 1u);
        uint64_t rabs = (r >> 9) & 0x000fffffffffffffULL;

        /* 2. Candidate abscissa inside the layer's rectangle (exact conversion: rabs < 2^52). */
        double x = (double)rabs * ZIG_WI[idx];
        if (sign) x = -x;

        /* 3. Most draws lie wholly under the curve: accept at once. */
        if (rabs < ZIG_KI[idx]) return x;

        if (idx == 0) {
            /* 4. Base layer beyond R: sample the tail with Marsaglia's exponential method.
             *    Only this pair is redrawn on rejection; the sign is bit 8 of rabs. */
            for (;;) {
                double xx = -ZIG_R_INV * np_log1p(-pcg64_next_double(p));
                double yy = -np_log1p(-pcg64_next_double(p));
                if (yy + yy > xx * xx) {
                    double t = ZIG_R + xx;
                    return ((rabs >> 8) & 1u) ? -t : t;
                }
            }
        } else {
            /* 5. Wedge between the rectangle and the curve: compare a uniform height in the
             *    layer's band with the density, each operation rounded separately. A
             *    rejection restarts from step 1 with a fresh word. */
            double u = pcg64_next_double(p);
            double lhs = ZIG_FI[idx - 1] - ZIG_FI[idx];
            double e = (-0.5 * x) * x;
            lhs = lhs * u;
            lhs = lhs + ZIG_FI[idx];
            if (lhs < np_exp(e)) return x;
        }
    }
}

/* ============================================================================================ */
/* MT19937 (B.1 - B.4)                                                                           */
/* ============================================================================================ */

#define MT_M        397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER    0x80000000u
#define MT_LOWER    0x7fffffffu

void mt19937_seed(mt19937_state *m, uint32_t seed)
{
    int i;

    /* init_genrand: each key word is a multiplicative hash of the previous one plus its index.
     * An integer seed never goes through init_by_array. */
    m->key[0] = seed;
    for (i = 1; i < MT19937_N; i++) {
        uint32_t prev = m->key[i - 1];
        m->key[i] = 1812433253u * (prev ^ (prev >> 30)) + (uint32_t)i;
    }
    m->pos = MT19937_N; /* the first draw regenerates the whole block */
    m->has_gauss = 0;   /* seeding clears the cached Gaussian */
    m->gauss = 0.0;
}

/* Regenerates all 624 words in place, in index order (later words see earlier new ones). */
static void mt19937_generate(mt19937_state *m)
{
    int i;
    for (i = 0; i < MT19937_N; i++) {
        uint32_t y = (m->key[i] & MT_UPPER) | (m->key[(i + 1) % MT19937_N] & MT_LOWER);
        m->key[i] = m->key[(i + MT_M) % MT19937_N] ^ (y >> 1) ^ ((y & 1u) ? MT_MATRIX_A : 0u);
    }
    m->pos = 0;
}

uint32_t mt19937_next32(mt19937_state *m)
{
    uint32_t y;

    if (m->pos >= MT19937_N) mt19937_generate(m);
    y = m->key[m->pos++];

    /* Tempering improves the equidistribution of the raw key word. */
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double mt19937_next_double(mt19937_state *m)
{
    /* 27 high bits from the first word, 26 from the second: (a * 2^26 + b) / 2^53, exact. */
    uint32_t a = mt19937_next32(m) >> 5;
    uint32_t b = mt19937_next32(m) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

/* Polar Box-Muller (B.4): one accepted point yields two normals; the x2 one is returned now,
 * the x1 one is cached for the next call (whatever API call that is). */
static double mt19937_gauss(mt19937_state *m)
{
    double x1, x2, r2, f;

    if (m->has_gauss) {
        m->has_gauss = 0;
        return m->gauss;
    }
    /* A uniform point in the square (-1,1)^2, kept only if strictly inside the unit circle
     * and not at the origin. r2 is two rounded products and one rounded sum (no FMA). */
    do {
        x1 = 2.0 * mt19937_next_double(m) - 1.0;
        x2 = 2.0 * mt19937_next_double(m) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);

    f = sqrt((-2.0 * np_log(r2)) / r2);
    m->gauss = f * x1;
    m->has_gauss = 1;
    return f * x2;
}

/* ============================================================================================ */
/* Internal interface (rng.h)                                                                   */
/* ============================================================================================ */

int rng_init(struct mha_rng *r, int kind, uint32_t seed_lo, uint32_t seed_hi)
{
    if (r == NULL) return MHA_ENULL;

    if (kind == MHA_RNG_DEFAULT) {
        /* The integer seed as entropy words, least significant first, without zero words at
         * the top: seed 0 is [0], a seed below 2^32 is [lo], otherwise [lo, hi]. */
        uint32_t entropy[2];
        uint32_t words[8];
        size_t n = 1;
        entropy[0] = seed_lo;
        entropy[1] = seed_hi;
        if (seed_hi != 0) n = 2;
        seed_sequence(entropy, n, words);
        memset(r, 0, sizeof *r);
        r->kind = MHA_RNG_DEFAULT;
        pcg64_seed(&r->pcg, words);
        return MHA_OK;
    }
    if (kind == MHA_RNG_LEGACY) {
        /* NumPy accepts legacy seeds 0 ... 2^32-1 only; nothing is reduced modulo 2^32. */
        if (seed_hi != 0) return MHA_ESEED;
        memset(r, 0, sizeof *r);
        r->kind = MHA_RNG_LEGACY;
        mt19937_seed(&r->mt, seed_lo);
        return MHA_OK;
    }
    return MHA_ERNG;
}

double rng_next_standard_normal(struct mha_rng *r)
{
    if (r->kind == MHA_RNG_LEGACY) return mt19937_gauss(&r->mt);
    return pcg64_standard_normal(&r->pcg);
}

double rng_next_double(struct mha_rng *r)
{
    if (r->kind == MHA_RNG_LEGACY) return mt19937_next_double(&r->mt);
    return pcg64_next_double(&r->pcg);
}

/* ============================================================================================ */
/* Public API (mha.h)                                                                           */
/* ============================================================================================ */

int mha_rng_create(int kind, uint32_t seed_lo, uint32_t seed_hi, mha_rng **out)
{
    struct mha_rng tmp;
    struct mha_rng *r;
    int rc;

    if (out == NULL) return MHA_ENULL;
    *out = NULL;
    /* Validate and seed on the stack first, so an error never allocates. */
    rc = rng_init(&tmp, kind, seed_lo, seed_hi);
    if (rc != MHA_OK) return rc;
    r = (struct mha_rng *)malloc(sizeof *r);
    if (r == NULL) return MHA_ENOMEM;
    *r = tmp;
    *out = r;
    return MHA_OK;
}

void mha_rng_free(mha_rng *rng)
{
    free(rng);
}

int mha_rng_standard_normal(mha_rng *rng, double *out, size_t n)
{
    size_t i;
    if (rng == NULL || (out == NULL && n > 0)) return MHA_ENULL;
    for (i = 0; i < n; i++) out[i] = rng_next_standard_normal(rng);
    return MHA_OK;
}

int mha_rng_random(mha_rng *rng, double *out, size_t n)
{
    size_t i;
    if (rng == NULL || (out == NULL && n > 0)) return MHA_ENULL;
    for (i = 0; i < n; i++) out[i] = rng_next_double(rng);
    return MHA_OK;
}

int mha_rng_normal(mha_rng *rng, double loc, double scale, double *out, size_t n)
{
    size_t i;
    if (rng == NULL || (out == NULL && n > 0)) return MHA_ENULL;
    if (!isfinite(loc) || !isfinite(scale)) return MHA_EVALUE;
    for (i = 0; i < n; i++) {
        /* One rounded multiply, then one rounded add (A.6, B.5). */
        double z = rng_next_standard_normal(rng);
        double t = scale * z;
        out[i] = loc + t;
    }
    return MHA_OK;
}
