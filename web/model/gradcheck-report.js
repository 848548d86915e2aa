// gradcheck-report.js - what a gradient check visits and how its report reads (DOM-free): sizes,
// the pending rows before anything is checked, pass/fail summaries, and the pass thresholds.

import { COURSE } from './defaults.js';

/** Lesson 4's threshold: L = sum(dY * Y), float64, five-point differences. */
export const L4_THRESHOLD = 1e-7;

// Lesson 5's threshold, for its MSE loss on the sentence. Its gradients are smaller than lesson 4's
// (dL/dY = 2 (Y - target) / n, n = T*C = 512: entries ~220x smaller than lesson 4's dY; the weight
// gradients, sums over the tokens, 180-240x smaller, measured: training.js mseScale) while the
// finite differences' rounding error, which grows with |L|, shrinks less (|L| = 17.0 in lesson 4,
// absolute errors 2.6e-12 ... 1.2e-11; |L| = 1.30 here, 1.4e-13 ... 1.9e-13). The smallest entries
// (~4e-8) then show relative errors up to ~1.5e-6 (measured on the sentence): 1e-5 keeps ~7x.
export const L5_THRESHOLD = 1e-5;

/**
 * The pass threshold of the playground's MSE check: 1e-5 at lesson 5's size n = T*C = 512,
 * scaled with n above it: dL/dY = 2 (Y - target) / n shrinks as 1/n (the weight gradients sum it
 * over the T tokens, so they shrink about as 1/C), while the finite differences' rounding error,
 * which follows |L|, does not shrink with n.
 */
export function pgThreshold(T, C) {
  return L5_THRESHOLD * Math.max(1, (T * C) / 512);
}

/**
 * The stencils a check table offers: the two-point central difference a notebook writes (the
 * page's default, at ε = 1e-5) and the five-point one (error O(ε⁴), at ε = 1e-3). factor: how much
 * wider its pass line is than the five-point one's: its truncation error, O(ε²), and its rounding
 * error, about u·|L| / ε, are both ~100x the five-point stencil's at these steps (measured on
 * lessons 4 and 5: largest per-entry errors 1.7e-6 and 1.6e-5 against 1.9e-8 and 1.5e-6).
 */
export const STENCILS = Object.freeze({
  'two-point': Object.freeze({
    name: 'two-point',
    formula: '(L(x+ε) − L(x−ε)) / 2ε',
    eps: COURSE.eps.twoPoint,
    factor: 100,
  }),
  'five-point': Object.freeze({
    name: 'five-point',
    formula: '(8(L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε',
    eps: COURSE.eps.fivePoint,
    factor: 1,
  }),
});

/**
 * The relative errors a check table shows, each a report row's field; the pass line reads the
 * chosen one. factor: its pass line against the per-entry one's (the norm-wise error weighs every
 * entry by its size, so tiny entries' rounding noise barely moves it: measured 1.8e-10 and 1.0e-9
 * on lessons 4 and 5, two-point, against 1.7e-6 and 1.6e-5 per entry).
 */
export const ERROR_FORMS = Object.freeze({
  entry: Object.freeze({
    field: 'maxRel',
    column: 'max rel error per entry',
    formula: 'max over entries of |a − n| / max(|a|, |n|)',
    factor: 1,
  }),
  sum: Object.freeze({
    field: 'maxRelSum',
    column: 'max rel error (cs231n)',
    formula:
      'max over entries of |a − n| / max(10⁻⁸, |a| + |n|) (the rel_error of the assignments ' +
      'of cs231n, Stanford’s course on neural networks; its notes use the per-entry form)',
    factor: 1,
  }),
  norm: Object.freeze({
    field: 'normRel',
    column: 'norm-wise rel error',
    formula: '‖a − n‖ / (‖a‖ + ‖n‖) over the whole tensor (2-norms)',
    factor: 0.01,
  }),
});

/** The convention every check table starts with: as a notebook computes it. */
export const DEFAULT_CONVENTION = Object.freeze({
  stencil: 'two-point',
  eps: COURSE.eps.twoPoint,
  form: 'entry',
});

/**
 * A check's pass line under a convention: `base` is the line of the five-point stencil and the
 * per-entry error (L4_THRESHOLD, L5_THRESHOLD, pgThreshold), scaled by the stencil and the form.
 */
export function conventionThreshold(base, { stencil, form }) {
  const s = STENCILS[stencil];
  const f = ERROR_FORMS[form];
  if (!s || !f) throw new Error(`conventionThreshold: unknown convention ${stencil} / ${form}`);
  return Number((base * s.factor * f.factor).toPrecision(12)); // 1e-5, not 9.999999999999999e-6
}

/**
 * The pass lines of a check whose five-point, per-entry line is `base`, in words: "10⁻⁵ with two
 * points, 10⁻⁷ with five (per entry or cs231n's form; 100 times lower norm-wise)". fmt formats a
 * number.
 */
export function passLinesText(base, fmt) {
  const line = (stencil, form) => fmt(conventionThreshold(base, { stencil, form }));
  return `${line('two-point', 'entry')} with two points, ${line('five-point', 'entry')} with five (per entry or in cs231n’s form; ${1 / ERROR_FORMS.norm.factor} times lower norm-wise)`;
}

