import numpy as np  # page: omit
from layer import softmax, split_heads  # page: omit
from sentence import C, T, V, X  # page: omit
from training import h, layer  # page: omit
__SEED__ = None  # page: omit

# page: include training.py
# page: if TRAINED

# The attention the playground shows: after the __STEP_COUNT__ above (the layer's weights now).
layer.forward(X)                            # fills layer.cache at the current weights
att = layer.cache["att"][0]                 # (h, T, T)
label = "after __STEP_COUNT__"
# page: else

# The attention the playground shows: at the initial weights, before any step. The training
# above changed the layer's weights, so draw the initial Wq and Wk again: the two draws after E.
# page: if LEGACY
np.random.seed(__SEED__)                 # the same legacy stream again, from the start
randn0 = lambda *shape: np.random.randn(*shape)
# page: else
rng0 = np.random.default_rng(__SEED__)    # the same stream again, from the start
randn0 = lambda *shape: rng0.standard_normal(shape)
# page: end
randn0(V, C)                                                     # E (already in X)
Wq0, Wk0 = (randn0(C, C) / np.sqrt(C) for _ in range(2))
Q0, K0 = split_heads(X @ Wq0, h), split_heads(X @ Wk0, h)        # (1, h, T, hs)
scores0 = Q0 @ K0.transpose(0, 1, 3, 2) / np.sqrt(C // h)
# page: if CAUSAL
scores0 = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, scores0)   # causal
# page: end
att = softmax(scores0)[0]                                        # (h, T, T), initial weights
label = "initial weights"
# page: end

np.set_printoptions(precision=4, suppress=True, linewidth=120)
for i in range(h):
    print(f"head {i} attention, {label} (query row -> key column):\n", att[i])
print(f"mean over heads, {label}:\n", att.mean(axis=0))
