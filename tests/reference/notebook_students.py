#!/usr/bin/python3
"""Students' notebooks for the notebook check (issue 11): NumPy written the way a student
writes the course, correct and with each known mistake, saved with np.savez.

Usage:
    /usr/bin/python3 tests/reference/notebook_students.py OUTDIR

For every run in RUNS it writes OUTDIR/<run>.npz (np.savez, as the student would) and
OUTDIR/<run>.json, the same arrays with lossless float64 values (non-finite numbers as the
strings "inf", "-inf", "nan"), and OUTDIR/manifest.json: for each run its heads, causal flag,
and what the check must report (every given result matching, or the results to blame, each with
the mistake's id). tests/check/check.test.mjs reads them.

UNSEEN (issue 18) are students' mistakes outside the catalogue (MISTAKES in
web/check/mistakes.js), at sizes other than the course's: the same files in the same OUTDIR,
listed in OUTDIR/unseen.json instead of manifest.json, each with `first` (the first saved result
that differs from the course's, computed here with the check's tolerance and asserted equal to
the blame's), the id of the analysis that should name it, and `cause`.
tests/tools/unseen-table.mjs runs the check on them.

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


def split_heads_swapped(x, h):
    B, T, C = x.shape
    return x.reshape(B, T, C // h, h).transpose(0, 3, 1, 2)   # the mistake: (hs, h), not (h, hs)


def merge_heads_swapped(x):
    B, h, T, hs = x.shape
    return x.transpose(0, 2, 3, 1).reshape(B, T, h * hs)       # its inverse


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)   # True above the diagonal


# ---------------------------------------------------------------------------
# The notebook: lesson 3's forward, the loss, lesson 4's backward
# ---------------------------------------------------------------------------

def forward(X, Wq, Wk, Wv, Wo, h, causal, m, fill, bias=None):
    """m: the set of mistakes; fill: what masked scores hold when the student masks scores;
    bias: the student's own bias vectors { "bq": ..., "bo": ... } (mistakes bias-q, bias-y)."""
    B, T, C = X.shape
    hs = C // h
    split = split_heads_no_transpose if "split-without-transpose" in m else split_heads
    merge = merge_heads_no_transpose if "merge-without-transpose" in m else merge_heads
    if "split-h-hs-swapped" in m:
        split, merge = split_heads_swapped, merge_heads_swapped

    if "weights-transposed" in m:
        q = X @ Wq.T
    elif "q-head-slice-fixed" in m:                  # per head, the slice never moves
        q = np.concatenate([X @ Wq[:, 0:hs] for i in range(h)], axis=-1)
    elif "bias-q" in m:
        q = X @ Wq + bias["bq"]                     # a Linear layer's habit: X @ W + b
    elif "q-residual" in m:
        q = X @ Wq + X                              # a skip connection inside the projection
    else:
        q = X @ Wq
    if "k-from-wq" in m:
        k = X @ Wq                                  # copy-pasted from the line above
    else:
        k = X @ Wk
    if "v-from-wk" in m:
        v = X @ Wk                                  # copy-pasted from the line above
    else:
        v = X @ Wv
    Q, K, V = split(q, h), split(k, h), split(v, h)

    if "missing-scale" in m:
        scores = Q @ K.transpose(0, 1, 3, 2)
    elif "scale-sqrt-C" in m:
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(C)
    elif "scale-hs" in m:
        scores = Q @ K.transpose(0, 1, 3, 2) / hs               # hs, not its square root
    elif "scale-times-sqrt-hs" in m:
        scores = Q @ K.transpose(0, 1, 3, 2) * np.sqrt(hs)      # multiplied, not divided
    elif "scores-transposed" in m:
        scores = K @ Q.transpose(0, 1, 3, 2) / np.sqrt(hs)      # K Qᵀ: keys on the rows
    else:
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    if "head-slice-k" in m:                         # a heads loop: k[:, :, i:i + hs]
        scores = np.stack([Q[:, i] @ k[:, :, i:i + hs].transpose(0, 2, 1) / np.sqrt(hs)
                           for i in range(h)], axis=1)
    if "head-missing" in m:
        scores = scores.copy()
        scores[:, h - 1] = 0                         # for i in range(h - 1): the last never filled

    if "mask-diagonal" in m:
        mask = np.triu(np.ones((T, T), dtype=bool), k=0)        # k=0: the diagonal masked too
    elif "mask-k2" in m:
        mask = np.triu(np.ones((T, T), dtype=bool), k=2)        # k=2: the next token let through
    elif "mask-tril" in m:
        mask = np.tril(np.ones((T, T), dtype=bool), k=-1)       # tril: the past masked
    else:
        mask = causal_mask(T)
    masked = scores
    if causal and "causal-mismatch" not in m and "mask-after-softmax" not in m:
        if "mask-fill-zero" in m:
            masked = np.where(mask, 0, scores)                  # 0 "removes" a score?
        else:
            masked = np.where(mask, fill, scores)
        if "mask-scores-in-place" in m:
            scores = masked
    if not causal and "causal-mismatch" in m:
        masked = np.where(causal_mask(T), -np.inf, scores)
        if "mask-scores-in-place" in m:
            scores = masked

    if "softmax-wrong-axis" in m:
        att = softmax(masked, axis=-2)
    elif "softmax-whole-array" in m:
        att = np.exp(masked) / np.sum(np.exp(masked))    # one softmax over every entry
    elif "softmax-temperature" in m:
        att = softmax(masked * 1.5, axis=-1)             # a temperature: nothing names it
    elif "softmax-axis-1" in m:
        att = softmax(masked, axis=1)                    # axis=1: over the heads
    elif "softmax-sum-no-keepdims" in m:              # a loop over (batch, head), 2-D blocks
        att = np.empty_like(masked)
        for b in range(B):
            for i in range(h):
                e = np.exp(masked[b, i] - np.max(masked[b, i], axis=-1, keepdims=True))
                att[b, i] = e / np.sum(e, axis=-1)    # no keepdims: the (T,) sums go by column
    elif "softmax-no-keepdims" in m:
        att = np.empty_like(masked)
        for b in range(B):
            for i in range(h):
                e = np.exp(masked[b, i] - np.max(masked[b, i], axis=-1))   # no keepdims at all
                att[b, i] = e / np.sum(e, axis=-1)
    elif "softmax-unshifted-sum" in m:              # the max taken in the numerator only
        e = np.exp(masked - masked.max(axis=-1, keepdims=True))
        att = e / np.exp(masked).sum(axis=-1, keepdims=True)
    elif "softmax-epsilon" in m:                     # a guard against dividing by zero
        e = np.exp(masked - masked.max(axis=-1, keepdims=True))
        att = e / (e.sum(axis=-1, keepdims=True) + 1e-6)
    elif "softmax-epsilon-every-exp" in m:           # the guard added to every exponential
        e = np.exp(masked - masked.max(axis=-1, keepdims=True)) + 1e-8
        att = e / e.sum(axis=-1, keepdims=True)
    elif "softmax-no-max" in m:
        att = np.exp(masked) / np.sum(np.exp(masked), axis=-1, keepdims=True)  # no max taken
    else:
        att = softmax(masked, axis=-1)
    if "mask-not-used" in m and causal:              # the masked array made, the softmax not fed it
        att = softmax(scores, axis=-1)
        scores = masked                              # (saved as the scores)
    if "att-one-slot" in m:                         # an inner loop's i over the heads' i
        slot = np.zeros_like(att)
        slot[:, 0] = att[:, h - 1]                  # the last head written into slot 0
        att = slot
    if "mask-after-softmax" in m and causal:
        att = softmax(scores, axis=-1) * ~mask           # the weights zeroed after the softmax
        if "renormalise" in m:
            att = att / att.sum(axis=-1, keepdims=True)  # ... and made to sum to 1 again
    if "attention-dropout" in m:                    # dropout on the weights (training mode)
        keep = np.random.default_rng(3).random(att.shape) >= 0.2
        att = att * keep / 0.8
    headout = att @ V
    if "head-slice-v" in m:                         # a heads loop: v[:, :, i:i + hs]
        headout = np.stack([att[:, i] @ v[:, :, i:i + hs] for i in range(h)], axis=1)
    if "heads-reversed" in m:
        concat = np.concatenate([headout[:, i] for i in reversed(range(h))], axis=-1)
    elif "merge-interleaved" in m:
        concat = headout.transpose(0, 2, 3, 1).reshape(B, T, C)  # (B, T, hs, h), not (B, T, h, hs)
    elif "tokens-reversed" in m:
        concat = merge(headout)[:, ::-1]                 # a stray [:, ::-1] left from an exercise
    elif "batch-flattened" in m:                      # the batch as one sequence of B·T tokens
        q1, k1, v1 = (split_heads(a.reshape(1, B * T, C), h) for a in (q, k, v))
        s1 = q1 @ k1.transpose(0, 1, 3, 2) / np.sqrt(hs)
        concat = merge_heads(softmax(s1) @ v1).reshape(B, T, C)
    elif "heads-split-tokens" in m:                   # np.hsplit on (B, T, C): axis 1, the tokens
        blocks = []
        for qi, ki, vi in zip(np.hsplit(q, h), np.hsplit(k, h), np.hsplit(v, h)):
            blocks.append(softmax(qi @ ki.transpose(0, 2, 1) / np.sqrt(hs)) @ vi)
        concat = np.hstack(blocks)
    else:
        concat = merge(headout)
    if "heads-averaged" in m:
        # each head through its rows of Wo, then the mean over the heads instead of the sum
        Y = np.mean([headout[:, i] @ Wo[i * hs:(i + 1) * hs] for i in range(h)], axis=0)
    elif "residual-in-layer" in m:
        Y = concat @ Wo + X                              # the block's residual, inside the layer
    elif "y-heads-skipped" in m:                      # a heads loop from 1: head 0 left out
        Y = sum(concat[..., i * hs:(i + 1) * hs] @ Wo[i * hs:(i + 1) * hs] for i in range(1, h))
    elif "bias-y" in m:
        Y = concat @ Wo + bias["bo"]
    elif "wo-transposed" in m:
        Y = concat @ Wo.T                                # Wo alone used as (out, in)
    else:
        Y = concat @ Wo
    if "scores-overwritten" in m:
        scores = att                                 # an in-place softmax: scores holds att
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
    elif "mse-grad-over-B" in m:
        dY = 2 * (Y - target) / Y.shape[0]           # "the mean over the batch" instead of Y.size
    elif "mse-grad-batch-mean" in m:
        dY = 2 * (Y - target) / Y.size / Y.shape[0]  # "and the mean over the batch"
    else:
        dY = 2 * (Y - target) / Y.size
    return loss, dY


