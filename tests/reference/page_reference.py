#!/usr/bin/python3
"""NumPy reference for the companion page's computations (web/model.js), written from the
course's description, not from the JS: tokens and vocabulary, positional encoding, the input X of
a sentence, lessons 1-4 on their documented random streams, the sentence model of lesson 5 and
its training loop.

Usage:
    /usr/bin/python3 tests/reference/page_reference.py OUTDIR

Writes OUTDIR/page.json (tests/model/*.test.mjs read it). mha_reference.py runs this too, so
`make reference` produces it.
"""

import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mha_reference import (  # noqa: E402  (the course's layer, lessons 1-5)
    mha_backward,
    mha_forward,
    mse_loss,
    single_head_attention,
    split_heads,
)

DEFAULT_SENTENCE = "The lanterns of Lantern Bay guide boats home"
# Words in several cases, punctuation, an apostrophe, digits, an underscore, an emoji, accents.
SENTENCES = [
    DEFAULT_SENTENCE,
    "The boats; the BOATS, THE boats!",
    "Don't stop: it's 3.14 -- snake_case, naïve café 🙂🙂 über",
    "   spaces\tand\nnewlines   ",
    "",
    "ÉCOLE école École",
    "日本語 のテキスト",
]

# Python's form of the page's tokenizer (web/model.js, tokenize): runs of letters, digits and
# apostrophes are words; any other non-space character is a token of its own.
TOKEN_RE = re.compile(r"(?:[^\W_]|')+|\S")


def tokenize(text):
    return TOKEN_RE.findall(text)


def vocabulary(tokens):
    """Distinct lower-cased tokens in order of first appearance, and each token's row."""
    vocab, index, ids = [], {}, []
    for tok in tokens:
        key = tok.lower()
        if key not in index:
            index[key] = len(vocab)
            vocab.append(key)
        ids.append(index[key])
    return vocab, ids


def positional_encoding(T, C):
    """PE[t, 2i] = sin(t / 10000**(2i/C)), PE[t, 2i+1] = cos(t / 10000**(2i/C))."""
    pe = np.zeros((T, C))
    t = np.arange(T)[:, None]
    c = np.arange(0, C, 2)[None, :]
    angle = t / 10000 ** (c / C)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : C // 2])
    return pe


def make_rng(seed, kind):
    return np.random.default_rng(seed) if kind == "default_rng" else np.random.RandomState(seed)


def build_input(rng, tokens, C, pe=False):
    """E = standard_normal((V, C)); X = E[ids][None]; X += PE when pe."""
    vocab, ids = vocabulary(tokens)
    E = rng.standard_normal((len(vocab), C))
    X = E[ids][None]
    if pe:
        X = X + positional_encoding(len(tokens), C)[None]
    return X, E, vocab, ids


def arr(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": [int(s) for s in a.shape], "data": [float(x) for x in a.reshape(-1)]}


def lesson1(tokens, C=64, hs=16, seed=42):
    """Two single heads with their own (C, hs) projections on the sentence, one stream."""
    rng = np.random.default_rng(seed)
    X, _, _, _ = build_input(rng, tokens, C)
    atts = []
    for _ in range(2):
        Wq = rng.standard_normal((C, hs)) / np.sqrt(C)
        Wk = rng.standard_normal((C, hs)) / np.sqrt(C)
        Wv = rng.standard_normal((C, hs)) / np.sqrt(C)
        atts.append(single_head_attention(X, Wq, Wk, Wv, False)[0][0])
    A1, A2 = atts
    diff = A1 - A2
    am1, am2 = np.argmax(A1, axis=1), np.argmax(A2, axis=1)
    return {
        "A1": arr(A1), "A2": arr(A2), "maxGap": float(np.max(np.abs(diff))),
        "argmax1": [int(i) for i in am1], "argmax2": [int(i) for i in am2],
        "argmaxDiffRows": [int(t) for t in np.nonzero(am1 != am2)[0]],
        "compare": one_vs_four(X, rng, C),
    }


def one_vs_four(X, rng, C, heads=4):
    """Lesson 1's comparison at equal parameter count, drawn after the two heads: Wq, Wk, Wv (C, C)
    / sqrt(C); one head of hs = C against `heads` heads, head i on columns i*hs:(i+1)*hs."""
    Wq, Wk, Wv = (rng.standard_normal((C, C)) / np.sqrt(C) for _ in range(3))
    single = single_head_attention(X, Wq, Wk, Wv, False)[0][0]
    hs = C // heads
    cols = [slice(i * hs, (i + 1) * hs) for i in range(heads)]
    four = [single_head_attention(X, Wq[:, c], Wk[:, c], Wv[:, c], False)[0][0] for c in cols]
    four_am = np.array([np.argmax(a, axis=1) for a in four])
    T = X.shape[1]
    distinct = [len(set(four_am[:, t].tolist())) for t in range(T)]
    return {
        "single": arr(single), "four": arr(np.array(four)),
        "singleArgmax": [int(i) for i in np.argmax(single, axis=1)],
        "fourArgmax": four_am.tolist(), "distinct": distinct,
        "disagreeRows": [t for t in range(T) if distinct[t] > 1],
    }


def lesson2(seed=42, T=6, C=64, heads=4):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, T, C))
    Wq = rng.standard_normal((C, C)) / np.sqrt(C)
    q = x @ Wq
    return {"x": arr(x), "Wq": arr(Wq), "q": arr(q), "Qheads": arr(split_heads(q, heads))}


