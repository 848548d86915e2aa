import re
import numpy as np
from sentence_layer import X, dmse, layer, mse  # page: omit
re, np  # page: omit (sentence_layer.py's text uses them)
__LR__ = __RUN_STEPS__ = None  # page: omit

# page: include layer.py


# What the buttons call, on lesson 5's data: the sentence's X, the layer's weights, the target.
# page: include sentence_layer.py


W0 = {k: w.copy() for k, w in layer.W.items()}   # the initial weights, for "Reset"
lr = __LR__


def step(layer, lr):
    """One step of gradient descent on L: what "Step" calls."""
    Y = layer.forward(X)                # caches Q, K, V, att, ... for backward
    layer.backward(dmse(Y))             # dL/dY = 2 (Y - target) / Y.size; fills layer.grads
    layer.step(lr)                      # W -= lr * dW for each of the four weights


print("loss after 0 steps =", repr(float(mse(layer.forward(X)))))
step(layer, lr)                         # "Step"
print("loss after 1 step =", repr(float(mse(layer.forward(X)))))
for _ in range(__RUN_STEPS__):                 # "Run __RUN_STEPS__ steps"
    step(layer, lr)
print("loss after __TOTAL_STEPS__ steps =", repr(float(mse(layer.forward(X)))))
layer.W = {k: w.copy() for k, w in W0.items()}   # "Reset": the initial weights again
