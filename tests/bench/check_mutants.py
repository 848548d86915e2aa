#!/usr/bin/python3
"""Mistakes nobody tuned the notebook check to (issue 35, item 4): a mutation engine over the
source of a plain NumPy notebook of the course (REFERENCE below: lessons 3-5, the forward, the
MSE loss, the backward and ten steps of gradient descent), run at random sizes and seeds, causal
and not, each mutant saved as the student would save it (np.savez with the course's names).

Usage:
    /usr/bin/python3 tests/bench/check_mutants.py OUTDIR [--mutants N] [--clean N] [--seed S]

The operators edit the notebook's source (Python's ast), never the check's graph: a name swapped
for another in scope of the same shape, a transpose inserted or dropped, a reduction's axis or
keepdims changed, a constant changed, a term dropped, two statements of a block swapped (the
training loop's among them), a statement of the loop left out (a weight not updated, a loss not
kept), a result cast to float32. Each mutant runs at a size and seed of
its own; one that raises, or whose saved arrays all equal the unmutated notebook's at that size
(an equivalent mutant), is dropped and another drawn.

OUTDIR gets, for mutant k, mutant-k.npz and, for the unmutated notebook at `--clean` random
sizes, each causal and not, clean-k.npz; and manifest.json: [{ file, kind ('mutant' | 'clean'),
heads, causal, sizes, operator, line (the line as edited), before (the line as the course
writes it), site (the name the edited statement assigns), first (the first saved array, in the
notebook's order, that differs from the unmutated notebook's: null for a clean run) }].
tests/bench/bench_check.mjs runs the check on them.
"""

import argparse
import ast
import copy
import json
import os
import random
import sys

import numpy as np

# The student's notebook: lessons 3 and 4 as one function, lesson 5's loop as another. `run`
# calls them and returns the arrays a careful student saves, in the notebook's order.
REFERENCE = '''
def layer(X, Wq, Wk, Wv, Wo, target, h, causal):
    B, T, C = X.shape
    hs = C // h
    Q = (X @ Wq).reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    K = (X @ Wk).reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    V = (X @ Wv).reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    if causal:
        mask = np.triu(np.ones((T, T), dtype=bool), k=1)
        scores = np.where(mask, -np.inf, scores)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    att = e / e.sum(axis=-1, keepdims=True)
    headout = att @ V
    concat = headout.transpose(0, 2, 1, 3).reshape(B, T, C)
    Y = concat @ Wo
    loss = np.mean((Y - target) ** 2)
    dY = 2 * (Y - target) / Y.size
    dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)
    dconcat = dY @ Wo.T
    dheadout = dconcat.reshape(B, T, h, hs).transpose(0, 2, 1, 3)
    dV = att.transpose(0, 1, 3, 2) @ dheadout
    datt = dheadout @ V.transpose(0, 1, 3, 2)
    dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))
    dQ = dscores @ K / np.sqrt(hs)
    dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)
    dQm = dQ.transpose(0, 2, 1, 3).reshape(B, T, C)
    dKm = dK.transpose(0, 2, 1, 3).reshape(B, T, C)
    dVm = dV.transpose(0, 2, 1, 3).reshape(B, T, C)
    dWq = X.reshape(-1, C).T @ dQm.reshape(-1, C)
    dWk = X.reshape(-1, C).T @ dKm.reshape(-1, C)
    dWv = X.reshape(-1, C).T @ dVm.reshape(-1, C)
    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T
    return dict(Q=Q, K=K, V=V, scores=scores, att=att, headout=headout, concat=concat, Y=Y,
                loss=loss, dY=dY, dWo=dWo, dconcat=dconcat, dheadout=dheadout, dV=dV,
                datt=datt, dscores=dscores, dQ=dQ, dK=dK, dWq=dWq, dWk=dWk, dWv=dWv, dX=dX)


def train(X, Wq, Wk, Wv, Wo, target, h, causal, lr, steps):
    losses = []
    for step in range(steps):
        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)
        losses.append(g["loss"])
        Wq = Wq - lr * g["dWq"]
        Wk = Wk - lr * g["dWk"]
        Wv = Wv - lr * g["dWv"]
        Wo = Wo - lr * g["dWo"]
    return np.array(losses), Wq, Wk, Wv, Wo
'''

