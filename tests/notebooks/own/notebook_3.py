"""Student notebook 3 -- Lesson 5 style: a MultiHeadAttention class + training.

Style: class with __init__/forward/backward that stores its intermediates on
`self` (self.att, self.concat, ...) and its gradients as self.dWq etc.;
a `causal` flag exists but is off.  One forward/backward is saved for the
check, then 10 steps of gradient descent with a generic "loop over the
parameter list" update.  Sizes: B=3, T=4, C=8, h=2 (hs=4), causal=False,
lr=0.5, steps=10.  Seed: np.random.default_rng(42).

Mistakes:
1. Backward, output-projection gradient written the other way round (C x C,
   so it runs) -- it is dWo transposed:
       wrong: self.dWo = dY.reshape(-1, C).T @ self.concat.reshape(-1, C)
       right: self.dWo = self.concat.reshape(-1, C).T @ dY.reshape(-1, C)
2. Training, the list of gradients is built once before the loop.  backward()
   assigns NEW arrays to self.dWq etc. every call, so the list keeps pointing
   at the gradients of the first (check) pass and every step reuses them
   (the loss still goes down, so it is easy to miss):
       wrong: grads = [mha.dWq, mha.dWk, mha.dWv, mha.dWo]   # before the loop
       right: the same line inside the loop, after mha.backward(dY)

Expected first differing saved array: dWo (everything in the forward pass,
dconcat, dheadout ... dX and the other weight gradients are right).  Among
the training arrays: losses[0] matches; losses[1] already differs because of
the wrong dWo (with only mistake 2, step 0 would be right and losses[2] would
be the first to differ); all four *_after weights differ.
"""
import sys
import numpy as np

out_path = sys.argv[1] if len(sys.argv) > 1 else 'mha_check.npz'


class MultiHeadAttention:
    def __init__(self, C, h, rng, causal=False):
        assert C % h == 0
        self.C, self.h, self.hs = C, h, C // h
        self.causal = causal
        std = 1.0 / np.sqrt(C)
        self.Wq = rng.normal(0, std, (C, C))
        self.Wk = rng.normal(0, std, (C, C))
        self.Wv = rng.normal(0, std, (C, C))
        self.Wo = rng.normal(0, std, (C, C))

    def _split(self, x):
        B, T, _ = x.shape
        return x.reshape(B, T, self.h, self.hs).transpose(0, 2, 1, 3)

    def _merge(self, x):
        B, _, T, _ = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, self.C)

    def forward(self, X):
        self.X = X
        T = X.shape[1]
        self.Q = self._split(X @ self.Wq)
        self.K = self._split(X @ self.Wk)
        self.V = self._split(X @ self.Wv)
        self.scores = self.Q @ self.K.transpose(0, 1, 3, 2) / np.sqrt(self.hs)
        if self.causal:
            future = np.triu(np.ones((T, T), dtype=bool), k=1)
            self.scores = np.where(future, -np.inf, self.scores)
        e = np.exp(self.scores - self.scores.max(-1, keepdims=True))
        self.att = e / e.sum(-1, keepdims=True)
        self.headout = self.att @ self.V
        self.concat = self._merge(self.headout)
        return self.concat @ self.Wo

    def backward(self, dY):
        C = self.C
        self.dWo = dY.reshape(-1, C).T @ self.concat.reshape(-1, C)
        self.dconcat = dY @ self.Wo.T
        self.dheadout = self._split(self.dconcat)
        self.dV = self.att.transpose(0, 1, 3, 2) @ self.dheadout
        self.datt = self.dheadout @ self.V.transpose(0, 1, 3, 2)
        rowdot = np.sum(self.att * self.datt, axis=-1, keepdims=True)
        self.dscores = self.att * (self.datt - rowdot)
        self.dQ = self.dscores @ self.K / np.sqrt(self.hs)
        self.dK = self.dscores.transpose(0, 1, 3, 2) @ self.Q / np.sqrt(self.hs)
        dQm, dKm, dVm = self._merge(self.dQ), self._merge(self.dK), self._merge(self.dV)
        Xf = self.X.reshape(-1, C)
        self.dWq = Xf.T @ dQm.reshape(-1, C)
        self.dWk = Xf.T @ dKm.reshape(-1, C)
        self.dWv = Xf.T @ dVm.reshape(-1, C)
        self.dX = dQm @ self.Wq.T + dKm @ self.Wk.T + dVm @ self.Wv.T
        return self.dX


def mse(Y, target):
    return np.mean((Y - target) ** 2), 2 * (Y - target) / Y.size


rng = np.random.default_rng(42)
B, T, C, h = 3, 4, 8, 2
mha = MultiHeadAttention(C, h, rng)
X = rng.normal(size=(B, T, C))
target = rng.normal(size=(B, T, C))

# keep copies of the starting weights for the check
Wq0, Wk0, Wv0, Wo0 = mha.Wq.copy(), mha.Wk.copy(), mha.Wv.copy(), mha.Wo.copy()

# one pass, saved for the check
Y = mha.forward(X)
loss, dY = mse(Y, target)
dX = mha.backward(dY)
check = dict(X=X, Wq=Wq0, Wk=Wk0, Wv=Wv0, Wo=Wo0, target=target, dY=dY,
             Q=mha.Q, K=mha.K, V=mha.V, scores=mha.scores, att=mha.att,
             headout=mha.headout, concat=mha.concat, Y=Y, loss=loss,
             dWo=mha.dWo, dconcat=mha.dconcat, dheadout=mha.dheadout,
             dV=mha.dV, datt=mha.datt, dscores=mha.dscores, dQ=mha.dQ,
             dK=mha.dK, dWq=mha.dWq, dWk=mha.dWk, dWv=mha.dWv, dX=dX)

# gradient descent
lr, steps = 0.5, 10
losses = []
params = [mha.Wq, mha.Wk, mha.Wv, mha.Wo]
grads = [mha.dWq, mha.dWk, mha.dWv, mha.dWo]
for step in range(steps):
    Y = mha.forward(X)
    loss, dY = mse(Y, target)
    mha.backward(dY)
    losses.append(loss)
    for W, dW in zip(params, grads):
        W -= lr * dW
    print(f'step {step:2d}  loss {loss:.6f}')

np.savez(out_path, **check, losses=np.array(losses), lr=lr, steps=steps,
         Wq_after=mha.Wq, Wk_after=mha.Wk, Wv_after=mha.Wv, Wo_after=mha.Wo)
print('saved', out_path)
