"""Notebooks saved the way public NumPy attention code saves them, for
tests/check/readings.test.mjs (issue 35, item 2: reading a file is a search too): gradients
under their authors' spellings, per-head weight lists with their output projection (one Wo saved
as WO_0, or per-head slices of it), X saved features first (C, T), a single head's scores and att
without their head axis, and files the check cannot run on. Each layer is computed here in the
author's own layout (per-head loops, features-first matrices), never by the check's code.

    /usr/bin/python3 readings.py OUT_DIR

writes OUT_DIR/<run>.npz (np.savez, as the author would) and OUT_DIR/manifest.json: for each
run the heads to check with and the course's weights Wq, Wk, Wv, Wo (C, C, used as X @ W) that
the reading must give, as exact float64 values.
"""

import json
import os
import sys

import numpy as np


def softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def course_layer(X, Wq, Wk, Wv, Wo, h, target):
    """The course's layer (lessons 3-4) on X (B, T, C): every array under its course name."""
    B, T, C = X.shape
    hs = C // h
    split = lambda x: x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    merge = lambda x: x.transpose(0, 2, 1, 3).reshape(B, T, C)
    Q, K, V = split(X @ Wq), split(X @ Wk), split(X @ Wv)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    att = softmax(scores)
    headout = att @ V
    concat = merge(headout)
    Y = concat @ Wo
    loss = np.mean((Y - target) ** 2)
    dY = 2 * (Y - target) / Y.size
    dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)
    dconcat = dY @ Wo.T
    dheadout = split(dconcat)
    dV = att.transpose(0, 1, 3, 2) @ dheadout
    datt = dheadout @ V.transpose(0, 1, 3, 2)
    dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))
    dQ = dscores @ K / np.sqrt(hs)
    dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)
    dQm, dKm, dVm = merge(dQ), merge(dK), merge(dV)
    flat = X.reshape(-1, C)
    dWq = flat.T @ dQm.reshape(-1, C)
    dWk = flat.T @ dKm.reshape(-1, C)
    dWv = flat.T @ dVm.reshape(-1, C)
    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T
    return dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, target=target, Q=Q, K=K, V=V, scores=scores,
                att=att, headout=headout, concat=concat, Y=Y, loss=loss, dY=dY, dWo=dWo,
                dconcat=dconcat, dheadout=dheadout, dV=dV, datt=datt, dscores=dscores, dQ=dQ,
                dK=dK, dWq=dWq, dWk=dWk, dWv=dWv, dX=dX)


def draw(seed, B, T, C):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((B, T, C))
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    return X, W, rng.standard_normal((B, T, C))


# ---------------------------------------------------------------------------
# 1. gradients under other spellings (the course's layer, renamed)
# ---------------------------------------------------------------------------

GRADIENT_SPELLINGS = {
    # run: { course name: the author's name }
    "grads-suffix": dict(dWq="W_q_grads", dWk="W_k_grads", dWv="W_v_grads", dWo="W_o_grads",
                         dX="d_input", dY="grad_out", datt="attn_grad"),
    "grad-prefix": dict(dWq="grad_Wq", dWk="grad_Wk", dWv="grad_Wv", dWo="grad_Wo",
                        dX="grad_x", dscores="grad_scores", dV="grad_V"),
    "grad-suffix": dict(dWq="Wq_grad", dWk="Wk_grad", dWv="Wv_grad", dWo="Wo_grad", dX="dx",
                        dQ="Q_grad", dK="K_grad"),
    "d-prefix": dict(dWq="dW_q", dWk="dW_k", dWv="dW_v", dWo="dL_dWo", dX="dL_dX",
                     dconcat="d_concat", dheadout="grad_head_out"),
}


def gradient_names(name):
    X, W, target = draw(11, 2, 5, 6)
    layer = course_layer(X, *W, 3, target)
    spell = GRADIENT_SPELLINGS[name]
    arrays = {spell.get(k, k): v for k, v in layer.items()}
    return arrays, dict(heads=3, course=dict(zip(["Wq", "Wk", "Wv", "Wo"], W)),
                        spelled=spell)


# ---------------------------------------------------------------------------
# 2. per-head weight lists WQ_<i>_h ... and the output projection
# ---------------------------------------------------------------------------