def backward(f, X, Wq, Wk, Wv, Wo, h, dY, m):
    B, T, C = X.shape
    hs = C // h
    split = split_heads_no_transpose if {"split-without-transpose", "split-backward"} & m \
        else split_heads
    merge = merge_heads_no_transpose if {"merge-without-transpose", "merge-backward"} & m \
        else merge_heads
    if "split-h-hs-swapped" in m:
        split, merge = split_heads_swapped, merge_heads_swapped
    Q, K, V, att, concat = f["Q"], f["K"], f["V"], f["att"], f["concat"]
    if "backward-unmasked" in m:                     # A = softmax(S) again, the mask left out
        att = softmax(Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs), axis=-1)
    scale = 1.0 if "missing-scale-backward" in m else np.sqrt(hs)
    if "scale-hs-backward" in m:
        scale = hs                                   # the forward's / hs again
    if "scale-sqrt-C-backward" in m:
        scale = np.sqrt(C)                           # the model width, not the head size

    if "dw-transposed" in m:
        dWo = dY.reshape(-1, C).T @ concat.reshape(-1, C)
    elif "dwo-token-sums" in m:                       # einsum letters: t and s summed apart
        dWo = np.einsum('bti,bsj->ij', concat, dY)
    elif "dwo-batch-subset" in m:
        dWo = np.zeros((C, C), dtype=dY.dtype)
        for b in range(1, B):                        # range(1, B): item 0 left out
            dWo += concat[b].T @ dY[b]
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
    elif "dscores-diagonal" in m:
        dscores = att * (1 - att) * datt             # the softmax's derivative, element-wise
    elif "dscores-no-keepdims" in m:                  # a loop over (batch, head), 2-D blocks
        dscores = np.empty_like(att)
        for b in range(B):
            for i in range(h):
                a, d = att[b, i], datt[b, i]
                dscores[b, i] = a * (d - np.sum(a * d, axis=-1))   # no keepdims: by column
    else:
        dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))
    if "dscores-batch-mean" in m:
        dscores = dscores / B                        # "averaged over the batch"
    if "dq-transposed" in m:
        dQ = dscores.transpose(0, 1, 3, 2) @ K / scale
    elif "dq-scaled-twice" in m:
        dQ = dscores @ (K / np.sqrt(hs)) / scale     # K already scaled, then / sqrt(hs) again
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
    elif "dw-first-item" in m:
        dWq = X[0].T @ dQm[0]                        # lesson 2's (T, C) version: batch item 0
        dWk = X[0].T @ dKm[0]
        dWv = X[0].T @ dVm[0]
    else:
        dWq = X2.T @ dQm.reshape(-1, C)
        dWk = X2.T @ dKm.reshape(-1, C)
        dWv = X2.T @ dVm.reshape(-1, C)
    if "dx-missing-paths" in m:
        dX = dQm @ Wq.T
    elif "dx-q-path-twice" in m:
        dX = 2 * dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T  # the cell `dX += dQm @ Wq.T` run twice
    elif "dx-k-path-wq" in m:
        dX = dQm @ Wq.T + dKm @ Wq.T + dVm @ Wv.T    # copy-pasted, Wq left in the K path
    elif "backward-w-not-transposed" in m:
        dX = dQm @ Wq + dKm @ Wk + dVm @ Wv
    elif "dx-last-head" in m:                         # a heads loop: dX = where dX += was meant
        for i in range(h):
            c = slice(i * hs, (i + 1) * hs)
            dX = dQm[..., c] @ Wq[:, c].T + dKm[..., c] @ Wk[:, c].T + dVm[..., c] @ Wv[:, c].T
    elif "dx-integer" in m:                           # dX = np.zeros_like(X) of an integer X
        dX = (dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T).astype(np.int64)
    else:
        dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T
    if "grads-shared" in m:                           # dict.fromkeys(names, np.zeros((C, C)))
        dWq = dWk = dWv = dWo = dWq + dWk + dWv + dWo
    if "dq-input-gradient" in m:                     # the layer's gradient for its q input
        dQ = split(dQm @ Wq.T, h)
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
        dtype="f8", x2d=False, fill=-np.inf, blame=(), seed=7, note="", cause="", xscale=1):
    """One student's notebook. blame: [(result, id), ...] the check must report, in order;
    empty: every saved result matches. cause: what a good diagnosis must name (UNSEEN);
    xscale: X multiplied by it (large scores)."""
    return dict(name=name, size=size, causal=causal, loss=loss, mistakes=set(mistakes),
                save=list(save), merged=set(merged), dtype=dtype, x2d=x2d, fill=fill,
                blame=[list(b) for b in blame], seed=seed, note=note, cause=cause,
                xscale=xscale)


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
    run("weights-transposed-f32-merged", dtype="f4", merged=["Q", "K", "V"], loss="dot",
        mistakes={"weights-transposed"}, blame=[("Q", "weights-transposed")],
        note="float32, Q saved as X @ Wq.T before the split"),
    run("dk-transposed-f32-causal", dtype="f4", causal=True, mistakes={"dk-transposed"},
        blame=[("dK", "dk-transposed")]),
    run("missing-scale", mistakes={"missing-scale", "missing-scale-backward"},
        blame=[("scores", "missing-scale")], note="no 1/sqrt(hs) anywhere"),
    run("missing-scale-backward", mistakes={"missing-scale-backward"},
        blame=[("dQ", "factor")],
        note="no 1/sqrt(hs) in dQ and dK, the scores right: not the forward's missing-scale"),
    run("scale-sqrt-C", mistakes={"scale-sqrt-C"}, blame=[("scores", "scale-sqrt-C")]),
    run("scale-sqrt-C-backward", size=dict(B=2, T=4, C=18, h=2),
        mistakes={"scale-sqrt-C-backward"}, blame=[("dQ", "factor")],
        note="dQ and dK / np.sqrt(C), the scores right (C = 18, hs = 9)"),
    run("scale-sqrt-C-everywhere", causal=True, mistakes={"scale-sqrt-C", "scale-sqrt-C-backward"},
        blame=[("scores", "scale-sqrt-C")], note="/ np.sqrt(C) in the scores, dQ and dK"),
    run("wo-transposed", mistakes={"wo-transposed"}, blame=[("Y", "weights-transposed")],
        note="Q, K, V right; Y = concat @ Wo.T"),
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
    run("split-without-transpose-backward", mistakes={"split-backward"},
        blame=[("dheadout", "split-without-transpose")], note="only dheadout's split"),
    run("merge-without-transpose-backward", mistakes={"merge-backward"},
        blame=[("dWq", "merge-without-transpose")],
        note="only the backward's merges: dQm, dKm, dVm not saved, found at dWq"),
    run("mse-loss-sum", mistakes={"mse-loss-sum"}, blame=[("loss", "mse-loss-sum")]),
    run("mse-grad-factor", mistakes={"mse-grad-factor"}, blame=[("dY", "mse-grad-factor")]),
    run("mse-grad-factor-hidden", size=dict(B=3, T=5, C=12, h=3), mistakes={"mse-grad-half"},
        save=[n for n in ALL if n != "dY"], blame=[("dWo", "mse-grad-factor")],
        note="dY not saved, the 2 forgotten: found at dWo (B = 3: 1/2 is not also 1/B)"),
    run("dw-transposed", mistakes={"dw-transposed"}, blame=[("dWo", "dw-transposed")]),
    run("backward-w-not-transposed", mistakes={"backward-w-not-transposed"},
        blame=[("dconcat", "backward-w-not-transposed")]),
    run("dv-not-transposed", mistakes={"dv-not-transposed"}, blame=[("dV", "dv-not-transposed")]),
    run("dx-integer", mistakes={"dx-integer"}, blame=[("dX", "integer-array")],
        note="dX computed into an integer array"),
    run("softmax-unshifted-sum", mistakes={"softmax-unshifted-sum"}, xscale=2,
        blame=[("att", "softmax-not-normalised")], note="e / np.exp(scores).sum(...)"),
    run("head-missing", size=dict(B=2, T=3, C=6, h=3), mistakes={"head-missing"},
        blame=[("scores", "head-missing")], note="the heads' loop stops one early"),
    run("head-slice-v", size=dict(B=2, T=3, C=6, h=3), mistakes={"head-slice-v"},
        save=[n for n in ALL if n != "headout"], blame=[("concat", "head-slice")],
        note="a heads loop slicing v[:, :, i:i + hs]"),
    run("head-slice-k", causal=True, mistakes={"head-slice-k"},
        blame=[("scores", "head-slice")], note="a heads loop slicing k[:, :, i:i + hs]"),
    run("scores-overwritten", mistakes={"scores-overwritten"},
        blame=[("scores", "overwritten")], note="an in-place softmax over the scores"),
    run("dscores-missing-rowsum", mistakes={"dscores-missing-rowsum"},
        blame=[("dscores", "dscores-missing-rowsum")]),
    run("dq-transposed", mistakes={"dq-transposed"}, blame=[("dQ", "dq-transposed")]),
    run("dk-transposed", mistakes={"dk-transposed"}, blame=[("dK", "dk-transposed")]),
    run("dx-missing-paths", mistakes={"dx-missing-paths"}, blame=[("dX", "dx-missing-paths")]),
    run("dwo-token-sums", mistakes={"dwo-token-sums"}, blame=[("dWo", "token-sums")],
        note="np.einsum('bti,bsj->ij', concat, dY)"),
    run("att-one-slot", size=dict(B=2, T=4, C=8, h=4), causal=True, mistakes={"att-one-slot"},
        blame=[("att", "head-slot")], note="every head written into the last slot"),
    run("grads-shared", mistakes={"grads-shared"},
        blame=[(g, "shared-gradient") for g in ("dWo", "dWq", "dWk", "dWv")],
        note="one array for the four gradients"),
    run("backward-unmasked", causal=True, mistakes={"backward-unmasked"},
        blame=[("dV", "backward-unmasked"), ("dscores", "backward-unmasked")],
        note="A = softmax(S) recomputed in the backward"),
    run("softmax-epsilon", causal=True, mistakes={"softmax-epsilon"},
        blame=[("att", "softmax-epsilon")], note="e / (e.sum(...) + 1e-6)"),
    run("softmax-epsilon-every-exp", causal=True, mistakes={"softmax-epsilon-every-exp"},
        blame=[("att", "softmax-epsilon")], note="(e + 1e-8) / (e + 1e-8).sum(...)"),
    run("attention-dropout", mistakes={"attention-dropout"},
        blame=[("att", "attention-dropout")], note="att * keep / (1 - p), a dropout left on"),
    run("dq-input-gradient", mistakes={"dq-input-gradient"}, merged=["dQ"],
        blame=[("dQ", "input-gradient")], note="dQ saved as the layer's input gradient"),
    run("mask-not-used", causal=True, mistakes={"mask-not-used"},
        blame=[("att", "mask-not-used")], note="softmax(scores) beside masked_scores"),
    run("batch-flattened", size=dict(B=2, T=4, C=12, h=3), mistakes={"batch-flattened"},
        save=["Q", "K", "V", "concat", "Y"],
        blame=[("concat", "batch-flattened")], note="attention over X.reshape(1, B * T, C)"),
    run("heads-split-tokens", size=dict(B=2, T=6, C=12, h=3), mistakes={"heads-split-tokens"},
        save=["Q", "K", "V", "concat", "Y"],
        blame=[("concat", "token-split")], note="np.hsplit(q, h) on (B, T, C): the tokens cut"),
    run("dx-last-head", causal=True, mistakes={"dx-last-head"}, blame=[("dX", "head-share")],
        note="dX = … in the loop over the heads"),
    run("y-heads-skipped", size=dict(B=2, T=3, C=8, h=4), mistakes={"y-heads-skipped"},
        blame=[("Y", "head-share")], note="a heads loop from 1"),
    run("step-differs", mistakes={"softmax-temperature"}, blame=[("att", "step-differs")],
        note="softmax(1.5 * scores): no known mistake or analysis explains it"),
    # two independent mistakes: the local check finds the second
    run("two-mistakes", mistakes={"softmax-wrong-axis", "dk-transposed"},
        blame=[("att", "softmax-wrong-axis"), ("dK", "dk-transposed")]),
    run("two-mistakes-dot-causal", causal=True, loss="dot",
        mistakes={"scale-sqrt-C", "dscores-missing-rowsum"},
        blame=[("scores", "scale-sqrt-C"), ("dscores", "dscores-missing-rowsum")]),
]


