#!/usr/bin/python3
"""Course-style notebooks of lesson 5 (issue 19, item 2), written as a student would: their own
seed, weight scale, learning rate and number of steps, the layer as a class with forward,
backward and an SGD step on the MSE loss, the losses printed, the arrays saved with np.savez.

Usage:
    /usr/bin/python3 tests/reference/notebook_lesson5.py OUTDIR

For each notebook in NOTEBOOKS it writes, besides the inputs every file has (X, the initial Wq,
Wk, Wv, Wo and target), one .npz per variant of what else the student saved:
    OUTDIR/<name>-lr.npz       lr and steps
    OUTDIR/<name>-losses.npz   only losses (the loss before each step, len = steps): lr and steps
                               are to be found from them
    OUTDIR/<name>-after.npz    only Wq_after (Wq after the run) and steps: lr is to be found
    OUTDIR/<name>-final.npz    losses with the loss after the last step appended (len = steps + 1)
                               and Wq_after: which of the two lengths is the steps, Wq_after tells
    OUTDIR/<name>-diverges.npz lr = 10 and steps = 20, a run that diverges (its loss overflows to
                               NaN within the 20 steps): the page must stop and keep the steps taken
then OUTDIR/<name>.txt (what the notebook printed: its gradient check of the MSE loss at the
initial weights, two-point central differences with eps = 1e-5 over every entry, "gradient check
(two-point, eps 1e-5), max relative error: Wq 3.1e-07, ...", then "step 0: loss 1.0234" ...
"after 10 steps: loss 0.9876") and OUTDIR/expected.json (every loss and check error in full
precision, lr, steps, seed, scale),
for tests/model/lesson5-notebook.test.mjs and tests/browser/lesson5-notebook.test.mjs.
Plain NumPy float64, written independently of the page; nothing here reads the page's code.
"""

import json
import os
import sys

import numpy as np

# name, seed, scale ('0.02' or 'sqrt'), T, C, h, lr, steps
NOTEBOOKS = [
    {"name": "seed7-scale002", "seed": 7, "scale": "0.02", "T": 8, "C": 64, "h": 4,
     "lr": 0.5, "steps": 10},
    {"name": "seed3-sqrtC", "seed": 3, "scale": "sqrt", "T": 6, "C": 32, "h": 4,
     "lr": 0.05, "steps": 25},
]


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class MultiHeadAttention:
    """Lesson 5's layer: weights drawn from the notebook's rng at its scale."""

    def __init__(self, C, h, rng, scale):
        self.C, self.h, self.hs = C, h, C // h
        draw = (lambda: rng.standard_normal((C, C)) * 0.02) if scale == "0.02" else (
            lambda: rng.standard_normal((C, C)) / np.sqrt(C))
        self.Wq, self.Wk, self.Wv, self.Wo = draw(), draw(), draw(), draw()

    def split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, T, self.h, self.hs).transpose(0, 2, 1, 3)

    def merge(self, x):
        B, _, T, _ = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, self.C)

    def forward(self, X):
        self.X = X
        self.q, self.k, self.v = (self.split(X @ W) for W in (self.Wq, self.Wk, self.Wv))
        self.att = softmax(self.q @ self.k.transpose(0, 1, 3, 2) / np.sqrt(self.hs))
        self.concat = self.merge(self.att @ self.v)
        return self.concat @ self.Wo

    def backward(self, dY):
        X, C = self.X.reshape(-1, self.C), self.C
        self.dWo = self.concat.reshape(-1, C).T @ dY.reshape(-1, C)
        dout = self.split(dY @ self.Wo.T)
        datt = dout @ self.v.transpose(0, 1, 3, 2)
        dv = self.att.transpose(0, 1, 3, 2) @ dout
        ds = self.att * (datt - (datt * self.att).sum(axis=-1, keepdims=True)) / np.sqrt(self.hs)
        dq = ds @ self.k
        dk = ds.transpose(0, 1, 3, 2) @ self.q
        self.dWq = X.T @ self.merge(dq).reshape(-1, C)
        self.dWk = X.T @ self.merge(dk).reshape(-1, C)
        self.dWv = X.T @ self.merge(dv).reshape(-1, C)

    def step(self, lr):
        self.Wq -= lr * self.dWq
        self.Wk -= lr * self.dWk
        self.Wv -= lr * self.dWv
        self.Wo -= lr * self.dWo


