#!/usr/bin/python3
"""Students' lesson-5 notebooks for the training-step check (issue 18, item 3): NumPy written the
way a student writes lesson 5 (the layer as a class or as functions, a seed, ten steps of SGD on
the MSE loss, the list of losses printed), correct and with the mistakes a training step has,
saved with np.savez as the student would.

Usage:
    /usr/bin/python3 tests/reference/notebook_training.py OUTDIR

For every run in RUNS it writes OUTDIR/<run>.npz and OUTDIR/manifest.json: for each run its
heads, causal flag, dtype, the arrays saved, and what the check must report (the status and
diagnosis id of every training row, the learning rate the student used, the first step of
`losses` that differs). tests/check/training.test.mjs reads them. Nothing here uses the
engine: every number comes from NumPy float64 (float32 for the float32 run).

The student's code is lesson 5's: forward, loss, dY = 2 * (Y - target) / Y.size, backward,
W -= lr * dW for the four weights; a mistake replaces one line by the line a student writes
instead (`if "ascent" in m: ...`).
"""

import json
import os
import sys

import numpy as np


# ---------------------------------------------------------------------------
# Lessons 1-4 as the student wrote them
# ---------------------------------------------------------------------------

def split_heads(x, h):
    B, T, C = x.shape
    return x.reshape(B, T, h, C // h).transpose(0, 2, 1, 3)     # (B, h, T, hs)


def merge_heads(x):
    B, h, T, hs = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * hs)        # (B, T, C)


def softmax(z):
    z = z - np.max(z, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=-1, keepdims=True)


class MultiHeadAttention:
    """Lesson 5's layer object: the weights live in self.W, the cache and grads after a pass."""

    def __init__(self, Wq, Wk, Wv, Wo, h, causal=False, mistakes=()):
        self.W = {"Wq": Wq.copy(), "Wk": Wk.copy(), "Wv": Wv.copy(), "Wo": Wo.copy()}
        self.h = h
        self.causal = causal
        self.m = set(mistakes)

    def forward(self, X):
        W, h = self.W, self.h
        B, T, C = X.shape
        hs = C // h
        Q, K, V = split_heads(X @ W["Wq"], h), split_heads(X @ W["Wk"], h), \
            split_heads(X @ W["Wv"], h)
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)      # (B, h, T, T)
        if self.causal:
            scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
        att = softmax(scores)
        concat = merge_heads(att @ V)
        self.cache = dict(X=X, Q=Q, K=K, V=V, att=att, concat=concat)
        return concat @ W["Wo"]

    def backward(self, dY):
        c, W, h = self.cache, self.W, self.h
        B, T, C = dY.shape
        hs = C // h
        g = {"dWo": c["concat"].reshape(-1, C).T @ dY.reshape(-1, C)}
        dheadout = split_heads(dY @ W["Wo"].T, h)
        dV = c["att"].transpose(0, 1, 3, 2) @ dheadout
        datt = dheadout @ c["V"].transpose(0, 1, 3, 2)
        dscores = c["att"] * (datt - (datt * c["att"]).sum(-1, keepdims=True))
        dQ = dscores @ c["K"] / np.sqrt(hs)
        dK = dscores.transpose(0, 1, 3, 2) @ c["Q"] / np.sqrt(hs)
        X2 = c["X"].reshape(-1, C)
        g["dWq"] = X2.T @ merge_heads(dQ).reshape(-1, C)
        g["dWk"] = X2.T @ merge_heads(dK).reshape(-1, C)
        g["dWv"] = X2.T @ merge_heads(dV).reshape(-1, C)
        self.grads = g

    def step(self, lr):
        m = self.m
        for k in self.W:
            dW = self.grads["d" + k]
            if k == "Wv" and "wv-not-updated" in m:
                continue                                   # the mistake: Wv forgotten
            if k == "Wk" and "wk-with-dwq" in m:
                dW = self.grads["dWq"]                     # the mistake: a copy-paste
            if "ascent" in m:
                self.W[k] += lr * dW                       # the mistake: gradient ascent
            elif "no-lr" in m:
                self.W[k] -= dW                            # the mistake: lr forgotten
            elif "lr-doubled" in m:
                self.W[k] -= 2 * lr * dW                   # the mistake: lr twice
            else:
                self.W[k] -= lr * dW


