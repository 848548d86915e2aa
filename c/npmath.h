/*
 * npmath.h - deterministic log, exp and log1p for the NumPy-identical random streams (internal).
 *
 * NumPy's normal streams call the platform's libm at run time, so their last bits depend on it.
 * These three functions reproduce glibc >= 2.29 on x86-64 CPUs with FMA/AVX2 (the "glibc-FMA"
 * flavour: what NumPy on a current x86-64 Linux machine returns) bit for bit, on every platform,
 * natively and in WebAssembly. They are used only by rng.c.
 *
 * log1p follows glibc's FMA build of it (glibc >= 2.39, or Debian 12 >= 2.36-9+deb12u10); build
 * npmath.c with -DNPMATH_LOG1P_PLAIN for the separately rounded log1p of glibc 2.29-2.38.
 * npmath.c must be compiled with -ffp-contract=off and without -ffast-math.
 * Tested by tests/c/test_npmath.c against the system glibc.
 */
#ifndef MHA_NPMATH_H
#define MHA_NPMATH_H

double np_log(double x);
double np_exp(double x);
double np_log1p(double x);

#endif
