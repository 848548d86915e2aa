// operand.js - a step computed with the wrong operand (K from Wq, V from Wk, scores from Q and Q
// …), dX with one of its three paths missing, doubled or with its sign flipped, and the softmax
// backward with only the diagonal of its Jacobian. Each is proven by recomputing the step (or a
// step before it that the student did not save) with the student's own arrays.

import { add, matmul, mul, rowsum, scale } from '../ops.js';
import { isAre, shownName } from './layout.js';

// The operands a student swaps by mistake: each group holds arrays of one shape and role.
const GROUPS = [
  ['Wq', 'Wk', 'Wv', 'Wo'],
  ['Q', 'K', 'V'],
  ['Qm', 'Km', 'Vm', 'X'],
  ['dQ', 'dK', 'dV'],
  ['dQm', 'dKm', 'dVm'],
  ['att', 'scores'],
  ['concat', 'X'],
  ['dY', 'dconcat'],
];

/** One parent of a step replaced by another array of its group reproduces yours. */
export function wrongOperandAnalysis(ctx) {
  for (const { site, parent, other, step } of substitutions(ctx)) {
    const fn = (p) => step({ ...p, [parent]: ctx.pipeValue(other) });
    const mine = ctx.tryAt(site, `operand:${parent}:${other}`, fn);
    if (!mine || !ctx.reproduces(mine)) continue;
    const at =
      site === ctx.node || shownName(site) === ctx.name
        ? ''
        : ` (in ${shownName(site)}, not in your file)`;
    return {
      id: 'wrong-operand',
      same: {
        key: `operand:${parent}:${other}`,
        label: `${shownName(other)} in place of ${shownName(parent)}`,
      },
      message:
        `Your ${ctx.name} ${isAre(ctx.name)} the course's step with ${shownName(other)} in place of ` +
        `${shownName(parent)}${at}: recomputed that way from your own arrays, it matches; the ` +
        `course computes ${ctx.courseLine}.`,
      site: site === ctx.node ? null : site,
      variant: { id: `operand:${parent}:${other}`, fn },
    };
  }
  return null;
}

// Every (site, parent, other) to try, the groups in order (a weight swapped first: K = X @ Wq
// says more than K = Q), then the step itself before the steps not saved
function substitutions(ctx) {
  const list = [];
  GROUPS.forEach((group, rank) => {
    for (const site of [ctx.node, ...(ctx.large ? [] : ctx.hidden)]) {
      const { parents, step } = ctx.pipe.nodes[site] ?? {};
      for (const parent of (parents ?? []).filter((p) => group.includes(p))) {
        for (const other of group) {
          if (other === parent) continue;
          if (!ctx.pipe.nodes[other] && !ctx.pipe.given.has(other)) continue;
          list.push({ site, parent, other, step, rank });
        }
      }
    }
  });
  return list;
}

// dX's three paths from the student's dQm, dKm, dVm: dQm @ Wq.T, dKm @ Wk.T, dVm @ Wv.T
function dxPaths(ctx) {
  const { s } = ctx;
  const dims = { m: s.N, k: s.C, n: s.C, transB: true };
  return ['Q', 'K', 'V'].map((x) =>
    matmul(ctx.pipeValue(`d${x}m`), ctx.pipeValue(`W${x.toLowerCase()}`), dims),
  );
}

// least squares for three coefficients
function fit3(paths, y) {
  const g = paths.map((a) => paths.map((b) => dotOf(a, b)));
  const r = paths.map((a) => dotOf(a, y));
  const det = (m) =>
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
    m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
    m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  const d = det(g);
  if (!(Math.abs(d) > 0)) return null;
  return [0, 1, 2].map((i) => det(g.map((row, k) => row.map((v, j) => (j === i ? r[k] : v)))) / d);
}

