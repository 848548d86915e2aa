#!/usr/bin/python3
"""Reference random streams from NumPy, for the bit-for-bit tests of c/rng.c.

Run with Debian's python3 (python3-numpy 1.24), not a pyenv/virtualenv python:

    /usr/bin/python3 tests/reference/rng_streams.py OUTDIR

Writes raw little-endian float64 files

    OUTDIR/rng-{default|legacy}-{standard_normal|random|normal}-{seed}.f64

each produced by one fresh generator:

    default: np.random.default_rng(seed).standard_normal(n) / .random(n) / .normal(LOC, SCALE, n)
    legacy:  np.random.RandomState(seed).randn(n) / .rand(n) / .normal(LOC, SCALE, n)
             (the same streams as np.random.seed(seed); np.random.randn(n) ...)

and OUTDIR/rng-manifest.json listing every file (one entry per line) with kind, fn, seed
(also split into seed_lo / seed_hi 32-bit words), n, loc and scale, plus the NumPy version.
"""
import ctypes
import ctypes.util
import json
import os
import sys

import numpy as np

SEEDS_COMMON = [0, 1, 42, 12345, 2**32 - 1]
SEEDS_DEFAULT = SEEDS_COMMON + [2**40 + 7]   # a two-word seed, default_rng only (legacy needs < 2^32)
COUNTS = {"standard_normal": 200000, "random": 20000, "normal": 20000}
LOC = 0.5
SCALE = 0.01


def draw(kind, fn, seed, n):
    if kind == "default":
        g = np.random.default_rng(seed)
        if fn == "standard_normal":
            return g.standard_normal(n)
        if fn == "random":
            return g.random(n)
        return g.normal(LOC, SCALE, n)
    rs = np.random.RandomState(seed)
    if fn == "standard_normal":
        return rs.randn(n)
    if fn == "random":
        return rs.rand(n)
    return rs.normal(LOC, SCALE, n)


def c_library_function(name):
    """The C library's double -> double function `name` (ctypes), or None if there is no libm.

    NumPy's random module calls log, exp and log1p from the C library (npy_log is libm's log),
    so that is what must be probed: np.log is NumPy's own ufunc, which may be a SIMD version with
    other last bits (on this AVX-512 machine it is)."""
    path = ctypes.util.find_library("m") or ctypes.util.find_library("c")
    if path is None:
        return None
    f = getattr(ctypes.CDLL(path), name, None)
    if f is not None:
        f.restype = ctypes.c_double
        f.argtypes = [ctypes.c_double]
    return f


# (function, input, result of the glibc FMA build) where the separately rounded build differs in
# the last bit. log: the exact log lies 0.497 ulp from -0x1.507886acd4268p-3 and only the FMA
# build rounds it to ...267. log1p: glibc's FMA build (glibc >= 2.39, Debian 12 >= 2.36-9+deb12u10)
# on two inputs from the ziggurat tail's range (the same probes as tests/c/test_npmath.c).
LIBM_PROBES = [
    ("log", "0x1.b26dcad1efc2cp-1", "-0x1.507886acd4267p-3"),
    ("log1p", "-0x1.ae27f43b3b2d0p-3", "-0x1.e2db0ac3867cdp-3"),
    ("log1p", "-0x1.6a3e784a5a4dcp-3", "-0x1.8ea4721edc241p-3"),
]


def libm_flavour():
    """Which libm NumPy's random streams use here: "glibc-fma" (what c/npmath.c reproduces, so
    the streams must match bit for bit) or "other (...)" saying which probe differed."""
    for name, x, fma_result in LIBM_PROBES:
        f = c_library_function(name)
        if f is None:
            return "other (no C library %s found)" % name
        got = float(f(float.fromhex(x))).hex()
        if got != fma_result:
            return "other (%s(%s) gives %s, the glibc FMA build %s)" % (name, x, got, fma_result)
    return "glibc-fma"


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: /usr/bin/python3 tests/reference/rng_streams.py OUTDIR\n")
        return 2
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    entries = []
    for kind, seeds in (("default", SEEDS_DEFAULT), ("legacy", SEEDS_COMMON)):
        for fn in ("standard_normal", "random", "normal"):
            for seed in seeds:
                n = COUNTS[fn]
                a = np.ascontiguousarray(draw(kind, fn, seed, n), dtype="<f8")
                assert a.shape == (n,)
                name = "rng-%s-%s-%d.f64" % (kind, fn, seed)
                with open(os.path.join(outdir, name), "wb") as f:
                    f.write(a.tobytes())
                entries.append({
                    "file": name, "kind": kind, "fn": fn, "seed": seed,
                    "seed_lo": seed & 0xFFFFFFFF, "seed_hi": seed >> 32, "n": n,
                    "loc": LOC if fn == "normal" else None,
                    "scale": SCALE if fn == "normal" else None,
                })
    # One file entry per line, so simple line-based readers (the C test) can parse it too.
    lines = ["{", '  "numpy_version": %s,' % json.dumps(np.__version__),
             '  "libm": %s,' % json.dumps(libm_flavour()),
             '  "loc": %s,' % json.dumps(LOC), '  "scale": %s,' % json.dumps(SCALE),
             '  "files": [']
    lines += ["    " + json.dumps(e) + ("," if i + 1 < len(entries) else "")
              for i, e in enumerate(entries)]
    lines += ["  ]", "}"]
    with open(os.path.join(outdir, "rng-manifest.json"), "w") as f:
        f.write("\n".join(lines) + "\n")
    json.loads("\n".join(lines))   # sanity: the manifest is valid JSON
    print("wrote %d stream files and rng-manifest.json to %s (numpy %s)"
          % (len(entries), outdir, np.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
