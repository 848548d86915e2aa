#!/usr/bin/python3
"""Students' notebooks for the notebook check (issue 11): NumPy written the way a student
writes the course, correct and with each known mistake, saved with np.savez.

Usage:
    /usr/bin/python3 tests/reference/notebook_students.py OUTDIR

For every run in RUNS it writes OUTDIR/<run>.npz (np.savez, as the student would) and
OUTDIR/<run>.json, the same arrays with lossless float64 values (non-finite numbers as the
strings "inf", "-inf", "nan"), and OUTDIR/manifest.json: for each run its heads, causal flag,
and what the check must report (every given result matching, or the results to blame, each with
the mistake's id). tests/notebook-check.test.mjs reads them.

The student's code is one function, `notebook`, with the course's lines; a mistake replaces one
line by the line a student writes instead (`if "weights-transposed" in mistakes: ...`).
"""

import json
import os
import sys

import numpy as np


# ---------------------------------------------------------------------------
# The student's helpers (lessons 1 and 2), and the mistaken ones
# ---------------------------------------------------------------------------

def split_heads(x, h):
    B, T, C = x.shape
    return x.reshape(B, T, h, C // h).transpose(0, 2, 1, 3)


def split_heads_no_transpose(x, h):
    B, T, C = x.shape
    return x.reshape(B, h, T, C // h)               # the mistake: tokens and heads mixed


def merge_heads(x):
    B, h, T, hs = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * hs)


def merge_heads_no_transpose(x):
    B, h, T, hs = x.shape
    return x.reshape(B, T, h * hs)                  # the mistake


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)   # True above the diagonal


# ---------------------------------------------------------------------------
# The notebook: lesson 3's forward, the loss, lesson 4's backward
# ---------------------------------------------------------------------------

def forward(X, Wq, Wk, Wv, Wo, h, causal, m, fill):
    """m: the set of mistakes; fill: what masked scores hold when the student masks scores."""
    B, T, C = X.shape
    hs = C // h
    split = split_heads_no_transpose if "split-without-transpose" in m else split_heads
    merge = merge_heads_no_transpose if "merge-without-transpose" in m else merge_heads

    if "weights-transposed" in m:
        q = X @ Wq.T
    else:
        q = X @ Wq
    k = X @ Wk
    v = X @ Wv
    Q, K, V = split(q, h), split(k, h), split(v, h)

    if "missing-scale" in m:
        scores = Q @ K.transpose(0, 1, 3, 2)
    elif "scale-sqrt-C" in m:
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(C)
    else:
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)

    masked = scores
    if causal and "causal-mismatch" not in m:
        masked = np.where(causal_mask(T), fill, scores)
        if "mask-scores-in-place" in m:
            scores = masked
    if not causal and "causal-mismatch" in m:
        masked = np.where(causal_mask(T), -np.inf, scores)
        if "mask-scores-in-place" in m:
            scores = masked

    if "softmax-wrong-axis" in m:
        att = softmax(masked, axis=-2)
    elif "softmax-whole-array" in m:
        att = np.exp(masked) / np.sum(np.exp(masked))    # not a known mistake: step-differs
    else:
        att = softmax(masked, axis=-1)
    headout = att @ V
    concat = merge(headout)
    Y = concat @ Wo
    return dict(q=q, k=k, v=v, Q=Q, K=K, V=V, scores=scores, att=att,
                headout=headout, concat=concat, Y=Y)


def loss_and_dY(Y, target, G, m):
    if target is None:
        return np.sum(G * Y), G
    if "mse-loss-sum" in m:
        loss = np.sum((Y - target) ** 2)
    else:
        loss = np.mean((Y - target) ** 2)
    if "mse-grad-factor" in m:
        dY = 2 * (Y - target)                        # the mean's 1/n forgotten
    elif "mse-grad-half" in m:
        dY = (Y - target) / Y.size                   # the 2 forgotten
    else:
        dY = 2 * (Y - target) / Y.size
    return loss, dY


