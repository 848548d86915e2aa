// nonfinite.js - NaN and ±inf in a student's result whose inputs to the step are finite: where
// they first appear and what made them (exp overflowing, a row with every key masked, a division
// by zero), never just "differs (∞)".

import { unravel } from '../compare.js';
import { shapeOf } from './layout.js';
import { maskAnalysis } from './attention.js';

/** The largest x with a finite exp(x), by the precision the array was saved in. */
const EXP_LIMIT = { f4: 88.72283935546875, f8: 709.782712893384 };

const fmt = (x) => String(Number(x.toPrecision(4)));

// (scores: -inf is a mask's fill, which the mask analyses and the catalogue read)
function counts(x, node) {
  let nan = 0;
  let inf = 0;
  let first = -1;
  for (let i = 0; i < x.length; i++) {
    if (Number.isFinite(x[i]) || (node === 'scores' && x[i] === -Infinity)) continue;
    if (Number.isNaN(x[i])) nan++;
    else inf++;
    if (first < 0) first = i;
  }
  return { nan, inf, first };
}

const what = ({ nan, inf }) =>
  [nan ? `${nan} NaN` : '', inf ? `${inf} ±inf` : ''].filter(Boolean).join(' and ');

// att: the scores row of the first bad entry, and why exp or the division failed there
function softmaxCause(ctx, first) {
  const { s } = ctx;
  const scores = ctx.pipeValue('scores');
  const row = Math.floor(first / s.T) * s.T;
  const cells = Array.from(scores.subarray(row, row + s.T));
  const visible = cells.filter((x, j) => !(s.causal && j > (row / s.T) % s.T));
  if (visible.every((x) => x === -Infinity)) {
    return (
      'every key of that query is masked (-inf), so the softmax divides 0 by 0: each ' +
      'row must keep at least one key (the diagonal: np.triu(..., k=1))'
    );
  }
  const max = Math.max(...visible);
  const limit = EXP_LIMIT[ctx.precision === 'f4' ? 'f4' : 'f8'];
  if (max > limit) {
    const p = ctx.precision === 'f4' ? 'float32' : 'float64';
    return (
      `the largest score in that row is ${fmt(max)}, and np.exp overflows to inf in ${p} ` +
      `above ${fmt(limit)}, so the softmax divides inf by inf: subtract each row's max ` +
      'first, np.exp(scores - scores.max(axis=-1, keepdims=True))'
    );
  }
  return null;
}

// -inf exactly above the diagonal of every (T, T) block, finite elsewhere (a causal mask's fill)
function maskedLikeScores(x, T) {
  for (let i = 0; i < x.length; i++) {
    const q = Math.floor(i / T) % T;
    const above = i % T > q;
    if (above ? x[i] !== -Infinity : !Number.isFinite(x[i])) return false;
  }
  return T > 1;
}

/**
 * NaN or ±inf in yours where the course's step, from your own arrays, is finite:
 * { id: 'non-finite', message } naming the first entry and, where it can be shown, the cause.
 */
export function nonFiniteAnalysis(ctx) {
  const c = counts(ctx.yours, ctx.node);
  if (c.first < 0 || !Number.isFinite(ctx.local[c.first])) return null;
  const index = unravel(c.first, shapeOf(ctx.node, ctx.s));
  const head =
    `Your ${ctx.name} has ${what(c)} entries, though the course's step gives finite numbers ` +
    `from your own arrays: the first at [${index.join(', ')}] (${ctx.yours[c.first]})`;
  let cause = null;
  // a mask that leaves a query no key: proven by the mask analysis (0/0 in that row)
  const mask = ctx.node === 'att' ? maskAnalysis(ctx) : null;
  if (mask) {
    cause = `${mask.why}; it leaves a query with every key masked, and the softmax divides 0 by 0`;
  }
  if (!cause && ctx.node === 'att') cause = softmaxCause(ctx, c.first);
  const proven = cause != null;
  if (!cause && ctx.node === 'att' && maskedLikeScores(ctx.yours, ctx.s.T)) {
    cause =
      'its -inf entries are exactly those above the diagonal, where a causal mask hides the ' +
      'keys: the array saved as att holds masked scores from before the softmax (its rows are ' +
      'not weights that sum to 1), not the attention weights';
  } else if (!cause && Number.isNaN(ctx.yours[c.first])) {
    cause = 'a NaN comes from 0/0, inf − inf or inf × 0 in this step';
  } else if (!cause) {
    cause = 'an inf comes from an overflow or a division by zero in this step';
  }
  // a generic cause (0/0, an overflow somewhere in this step) is what was measured, no more
  return { id: 'non-finite', message: `${head}: ${cause}.`, measured: !proven };
}
