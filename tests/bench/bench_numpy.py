#!/usr/bin/python3
"""NumPy peer of the mha-wasm benchmark (tests/bench/bench.mjs starts it; not a test).

The layer written the way the NumPy course writes it, in float64: X @ Wq, reshape/transpose
split of the heads, Q @ K^T / sqrt(hs), numerically stable softmax, @ V, merge, @ Wo; MSE loss;
the backward pass in the order of lesson 4 (dWo, dconcat, dheadout, dV, datt, dscores, dQ, dK,
merge, dWq, dWk, dWv, dX); a plain SGD update. One train step = forward + loss + backward + SGD.

Run with OPENBLAS_NUM_THREADS=1 (the driver sets it; `info` reports what OpenBLAS really uses).

Protocol (one command per line on stdin, one reply per line on stdout, prefixed with "@@ "):
    info                                  -> versions, BLAS library, OpenBLAS threads
    load NAME B T C H LR DIR              -> reads DIR/NAME.{X,target,W}.f64 (raw float64)
    run NAME MIN_SECONDS MIN_REPS         -> resets the weights, 1 untimed step (its loss is the
                                             "first loss"), then timed steps until both minimums
                                             are met: {"first_loss", "last_loss", "cpu", "times":
                                             [seconds, ...]} (cpu: process CPU seconds over the
                                             timed steps)
    quit
"""

import ctypes
import json
import os
import platform
import sys
import time

import numpy as np


# --------------------------------------------------------------------------------------------
# the layer, as the course writes it

def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)       # stable: subtract the row max
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(Z, h):
    B, T, C = Z.shape
    return Z.reshape(B, T, h, C // h).transpose(0, 2, 1, 3)   # (B, h, T, hs)


def merge_heads(Z):
    B, h, T, hs = Z.shape
    return Z.transpose(0, 2, 1, 3).reshape(B, T, h * hs)      # (B, T, C)


def mha_forward(X, W, h):
    C = X.shape[-1]
    hs = C // h
    Q = split_heads(X @ W["Wq"], h)
    K = split_heads(X @ W["Wk"], h)
    V = split_heads(X @ W["Wv"], h)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)        # (B, h, T, T)
    att = softmax(scores, axis=-1)
    headout = att @ V                                         # (B, h, T, hs)
    concat = merge_heads(headout)                             # (B, T, C)
    Y = concat @ W["Wo"]
    cache = dict(X=X, Q=Q, K=K, V=V, att=att, concat=concat)
    return Y, cache


def mha_backward(dY, cache, W, h):
    X, Q, K, V, att, concat = (cache[k] for k in ("X", "Q", "K", "V", "att", "concat"))
    C = X.shape[-1]
    hs = C // h
    s = np.sqrt(hs)
    dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)
    dconcat = dY @ W["Wo"].T
    dheadout = split_heads(dconcat, h)
    dV = att.transpose(0, 1, 3, 2) @ dheadout
    datt = dheadout @ V.transpose(0, 1, 3, 2)
    dscores = att * (datt - np.sum(datt * att, axis=-1, keepdims=True))
    dQ = dscores @ K / s
    dK = dscores.transpose(0, 1, 3, 2) @ Q / s
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)
    X2 = X.reshape(-1, C)
    dWq = X2.T @ dQm.reshape(-1, C)
    dWk = X2.T @ dKm.reshape(-1, C)
    dWv = X2.T @ dVm.reshape(-1, C)
    dX = dQm @ W["Wq"].T + dKm @ W["Wk"].T + dVm @ W["Wv"].T
    return dict(dWq=dWq, dWk=dWk, dWv=dWv, dWo=dWo, dX=dX)


def mse_loss(Y, target):
    diff = Y - target
    return np.mean(diff ** 2), 2.0 * diff / diff.size


def train_step(X, target, W, h, lr):
    """One step: forward, MSE loss, backward, SGD. Updates W in place (new arrays); returns the loss."""
    Y, cache = mha_forward(X, W, h)
    loss, dY = mse_loss(Y, target)
    g = mha_backward(dY, cache, W, h)
    for k in ("Wq", "Wk", "Wv", "Wo"):
        W[k] = W[k] - lr * g["d" + k]
    return loss


# --------------------------------------------------------------------------------------------
# the worker

def blas_info():
    """The BLAS library NumPy really loaded (from /proc/self/maps) and what OpenBLAS reports."""
    a = np.ones((64, 64))
    a @ a                                                     # make sure BLAS is loaded
    libs = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if ("blas" in path or "lapack" in path) and path not in libs:
                    libs.append(path)
    except OSError:
        pass
    info = {"libraries": libs, "openblas_config": None, "openblas_threads": None}
    for path in sorted(libs, key=lambda p: "openblas" not in os.path.basename(p)):
        try:
            lib = ctypes.CDLL(path)
            cfg = lib.openblas_get_config
            cfg.restype = ctypes.c_char_p
            nth = lib.openblas_get_num_threads
            nth.restype = ctypes.c_int
            info["openblas_config"] = cfg().decode()
            info["openblas_threads"] = nth()
            info["openblas_library"] = os.path.realpath(path)
            break
        except (OSError, AttributeError):
            continue
    return info


def read_f64(path, n):
    a = np.fromfile(path, dtype="<f8")
    if a.size != n:
        raise ValueError(f"{path}: {a.size} doubles, expected {n}")
    return a


def main():
    cases = {}

    def reply(obj):
        sys.stdout.write("@@ " + json.dumps(obj) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "quit":
                break
            if cmd[0] == "info":
                reply({"numpy": np.__version__, "python": platform.python_version(),
                       "executable": sys.executable,
                       "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
                       **blas_info()})
            elif cmd[0] == "load":
                name, B, T, C, h, lr, d = cmd[1], *map(int, cmd[2:6]), float(cmd[6]), cmd[7]
                n, cc = B * T * C, C * C
                X = read_f64(os.path.join(d, f"{name}.X.f64"), n).reshape(B, T, C)
                target = read_f64(os.path.join(d, f"{name}.target.f64"), n).reshape(B, T, C)
                Wflat = read_f64(os.path.join(d, f"{name}.W.f64"), 4 * cc)
                W0 = {k: Wflat[i * cc:(i + 1) * cc].reshape(C, C).copy()
                      for i, k in enumerate(("Wq", "Wk", "Wv", "Wo"))}
                cases[name] = dict(X=X, target=target, W0=W0, h=h, lr=lr)
                reply({"ok": True})
            elif cmd[0] == "run":
                name, min_time, min_reps = cmd[1], float(cmd[2]), int(cmd[3])
                c = cases[name]
                W = {k: v.copy() for k, v in c["W0"].items()}
                first = float(train_step(c["X"], c["target"], W, c["h"], c["lr"]))   # warm-up
                times = []
                total = 0.0
                cpu0 = time.process_time()
                while total < min_time or len(times) < min_reps:
                    t0 = time.perf_counter()
                    loss = train_step(c["X"], c["target"], W, c["h"], c["lr"])
                    dt = time.perf_counter() - t0
                    times.append(dt)
                    total += dt
                cpu = time.process_time() - cpu0
                if not np.isfinite(loss):
                    raise FloatingPointError(f"loss is {loss} after {len(times) + 1} steps")
                reply({"first_loss": first, "last_loss": float(loss), "cpu": cpu, "times": times})
            else:
                raise ValueError(f"unknown command {cmd[0]!r}")
        except Exception as e:   # report, keep serving
            reply({"error": f"{type(e).__name__}: {e}"})


if __name__ == "__main__":
    main()
