#!/usr/bin/python3
"""Notebooks in other authors' layouts for web/check/layouts.js (issue 18): attention layers
written the way their authors write them (per-head weights, GPT-2's fused c_attn, PyTorch's
in_proj_weight and (out, in) nn.Linear weights, no output projection, a heads setting other than
the page's, results stacked over heads first), at sizes other than the course's, saved with
np.savez as their users would.

Usage:
    /usr/bin/python3 tests/reference/notebook_layouts.py OUTDIR

For every run it writes OUTDIR/<run>.npz, and OUTDIR/manifest.json: for each run the heads
option to check with, what adaptLayout must find (heads, convention, the biases) and the same
layer in the course's layout, computed here from the author's arrays: Wq, Wk, Wv, Wo (C, C)
used as X @ W (and dWq..dWo when the run has a backward), as exact float64 values.
tests/check/layouts.test.mjs reads them.
"""

import json
import os
import sys

import numpy as np


def softmax(z, axis=-1):
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def split_heads(x, h):
    B, T, C = x.shape
    return x.reshape(B, T, h, C // h).transpose(0, 2, 1, 3)


def merge_heads(x):
    B, h, T, hs = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * hs)


def softmax_backward(att, datt):
    return att * (datt - np.sum(att * datt, axis=-1, keepdims=True))


