#!/usr/bin/env python3
# Lesson 1 - why one head isn't enough: two independent single heads on the sentence
# page: include header.py
import re
import numpy as np
from sentence import C, T, X, randn, tokens  # page: omit
re  # page: omit (sentence.py's text uses it)
__HS__ = None  # page: omit

# page: include sentence.py
hs = __HS__

# Two heads, each with its own projections, drawn next from the same stream:
Wq1, Wk1, Wv1 = (randn(C, hs) / np.sqrt(C) for _ in range(3))   # head A
Wq2, Wk2, Wv2 = (randn(C, hs) / np.sqrt(C) for _ in range(3))   # head B


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def single_head(X, Wq, Wk, Wv):
    q, k, v = X @ Wq, X @ Wk, X @ Wv                  # (1, T, hs) each
    att = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(Wq.shape[1]))   # (1, T, T)
    return att[0], (att @ v)[0]


A1, _ = single_head(X, Wq1, Wk1, Wv1)
A2, _ = single_head(X, Wq2, Wk2, Wv2)

np.set_printoptions(precision=4, suppress=True, linewidth=120)
print("head A attention (query row -> key column):\n", A1)
print("head B attention:\n", A2)
print("A - B:\n", A1 - A2)
max_gap = np.abs(A1 - A2).max()
print("maxGap =", repr(float(max_gap)))
rows = [t for t in range(T) if A1[t].argmax() != A2[t].argmax()]   # first max wins on ties
print(f"rows whose argmax differs: {len(rows)} of {T}:", rows, [tokens[t] for t in rows])
print("argmax A:", A1.argmax(axis=1).tolist())
print("argmax B:", A2.argmax(axis=1).tolist())

# page: insert CHECKPOINTS
