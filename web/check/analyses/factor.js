// factor.js - a student's array that is the course's times one constant k: what k is, in the
// quantities of this layer, and where in the notebook such a factor comes from.
//
//   fitFactor(yours, ref)                  k by least squares (null when ref is all zeros)
//   meanings(k, node, s)                   [{ text, why, sites, id? }] every reading of k at node
//
// A reading says which steps (`sites`) a mistake giving k would be written at: a factor found at
// dQ, when dQ's own step is the only one recomputed, can only be a mistake in dQ's step; a factor
// from the loss (a batch mean) would enter at dY. check.js keeps the readings whose sites are the
// step itself or steps the student did not save, and names them all when several remain.

import { dot } from '../ops.js';

/** k minimising ‖yours − k·ref‖ (null if ref is all zeros or k is not finite). */
export function fitFactor(yours, ref) {
  const rr = dot(ref, ref);
  if (!(rr > 0)) return null;
  const k = dot(yours, ref) / rr;
  return Number.isFinite(k) && k !== 0 ? k : null;
}

// k is fitted from the student's numbers: as close to a quantity as their precision allows
const near = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

// The scale of the scores, dQ and dK: the course divides by √hs; a student who divides by D
// instead gets k = √hs / D.
function scaleReadings(s, node) {
  const root = Math.sqrt(s.hs);
  const step = node === 'scores' ? 'scores' : node;
  const divisors = [
    [1, '√hs', `no 1/√hs: ${step} is not divided by np.sqrt(hs)`, 'missing-scale'],
    [s.hs, '√hs / hs', `divided by hs = ${s.hs} instead of √hs (or by √hs twice)`],
    [Math.sqrt(s.C), '√hs / √C', `divided by √C = √${s.C} instead of √hs`, 'scale-sqrt-C'],
    [s.C, '√hs / C', `divided by C = ${s.C} instead of √hs`],
    [Math.sqrt(s.T), '√hs / √T', `divided by √T = √${s.T} instead of √hs`],
    [Math.sqrt(s.heads), '√hs / √h', `divided by √h = √${s.heads} instead of √hs`],
    [1 / root, 'hs', 'multiplied by √hs instead of dividing by it'],
    [s.hs * root, '1 / hs', 'divided by √hs three times'],
  ];
  const sites = [step];
  return sameValues(
    divisors
      .filter(([d]) => d !== root)
      .map(([d, expr, why, id]) => ({ value: root / d, expr, why, sites, id })),
  );
}

// Readings of one value (√C = hs when h = hs) made one: the catalogued one (an id: the backward
// carries it too) first, the others said with it
function sameValues(readings) {
  const out = [];
  for (const r of readings) {
    const twin = out.find((o) => near(o.value, r.value, 1e-12));
    if (!twin) {
      out.push({ ...r });
      continue;
    }
    const [first, second] = !twin.id && r.id ? [r, twin] : [twin, r];
    Object.assign(twin, first, { why: `${first.why}; at these sizes the same as ${second.why}` });
  }
  return out;
}

