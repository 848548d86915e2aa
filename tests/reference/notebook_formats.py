#!/usr/bin/python3
"""NumPy-written files for the tests of the notebook check's readers (web/check/).

Run with Debian's python3 (python3-numpy 1.24), not a pyenv/virtualenv python:

    /usr/bin/python3 tests/reference/notebook_formats.py OUTDIR

Writes into OUTDIR (make reference uses build/reference/notebook-formats/):

  npy-<order>-<dtype>-<C|F>-v<major>-<ndim>d.npy   the .npy matrix: every dtype (f8 f4 f2 i1 i2 i4
      i8 u1 u2 u4 u8 b1) x byte order (le, be; 'na' for the one-byte dtypes, written '|') x C and
      Fortran order (Fortran for 2-d..4-d: NumPy writes 0-d and 1-d arrays as C order) x format
      version 1.0, 2.0, 3.0 x ndim 0..4, with np.lib.format.write_array; the values exercise the
      dtype (extremes, negatives, subnormals, -0., nan, inf, ints beyond 2^53)
  npy-crafted-*.npy   headers NumPy reads but np.save never writes ('=' and no byte order, '?',
      Python 2 'L' lengths, double quotes, other key order, 1-d Fortran order, trailing bytes)
  npy-all-float16-{le,be}.npy   all 65,536 float16 bit patterns
  npz-*.npz           np.savez, np.savez_compressed, a zip64 archive (every size and offset in
      zip64 extra fields, zip64 end records), a streamed one (data descriptors), names with markup
      and non-ASCII letters, a member that is not .npy, a zip comment
  npz-partial-*.npz   partly unreadable: X and the weights beside a saved cache dict (an object
      member), a list of arrays of different shapes (object), complex, str, bytes and structured
      members, a name used twice, a member whose CRC-32 fails; and one with no readable member
  manifest.json       {"numpy": version,
                       "npy": [{file, descr, fortran_order, version, shape, bits, sha256,
                                nan_canonical (only on the float16 files)}],
                       "npz": [{file, members: [{name, descr, shape, bits, sha256}]}],
                       "npz_partial": [{file, members: [...as in npz: what np.load reads],
                                        skipped: [{name, why}]}],
                       "text": [{label, kind: "print"|"repr"|"python"|"numpy1"|"numpy2", text,
                                 shape, dtype, values, original, error, printed_dtype}]}
      bits: the array as float64 in C order (astype(np.float64)), each entry's 64 bits as 16 hex
      digits (NaN included); null for arrays of more than 64 entries. sha256: of those float64
      little-endian bytes. For text, "values" holds the bits of float(token) for every number
      printed (an independent tokenizer), "original" the bits of the array printed, and "error"
      a word of the expected error message (summarised output) or null, "printed_dtype" what
      the text says the array was computed in (repr's dtype=float32, np.float32(...) entries).
      Lists (kind python, numpy1, numpy2): print(a.tolist()), print(list(a)) in this NumPy, and
      NumPy 2's print(list(a)) ([np.float64(0.6508), ...]) written by hand (see numpy2_repr).

The script checks each .npy and .npz it writes with np.load before recording it.
"""
import hashlib
import io
import json
import os
import re
import sys
import warnings
import zipfile

import numpy as np
from numpy.lib import format as npformat

DTYPES = ["f8", "f4", "f2", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "b1"]
SHAPES = {0: (), 1: (7,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 3, 2, 3)}
VERSIONS = [(1, 0), (2, 0), (3, 0)]
BITS_MAX = 64