def per_head_layer(X, Wq, Wk, Wv, out, target):
    """A per-head implementation: head i has its own (C, hs) Wq[i], Wk[i], Wv[i]; out(o_i, i) is
    head i's part of Y, so Y = sum_i out(o_i, i). Returns Y, the heads' att, o and loss."""
    B, T, C = X.shape
    hs = Wq[0].shape[1]
    Y = np.zeros((B, T, C))
    atts, outs = [], []
    for i in range(len(Wq)):
        q, k, v = X @ Wq[i], X @ Wk[i], X @ Wv[i]
        a = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(hs))
        o = a @ v
        Y += out(o, i)
        atts.append(a)
        outs.append(o)
    return Y, np.stack(atts, axis=1), np.concatenate(outs, axis=-1), np.mean((Y - target) ** 2)


def per_head(name):
    rng = np.random.default_rng(23)
    B, T, C, h = 2, 4, 6, 3
    hs = C // h
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv = ([rng.standard_normal((C, hs)) / np.sqrt(C) for _ in range(h)] for _ in range(3))
    target = rng.standard_normal((B, T, C))
    rows = lambda i: slice(i * hs, (i + 1) * hs)
    layer = lambda out: per_head_layer(X, Wq, Wk, Wv, out, target)
    out_in = name == "per-head-wo-out-in-rows"
    wo_blocks = out_in or name == "per-head-wo-linear-blocks"
    # nn.Linear(C, hs) per head stores (hs, C) and is used as X @ W.T
    saved = (lambda w: w.T) if out_in else (lambda w: w)
    arrays = dict(X=X, target=target)
    for i in range(h):
        arrays[f"WQ_{i}_h"], arrays[f"WK_{i}_h"], arrays[f"WV_{i}_h"] = (
            saved(Wq[i]), saved(Wk[i]), saved(Wv[i]))
    if name == "per-head-wo-single":
        # one (C, C) output projection after the heads' concatenation, saved as WO_0
        Wo = rng.standard_normal((C, C)) / np.sqrt(C)
        Y, att, concat, loss = layer(lambda o, i: o @ Wo[rows(i)])
        arrays["WO_0"] = Wo
    elif name == "per-head-wo-rows":
        # head i's own (hs, C) block of the output projection: Y = sum_i o_i @ Wo[i]
        Wos = [rng.standard_normal((hs, C)) / np.sqrt(C) for _ in range(h)]
        Y, att, concat, loss = layer(lambda o, i: o @ Wos[i])
        for i in range(h):
            arrays[f"WO_{i}_h"] = Wos[i]
        Wo = np.vstack(Wos)
    elif wo_blocks:
        # one nn.Linear(C, C) output projection, its (out, in) weight saved in row blocks of hs
        # (blocks of output features, not heads): Y = concat @ Wp.T (the heads' own weights
        # (out, in) too, or (C, hs) used as X @ W)
        Wp = rng.standard_normal((C, C)) / np.sqrt(C)
        Y, att, concat, loss = layer(lambda o, i: o @ Wp.T[rows(i)])
        for i in range(h):
            arrays[f"WO_{i}_h"] = Wp[rows(i)]
        Wo = Wp.T
    else:
        # head i's output projection stored (out, in) as nn.Linear(hs, C) stores it, (C, hs),
        # used as o_i @ Wo[i].T; with its gradient, per head too
        Wos = [rng.standard_normal((C, hs)) / np.sqrt(C) for _ in range(h)]
        Y, att, concat, loss = layer(lambda o, i: o @ Wos[i].T)
        dY = 2 * (Y - target) / Y.size
        for i in range(h):
            arrays[f"WO_{i}_h"] = Wos[i]
            # d(o_i @ Wo_i.T) / dWo_i = dY.T @ o_i: (C, hs), as Wo_i is stored
            arrays[f"dWO_{i}_h"] = dY.reshape(-1, C).T @ concat[..., rows(i)].reshape(-1, hs)
        Wo = np.vstack([w.T for w in Wos])
    if name == "per-head-wo-linear-no-y":
        arrays = {k: v for k, v in arrays.items() if not k.startswith("dWO")}
    else:
        arrays.update(Y=Y, att=att, concat=concat, loss=loss)
    course = dict(Wq=np.hstack(Wq), Wk=np.hstack(Wk), Wv=np.hstack(Wv), Wo=Wo)
    return arrays, dict(heads=3, course=course)


# ---------------------------------------------------------------------------
# 3. X saved features first: (C, T) for one sequence, (B, C, T) for a batch
# ---------------------------------------------------------------------------