def backward(f, X, Wq, Wk, Wv, Wo, h, dY, m):
    B, T, C = X.shape
    hs = C // h
    split = split_heads_no_transpose if "split-without-transpose" in m else split_heads
    merge = merge_heads_no_transpose if "merge-without-transpose" in m else merge_heads
    Q, K, V, att, concat = f["Q"], f["K"], f["V"], f["att"], f["concat"]
    scale = 1.0 if "missing-scale-backward" in m else np.sqrt(hs)

    if "dw-transposed" in m:
        dWo = dY.reshape(-1, C).T @ concat.reshape(-1, C)
    else:
        dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)
    if "backward-w-not-transposed" in m:
        dconcat = dY @ Wo
    else:
        dconcat = dY @ Wo.T
    dheadout = split(dconcat, h)
    if "dv-not-transposed" in m:
        dV = att @ dheadout
    else:
        dV = att.transpose(0, 1, 3, 2) @ dheadout
    datt = dheadout @ V.transpose(0, 1, 3, 2)
    if "dscores-missing-rowsum" in m:
        dscores = att * datt
    else:
        dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))
    if "dq-transposed" in m:
        dQ = dscores.transpose(0, 1, 3, 2) @ K / scale
    else:
        dQ = dscores @ K / scale
    if "dk-transposed" in m:
        dK = dscores @ Q / scale
    else:
        dK = dscores.transpose(0, 1, 3, 2) @ Q / scale

    dQm, dKm, dVm = merge(dQ), merge(dK), merge(dV)
    X2 = X.reshape(-1, C)
    if "dw-transposed" in m:
        dWq = dQm.reshape(-1, C).T @ X2
        dWk = dKm.reshape(-1, C).T @ X2
        dWv = dVm.reshape(-1, C).T @ X2
    else:
        dWq = X2.T @ dQm.reshape(-1, C)
        dWk = X2.T @ dKm.reshape(-1, C)
        dWv = X2.T @ dVm.reshape(-1, C)
    if "dx-missing-paths" in m:
        dX = dQm @ Wq.T
    elif "backward-w-not-transposed" in m:
        dX = dQm @ Wq + dKm @ Wk + dVm @ Wv
    else:
        dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T
    return dict(dWo=dWo, dconcat=dconcat, dheadout=dheadout, dV=dV, datt=datt,
                dscores=dscores, dQ=dQ, dK=dK, dWq=dWq, dWk=dWk, dWv=dWv, dX=dX)


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------

FORWARD = ["Q", "K", "V", "scores", "att", "headout", "concat", "Y"]
BACKWARD = ["dWo", "dconcat", "dheadout", "dV", "datt", "dscores", "dQ", "dK",
            "dWq", "dWk", "dWv", "dX"]
SPLIT = ["Q", "K", "V", "headout", "dheadout", "dV", "dQ", "dK"]
ALL = FORWARD + ["loss", "dY"] + BACKWARD

SMALL = dict(B=2, T=5, C=12, h=3)
COURSE = dict(B=2, T=6, C=64, h=4)


def run(name, size=SMALL, causal=False, loss="mse", mistakes=(), save=ALL, merged=(),
        dtype="f8", x2d=False, fill=-np.inf, blame=(), seed=7, note=""):
    """One student's notebook. blame: [(result, id), ...] the check must report, in order;
    empty: every saved result matches."""
    return dict(name=name, size=size, causal=causal, loss=loss, mistakes=set(mistakes),
                save=list(save), merged=set(merged), dtype=dtype, x2d=x2d, fill=fill,
                blame=[list(b) for b in blame], seed=seed, note=note)


