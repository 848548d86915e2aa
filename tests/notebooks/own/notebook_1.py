"""Student notebook 1 -- compact functional style, non-causal.

Style: small helper functions (split_heads / merge_heads / softmax / forward /
backward), everything kept in a dict `cache`.  Q, K, V, dQ, dK, dV are saved in
the split per-head shape (B, h, T, hs).  Sizes: B=2, T=5, C=12, h=3 (hs=4),
not causal.  Seed: np.random.default_rng(7).

Mistakes:
1. Forward, "numerically stable" softmax subtracts the max over the wrong axis
   (per column instead of per row), which is NOT a constant per row, so the
   softmax changes:
       wrong: e = np.exp(s - s.max(axis=-2, keepdims=True))
       right: e = np.exp(s - s.max(axis=-1, keepdims=True))
2. Backward, the key gradient forgets to transpose dscores (the shapes are
   (T, T) @ (T, hs), so it runs fine):
       wrong: dK = dscores @ Q / np.sqrt(hs)
       right: dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)

Expected first differing saved array (vs a correct implementation): att
(X, weights, target, Q, K, V and scores all match).  If each step is checked
from the student's own inputs, the backward slip shows up first at dK.
"""
import sys
import numpy as np

out_path = sys.argv[1] if len(sys.argv) > 1 else 'mha_check.npz'

rng = np.random.default_rng(7)
B, T, C, h = 2, 5, 12, 3
hs = C // h

X = rng.standard_normal((B, T, C))
Wq = rng.standard_normal((C, C)) / np.sqrt(C)
Wk = rng.standard_normal((C, C)) / np.sqrt(C)
Wv = rng.standard_normal((C, C)) / np.sqrt(C)
Wo = rng.standard_normal((C, C)) / np.sqrt(C)
target = rng.standard_normal((B, T, C))


def split_heads(x):
    b, t, c = x.shape
    return x.reshape(b, t, h, c // h).transpose(0, 2, 1, 3)


def merge_heads(x):
    b, nh, t, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(b, t, nh * d)


def softmax(s):
    e = np.exp(s - s.max(axis=-2, keepdims=True))   # stability trick
    return e / e.sum(axis=-1, keepdims=True)


def forward(X):
    cache = {}
    cache['Q'] = Q = split_heads(X @ Wq)
    cache['K'] = K = split_heads(X @ Wk)
    cache['V'] = V = split_heads(X @ Wv)
    cache['scores'] = scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    cache['att'] = att = softmax(scores)
    cache['headout'] = headout = att @ V
    cache['concat'] = concat = merge_heads(headout)
    cache['Y'] = concat @ Wo
    return cache


def backward(X, dY, cache):
    g = {}
    Q, K, V, att, concat = (cache[k] for k in ('Q', 'K', 'V', 'att', 'concat'))
    g['dWo'] = concat.reshape(-1, C).T @ dY.reshape(-1, C)
    g['dconcat'] = dconcat = dY @ Wo.T
    g['dheadout'] = dheadout = split_heads(dconcat)
    g['dV'] = dV = att.transpose(0, 1, 3, 2) @ dheadout
    g['datt'] = datt = dheadout @ V.transpose(0, 1, 3, 2)
    g['dscores'] = dscores = att * (datt - (att * datt).sum(axis=-1, keepdims=True))
    g['dQ'] = dQ = dscores @ K / np.sqrt(hs)
    g['dK'] = dK = dscores @ Q / np.sqrt(hs)
    dQm, dKm, dVm = merge_heads(dQ), merge_heads(dK), merge_heads(dV)
    Xf = X.reshape(-1, C)
    g['dWq'] = Xf.T @ dQm.reshape(-1, C)
    g['dWk'] = Xf.T @ dKm.reshape(-1, C)
    g['dWv'] = Xf.T @ dVm.reshape(-1, C)
    g['dX'] = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T
    return g


cache = forward(X)
Y = cache['Y']
loss = np.mean((Y - target) ** 2)
dY = 2 * (Y - target) / Y.size
grads = backward(X, dY, cache)

print('loss =', loss)
print('att rows sum to 1:', np.allclose(cache['att'].sum(-1), 1))
print('dWq norm =', np.linalg.norm(grads['dWq']))

np.savez(out_path, X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, target=target, dY=dY,
         loss=loss, **cache, **grads)
print('saved', out_path)
