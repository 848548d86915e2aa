// state.js - an input changed after it was used (issue 35): a notebook that changes X in place
// (X += …, X[0, 3] = …) after the projections saves an X that is not the one Q, K and V were
// computed from. With the weight invertible, the X a projection was computed from is solved
// for, exactly: X0 = yours @ inv(W). It is a cause only with evidence beyond that (any Q has such
// an X0): the same X0 gives every other projection the file holds, or it differs from the saved
// X in a few entries only (an edit of some entries).
//
//   changedInput(pipe, node, yours, opts)   { X0, changed: [flat index], message } or null

import { agrees, unravel } from './compare.js';
import { matmul, mergeHeads } from './ops.js';

// the projections: the node, its merged form and its weight
const PROJECTIONS = Object.freeze({
  Q: { merged: 'Qm', W: 'Wq' },
  K: { merged: 'Km', W: 'Wk' },
  V: { merged: 'Vm', W: 'Wv' },
  Qm: { merged: 'Qm', W: 'Wq' },
  Km: { merged: 'Km', W: 'Wk' },
  Vm: { merged: 'Vm', W: 'Wv' },
});
// "a few entries": at most this share of X's entries changed
const SPARSE = 0.25;

/**
 * x with x @ W = Y for every row (Y (N, C), W (C, C)): Gaussian elimination with partial pivoting
 * on Wᵀ, one right-hand side per row of Y; null when W is singular.
 */
export function solveRows(Y, W, C) {
  const A = new Float64Array(C * C); // Wᵀ
  for (let i = 0; i < C; i++) for (let j = 0; j < C; j++) A[i * C + j] = W[j * C + i];
  const N = Y.length / C;
  const B = Float64Array.from(Y); // N right-hand sides, one per row
  const perm = [...Array(C).keys()];
  const scale = Math.max(...A.map(Math.abs));
  for (let k = 0; k < C; k++) {
    let p = k;
    for (let i = k + 1; i < C; i++) if (Math.abs(A[i * C + k]) > Math.abs(A[p * C + k])) p = i;
    if (!(Math.abs(A[p * C + k]) > 1e-12 * scale)) return null;
    if (p !== k) {
      for (let j = 0; j < C; j++) [A[k * C + j], A[p * C + j]] = [A[p * C + j], A[k * C + j]];
      [perm[k], perm[p]] = [perm[p], perm[k]];
    }
    for (let i = k + 1; i < C; i++) {
      const f = A[i * C + k] / A[k * C + k];
      A[i * C + k] = f;
      for (let j = k + 1; j < C; j++) A[i * C + j] -= f * A[k * C + j];
    }
  }
  const X = new Float64Array(Y.length);
  const x = new Float64Array(C);
  for (let r = 0; r < N; r++) {
    for (let i = 0; i < C; i++) {
      let s = B[r * C + perm[i]];
      for (let j = 0; j < i; j++) s -= A[i * C + j] * x[j];
      x[i] = s;
    }
    for (let i = C - 1; i >= 0; i--) {
      let s = x[i];
      for (let j = i + 1; j < C; j++) s -= A[i * C + j] * x[j];
      x[i] = s / A[i * C + i];
    }
    X.set(x, r * C);
  }
  return X;
}

/**
 * The X a differing projection (Q, K, V or their merged forms) was computed from, when it is not
 * the saved X and the evidence says X was changed after use: { X0, changed (flat indices where
 * X0 differs from X), message }, or null. pipe: the check's pipeline; opts: the row's compare
 * options; saved: Map(node -> the student's array) of the other projections.
 */
export function changedInput(pipe, node, yours, opts, saved) {
  const proj = PROJECTIONS[node];
  if (!proj || !pipe.inputs.has('X') || !pipe.inputs.has(proj.W)) return null;
  const s = pipe.s;
  const merged = node === proj.merged ? yours : mergeHeads(yours, s);
  const X = pipe.value('X');
  const X0 = solveRows(merged, pipe.value(proj.W), s.C);
  if (!X0) return null;
  const dims = { m: s.N, k: s.C, n: s.C };
  if (!agrees(merged, matmul(X0, pipe.value(proj.W), dims), { ...opts, skip: null })) return null;
  const scale = Math.max(...X.map(Math.abs));
  const changed = [];
  X0.forEach((x, i) => Math.abs(x - X[i]) > 1e-8 * scale && changed.push(i));
  if (!changed.length) return null;
  const others = Object.entries(PROJECTIONS)
    .filter(([n, p]) => n === p.merged && p.W !== proj.W && saved.has(n))
    .map(([n, p]) => agrees(saved.get(n), matmul(X0, pipe.value(p.W), dims), opts));
  const sparse = changed.length <= SPARSE * X.length;
  if (others.includes(false) || (!others.length && !sparse)) return null;
  return { X0, changed, message: stateMessage(node, { X, X0, changed, s, others }) };
}

function stateMessage(node, { X, X0, changed, s, others }) {
  const shown = changed.slice(0, 3).map((i) => {
    const at = unravel(i, [s.B, s.T, s.C]).join(', ');
    return `X[${at}] ${num(X0[i])} in it, ${num(X[i])} in your file`;
  });
  const more = changed.length > 3 ? `, … (${changed.length} entries)` : '';
  const also = others.length ? ' The same X gives your other projections.' : '';
  return (
    `Your ${node} was computed from another X than the one you saved: it is exactly X0 @ W for ` +
    `an X0 that differs from your X in ${changed.length} of ${X.length} entries (${shown.join('; ')}${more}).${also} ` +
    'X was changed after it was used (an in-place X += … or X[…] = … after the projections): ' +
    'save the arrays as they were used, or change X before Q, K and V are computed.'
  );
}

const num = (x) => String(Number(x.toPrecision(4)));
