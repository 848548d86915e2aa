/*
 * test_npmath.c - checks np_log / np_exp / np_log1p (c/npmath.c) bit for bit.
 *
 * Part 1 (always runs): special values whose results are the same in every glibc flavour
 *   (zeros, infinities, NaN, domain errors, overflow/underflow, tiny arguments).
 * Part 2: comparison with the system libm's log / exp / log1p over millions of inputs drawn like
 *   NumPy's use (log of r2 from the legacy polar method, exp(-x*x/2) from the ziggurat wedge,
 *   log1p(-U) from the ziggurat tail), plus random bit patterns and targeted ranges. The system
 *   libm only computes the "glibc-FMA" flavour that npmath reproduces when it is glibc >= 2.29 on
 *   an x86-64 CPU with FMA and AVX2 (and FMA not disabled by GLIBC_TUNABLES). Otherwise part 2 is
 *   skipped with a "SKIP: ..." line. log1p is compared only when the system log1p is the FMA
 *   build (glibc >= 2.39, or Debian 12's 2.36-9+deb12u10 and later); this is detected by probing.
 *
 * Exit status: 0 if nothing mismatched (or the comparison was skipped), 1 otherwise.
 *
 * Build (native):
 *   gcc -std=c11 -O2 -Wall -Wextra -Werror -ffp-contract=off -Ic c/npmath.c \
 *       tests/c/test_npmath.c -lm -o test_npmath
 */
#include "npmath.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

typedef double (*fn_t)(double);

/* The system functions, called through volatile pointers so that the compiler cannot evaluate
   them at compile time (GCC folds calls with constant arguments using MPFR). */
static fn_t volatile sys_log = log;
static fn_t volatile sys_exp = exp;
static fn_t volatile sys_log1p = log1p;

