import re  # page: omit
import numpy as np  # page: omit
__SENTENCE__ = __TOKENS__ = __C__ = __SEED__ = None  # page: omit

sentence = __SENTENCE__

# Tokens: words are runs of letters, digits and apostrophes; every other
# non-space character (punctuation, each emoji code point) is a token of its
# own; whitespace only separates.
tokens = re.findall(r"(?:[^\W_]|')+|\S", sentence)
assert tokens == __TOKENS__, tokens

# Vocabulary: distinct lower-cased tokens in order of first appearance.
# The same word in any case ("The", "the") always uses the same row of E.
vocab = list(dict.fromkeys(t.lower() for t in tokens))
ids = [vocab.index(t.lower()) for t in tokens]
T, V = len(tokens), len(vocab)

C = __C__
# page: if LEGACY
np.random.seed(__SEED__)            # legacy stream: np.random.seed + np.random.randn
randn = lambda *shape: np.random.randn(*shape)
# page: else
rng = np.random.default_rng(__SEED__)   # ONE stream for everything below, in this order
randn = lambda *shape: rng.standard_normal(shape)
# page: end

E = randn(V, C)        # one row per vocabulary word
X = E[ids][None]       # (1, T, C): token t uses row ids[t]
# page: if PE

# Sinusoidal positional encoding (on): PE[t, 2i] = sin(t / 10000**(2i/C)),
# PE[t, 2i+1] = cos(t / 10000**(2i/C)).  sin, cos and ** are not correctly
# rounded: NumPy, JavaScript engines and browsers may differ in the last bit, so
# with PE on this X agrees with the page's to the last digit or two, not bit for
# bit (without PE, X is a random draw: bit-identical).
pos = np.arange(T)[:, None]
two_i = np.arange(0, C, 2)[None, :]
angle = pos / 10000 ** (two_i / C)
PE = np.zeros((T, C))
PE[:, 0::2] = np.sin(angle)
PE[:, 1::2] = np.cos(angle)
X = X + PE
# page: end