INPUTS = ["X", "Wq", "Wk", "Wv", "Wo", "target"]
# the saved arrays, in the notebook's order (the forward, the loss, the backward, lesson 5's)
RESULTS = ["Q", "K", "V", "scores", "att", "headout", "concat", "Y", "loss", "dY", "dWo",
           "dconcat", "dheadout", "dV", "datt", "dscores", "dQ", "dK", "dWq", "dWk", "dWv", "dX"]
TRAINING = ["losses", "Wq_after", "Wk_after", "Wv_after", "Wo_after"]
ORDER = RESULTS + TRAINING
LR = 0.5
STEPS = 10


def draw_sizes(rng):
    """A size of its own: B 1-3, T 2-8, 1, 2 or 4 heads of 2-8 features; causal or not."""
    h = rng.choice([1, 2, 4])
    hs = rng.choice([2, 3, 4, 6, 8])
    return {"B": rng.randint(1, 3), "T": rng.randint(2, 8), "C": h * hs, "heads": h,
            "causal": rng.random() < 0.5, "seed": rng.randint(0, 2**31 - 1)}


def draw_inputs(s):
    g = np.random.default_rng(s["seed"])
    B, T, C = s["B"], s["T"], s["C"]
    X = g.standard_normal((B, T, C))
    W = [g.standard_normal((C, C)) / np.sqrt(C) for _ in range(4)]
    target = g.standard_normal((B, T, C))
    return dict(zip(INPUTS, [X, *W, target]))


def run(source, s):
    """The notebook `source` at size s: every saved array by name (its inputs first)."""
    scope = {"np": np}
    exec(compile(source, "<notebook>", "exec"), scope)  # the notebook's own source, built here
    inp = draw_inputs(s)
    with np.errstate(all="ignore"):
        out = scope["layer"](*[inp[k] for k in INPUTS], s["heads"], s["causal"])
        losses, *after = scope["train"](*[inp[k] for k in INPUTS], s["heads"], s["causal"],
                                         LR, STEPS)
    arrays = dict(inp)
    arrays.update({k: np.asarray(out[k]) for k in RESULTS})
    arrays["losses"] = np.asarray(losses)
    arrays.update({f"W{w}_after": np.asarray(a) for w, a in zip("qkvo", after)})
    arrays["lr"] = np.array(LR)
    arrays["steps"] = np.array(STEPS)
    return arrays


def differs(a, b):
    """Whether a student's array a differs from the notebook's b: shape, or values beyond
    float64's rounding through the layer: 1e-10 of the array's largest entry, the notebook
    check's own float64 tolerance (a smaller change is one no check at that tolerance can see)."""
    if a.shape != b.shape:
        return True
    fa, fb = np.isfinite(a), np.isfinite(b)
    if not np.array_equal(fa, fb) or not np.array_equal(a[~fa], b[~fb]):
        return True
    if not fa.any():
        return False
    scale = max(np.abs(b[fb]).max(), 1e-300)
    return bool(np.abs(a[fa] - b[fb]).max() > 1e-10 * scale)


def first_difference(mutant, clean):
    for k in ORDER:
        if differs(np.asarray(mutant[k], dtype=np.float64), clean[k]):
            return k
    return None


# ----------------------------------------------------------------------------------------------
# the operators: each yields (description, edited tree) for every place it applies


def statements(tree):
    """(function name, statement) of every simple statement of the notebook, in order."""
    for fn in tree.body:
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.Expr, ast.Return, ast.AugAssign)):
                yield fn.name, node


def site_of(stmt):
    if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.Expr):
        return "losses"
    return None


