import numpy as np  # page: omit
from layer import MultiHeadAttention  # page: omit
from sentence import C, T, randn, rng  # page: omit
__HEADS__ = __CAUSAL__ = None  # page: omit

# page: include sentence.py
h = __HEADS__
# the layer draws Wq, Wk, Wv, Wo next from the same stream, after E; then the seeded target
# page: if LEGACY
layer = MultiHeadAttention(C, h, seed=np.random, causal=__CAUSAL__)
# page: else
layer = MultiHeadAttention(C, h, seed=rng, causal=__CAUSAL__)
# page: end
target = randn(1, T, C)


def mse(Y):
    return np.mean((Y - target) ** 2)


def dmse(Y):
    return 2 * (Y - target) / Y.size
