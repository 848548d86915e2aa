#!/usr/bin/python3
"""Independent NumPy reference for the mha-wasm multi-head self-attention layer.

Plain float64 NumPy, written the way the NumPy course builds the layer,
lesson by lesson.  It does not read, import or call the C/WASM code: it is
the cross-check the Node tests compare against.

Usage:
    /usr/bin/python3 tests/reference/mha_reference.py OUTDIR

Writes OUTDIR/mha-<case>.json for every case in CASES, after checking the
analytic backward pass against central finite differences (exit 1 on failure).
"""

import json
import os
import sys
import time

import numpy as np


# ---------------------------------------------------------------------------
# Lesson 1: scaled dot-product attention with one head
# ---------------------------------------------------------------------------

def softmax(z, axis=-1):
    """Numerically stable softmax: subtract the max before exponentiating.

    Rows may contain -inf (masked keys); exp(-inf) = 0.  Every row keeps at
    least one finite entry (the diagonal), so the max is finite.
    """
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(T):
    """Boolean (T, T) matrix, True where key index > query index (the future)."""
    q = np.arange(T)[:, None]
    k = np.arange(T)[None, :]
    return k > q


def apply_mask(scores, causal):
    """Put -inf on future keys when causal; scores has shape (..., T, T)."""
    if not causal:
        return scores
    T = scores.shape[-1]
    return np.where(causal_mask(T), -np.inf, scores)


def single_head_attention(X, Wq1, Wk1, Wv1, causal):
    """One head with its own (C, hs1) projections.  X: (B, T, C)."""
    hs1 = Wq1.shape[1]
    q = X @ Wq1                                     # (B, T, hs1)
    k = X @ Wk1                                     # (B, T, hs1)
    v = X @ Wv1                                     # (B, T, hs1)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(hs1)   # (B, T, T)
    att = softmax(apply_mask(s, causal), axis=-1)   # (B, T, T)
    out = att @ v                                   # (B, T, hs1)
    return att, out


# ---------------------------------------------------------------------------
# Lesson 2: splitting and merging heads
# ---------------------------------------------------------------------------

def split_heads(Z, h):
    """(B, T, C) -> (B, h, T, hs): reshape to (B, T, h, hs), swap T and h."""
    B, T, C = Z.shape
    hs = C // h
    return Z.reshape(B, T, h, hs).transpose(0, 2, 1, 3)


def merge_heads(Z):
    """(B, h, T, hs) -> (B, T, C): the exact inverse of split_heads."""
    B, h, T, hs = Z.shape
    return Z.transpose(0, 2, 1, 3).reshape(B, T, h * hs)


# ---------------------------------------------------------------------------
# Lesson 3: the multi-head forward pass
# ---------------------------------------------------------------------------

def mha_forward(X, W, h, causal):
    """X: (B, T, C); W: dict of (C, C) weights Wq, Wk, Wv, Wo (Y = X @ W)."""
    C = X.shape[-1]
    hs = C // h
    Q = split_heads(X @ W["Wq"], h)                         # (B, h, T, hs)
    K = split_heads(X @ W["Wk"], h)
    V = split_heads(X @ W["Wv"], h)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)      # (B, h, T, T), unmasked
    att = softmax(apply_mask(scores, causal), axis=-1)      # (B, h, T, T)
    headout = att @ V                                       # (B, h, T, hs)
    concat = merge_heads(headout)                           # (B, T, C)
    Y = concat @ W["Wo"]                                    # (B, T, C)
    cache = dict(X=X, Q=Q, K=K, V=V, scores=scores, att=att,
                 headout=headout, concat=concat, Y=Y)
    return Y, cache


# ---------------------------------------------------------------------------
# Lesson 4: the backward pass
# ---------------------------------------------------------------------------