RUNS = [
    # correct notebooks
    run("correct-f64-mse"),
    run("correct-f64-dot-causal-merged", causal=True, loss="dot", merged=SPLIT,
        mistakes={"mask-scores-in-place"}, note="scores masked to -inf in place"),
    run("correct-f32-mse-causal", causal=True, dtype="f4", mistakes={"mask-scores-in-place"},
        fill=-1e9, note="float32; scores masked to -1e9 in place"),
    run("correct-f32-dot-merged", loss="dot", dtype="f4", merged=["Q", "K", "V", "dQ"]),
    run("correct-x2d-dot", size=dict(B=1, T=5, C=12, h=3), x2d=True, loss="dot",
        note="X (T, C): every result without the leading 1"),
    run("correct-course-causal-subset", size=COURSE, causal=True,
        save=["Q", "K", "V", "scores", "att", "Y", "loss", "dWo", "dX"],
        note="unmasked scores, a subset of the results"),
    run("correct-forward-only", loss=None, save=FORWARD),
    run("correct-only-Y-dX", save=["Y", "dX"]),
    # one mistake each
    run("weights-transposed", mistakes={"weights-transposed"}, blame=[("Q", "weights-transposed")]),
    run("weights-transposed-only-Y", mistakes={"weights-transposed"}, save=["Y", "dX"],
        blame=[("Y", "weights-transposed")], note="Q not saved: found at Y"),
    run("weights-transposed-course-only-Y", size=COURSE, mistakes={"weights-transposed"},
        save=["Y", "loss", "dX"], blame=[("Y", "weights-transposed")]),
    run("missing-scale", mistakes={"missing-scale", "missing-scale-backward"},
        blame=[("scores", "missing-scale")], note="no 1/sqrt(hs) anywhere"),
    run("missing-scale-backward", mistakes={"missing-scale-backward"},
        blame=[("dQ", "missing-scale")], note="no 1/sqrt(hs) in dQ and dK"),
    run("scale-sqrt-C", mistakes={"scale-sqrt-C"}, blame=[("scores", "scale-sqrt-C")]),
    run("softmax-wrong-axis", mistakes={"softmax-wrong-axis"},
        blame=[("att", "softmax-wrong-axis")]),
    run("causal-mismatch-no-mask", causal=True, mistakes={"causal-mismatch"},
        blame=[("att", "causal-mismatch")], note="the check is causal, the notebook not"),
    run("causal-mismatch-masked", mistakes={"causal-mismatch"},
        blame=[("att", "causal-mismatch")], note="the notebook is causal, the check not"),
    run("causal-mismatch-scores", mistakes={"causal-mismatch", "mask-scores-in-place"},
        blame=[("scores", "causal-mismatch")], note="scores masked in place, the check not causal"),
    run("split-without-transpose", mistakes={"split-without-transpose"},
        blame=[("Q", "split-without-transpose")]),
    run("split-without-transpose-merged", mistakes={"split-without-transpose"},
        merged=["Q", "K", "V"], blame=[("scores", "split-without-transpose")],
        note="Q, K, V saved before the split"),
    run("merge-without-transpose", mistakes={"merge-without-transpose"},
        blame=[("concat", "merge-without-transpose")]),
    run("mse-loss-sum", mistakes={"mse-loss-sum"}, blame=[("loss", "mse-loss-sum")]),
    run("mse-grad-factor", mistakes={"mse-grad-factor"}, blame=[("dY", "mse-grad-factor")]),
    run("mse-grad-factor-hidden", mistakes={"mse-grad-half"},
        save=[n for n in ALL if n != "dY"], blame=[("dWo", "mse-grad-factor")],
        note="dY not saved, the 2 forgotten: found at dWo"),
    run("dw-transposed", mistakes={"dw-transposed"}, blame=[("dWo", "dw-transposed")]),
    run("backward-w-not-transposed", mistakes={"backward-w-not-transposed"},
        blame=[("dconcat", "backward-w-not-transposed")]),
    run("dv-not-transposed", mistakes={"dv-not-transposed"}, blame=[("dV", "dv-not-transposed")]),
    run("dscores-missing-rowsum", mistakes={"dscores-missing-rowsum"},
        blame=[("dscores", "dscores-missing-rowsum")]),
    run("dq-transposed", mistakes={"dq-transposed"}, blame=[("dQ", "dq-transposed")]),
    run("dk-transposed", mistakes={"dk-transposed"}, blame=[("dK", "dk-transposed")]),
    run("dx-missing-paths", mistakes={"dx-missing-paths"}, blame=[("dX", "dx-missing-paths")]),
    run("step-differs", mistakes={"softmax-whole-array"}, blame=[("att", "step-differs")],
        note="softmax over the whole array: no known mistake"),
    # two independent mistakes: the local check finds the second
    run("two-mistakes", mistakes={"softmax-wrong-axis", "dk-transposed"},
        blame=[("att", "softmax-wrong-axis"), ("dK", "dk-transposed")]),
    run("two-mistakes-dot-causal", causal=True, loss="dot",
        mistakes={"scale-sqrt-C", "dscores-missing-rowsum"},
        blame=[("scores", "scale-sqrt-C"), ("dscores", "dscores-missing-rowsum")]),
]


