#!/usr/bin/env python3
# Lesson 3 - parallel attention and concatenation (course demo)
# page: include header.py
import numpy as np
from forward import merge_heads, multi_head_attention_forward  # page: omit
from course_demo import B, C, X, h, hs, rng  # page: omit
__CAUSAL__ = None  # page: omit

# page: include forward.py


# page: include course_demo.py

# the four projections, each (C, C) / sqrt(C): the next draws of the same stream, in this order
Wq, Wk, Wv, Wo = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(4))
Y, c = multi_head_attention_forward(X, Wq, Wk, Wv, Wo, h, causal=__CAUSAL__)
Q, K, scores, headout = c["Q"], c["K"], c["scores"], c["headout"]
for name in ("X", "Q", "K", "V", "scores", "att", "headout", "concat", "Y"):
    print(f"{name:8} {c[name].shape}")

np.set_printoptions(precision=4, suppress=True, linewidth=120)
for b in range(B):
    for i in range(h):
        print(f"att batch {b} head {i}:\n", c["att"][b, i])
    # a view for the eye only: the layer never averages heads, it concatenates them
    print(f"mean over heads, batch {b}:\n", c["att"][b].mean(axis=0))
print("rowSumMaxErr =", repr(float(np.abs(c["att"].sum(-1) - 1).max())),
      "(the last bits depend on the summation order)")

# Block-diagonal vs full Wo: add 1.0 to every entry of head 0's output, recompute Y.
Wo_bd = np.zeros_like(Wo)
for i in range(h):
    Wo_bd[i * hs:(i + 1) * hs, i * hs:(i + 1) * hs] = Wo[i * hs:(i + 1) * hs, i * hs:(i + 1) * hs]
bumped = c["headout"].copy()
bumped[:, 0] += 1.0
for label, W_o in (("blockDiagDelta", Wo_bd), ("fullDelta", Wo)):
    dY = merge_heads(bumped) @ W_o - merge_heads(c["headout"]) @ W_o
    print(label, "=", [float(np.abs(dY[..., j * hs:(j + 1) * hs]).max()) for j in range(h)])

# Why / sqrt(hs): each entry of Q K^T is a dot product of hs terms of spread ~1, so its standard
# deviation is ~sqrt(hs) = __SQRT_HS__; dividing by sqrt(hs) brings the scores back to ~1.
# page: insert CHECKPOINTS
