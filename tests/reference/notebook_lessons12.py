#!/usr/bin/python3
"""Course-style notebooks of lessons 1 and 2 (issue 19), written as a student would, with other
seeds and weight scales than the page's, and what each prints.

Usage:
    /usr/bin/python3 tests/reference/notebook_lessons12.py OUTDIR

Writes, for each notebook, OUTDIR/<name>.npz (the arrays a student saves: lesson 1's X and the two
heads' weights, lesson 2's x and Wq, under the names of that notebook) and OUTDIR/<name>.txt (what
its cells print, as the course prints it: "max gap 0.26, argmax differs in 7 of 8 rows"), and
OUTDIR/expected.json: every figure in full precision, for tests/model/lessons12-notebook.test.mjs
and tests/browser/lessons12-notebook.test.mjs. Plain NumPy; nothing here reads the page's code.

The comparison of lesson 1 at equal parameter count (one head of hs = C against 4 heads of
hs = C / 4) is computed with the weights the page documents for a notebook's X: rng =
np.random.default_rng(42); Wq, Wk, Wv = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in
range(3)); head i of the four is columns i*hs:(i+1)*hs of them.
"""

import json
import os
import sys

import numpy as np

COMPARE_SEED = 42
COMPARE_HEADS = 4

# name, seed, scale ('0.02' or 'sqrt'), T, C, hs, 2-D X?, lesson 2's (B, T, C, h), the names saved
NOTEBOOKS = [
    {
        "name": "seed7-scale002",
        "seed": 7,
        "scale": "0.02",
        "T": 8,
        "C": 64,
        "hs": 16,
        "x2d": False,
        "lesson2": (2, 5, 64, 4),
        "names": ["Wq1", "Wk1", "Wv1", "Wq2", "Wk2", "Wv2"],
    },
    {
        "name": "seed3-sqrtC-aliases",
        "seed": 3,
        "scale": "sqrt",
        "T": 6,
        "C": 32,
        "hs": 8,
        "x2d": True,
        "lesson2": (1, 6, 32, 4),
        "names": ["W_q1", "Wk_1", "head1_Wv", "q2", "h2_Wk", "Wv_B"],
    },
]


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def head(X, Wq, Wk, Wv):
    """One head's attention (T, T) on X (T, C), the course's way."""
    q, k = X @ Wq, X @ Wk
    return softmax(q @ k.T / np.sqrt(Wq.shape[1]))


def weights(rng, shape, scale):
    w = rng.standard_normal(shape)
    return w * 0.02 if scale == "0.02" else w / np.sqrt(shape[0])


def compare(X):
    """One head of hs = C against 4 heads of hs = C / 4, the same (C, C) Wq, Wk, Wv."""
    T, C = X.shape
    rng = np.random.default_rng(COMPARE_SEED)
    Wq, Wk, Wv = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(3))
    single = head(X, Wq, Wk, Wv)
    hs = C // COMPARE_HEADS
    cols = [slice(i * hs, (i + 1) * hs) for i in range(COMPARE_HEADS)]
    four = [head(X, Wq[:, c], Wk[:, c], Wv[:, c]) for c in cols]
    single_am = np.argmax(single, axis=1)
    four_am = np.array([np.argmax(a, axis=1) for a in four])  # (4, T)
    distinct = [len(set(four_am[:, t])) for t in range(T)]
    return {
        "single": single.ravel().tolist(),
        "four": np.array(four).ravel().tolist(),
        "singleArgmax": single_am.tolist(),
        "fourArgmax": four_am.tolist(),
        "distinct": distinct,
        "disagreeRows": [t for t in range(T) if distinct[t] > 1],
        "offSingle": [int(np.sum(four_am[:, t] != single_am[t])) for t in range(T)],
    }


def lesson2(x, Wq, h):
    B, T, C = x.shape
    hs = C // h
    q = x @ Wq
    q4 = q.reshape(B, T, h, hs)
    heads = q4.transpose(0, 2, 1, 3)
    merged = heads.transpose(0, 2, 1, 3).reshape(B, T, C)
    per_head = [float(np.abs(heads[:, i] - x @ Wq[:, i * hs:(i + 1) * hs]).max()) for i in range(h)]
    return {
        "B": B, "T": T, "C": C, "heads": h, "hs": hs,
        "shapes": {"x": list(x.shape), "q4": list(q4.shape), "heads": list(heads.shape)},
        "perHead": per_head,
        "headMaxDiff": max(per_head),
        "roundTrip": float(np.abs(merged - q).max()),
        "head1Projection": (x @ Wq[:, hs:2 * hs])[0, 0, :4].tolist(),
    }


def notebook(nb, out):
    rng = np.random.default_rng(nb["seed"])
    T, C, hs = nb["T"], nb["C"], nb["hs"]
    X = rng.standard_normal((1, T, C))
    W = [weights(rng, (C, hs), nb["scale"]) for _ in range(6)]
    B2, T2, C2, h2 = nb["lesson2"]
    x = rng.standard_normal((B2, T2, C2))
    Wq = rng.standard_normal((C2, C2)) / np.sqrt(C2)
    saved = {"X": X[0] if nb["x2d"] else X, "x": x, "Wq": Wq}
    saved.update(dict(zip(nb["names"], W)))
    np.savez(os.path.join(out, nb["name"] + ".npz"), **saved)

    A1, A2 = head(X[0], *W[:3]), head(X[0], *W[3:])
    gap = float(np.abs(A1 - A2).max())
    am1, am2 = np.argmax(A1, axis=1), np.argmax(A2, axis=1)
    rows = [int(t) for t in np.nonzero(am1 != am2)[0]]
    l2 = lesson2(x, Wq, h2)
    printed = [
        f"max gap {gap:.2f}, argmax differs in {len(rows)} of {T} rows",
        f"max gap {gap:.3f}",
        f"lesson 2: head_max_diff {l2['headMaxDiff']:.1e}, round_trip {l2['roundTrip']:.1e}",
        "heads[0, 1, 0, :4] " + np.array2string(np.array(l2["head1Projection"]), precision=4),
    ]
    with open(os.path.join(out, nb["name"] + ".txt"), "w") as f:
        f.write("\n".join(printed) + "\n")
    return {
        "seed": nb["seed"], "scale": nb["scale"], "T": T, "C": C, "hs": hs, "names": nb["names"],
        "printed": printed,
        "lesson1": {
            "A1": A1.ravel().tolist(), "A2": A2.ravel().tolist(), "maxGap": gap,
            "argmax1": am1.tolist(), "argmax2": am2.tolist(), "argmaxDiffRows": rows,
            "compare": compare(X[0]),
        },
        "lesson2": l2,
    }


def main(argv):
    if len(argv) != 2:
        print("usage: %s OUTDIR" % argv[0], file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    doc = {nb["name"]: notebook(nb, out) for nb in NOTEBOOKS}
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(doc, f, allow_nan=False)
    print("notebook_lessons12: %d notebooks in %s" % (len(doc), out))
    for name, d in doc.items():
        print("  %s (seed %d, scale %s): %s" % (name, d["seed"], d["scale"], d["printed"][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