def inputs(size, seed, dtype):
    rng = np.random.default_rng(seed)
    B, T, C = size["B"], size["T"], size["C"]
    X = rng.standard_normal((B, T, C))
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    target = rng.standard_normal((B, T, C))
    G = rng.standard_normal((B, T, C))
    t = np.float32 if dtype == "f4" else np.float64
    return X.astype(t), [w.astype(t) for w in W], target.astype(t), G.astype(t)


def notebook(r):
    size = r["size"]
    h = size["h"]
    X, (Wq, Wk, Wv, Wo), target, G = inputs(size, r["seed"], r["dtype"])
    m = r["mistakes"]
    f = forward(X, Wq, Wk, Wv, Wo, h, r["causal"], m, r["fill"])
    out = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo)
    for name in FORWARD:
        out[name] = f[name]
    if r["loss"] is not None:
        loss, dY = loss_and_dY(f["Y"], target if r["loss"] == "mse" else None, G, m)
        out["loss"] = np.asarray(loss)
        out["dY"] = dY
        if r["loss"] == "mse":
            out["target"] = target
        out.update(backward(f, X, Wq, Wk, Wv, Wo, h, dY, m))
    for name in r["merged"]:
        if name in out and out[name].ndim == 4:
            out[name] = merge_heads(out[name])
    for name in ("Q", "K", "V"):                 # saved before the split: X @ W
        if name in r["merged"]:
            out[name] = f[name.lower()]
    keep = ["X", "Wq", "Wk", "Wv", "Wo"] + [n for n in ("dY", "target") if n in out]
    if r["loss"] == "mse" and "dY" not in r["save"]:
        keep.remove("dY")
    keep += [n for n in r["save"] if n in out and n not in keep]
    arrays = {n: out[n] for n in keep}
    if r["x2d"]:                                 # X (T, C): every array loses its leading 1
        arrays = {n: (a[0] if a.ndim >= 3 else a) for n, a in arrays.items()}
    return arrays


def encode(x):
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for r in RUNS:
        arrays = notebook(r)
        np.savez(os.path.join(outdir, r["name"] + ".npz"), **arrays)
        side = {n: dict(shape=list(a.shape), dtype=a.dtype.str,
                        data=[encode(x) for x in np.asarray(a, dtype=np.float64).ravel()])
                for n, a in arrays.items()}
        with open(os.path.join(outdir, r["name"] + ".json"), "w") as fh:
            json.dump(side, fh)
        manifest.append(dict(name=r["name"], heads=r["size"]["h"], causal=r["causal"],
                             loss=r["loss"], dtype=r["dtype"], saved=sorted(arrays),
                             blame=r["blame"], note=r["note"]))
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"notebook_students: {len(RUNS)} notebooks in {outdir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: notebook_students.py OUTDIR")
    main(sys.argv[1])