/**
 * The tensors a full gradient check visits, in the report's order, with their shapes: the
 * module's own check rows (Wq ... Wo, X, then the intermediates), so no list is kept here.
 */
export function checkedTensors(mha, { B = 1, T, C, heads }) {
  return mha.tensors
    .filter((t) => t.check !== null)
    .sort((a, b) => a.check - b.check)
    .map((t) => {
      const shape = mha.tensorShape(t.name, { B, T, C, heads });
      return { tensor: t.name, shape, size: shape.reduce((a, b) => a * b, 1) };
    });
}

/**
 * The order in which lesson 4 meets the checked tensors, backward: each check row's tensor with the
 * gradient the lesson computes for it, sorted by that gradient's place in mha.gradOrder (dWo,
 * dconcat, dheadout, dV, datt, dscores, dQ, dK, dWq, dWk, dWv, dX): [{ tensor, gradient }].
 */
export function backwardOrder(mha) {
  const grads = mha.gradOrder;
  return mha.tensors
    .filter((t) => t.check !== null)
    .map((t) => ({ tensor: t.name, gradient: t.grad }))
    .sort((a, b) => grads.indexOf(a.gradient) - grads.indexOf(b.gradient));
}

/**
 * A check's rows (the module's order, named by tensor) in `order` (backwardOrder's), each named by
 * its gradient; `of` keeps the tensor's name. Rows of tensors not in `order` are left out.
 */
export function orderedRows(rows, order) {
  const byTensor = new Map(Array.from(rows ?? [], (r) => [r.tensor, r]));
  return order
    .filter((o) => byTensor.has(o.tensor))
    .map((o) => ({ ...byTensor.get(o.tensor), tensor: o.gradient, of: o.tensor }));
}

/** Entries a full check visits: weights, X and the intermediates. */
export function gradcheckSize(mha, sizes) {
  return checkedTensors(mha, sizes).reduce((n, t) => n + t.size, 0);
}

/** The rows of a gradient-check report before anything is checked (for a "pending" table). */
export function pendingReport(mha, sizes) {
  return checkedTensors(mha, sizes).map((t) => ({
    ...t,
    checked: 0,
    maxAbs: 0,
    maxRel: 0,
    maxRelSum: 0,
    meanRel: 0,
    normRel: 0,
  }));
}

/**
 * pass/fail summary of a report against a threshold, on the relative error `field` (a row's
 * maxRel, maxRelSum or normRel; default maxRel): { maxRel (the largest of that field), maxAbs,
 * checked, pass }.
 */
export function summarize(report, threshold, field = 'maxRel') {
  let maxRel = 0,
    maxAbsErr = 0,
    checked = 0;
  for (const r of report) {
    maxRel = Math.max(maxRel, r[field]);
    maxAbsErr = Math.max(maxAbsErr, r.maxAbs);
    checked += r.checked;
  }
  return { maxRel, maxAbs: maxAbsErr, checked, pass: maxRel <= threshold };
}

/** A report as JSON-able rows (for figures()). */
export function reportRows(report) {
  return report.map((r) => ({
    tensor: r.tensor,
    shape: [...r.shape],
    size: r.size,
    checked: r.checked,
    maxAbs: r.maxAbs,
    maxRel: r.maxRel,
    maxRelSum: r.maxRelSum,
    meanRel: r.meanRel,
    normRel: r.normRel,
  }));
}

/**
 * The figures behind the line that tells the two errors apart, from the rows checked so far:
 * strict: the row with the largest per-entry max relative error and the size |analytic| of the
 * entry where it occurs; norm: the row with the largest norm-wise error. null before any check.
 */
export function errorContrast(report) {
  const done = Array.from(report ?? []).filter((r) => r.checked > 0);
  if (done.length === 0) return null;
  const strict = done.reduce((w, r) => (r.maxRel > w.maxRel ? r : w));
  const norm = done.reduce((w, r) => (r.normRel > w.normRel ? r : w));
  return {
    strict: { tensor: strict.tensor, maxRel: strict.maxRel, entry: Math.abs(strict.analytic) },
    norm: { tensor: norm.tensor, normRel: norm.normRel },
  };
}

/**
 * The line under a check's table: how the per-entry max relative error and the norm-wise one
 * differ, quoting the figures of `report` (format: how the table prints an error) once it has any.
 */
export function errorContrastText(report, format) {
  const c = errorContrast(report);
  const strict = c
    ? ` (here ${c.strict.tensor}: ${format(c.strict.maxRel)}, on an entry of size ${format(c.strict.entry)})`
    : '';
  const norm = c ? ` (at most ${format(c.norm.normRel)} here, ${c.norm.tensor})` : '';
  return (
    `The max rel error per entry column, |a − n| / max(|a|, |n|), is strict: one tiny gradient entry dominates it${strict}. ` +
    `The norm-wise column, ‖a − n‖ / (‖a‖ + ‖n‖), weighs every entry by its size; it is what many courses print, and far smaller${norm}.`
  );
}
