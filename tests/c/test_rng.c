/*
 * test_rng.c - unit test of c/rng.c against NumPy (numpy-rng.md Part D and reference streams).
 *
 * Build and run (from the repository root):
 *   gcc -std=c11 -Wall -Wextra -Werror -ffp-contract=off -O2 -Ic \
 *       c/rng.c c/npmath.c tests/c/test_rng.c -lm -o /tmp/test_rng
 *   /usr/bin/python3 tests/reference/rng_streams.py /tmp/rngdata     (optional)
 *   /tmp/test_rng /tmp/rngdata
 *
 * Without an argument (or if the directory does not exist) only the built-in checks run. With a
 * directory holding rng-manifest.json and the .f64 stream files, every listed stream is also
 * regenerated and compared bit for bit. The exit status is nonzero on any failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mha.h"
#include "rng.h"
#include "ziggurat_tables.h"

static int n_checks, n_failed;

static void check(int ok, const char *what)
{
    n_checks++;
    if (!ok) n_failed++;
    printf("%s  %s\n", ok ? "ok  " : "FAIL", what);
}

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* Compares n doubles with expected 64-bit patterns; prints the first difference. */
static int same_bits(const double *got, const uint64_t *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (bits(got[i]) != want[i]) {
            printf("      [%zu] got 0x%016llx want 0x%016llx\n", i,
                   (unsigned long long)bits(got[i]), (unsigned long long)want[i]);
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------------- */
/* Part D: seed 42, five values of each of the six streams */

static void test_seed42(void)
{
    static const uint64_t d_random[5] = {0x3fe8c43f79a2db24ULL, 0x3fdc16959869e47eULL,
                                         0x3feb79a2584ddb42ULL, 0x3fe650d6c1c2c011ULL,
                                         0x3fb81c01b5339380ULL};
    static const uint64_t d_normal01[5] = {0x3fd3807c1104fc6bULL, 0xbff0a3c65fca9a7eULL,
                                           0x3fe803b239e77350ULL, 0x3fee191b2d157f36ULL,
                                           0xbfff3770ac89d08fULL};
    static const uint64_t d_normal12[5] = {0x3ff9c03e08827e36ULL, 0xbff1478cbf9534fcULL,
                                           0x400401d91cf3b9a8ULL, 0x40070c8d968abf9bULL,
                                           0xc0073770ac89d08fULL};
    static const uint64_t l_rand[5] = {0x3fd7f8771e5f51ecULL, 0x3fee6c4068bbd654ULL,
                                       0x3fe76c7e8f1e6751ULL, 0x3fe32835d6632cb0ULL,
                                       0x3fc3f86b37222184ULL};
    static const uint64_t l_randn[5] = {0x3fdfca2a28a9307cULL, 0xbfc1b2a505de052aULL,
                                        0x3fe4b9dd50245e68ULL, 0x3ff85e548e01aa2bULL,
                                        0xbfcdf8bcdf57a640ULL};
    static const uint64_t l_normal12[5] = {0x3fffe5151454983eULL, 0x3fe726ad7d10fd6bULL,
                                           0x40025ceea8122f34ULL, 0x40102f2a4700d516ULL,
                                           0x3fe103a190542ce0ULL};
    double v[5];
    mha_rng *r;

    mha_rng_create(MHA_RNG_DEFAULT, 42, 0, &r);
    check(mha_rng_random(r, v, 5) == MHA_OK && same_bits(v, d_random, 5),
          "D: default_rng(42).random(5)");
    mha_rng_free(r);
    mha_rng_create(MHA_RNG_DEFAULT, 42, 0, &r);
    check(mha_rng_standard_normal(r, v, 5) == MHA_OK && same_bits(v, d_normal01, 5),
          "D: default_rng(42).standard_normal(5)");
    mha_rng_free(r);
    mha_rng_create(MHA_RNG_DEFAULT, 42, 0, &r);
    check(mha_rng_normal(r, 1.0, 2.0, v, 5) == MHA_OK && same_bits(v, d_normal12, 5),
          "D: default_rng(42).normal(1.0, 2.0, 5)");
    mha_rng_free(r);
    mha_rng_create(MHA_RNG_LEGACY, 42, 0, &r);
    check(mha_rng_random(r, v, 5) == MHA_OK && same_bits(v, l_rand, 5), "D: seed(42); rand(5)");
    mha_rng_free(r);
    mha_rng_create(MHA_RNG_LEGACY, 42, 0, &r);
    check(mha_rng_standard_normal(r, v, 5) == MHA_OK && same_bits(v, l_randn, 5),
          "D: seed(42); randn(5)");
    mha_rng_free(r);
    mha_rng_create(MHA_RNG_LEGACY, 42, 0, &r);
    check(mha_rng_normal(r, 1.0, 2.0, v, 5) == MHA_OK && same_bits(v, l_normal12, 5),
          "D: seed(42); normal(1.0, 2.0, 5)");
    mha_rng_free(r);
}

/* Part D: first value of random / standard_normal / rand / randn for other seeds. */
static void test_other_seeds(void)
{
    static const struct {
        uint32_t seed;
        uint64_t want[4];
    } t[] = {
        {0u,
         {0x3fe461fd79fb3850ULL, 0x3fc017ed89db8441ULL, 0x3fe18fe1565f12a8ULL,
          0x3ffc398ef3e5cfa5ULL}},
        {1u,
         {0x3fe060d7be6f245cULL, 0x3fd61e0d28bbb3a1ULL, 0x3fdab07d0ffa3c06ULL,
          0x3ff9fd5190657c50ULL}},
        {12345u,
         {0x3fcd1958c6d97fe0ULL, 0xbff6c7fcc2ecc744ULL, 0x3fedbf6a3f8f84b7ULL,
          0xbfca33dc4f5d203dULL}},
        {4294967295u,
         {0x3fd01fd7ea4c363eULL, 0xbf9bed210a08635eULL, 0x3fb8fe69a3924820ULL,
          0x3fe4bfc38c486d8aULL}},
    };
    size_t i;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        struct mha_rng g;
        double v[4];
        char name[96];
        rng_init(&g, MHA_RNG_DEFAULT, t[i].seed, 0);
        v[0] = rng_next_double(&g);
        rng_init(&g, MHA_RNG_DEFAULT, t[i].seed, 0);
        v[1] = rng_next_standard_normal(&g);
        rng_init(&g, MHA_RNG_LEGACY, t[i].seed, 0);
        v[2] = rng_next_double(&g);
        rng_init(&g, MHA_RNG_LEGACY, t[i].seed, 0);
        v[3] = rng_next_standard_normal(&g);
        snprintf(name, sizeof name, "D: seed %lu first random/standard_normal/rand/randn",
                 (unsigned long)t[i].seed);
        check(same_bits(v, t[i].want, 4), name);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Stage-level intermediates */

static int same_words(const uint32_t *got, const uint32_t *want, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (got[i] != want[i]) {
            printf("      [%zu] got 0x%08lx want 0x%08lx\n", i, (unsigned long)got[i],
                   (unsigned long)want[i]);
            return 0;
        }
    }
    return 1;
}

static void test_intermediates(void)
{
    /* SeedSequence(s).generate_state(8) from NumPy 1.24.2. */
    static const uint32_t ss42[8] = {0xcd540ab7u, 0x9f1e2e6du, 0x79fb94b6u, 0xd57873dcu,
                                     0x64d420b7u, 0x7d282a1bu, 0x4692d5ffu, 0x33657971u};
    static const uint32_t ss0[8] = {0xb0f478beu, 0xdb2cd7e7u, 0x2c71ba49u, 0xabf4641au,
                                    0x9d7b8d41u, 0x20c6ed6du, 0x223c39d4u, 0x2c4099deu};
    static const uint32_t ss_2p40p7[8] = {0x0e3d1a15u, 0x0d8672e1u, 0x4ecfa161u, 0x9aef4adau,
                                          0x83dba903u, 0x999c1c3bu, 0x0dc8a316u, 0x408927dcu};
    static const uint32_t ss_2p64m1[8] = {0x928cad0du, 0xaebca151u, 0x8638dc7au, 0x119c3044u,
                                          0x59e642a7u, 0x1bbb1556u, 0xe8c4a8f6u, 0xa76b11e3u};
    /* 3**100 has 5 words, which exercises the extra-entropy phase. */
    static const uint32_t e_3p100[5] = {0xcf3813d1u, 0xd6947d55u, 0x5b41f775u, 0x67376856u,
                                        0x5a4653cau};
    static const uint32_t ss_3p100[8] = {0xa4f2e54eu, 0x7fe4656du, 0xd4ec6c7cu, 0x0c3d6824u,
                                         0xcc787134u, 0x376fe186u, 0xec6137a1u, 0x13dd6e04u};
    static const uint64_t raw42[5] = {0xc621fbcd16d92688ULL, 0x705a5661a791ffc1ULL,
                                      0xdbcd12c26eda1624ULL, 0xb286b60e1600888dULL,
                                      0x181c01b5339381ebULL};
    static const uint64_t raw_2p40p7[3] = {0xd46e9e2034de21aaULL, 0x415badc99c087675ULL,
                                           0x275ed40f045acb84ULL};
    static const uint64_t first_2p40p7[4] = {0x3fea8dd3c4069bc4ULL, 0x3fd056eb7267021cULL,
                                             0xbff2c754dbb34494ULL, 0x3fafc0e36b2c05eaULL};
    static const uint32_t mtkey42[4] = {0x0000002au, 0xb93c8a93u, 0x71014437u, 0xe87acf51u};
    static const uint32_t mtout42[5] = {0x5fe1dc66u, 0xcbea3db3u, 0xf362035cu, 0x2ef5950eu,
                                        0xbb63f46au};
    static const int ints42[10] = {0, 7, 6, 4, 4, 8, 0, 6, 2, 0};
    uint32_t w[8], e[2];
    struct mha_rng g;
    double v[4];
    uint32_t o[5];
    int i, ok;

    e[0] = 42;
    seed_sequence(e, 1, w);
    check(same_words(w, ss42, 8), "SeedSequence(42).generate_state(8)");
    e[0] = 0;
    seed_sequence(e, 1, w);
    check(same_words(w, ss0, 8), "SeedSequence(0).generate_state(8)");
    seed_sequence(e, 0, w);
    check(same_words(w, ss0, 8), "SeedSequence([]) equals SeedSequence(0) (zero padding)");
    e[0] = 7;
    e[1] = 0x100;
    seed_sequence(e, 2, w);
    check(same_words(w, ss_2p40p7, 8), "SeedSequence(2**40+7).generate_state(8)");
    e[0] = 0xffffffffu;
    e[1] = 0xffffffffu;
    seed_sequence(e, 2, w);
    check(same_words(w, ss_2p64m1, 8), "SeedSequence(2**64-1).generate_state(8)");
    seed_sequence(e_3p100, 5, w);
    check(same_words(w, ss_3p100, 8), "SeedSequence(3**100) (5 entropy words)");

    rng_init(&g, MHA_RNG_DEFAULT, 42, 0);
    check(g.pcg.state.hi == 0xcea44f6798798f2aULL && g.pcg.state.lo == 0xacbc7c9d68860ac8ULL &&
              g.pcg.inc.hi == 0xfa505436c9a8416eULL && g.pcg.inc.lo == 0x66caf2e28d25abffULL,
          "PCG64(42) state and inc after seeding");
    rng_init(&g, MHA_RNG_DEFAULT, 7, 0x100);
    check(g.pcg.state.hi == 0xfa7e3f18087c4292ULL && g.pcg.state.lo == 0x231dc5e99d5a2373ULL &&
              g.pcg.inc.hi == 0x3338387707b75206ULL && g.pcg.inc.lo == 0x81124fb81b91462dULL,
          "PCG64(2**40+7) state and inc after seeding");

    rng_init(&g, MHA_RNG_DEFAULT, 42, 0);
    ok = 1;
    for (i = 0; i < 5; i++) ok &= pcg64_next64(&g.pcg) == raw42[i];
    check(ok, "PCG64(42) random_raw(5)");
    rng_init(&g, MHA_RNG_DEFAULT, 7, 0x100);
    ok = 1;
    for (i = 0; i < 3; i++) ok &= pcg64_next64(&g.pcg) == raw_2p40p7[i];
    check(ok, "PCG64(2**40+7) random_raw(3)");

    rng_init(&g, MHA_RNG_DEFAULT, 7, 0x100);
    v[0] = rng_next_double(&g);
    v[1] = rng_next_double(&g);
    rng_init(&g, MHA_RNG_DEFAULT, 7, 0x100);
    v[2] = rng_next_standard_normal(&g);
    v[3] = rng_next_standard_normal(&g);
    check(same_bits(v, first_2p40p7, 4), "default_rng(2**40+7) random(2), standard_normal(2)");

    /* integers(0, 10, 10): 32-bit Lemire on next32 (low half first, high half buffered). */
    rng_init(&g, MHA_RNG_DEFAULT, 42, 0);
    ok = 1;
    for (i = 0; i < 10; i++) {
        const uint32_t range1 = 10; /* rng + 1 */
        uint64_t m = (uint64_t)pcg64_next32(&g.pcg) * range1;
        uint32_t left = (uint32_t)m;
        if (left < range1) {
            uint32_t t = (uint32_t)(0u - range1) % range1;
            while (left < t) {
                m = (uint64_t)pcg64_next32(&g.pcg) * range1;
                left = (uint32_t)m;
            }
        }
        ok &= (int)(m >> 32) == ints42[i];
    }
    check(ok, "default_rng(42).integers(0, 10, 10) via next32 buffer");

    rng_init(&g, MHA_RNG_LEGACY, 42, 0);
    check(same_words(g.mt.key, mtkey42, 4) && g.mt.pos == MT19937_N && !g.mt.has_gauss,
          "RandomState(42) key[:4], pos == 624, no cached gauss");
    for (i = 0; i < 5; i++) o[i] = mt19937_next32(&g.mt);
    check(same_words(o, mtout42, 5), "RandomState(42) random_raw(5)");
}

/* ---------------------------------------------------------------------------------------------- */
/* Ziggurat tables */

static void test_tables(void)
{
    /* FNV-1a 64 over the little-endian bytes of KI[0..255], then the bit patterns of WI and FI,
     * computed independently from shared/data/numpy-ziggurat-double.tsv. */
    const uint64_t want = 0x2aaf6f8cd4345568ULL;
    uint64_t h = 0xcbf29ce484222325ULL;
    int i, k, t;
    char name[96];
    for (t = 0; t < 3; t++) {
        for (i = 0; i < 256; i++) {
            uint64_t v = t == 0 ? ZIG_KI[i] : t == 1 ? bits(ZIG_WI[i]) : bits(ZIG_FI[i]);
            for (k = 0; k < 8; k++) {
                h ^= (v >> (8 * k)) & 0xffu;
                h *= 0x100000001b3ULL;
            }
        }
    }
    snprintf(name, sizeof name, "tables: FNV-1a digest 0x%016llx", (unsigned long long)h);
    check(h == want, name);
    check(ZIG_KI[1] == 0, "tables: KI[1] == 0");
    check(ZIG_WI[255] * 4503599627370496.0 == 3.6541528853610087963519472518,
          "tables: WI[255] * 2^52 == R");
    check(ZIG_FI[0] == 1.0, "tables: FI[0] == 1");
    check(bits(ZIG_FI[38]) == 0x3fe5ad29acc85c89ULL, "tables: FI[38] is NumPy's hard case");
}

/* ---------------------------------------------------------------------------------------------- */
/* Stream continuation and the legacy Gaussian cache */

static void test_cache(void)
{
    /* NumPy 1.24.2: rs = RandomState(42); rs.randn(3); rs.randn(4); rs.rand(2); rs.randn(1). */
    static const uint64_t seq[10] = {0x3fdfca2a28a9307cULL, 0xbfc1b2a505de052aULL,
                                     0x3fe4b9dd50245e68ULL, /* randn(3) */
                                     0x3ff85e548e01aa2bULL, 0xbfcdf8bcdf57a640ULL,
                                     0xbfcdf8332670db3bULL, 0x3ff94474a8407408ULL, /* randn(4) */
                                     0x3f95141a07387e80ULL, 0x3fef098062e353a5ULL, /* rand(2) */
                                     0x3fe88ed346f0d7f3ULL};                       /* randn(1) */
    /* randn(1) then normal(1.0, 2.0, 2): the normal call starts with the cached value. */
    static const uint64_t after1[2] = {0x3fe726ad7d10fd6bULL, 0x40025ceea8122f34ULL};
    double a[10], b[10], c[10];
    mha_rng *r, *q;
    int i, ok;

    mha_rng_create(MHA_RNG_LEGACY, 42, 0, &r);
    mha_rng_standard_normal(r, a, 3);
    mha_rng_standard_normal(r, a + 3, 4);
    mha_rng_random(r, a + 7, 2);
    mha_rng_standard_normal(r, a + 9, 1);
    check(same_bits(a, seq, 10), "legacy: randn(3), randn(4), rand(2), randn(1) == NumPy");

    /* The exact structural statement: the three randn calls together are randn(8) (the odd
     * lengths leave a cached value that the next call returns first, and rand() does not touch
     * it), and rand(2) equals rand(2) drawn right after randn(8) (the MT words consumed by the
     * four polar pairs precede it either way). */
    mha_rng_create(MHA_RNG_LEGACY, 42, 0, &q);
    mha_rng_standard_normal(q, b, 8);
    mha_rng_random(q, b + 8, 2);
    ok = 1;
    for (i = 0; i < 7; i++) ok &= bits(a[i]) == bits(b[i]);
    ok &= bits(a[9]) == bits(b[7]);
    ok &= bits(a[7]) == bits(b[8]) && bits(a[8]) == bits(b[9]);
    check(ok, "legacy: randn(3)+randn(4)+randn(1) == randn(8); rand(2) == rand(2) after randn(8)");
    mha_rng_free(q);

    /* Reseeding clears the cache: rng_init on a used struct equals a fresh one. */
    rng_init(r, MHA_RNG_LEGACY, 42, 0);
    mha_rng_standard_normal(r, c, 1);
    mha_rng_normal(r, 1.0, 2.0, c + 1, 2);
    check(bits(c[0]) == seq[0] && same_bits(c + 1, after1, 2),
          "legacy: reseed clears cache; normal() continues from the cached value");
    mha_rng_free(r);

    /* Default generator: consecutive calls continue one stream. */
    mha_rng_create(MHA_RNG_DEFAULT, 12345, 0, &r);
    mha_rng_standard_normal(r, a, 3);
    mha_rng_standard_normal(r, a + 3, 5);
    mha_rng_random(r, a + 8, 2);
    mha_rng_create(MHA_RNG_DEFAULT, 12345, 0, &q);
    mha_rng_standard_normal(q, b, 8);
    mha_rng_random(q, b + 8, 2);
    ok = 1;
    for (i = 0; i < 10; i++) ok &= bits(a[i]) == bits(b[i]);
    check(ok, "default: standard_normal(3)+(5) == standard_normal(8), then random continues");
    mha_rng_free(r);
    mha_rng_free(q);

    /* normal is loc + scale*z with separate roundings. */
    mha_rng_create(MHA_RNG_DEFAULT, 1, 0, &r);
    mha_rng_create(MHA_RNG_DEFAULT, 1, 0, &q);
    mha_rng_normal(r, 0.5, 0.01, a, 10);
    mha_rng_standard_normal(q, b, 10);
    ok = 1;
    for (i = 0; i < 10; i++) {
        volatile double t = 0.01 * b[i];
        volatile double s = 0.5 + t;
        ok &= bits(a[i]) == bits(s);
    }
    check(ok, "default: normal(0.5, 0.01) == 0.5 + (0.01*z), rounded twice");
    mha_rng_free(r);
    mha_rng_free(q);
}

/* ---------------------------------------------------------------------------------------------- */
/* Error codes */

static void test_errors(void)
{
    mha_rng *r = (mha_rng *)&r; /* a non-NULL marker that must be overwritten with NULL */
    struct mha_rng g, before;
    double v[2];

    check(mha_rng_create(MHA_RNG_DEFAULT, 1, 0, NULL) == MHA_ENULL, "error: create(out=NULL)");
    check(mha_rng_create(2, 1, 0, &r) == MHA_ERNG && r == NULL, "error: create(kind=2) -> ERNG");
    r = (mha_rng *)&r;
    check(mha_rng_create(-1, 1, 0, &r) == MHA_ERNG && r == NULL, "error: create(kind=-1) -> ERNG");
    r = (mha_rng *)&r;
    check(mha_rng_create(MHA_RNG_LEGACY, 0, 1, &r) == MHA_ESEED && r == NULL,
          "error: legacy seed 2^32 -> ESEED");
    check(mha_rng_create(MHA_RNG_LEGACY, 0xffffffffu, 0xffffffffu, &r) == MHA_ESEED,
          "error: legacy seed 2^64-1 -> ESEED");
    check(mha_rng_create(MHA_RNG_LEGACY, 0xffffffffu, 0, &r) == MHA_OK && r != NULL,
          "legacy seed 2^32-1 accepted");
    mha_rng_free(r);
    check(mha_rng_create(MHA_RNG_DEFAULT, 0xffffffffu, 0xffffffffu, &r) == MHA_OK && r != NULL,
          "default seed 2^64-1 accepted");

    check(mha_rng_standard_normal(NULL, v, 1) == MHA_ENULL, "error: standard_normal(rng=NULL)");
    check(mha_rng_random(NULL, v, 1) == MHA_ENULL, "error: random(rng=NULL)");
    check(mha_rng_normal(NULL, 0.0, 1.0, v, 1) == MHA_ENULL, "error: normal(rng=NULL)");
    check(mha_rng_standard_normal(r, NULL, 1) == MHA_ENULL, "error: standard_normal(out=NULL)");
    check(mha_rng_random(r, NULL, 1) == MHA_ENULL, "error: random(out=NULL)");
    check(mha_rng_normal(r, 0.0, 1.0, NULL, 1) == MHA_ENULL, "error: normal(out=NULL)");
    check(mha_rng_standard_normal(r, NULL, 0) == MHA_OK && mha_rng_random(r, NULL, 0) == MHA_OK &&
              mha_rng_normal(r, 0.0, 1.0, NULL, 0) == MHA_OK,
          "n == 0 with out == NULL is OK");
    check(mha_rng_normal(r, NAN, 1.0, v, 1) == MHA_EVALUE &&
              mha_rng_normal(r, 0.0, INFINITY, v, 1) == MHA_EVALUE &&
              mha_rng_normal(r, -INFINITY, 1.0, v, 1) == MHA_EVALUE &&
              mha_rng_normal(r, 0.0, NAN, v, 1) == MHA_EVALUE,
          "error: normal with non-finite loc/scale -> EVALUE");
    mha_rng_free(r);
    mha_rng_free(NULL);
    check(1, "mha_rng_free(NULL) is a no-op");

    check(rng_init(NULL, MHA_RNG_DEFAULT, 0, 0) == MHA_ENULL, "error: rng_init(NULL)");
    rng_init(&g, MHA_RNG_DEFAULT, 5, 0);
    rng_next_double(&g);
    before = g;
    check(rng_init(&g, 7, 5, 0) == MHA_ERNG && rng_init(&g, MHA_RNG_LEGACY, 5, 3) == MHA_ESEED &&
              memcmp(&g, &before, sizeof g) == 0,
          "error: rng_init bad kind / legacy seed leaves the struct unchanged");
}

/* ---------------------------------------------------------------------------------------------- */
/* Reference streams from tests/reference/rng_streams.py */

/* Finds "key": in line and returns a pointer just past the colon and spaces, or NULL. */
static const char *json_field(const char *line, const char *key)
{
    char pat[64];
    const char *p;
    snprintf(pat, sizeof pat, "\"%s\":", key);
    p = strstr(line, pat);
    if (p == NULL) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    return p;
}

/* Copies a JSON string value (no escapes expected) into buf. */
static int json_string(const char *line, const char *key, char *buf, size_t size)
{
    const char *p = json_field(line, key);
    size_t n = 0;
    if (p == NULL || *p != '"') return 0;
    p++;
    while (*p && *p != '"' && n + 1 < size) buf[n++] = *p++;
    buf[n] = '\0';
    return *p == '"';
}

static int json_number(const char *line, const char *key, double *out)
{
    const char *p = json_field(line, key);
    char *end;
    if (p == NULL) return 0;
    *out = strtod(p, &end);
    return end != p;
}

static int json_u64(const char *line, const char *key, unsigned long long *out)
{
    const char *p = json_field(line, key);
    char *end;
    if (p == NULL) return 0;
    *out = strtoull(p, &end, 10);
    return end != p;
}

/* Regenerates one stream and compares it with the file; returns the mismatch count, or -1 if
 * the entry could not be processed. */
static long compare_stream(const char *dir, const char *line, int exact, size_t *compared)
{
    char file[128], kind[32], fn[32], path[1024], name[300];
    unsigned long long seed, n;
    double loc = 0.0, scale = 1.0;
    double *want = NULL, *got = NULL;
    FILE *f;
    long size, mism = 0;
    size_t i, first = 0;
    mha_rng *r = NULL;
    int k, rc;

    *compared = 0;
    if (!json_string(line, "file", file, sizeof file) ||
        !json_string(line, "kind", kind, sizeof kind) || !json_string(line, "fn", fn, sizeof fn) ||
        !json_u64(line, "seed", &seed) || !json_u64(line, "n", &n)) {
        printf("FAIL  manifest line not understood: %s", line);
        return -1;
    }
    if (strcmp(fn, "normal") == 0 &&
        (!json_number(line, "loc", &loc) || !json_number(line, "scale", &scale))) {
        printf("FAIL  %s: normal without loc/scale\n", file);
        return -1;
    }
    k = strcmp(kind, "default") == 0  ? MHA_RNG_DEFAULT
        : strcmp(kind, "legacy") == 0 ? MHA_RNG_LEGACY
                                      : -1;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    f = fopen(path, "rb");
    if (f == NULL || k < 0 || n == 0 || n > 100000000ULL) {
        printf("FAIL  %s: cannot open or bad entry\n", file);
        if (f) fclose(f);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    want = (double *)malloc((size_t)n * sizeof *want);
    got = (double *)malloc((size_t)n * sizeof *got);
    if (want == NULL || got == NULL || size != (long)(n * 8) ||
        fread(want, sizeof *want, (size_t)n, f) != (size_t)n) {
        printf("FAIL  %s: size %ld, expected %llu doubles\n", file, size, n);
        fclose(f);
        free(want);
        free(got);
        return -1;
    }
    fclose(f);
    /* The files are little-endian float64; this test assumes a little-endian host. */

    rc = mha_rng_create(k, (uint32_t)(seed & 0xffffffffu), (uint32_t)(seed >> 32), &r);
    if (rc == MHA_OK) {
        if (strcmp(fn, "standard_normal") == 0)
            rc = mha_rng_standard_normal(r, got, (size_t)n);
        else if (strcmp(fn, "random") == 0)
            rc = mha_rng_random(r, got, (size_t)n);
        else if (strcmp(fn, "normal") == 0)
            rc = mha_rng_normal(r, loc, scale, got, (size_t)n);
        else
            rc = -100;
    }
    mha_rng_free(r);
    if (rc != MHA_OK) {
        printf("FAIL  %s: generator error %d\n", file, rc);
        free(want);
        free(got);
        return -1;
    }
    long far = 0; /* mismatches by more than two ulps */
    for (i = 0; i < (size_t)n; i++) {
        if (bits(got[i]) != bits(want[i])) {
            if (mism == 0) first = i;
            mism++;
            const uint64_t a = bits(got[i]), b = bits(want[i]);
            far += (a > b ? a - b : b - a) > 2;
        }
    }
    *compared = (size_t)n;
    snprintf(name, sizeof name, "stream %-7s %-15s seed %-13llu compared %7llu mismatched %ld",
             kind, fn, seed, n, mism);
    /* With NumPy on another libm (not glibc-FMA) a normal may differ in its last bits: about one
     * legacy normal in 20,000, by 1 or 2 ulps once the 1-ulp log difference has gone through
     * sqrt and the product (numpy-rng.md, section C). Then allow exactly that, and only that. */
    int ok = mism == 0;
    if (!exact && strcmp(fn, "random") != 0) {
        ok = far == 0 && mism * 1000 <= (long)n;
    }
    check(ok, name);
    if (mism > 0)
        printf("      first at [%zu]: got 0x%016llx want 0x%016llx\n", first,
               (unsigned long long)bits(got[first]), (unsigned long long)bits(want[first]));
    free(want);
    free(got);
    return mism;
}

static void test_streams(const char *dir)
{
    char path[1024], line[1024];
    FILE *f;
    size_t total = 0, files = 0, c;
    long mism_total = 0, m;

    snprintf(path, sizeof path, "%s/rng-manifest.json", dir);
    f = fopen(path, "r");
    if (f == NULL) {
        printf("note  %s not found: stream comparison skipped\n", path);
        return;
    }
    int exact = 1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strstr(line, "\"libm\":") != NULL && strstr(line, "\"glibc-fma\"") == NULL) {
            exact = 0;
            printf("note  NumPy here does not use the glibc-FMA libm: differences of at most "
                   "2 ulps allowed in the normal streams\n");
        }
        if (strstr(line, "\"file\":") == NULL) continue;
        m = compare_stream(dir, line, exact, &c);
        if (m < 0) {
            n_checks++;
            n_failed++;
            continue;
        }
        files++;
        total += c;
        mism_total += m;
    }
    fclose(f);
    printf("streams: %zu files, %zu values compared, %ld mismatched\n", files, total, mism_total);
    check(files > 0, "streams: at least one stream file compared");
}

int main(int argc, char **argv)
{
    test_seed42();
    test_other_seeds();
    test_intermediates();
    test_tables();
    test_cache();
    test_errors();
    if (argc > 1)
        test_streams(argv[1]);
    else
        printf("note  no stream directory given: stream comparison skipped\n");
    printf("%s: %d checks, %d failed\n", n_failed ? "FAILED" : "PASSED", n_checks, n_failed);
    return n_failed ? 1 : 0;
}
