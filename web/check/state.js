// state.js - an input changed after it was used (issue 35): a notebook that changes X in place
// (X += …, X[0, 3] = …) after the projections saves an X that is not the one Q, K and V were
// computed from. With the weight invertible, the X a projection was computed from is solved
// for, exactly: X0 = yours @ inv(W). It is a cause only with evidence beyond that (any Q has such
// an X0): the same X0 gives every other projection the file holds, or it differs from the saved
// X in a few entries only (an edit of some entries).
//
//   changedInput(pipe, node, yours, opts)   { X0, changed: [flat index], message } or null
//   changedWeight(pipe, node, yours, opts)  { W, used, message } or null
//   changedUpstream(pipe, node, yours, opts, saved)   { W: 'dY', used, message } or null
//
// A weight changed after it was used is the same edit on the other input of a projection: a
// gradient check that moves each entry by +eps and -2·eps and never puts it back leaves every
// entry eps below the one used. The weight used is solved for by least squares (the rows of the
// input at least C) and named only when its difference from the saved one is simple: one
// constant over every entry, or a few entries; proven by recomputing the array with it.

import { agrees, unravel } from './compare.js';
import { matmul, mergeHeads, transposeBlocks } from './ops.js';

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

// the flat indices where `used` differs from the saved array beyond rounding (10⁻⁸ of its largest)
function differing(used, saved) {
  const scale = Math.max(...saved.map(Math.abs));
  const out = [];
  used.forEach((x, i) => Math.abs(x - saved[i]) > 1e-8 * scale && out.push(i));
  return out;
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
  const changed = differing(X0, X);
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

// the projections a weight may have been changed after: node -> its merged form, input, weight
const WEIGHTED = Object.freeze({
  Q: { merged: 'Qm', input: 'X', W: 'Wq' },
  K: { merged: 'Km', input: 'X', W: 'Wk' },
  V: { merged: 'Vm', input: 'X', W: 'Wv' },
  Qm: { merged: 'Qm', input: 'X', W: 'Wq' },
  Km: { merged: 'Km', input: 'X', W: 'Wk' },
  Vm: { merged: 'Vm', input: 'X', W: 'Wv' },
  Y: { merged: 'Y', input: 'concat', W: 'Wo' },
});

// D with A @ D = R for the input A (N, C), N >= C, by least squares (AᵀA D = AᵀR), or null
function leastSquares(A, R, { N, C }) {
  const AtA = matmul(A, A, { m: C, k: N, n: C, transA: true });
  const AtR = matmul(A, R, { m: C, k: N, n: C, transA: true });
  // (AᵀA is symmetric: Dᵀ @ AᵀA = (AᵀR)ᵀ, one row of Dᵀ at a time)
  const Dt = solveRows(transposeBlocks(AtR, C), AtA, C);
  return Dt && transposeBlocks(Dt, C);
}

// a number with a few significant digits when it is one within rounding (1e-5, not 1.0000003e-5)
function roundish(c) {
  for (let digits = 1; digits <= 6; digits++) {
    const r = Number(c.toPrecision(digits));
    if (Math.abs(r - c) <= 1e-6 * Math.abs(c)) return r;
  }
  return c;
}

// the simple forms of D: one constant over every entry, or its few entries (SPARSE), in turn
function simpleForms(D) {
  const scale = Math.max(...D.map(Math.abs));
  if (!(scale > 0)) return [];
  const forms = [];
  const mean = D.reduce((a, x) => a + x, 0) / D.length;
  if (D.every((x) => Math.abs(x - mean) <= 1e-4 * Math.abs(mean))) {
    const c = roundish(mean);
    forms.push({ kind: 'constant', c, D: new Float64Array(D.length).fill(c) });
  }
  const entries = [];
  D.forEach((x, i) => Math.abs(x) > 1e-6 * scale && entries.push(i));
  if (entries.length <= SPARSE * D.length) {
    const sparse = new Float64Array(D.length);
    for (const i of entries) sparse[i] = roundish(D[i]);
    forms.push({ kind: 'entries', entries, D: sparse });
  }
  return forms;
}

/**
 * The weight a differing projection (Q, K, V, their merged forms, or Y) was computed with, when
 * it is the saved one changed in a simple way: { W (its name), used (the weight as used),
 * message, same (the relation's key) }, or null.
 */
export function changedWeight(pipe, node, yours, opts) {
  const proj = WEIGHTED[node];
  const s = pipe.s;
  if (!proj || !pipe.inputs.has(proj.W) || s.N < s.C) return null;
  const merged = node === proj.merged ? yours : mergeHeads(yours, s);
  const A = pipe.value(proj.input);
  const W = pipe.value(proj.W);
  const dims = { m: s.N, k: s.C, n: s.C };
  const R = matmul(A, W, dims).map((x, i) => merged[i] - x);
  const D = leastSquares(A, R, s);
  if (!D) return null;
  for (const form of simpleForms(D)) {
    const used = W.map((w, i) => w + form.D[i]);
    if (!agrees(merged, matmul(A, used, dims), { ...opts, skip: null })) continue;
    const message = weightMessage(node, proj, form, s);
    return { W: proj.W, used, message, same: 'state:weights' };
  }
  return null;
}

// 1e-5 rather than 0.00001
const small = (x) => (Math.abs(x) < 1e-3 && x !== 0 ? x.toExponential() : num(x));

function weightMessage(node, { W, input }, form, s) {
  const how =
    form.kind === 'constant'
      ? `every entry of your saved ${W} is ${small(Math.abs(form.c))} ${form.c > 0 ? 'below' : 'above'} ` +
        `the one used: ${node} = ${input} @ (${W} ${form.c > 0 ? '+' : '-'} ${small(Math.abs(form.c))})`
      : `your saved ${W} differs from the one used in ${form.entries.length} of ${s.C * s.C} ` +
        `entries (${form.entries
          .slice(0, 3)
          .map(
            (i) =>
              `${W}[${unravel(i, [s.C, s.C]).join(', ')}] ${small(Math.abs(form.D[i]))} ${form.D[i] < 0 ? 'above' : 'below'} the one used`,
          )
          .join('; ')}${form.entries.length > 3 ? ', …' : ''})`;
  const why =
    form.kind === 'constant'
      ? 'A weight changed after it was used: a finite-difference check that moves each entry by ' +
        '+eps and then -2·eps (W[idx] += eps … W[idx] -= 2 * eps) and never puts it back leaves ' +
        'every entry eps lower. Restore each entry (W[idx] += eps after the second loss), or ' +
        'check on a copy, and save the weights as they were used.'
      : 'A weight changed after it was used (an in-place W[…] += … after the forward): save the ' +
        'weights as they were used, or change them before the forward.';
  return `Your ${node} was computed with another ${W} than the one you saved: ${how}. ${why}`;
}

/**
 * The dY the backward was computed from, when it is not the saved one: solved from the saved
 * dconcat (dconcat = dY0 @ Wo.T, Wo invertible) and named only when the same dY0 gives the
 * differing dWo too (concat.T @ dY0): { W: 'dY', used, message, same }, or null. At dWo or
 * dconcat, the first rows that read dY.
 */
export function changedUpstream(pipe, node, yours, opts, saved) {
  if ((node !== 'dWo' && node !== 'dconcat') || !pipe.inputs.has('dY')) return null;
  const dconcat = saved.get('dconcat');
  const dWo = saved.get('dWo');
  const s = pipe.s;
  if (!dconcat || !dWo || s.N < s.C) return null;
  const WoT = transposeBlocks(pipe.value('Wo'), s.C);
  const dY0 = solveRows(dconcat, WoT, s.C);
  if (!dY0) return null;
  const dims = { m: s.N, k: s.C, n: s.C };
  if (!agrees(dconcat, matmul(dY0, WoT, dims), { ...opts, skip: null })) return null;
  const fromIt = matmul(pipe.value('concat'), dY0, { m: s.C, k: s.N, n: s.C, transA: true });
  if (!agrees(dWo, fromIt, { ...opts, skip: null })) return null;
  const dY = pipe.value('dY');
  const changed = differing(dY0, dY);
  if (!changed.length) return null;
  const shown = changed.slice(0, 2).map((i) => {
    const at = unravel(i, [s.B, s.T, s.C]).join(', ');
    return `dY[${at}] ${num(dY0[i])} in it, ${num(dY[i])} in your file`;
  });
  const more = changed.length > 2 ? `, … (${changed.length} of ${dY.length} entries)` : '';
  return {
    W: 'dY',
    used: dY0,
    same: 'state:dY',
    message:
      `Your ${node} was computed from another dY than the one you saved: the dY0 that gives ` +
      'your dconcat (dconcat = dY0 @ Wo.T, solved with your Wo) gives your dWo too ' +
      `(concat.reshape(-1, C).T @ dY0), and it is not your dY (${shown.join('; ')}${more}). ` +
      'dY was changed after the backward used it (drawn again in a later cell, or changed in ' +
      'place): save the dY your gradients were computed from.',
  };
}