def special_values(code):
    """Values that exercise dtype `code` (Python scalars, exact in that dtype)."""
    dt = np.dtype(code)
    if dt.kind == "f":
        fi = np.finfo(dt)
        tiny, sub = float(fi.tiny), float(fi.smallest_subnormal)
        return [0.0, -0.0, 1.0, -1.5, float("nan"), float("inf"), float("-inf"), float(fi.max),
                -float(fi.max), tiny, sub, -sub, tiny - sub, float(fi.eps), 1 / 3, -2.5e-3]
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        vals = [0, 1, int(ii.max), int(ii.min), int(ii.max) - 1, 100 % (int(ii.max) + 1)]
        if dt.kind == "i":
            vals += [-1, int(ii.min) + 1]
        if dt.itemsize == 8:  # beyond 2^53: float64 rounds them
            vals += [2**53 + 1, 2**60 + 3, int(ii.max) - 2**10]
            vals += [-(2**53) - 1, -(2**62) - 5] if dt.kind == "i" else [2**63 + 1]
        return vals
    return [False, True, True]


def random_values(code, n, seed):
    dt = np.dtype(code)
    rng = np.random.default_rng(seed)
    if dt.kind == "f":
        return list(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n))
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return [int(v) for v in rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)]
    return [bool(v) for v in rng.random(n) < 0.5]


def matrix_array(order, code, ndim, offset, seed):
    """An array of dtype order+code with shape SHAPES[ndim], C order."""
    shape = SHAPES[ndim]
    n = int(np.prod(shape))
    vals = special_values(code) + random_values(code, 64, seed)
    vals = vals[offset:] + vals[:offset]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array(vals[:n], dtype=np.dtype(order + code)).reshape(shape)


def float64_bytes(a):
    """The array as little-endian float64 bytes in C order."""
    return np.ascontiguousarray(a.astype("<f8")).tobytes(order="C")


def bits_of(a):
    b = np.ascontiguousarray(a.astype("<f8")).ravel().view("<u8")
    return None if b.size > BITS_MAX else ["%016x" % int(v) for v in b]


def describe(a):
    return {"shape": list(a.shape), "bits": bits_of(a),
            "sha256": hashlib.sha256(float64_bytes(a)).hexdigest()}


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and float64_bytes(a) == float64_bytes(b)


def write_npy_matrix(outdir):
    entries = []
    seed = 0
    for code in DTYPES:
        orders = ["|"] if np.dtype(code).itemsize == 1 else ["<", ">"]
        for order in orders:
            oname = {"<": "le", ">": "be", "|": "na"}[order]
            for fortran in (False, True):
                for version in VERSIONS:
                    for ndim in SHAPES:
                        if fortran and ndim < 2:
                            continue
                        seed += 1
                        a = matrix_array(order, code, ndim, seed % 7, seed)
                        if fortran:
                            a = np.asfortranarray(a)
                        name = "npy-%s-%s-%s-v%d-%dd.npy" % (
                            oname, code, "F" if fortran else "C", version[0], ndim)
                        with open(os.path.join(outdir, name), "wb") as f:
                            npformat.write_array(f, a, version=version)
                        entries.append(check_npy(outdir, name, a, version, fortran))
    return entries


def check_npy(outdir, name, a, version, fortran):
    path = os.path.join(outdir, name)
    with open(path, "rb") as f:
        got_version = npformat.read_magic(f)
        _, got_fortran, _ = npformat._read_array_header(f, got_version)
    back = np.load(path)
    assert got_version == version and got_fortran == fortran, name
    assert same(back, a), name
    return {"file": name, "descr": a.dtype.str, "fortran_order": fortran,
            "version": list(version), **describe(a)}