# ---------------------------------------------------------------------------
# Mistakes outside the catalogue (issue 18): evidence for the analyses
# ---------------------------------------------------------------------------
# Not in RUNS/manifest.json (MISTAKES has no id for them yet): written to the same directory, listed
# in unseen.json. blame: the first differing result (asserted against `first`, computed by
# first_difference) and the id of the analysis that should name the cause: factor, added-array,
# bias, wrong-operand, permuted, reduction, softmax-not-normalised, mask-fill, non-finite,
# softmax-diagonal-only. cause: what a good diagnosis says. None is at the course's size.

B3 = dict(B=3, T=5, C=24, h=3)        # hs = 8
T7 = dict(B=2, T=7, C=20, h=4)        # hs = 5
B1 = dict(B=1, T=4, C=18, h=2)        # hs = 9
B2H4 = dict(B=2, T=5, C=16, h=4)      # hs = 4: 1/B = sqrt(hs / C) = 1/2
B3H5 = dict(B=3, T=6, C=20, h=5)      # hs = 4: 1/B = 1/3 is no other quantity of the layer
NO_DSCORES = [n for n in ALL if n != "dscores"]

UNSEEN = [
    # the scale
    run("scale-hs", size=B3, mistakes={"scale-hs", "scale-hs-backward"},
        blame=[("scores", "factor")], note="scores = Q @ K.T / hs (and dQ, dK / hs)",
        cause="your scores are 1/sqrt(hs) = 0.354 x the course's: divided by hs = 8 "
              "instead of sqrt(hs)"),
    run("scale-hs-f32-causal", size=T7, dtype="f4", causal=True,
        mistakes={"scale-hs", "scale-hs-backward"}, blame=[("scores", "factor")],
        note="float32, causal: scores = Q @ K.T / hs",
        cause="scores (on and below the diagonal) are 1/sqrt(5) = 0.447 x the course's: "
              "divided by hs instead of sqrt(hs)"),
    run("scale-times-sqrt-hs", size=B1, causal=True, mistakes={"scale-times-sqrt-hs"},
        blame=[("scores", "factor")], note="scores = Q @ K.T * np.sqrt(hs): multiplied",
        cause="scores are hs = 9 x the course's: multiplied by sqrt(hs) instead of divided"),
    # the causal mask
    run("mask-diagonal", size=T7, causal=True, fill=-1e9, mistakes={"mask-diagonal"},
        blame=[("att", "mask-fill")], note="mask np.triu(..., k=0) filled with -1e9",
        cause="the diagonal is masked too (np.triu k=0 instead of k=1): no token attends to "
              "itself, and row 0, every key at -1e9, is uniform 1/T"),
    run("mask-diagonal-nan", size=B3, causal=True, mistakes={"mask-diagonal"},
        blame=[("att", "non-finite")], note="mask np.triu(..., k=0) filled with -np.inf",
        cause="att's row 0 is NaN: with the diagonal masked (k=0) query 0 has every key at "
              "-inf, so the softmax is -inf - (-inf) = NaN (0/0)"),
    run("mask-k2-f32", size=B1, dtype="f4", causal=True, mistakes={"mask-k2"},
        blame=[("att", "mask-fill")], note="float32: mask np.triu(..., k=2)",
        cause="the mask is off by one (k=2): each query also sees the next token, entries "
              "(i, i+1) are not 0"),
    run("mask-tril", size=B3, causal=True, mistakes={"mask-tril"},
        blame=[("att", "mask-fill")], note="mask np.tril(..., k=-1): the past masked",
        cause="the mask is the transpose of the causal one (np.tril k=-1): the entries below "
              "the diagonal are 0 and those above are not"),
    run("mask-fill-zero-only-Y", size=T7, causal=True, mistakes={"mask-fill-zero"},
        save=["Y", "loss", "dX"], blame=[("Y", "mask-fill")],
        note="np.where(mask, 0, scores), only Y, loss and dX saved",
        cause="Y comes from an att whose mask fills with 0 instead of -inf"),
    run("mask-fill-zero", size=B3, causal=True, mistakes={"mask-fill-zero"},
        blame=[("att", "mask-fill")], note="np.where(mask, 0, scores)",
        cause="masked scores filled with 0, not -inf: the future keys keep exp(0 - max) of "
              "the weight; the mask is there (not the causal switch), its fill is wrong"),
    run("mask-fill-zero-f32-in-place", size=T7, dtype="f4", causal=True,
        mistakes={"mask-fill-zero", "mask-scores-in-place"}, blame=[("att", "mask-fill")],
        note="float32: scores = np.where(mask, 0, scores), saved so",
        cause="the fill is 0 (your scores hold 0 above the diagonal): the future keys get "
              "weight; fill with -np.inf"),
    run("correct-mask-fill-1e4", size=T7, causal=True, fill=-1e4,
        mistakes={"mask-scores-in-place"}, note="masked with -1e4 in place: exp underflows to 0",
        cause="correct: -1e4 is -inf within tolerance (exp(-1e4) = 0)"),
    run("correct-mask-fill-1e4-f32", size=B3H5, dtype="f4", causal=True, fill=-1e4,
        note="float32, masked with -1e4", cause="correct: exp(-1e4) is 0 in float32 too"),
    run("mask-after-softmax", size=B2H4, causal=True, mistakes={"mask-after-softmax"},
        blame=[("att", "softmax-not-normalised")], note="att = softmax(scores) * ~mask",
        cause="the mask is applied after the softmax: the masked weights are 0 but each row "
              "sums to less than 1 (row 0 to att[..., 0, 0] of the unmasked softmax)"),
    run("correct-mask-after-softmax-renormalised", size=B3, dtype="f4", causal=True,
        mistakes={"mask-after-softmax", "renormalise"},
        note="float32: att = softmax(scores) * ~mask, then att / att.sum(-1)",
        cause="correct: renormalised, it equals the masked softmax"),
    # the heads
    run("scale-hs-only-att", size=B3, mistakes={"scale-hs", "scale-hs-backward"},
        save=["att", "Y", "loss", "dX"], blame=[("att", "factor")],
        note="scores = Q @ K.T / hs, the scores not saved: found at att",
        cause="att is the softmax of scores divided by hs instead of sqrt(hs)"),
    run("heads-reversed", size=T7, mistakes={"heads-reversed"}, blame=[("concat", "permuted")],
        note="concat = np.concatenate([headout[:, i] for i in reversed(range(h))], -1)",
        cause="concat's head blocks are in the order 3, 2, 1, 0"),
    run("q-head-slice-fixed", size=B3, mistakes={"q-head-slice-fixed"},
        blame=[("Q", "permuted")], note="q = concat([X @ Wq[:, 0:hs] for i in range(h)])",
        cause="every head of Q is the course's head 0"),
    run("heads-reversed-only-Y", size=T7, mistakes={"heads-reversed"},
        save=["Y", "loss", "dX"], blame=[("Y", "permuted")],
        note="concat's heads reversed, concat not saved: found at Y",
        cause="Y is the course's step from a concat with its head blocks in the order 3, 2, 1, 0"),
    run("merge-interleaved-f32", size=B3, dtype="f4", mistakes={"merge-interleaved"},
        blame=[("concat", "permuted")], note="float32: concat = headout.transpose(0, 2, 3, 1)"
                                             ".reshape(B, T, C)",
        cause="concat's columns interleaved: feature j of head i at column j*h + i, not "
              "i*hs + j (the (h, hs) axes swapped before the reshape)"),
    run("tokens-reversed", size=B3, causal=True, mistakes={"tokens-reversed"},
        blame=[("concat", "permuted")], note="concat = merge_heads(headout)[:, ::-1]",
        cause="concat's tokens are in reverse order (axis 1 flipped)"),
    run("heads-averaged", size=T7, mistakes={"heads-averaged"}, blame=[("Y", "reduction")],
        note="Y = np.mean([headout[:, i] @ Wo[i*hs:(i+1)*hs] for i in range(h)], axis=0)",
        cause="Y is 1/h = 0.25 x the course's: the heads averaged instead of summed "
              "(concatenated); concat matches"),
    run("split-h-hs-swapped", size=T7, causal=True, mistakes={"split-h-hs-swapped"},
        blame=[("Q", "permuted")], note="split: x.reshape(B, T, hs, h).transpose(0, 3, 1, 2)",
        cause="h and hs swapped in the reshape: head i takes columns i, i+h, i+2h, ... of "
              "X @ Wq instead of the block i*hs ... (i+1)*hs - 1"),
    # the projections
    run("k-from-wq", size=B1, mistakes={"k-from-wq"}, blame=[("K", "wrong-operand")],
        note="K = X @ Wq", cause="K is computed with Wq: your K equals your Q"),
    run("v-from-wk-f32-causal", size=B3, dtype="f4", causal=True, mistakes={"v-from-wk"},
        blame=[("V", "wrong-operand")], note="float32, causal: V = X @ Wk",
        cause="V is computed with Wk: your V equals your K"),
    run("bias-q", size=B3, mistakes={"bias-q"}, blame=[("Q", "bias")],
        note="q = X @ Wq + bq, bq not saved",
        cause="Q has the same vector added to every token (a bias bq, 0.1 * N(0, 1)): a "
              "constant per-column offset; the course's layer has no bias"),
    run("bias-y", size=T7, causal=True, mistakes={"bias-y"},
        blame=[("Y", "bias")], note="Y = concat @ Wo + bo, bo not saved (saved, it is read: "
        "readings.test)", cause="Y has a constant per-column offset, a bias the file does not "
        "hold: the course's layer has no bias"),
    run("q-residual", size=T7, mistakes={"q-residual"}, blame=[("Q", "added-array")],
        note="q = X @ Wq + X: a residual inside the query projection, Q saved split",
        cause="Q - expected = split_heads(X)"),
    run("residual-in-layer-f32", size=B1, dtype="f4", mistakes={"residual-in-layer"},
        blame=[("Y", "added-array")], note="float32: Y = concat @ Wo + X",
        cause="Y - expected = X: the block's residual added inside the layer"),
    # scores and the softmax
    run("scores-transposed", size=T7, mistakes={"scores-transposed"},
        blame=[("scores", "permuted")], note="scores = K @ Q.transpose(0, 1, 3, 2) / sqrt(hs)",
        cause="scores transposed (the last two axes swapped): K @ Q.T, keys on the rows"),
    run("scores-transposed-causal", size=B1, causal=True, mistakes={"scores-transposed"},
        blame=[("scores", "permuted")], note="causal: scores = K @ Q.transpose(0, 1, 3, 2)",
        cause="scores transposed: below the diagonal yours holds the course's entries above it"),
    run("softmax-whole-array-causal", size=T7, causal=True, mistakes={"softmax-whole-array"},
        blame=[("att", "softmax-not-normalised")], note="att = np.exp(s) / np.exp(s).sum()",
        cause="the softmax normalised over the whole array: all of att sums to 1, each row to "
              "far less"),
    run("softmax-axis-1", size=B3, mistakes={"softmax-axis-1"},
        blame=[("att", "softmax-not-normalised")], note="att = softmax(scores, axis=1)",
        cause="the softmax over axis 1, the heads: for each (batch, query, key) the heads' "
              "weights sum to 1, the rows do not"),
    run("softmax-no-max-overflow-f32", size=T7, dtype="f4", causal=True, xscale=8,
        mistakes={"softmax-no-max"}, blame=[("att", "non-finite")],
        note="float32, X ~ 8 N(0, 1): att = np.exp(s) / np.exp(s).sum(-1), no max",
        cause="att is NaN at the scores above 88.7 (up to 278 here): without the max "
              "subtracted np.exp overflows float32 to inf, and inf / inf = NaN"),
    run("correct-softmax-no-max", size=B3H5, mistakes={"softmax-no-max"},
        note="float64: np.exp(s) / np.exp(s).sum(-1), no max, ordinary scores",
        cause="correct: without overflow the max changes nothing within tolerance"),
    run("softmax-sum-no-keepdims", size=B3, mistakes={"softmax-sum-no-keepdims"},
        blame=[("att", "softmax-not-normalised")],
        note="per (batch, head) block: att = e / np.sum(e, axis=-1)",
        cause="the row sums without keepdims broadcast along the last axis: entry (i, j) is "
              "divided by the sum of row j"),
    run("softmax-no-keepdims-f32", size=T7, dtype="f4", mistakes={"softmax-no-keepdims"},
        blame=[("att", "softmax-not-normalised")],
        note="float32, per block: e = np.exp(s - s.max(-1)); att = e / e.sum(-1)",
        cause="max and sum without keepdims: both broadcast by column"),
    run("dscores-no-keepdims", size=B3H5, mistakes={"dscores-no-keepdims"},
        blame=[("dscores", "wrong-operand")],
        note="per block: dscores = att * (datt - np.sum(att * datt, axis=-1))",
        cause="the row sums without keepdims subtract by column"),
    # the loss
    run("dy-over-B", size=B3, mistakes={"mse-grad-over-B"},
        blame=[("dY", "factor")], note="dY = 2 * (Y - target) / B",
        cause="dY is T*C = 120 x the course's: divided by B instead of Y.size"),
    run("dy-batch-mean", size=B3H5, mistakes={"mse-grad-batch-mean"},
        blame=[("dY", "factor")], note="dY = 2 * (Y - target) / Y.size / B",
        cause="dY is 1/B = 1/3 x the course's: divided by B again after Y.size (a batch "
              "mean of a loss that is already the mean)"),
    run("dy-batch-mean-B2h4", size=B2H4, mistakes={"mse-grad-batch-mean"},
        blame=[("dY", "factor")], note="B = 2: dY = 2 * (Y - target) / Y.size / B",
        cause="dY is 1/2 x the course's: 1/B at B = 2, the same number as a missing 2 "
              "(and sqrt(hs/C)): both causes, and a run with another B tells them apart"),
    # the backward
    run("dscores-diagonal-only-dX", size=B1, mistakes={"dscores-diagonal"},
        save=["Y", "loss", "dWo", "dX"], blame=[("dX", "softmax-diagonal-only")],
        note="dscores = att * (1 - att) * datt, only dWo and dX of the backward saved",
        cause="dX comes from a softmax backward with only the Jacobian's diagonal"),
    run("dscores-diagonal", size=T7, mistakes={"dscores-diagonal"},
        blame=[("dscores", "softmax-diagonal-only")], note="dscores = att * (1 - att) * datt",
        cause="only the diagonal of the softmax's Jacobian: the -att_i att_j terms dropped"),
    run("dscores-diagonal-f32-causal", size=B3, dtype="f4", causal=True,
        mistakes={"dscores-diagonal"}, blame=[("dscores", "softmax-diagonal-only")],
        note="float32, causal: dscores = att * (1 - att) * datt",
        cause="only the diagonal of the softmax's Jacobian: the -att_i att_j terms dropped"),
    run("dscores-batch-mean", size=B3H5, mistakes={"dscores-batch-mean"},
        blame=[("dscores", "factor")], note="dscores = att * (datt - rowsum) / B",
        cause="dscores is 1/B = 1/3 x the course's: divided by the batch size"),
    run("dscores-batch-mean-B2h4-hidden", size=B2H4, mistakes={"dscores-batch-mean"},
        save=NO_DSCORES, blame=[("dQ", "factor")],
        note="B = 2, h = 4: dscores / B, dscores not saved",
        cause="dQ and dK are 1/2 x the course's: dscores divided by B = 2 - the same number as "
              "sqrt(hs/C) at h = 4, but the scores match with sqrt(hs), so not scale-sqrt-C"),
    run("dq-scaled-twice", size=B1, mistakes={"dq-scaled-twice"}, blame=[("dQ", "factor")],
        note="dQ = dscores @ (K / np.sqrt(hs)) / np.sqrt(hs)",
        cause="dQ is 1/sqrt(hs) = 1/3 x the course's: divided by sqrt(hs) twice (dK right)"),
    run("grads-not-zeroed", size=T7, causal=True, mistakes={"grads-not-zeroed"},
        blame=[("dWo", "factor")], note="backward run twice, dW += ... never zeroed",
        cause="every dW is 2 x the course's and dX is right: the gradients accumulated over "
              "two backward calls"),
    run("dw-first-item", size=B3, mistakes={"dw-first-item"}, blame=[("dWq", "reduction")],
        note="dWq = X[0].T @ dQm[0] (and dWk, dWv)",
        cause="dWq, dWk, dWv from batch item 0 only: items 1 and 2 left out of the sum"),
    run("dwo-batch-subset", size=B3H5, causal=True, mistakes={"dwo-batch-subset"},
        blame=[("dWo", "reduction")], note="dWo += concat[b].T @ dY[b] for b in range(1, B)",
        cause="dWo sums batch items 1 and 2 only: item 0 left out"),
    run("dx-q-path-twice", size=B3, mistakes={"dx-q-path-twice"},
        blame=[("dX", "wrong-operand")], note="dX = 2 * dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T",
        cause="dX counts the Q path twice: dX - expected = dQm @ Wq.T"),
    run("dx-k-path-wq-f32-causal", size=T7, dtype="f4", causal=True, mistakes={"dx-k-path-wq"},
        blame=[("dX", "wrong-operand")], note="float32: dX = dQm @ Wq.T + dKm @ Wq.T + ...",
        cause="dX's K path uses Wq instead of Wk"),
]