def edits(tree, shapes):
    """Every (operator, path to the edited statement, new statement) the operators make."""
    out = []
    for fn_name, stmt in statements(tree):
        site = site_of(stmt)
        if site is None:
            continue
        value = stmt.value
        for node in ast.walk(value):
            # a name swapped for another in scope of the same shape
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                for other, shape in shapes.items():
                    if other != node.id and shapes.get(node.id) == shape and shape is not None:
                        out.append(("swap-name", stmt, node, ast.Name(id=other, ctx=ast.Load())))
            # a transpose of the last two axes inserted before a matmul operand, or dropped
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                for side in ("left", "right"):
                    operand = getattr(node, side)
                    if is_transpose(operand):
                        out.append(("drop-transpose", stmt, operand, transposed_base(operand)))
                    else:
                        swapped = ast.Call(
                            func=ast.Attribute(value=copy.deepcopy(operand), attr="swapaxes",
                                               ctx=ast.Load()),
                            args=[ast.Constant(-1), ast.Constant(-2)], keywords=[])
                        out.append(("insert-transpose", stmt, operand, swapped))
            # a reduction's axis or keepdims
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "axis" and isinstance(kw.value, (ast.Constant, ast.UnaryOp)):
                        for axis in (-2, 0, 1, None):
                            new = copy.deepcopy(node)
                            [k for k in new.keywords if k.arg == "axis"][0].value = \
                                ast.Constant(axis)
                            out.append(("reduction-axis", stmt, node, new))
                    if kw.arg == "keepdims":
                        new = copy.deepcopy(node)
                        new.keywords = [k for k in new.keywords if k.arg != "keepdims"]
                        out.append(("keepdims-dropped", stmt, node, new))
            # a constant changed: a factor of an expression, the square root's argument
            # dropped or the root itself, the mean's count (size) for another
            if isinstance(node, ast.BinOp):
                for side in ("left", "right"):
                    c = getattr(node, side)
                    if isinstance(c, ast.Constant) and type(c.value) in (int, float):
                        for new_value in (1, 0.5 * c.value, 2 * c.value):
                            if new_value != c.value:
                                out.append(("constant", stmt, c, ast.Constant(new_value)))
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "np.sqrt":
                out.append(("constant", stmt, node, copy.deepcopy(node.args[0])))
                out.append(("constant", stmt, node, ast.Constant(1)))
            if isinstance(node, ast.Attribute) and node.attr == "size":
                out.append(("constant", stmt, node, ast.parse(
                    f"{ast.unparse(node.value)}.shape[0]", mode="eval").body))
            # a weight updated with another's gradient
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.startswith("dW"):
                for other in ("dWq", "dWk", "dWv", "dWo"):
                    if other != node.value:
                        out.append(("swap-name", stmt, node, ast.Constant(other)))
            # a term dropped
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                out.append(("term-dropped", stmt, node, copy.deepcopy(node.left)))
                if isinstance(node.op, ast.Add):
                    out.append(("term-dropped", stmt, node, copy.deepcopy(node.right)))
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
                out.append(("term-dropped", stmt, node, copy.deepcopy(node.left)))
        # the result cast to float32
        if isinstance(stmt, ast.Assign) and site in shapes:
            cast = ast.Call(func=ast.Attribute(value=copy.deepcopy(value), attr="astype",
                                               ctx=ast.Load()),
                            args=[ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()),
                                                attr="float32", ctx=ast.Load())], keywords=[])
            out.append(("float32", stmt, value, cast))
    return out


def is_transpose(node):
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "transpose" and len(node.args) == 4 \
        and [a.value for a in node.args] == [0, 1, 3, 2]


def transposed_base(node):
    return copy.deepcopy(node.value if isinstance(node, ast.Attribute) else node.func.value)