CRAFTED = [
    # (name, header dict text, dtype of the data, shape, Fortran order, bytes appended)
    ("native-order", "{'descr': '=f8', 'fortran_order': False, 'shape': (2, 3), }", "<f8",
     (2, 3), False, b""),
    ("no-byte-order", "{'descr': 'i4', 'fortran_order': False, 'shape': (5,), }", "<i4",
     (5,), False, b""),
    ("bool-question-mark", "{'descr': '?', 'fortran_order': False, 'shape': (4,), }", "|b1",
     (4,), False, b""),
    ("python2-long", "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", "<f4",
     (2, 3), False, b""),
    ("double-quotes", '{"descr": "<u2", "fortran_order": False, "shape": (3, 2)}', "<u2",
     (3, 2), False, b""),
    ("key-order", "{'shape': (2, 2, 2), 'fortran_order': True, 'descr': '>i2'}", ">i2",
     (2, 2, 2), True, b""),
    ("fortran-1d", "{'descr': '<f8', 'fortran_order': True, 'shape': (6,), }", "<f8",
     (6,), True, b""),
    ("fortran-0d", "{'descr': '<f8', 'fortran_order': True, 'shape': (), }", "<f8",
     (), True, b""),
    ("trailing-bytes", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", "<f8",
     (3,), False, b"\x93NUMPY and some more bytes after the data"),
]


def write_crafted(outdir):
    entries = []
    for k, (label, header, dtype, shape, fortran, extra) in enumerate(CRAFTED):
        a = random_values(dtype[1:], int(np.prod(shape)), 900 + k)
        a = np.array(a, dtype=dtype).reshape(shape)
        if fortran:
            a = np.asarray(a, order="F")  # (np.asfortranarray makes a 0-d array 1-d)
        text = header.encode("latin1")
        hlen = len(text) + 1
        pad = 64 - (10 + hlen) % 64
        body = a.tobytes(order="F" if fortran else "C")
        raw = b"\x93NUMPY\x01\x00" + (hlen + pad).to_bytes(2, "little") + text + b" " * pad + b"\n"
        name = "npy-crafted-%s.npy" % label
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(raw + body + extra)
        back = np.load(os.path.join(outdir, name))
        assert same(back, a), name
        descr = re.search(r"descr['\"]: ['\"]([^'\"]*)", header).group(1)
        entries.append({"file": name, "descr": descr, "fortran_order": fortran,
                        "version": [1, 0], **describe(a)})
    return entries + write_all_halves(outdir)


def write_all_halves(outdir):
    """Every one of the 65,536 float16 bit patterns, in both byte orders. NaN payloads are not
    kept by the readers, so sha256 is taken with every NaN as np.nan (nan_canonical)."""
    entries = []
    for order, oname in (("<", "le"), (">", "be")):
        a = np.arange(65536, dtype=np.uint16).view("<f2").astype(order + "f2")
        name = "npy-all-float16-%s.npy" % oname
        np.save(os.path.join(outdir, name), a)
        assert same(np.load(os.path.join(outdir, name)), a), name
        f = a.astype("<f8")
        f[np.isnan(f)] = np.nan
        entries.append({"file": name, "descr": a.dtype.str, "fortran_order": False,
                        "version": [1, 0], "shape": [65536], "bits": None, "nan_canonical": True,
                        "sha256": hashlib.sha256(f.tobytes()).hexdigest()})
    return entries


# ------------------------------------------------------------------------------------------------
# .npz

def npz_arrays():
    rng = np.random.default_rng(11)
    return {
        "X": rng.standard_normal((2, 6, 8)),
        "Wq": rng.standard_normal((8, 8)) / np.sqrt(8),
        "loss": np.array(0.123456789),
        "ints": np.array([[-3, 0, 7], [2**40, -(2**31), 5]], dtype=np.int64),
        "mask": np.tril(np.ones((4, 4), dtype=bool)),
        "half": np.array([6.0e-8, -6.1e-5, 65504.0, np.nan], dtype=np.float16),
        "big_endian_F": np.asfortranarray(rng.standard_normal((2, 3, 4)).astype(">f4")),
        "empty": np.zeros((0, 3)),
        "att": rng.random((1, 2, 3, 3)),
        "special": np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 1.7976931348623157e308]),
    }


class Unseekable(io.RawIOBase):
    """A write-only stream that cannot seek: zipfile then writes data descriptors."""

    def __init__(self, f):
        self.f = f

    def writable(self):
        return True

    def write(self, b):
        return self.f.write(b)