def mse(mha, X, target):
    return np.mean((mha.forward(X) - target) ** 2)


def gradient_check(mha, X, target, eps=1e-5):
    """The check a notebook writes: two-point central differences of the MSE loss over every entry
    of each weight, max |a - n| / max(|a|, |n|) per weight (the analytic gradient from backward)."""
    Y = mha.forward(X)
    mha.backward(2 * (Y - target) / Y.size)
    errors, normwise = {}, {}
    for name in ("Wq", "Wk", "Wv", "Wo"):
        W, analytic = getattr(mha, name), getattr(mha, "d" + name).copy()
        numeric = np.zeros_like(W)
        worst = 0.0
        for i in np.ndindex(W.shape):
            x = W[i]
            W[i] = x + eps
            up = mse(mha, X, target)
            W[i] = x - eps
            down = mse(mha, X, target)
            W[i] = x
            n, a = (up - down) / (2 * eps), analytic[i]
            numeric[i] = n
            denom = max(abs(a), abs(n))
            worst = max(worst, abs(a - n) / denom if denom > 0 else 0.0)
        errors[name] = worst
        normwise[name] = float(np.linalg.norm(analytic - numeric)
                               / (np.linalg.norm(analytic) + np.linalg.norm(numeric)))
    return errors, normwise


def notebook(nb, out):
    rng = np.random.default_rng(nb["seed"])
    T, C, h, lr, steps = nb["T"], nb["C"], nb["h"], nb["lr"], nb["steps"]
    X = rng.standard_normal((1, T, C))
    mha = MultiHeadAttention(C, h, rng, nb["scale"])
    target = rng.standard_normal((1, T, C))
    W0 = {k: getattr(mha, k).copy() for k in ("Wq", "Wk", "Wv", "Wo")}

    check, check_norm = gradient_check(mha, X, target)
    printed = ["gradient check (two-point, eps 1e-5), max relative error: "
               + ", ".join(f"{k} {v:.1e}" for k, v in check.items()),
               "gradient check, norm-wise: "
               + ", ".join(f"{k} {v:.1e}" for k, v in check_norm.items())]
    losses = []
    for step in range(steps):
        Y = mha.forward(X)
        loss = np.mean((Y - target) ** 2)
        losses.append(loss)
        printed.append(f"step {step}: loss {loss:.4f}")
        mha.backward(2 * (Y - target) / Y.size)
        mha.step(lr)
    final = np.mean((mha.forward(X) - target) ** 2)
    printed.append(f"after {steps} steps: loss {final:.4f}")

    inputs = {"X": X, **W0, "target": target}
    base = os.path.join(out, nb["name"])
    np.savez(base + "-lr.npz", **inputs, lr=lr, steps=steps)
    np.savez(base + "-losses.npz", **inputs, losses=np.array(losses))
    np.savez(base + "-after.npz", **inputs, Wq_after=mha.Wq, steps=steps)
    np.savez(base + "-final.npz", **inputs, losses=np.array(losses + [final]), Wq_after=mha.Wq)
    np.savez(base + "-diverges.npz", **inputs, lr=10.0, steps=20)
    with open(base + ".txt", "w") as f:
        f.write("\n".join(printed) + "\n")
    return {
        "seed": nb["seed"], "scale": nb["scale"], "T": T, "C": C, "heads": h, "lr": lr,
        "steps": steps, "losses": [float(x) for x in losses] + [float(final)],
        "printed": printed, "check": check, "check_norm": check_norm,
        "variants": ["lr", "losses", "after", "final", "diverges"],
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
    print("notebook_lesson5: %d notebooks in %s" % (len(doc), out))
    for name, d in doc.items():
        print("  %s (seed %d, scale %s, lr %g, %d steps): %s ... %s"
              % (name, d["seed"], d["scale"], d["lr"], d["steps"], d["printed"][2],
                 d["printed"][-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