def features_first(name):
    """Columns are tokens: Q = Wq.T @ X (or Wq @ X for weights stored (out, in)), Y = Wo.T @
    concat, each (C, T); the target, the loss's gradient dY and dX (C, T) too."""
    rng = np.random.default_rng(37)
    T, C, h = 5, 6, 3
    hs = C // h
    batch = name == "features-first-batch"
    B = 2 if batch else 1
    Xf = rng.standard_normal((B, C, T))          # features first
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    out_in = name == "features-first-out-in"
    use = (lambda w: w) if out_in else (lambda w: w.T)   # Q = use(Wq) @ X
    target = rng.standard_normal((B, C, T))
    Qf, Kf, Vf = (use(w) @ Xf for w in W[:3])      # (B, C, T)
    heads = []
    for i in range(h):
        rows = slice(i * hs, (i + 1) * hs)
        q, k, v = Qf[:, rows], Kf[:, rows], Vf[:, rows]                 # (B, hs, T)
        a = softmax(q.transpose(0, 2, 1) @ k / np.sqrt(hs))             # (B, T, T), rows: queries
        heads.append((q, k, v, a, v @ a.transpose(0, 2, 1)))            # o: (B, hs, T)
    concat = np.concatenate([o for *_, o in heads], axis=1)             # (B, C, T)
    Y = use(W[3]) @ concat
    loss = np.mean((Y - target) ** 2)
    dY = 2 * (Y - target) / Y.size
    dconcat = use(W[3]).T @ dY
    dQf, dKf, dVf = np.zeros_like(Qf), np.zeros_like(Kf), np.zeros_like(Vf)
    for i, (q, k, v, a, o) in enumerate(heads):
        rows = slice(i * hs, (i + 1) * hs)
        do = dconcat[:, rows]
        dVf[:, rows] = do @ a                                           # o = v @ a.T
        da = (v.transpose(0, 2, 1) @ do).transpose(0, 2, 1)             # (B, T, T)
        ds = a * (da - np.sum(a * da, axis=-1, keepdims=True))
        dQf[:, rows] = (k @ ds.transpose(0, 2, 1)) / np.sqrt(hs)
        dKf[:, rows] = (q @ ds) / np.sqrt(hs)                           # s = q.T @ k
    dX = sum(use(w).T @ d for w, d in zip(W[:3], (dQf, dKf, dVf)))
    one = (lambda x: x) if batch else (lambda x: x[0])
    arrays = dict(X=one(Xf), Wq=W[0], Wk=W[1], Wv=W[2], Wo=W[3], target=one(target), Y=one(Y),
                  dY=one(dY), dX=one(dX), loss=loss)
    if out_in:
        arrays["Q"] = one(Qf)
    course = dict(zip(["Wq", "Wk", "Wv", "Wo"], [w.T for w in W] if out_in else W))
    return arrays, dict(heads=h, course=course)


# ---------------------------------------------------------------------------
# 4. one head, its scores and att saved without a head axis
# ---------------------------------------------------------------------------

def single_head(name):
    """Single-head attention as tutorials write it: scores = Q @ K.T / sqrt(C) per sequence,
    no head axis anywhere."""
    rng = np.random.default_rng(41)
    B = 1 if name == "single-head-one-item" else 2
    T, C = 4, 6
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv, Wo = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4))
    target = rng.standard_normal((B, T, C))
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(0, 2, 1) / np.sqrt(C)                      # (B, T, T)
    att = softmax(scores)
    Y = (att @ V) @ Wo
    dY = 2 * (Y - target) / Y.size
    datt = (dY @ Wo.T) @ V.transpose(0, 2, 1)
    dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))
    one = (lambda x: x[0]) if B == 1 else (lambda x: x)
    arrays = dict(X=one(X), Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, target=one(target), scores=one(scores),
                  att=one(att), Y=one(Y), datt=one(datt), dscores=one(dscores))
    return arrays, dict(heads=1, course=dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo))


# ---------------------------------------------------------------------------
# 5. a layer with biases, as nn.Linear(C, C) has them, its Q, K, V never saved
# ---------------------------------------------------------------------------