def inputs(size, seed, dtype, xscale=1):
    rng = np.random.default_rng(seed)
    B, T, C = size["B"], size["T"], size["C"]
    X = rng.standard_normal((B, T, C))
    if xscale != 1:
        X = X * xscale
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    target = rng.standard_normal((B, T, C))
    G = rng.standard_normal((B, T, C))
    t = np.float32 if dtype == "f4" else np.float64
    return X.astype(t), [w.astype(t) for w in W], target.astype(t), G.astype(t)


def notebook(r, reference=False):
    """The student's arrays; reference: the course's, with no mistake, computed in float64 from
    the same inputs (what the check's engine computes)."""
    size = r["size"]
    h = size["h"]
    X, (Wq, Wk, Wv, Wo), target, G = inputs(size, r["seed"], r["dtype"], r["xscale"])
    m = r["mistakes"]
    fill = r["fill"]
    if reference:
        X, Wq, Wk, Wv, Wo, target, G = (a.astype(np.float64)
                                        for a in (X, Wq, Wk, Wv, Wo, target, G))
        m, fill = set(), -np.inf
    bias = None
    if {"bias-q", "bias-y"} & m:                  # the student's biases, 0.1 * N(0, 1)
        b = np.random.default_rng(r["seed"] + 1).standard_normal((2, size["C"])) * 0.1
        bias = dict(bq=b[0].astype(X.dtype), bo=b[1].astype(X.dtype))
    f = forward(X, Wq, Wk, Wv, Wo, h, r["causal"], m, fill, bias)
    out = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo)
    if bias is not None:
        out.update(bias)
    for name in FORWARD:
        out[name] = f[name]
    if r["loss"] is not None:
        loss, dY = loss_and_dY(f["Y"], target if r["loss"] == "mse" else None, G, m)
        out["loss"] = np.asarray(loss)
        out["dY"] = dY
        if r["loss"] == "mse":
            out["target"] = target
        out.update(backward(f, X, Wq, Wk, Wv, Wo, h, dY, m))
        if "grads-not-zeroed" in m:
            # the backward cell run a second time; the student's layer adds to its gradients
            # (self.dWq += ...) and nothing zeroes them in between. dX is returned, not added.
            again = backward(f, X, Wq, Wk, Wv, Wo, h, dY, m)
            for name in ("dWo", "dWq", "dWk", "dWv"):
                out[name] = out[name] + again[name]
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


