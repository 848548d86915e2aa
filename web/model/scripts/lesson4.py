#!/usr/bin/env python3
# Lesson 4 - the backward pass and its gradient check (course demo)
# page: include header.py
import numpy as np
from layer import MultiHeadAttention  # page: omit
from gradcheck import gradcheck, print_gradcheck  # page: omit
from course_demo import B, C, T, X, h, rng  # page: omit
__THRESHOLD__ = None  # page: omit

# page: include layer.py


# page: include gradcheck.py


# page: include course_demo.py
layer = MultiHeadAttention(C, h, seed=rng)   # Wq, Wk, Wv, Wo: the next draws
dY = rng.standard_normal((B, T, C))     # upstream gradient; the loss is L = sum(dY * Y)

Y = layer.forward(X)
print("L = sum(dY * Y) =", repr(float(np.sum(dY * Y))))
dX = layer.backward(dY)
g = layer.grads
dWo = g["dWo"]
for name in ("dWo", "dconcat", "dheadout", "dV", "datt", "dscores", "dQ", "dK", "dWq", "dWk", "dWv", "dX"):
    print(f"{name:9} {str(g[name].shape):16} max|g| = {float(np.abs(g[name]).max())!r:22} "
          f"norm = {float(np.sqrt((g[name] ** 2).sum()))!r}")

# page: insert CHECKPOINTS

# The check compares every analytic entry with the finite difference (about 10 s in NumPy).
# Error digits depend on rounding, so compare magnitudes with the page, not digits.
FULL_CHECK = True
if FULL_CHECK:
    print_gradcheck(gradcheck(layer, X, lambda Y: np.sum(dY * Y), dY), threshold=__THRESHOLD__)