def layer_inputs(seed, B, T, C, n=4):
    """rng, X (B, T, C) and n weights (C, C), as most of the runs draw them."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((B, T, C))
    return rng, X, [rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(n)]


# ---------------------------------------------------------------------------
# 1. Per-head weights as Python lists (np.savez makes each an (h, C, hs) array)
# ---------------------------------------------------------------------------

def per_head_stack():
    rng = np.random.default_rng(101)
    B, T, C, h = 3, 5, 24, 3
    hs = C // h
    X = rng.standard_normal((B, T, C))
    Wq = [rng.standard_normal((C, hs)) / np.sqrt(C) for _ in range(h)]
    Wk = [rng.standard_normal((C, hs)) / np.sqrt(C) for _ in range(h)]
    Wv = [rng.standard_normal((C, hs)) / np.sqrt(C) for _ in range(h)]
    Wo = [rng.standard_normal((hs, C)) / np.sqrt(C) for _ in range(h)]   # Y = sum_i o_i @ Wo[i]
    target = rng.standard_normal((B, T, C))

    heads = []
    Y = np.zeros((B, T, C))
    for i in range(h):
        q, k, v = X @ Wq[i], X @ Wk[i], X @ Wv[i]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hs)
        a = softmax(s)
        o = a @ v
        Y += o @ Wo[i]
        heads.append(dict(q=q, k=k, v=v, s=s, a=a, o=o))
    loss = np.mean((Y - target) ** 2)
    dY = 2 * (Y - target) / Y.size

    grads = dict(dWq=[], dWk=[], dWv=[], dWo=[], do=[], dv=[], da=[], ds=[], dq=[], dk=[])
    dX = np.zeros_like(X)
    for i, c in enumerate(heads):
        do = dY @ Wo[i].T
        dv = c["a"].transpose(0, 2, 1) @ do
        da = do @ c["v"].transpose(0, 2, 1)
        ds = softmax_backward(c["a"], da)
        dq = ds @ c["k"] / np.sqrt(hs)
        dk = ds.transpose(0, 2, 1) @ c["q"] / np.sqrt(hs)
        grads["dWo"].append(np.einsum("bti,btj->ij", c["o"], dY))
        grads["dWq"].append(np.einsum("btc,bti->ci", X, dq))
        grads["dWk"].append(np.einsum("btc,bti->ci", X, dk))
        grads["dWv"].append(np.einsum("btc,bti->ci", X, dv))
        dX += dq @ Wq[i].T + dk @ Wk[i].T + dv @ Wv[i].T
        for name, x in dict(do=do, dv=dv, da=da, ds=ds, dq=dq, dk=dk).items():
            grads[name].append(x)

    per = lambda key: np.stack([c[key] for c in heads], axis=1)          # (B, h, T, ...)
    gper = lambda key: np.stack(grads[key], axis=1)
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, Q=per("q"), K=per("k"), V=per("v"),
                  scores=per("s"), att=per("a"), headout=per("o"),
                  concat=np.concatenate([c["o"] for c in heads], axis=-1), Y=Y,
                  target=target, loss=loss, dY=dY, dWo=grads["dWo"],
                  dconcat=np.concatenate(grads["do"], axis=-1), dheadout=gper("do"),
                  dV=gper("dv"), datt=gper("da"), dscores=gper("ds"), dQ=gper("dq"),
                  dK=gper("dk"), dWq=grads["dWq"], dWk=grads["dWk"], dWv=grads["dWv"], dX=dX)
    course = dict(Wq=np.hstack(Wq), Wk=np.hstack(Wk), Wv=np.hstack(Wv), Wo=np.vstack(Wo),
                  dWq=np.hstack(grads["dWq"]), dWk=np.hstack(grads["dWk"]),
                  dWv=np.hstack(grads["dWv"]), dWo=np.vstack(grads["dWo"]))
    return arrays, dict(heads_option=3, heads=3, causal=False, convention="in-out",
                        course=course)


# ---------------------------------------------------------------------------
# 2. Per-head keys Wq_0, Wq_1, ... in float32, one sequence X (T, C), forward only, the page
#    left at 2 heads
# ---------------------------------------------------------------------------

def per_head_list_f32():
    rng = np.random.default_rng(102)
    T, C, h = 7, 32, 4
    hs = C // h
    f = np.float32
    X = rng.standard_normal((T, C)).astype(f)
    W = {f"W{x}_{i}": (rng.standard_normal((C, hs)) / np.sqrt(C)).astype(f)
         for x in "qkv" for i in range(h)}
    W.update({f"Wo_{i}": (rng.standard_normal((hs, C)) / np.sqrt(C)).astype(f) for i in range(h)})
    qs, ks, vs, atts = [], [], [], []
    Y = np.zeros((T, C), dtype=f)
    for i in range(h):
        q, k, v = X @ W[f"Wq_{i}"], X @ W[f"Wk_{i}"], X @ W[f"Wv_{i}"]
        a = softmax(q @ k.T / np.sqrt(f(hs)))
        Y += (a @ v) @ W[f"Wo_{i}"]
        qs.append(q), ks.append(k), vs.append(v), atts.append(a)
    arrays = dict(X=X, **W, Q=qs, K=ks, V=vs, att=atts, Y=Y)       # lists: (h, T, hs), (h, T, T)
    join = lambda x, stack: stack([W[f"W{x}_{i}"] for i in range(h)]).astype(np.float64)
    course = dict(Wq=join("q", np.hstack), Wk=join("k", np.hstack), Wv=join("v", np.hstack),
                  Wo=join("o", np.vstack))
    return arrays, dict(heads_option=2, heads=4, causal=False, convention="in-out",
                        course=course)


# ---------------------------------------------------------------------------
# 3. GPT-2 as picoGPT writes it: fused c_attn (C, 3C) and c_proj with biases, X @ W + b,
#    one sequence, an additive causal mask, forward only
# ---------------------------------------------------------------------------

def gpt2_c_attn():
    rng = np.random.default_rng(103)
    T, C, n_head = 6, 24, 4
    x = rng.standard_normal((T, C))
    c_attn = dict(w=rng.standard_normal((C, 3 * C)) * 0.2, b=rng.standard_normal(3 * C) * 0.1)
    c_proj = dict(w=rng.standard_normal((C, C)) * 0.2, b=rng.standard_normal(C) * 0.1)

    def linear(x, w, b):
        return x @ w + b

    def attention(q, k, v, mask):
        return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v

    qkv = linear(x, **c_attn)                                        # (T, 3C)
    qkv_heads = [np.split(part, n_head, axis=-1) for part in np.split(qkv, 3, axis=-1)]
    causal_mask = (1 - np.tri(T, dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    y = linear(np.hstack(out_heads), **c_proj)
    arrays = dict(x=x, c_attn=c_attn["w"], c_attn_bias=c_attn["b"], c_proj=c_proj["w"],
                  c_proj_bias=c_proj["b"], qkv=qkv, y=y)
    w, b = c_attn["w"], c_attn["b"]
    course = dict(Wq=w[:, :C], Wk=w[:, C:2 * C], Wv=w[:, 2 * C:], Wo=c_proj["w"])
    biases = dict(bq=b[:C], bk=b[C:2 * C], bv=b[2 * C:], bo=c_proj["b"])
    return arrays, dict(heads_option=4, heads=4, causal=True, convention="in-out",
                        course=course, biases=biases)


# ---------------------------------------------------------------------------
# 4. PyTorch's nn.MultiheadAttention in NumPy: in_proj_weight (3C, C), out_proj_weight
#    (out, in), biases, X @ W.T + b; the MSE loss and the gradients autograd would give
# ---------------------------------------------------------------------------

def pytorch_in_proj():
    rng = np.random.default_rng(104)
    B, T, C, h = 2, 7, 32, 4
    hs = C // h
    X = rng.standard_normal((B, T, C))
    in_proj_weight = rng.standard_normal((3 * C, C)) / np.sqrt(C)
    in_proj_bias = rng.standard_normal(3 * C) * 0.1
    out_proj_weight = rng.standard_normal((C, C)) / np.sqrt(C)
    out_proj_bias = rng.standard_normal(C) * 0.1
    target = rng.standard_normal((B, T, C))

    q, k, v = np.split(X @ in_proj_weight.T + in_proj_bias, 3, axis=-1)     # F.linear
    q, k, v = (t.reshape(B, T, h, hs).transpose(0, 2, 1, 3) for t in (q, k, v))
    attn_weights = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(hs))
    concat = (attn_weights @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
    out = concat @ out_proj_weight.T + out_proj_bias
    loss = np.mean((out - target) ** 2)

    dout = 2 * (out - target) / out.size
    out_proj_weight_grad = dout.reshape(-1, C).T @ concat.reshape(-1, C)     # (out, in)
    dh = (dout @ out_proj_weight).reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    dv = attn_weights.transpose(0, 1, 3, 2) @ dh
    ds = softmax_backward(attn_weights, dh @ v.transpose(0, 1, 3, 2)) / np.sqrt(hs)
    dq, dk = ds @ k, ds.transpose(0, 1, 3, 2) @ q
    dqkv = np.concatenate([t.transpose(0, 2, 1, 3).reshape(B, T, C) for t in (dq, dk, dv)], -1)
    in_proj_weight_grad = dqkv.reshape(-1, 3 * C).T @ X.reshape(-1, C)      # (3C, C)
    in_proj_bias_grad = dqkv.reshape(-1, 3 * C).sum(axis=0)
    dX = dqkv @ in_proj_weight
    arrays = dict(X=X, in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias,
                  out_proj_weight=out_proj_weight, out_proj_bias=out_proj_bias,
                  attn_weights=attn_weights, out=out, target=target, loss=loss,
                  in_proj_weight_grad=in_proj_weight_grad, in_proj_bias_grad=in_proj_bias_grad,
                  out_proj_weight_grad=out_proj_weight_grad, dX=dX)
    w, g = in_proj_weight, in_proj_weight_grad
    course = dict(Wq=w[:C].T, Wk=w[C:2 * C].T, Wv=w[2 * C:].T, Wo=out_proj_weight.T,
                  dWq=g[:C].T, dWk=g[C:2 * C].T, dWv=g[2 * C:].T, dWo=out_proj_weight_grad.T)
    biases = dict(bq=in_proj_bias[:C], bk=in_proj_bias[C:2 * C], bv=in_proj_bias[2 * C:],
                  bo=out_proj_bias)
    return arrays, dict(heads_option=4, heads=4, causal=False, convention="out-in",
                        course=course, biases=biases)


# ---------------------------------------------------------------------------
# 5. Four nn.Linear(C, C, bias=False) weights, stored (out, in) and used as X @ W.T, Q saved
#    as the layer splits it, the gradients in the weights' (out, in) shape
# ---------------------------------------------------------------------------

def linear_forward(X, Wq, Wk, Wv, Wo, h, causal):
    """A from-scratch torch-style layer in NumPy: q = self.Wq(x) is X @ Wq.T."""
    B, T, C = X.shape
    Q, K, V = (split_heads(X @ W.T, h) for W in (Wq, Wk, Wv))
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(C // h)
    if causal:
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
    att = softmax(scores)
    concat = merge_heads(att @ V)
    return dict(Q=Q, K=K, V=V, att=att, concat=concat, Y=concat @ Wo.T)


def pytorch_linear_out_in():
    B, T, C, h = 3, 5, 24, 3
    hs = C // h
    rng, X, (Wq, Wk, Wv, Wo) = layer_inputs(105, B, T, C)
    target = rng.standard_normal((B, T, C))
    f = linear_forward(X, Wq, Wk, Wv, Wo, h, causal=False)
    loss = np.mean((f["Y"] - target) ** 2)
    dY = 2 * (f["Y"] - target) / f["Y"].size
    X2, dY2 = X.reshape(-1, C), dY.reshape(-1, C)
    dWo = dY2.T @ f["concat"].reshape(-1, C)                                 # (out, in)
    dh = split_heads(dY @ Wo, h)
    dV = f["att"].transpose(0, 1, 3, 2) @ dh
    ds = softmax_backward(f["att"], dh @ f["V"].transpose(0, 1, 3, 2)) / np.sqrt(hs)
    dQ, dK = ds @ f["K"], ds.transpose(0, 1, 3, 2) @ f["Q"]
    dm = [merge_heads(d).reshape(-1, C) for d in (dQ, dK, dV)]
    dWq, dWk, dWv = (d.T @ X2 for d in dm)                                   # (out, in)
    dX = (dm[0] @ Wq + dm[1] @ Wk + dm[2] @ Wv).reshape(B, T, C)
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, Q=f["Q"], K=f["K"], V=f["V"], att=f["att"],
                  Y=f["Y"], target=target, loss=loss, dWq=dWq, dWk=dWk, dWv=dWv, dWo=dWo, dX=dX)
    course = dict(Wq=Wq.T, Wk=Wk.T, Wv=Wv.T, Wo=Wo.T, dWq=dWq.T, dWk=dWk.T, dWv=dWv.T,
                  dWo=dWo.T)
    # the course's names used as X @ W.T: read so only when the student says so (the page's
    # "weights stored (out, in)"); without it the check names the transpose (layouts.test)
    return arrays, dict(heads_option=3, heads=3, causal=False, convention="out-in",
                        weights_option="out-in", course=course)


# ---------------------------------------------------------------------------
# 6. The same convention in float32 with Hugging Face's names, causal, only the output saved
# ---------------------------------------------------------------------------

def hf_proj_out_in_f32():
    rng = np.random.default_rng(106)
    B, T, C, h = 1, 7, 32, 4
    f = np.float32
    X = rng.standard_normal((B, T, C)).astype(f)
    W = [(rng.standard_normal((C, C)) / np.sqrt(C)).astype(f) for _ in range(4)]
    out = linear_forward(X, *W, h, causal=True)["Y"].astype(f)
    arrays = {"X": X, "q_proj.weight": W[0], "k_proj.weight": W[1], "v_proj.weight": W[2],
              "o_proj.weight": W[3], "out": out}
    course = dict(zip(["Wq", "Wk", "Wv", "Wo"], (w.T.astype(np.float64) for w in W)))
    return arrays, dict(heads_option=4, heads=4, causal=True, convention="out-in",
                        course=course)


# ---------------------------------------------------------------------------
# 7 and 8: the course's layer (Wo None: a layer without an output projection, Y = concat)
# ---------------------------------------------------------------------------

def course_forward(X, Wq, Wk, Wv, Wo, h):
    Q, K, V = (split_heads(X @ W, h) for W in (Wq, Wk, Wv))
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(X.shape[-1] // h)
    att = softmax(scores)
    headout = att @ V
    concat = merge_heads(headout)
    Y = concat if Wo is None else concat @ Wo
    return dict(Q=Q, K=K, V=V, scores=scores, att=att, headout=headout, concat=concat, Y=Y)


def course_backward(f, X, Wq, Wk, Wv, Wo, h, dY):
    C = X.shape[-1]
    g = {}
    if Wo is not None:
        g["dWo"] = f["concat"].reshape(-1, C).T @ dY.reshape(-1, C)
    g["dheadout"] = split_heads(dY if Wo is None else dY @ Wo.T, h)
    g["dV"] = f["att"].transpose(0, 1, 3, 2) @ g["dheadout"]
    g["datt"] = g["dheadout"] @ f["V"].transpose(0, 1, 3, 2)
    g["dscores"] = softmax_backward(f["att"], g["datt"])
    g["dQ"] = g["dscores"] @ f["K"] / np.sqrt(C // h)
    g["dK"] = g["dscores"].transpose(0, 1, 3, 2) @ f["Q"] / np.sqrt(C // h)
    dm = [merge_heads(g[d]) for d in ("dQ", "dK", "dV")]
    g["dWq"], g["dWk"], g["dWv"] = (X.reshape(-1, C).T @ d.reshape(-1, C) for d in dm)
    g["dX"] = dm[0] @ Wq.T + dm[1] @ Wk.T + dm[2] @ Wv.T
    return g


def no_wo():
    B, T, C, h = 3, 5, 24, 3
    rng, X, (Wq, Wk, Wv) = layer_inputs(107, B, T, C, n=3)
    target = rng.standard_normal((B, T, C))
    f = course_forward(X, Wq, Wk, Wv, None, h)
    loss = np.mean((f["Y"] - target) ** 2)
    dY = 2 * (f["Y"] - target) / f["Y"].size
    g = course_backward(f, X, Wq, Wk, Wv, None, h, dY)
    del f["concat"]                                          # the same array as Y
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, **f, target=target, loss=loss, dY=dY, **g)
    course = dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=np.eye(C), dWq=g["dWq"], dWk=g["dWk"], dWv=g["dWv"])
    return arrays, dict(heads_option=3, heads=3, causal=False, convention="in-out",
                        course=course)


def heads_differ():
    """The course's layer with 4 heads, the page left at 2; loss = sum(dY * Y)."""
    B, T, C, h = 2, 6, 48, 4
    rng, X, W = layer_inputs(108, B, T, C)
    dY = rng.standard_normal((B, T, C))
    f = course_forward(X, *W, h)
    g = course_backward(f, X, *W, h, dY)
    saved = ["dWo", "dV", "dQ", "dK", "dWq", "dWk", "dWv"]
    arrays = dict(X=X, **dict(zip(["Wq", "Wk", "Wv", "Wo"], W)), **f, dY=dY,
                  **{k: g[k] for k in saved})
    course = dict(zip(["Wq", "Wk", "Wv", "Wo"], W), **{k: g[k] for k in saved if k[1] == "W"})
    return arrays, dict(heads_option=2, heads=4, causal=False, convention="in-out",
                        course=course)