function dotOf(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

const PATH_WORDS = { 0: 'missing', 2: 'counted twice', '-1': 'with its sign flipped' };

/** dX = a·(Q path) + b·(K path) + c·(V path) with whole a, b, c other than 1, 1, 1. */
export function dxPathAnalysis(ctx) {
  if (ctx.node !== 'dX') return null;
  const paths = dxPaths(ctx);
  const c = fit3(paths, ctx.yours);
  if (!c) return null;
  const whole = c.map((x) => Math.round(x));
  const ok = (x, i) => Math.abs(x - c[i]) < 1e-6 && (PATH_WORDS[x] !== undefined || x === 1);
  if (!whole.every(ok)) {
    return null;
  }
  if (whole.every((x) => x === 1)) return null;
  const mine = paths.reduce(
    (acc, p, i) => add(acc, scale(p, whole[i])),
    new Float64Array(paths[0].length),
  );
  if (!ctx.reproduces(mine)) return null;
  const names = ['Q', 'K', 'V'];
  const wrong = whole.flatMap((x, i) =>
    x === 1
      ? []
      : [`the ${names[i]} path (d${names[i]}m @ W${names[i].toLowerCase()}.T) ${PATH_WORDS[x]}`],
  );
  return {
    id: 'wrong-operand',
    message: `Your dX has ${wrong.join(' and ')}: X feeds Q, K and V once each, so dX sums each path once; the course computes ${ctx.courseLine}.`,
  };
}

/** dscores with the row sums of att · datt taken without keepdims (broadcast by column). */
export function rowsumKeepdimsAnalysis(ctx) {
  if (ctx.node !== 'dscores') return null;
  const att = ctx.pipeValue('att');
  const datt = ctx.pipeValue('datt');
  const T = ctx.s.T;
  const r = rowsum(mul(att, datt), T);
  // r[b, h, j] subtracted in row i of block (b, h): the (T,) sums broadcast along the last axis
  const mine = att.map((a, i) => a * (datt[i] - r[Math.floor(i / (T * T)) * T + (i % T)]));
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'wrong-operand',
    message:
      'Your dscores subtract np.sum(att * datt, axis=-1) without keepdims=True: the (T,) row ' +
      'sums broadcast along the last axis, so row i subtracts the sums of the other rows, one ' +
      'per column; the course keeps the axis: dscores = att * (datt - np.sum(att * datt, ' +
      'axis=-1, keepdims=True)).',
  };
}

const DIAGONAL_TEXT =
  'only the diagonal of the softmax’s Jacobian. Every weight of a row depends on every score ' +
  'of that row (they share the sum), so the backward subtracts the row’s total: dscores = ' +
  'att * (datt - np.sum(att * datt, axis=-1, keepdims=True)).';

/** A later result (dQ, dK, dX …) from dscores = att · (1 − att) · datt, dscores not saved. */
export function hiddenDiagonalAnalysis(ctx) {
  if (ctx.large || !ctx.hidden.includes('dscores')) return null;
  const fn = (p) => p.att.map((a, i) => a * (1 - a) * p.datt[i]);
  const mine = ctx.tryAt('dscores', 'dscores:diagonal', fn);
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'softmax-diagonal-only',
    same: { key: 'dscores:diagonal', label: 'softmax backward' },
    message:
      `Your ${ctx.name} ${isAre(ctx.name)} the course's step from dscores = att * (1 - att) * ` +
      `datt (dscores is not in your file: recomputed that way, it matches): ${DIAGONAL_TEXT}`,
    site: 'dscores',
    variant: { id: 'dscores:diagonal', fn },
  };
}

/** dscores = att · (1 − att) · datt: the diagonal of the softmax's Jacobian only. */
export function diagonalSoftmaxAnalysis(ctx) {
  if (ctx.node !== 'dscores') return null;
  const att = ctx.pipeValue('att');
  const datt = ctx.pipeValue('datt');
  const mine = mul(
    mul(
      att,
      att.map((a) => 1 - a),
    ),
    datt,
  );
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'softmax-diagonal-only',
    message:
      'Your dscores are att * (1 - att) * datt: only the diagonal of the softmax’s Jacobian. ' +
      'Every weight of a row depends on every score of that row (they share the sum), so the ' +
      'backward subtracts the row’s total: dscores = att * (datt - np.sum(att * datt, ' +
      'axis=-1, keepdims=True)).',
  };
}