def biased(name):
    """q = x @ Wq + bq (and k, v; the output projection with bo), a per-head loop; saved: the
    weights, the biases under the author's names, and what the author printed at the end (Y and
    the loss; with "-att", the attention maps and a Y without bo)."""
    rng = np.random.default_rng(508)
    B, T, C, h = 2, 5, 12, 3
    hs = C // h
    X = rng.standard_normal((B, T, C))
    W = [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    b = [0.3 * rng.standard_normal(C) for _ in range(4)]
    with_bo = name == "biased-y-only"
    out_in = name == "biased-out-in"  # the weights saved (out, in), used as x @ W.T + b
    q, k, v = (X @ w + bb for w, bb in zip(W[:3], b[:3]))
    heads, maps = [], []
    for i in range(h):
        cols = slice(i * hs, (i + 1) * hs)
        a = softmax(q[..., cols] @ k[..., cols].transpose(0, 2, 1) / np.sqrt(hs))
        maps.append(a)
        heads.append(a @ v[..., cols])
    Y = np.concatenate(heads, axis=-1) @ W[3] + (b[3] if with_bo else 0)
    target = rng.standard_normal((B, T, C))
    saved = [w.T for w in W] if out_in else W
    arrays = dict(X=X, W_q=saved[0], W_k=saved[1], W_v=saved[2], W_o=saved[3], b_q=b[0],
                  b_k=b[1], b_v=b[2], out=Y, target=target, loss=np.mean((Y - target) ** 2))
    if with_bo:
        arrays["b_o"] = b[3]
    elif name == "biased-score-att":  # q, k saved, the attention maps under the name score
        arrays.update(q=q, k=k, score=np.stack(maps, axis=1))
    else:
        arrays["attn"] = np.stack(maps, axis=1)
    return arrays, dict(heads=h, course=dict(Wq=W[0], Wk=W[1], Wv=W[2], Wo=W[3]))


def biased_merge_bug(name):
    """An output bias and a merge without its transpose (concat = headout.reshape(B, T, C)):
    saved X, the weights, b_o, Y, dY and dWo (the merge shows alone in dWo, with the bias in Y)."""
    rng = np.random.default_rng(509)
    B, T, C, h = 2, 4, 8, 2
    hs = C // h
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv, Wo = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4))
    bo = 0.3 * rng.standard_normal(C)
    split = lambda m: m.reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    Q, K, V = split(X @ Wq), split(X @ Wk), split(X @ Wv)
    att = softmax(Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs))
    concat = (att @ V).reshape(B, T, C)          # the transpose back left out
    Y = concat @ Wo + bo
    dY = rng.standard_normal((B, T, C))
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, bo=bo, Y=Y, dY=dY,
                  dWo=concat.reshape(-1, C).T @ dY.reshape(-1, C))
    return arrays, dict(heads=h, course=dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo))


# ---------------------------------------------------------------------------
# 6. three heads, only arrays that do not show the number: the page's h = 4 left as it is
# ---------------------------------------------------------------------------

def heads_unset(name):
    """The course's layer with h = 3 (C = 12), saved with its merged results only: concat, Y,
    the loss and the gradients of the weights and X (no (B, h, T, ...) array shows h)."""
    rng = np.random.default_rng(611)
    B, T, C, h = 2, 4, 12, 3
    hs = C // h
    X = rng.standard_normal((B, T, C))
    Wq, Wk, Wv, Wo = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4))
    target = rng.standard_normal((B, T, C))
    q, k, v = X @ Wq, X @ Wk, X @ Wv
    outs = []
    for i in range(h):
        cols = slice(i * hs, (i + 1) * hs)
        a = softmax(q[..., cols] @ k[..., cols].transpose(0, 2, 1) / np.sqrt(hs))
        outs.append(a @ v[..., cols])
    concat = np.concatenate(outs, axis=-1)
    Y = concat @ Wo
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, concat=concat, Y=Y, target=target,
                  loss=np.mean((Y - target) ** 2))
    return arrays, dict(heads=h, course=dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo))


# ---------------------------------------------------------------------------
# 7. module and attribute names of public NumPy layers, their containers and layouts: stacked
#    per-head lists (h, C, hs), projections shaped (C, h, hs) and (h, hs, C), `Q_linear.w` with
#    `grad_w`, a `grad.` prefix, '/' paths, `_np` and `_list` suffixes, a layer number inside a
#    result's name, outputs named y_pred / result / O, gradients grad_in, and np.savez(*arrays)
# ---------------------------------------------------------------------------

def heads_stack(W, h):
    """(C, C) -> (h, C, hs): head i's columns i*hs ... (i+1)*hs, as a per-head list stacked"""
    C = W.shape[0]
    hs = C // h
    return np.stack([W[:, i * hs:(i + 1) * hs] for i in range(h)])


