import numpy as np  # page: omit
__SEED__ = __B__ = __T__ = __C__ = __HEADS__ = None  # page: omit

rng = np.random.default_rng(__SEED__)          # the course demo: seed __SEED__, B=__B__, T=__T__, C=__C__, h=__HEADS__
B, T, C, h = __B__, __T__, __C__, __HEADS__
hs = C // h
X = rng.standard_normal((B, T, C))
