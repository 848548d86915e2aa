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