static uint64_t bits_of(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Same result: identical bits, or both NaN (NaN payloads and signs are not specified). */
static int same(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return bits_of(a) == bits_of(b);
}

/* splitmix64: a small deterministic generator for the test inputs. */
static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t next64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits, as NumPy's next_double. */
static double next_double(void)
{
    return (double)(next64() >> 11) * 0x1p-53;
}

/* A positive double with a uniformly chosen exponent field in [emin, emax] and random mantissa. */
static double log_uniform(int emin, int emax)
{
    uint64_t span = (uint64_t)(emax - emin + 1);
    uint64_t e = (uint64_t)emin + next64() % span;
    return double_of((e << 52) | (next64() & 0x000fffffffffffffULL));
}

/* ------------------------------------------------------------------------------------------ */
/* Part 1: flavour-independent special values                                                 */
/* ------------------------------------------------------------------------------------------ */

enum { EXPECT_NAN = 1 };

struct special {
    const char *name;
    fn_t f;
    double x;
    double want; /* ignored when flags == EXPECT_NAN */
    int flags;
};

static int check_specials(void)
{
    const double inf = INFINITY;
    const double nan = NAN;
    const struct special cases[] = {
        {"log", np_log, 1.0, 0.0, 0},
        {"log", np_log, 0.0, -inf, 0},
        {"log", np_log, -0.0, -inf, 0},
        {"log", np_log, inf, inf, 0},
        {"log", np_log, -inf, 0, EXPECT_NAN},
        {"log", np_log, -1.0, 0, EXPECT_NAN},
        {"log", np_log, -DBL_TRUE_MIN, 0, EXPECT_NAN},
        {"log", np_log, -DBL_MAX, 0, EXPECT_NAN},
        {"log", np_log, nan, 0, EXPECT_NAN},
        {"log", np_log, -nan, 0, EXPECT_NAN},
        {"log", np_log, 2.0, 0x1.62e42fefa39efp-1, 0},
        {"log", np_log, 0.5, -0x1.62e42fefa39efp-1, 0},
        {"log", np_log, DBL_MAX, 0x1.62e42fefa39efp+9, 0},
        {"log", np_log, DBL_MIN, -0x1.6232bdd7abcd2p+9, 0},
        {"log", np_log, DBL_TRUE_MIN, -0x1.74385446d71c3p+9, 0},
        {"exp", np_exp, 0.0, 1.0, 0},
        {"exp", np_exp, -0.0, 1.0, 0},
        {"exp", np_exp, DBL_TRUE_MIN, 1.0, 0},
        {"exp", np_exp, -DBL_TRUE_MIN, 1.0, 0},
        {"exp", np_exp, 0x1p-60, 1.0, 0},
        {"exp", np_exp, -0x1p-60, 1.0, 0},
        {"exp", np_exp, inf, inf, 0},
        {"exp", np_exp, -inf, 0.0, 0},
        {"exp", np_exp, nan, 0, EXPECT_NAN},
        {"exp", np_exp, -nan, 0, EXPECT_NAN},
        {"exp", np_exp, 710.0, inf, 0},
        {"exp", np_exp, 1000.0, inf, 0},
        {"exp", np_exp, DBL_MAX, inf, 0},
        {"exp", np_exp, -746.0, 0.0, 0},
        {"exp", np_exp, -1000.0, 0.0, 0},
        {"exp", np_exp, -DBL_MAX, 0.0, 0},
        {"exp", np_exp, 1.0, 0x1.5bf0a8b145769p+1, 0},
        {"exp", np_exp, 0x1.62e42fefa39efp+9, 0x1.fffffffffff2ap+1023, 0},
        {"exp", np_exp, -0x1.74385446d71c3p+9, 0x1p-1074, 0},
        {"log1p", np_log1p, 0.0, 0.0, 0},
        {"log1p", np_log1p, -0.0, -0.0, 0},
        {"log1p", np_log1p, DBL_TRUE_MIN, DBL_TRUE_MIN, 0},
        {"log1p", np_log1p, -DBL_TRUE_MIN, -DBL_TRUE_MIN, 0},
        {"log1p", np_log1p, 0x1p-60, 0x1p-60, 0},
        {"log1p", np_log1p, -0x1p-60, -0x1p-60, 0},
        {"log1p", np_log1p, -1.0, -inf, 0},
        {"log1p", np_log1p, -1.5, 0, EXPECT_NAN},
        {"log1p", np_log1p, -inf, 0, EXPECT_NAN},
        {"log1p", np_log1p, inf, inf, 0},
        {"log1p", np_log1p, nan, 0, EXPECT_NAN},
        {"log1p", np_log1p, -nan, 0, EXPECT_NAN},
        {"log1p", np_log1p, 1.0, 0x1.62e42fefa39efp-1, 0},
        {"log1p", np_log1p, DBL_MAX, 0x1.62e42fefa39efp+9, 0},
    };
    int bad = 0;
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        const struct special *c = &cases[i];
        double got = c->f(c->x);
        int ok = (c->flags == EXPECT_NAN) ? isnan(got) : bits_of(got) == bits_of(c->want);
        if (!ok) {
            bad++;
            printf("FAIL special: %s(%a) = %a (0x%016llx), want %s%a\n", c->name, c->x, got,
                   (unsigned long long)bits_of(got), c->flags == EXPECT_NAN ? "NaN, not " : "",
                   c->want);
        }
    }
    printf("special values: %zu checked, %d wrong\n", n, bad);
    return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* Part 2: comparison with the system libm                                                    */
/* ------------------------------------------------------------------------------------------ */

struct tally {
    const char *name;
    fn_t mine;
    fn_t volatile *sys;
    unsigned long long compared, mismatched;
};

static void compare_one(struct tally *t, double x)
{
    double a = t->mine(x);
    double b = (*t->sys)(x);
    t->compared++;
    if (!same(a, b)) {
        t->mismatched++;
        if (t->mismatched <= 8)
            printf("  MISMATCH %s(%a) [0x%016llx]: npmath %a [0x%016llx], libm %a [0x%016llx]\n",
                   t->name, x, (unsigned long long)bits_of(x), a, (unsigned long long)bits_of(a), b,
                   (unsigned long long)bits_of(b));
    }
}

/* Compares n inputs from gen() and reports the category. */
static void run_category(struct tally *t, const char *what, long n, double (*gen)(void))
{
    unsigned long long c0 = t->compared, m0 = t->mismatched;
    for (long i = 0; i < n; i++) compare_one(t, gen());
    printf("  %-6s %-44s %10llu compared, %llu mismatched\n", t->name, what, t->compared - c0,
           t->mismatched - m0);
}

/* --- input generators --- */

/* r2 = x1*x1 + x2*x2 with 0 < r2 < 1, as in NumPy's legacy polar Box-Muller. */
static double gen_polar_r2(void)
{
    for (;;) {
        double x1 = 2.0 * next_double() - 1.0;
        double x2 = 2.0 * next_double() - 1.0;
        double a = x1 * x1;
        double b = x2 * x2;
        double r2 = a + b;
        if (r2 < 1.0 && r2 != 0.0) return r2;
    }
}

static double gen_bits(void)
{
    return double_of(next64());
}

static double gen_log_near1(void)
{
    return 1.0 + (2.0 * next_double() - 1.0) * 0x1.2p-4; /* covers [1-2^-4, 1+0x1.09p-4] */
}

static double gen_subnormal(void)
{
    return double_of(next64() & 0x000fffffffffffffULL);
}

static double gen_pos_all_exponents(void)
{
    return log_uniform(1, 2046);
}

/* e = (-0.5*x)*x for x in [0, 3.66], as the ziggurat wedge test evaluates exp(e). */
static double gen_wedge(void)
{
    double x = next_double() * 3.66;
    double h = -0.5 * x;
    return h * x;
}

static double gen_exp_wide(void)
{
    return -750.0 + next_double() * 1470.0; /* [-750, 720] */
}

static double gen_exp_subnormal_results(void)
{
    return -745.2 + next_double() * (745.2 - 708.3);
}

static double gen_exp_near_overflow(void)
{
    return 700.0 + next_double() * 9.8;
}

static double gen_exp_small(void)
{
    double x = log_uniform(0x3ff - 60, 0x3ff + 3); /* 2^-60 .. 16 */
    return (next64() & 1) ? -x : x;
}

static double gen_log1p_tail(void)
{
    return -next_double(); /* -U, U in [0, 1) */
}

static double gen_log1p_pm1(void)
{
    return 2.0 * next_double() - 1.0;
}

static double gen_log1p_pos(void)
{
    return log_uniform(0x3ff - 60, 2046);
}

static double gen_log1p_neg_small(void)
{
    return -log_uniform(0x3ff - 60, 0x3fe); /* -(2^-60 .. 1) */
}

/* 1 + x within about 2^-20 (relative) of a power of two: the |f| < 2^-20 branch of log1p. */
static double gen_log1p_near_pow2(void)
{
    int j = (int)(next64() % 91) - 30; /* 2^-30 .. 2^60 */
    double m = (2.0 * next_double() - 1.0) * 0x1p-20;
    double u = ldexp(1.0 + m, j);
    return u - 1.0;
}

/* --- flavour detection --- */

struct probe {
    fn_t volatile *f;
    double x, fma_result, plain_result;
};

/* 1 if the system function gives the FMA-flavour results, 0 if it gives the plain ones, -1 if
   neither (then the comparison runs and will report the mismatches). */
static int probe_flavour(const struct probe *p, int n)
{
    int fma_hits = 0, plain_hits = 0;
    for (int i = 0; i < n; i++) {
        double y = (*p[i].f)(p[i].x);
        fma_hits += bits_of(y) == bits_of(p[i].fma_result);
        plain_hits += bits_of(y) == bits_of(p[i].plain_result);
    }
    if (fma_hits == n) return 1;
    if (plain_hits == n) return 0;
    return -1;
}

static const char *why_not_glibc_fma(void)
{
#if defined(__GLIBC__)
    int major = 0, minor = 0;
    if (sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2 || major * 1000 + minor < 2029)
        return "glibc older than 2.29";
#else
    return "the C library is not glibc";
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2"))
        return "CPU without FMA and AVX2";
#else
    return "not x86-64 (or the compiler cannot query CPU features)";
#endif
    static const struct probe log_exp[] = {
        {&sys_log, 0x1.b26dcad1efc2cp-1, -0x1.507886acd4267p-3, -0x1.507886acd4268p-3},
        {&sys_log, 0x1.55f6dfecdeb03p-1, -0x1.9d4e118eccfefp-2, -0x1.9d4e118eccff0p-2},
        {&sys_exp, -0x1.18d985dbd62a2p-2, 0x1.852f9cbe3cf5dp-1, 0x1.852f9cbe3cf5cp-1},
        {&sys_exp, -0x1.9710ade36d418p+2, 0x1.c52a3b69fd98bp-10, 0x1.c52a3b69fd98ap-10},
    };
    if (probe_flavour(log_exp, 4) == 0)
        return "glibc selected its non-FMA log/exp (FMA disabled, e.g. by GLIBC_TUNABLES)";
    return NULL;
}

int main(void)
{
    int failures = check_specials();

    const char *why = why_not_glibc_fma();
    if (why != NULL) {
        printf("SKIP: system libm is not the glibc-FMA flavour (%s); "
               "comparison with libm not run\n",
               why);
        return failures ? 1 : 0;
    }
#if defined(__GLIBC__)
    printf("system libm: glibc %s on a CPU with FMA+AVX2\n", gnu_get_libc_version());
#endif

    struct tally tl = {"log", np_log, &sys_log, 0, 0};
    struct tally te = {"exp", np_exp, &sys_exp, 0, 0};
    struct tally tp = {"log1p", np_log1p, &sys_log1p, 0, 0};

    run_category(&tl, "r2 of the legacy polar method", 8000000, gen_polar_r2);
    run_category(&tl, "random bit patterns", 4000000, gen_bits);
    run_category(&tl, "near 1 (1 +- 0x1.2p-4)", 2000000, gen_log_near1);
    run_category(&tl, "positive subnormals", 500000, gen_subnormal);
    run_category(&tl, "positive normals, all exponents", 2000000, gen_pos_all_exponents);

    run_category(&te, "(-0.5*x)*x, x in [0, 3.66] (wedge)", 8000000, gen_wedge);
    run_category(&te, "random bit patterns", 4000000, gen_bits);
    run_category(&te, "uniform in [-750, 720]", 4000000, gen_exp_wide);
    run_category(&te, "subnormal results [-745.2, -708.3]", 1000000, gen_exp_subnormal_results);
    run_category(&te, "near overflow [700, 709.8]", 500000, gen_exp_near_overflow);
    run_category(&te, "+-[2^-60, 16], all exponents", 2000000, gen_exp_small);

    static const struct probe log1p_probe[] = {
        {&sys_log1p, -0x1.ae27f43b3b2d0p-3, -0x1.e2db0ac3867cdp-3, -0x1.e2db0ac3867ccp-3},
        {&sys_log1p, -0x1.6a3e784a5a4dcp-3, -0x1.8ea4721edc241p-3, -0x1.8ea4721edc242p-3},
    };
    int log1p_flavour = probe_flavour(log1p_probe, 2);
    if (log1p_flavour == 0) {
        printf("SKIP (log1p): system log1p is the plain fdlibm build (glibc < 2.39 without "
               "Debian's FMA backport); npmath reproduces the FMA build\n");
    } else {
        run_category(&tp, "-U, U in [0, 1) (ziggurat tail)", 8000000, gen_log1p_tail);
        run_category(&tp, "random bit patterns", 4000000, gen_bits);
        run_category(&tp, "uniform in [-1, 1)", 2000000, gen_log1p_pm1);
        run_category(&tp, "positive [2^-60, 2^1024), all exponents", 2000000, gen_log1p_pos);
        run_category(&tp, "negative (-1, -2^-60], all exponents", 2000000, gen_log1p_neg_small);
        run_category(&tp, "1+x within 2^-20 of a power of two", 1000000, gen_log1p_near_pow2);
    }

    struct tally *all[3] = {&tl, &te, &tp};
    for (int i = 0; i < 3; i++) {
        printf("%-6s total: %llu compared, %llu mismatched\n", all[i]->name, all[i]->compared,
               all[i]->mismatched);
        if (all[i]->mismatched) failures++;
    }
    printf(failures ? "FAILED\n" : "OK\n");
    return failures ? 1 : 0;
}
