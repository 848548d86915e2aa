import numpy as np  # page: omit


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)   # stable: subtract the row max
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def split_heads(x, h):
    """(B, T, C) -> (B, h, T, C // h)"""
    B, T, C = x.shape
    return x.reshape(B, T, h, C // h).transpose(0, 2, 1, 3)


def merge_heads(x):
    """(B, h, T, hs) -> (B, T, h * hs), the inverse of split_heads"""
    B, h, T, hs = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * hs)


class MultiHeadAttention:
    """The layer as a reusable object: forward, backward, and a gradient-descent step."""

    def __init__(self, C, h, seed=0, causal=False):
        """C features in h heads of hs = C // h. The weights Wq, Wk, Wv, Wo are drawn here, in
        this order, each rng.standard_normal((C, C)) / np.sqrt(C) with
        rng = np.random.default_rng(seed). seed may also be a Generator (default_rng returns it
        as it is: the weights are then its next draws) or the legacy np.random module."""
        assert C % h == 0, f"h = {h} heads must divide C = {C}"
        rng = seed if hasattr(seed, "standard_normal") else np.random.default_rng(seed)
        self.W = {name: rng.standard_normal((C, C)) / np.sqrt(C)
                  for name in ("Wq", "Wk", "Wv", "Wo")}
        self.h = h
        self.causal = causal

    def forward(self, X):
        W, h = self.W, self.h
        B, T, C = X.shape
        hs = C // h
        Q = split_heads(X @ W["Wq"], h)                      # (B, h, T, hs)
        K = split_heads(X @ W["Wk"], h)
        V = split_heads(X @ W["Wv"], h)
        scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)   # (B, h, T, T)
        masked = scores
        if self.causal:                                      # key j > query i is the future
            masked = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)
        att = softmax(masked)                                # rows sum to 1
        headout = att @ V                                    # (B, h, T, hs)
        concat = merge_heads(headout)                        # (B, T, C)
        Y = concat @ W["Wo"]
        # cache the forward: keep the tensors backward() reads, so it recomputes none of them
        self.cache = dict(X=X, Q=Q, K=K, V=V, scores=scores, att=att,
                          headout=headout, concat=concat, Y=Y)
        return Y

    def backward(self, dY):
        c, W, h = self.cache, self.W, self.h
        B, T, C = dY.shape
        hs = C // h
        g = {}
        g["dWo"] = c["concat"].reshape(-1, C).T @ dY.reshape(-1, C)
        g["dconcat"] = dY @ W["Wo"].T
        g["dheadout"] = split_heads(g["dconcat"], h)
        g["dV"] = c["att"].transpose(0, 1, 3, 2) @ g["dheadout"]
        g["datt"] = g["dheadout"] @ c["V"].transpose(0, 1, 3, 2)
        g["dscores"] = c["att"] * (g["datt"] - (g["datt"] * c["att"]).sum(-1, keepdims=True))
        g["dQ"] = g["dscores"] @ c["K"] / np.sqrt(hs)
        g["dK"] = g["dscores"].transpose(0, 1, 3, 2) @ c["Q"] / np.sqrt(hs)
        X2 = c["X"].reshape(-1, C)
        dQm, dKm, dVm = merge_heads(g["dQ"]), merge_heads(g["dK"]), merge_heads(g["dV"])
        g["dWq"] = X2.T @ dQm.reshape(-1, C)
        g["dWk"] = X2.T @ dKm.reshape(-1, C)
        g["dWv"] = X2.T @ dVm.reshape(-1, C)
        g["dX"] = dQm @ W["Wq"].T + dKm @ W["Wk"].T + dVm @ W["Wv"].T
        self.grads = g
        return g["dX"]

    def step(self, lr):
        for k in self.W:
            self.W[k] -= lr * self.grads["d" + k]