// The loss and dY: the course's loss is the mean over all n = B·T·C entries and
// dY = 2 (Y − target) / n.
function lossReadings(s, node) {
  if (node === 'loss') {
    return [
      {
        value: s.n,
        expr: 'Y.size',
        why: 'the sum instead of the mean (np.sum, not np.mean)',
        id: 'mse-loss-sum',
      },
      {
        value: s.n / s.B,
        expr: 'Y.size / B',
        why: `a mean over the batch only (divided by B = ${s.B}, not Y.size)`,
      },
      { value: 1 / s.B, expr: '1/B', why: `divided by B = ${s.B} once more than the mean` },
      { value: 0.5, expr: '1/2', why: 'half the mean squared error (a 1/2 in front)' },
    ].map((r) => ({ ...r, sites: ['loss'] }));
  }
  return [
    {
      value: s.n,
      expr: 'Y.size',
      why: 'no division by Y.size: the gradient of the sum',
      id: 'mse-grad-factor',
    },
    {
      value: 0.5,
      expr: '1/2',
      why: 'the factor 2 of the square is missing',
      id: 'mse-grad-factor',
    },
    { value: s.n / 2, expr: 'Y.size / 2', why: 'dY = Y − target: no 2 and no division by Y.size' },
    {
      value: s.n / (2 * s.B),
      expr: 'Y.size / (2·B)',
      why:
        'dY = (Y − target) / B: the gradient of half the sum of the squares, averaged over the ' +
        'batch (0.5 * np.sum((Y - target) ** 2) / B), not of their mean',
    },
    { value: 2, expr: '2', why: 'a factor 2 too many' },
    { value: -1, expr: '−1', why: 'the sign is flipped: target − Y' },
    {
      value: 1 / s.B,
      expr: '1/B',
      why: `an extra 1/B = 1/${s.B}: a mean over the batch on top of Y.size`,
    },
    { value: s.C, expr: 'C', why: `divided by B·T instead of Y.size (a factor C = ${s.C})` },
    { value: s.N, expr: 'B·T', why: `divided by C instead of Y.size (a factor B·T = ${s.N})` },
    { value: s.n / s.B, expr: 'T·C', why: `divided by B = ${s.B} instead of Y.size` },
    { value: s.n / s.T, expr: 'B·C', why: `divided by T = ${s.T} instead of Y.size` },
  ].map((r) => ({ ...r, sites: ['dY'] }));
}

const WEIGHT_GRADS = ['dWq', 'dWk', 'dWv', 'dWo'];

// A weight's gradient: a mean instead of a sum over the batch or the tokens, or gradients added
// up over two backward calls.
function weightGradReadings(s, node) {
  return [
    {
      value: 1 / s.B,
      expr: '1/B',
      why: `a mean over the batch (divided by B = ${s.B}): the course sums`,
    },
    {
      value: 1 / s.N,
      expr: '1/(B·T)',
      why: `a mean over the B·T = ${s.N} tokens: the course sums`,
    },
    { value: 1 / s.T, expr: '1/T', why: `divided by T = ${s.T}: the course sums over the tokens` },
    {
      value: 2,
      expr: '2',
      why:
        'two backward calls without zeroing the gradients in between: they accumulate ' +
        '(zero them, or assign with =, before each backward)',
    },
    { value: 3, expr: '3', why: 'three backward calls without zeroing the gradients in between' },
  ].map((r) => ({ ...r, sites: [node] }));
}

// Readings any step can have: a factor from its dY (a batch mean, a missing 2 …) and generic ones.
function genericReadings(s, node) {
  const list = [];
  if (node !== 'dY' && node !== 'loss' && isBackward(node)) {
    list.push(...lossReadings(s, 'dY').filter((r) => !r.id || r.value !== s.n));
    list.push({
      value: s.n,
      expr: 'Y.size',
      why: 'dY without the division by Y.size (the gradient of the sum)',
      sites: ['dY'],
      id: 'mse-grad-factor',
    });
  }
  if (/^d[QK]m?$/.test(node)) {
    list.push({
      value: 1 / s.B,
      expr: '1/B',
      why: `the softmax backward (dscores) divided by B = ${s.B}`,
      sites: ['dscores'],
    });
  }
  if (node === 'dscores' || node === 'datt') {
    list.push({
      value: 1 / s.B,
      expr: '1/B',
      why: `the softmax backward divided by B = ${s.B}`,
      sites: [node],
    });
  }
  if (node === 'dscores') {
    // the gradient of Q @ Kᵀ before its scale, where the course's is that of the scaled scores
    list.push({
      value: 1 / Math.sqrt(s.hs),
      expr: '1/√hs',
      why:
        'the gradient of the unscaled Q @ K.T (the scale 1/√hs of scores already applied): ' +
        'the course’s dscores is the gradient of the scaled scores (√hs divides in dQ and dK)',
      sites: [node],
    });
  }
  const plain = [
    [-1, '−1', 'the sign is flipped'],
    [2, '2', 'twice the course’s'],
    [0.5, '1/2', 'half the course’s'],
    [s.heads, 'h', `h = ${s.heads} times the course’s`],
    [1 / s.heads, '1/h', `divided by h = ${s.heads}`],
    [s.B, 'B', `B = ${s.B} times the course’s`],
    [1 / s.B, '1/B', `divided by B = ${s.B}`],
    [s.T, 'T', `T = ${s.T} times the course’s`],
    [1 / s.T, '1/T', `divided by T = ${s.T}`],
    [1 / Math.sqrt(s.hs), '1/√hs', `divided by √hs = √${s.hs}: the scores' scale, applied here`],
    [Math.sqrt(s.hs), '√hs', `multiplied by √hs = √${s.hs}`],
  ];
  for (const [value, expr, why] of plain) {
    list.push({ value, expr, why, sites: [node], generic: true });
  }
  return list;
}