def write_zip64(path, arrays):
    """Every size and offset in zip64 extra fields, with zip64 end records (ZIP64_LIMIT -1), and
    the plain end record's fields all 0xFF (np.load then must use the zip64 end record)."""
    saved = zipfile.ZIP64_LIMIT
    zipfile.ZIP64_LIMIT = -1
    try:
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for name, a in arrays.items():
                with z.open(name + ".npy", "w", force_zip64=True) as f:
                    npformat.write_array(f, a)
    finally:
        zipfile.ZIP64_LIMIT = saved
    raw = bytearray(open(path, "rb").read())
    assert b"PK\x06\x06" in raw and b"PK\x06\x07" in raw, "no zip64 end records"
    # as in archives over 4 GiB: the plain end record's counts, size and offset say "see zip64"
    end = raw.rfind(b"PK\x05\x06")
    raw[end + 8:end + 20] = b"\xff" * 12
    open(path, "wb").write(raw)


def write_streamed(path, arrays):
    with open(path, "wb") as f, zipfile.ZipFile(Unseekable(f), "w", zipfile.ZIP_DEFLATED) as z:
        for name, a in arrays.items():
            with z.open(name + ".npy", "w", force_zip64=True) as g:
                npformat.write_array(g, a)


def write_named(path):
    """Names with markup and non-ASCII letters, a member that is not .npy."""
    arrays = {"<img src=x onerror=alert(1)>": np.arange(3.0), "Wq_ünïcödé": np.eye(2),
              "dir/X": np.array([[1.5]]), "__proto__": np.array(2.0)}
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("README.txt", "not an array")
        z.writestr("notes.npy.txt", "not an array either")


def write_npz_files(outdir):
    arrays = npz_arrays()
    rng = np.random.default_rng(5)
    big = {"zeros": np.zeros((512, 512)), "noise": rng.standard_normal((200, 300))}
    files = {
        "npz-savez.npz": lambda p: np.savez(p, **arrays),
        "npz-savez-positional.npz": lambda p: np.savez(p, arrays["X"], arrays["ints"]),
        "npz-savez_compressed.npz": lambda p: np.savez_compressed(p, **arrays),
        "npz-zip64.npz": lambda p: write_zip64(p, arrays),
        "npz-streamed.npz": lambda p: write_streamed(p, arrays),
        "npz-names.npz": write_named,
        "npz-large-compressed.npz": lambda p: np.savez_compressed(p, **big),
        "npz-large-stored.npz": lambda p: np.savez(p, **big),
        "npz-comment.npz": lambda p: write_with_comment(p, arrays),
    }
    entries = []
    for name, write in files.items():
        path = os.path.join(outdir, name)
        write(path)
        members = []
        with np.load(path) as z, zipfile.ZipFile(path) as zf:
            for member in zf.namelist():
                if member.endswith(".npy"):
                    a = z[member[:-4]]
                    members.append({"name": member[:-4], "descr": a.dtype.str, **describe(a)})
        entries.append({"file": name, "members": members})
    return entries


def write_with_comment(path, arrays):
    np.savez(path, **arrays)
    with zipfile.ZipFile(path, "a") as z:
        z.comment = b"a zip comment after the end record " * 20


# ------------------------------------------------------------------------------------------------
# .npz files that are partly unreadable: members the page skips beside members it reads

def course_inputs(rng):
    """X (2, 6, 8) and the four weights (8, 8), as a student's notebook has them."""
    inputs = {"X": rng.standard_normal((2, 6, 8))}
    for k in ("Wq", "Wk", "Wv", "Wo"):
        inputs[k] = rng.standard_normal((8, 8)) / np.sqrt(8)
    return inputs