# The same lesson as functions (another student's notebook): params in a dict.
def forward_fn(params, X, h, causal):
    layer = MultiHeadAttention(params["Wq"], params["Wk"], params["Wv"], params["Wo"], h, causal)
    Y = layer.forward(X)
    return Y, layer


def sgd_fn(params, grads, lr):
    return {k: params[k] - lr * grads["d" + k] for k in params}


# ---------------------------------------------------------------------------
# The training loop of lesson 5
# ---------------------------------------------------------------------------

def mse(Y, target, m):
    if "loss-sum" in m:
        return np.sum((Y - target) ** 2)                   # the mistake: the sum
    return np.mean((Y - target) ** 2)


def train_class(X, W, target, h, causal, lr, steps, m):
    """-> losses (the loss before each step), the weights after the first step, its grads."""
    layer = MultiHeadAttention(*W, h, causal=causal, mistakes=m)
    losses, after, grads = [], None, None
    for s in range(steps):
        Y = layer.forward(X)
        losses.append(mse(Y, target, m))
        dY = 2 * (Y - target) / Y.size
        layer.backward(dY)
        grads = grads or dict(layer.grads)
        layer.step(lr[s] if isinstance(lr, list) else lr)
        after = after or {k: w.copy() for k, w in layer.W.items()}
    if "loss-after-each-step" in m:                        # losses[k] = loss after k steps
        losses.append(mse(layer.forward(X), target, m))
    if "after-whole-run" in m:
        after = {k: w.copy() for k, w in layer.W.items()}
    return losses, after, grads


def train_functions(X, W, target, h, causal, lr, steps, m):
    params = dict(zip(["Wq", "Wk", "Wv", "Wo"], W))
    losses, after, grads = [], None, None
    for _ in range(steps):
        Y, layer = forward_fn(params, X, h, causal)
        losses.append(mse(Y, target, m))
        layer.backward(2 * (Y - target) / Y.size)
        grads = grads or dict(layer.grads)
        params = sgd_fn(params, layer.grads, lr)
        after = after or dict(params)
    return losses, after, grads


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------

COURSE = dict(B=2, T=6, C=64, h=4)
OTHER = dict(B=3, T=5, C=24, h=3)
WEIGHTS = ["Wq", "Wk", "Wv", "Wo"]
AFTER = [w + "_after" for w in WEIGHTS]


def run(name, size=COURSE, causal=False, dtype="f8", mistakes=(), style="class", lr=0.1,
        steps=10, save=("lr", "steps", "losses", "after"), rows=None, lr_found=False,
        first=None, seed=5, note=""):
    """rows: { row: [status, diagnosis id or None] } the check must report (default: every
    row it makes matches); first: the first step of `losses` that differs (None: none)."""
    return dict(name=name, size=size, causal=causal, dtype=dtype, mistakes=set(mistakes),
                style=style, lr=lr, steps=steps, save=set(save), rows=rows,
                lr_found=lr_found, first=first, seed=seed, note=note)


def all_rows(status, did, losses=None, only=WEIGHTS):
    rows = {w + "_after": (["match", None] if w not in only else [status, did])
            for w in WEIGHTS}
    rows["losses"] = losses or [status, did]
    return rows


MATCH = all_rows("match", None)