# ---------------------------------------------------------------------------
# 9. A loop over heads whose results are stacked heads first: np.array([...]) (h, B, T, ...)
# ---------------------------------------------------------------------------

def heads_first_causal():
    B, T, C, h = 3, 5, 24, 4
    hs = C // h
    _, X, (Wq, Wk, Wv, Wo) = layer_inputs(109, B, T, C)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    res = dict(q=[], k=[], v=[], s=[], a=[], o=[])
    for i in range(h):
        cols = slice(i * hs, (i + 1) * hs)
        q, k, v = X @ Wq[:, cols], X @ Wk[:, cols], X @ Wv[:, cols]
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hs)
        a = softmax(np.where(mask, -np.inf, s))
        for name, x in dict(q=q, k=k, v=v, s=s, a=a, o=a @ v).items():
            res[name].append(x)
    concat = np.concatenate(res["o"], axis=-1)
    Y = concat @ Wo
    stacked = {name: np.array(xs) for name, xs in res.items()}          # (h, B, T, ...)
    arrays = dict(X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, Q=stacked["q"], K=stacked["k"],
                  V=stacked["v"], scores=stacked["s"], attn=stacked["a"],
                  headout=stacked["o"], concat=concat, Y=Y)
    course = dict(Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo)
    return arrays, dict(heads_option=4, heads=4, causal=True, convention="in-out",
                        course=course)