def ragged_list(rng):
    """A list of arrays of different shapes saved as one member: an object array of shape (3,)
    (NumPy >= 1.24 wants dtype=object for it; older versions made one with a warning)."""
    grads = [rng.standard_normal((8, 8)), rng.standard_normal((2, 6, 8)), rng.standard_normal(8)]
    a = np.array(grads, dtype=object)
    assert a.shape == (3,) and a.dtype == object
    return a


def write_duplicate(path, rng):
    """Two members named X.npy (zipfile warns and writes both): np.load reads the last one."""
    first, second = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(path, "w") as z:
            for name, a in (("X", first), ("Wq", np.eye(3)), ("X", second)):
                with z.open(name + ".npy", "w", force_zip64=True) as f:
                    npformat.write_array(f, a)
    with np.load(path) as z:
        assert same(z["X"], second), "np.load reads the last X"


def write_damaged(path, arrays):
    """np.savez (stored), then one byte of Wk's data flipped: its CRC-32 fails, the others read."""
    np.savez(path, **arrays)
    raw = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("Wk.npy")
    start = info.header_offset + 30 + len(b"Wk.npy") + len(info.extra)
    raw[start + info.file_size - 1] ^= 0x40  # the last byte of Wk's data
    open(path, "wb").write(raw)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() == "Wk.npy", "only Wk is damaged"


PARTIAL = {
    # file: (how it is written, the skipped members and why)
    "npz-partial-cache.npz": ("cache", {"cache": "object"}),
    "npz-partial-cache-compressed.npz": ("cache-compressed", {"cache": "object"}),
    "npz-partial-mixed.npz": ("mixed", {"grads": "object", "z": "complex", "labels": "text",
                                        "names": "bytes", "rec": "structured"}),
    "npz-partial-duplicate.npz": ("duplicate", {"X": "duplicate"}),
    "npz-partial-damaged.npz": ("damaged", {"Wk": "damaged"}),
    "npz-partial-none.npz": ("none", {"cache": "object", "z": "complex", "labels": "text"}),
}


def partial_writer(how, rng):
    inputs = course_inputs(rng)
    cache = {"Q": rng.standard_normal((2, 6, 8)), "att": rng.random((2, 2, 6, 6))}
    rec = np.array([(1.5, 2), (3.0, 4)], dtype=[("a", "<f8"), ("b", "<i4")])
    z = np.array([1 + 2j, -0.5j])
    labels = np.array(["the", "cat"])
    return {
        "cache": lambda p: np.savez(p, **inputs, cache=cache),
        "cache-compressed": lambda p: np.savez_compressed(p, cache=cache, **inputs),
        "mixed": lambda p: np.savez(p, X=inputs["X"], grads=ragged_list(rng), z=z, labels=labels,
                                    Wq=inputs["Wq"], names=labels.astype("S"), rec=rec,
                                    mask=np.tril(np.ones((6, 6), dtype=bool))),
        "duplicate": lambda p: write_duplicate(p, rng),
        "damaged": lambda p: write_damaged(p, inputs),
        "none": lambda p: np.savez(p, cache=cache, z=z, labels=labels),
    }[how]


def skipped_kind(z, name):
    """Why NumPy itself cannot give this member as a plain numeric array (None: it can)."""
    try:
        a = z[name]
    except ValueError as e:  # allow_pickle=False: NumPy refuses to unpickle it too
        assert "allow_pickle" in str(e), e
        return "object"
    except zipfile.BadZipFile:
        return "damaged"
    if a.dtype.names:
        return "structured"
    return {"c": "complex", "U": "text", "S": "bytes"}.get(a.dtype.kind)