def module_names(name):
    X, W, target = draw(53, 2, 4, 8)
    h = 2
    hs = 4
    L = course_layer(X, *W, h, target)
    Wq, Wk, Wv, Wo = W
    if name == "names-stacked-lists":       # per-head lists stacked, (h, C, hs), `_list`
        arrays = dict(data=X, w_q_list=heads_stack(Wq, h), w_k_list=heads_stack(Wk, h),
                      w_v_list=heads_stack(Wv, h), w_o=Wo, mha_vals=L["Y"])
    elif name == "names-head-axis-projections":   # (C, h, hs) projections, (h, hs, C) output
        arrays = {"inputs": X, "out": L["Y"], "q_proj.weight": Wq.reshape(8, h, hs),
                  "k_proj.weight": Wk.reshape(8, h, hs), "v_proj.weight": Wv.reshape(8, h, hs),
                  "out_proj.weight": Wo.reshape(h, hs, 8)}
    elif name == "names-linear-w":          # Q_linear.w and Q_linear.grad_w, output O
        arrays = {"x": X, "target": target, "O": L["Y"], "attention": L["att"]}
        for w, Wx in zip("QKVO", W):
            arrays[f"{w}_linear.w"] = Wx
            arrays[f"{w}_linear.grad_w"] = L[f"dW{w.lower()}"]
    elif name == "names-grad-prefix-paths":  # grad.attn.W_q.weight, attn/...: '.' and '/'
        arrays = {"x": X, "output": L["Y"], "target": target, "grad_x": L["dX"]}
        for w, Wx in zip("qkvo", W):
            arrays[f"attn/W_{w}/w"] = Wx
            arrays[f"grad.attn.W_{w}.weight"] = L[f"dW{w}"]
    elif name == "names-np-suffix":         # x_np, w_q_np (stacked), result_np; attn1_out
        arrays = dict(x_np=X, w_q_np=heads_stack(Wq, h), w_k_np=heads_stack(Wk, h),
                      w_v_np=heads_stack(Wv, h), w_o_np=Wo, result_np=L["Y"], attn1_out=L["Y"])
    elif name == "names-pred-true-grad-in":  # y_pred, y_true, Wq_grad, grad_in
        arrays = dict(x=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, y_pred=L["Y"], y_true=target,
                      Wq_grad=L["dWq"], Wk_grad=L["dWk"], Wv_grad=L["dWv"], Wo_grad=L["dWo"],
                      grad_in=L["dX"])
    elif name == "names-camel-case":        # QueryWeights, outputWeight, *Derivative
        arrays = dict(inputEmbedding=X, QueryWeights=Wq, KeyWeights=Wk, ValueWeights=Wv,
                      outputWeight=Wo, output=L["Y"], target=target,
                      outputGradient=L["dY"], outputWeightGradient=L["dWo"],
                      QueryWeightDerivative=L["dWq"], inputDerivative=L["dX"])
    elif name == "names-param-grad":        # param_N beside grad_N, by position
        arrays = dict(x=X, y=L["Y"], target=target, dx=L["dX"])
        for i, (Wx, g) in enumerate(zip(W, [L["dWq"], L["dWk"], L["dWv"], L["dWo"]])):
            arrays[f"param_{i}"], arrays[f"grad_{i}"] = Wx, g
    elif name == "names-self-attention-args":   # mha(query=x, key=x, value=x) saved by name
        arrays = dict(query=X, key=X, value=X, W_Q=Wq, W_K=Wk, W_V=Wv, W_O=Wo, output=L["Y"])
    elif name == "names-input-affix-context":   # input_q/k/v, Q_h, context, context_combined
        arrays = dict(input_q=X, input_k=X, input_v=X, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo,
                      Q_h=L["Q"], context=L["headout"], context_combined=L["concat"],
                      target=target, grad_W_q=L["dWq"], grad_W_o=L["dWo"], output=L["Y"])
    elif name == "names-lone-w":            # per-head objects WQ-i, one (C, C) W after them
        arrays = dict(X=X, Y=L["Y"], dY=L["dY"], dX=L["dX"], W=Wo, dW=L["dWo"])
        for w, Wx in zip("QKV", W):
            for i, block in enumerate(heads_stack(Wx, h)):
                arrays[f"W{w}-{i}"] = block
    elif name == "names-fused-interleaved":  # in_proj (3C, C), rows "(d k h)", blocks q, v, k
        C = X.shape[-1]
        parts = [Wq.T, Wv.T, Wk.T]               # (out, in), in the file's block order q, v, k
        W_in = np.empty((3 * C, C))
        for p, Wp in enumerate(parts):
            for head in range(h):
                for d in range(hs):             # row (d · 3 + p) · h + head: head fastest
                    W_in[(d * 3 + p) * h + head] = Wp[head * hs + d]
        arrays = dict(x=X, in_proj_weight=W_in, out_proj_weight=Wo.T, attention=L["att"],
                      out=L["Y"])
    elif name == "names-two-outputs":       # attention_output is the concat, output is Y
        arrays = dict(inputs=X, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo, attention_output=L["concat"],
                      output=L["Y"])
    elif name == "names-state-dict-heads":  # heads.{i}.query.weight (C, hs), zero biases,
        arrays = {"x": X, "out": L["Y"], "probs": L["att"], "dx": L["dX"],  # output_projection
                  "output_projection.weight": Wo, "output_projection.bias": np.zeros(8),
                  "grad.output_projection.weight": L["dWo"]}
        for w, Wx, g in zip(["query", "key", "value"], W, [L["dWq"], L["dWk"], L["dWv"]]):
            for i, (block, grad) in enumerate(zip(heads_stack(Wx, h), heads_stack(g, h))):
                arrays[f"heads.{i}.{w}.weight"] = block
                arrays[f"heads.{i}.{w}.bias"] = np.zeros(hs)
                arrays[f"grad.heads.{i}.{w}.weight"] = grad
    elif name == "names-checkpoint-h":      # GPT-2 checkpoint keys, the input saved as h
        arrays = {"h0/attn/c_attn/w": np.concatenate([Wq, Wk, Wv], axis=1),
                  "h0/attn/c_attn/b": np.zeros(24), "h0/attn/c_proj/w": Wo, "h": X,
                  "W": L["att"], "out": L["Y"]}
    elif name == "names-attn-output":       # attn is the layer's output, attn_pattern its maps
        arrays = {"x": X, "W_q": Wq, "W_k": Wk, "W_v": Wv, "W_o": Wo, "query_vectors": L["Q"],
                  "attn_scores": L["scores"], "attn_pattern": L["att"], "attn": L["Y"],
                  "attn.grad": L["dY"]}
    elif name == "names-vit-heads":         # per-head (hs, C) weights stored (out, in), a
        arrays = {"tokens": X, "outTokens": L["Y"], "dE_dY": L["dY"],  # `linear` output layer
                  "dE_dTokens": L["dX"], "linear.weights": Wo.T, "linear.bias": np.zeros((1, 8)),
                  "linear.dE_dW": L["dWo"].T}
        for w, Wx in zip(["query", "key", "value"], W):
            for i, block in enumerate(heads_stack(Wx, h)):
                arrays[f"heads.{i}.{w}.weights"] = block.T
                arrays[f"heads.{i}.{w}.bias"] = np.zeros((1, hs))
    elif name == "names-unnamed-wo":        # the output projection under a name of its own
        arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, merge_dense_kernel=Wo, Y=L["Y"], dY=L["dY"],
                      grad_merge_dense_kernel=L["dWo"], mask=np.ones((8, 8)))
    elif name == "names-sequence-first":    # X, dY, Y, dX (T, B, C): a batch_first=False layer
        seq = lambda a: a.swapaxes(0, 1)
        arrays = dict(X=seq(X), Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, dY=seq(L["dY"]), Y=seq(L["Y"]),
                      dX=seq(L["dX"]), Q=L["Q"], att=L["att"])
    elif name == "names-tokens-first":      # one sequence; scores, att (T, h, T): 'qhk' order
        one = course_layer(X[:1], *W, h, target[:1])
        arrays = dict(X=X[0], Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, Y=one["Y"][0],
                      scores=one["scores"][0].transpose(1, 0, 2),
                      att=one["att"][0].transpose(1, 0, 2))
    elif name == "names-value-paths":       # query.weight.params, x_g, c_proj.w_g, gWq, S, A
        arrays = {"x": X, "target": target, "S": L["scores"], "A": L["att"], "x_g": L["dX"], "out": L["Y"],
                  "gWq": L["dWq"], "out_proj.w_g": L["dWo"]}
        for w, Wx in zip(["query", "key", "value", "out_proj"], W):
            arrays[f"{w}.weight.params" if w != "out_proj" else "out_proj.w.params"] = Wx
    elif name == "names-packed":            # X (B·T, C) beside lengths, Y (B·T, C)
        B, T, C = X.shape
        arrays = dict(X=X.reshape(B * T, C), lengths=np.array([T] * B), Wq=Wq, Wk=Wk, Wv=Wv,
                      Wo=Wo, Y=L["Y"].reshape(B * T, C))
    elif name == "names-positional-table":  # the layer adds its table pe (T, C) to its input
        pe = np.random.default_rng(54).standard_normal(X.shape[1:]) * 0.5
        P = course_layer(X + pe, *W, h, target)
        arrays = dict(x=X, pe=pe, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo, target=target, Y=P["Y"],
                      att=P["att"], dX=P["dX"], dW_q=P["dWq"])
    elif name == "names-scaled-scores":     # scores the product before its scale, beside
        arrays = dict(X=X, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo, Y=L["Y"], att=L["att"],  # scaled_scores
                      scores=L["scores"] * np.sqrt(hs), scaled_scores=L["scores"])
    elif name == "names-normed-input":      # the layer on a LayerNorm of X, both saved
        Xn = (X - X.mean(-1, keepdims=True)) / X.std(-1, keepdims=True)
        N = course_layer(Xn, *W, h, target)
        arrays = dict(X=X, Xnorm=Xn, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, target=target, Q=N["Q"],
                      att=N["att"], Y=N["Y"], dWq=N["dWq"], dX=N["dX"])
    elif name == "names-weights-stacks":    # weights_q (h, C, hs) per-head stacks, weights_o
        arrays = dict(data=X, weights_q=heads_stack(Wq, h), weights_k=heads_stack(Wk, h),
                      weights_v=heads_stack(Wv, h), weights_o=Wo, output=L["Y"])
    elif name == "names-swapped-maps":      # attn holds the scores, scores the weights
        arrays = dict(x=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, y=L["Y"], attn=L["scores"],
                      scores=L["att"])
    elif name == "names-proj-suffix":       # Wq_proj … Wout_proj, h_in, backwards_gradient
        arrays = dict(h_in=X, Wq_proj=Wq, Wk_proj=Wk, Wv_proj=Wv, Wout_proj=Wo, output=L["Y"],
                      backwards_gradient=L["dY"], dWq_proj=L["dWq"], dWout_proj=L["dWo"])
    elif name == "names-init-twins":        # module weights trained 3 steps, beside *_init
        lr, now, losses = 0.5, list(W), []
        for _ in range(3):
            S = course_layer(X, *now, h, target)
            losses.append(S["loss"])
            now = [Wx - lr * S[f"dW{w}"] for Wx, w in zip(now, "qkvo")]
        arrays = {"x": X, "target": target, "lr": np.float64(lr), "steps": np.int64(3),
                  "losses": np.array(losses), "y": course_layer(X, *now, h, target)["Y"]}
        for w, W0, W3 in zip("qkvo", W, now):
            arrays[f"attn.{w}_proj.weight"] = W3
            arrays[f"attn.{w}_proj.weight_init"] = W0
        W = now  # (the layer's weights as read: the trained ones)
    elif name == "names-fused-head-axis":   # in_proj (C, 3h, hs), out_proj (h, hs, C), grads
        C = X.shape[-1]                       # in a dict of their own: in_proj.grads.weight
        fused = lambda a, b, c: np.concatenate([a, b, c], axis=1).reshape(C, 3 * h, hs)
        arrays = {"inputs": X, "out": L["Y"], "grads_out": L["dY"], "dinputs": L["dX"],
                  "in_proj.weight": fused(Wq, Wk, Wv), "out_proj.weight": Wo.reshape(h, hs, C),
                  "in_proj.grads.weight": fused(L["dWq"], L["dWk"], L["dWv"]),
                  "out_proj.grads.weight": L["dWo"].reshape(h, hs, C)}
    elif name == "names-module-grads":      # W_q.weights, W_q.grad_weights, grad (dY), dX as
        B, T, C = X.shape                     # its three paths stacked, dropout_output (att)
        merge = lambda a: a.transpose(0, 2, 1, 3).reshape(B, T, C)
        paths = [merge(L[f"d{x}"]) @ Wx.T for x, Wx in zip("QKV", W)]
        arrays = {"x": X, "target": target, "output": L["Y"], "grad": L["dY"],
                  "dropout_output": L["att"], "dX": np.stack(paths)}
        for w, Wx in zip("qkvo", W):
            arrays[f"W_{w}.weights"] = Wx
            arrays[f"W_{w}.grad_weights"] = L[f"dW{w}"]
    elif name in ("names-init-prefix", "names-before-after"):   # a run's start and end: init-
        lr, now, losses = 0.5, list(W), []  # prefixed per-head keys beside the trained ones, or
        for _ in range(3):                    # module weights saved _before and _after
            S = course_layer(X, *now, h, target)
            losses.append(S["loss"])
            now = [Wx - lr * S[f"dW{w}"] for Wx, w in zip(now, "qkvo")]
        arrays = {"X": X, "target": target, "lr": np.float64(lr), "num_iter": np.int64(3),
                  "loss_history": np.array(losses)}
        for w, W0, W3 in zip("qkvo", W, now):
            if name == "names-before-after":
                arrays[f"attn.{w}_proj.weight_before"] = W0
                arrays[f"attn.{w}_proj.weight_after"] = W3
            elif w == "o":
                arrays["W"], arrays["initial-W"] = W3, W0
            else:
                for i, (b0, b3) in enumerate(zip(heads_stack(W0, h), heads_stack(W3, h))):
                    arrays[f"W{w.upper()}-{i}"], arrays[f"initial-W{w.upper()}-{i}"] = b3, b0
        arrays["y"] = course_layer(X, *now, h, target)["Y"]
        W = now  # (the layer's weights as read: the trained ones)
    else:                                   # np.savez(f, *params, *grads, x=..., out=...)
        params = [Wq, Wk, Wv, Wo, L["dWq"], L["dWk"], L["dWv"], L["dWo"]]
        arrays = {f"arr_{i}": a for i, a in enumerate(params)}
        arrays.update(x=X, out=L["Y"], grad_out=L["dY"], grad_in=L["dX"])
    return arrays, dict(heads=h, course=dict(zip(["Wq", "Wk", "Wv", "Wo"], W)))


