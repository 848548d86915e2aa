import numpy as np  # page: omit
from forward import merge_heads, multi_head_attention_forward, split_heads  # page: omit


# page: include forward.py


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
        W = self.W
        Y, cache = multi_head_attention_forward(X, W["Wq"], W["Wk"], W["Wv"], W["Wo"],
                                                self.h, self.causal)   # lesson 3's forward
        # cache the forward: keep its intermediates (Q, K, V, att, ...) for backward(), which
        # reads them instead of computing them again
        self.cache = cache
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
