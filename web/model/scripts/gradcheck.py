import numpy as np  # page: omit
from layer import merge_heads, softmax  # page: omit
__TWO_POINT_EPS__ = None  # page: omit


def loss_after(layer, c, start, loss):
    """The loss recomputed from the (edited) cache entry `start` onwards."""
    W, h = layer.W, layer.h
    B, T, C = c["X"].shape
    hs = C // h
    c = dict(c)
    if start in ("Q", "K"):
        c["scores"] = c["Q"] @ c["K"].transpose(0, 1, 3, 2) / np.sqrt(hs)
    if start in ("Q", "K", "scores"):
        s = c["scores"]
        if layer.causal:
            s = np.where(np.triu(np.ones((T, T), dtype=bool), 1), -np.inf, s)
        c["att"] = softmax(s)
    if start in ("Q", "K", "V", "scores", "att"):
        c["headout"] = c["att"] @ c["V"]
    if start != "concat":
        c["concat"] = merge_heads(c["headout"])
    return loss(c["concat"] @ W["Wo"])


def gradcheck(layer, X, loss, dY, eps=__TWO_POINT_EPS__, points=2):
    """Central differences over every entry of the weights, X and the intermediates, in the
    order lesson 4 computes their gradients (dWo, dconcat, ... dX): two-point (L(x+e)-L(x-e)) / 2e,
    or with points=5 (and eps=__FIVE_POINT_EPS__) the five-point (8(L(x+e)-L(x-e)) - (L(x+2e)-L(x-2e))) / 12e.
    Rows: gradient, shape, max abs error, max rel error per entry |a-n| / max(|a|, |n|) (strict:
    one tiny entry sets it), the same in cs231n's form |a-n| / max(1e-8, |a|+|n|), and the
    norm-wise ||a - n|| / (||a|| + ||n||) (it weighs entries by their size, so it is far smaller)."""
    layer.forward(X)
    layer.backward(dY)
    g = layer.grads
    rows = []
    for name in ("Wo", "concat", "headout", "V", "att", "scores", "Q", "K", "Wq", "Wk", "Wv", "X"):
        if name in layer.W:
            P, analytic = layer.W[name], g["d" + name]
            L = lambda: loss(layer.forward(X))
        elif name == "X":
            P, analytic = X, g["dX"]
            L = lambda: loss(layer.forward(X))
        else:
            layer.forward(X)                  # an unperturbed cache to edit
            cache = {k: v.copy() for k, v in layer.cache.items()}
            P, analytic = cache[name], g["d" + name]
            L = lambda: loss_after(layer, cache, name, loss)
        flat, num = P.reshape(-1), np.zeros(P.size)
        for i in range(P.size):
            x0 = flat[i]
            f = []
            for d in (eps, -eps) if points == 2 else (eps, -eps, 2 * eps, -2 * eps):
                flat[i] = x0 + d
                f.append(L())
            flat[i] = x0
            if points == 2:
                num[i] = (f[0] - f[1]) / (2 * eps)
            else:
                num[i] = (8 * (f[0] - f[1]) - (f[2] - f[3])) / (12 * eps)
        a = analytic.reshape(-1)
        err = np.abs(a - num)
        rel = err / np.maximum(np.maximum(np.abs(a), np.abs(num)), 1e-12)
        rel_sum = err / np.maximum(np.abs(a) + np.abs(num), 1e-8)
        norm_rel = np.linalg.norm(a - num) / max(np.linalg.norm(a) + np.linalg.norm(num), 1e-12)
        rows.append(("d" + name, P.shape, err.max(), rel.max(), rel_sum.max(), norm_rel))
    layer.forward(X)      # leave the cache as it was
    layer.backward(dY)
    return rows


def print_gradcheck(rows, threshold, form="entry"):
    """One line per gradient; pass when its error of form ("entry": max rel err, "sum":
    cs231n rel, "norm": norm rel err) is <= threshold."""
    print(f"{'gradient':8} {'shape':16} {'max abs err':>12} {'max rel err':>12} "
          f"{'cs231n rel':>12} {'norm rel err':>12}")
    for name, shape, mx_abs, mx_rel, mx_sum, norm_rel in rows:
        line = {"entry": mx_rel, "sum": mx_sum, "norm": norm_rel}[form]
        ok = "pass" if line <= threshold else "FAIL"
        print(f"{name:8} {str(shape):16} {mx_abs:12.2e} {mx_rel:12.2e} {mx_sum:12.2e} "
              f"{norm_rel:12.2e}  {ok}")