def write_partial_npz(outdir):
    """Each PARTIAL file with the members np.load (allow_pickle=False) reads as numbers, bit for
    bit, and the ones it cannot, with why (checked against PARTIAL)."""
    entries = []
    for k, (name, (how, skipped)) in enumerate(PARTIAL.items()):
        path = os.path.join(outdir, name)
        partial_writer(how, np.random.default_rng(70 + k))(path)
        arrays, why = [], {}
        with np.load(path, allow_pickle=False) as z, zipfile.ZipFile(path) as zf:
            names = [m[:-4] for m in zf.namelist() if m.endswith(".npy")]
            for i, member in enumerate(names):
                # an earlier member of a name used twice is the duplicate: np.load reads the last
                kind = "duplicate" if member in names[i + 1:] else skipped_kind(z, member)
                if kind:
                    why[member] = kind
                else:
                    a = z[member]
                    arrays.append({"name": member, "descr": a.dtype.str, **describe(a)})
        assert why == skipped, (name, why, skipped)
        entries.append({"file": name, "members": arrays,
                        "skipped": [{"name": n, "why": w} for n, w in skipped.items()]})
    return entries


# ------------------------------------------------------------------------------------------------
# print(a) and repr(a)

def text_arrays():
    rng = np.random.default_rng(3)
    return [
        ("small-1d", np.array([0.1, 0.25, -1.5])),
        ("normal-2d", rng.standard_normal((3, 4))),
        ("float32-2d", rng.standard_normal((2, 3)).astype(np.float32)),
        ("large-scientific", np.array([1e10, 2.5e12, -3e15])),
        ("small-scientific", np.array([1e-5, 2.5e-7, -3e-10])),
        ("mixed-scientific", np.array([[1e-3, 1e5], [-2.5, 7.0]])),
        ("negative-zero", np.array([-0.0, 0.0, 1.0])),
        ("nan-inf", np.array([np.nan, np.inf, -np.inf, 1.5])),
        ("int64-2d", np.array([[-3, 10, 200], [4, -50, 6]])),
        ("int32", np.array([1, -2, 3], dtype=np.int32)),
        ("zero-d-float", np.array(3.5)),
        ("zero-d-int", np.array(-7)),
        ("three-d", rng.standard_normal((2, 3, 4))),
        ("four-d", rng.random((2, 2, 2, 3))),
        ("bool", np.array([True, False, True])),
        ("float16", np.array([0.1, -2.0, 65504.0], dtype=np.float16)),
        ("uint8", np.array([[0, 255], [7, 128]], dtype=np.uint8)),
        ("wrapped-1d", np.linspace(0, 1, 30)),
        ("wrapped-rows", rng.standard_normal((3, 20))),
        ("float32-scientific", np.array([1e-8, 3e7, -0.5], dtype=np.float32)),
        ("whole-floats", np.array([1.0, 2.0, -3.0])),
        ("course-X", rng.standard_normal((1, 6, 8)) * 3),
        ("one-entry", np.array([2.5])),
        ("extremes", np.array([1.7976931348623157e308, 5e-324, -2.2250738585072014e-308])),
        ("int64-extremes", np.array([-(2**63), 2**63 - 1, 2**53 + 1])),
        ("attention-row", np.array([[0.5, 0.25, 0.125, 0.125]])),
        ("empty", np.zeros(0)),
        ("empty-2d", np.zeros((2, 0))),
        ("scalar", np.float64(-1.25)),
        ("summarised", np.arange(2000.0)),
    ]