MODULE_NAMES = ["names-stacked-lists", "names-head-axis-projections", "names-linear-w",
                "names-grad-prefix-paths", "names-np-suffix", "names-pred-true-grad-in",
                "names-positional", "names-camel-case", "names-param-grad", "names-two-outputs",
                "names-self-attention-args", "names-input-affix-context", "names-lone-w",
                "names-fused-interleaved", "names-state-dict-heads", "names-checkpoint-h",
                "names-unnamed-wo", "names-attn-output", "names-vit-heads",
                "names-sequence-first", "names-tokens-first", "names-value-paths", "names-packed",
                "names-positional-table", "names-init-twins", "names-scaled-scores",
                "names-normed-input", "names-weights-stacks", "names-swapped-maps",
                "names-proj-suffix", "names-fused-head-axis", "names-module-grads",
                "names-init-prefix", "names-before-after"]

RUNS = {
    **{name: gradient_names for name in GRADIENT_SPELLINGS},
    **{name: module_names for name in MODULE_NAMES},
    "per-head-wo-single": per_head,
    "per-head-wo-rows": per_head,
    "per-head-wo-linear": per_head,
    "per-head-wo-linear-no-y": per_head,
    "per-head-wo-out-in-rows": per_head,
    "per-head-wo-linear-blocks": per_head,
    "features-first": features_first,
    "features-first-batch": features_first,
    "features-first-out-in": features_first,
    "single-head": single_head,
    "single-head-one-item": single_head,
    "biased-y-only": biased,
    "biased-att": biased,
    "biased-out-in": biased,
    "biased-score-att": biased,
    "biased-merge-bug": biased_merge_bug,
    "heads-unset": heads_unset,
}


def exact(a):
    a = np.asarray(a, dtype=np.float64)
    return dict(shape=list(a.shape), data=[float(x) for x in a.ravel()])


def main():
    out = sys.argv[1]
    manifest = []
    for name, make in RUNS.items():
        arrays, info = make(name)
        np.savez(os.path.join(out, name + ".npz"), **arrays)
        course = {k: exact(v) for k, v in info.pop("course").items()}
        saved = {k: list(np.shape(v)) for k, v in arrays.items()}
        manifest.append(dict(name=name, course=course, saved=saved, **info))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