def mha_backward(dY, cache, W, h):
    """Gradients of a loss L given dY = dL/dY (B, T, C)."""
    X, Q, K, V, att, concat = (cache[k] for k in ("X", "Q", "K", "V", "att", "concat"))
    C = X.shape[-1]
    hs = C // h
    s = np.sqrt(hs)

    # output projection Y = concat @ Wo
    dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)        # (C, C)
    dconcat = dY @ W["Wo"].T                                # (B, T, C)
    dheadout = split_heads(dconcat, h)                      # (B, h, T, hs)

    # headout = att @ V
    dV = att.transpose(0, 1, 3, 2) @ dheadout               # (B, h, T, hs)
    datt = dheadout @ V.transpose(0, 1, 3, 2)               # (B, h, T, T)

    # softmax backward (masked entries have att == 0, hence dscores == 0)
    dscores = att * (datt - np.sum(datt * att, axis=-1, keepdims=True))

    # scores = Q @ K^T / sqrt(hs)
    dQ = dscores @ K / s                                    # (B, h, T, hs)
    dK = dscores.transpose(0, 1, 3, 2) @ Q / s              # (B, h, T, hs)

    # back through the heads split and the input projections
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)
    X2 = X.reshape(-1, C)
    dWq = X2.T @ dQm.reshape(-1, C)
    dWk = X2.T @ dKm.reshape(-1, C)
    dWv = X2.T @ dVm.reshape(-1, C)
    dX = dQm @ W["Wq"].T + dKm @ W["Wk"].T + dVm @ W["Wv"].T

    return dict(dconcat=dconcat, dheadout=dheadout, dV=dV, datt=datt,
                dscores=dscores, dQ=dQ, dK=dK,
                dWq=dWq, dWk=dWk, dWv=dWv, dWo=dWo, dX=dX)


# ---------------------------------------------------------------------------
# Lesson 5: losses and training with plain gradient descent
# ---------------------------------------------------------------------------

def dot_loss(Y, G):
    """L = sum(G * Y); dL/dY = G."""
    return np.sum(G * Y)


def mse_loss(Y, target):
    """L = mean((Y - target)^2); dL/dY = 2 (Y - target) / N."""
    diff = Y - target
    return np.mean(diff ** 2), 2.0 * diff / diff.size


def train(X, target, W, h, causal, lr, steps):
    W = {k: v.copy() for k, v in W.items()}
    losses = []
    for _ in range(steps):
        # gradients are freshly computed every step (nothing accumulates)
        Y, cache = mha_forward(X, W, h, causal)
        loss, dY = mse_loss(Y, target)
        losses.append(loss)
        g = mha_backward(dY, cache, W, h)
        for k in ("Wq", "Wk", "Wv", "Wo"):
            W[k] = W[k] - lr * g["d" + k]
    return losses, W


# ---------------------------------------------------------------------------
# Initialisation
# ---------------------------------------------------------------------------

def init_weights(C, seed, rng_kind, scale):
    if rng_kind == "default_rng":
        rng = np.random.default_rng(seed)
    elif rng_kind == "legacy":
        rng = np.random.RandomState(seed)   # same stream as np.random.seed(seed)
    else:
        raise ValueError(rng_kind)
    W = {}
    for k in ("Wq", "Wk", "Wv", "Wo"):
        W[k] = rng.standard_normal((C, C)) * scale
    return W


def case_data(B, T, C, data_seed):
    drng = np.random.default_rng(data_seed)
    X = drng.standard_normal((B, T, C))
    G = drng.standard_normal((B, T, C))
    target = drng.standard_normal((B, T, C))
    return X, G, target


def init_single_head(C, hs1, head_seed, scale):
    rng = np.random.default_rng(head_seed)
    Wq1 = rng.standard_normal((C, hs1)) * scale
    Wk1 = rng.standard_normal((C, hs1)) * scale
    Wv1 = rng.standard_normal((C, hs1)) * scale
    return Wq1, Wk1, Wv1


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

CASES = [
    dict(name="course", C=64, h=4, B=2, T=6, seed=42, rng="default_rng",
         scale=0.125, causal=False, data_seed=7, lr=0.1, steps=10, head_seed=1, hs1=16),
    dict(name="course_causal", C=64, h=4, B=2, T=6, seed=42, rng="default_rng",
         scale=0.125, causal=True, data_seed=7, lr=0.1, steps=10, head_seed=1, hs1=16),
    dict(name="legacy", C=32, h=8, B=3, T=5, seed=42, rng="legacy",
         scale=0.2, causal=False, data_seed=11, lr=0.05, steps=10, head_seed=2, hs1=4),
    dict(name="onehead", C=12, h=1, B=1, T=7, seed=3, rng="default_rng",
         scale=0.3, causal=True, data_seed=5, lr=0.2, steps=5, head_seed=3, hs1=12),
    dict(name="wide", C=48, h=6, B=1, T=33, seed=123, rng="default_rng",
         scale=0.15, causal=False, data_seed=9, lr=0.1, steps=3, head_seed=4, hs1=8),
    dict(name="t1", C=8, h=2, B=2, T=1, seed=0, rng="legacy",
         scale=0.5, causal=True, data_seed=1, lr=0.1, steps=3, head_seed=5, hs1=4),
]