NUMBER = re.compile(r"nan|[-+]?inf|True|False|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def printed_values(text):
    """float(token) for every number printed (dtype= and shape= keywords removed; NumPy 2's
    np.float64(x) taken as x, np.True_ as True)."""
    body = re.sub(r"(dtype|shape)=(\([^)]*\)|\w+)", "", text)
    body = re.sub(r"np\.(float|u?int)\d+\(", "(", body).replace("np.True_", "True")
    body = body.replace("np.False_", "False")
    vals = [1.0 if t == "True" else 0.0 if t == "False" else float(t)
            for t in NUMBER.findall(body)]
    return ["%016x" % int(v) for v in np.array(vals, dtype="<f8").view("<u8")]


def list_arrays():
    """Arrays a student prints as lists: lesson 5's losses (float64), float32 losses, float16,
    int64, uint8 and bool values, and float64 with exponents, nan and inf."""
    rng = np.random.default_rng(8)
    losses = 0.7 * np.exp(-0.05 * np.arange(10)) + rng.normal(0, 0.001, 10)
    return [
        ("losses", losses),
        ("losses-float32", losses[:5].astype(np.float32)),
        ("float16-list", np.array([0.1, -2.0, 65504.0, 6.1e-5], dtype=np.float16)),
        ("int64-list", np.array([3, -7, 2**40])),
        ("uint8-list", np.array([0, 7, 255], dtype=np.uint8)),
        ("bool-list", np.array([True, False, True])),
        ("exponents-list", np.array([1e-05, 1.5e20, -2.5e-7, 0.1, 1234.5, np.nan, -np.inf])),
        ("round-values", np.array([0.5, 0.6508037291851012, 2.0])),
    ]


def numpy2_repr(x):
    """NumPy 2's repr of the scalar x (NEP 51), by hand: NumPy 1.24 prints the same digits
    without the np.float64(...) around them, and np.True_ / np.False_ as True / False."""
    if x.dtype == bool:
        return "np.True_" if x else "np.False_"
    return "np.%s(%r)" % (x.dtype.name, x)


def list_texts():
    """Each list as print(list) shows it: "python" a list of Python floats (a.tolist()),
    "numpy1" a list of NumPy scalars in NumPy 1.24 (this python3's own output), "numpy2" the
    same list in NumPy >= 2 (numpy2_repr: written by hand, NumPy 2 is not installed here)."""
    entries = []
    for label, a in list_arrays():
        texts = [("python", str(a.tolist())), ("numpy1", str(list(a))),
                 ("numpy2", "[%s]" % ", ".join(numpy2_repr(x) for x in a))]
        for kind, text in texts:
            entries.append({
                "label": label, "kind": kind, "text": text, "shape": list(a.shape),
                "dtype": a.dtype.name, "values": printed_values(text),
                "original": bits_of_all(a), "error": None,
                "printed_dtype": a.dtype.name if kind == "numpy2" and a.dtype.name in (
                    "float16", "float32") else None,
            })
    return entries


def printed_dtype(text):
    """The float dtype repr(a) names (dtype=float32; float64 only for an empty array)."""
    m = re.search(r"dtype=(float16|float32|float64)\b", text)
    return m.group(1) if m else None


def write_text(outdir):
    np.set_printoptions()  # NumPy's defaults
    entries = []
    for label, a in text_arrays():
        for kind, text in (("print", str(a)), ("repr", repr(a))):
            arr = np.asarray(a)
            summarised = "..." in text
            shape = list(arr.shape)
            if kind == "print" and arr.size == 0:
                shape = [0]  # print shows [] whatever the shape
            entries.append({
                "label": label, "kind": kind, "text": text, "shape": shape,
                "dtype": arr.dtype.name,
                "values": None if summarised else printed_values(text),
                "original": None if summarised else bits_of_all(arr),
                "error": "summarised" if summarised else None,
                "printed_dtype": printed_dtype(text),
            })
    return entries + list_texts()


def bits_of_all(a):
    return ["%016x" % int(v) for v in np.ascontiguousarray(a.astype("<f8")).ravel().view("<u8")]


def main(argv):
    if len(argv) != 2:
        print("usage: notebook_formats.py OUTDIR", file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    manifest = {
        "numpy": np.__version__,
        "npy": write_npy_matrix(outdir) + write_crafted(outdir),
        "npz": write_npz_files(outdir),
        "npz_partial": write_partial_npz(outdir),
        "text": write_text(outdir),
    }
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, allow_nan=False, ensure_ascii=False, indent=0)
    counts = {k: len(v) for k, v in manifest.items() if isinstance(v, list)}
    print("notebook_formats: %s in %s" % (counts, outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