def course_data(seed=42, B=2, T=6, C=64):
    """X (B, T, C), then Wq, Wk, Wv, Wo (C, C) / sqrt(C), then dY (B, T, C): one stream."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((B, T, C))
    W = {k: rng.standard_normal((C, C)) / np.sqrt(C) for k in ("Wq", "Wk", "Wv", "Wo")}
    dY = rng.standard_normal((B, T, C))
    return X, W, dY


def block_diagonal(Wo, heads):
    C = Wo.shape[0]
    hs = C // heads
    head = np.arange(C) // hs
    return np.where(head[:, None] == head[None, :], Wo, 0.0)


def block_maxima(d, heads):
    """max |d| over each hs-wide column block of d (..., C)."""
    C = d.shape[-1]
    return [float(np.max(np.abs(b))) for b in np.split(d.reshape(-1, C), heads, axis=1)]


def lesson3(causal, heads=4):
    X, W, _ = course_data()
    Y, cache = mha_forward(X, W, heads, causal)
    out = {k: arr(v) for k, v in cache.items() if k != "X"}
    out["QK"] = arr(cache["Q"] @ cache["K"].transpose(0, 1, 3, 2))
    # +1.0 on every entry of head 0's headout; Y recomputed with the full and block-diagonal Wo
    headout = cache["headout"].copy()
    headout[:, 0] += 1.0
    B, h, T, hs = headout.shape
    concat = headout.transpose(0, 2, 1, 3).reshape(B, T, h * hs)
    full = concat @ W["Wo"] - Y
    Wbd = block_diagonal(W["Wo"], heads)
    bd = concat @ Wbd - cache["concat"] @ Wbd
    out["fullDeltaY"], out["bdDeltaY"] = arr(full), arr(bd)
    out["fullDelta"], out["blockDiagDelta"] = block_maxima(full, heads), block_maxima(bd, heads)
    out["rowSums"] = arr(cache["att"].sum(axis=-1))
    return out


def lesson4(heads=4):
    X, W, dY = course_data()
    Y, cache = mha_forward(X, W, heads, False)
    g = mha_backward(dY, cache, W, heads)
    out = {k: arr(v) for k, v in g.items()}
    out["Y"] = arr(Y)
    out["loss"] = float(np.sum(dY * Y))
    return out


MODELS = [
    dict(name="default", sentence=DEFAULT_SENTENCE, C=64, heads=4, seed=42, rng="default_rng",
         pe=False, causal=False, lrs=[0.1, 0.1, 0.1, 0.5, 0.05]),
    dict(name="legacy_pe_causal", sentence="The boats; the BOATS, THE boats!", C=32, heads=8,
         seed=7, rng="legacy", pe=True, causal=True, lrs=[0.2, 1.0, 0.01]),
    dict(name="odd_width", sentence="Don't stop: it's 3.14", C=48, heads=3, seed=2**40 + 3,
         rng="default_rng", pe=True, causal=False, lrs=[0.3]),
]


def sentence_model(cfg):
    """Lesson 5: one stream: E, then Wq, Wk, Wv, Wo (C, C) / sqrt(C), then target (1, T, C);
    then the guided project's loop (W -= lr * dW on the MSE loss), one learning rate a step."""
    tokens = tokenize(cfg["sentence"])
    C, heads = cfg["C"], cfg["heads"]
    rng = make_rng(cfg["seed"], cfg["rng"])
    X, E, vocab, ids = build_input(rng, tokens, C, cfg["pe"])
    W = {k: rng.standard_normal((C, C)) / np.sqrt(C) for k in ("Wq", "Wk", "Wv", "Wo")}
    target = rng.standard_normal((1, len(tokens), C))
    doc = {k: cfg[k] for k in ("name", "sentence", "C", "heads", "seed", "rng", "pe", "causal")}
    doc.update(tokens=tokens, vocab=vocab, ids=ids, X=arr(X), E=arr(E), target=arr(target))
    doc["W"] = {k: arr(v) for k, v in W.items()}
    if cfg["pe"]:
        doc["PE"] = arr(positional_encoding(len(tokens), C))
    Wt = {k: v.copy() for k, v in W.items()}
    Y, cache = mha_forward(X, Wt, heads, cfg["causal"])
    losses = [float(mse_loss(Y, target)[0])]
    for lr in cfg["lrs"]:
        _, dY = mse_loss(Y, target)
        g = mha_backward(dY, cache, Wt, heads)
        for k in Wt:
            Wt[k] = Wt[k] - lr * g["d" + k]
        Y, cache = mha_forward(X, Wt, heads, cfg["causal"])
        losses.append(float(mse_loss(Y, target)[0]))
    doc["lrs"] = cfg["lrs"]
    doc["losses"] = losses
    doc["trainedW"] = {k: arr(v) for k, v in Wt.items()}
    doc["Y"], doc["att"] = arr(Y), arr(cache["att"])
    return doc


def page_reference():
    doc = {"tokenize": [], "positional_encoding": []}
    for s in SENTENCES:
        tokens = tokenize(s)
        vocab, ids = vocabulary(tokens)
        doc["tokenize"].append({"text": s, "tokens": tokens, "vocab": vocab, "ids": ids})
    for T, C in ((6, 8), (5, 7), (64, 128), (1, 1), (3, 2)):
        doc["positional_encoding"].append({"T": T, "C": C, "pe": arr(positional_encoding(T, C))})
    doc["lesson1"] = lesson1(tokenize(DEFAULT_SENTENCE))
    doc["lesson2"] = lesson2()
    doc["lesson3"] = lesson3(False)
    doc["lesson3_causal"] = lesson3(True)
    doc["lesson4"] = lesson4()
    doc["models"] = [sentence_model(cfg) for cfg in MODELS]
    return doc


def main(argv):
    if len(argv) != 2:
        print("usage: %s OUTDIR" % argv[0], file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    path = os.path.join(argv[1], "page.json")
    with open(path, "w") as f:
        json.dump(page_reference(), f, allow_nan=False, ensure_ascii=False)
    print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