FD_CASES = ("course", "onehead", "t1")
FD_EPS = 1e-6
FD_TOL = 1e-6


# ---------------------------------------------------------------------------
# Finite-difference check of the backward pass (dot loss)
# ---------------------------------------------------------------------------

def fd_check(X, G, W, h, causal, eps=FD_EPS):
    """Central differences on every entry of Wq, Wk, Wv, Wo and X.

    Returns {name: (rel_tensor, rel_significant, rel_elementwise)} with
      rel_tensor      = max|a - n| / max(max|a|, max|n|, 1e-12)   (gated)
      rel_significant = max_i |a_i - n_i| / max(|a_i|, |n_i|, 1e-12) over the
                        entries with max(|a_i|, |n_i|) >= 1% of the tensor max
                        (gated)
      rel_elementwise = the same over all entries (printed, not gated).

    Why the all-entries elementwise figure is not gated: central differences
    in float64 carry an absolute error of about ulp(L)/eps ~ 1e-8 here (the
    loss is ~30), while some gradient entries are as small as 1e-5, so their
    elementwise relative error is ~1e-5 whatever the backward pass does.
    """
    Y, cache = mha_forward(X, W, h, causal)
    grads = mha_backward(G, cache, W, h)

    def loss(X_, W_):
        return dot_loss(mha_forward(X_, W_, h, causal)[0], G)

    out = {}
    for name in ("Wq", "Wk", "Wv", "Wo", "X"):
        P = X if name == "X" else W[name]
        num = np.zeros_like(P)
        flatP, flatN = P.reshape(-1), num.reshape(-1)
        for i in range(flatP.size):
            old = flatP[i]
            flatP[i] = old + eps
            lp = loss(X, W)
            flatP[i] = old - eps
            lm = loss(X, W)
            flatP[i] = old
            flatN[i] = (lp - lm) / (2 * eps)
        ana = grads["d" + name]
        err = np.abs(ana - num)
        mag = np.maximum(np.abs(ana), np.abs(num))
        rel = err / np.maximum(mag, 1e-12)
        top = max(float(np.max(mag)), 1e-12)
        rel_t = float(np.max(err)) / top
        rel_sig = float(np.max(rel[mag >= 0.01 * top], initial=0.0))
        out[name] = (rel_t, rel_sig, float(np.max(rel)))
    return out


# ---------------------------------------------------------------------------
# JSON helpers
# ---------------------------------------------------------------------------

def arr(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": [int(s) for s in a.shape],
            "data": [float(x) for x in a.reshape(-1).tolist()]}