const BACKWARD = new Set(
  'dWo dconcat dheadout dV datt dscores dQ dK dQm dKm dVm dWq dWk dWv dX'.split(' '),
);
const isBackward = (node) => BACKWARD.has(node);

// Y: the heads' outputs averaged where the course concatenates them (Wo then sums their shares)
function headReadings(s, node) {
  if (node !== 'Y' || s.heads < 2) return [];
  return [
    {
      value: 1 / s.heads,
      expr: '1/h',
      why:
        `the ${s.heads} heads averaged (a mean over the heads) instead of concatenated: ` +
        'concat @ Wo adds up every head’s share, a mean divides that sum by h',
      sites: ['Y'],
      id: 'reduction',
    },
  ];
}

/**
 * Every reading of yours = k · the course's at node: [{ value, why, sites, id?, generic? }],
 * the specific ones first; `generic` ones only name the number. `rel`: how close k must be to a
 * quantity (the precision the student's array was saved in).
 */
export function meanings(k, node, s, rel = 1e-9) {
  const list = [...headReadings(s, node)];
  if (['scores', 'dQ', 'dK', 'dQm', 'dKm'].includes(node)) {
    list.push(...scaleReadings(s, node.replace(/m$/, '')));
  }
  if (node === 'loss' || node === 'dY') list.push(...lossReadings(s, node));
  if (WEIGHT_GRADS.includes(node)) list.push(...weightGradReadings(s, node));
  list.push(...genericReadings(s, node));
  const seen = new Set();
  return list.filter((r) => {
    if (!near(r.value, k, rel)) return false;
    const key = `${r.why}|${r.sites}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The readings of a factor at a step the student did not save, whose effect on the result is
 * not a factor (the scores before the softmax): [{ value, expr, why, id? }] with the step's own
 * meanings, for the analysis to try one by one.
 */
export function stepReadings(site, s) {
  if (site === 'scores') return scaleReadings(s, 'scores');
  if (site === 'dY') return lossReadings(s, 'dY');
  if (site === 'dQ' || site === 'dK') return scaleReadings(s, site);
  return [];
}

/** "0.25", "-1", "4.47214": k as the report prints it (6 significant digits, or `digits`). */
export const factorNumber = (k, digits = 6) => String(Number(k.toPrecision(digits)));

/**
 * The digits a factor fitted from arrays of this precision is printed with: 6 from float64 (or
 * text), 4 from float32, 3 from float16. A fit from float32 arrays is good to about 7 digits and
 * its 6th depends on the BLAS kernel that computed them; 4 do not.
 */
export function fitDigits(dtypeTol) {
  if (dtypeTol <= 1e-9) return 6;
  return dtypeTol <= 1e-5 ? 4 : 3;
}
