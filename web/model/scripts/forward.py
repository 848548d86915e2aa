import numpy as np  # page: omit
from heads import merge_heads, softmax, split_heads  # page: omit

# page: include heads.py


def multi_head_attention_forward(X, Wq, Wk, Wv, Wo, h, causal=False):
    """Lesson 3's forward pass: X (B, T, C) -> Y (B, T, C) through h heads of hs = C // h.
    Returns Y and a dict of every intermediate tensor, by name."""
    B, T, C = X.shape
    hs = C // h
    Q = split_heads(X @ Wq, h)                           # (B, h, T, hs)
    K = split_heads(X @ Wk, h)
    V = split_heads(X @ Wv, h)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)   # (B, h, T, T)
    masked = scores
    if causal:                                           # key j > query i is the future
        masked = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores)
    att = softmax(masked)                                # rows sum to 1
    headout = att @ V                                    # (B, h, T, hs)
    concat = merge_heads(headout)                        # (B, T, C)
    Y = concat @ Wo
    return Y, dict(X=X, Q=Q, K=K, V=V, scores=scores, att=att,
                   headout=headout, concat=concat, Y=Y)
