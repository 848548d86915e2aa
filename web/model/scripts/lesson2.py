#!/usr/bin/env python3
# Lesson 2 - splitting into heads: (1, __T__, __C__) -> (1, __T__, __HEADS__, __HS__) -> (1, __HEADS__, __T__, __HS__)
# page: include header.py
import numpy as np
__SEED__ = __T__ = __C__ = __HEADS__ = __HS__ = None  # page: omit

rng = np.random.default_rng(__SEED__)
x = rng.standard_normal((1, __T__, __C__))
Wq = rng.standard_normal((__C__, __C__)) / np.sqrt(__C__)
h, hs = __HEADS__, __HS__

q = x @ Wq                              # (1, __T__, __C__): one matmul for all heads
q4 = q.reshape(1, __T__, h, hs)             # (1, __T__, __HEADS__, __HS__): cut each row into __HEADS__ pieces of __HS__
heads = q4.transpose(0, 2, 1, 3)        # (1, __HEADS__, __T__, __HS__): head axis before the token axis
print("x", x.shape, "-> q", q.shape, "-> q4", q4.shape, "-> heads", heads.shape)

# Proof 1: head i is exactly x projected by the i-th block of __HS__ columns of Wq.
# (NumPy's BLAS, the library that does its matrix products, may sum the narrow product in
# another order; then this prints ~1e-16, not 0.)
head_max_diff = max(np.abs(heads[:, i] - x @ Wq[:, i * hs:(i + 1) * hs]).max() for i in range(h))
print("headMaxDiff =", repr(float(head_max_diff)))

# Proof 2: merging undoes splitting exactly (it only moves numbers around).
merged = heads.transpose(0, 2, 1, 3).reshape(1, __T__, __C__)
round_trip = np.abs(merged - q).max()
print("roundTrip =", repr(float(round_trip)))

# Both proofs compare the split with a recomputation from the same x and Wq: they would print 0
# with a wrong Wq too. The values below are what tell whether your q is the course's.
# page: insert CHECKPOINTS