def run_case(cfg):
    C, h, B, T = cfg["C"], cfg["h"], cfg["B"], cfg["T"]
    hs = C // h
    assert hs * h == C
    causal = cfg["causal"]

    W = init_weights(C, cfg["seed"], cfg["rng"], cfg["scale"])
    X, G, target = case_data(B, T, C, cfg["data_seed"])
    Wq1, Wk1, Wv1 = init_single_head(C, cfg["hs1"], cfg["head_seed"], cfg["scale"])

    # forward + backward for the dot loss (dY = G)
    Y, cache = mha_forward(X, W, h, causal)
    g = mha_backward(G, cache, W, h)

    # MSE loss on the initial weights
    mse, dY_mse = mse_loss(Y, target)

    # training
    losses, Wt = train(X, target, W, h, causal, cfg["lr"], cfg["steps"])

    # single head
    att1, out1 = single_head_attention(X, Wq1, Wk1, Wv1, causal)

    # split / merge checks
    XWq = X @ W["Wq"]
    Qs = split_heads(XWq, h)
    roundtrip = float(np.max(np.abs(merge_heads(Qs) - XWq)))
    head_small = 0.0
    for i in range(h):
        small = X @ W["Wq"][:, i * hs:(i + 1) * hs]       # (B, T, hs)
        head_small = max(head_small, float(np.max(np.abs(Qs[:, i] - small))))

    doc = {k: cfg[k] for k in ("name", "C", "h", "B", "T", "seed", "rng", "scale",
                               "causal", "data_seed", "lr", "steps", "head_seed", "hs1")}
    doc["scale"] = float(doc["scale"])
    doc["lr"] = float(doc["lr"])
    doc["inputs"] = {
        "X": arr(X), "G": arr(G), "target": arr(target),
        "Wq": arr(W["Wq"]), "Wk": arr(W["Wk"]), "Wv": arr(W["Wv"]), "Wo": arr(W["Wo"]),
        "Wq1": arr(Wq1), "Wk1": arr(Wk1), "Wv1": arr(Wv1),
    }
    doc["forward"] = {k: arr(cache[k]) for k in
                      ("Q", "K", "V", "scores", "att", "headout", "concat", "Y")}
    doc["backward_dot"] = {"loss": float(dot_loss(Y, G))}
    for k in ("dconcat", "dheadout", "dV", "datt", "dscores", "dQ", "dK",
              "dWq", "dWk", "dWv", "dWo", "dX"):
        doc["backward_dot"][k] = arr(g[k])
    doc["mse"] = {"loss": float(mse), "dY": arr(dY_mse)}
    doc["train"] = {"losses": [float(l) for l in losses]}
    for k in ("Wq", "Wk", "Wv", "Wo"):
        doc["train"][k] = arr(Wt[k])
    doc["single_head"] = {"att": arr(att1), "out": arr(out1)}
    doc["split_merge"] = {"roundtrip_max_abs": roundtrip,
                          "head_equals_small_projection_max_abs": head_small}

    return doc, (X, G, W)


def main(argv):
    if len(argv) != 2:
        print("usage: %s OUTDIR" % argv[0], file=sys.stderr)
        return 2
    outdir = argv[1]
    t0 = time.time()

    docs = []
    ok = True
    for cfg in CASES:
        t = time.time()
        doc, (X, G, W) = run_case(cfg)
        docs.append(doc)
        tr = doc["train"]["losses"]
        line = ("%-14s C=%-3d h=%d B=%d T=%-2d causal=%-5s dot=% .6f mse=%.6f "
                "train %.6f -> %.6f" % (cfg["name"], cfg["C"], cfg["h"], cfg["B"], cfg["T"],
                                        cfg["causal"], doc["backward_dot"]["loss"],
                                        doc["mse"]["loss"], tr[0], tr[-1]))
        if doc["split_merge"]["roundtrip_max_abs"] != 0.0 or \
                doc["split_merge"]["head_equals_small_projection_max_abs"] > 1e-12:
            ok = False
            line += "  SPLIT/MERGE MISMATCH"
        if cfg["name"] in FD_CASES:
            res = fd_check(X, G, {k: v.copy() for k, v in W.items()}, cfg["h"], cfg["causal"])
            worst = max(max(r[0], r[1]) for r in res.values())
            line += "\n    FD eps=%g  max|a-n|/max|a|:" % FD_EPS
            line += "".join("  %s %.1e" % (k, r[0]) for k, r in res.items())
            line += "\n    elementwise |a-n|/max(|a|,|n|), entries >=1% of max:"
            line += "".join("  %s %.1e" % (k, r[1]) for k, r in res.items())
            line += "\n    elementwise, all entries (info, roundoff-bound):"
            line += "".join("  %s %.1e" % (k, r[2]) for k, r in res.items())
            if worst > FD_TOL:
                ok = False
                line += "\n    FD FAILED (> %g)" % FD_TOL
        if cfg["name"] in FD_CASES:
            line += "\n    [%.2fs]" % (time.time() - t)
        print(line, flush=True)

    if not ok:
        print("reference self-check FAILED; no files written", file=sys.stderr)
        return 1

    os.makedirs(outdir, exist_ok=True)
    for doc in docs:
        path = os.path.join(outdir, "mha-%s.json" % doc["name"])
        with open(path, "w") as f:
            json.dump(doc, f, allow_nan=False)
    print("wrote %d files to %s in %.2fs" % (len(docs), outdir, time.time() - t0))
    # the companion page's computations (web/model.js) on the same layer: OUTDIR/page.json
    import page_reference
    return page_reference.main([argv[0], outdir])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