RUNS = [
    run("correct-course", save=("lr", "steps", "losses", "after", "grads"), rows=MATCH,
        first=None, note="the course's sizes, every array saved"),
    run("correct-other-causal", size=OTHER, causal=True, style="functions", lr=0.05,
        rows=MATCH, note="another size, causal, written as functions"),
    run("correct-f32", dtype="f4", rows=MATCH, note="float32 throughout"),
    run("ascent", mistakes={"ascent"}, rows=all_rows("differs", "loop-sign"), first=1,
        note="W += lr * dW: the loss climbs"),
    run("ascent-other-f32", size=OTHER, dtype="f4", mistakes={"ascent"}, lr=0.2,
        rows=all_rows("differs", "loop-sign"), first=1, note="another size, float32"),
    run("no-lr", size=OTHER, mistakes={"no-lr"}, rows=all_rows("differs", "loop-lr"), first=1,
        note="W -= dW: lr left out"),
    run("lr-doubled", mistakes={"lr-doubled"}, rows=all_rows("differs", "loop-lr"), first=1,
        note="W -= 2 * lr * dW"),
    run("wv-not-updated", mistakes={"wv-not-updated"},
        rows=all_rows("differs", "loop-not-updated", only=["Wv"],
                      losses=["differs", "loop-not-updated"]), first=1,
        note="Wv left out of the step"),
    run("wk-with-dwq", size=OTHER, causal=True, mistakes={"wk-with-dwq"},
        rows=all_rows("differs", "loop-other-gradient", only=["Wk"],
                      losses=["differs", "loop-other-gradient"]), first=1,
        note="Wk -= lr * dWq"),
    run("lr-not-saved", save=("steps", "losses", "after"), lr=0.3, rows=MATCH, lr_found=True,
        note="lr not in the file: found from Wq and Wq_after"),
    run("loss-sum", mistakes={"loss-sum"},
        rows=all_rows("match", None, losses=["differs", "mse-loss-sum"]), first=0,
        note="the printed losses are np.sum((Y - target) ** 2)"),
    run("losses-n-plus-1", size=OTHER, mistakes={"loss-after-each-step"}, rows=MATCH,
        note="losses[k] = the loss after k steps: 11 of them"),
    run("losses-only", size=OTHER, save=("losses",), lr=0.5, rows={"losses": ["match", None]},
        lr_found=True, note="no *_after, no lr: lr fit from the second loss"),
    run("losses-only-ascent", save=("lr", "losses"), mistakes={"ascent"},
        rows={"losses": ["differs", "loop-sign"]}, first=1, note="no *_after"),
    run("after-whole-run", mistakes={"after-whole-run"}, rows=MATCH,
        note="Wq_after ... saved at the end of the 10 steps, not after the first"),
    run("ascent-whole-run", size=OTHER, mistakes={"ascent", "after-whole-run"},
        rows=all_rows("differs", "loop-sign"), first=1,
        note="W += lr * dW, the weights saved after all 10 steps"),
    run("page-download", size=OTHER, lr=[0.1] * 5 + [0.05] * 5, save=("lrs", "losses", "after"),
        mistakes={"loss-after-each-step", "after-whole-run"}, rows=MATCH,
        note="as the page's lesson-5 download: lrs, losses (steps + 1), the weights now"),
]


def inputs(size, seed, dtype):
    rng = np.random.default_rng(seed)
    B, T, C = size["B"], size["T"], size["C"]
    X = rng.standard_normal((B, T, C))
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    target = rng.standard_normal((B, T, C))
    t = np.float32 if dtype == "f4" else np.float64
    return X.astype(t), [w.astype(t) for w in W], target.astype(t)


def notebook(r):
    size = r["size"]
    X, W, target = inputs(size, r["seed"], r["dtype"])
    train = train_functions if r["style"] == "functions" else train_class
    losses, after, grads = train(X, W, target, size["h"], r["causal"], r["lr"], r["steps"],
                                 r["mistakes"])
    arrays = dict(X=X, Wq=W[0], Wk=W[1], Wv=W[2], Wo=W[3], target=target)
    save = r["save"]
    if "lr" in save:
        arrays["lr"] = np.asarray(r["lr"])
    if "lrs" in save:
        arrays["lrs"] = np.asarray(r["lr"])
    if "steps" in save:
        arrays["steps"] = np.asarray(r["steps"])
    if "losses" in save:
        arrays["losses"] = np.asarray(losses)
    if "after" in save:
        arrays.update({w + "_after": after[w] for w in WEIGHTS})
    if "grads" in save:
        arrays.update({"d" + w: grads["d" + w] for w in WEIGHTS})
    if "ascent" in r["mistakes"]:
        assert losses[-1] > losses[0], "an ascent run climbs"
    else:
        assert losses[-1] < losses[0], "a descent run goes down"
    return arrays


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for r in RUNS:
        arrays = notebook(r)
        np.savez(os.path.join(outdir, r["name"] + ".npz"), **arrays)
        lr = r["lr"]
        manifest.append(dict(name=r["name"], heads=r["size"]["h"], causal=r["causal"],
                             dtype=r["dtype"], saved=sorted(arrays), rows=r["rows"],
                             lr=lr if isinstance(lr, float) else None,
                             lr_found=r["lr_found"], first=r["first"],
                             steps=r["steps"], note=r["note"]))
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"notebook_training: {len(RUNS)} notebooks in {outdir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: notebook_training.py OUTDIR")
    main(sys.argv[1])
