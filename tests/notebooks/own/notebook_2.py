"""Student notebook 2 -- explicit loop over heads, CAUSAL.

Style: no 4-D tensors for the projections; the student keeps Q, K, V as
(B, T, C) and slices out one head at a time with a python `for` loop
(columns i*hs:(i+1)*hs), then glues the heads back with np.concatenate.
Per-head results are stacked at the end so scores/att/headout/datt/dscores/
dheadout are saved as (B, h, T, ...); Q, K, V, dQ, dK, dV are saved merged
as (B, T, C).  Sizes: B=2, T=6, C=16, h=4 (hs=4), causal=True.
Seed: np.random.default_rng(2024).

Mistakes:
1. Causal mask applied AFTER the softmax by zeroing the future weights
   (rows no longer sum to 1), instead of putting -inf in the scores before
   the softmax:
       wrong: a = softmax(s) * lower          # lower = np.tril(np.ones((T, T)))
       right: a = softmax(np.where(lower == 1, s, -np.inf))
   (so the saved `scores` are the plain, unmasked scores)
2. Backward to the input multiplies by the weights instead of their
   transposes (C x C, so the shapes work):
       wrong: dX = dQ @ Wq + dK @ Wk + dV @ Wv
       right: dX = dQ @ Wq.T + dK @ Wk.T + dV @ Wv.T

Expected first differing saved array: att (or `scores`, if the reference's
saved scores already contain the -inf of the mask -- the student's scores
have no mask in them, but their finite entries are right).  Checked step by
step from the student's own inputs, the second slip shows up at dX.
"""
import sys
import numpy as np

out_path = sys.argv[1] if len(sys.argv) > 1 else 'mha_check.npz'

rng = np.random.default_rng(2024)
B, T, C, h = 2, 6, 16, 4
hs = C // h

X = rng.normal(size=(B, T, C))
Wq = rng.normal(scale=0.3, size=(C, C))
Wk = rng.normal(scale=0.3, size=(C, C))
Wv = rng.normal(scale=0.3, size=(C, C))
Wo = rng.normal(scale=0.3, size=(C, C))
target = rng.normal(size=(B, T, C))

lower = np.tril(np.ones((T, T)))   # 1 where a query may look at a key


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    ez = np.exp(z)
    return ez / ez.sum(axis=-1, keepdims=True)


# ---------------- forward ----------------
Q = X @ Wq
K = X @ Wk
V = X @ Wv

S_list, A_list, O_list = [], [], []
for i in range(h):
    cols = slice(i * hs, (i + 1) * hs)
    q, k, v = Q[:, :, cols], K[:, :, cols], V[:, :, cols]     # (B, T, hs)
    s = q @ k.transpose(0, 2, 1) / np.sqrt(hs)                 # (B, T, T)
    a = softmax(s) * lower                                     # causal: no peeking ahead
    o = a @ v
    S_list.append(s)
    A_list.append(a)
    O_list.append(o)

concat = np.concatenate(O_list, axis=-1)                       # (B, T, C)
Y = concat @ Wo
loss = np.mean((Y - target) ** 2)
dY = 2 * (Y - target) / Y.size

# ---------------- backward ----------------
dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)
dconcat = dY @ Wo.T

dQ = np.zeros_like(Q)
dK = np.zeros_like(K)
dV = np.zeros_like(V)
dO_list, dA_list, dS_list = [], [], []
for i in range(h):
    cols = slice(i * hs, (i + 1) * hs)
    q, k, v = Q[:, :, cols], K[:, :, cols], V[:, :, cols]
    a = A_list[i]
    do = dconcat[:, :, cols]
    dv = a.transpose(0, 2, 1) @ do
    da = do @ v.transpose(0, 2, 1)
    ds = a * (da - np.sum(a * da, axis=-1, keepdims=True))
    dQ[:, :, cols] = ds @ k / np.sqrt(hs)
    dK[:, :, cols] = ds.transpose(0, 2, 1) @ q / np.sqrt(hs)
    dV[:, :, cols] = dv
    dO_list.append(do)
    dA_list.append(da)
    dS_list.append(ds)

Xflat = X.reshape(-1, C)
dWq = Xflat.T @ dQ.reshape(-1, C)
dWk = Xflat.T @ dK.reshape(-1, C)
dWv = Xflat.T @ dV.reshape(-1, C)
dX = dQ @ Wq + dK @ Wk + dV @ Wv

print('loss:', loss)
print('future weights are zero:', all(np.all(a * (1 - lower) == 0) for a in A_list))

np.savez(out_path,
         X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, target=target, dY=dY,
         Q=Q, K=K, V=V,
         scores=np.stack(S_list, axis=1), att=np.stack(A_list, axis=1),
         headout=np.stack(O_list, axis=1), concat=concat, Y=Y, loss=loss,
         dWo=dWo, dconcat=dconcat, dheadout=np.stack(dO_list, axis=1),
         datt=np.stack(dA_list, axis=1), dscores=np.stack(dS_list, axis=1),
         dQ=dQ, dK=dK, dV=dV, dWq=dWq, dWk=dWk, dWv=dWv, dX=dX)
print('saved to', out_path)
