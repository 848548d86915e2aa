import re
import numpy as np
from sentence import X, ids, tokens  # page: omit
re, np  # page: omit (sentence.py's text uses them)

# page: include sentence.py

print("tokens:", tokens)
print("rows:  ", ids)
print("X.shape =", X.shape)
print("X[0, 0, :4] =", X[0, 0, :4].tolist())
