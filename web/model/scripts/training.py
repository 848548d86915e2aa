#!/usr/bin/env python3
# __TITLE__
# page: include header.py
import re
import numpy as np
from gradcheck import gradcheck, print_gradcheck  # page: omit
from sentence_layer import X, dmse, h, layer, mse  # page: omit
re  # page: omit (sentence.py's text uses it)
__CHECK__ = __EPS__ = __POINTS__ = __THRESHOLD__ = __FORM__ = __LRS__ = None  # page: omit

# page: include layer.py


# page: include gradcheck.py


# page: include sentence_layer.py


# The gradient check of the MSE loss at the initial weights (every entry; slower for big sizes).
FULL_CHECK = __CHECK__
if FULL_CHECK:
    Y0 = layer.forward(X)
    print_gradcheck(gradcheck(layer, X, mse, dmse(Y0), eps=__EPS__, points=__POINTS__), threshold=__THRESHOLD__, form=__FORM__)

# Gradient descent: one entry per step, the learning rate used for that step.
lrs = __LRS__
Y0 = layer.forward(X)                       # Y at the initial weights
losses = [mse(Y0)]                          # losses[k] = loss after k steps
for lr in lrs:
    Y = layer.forward(X)
    layer.backward(dmse(Y))
    layer.step(lr)
    losses.append(mse(layer.forward(X)))
for k, L in enumerate(losses):
    print(f"step {k:3d}  loss = {float(L)!r}")
# page: if CHECKPOINTS

# page: insert CHECKPOINTS
# page: end
# page: if PRINT_ATT

np.set_printoptions(precision=4, suppress=True, linewidth=120)
att = layer.cache["att"]                    # (1, h, T, T) at the current weights
for i in range(h):
    print(f"head {i} attention, att[0, {i}] (query row -> key column):\n", att[0, i])
print("mean over heads, att[0].mean(axis=0) (a view: the layer never averages heads):\n",
      att[0].mean(axis=0))
# page: end