class Replace(ast.NodeTransformer):
    """The tree with node `old` (by identity) replaced by `new`."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def generic_visit(self, node):
        if node is self.old:
            return self.new
        return super().generic_visit(node)

    def visit(self, node):
        if node is self.old:
            return self.new
        return super().visit(node)


def block_swaps(tree):
    """Two adjacent statements of a block swapped (in the loop: the update before the
    backward, a loss appended after the update, …)."""
    out = []
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or isinstance(node, ast.Module):
                continue
            for i in range(len(block) - 1):
                a, b = block[i], block[i + 1]
                if isinstance(a, ast.Return) or isinstance(b, ast.Return):
                    continue
                out.append((node, field, i, a))
    return out


def dropped_statements(tree):
    """A statement of the training loop left out (a weight not updated, a loss not kept)."""
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.For))
    return [(loop, i) for i in range(len(loop.body))]


def apply_drop(tree, drop):
    loop, i = drop
    mutant = copy.deepcopy(tree)
    nodes = list(ast.walk(tree))
    body = list(ast.walk(mutant))[nodes.index(loop)].body
    before = ast.unparse(body[i])
    del body[i]
    return ast.unparse(mutant), "(left out)", before


def apply_edit(tree, edit):
    """(source of the mutant, the edited line, its line before)."""
    operator, stmt, old, new = edit
    before = ast.unparse(stmt)
    mutant = copy.deepcopy(tree)
    # the same statement and node in the copy, by their position in a walk
    nodes = list(ast.walk(tree))
    copies = list(ast.walk(mutant))
    stmt_c = copies[nodes.index(stmt)]
    old_c = copies[nodes.index(old)]
    Replace(old_c, new).visit(stmt_c)
    ast.fix_missing_locations(mutant)
    return ast.unparse(mutant), ast.unparse(stmt_c), before


def apply_swap(tree, swap):
    node, field, i, a = swap
    mutant = copy.deepcopy(tree)
    nodes = list(ast.walk(tree))
    copies = list(ast.walk(mutant))
    block = getattr(copies[nodes.index(node)], field)
    block[i], block[i + 1] = block[i + 1], block[i]
    line = f"{ast.unparse(block[0 + i])}; {ast.unparse(block[i + 1])}"
    before = f"{ast.unparse(getattr(node, field)[i])}; {ast.unparse(getattr(node, field)[i + 1])}"
    return ast.unparse(mutant), line, before


def local_shapes(s):
    """The shape of each name of `layer` at size s (None for scalars and flags)."""
    tree = ast.parse(REFERENCE)
    fn = tree.body[0]
    names = [n.id for st in fn.body if isinstance(st, ast.Assign)
             for n in st.targets if isinstance(n, ast.Name)]
    fn.body[-1] = ast.parse("return {k: v for k, v in locals().items()}").body[0]
    scope = {"np": np}
    exec(compile(ast.fix_missing_locations(tree), "<shapes>", "exec"), scope)
    inp = draw_inputs(s)
    values = scope["layer"](*[inp[k] for k in INPUTS], s["heads"], False)
    shapes = {}
    for k, v in values.items():
        if isinstance(v, np.ndarray) and v.ndim >= 2:
            shapes[k] = v.shape
    return {k: v for k, v in shapes.items() if k in names or k in INPUTS}


def save(path, arrays):
    np.savez(path, **arrays)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--mutants", type=int, default=500)
    ap.add_argument("--clean", type=int, default=20)
    ap.add_argument("--seed", type=int, default=35)
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    rng = random.Random(args.seed)
    tree = ast.parse(REFERENCE)
    manifest = []
    # the unmutated notebook at `clean` sizes, each causal and not: no false alarm expected
    for k in range(args.clean):
        s = draw_sizes(rng)
        for causal in (False, True):
            s = {**s, "causal": causal}
            name = f"clean-{k}-{'causal' if causal else 'full'}"
            save(os.path.join(args.outdir, name + ".npz"), run(REFERENCE, s))
            manifest.append({"file": name + ".npz", "kind": "clean", "heads": s["heads"],
                             "causal": causal, "sizes": s, "first": None})
    # mutants: an edit drawn at random from every operator's places, at a size of its own
    made = tries = 0
    while made < args.mutants and tries < 50 * args.mutants:
        tries += 1
        s = draw_sizes(rng)
        shapes = local_shapes(s)
        # an operator first (each as likely), then one of its places
        places = {}
        for e in edits(tree, shapes):
            places.setdefault(e[0], []).append(e)
        places["statements-swapped"] = block_swaps(tree)
        places["statement-dropped"] = dropped_statements(tree)
        operator = rng.choice(sorted(places))
        place = rng.choice(places[operator])
        try:
            if operator == "statements-swapped":
                source, line, before = apply_swap(tree, place)
                site = site_of(place[3])
            elif operator == "statement-dropped":
                source, line, before = apply_drop(tree, place)
                site = site_of(place[0].body[place[1]])
            else:
                source, line, before = apply_edit(tree, place)
                site = site_of(place[1])
            mutant = run(source, s)
            clean = run(REFERENCE, s)
        except Exception:  # a mutant that raises is one a student would see fail: dropped
            continue
        first = first_difference(mutant, clean)
        if first is None:
            continue  # an equivalent mutant at this size
        name = f"mutant-{made}"
        saved = {k: np.asarray(v) for k, v in mutant.items()}
        try:
            save(os.path.join(args.outdir, name + ".npz"), saved)
        except Exception:
            continue
        manifest.append({"file": name + ".npz", "kind": "mutant", "heads": s["heads"],
                         "causal": s["causal"], "sizes": s, "operator": operator,
                         "line": line, "before": before, "site": site, "first": first})
        made += 1
    with open(os.path.join(args.outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"check_mutants: {made} mutants ({tries} drawn), {2 * args.clean} clean runs "
          f"in {args.outdir}", file=sys.stderr)


if __name__ == "__main__":
    main()
