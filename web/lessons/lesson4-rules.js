// lesson4-rules.js - lesson 4's matmul backward rule, checked by the lesson's shapes, and why dX
// sums three terms, with the page's own numbers (the rows come from web/model/backward-rules.js).

import { el } from '../components/dom.js';
import { table } from '../components/tables.js';
import { num } from '../components/numbers.js';
import { formatSci } from '../components/scales.js';
import { shapeText } from '../model/format.js';
import { L4_LINES, conventionThreshold } from '../model/gradcheck-report.js';

const RULE = `The matmul rule, used at every product of the backward pass: for P = A @ B, dA = dP @ Bᵀ and dB = Aᵀ @ dP. Why: P[i, k] = Σ_j A[i, j] B[j, k], so A[i, j] reaches the loss through row i of P, weighted by B[j, k]; dA[i, j] = Σ_k dP[i, k] B[j, k], which is entry (i, j) of dP @ Bᵀ (and the same for B). (P, not C: C is the layer's width.) Check it by shapes: a gradient has the shape of what it is the gradient of, and dP @ Bᵀ has A's. On 3-D and 4-D arrays ᵀ swaps the last two axes and the leading axes (batch, head) are carried along; a weight is shared by every batch item and token, so its gradient sums over all B·T of them, one matmul after a reshape to (B·T, C) rows: dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C). Shapes catch a missing ᵀ or a wrong order when the sizes differ, not on a square matrix: the (C, C) Wo fits with or without ᵀ.`;

/** '(2, 6, 64) @ (64, 64) → (2, 6, 64)' for one row of the shape check, wrapping before →. */
function shapesCell(x) {
  const result = x.result ? shapeText(x.result) : 'no product: the inner sizes differ';
  return el(
    'span',
    {},
    el('code', { className: 'shape', text: `${shapeText(x.left)} @ ${shapeText(x.right)}` }),
    ' ',
    el('code', { className: 'shape', text: `→ ${result}` }),
  );
}

/** 'concat: (2, 6, 64) ✓' (or ✗: never for the layer's own arrays). */
function targetCell(x) {
  const mark = x.ok ? '✓' : '✗';
  return el(
    'span',
    {},
    `${x.ofName}: `,
    el('code', { className: 'shape', text: shapeText(x.of) }),
    ` ${mark}`,
  );
}

/** The rule, and a table of its rows with the lesson's shapes (r.rules, see matmulRules). */
export function matmulRuleBox(r) {
  const rows = r.rules.flatMap((g) =>
    g.rows.map((x) => [x.grad, g.product, x.rule, shapesCell(x), targetCell(x)]),
  );
  return el(
    'div',
    { className: 'callout matmul-rule' },
    el('p', { text: RULE }),
    table({
      headers: ['gradient', 'of the product', 'rule', 'shapes on this page', 'shape of'],
      rows,
      caption: `The matmul rule checked by this lesson's shapes (B = ${r.B}, T = ${r.T}, C = ${r.C}, h = ${r.heads}, hs = ${r.hs})`,
      stack: true, // (a phone: each gradient a block)
    }),
  );
}

/** The words of the three paths of X, with the page's numbers (r.xPaths, see dXPaths). */
function pathsNote(r) {
  const p = r.xPaths;
  const line = conventionThreshold(L4_LINES, { stencil: 'two-point', form: 'norm' });
  const out = [
    `Why dX sums three terms: X feeds three paths, Q = X @ Wq, K = X @ Wk and V = X @ Wv (each ${shapeText([r.B, r.T, r.C])} before split_heads). A change of X moves the loss along all three, so dX is the sum of the three paths' gradients, each by the matmul rule: dX = dQm @ Wqᵀ + dKm @ Wkᵀ + dVm @ Wvᵀ, where dQm = merge_heads(dQ), dKm = merge_heads(dK) and dVm = merge_heads(dV) are dQ, dK, dV merged back to (B, T, C). On this page the three terms add up to the dX above to within max |difference| = `,
    num(p.sumMaxDiff),
    `. None of them is small: leave one out and the analytic gradient, call it a, misses that term; the norm-wise relative error of a against the full dX, ‖a − dX‖ / (‖a‖ + ‖dX‖), would then be `,
  ];
  p.paths.forEach((x, k) => {
    if (k) out.push(k === p.paths.length - 1 ? ' and ' : ', ');
    out.push(num(x.leftOut, 3), ` without the ${x.path} path`);
  });
  const least = Math.min(...p.paths.map((x) => x.leftOut)) / line;
  out.push(
    `, where the gradient check's norm-wise pass line is ${formatSci(line, 0)} (two points): dX would fail it, by a factor of `,
    num(least, 2),
    ' at the least.',
  );
  return el('p', { className: 'note why-dx' }, ...out);
}

/** Why dX sums three terms: the words, and a table of each term with its shapes and size. */
export function dXPathsBox(r) {
  const p = r.xPaths;
  const rows = p.paths.map((x) => [
    `${x.grad} @ ${x.weight}ᵀ`,
    `${x.path} = X @ ${x.weight}`,
    shapesCell(x.shapes),
    targetCell(x.shapes),
    num(x.norm, 6),
    num(x.rel, 3),
  ]);
  return el(
    'div',
    { className: 'callout dx-paths' },
    pathsNote(r),
    table({
      headers: ['term of dX', 'path', 'shapes on this page', 'shape of', '‖term‖', '‖term‖ / ‖dX‖'],
      rows,
      caption: 'The three terms of dX = dQm @ Wqᵀ + dKm @ Wkᵀ + dVm @ Wvᵀ',
      numeric: [4, 5],
      stack: true, // (a phone: each term a block)
    }),
  );
}