def write_run(outdir, r, arrays):
    """OUTDIR/<run>.npz as the student saves it, and its lossless JSON sidecar <run>.json."""
    np.savez(os.path.join(outdir, r["name"] + ".npz"), **arrays)
    side = {n: dict(shape=list(a.shape), dtype=a.dtype.str,
                    data=[encode(x) for x in np.asarray(a, dtype=np.float64).ravel()])
            for n, a in arrays.items()}
    with open(os.path.join(outdir, r["name"] + ".json"), "w") as fh:
        json.dump(side, fh)


def first_difference(r, arrays, expected):
    """The first saved result, in the check's order, that differs from the course's (expected):
    np.allclose with rtol 0 and atol 1e-10 (float64) or 1e-5 (float32) × max|expected|, the
    check's tolerance; causal scores above the diagonal are not compared. None: all match."""
    rel = 1e-5 if r["dtype"] == "f4" else 1e-10
    T = r["size"]["T"]
    for name in ALL:
        if name not in arrays or (name == "dY" and r["loss"] != "mse"):
            continue
        yours = np.asarray(arrays[name], dtype=np.float64)
        want = np.asarray(expected[name], dtype=np.float64)
        assert yours.shape == want.shape, (r["name"], name, yours.shape, want.shape)
        if name == "scores" and r["causal"] and T > 1:
            compared = ~np.broadcast_to(causal_mask(T), want.shape)
            yours, want = yours[compared], want[compared]
        scale = np.max(np.abs(want[np.isfinite(want)]), initial=0.0)
        atol = rel * scale if scale > 0 else 1e-300
        if not np.allclose(yours, want, rtol=0, atol=atol):
            return name
    return None


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for r in RUNS:
        arrays = notebook(r)
        write_run(outdir, r, arrays)
        manifest.append(dict(name=r["name"], heads=r["size"]["h"], causal=r["causal"],
                             loss=r["loss"], dtype=r["dtype"], saved=sorted(arrays),
                             blame=r["blame"], note=r["note"]))
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"notebook_students: {len(RUNS)} notebooks in {outdir}")

    # UNSEEN: the same files, listed in unseen.json with the first differing result computed here
    assert not {r["name"] for r in RUNS} & {r["name"] for r in UNSEEN}
    assert len({r["name"] for r in UNSEEN}) == len(UNSEEN)
    unseen = []
    for r in UNSEEN:
        assert r["size"] != COURSE and len(r["blame"]) <= 1, r["name"]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            arrays = notebook(r)             # NaN and inf are what some of these students get
        first = first_difference(r, arrays, notebook(r, reference=True))
        want = r["blame"][0][0] if r["blame"] else None
        assert first == want, f"{r['name']}: first differing result {first}, blame says {want}"
        write_run(outdir, r, arrays)
        unseen.append(dict(name=r["name"], heads=r["size"]["h"], causal=r["causal"],
                           loss=r["loss"], dtype=r["dtype"], size=r["size"],
                           mistakes=sorted(r["mistakes"]), saved=sorted(arrays),
                           first=first, blame=r["blame"], note=r["note"], cause=r["cause"]))
    with open(os.path.join(outdir, "unseen.json"), "w") as fh:
        json.dump(unseen, fh, indent=1)
    # the tests check them as they check the catalogue's: one manifest
    manifest += [dict(u, unseen=True) for u in unseen]
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    print(f"notebook_students: {len(UNSEEN)} unseen notebooks (unseen.json) in {outdir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: notebook_students.py OUTDIR")
    main(sys.argv[1])