RUNS = {
    "per-head-stack": per_head_stack,
    "per-head-list-f32": per_head_list_f32,
    "gpt2-c-attn": gpt2_c_attn,
    "pytorch-in-proj": pytorch_in_proj,
    "pytorch-linear-out-in": pytorch_linear_out_in,
    "hf-proj-out-in-f32": hf_proj_out_in_f32,
    "no-wo": no_wo,
    "heads-differ": heads_differ,
    "heads-first-causal": heads_first_causal,
}


def exact(a):
    a = np.asarray(a, dtype=np.float64)
    return dict(shape=list(a.shape), data=[float(x) for x in a.ravel()])


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for name, make in RUNS.items():
        arrays, meta = make()
        np.savez(os.path.join(outdir, name + ".npz"), **arrays)
        saved = {k: list(np.shape(v)) for k, v in arrays.items()}
        manifest.append(dict(name=name, saved=saved, heads_option=meta["heads_option"],
                             heads=meta["heads"], causal=meta["causal"],
                             weights_option=meta.get("weights_option", "auto"),
                             convention=meta["convention"],
                             course={k: exact(v) for k, v in meta["course"].items()},
                             biases={k: exact(v) for k, v in meta.get("biases", {}).items()}))
    with open(os.path.join(outdir, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    print(f"notebook_layouts: {len(RUNS)} notebooks in {outdir}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: notebook_layouts.py OUTDIR")
    main(sys.argv[1])
