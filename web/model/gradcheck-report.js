// gradcheck-report.js - what a gradient check visits and how its report reads (DOM-free): sizes,
// the pending rows before anything is checked, pass/fail summaries, and the pass thresholds.

import { COURSE } from './defaults.js';

/**
 * The largest gradient-check errors measured on the page's own arrays, the numbers every pass line
 * is set from: lesson 4 (the course demo, seed 42, L = sum(dY * Y)) and lesson 5 (the sentence,
 * seed 42, MSE at the initial weights); per stencil (at its ε: 1e-5 two-point, 1e-3 five-point)
 * and relative error, the largest over the tensors. page: here (WebAssembly; every engine gives
 * the same bits). numpy: the page's "Copy as NumPy" script (NumPy 1.24, OpenBLAS 0.3.21) under
 * OpenBLAS's Haswell and SkylakeX kernels, each with the products' terms summed in 24 orders
 * (the features permuted, the result the same in exact arithmetic); lesson 4's per-entry 8.3e-6 is
 * docs/testing.md's (one of 16 orders of its own hunt). The per-entry error is set by the tiniest
 * entry and moves most: lesson 5's dWq reads 1.5e-5 here and 3.6e-5 to 2.7e-4 in NumPy.
 * The five-point figures in NumPy: Haswell, 3 orders (each run takes a minute on this machine);
 * lesson 5's rechecked under Prescott, Haswell and SkylakeX in the page's own order (largest:
 * Prescott's, 1.5e-6 per entry, 7.51e-7 cs231n, 2.17e-11 norm-wise).
 */
export const MEASURED_ERRORS = Object.freeze({
  lesson4: Object.freeze({
    'two-point': Object.freeze({
      entry: { page: 1.71e-6, numpy: 8.3e-6 },
      sum: { page: 8.54e-7, numpy: 2.49e-6 },
      norm: { page: 1.83e-10, numpy: 2.5e-10 },
    }),
    'five-point': Object.freeze({
      entry: { page: 1.95e-8, numpy: 3.42e-8 },
      sum: { page: 9.74e-9, numpy: 1.71e-8 },
      norm: { page: 2.38e-12, numpy: 3.31e-12 },
    }),
  }),
  lesson5: Object.freeze({
    'two-point': Object.freeze({
      entry: { page: 1.55e-5, numpy: 2.65e-4 },
      sum: { page: 7.76e-6, numpy: 1.32e-4 },
      norm: { page: 1.03e-9, numpy: 1.69e-9 },
    }),
    'five-point': Object.freeze({
      entry: { page: 1.5e-6, numpy: 1.5e-6 },
      sum: { page: 7.51e-7, numpy: 7.51e-7 },
      norm: { page: 1.41e-11, numpy: 2.17e-11 },
    }),
  }),
});

/**
 * The same check on other draws, on the page (seeds 0-199 of the same setting, two points):
 * the largest per-entry and norm-wise errors over them, and how many draws went above the line.
 */
export const OTHER_DRAWS = Object.freeze({
  lesson4: Object.freeze({ draws: 200, entry: 2.33e-4, above: 4, norm: 2.99e-10 }),
  lesson5: Object.freeze({ draws: 200, entry: 6.12e-4, above: 0, norm: 1.78e-9 }),
});

/** A pass line sits at least this many times above the largest error measured. */
export const PASS_MARGIN = 10;

/** The pass line for a largest measured error: PASS_MARGIN times it, up to a power of ten. */
export function passLine(worst) {
  return Number(`1e${Math.ceil(Math.log10(PASS_MARGIN * worst))}`);
}

/** A check's pass lines, { [stencil]: { [form]: line } }, from its MEASURED_ERRORS. */
function linesOf(measured) {
  const byForm = (forms) =>
    Object.freeze(
      Object.fromEntries(
        Object.entries(forms).map(([form, m]) => [form, passLine(Math.max(m.page, m.numpy))]),
      ),
    );
  return Object.freeze(
    Object.fromEntries(Object.entries(measured).map(([st, forms]) => [st, byForm(forms)])),
  );
}

/** Lesson 4's pass lines: L = sum(dY * Y) on the course demo. */
export const L4_LINES = linesOf(MEASURED_ERRORS.lesson4);

/** Lesson 5's pass lines: its MSE loss on the sentence, n = T*C = 512 entries of Y. */
export const L5_LINES = linesOf(MEASURED_ERRORS.lesson5);

/**
 * The playground's pass lines: lesson 5's up to its size n = T*C = 512, scaled with n above it:
 * dL/dY = 2 (Y - target) / n shrinks as 1/n (the weight gradients sum it over the T tokens, so
 * they shrink about as 1/C), while the finite differences' rounding error, which follows |L|,
 * does not shrink with n.
 */
export function pgThreshold(T, C) {
  const k = Math.max(1, (T * C) / 512);
  if (k === 1) return L5_LINES;
  const scaled = (forms) =>
    Object.fromEntries(
      Object.entries(forms).map(([f, line]) => [f, Number((line * k).toPrecision(12))]),
    );
  return Object.fromEntries(Object.entries(L5_LINES).map(([st, forms]) => [st, scaled(forms)]));
}

/**
 * The stencils a check table offers: the two-point central difference a notebook writes (the
 * page's default, at ε = 1e-5) and the five-point one (error O(ε⁴), at ε = 1e-3).
 */
export const STENCILS = Object.freeze({
  'two-point': Object.freeze({
    name: 'two-point',
    formula: '(L(x+ε) − L(x−ε)) / 2ε',
    eps: COURSE.eps.twoPoint,
  }),
  'five-point': Object.freeze({
    name: 'five-point',
    formula: '(8(L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε',
    eps: COURSE.eps.fivePoint,
  }),
});

/**
 * The relative errors a check table shows, each a report row's field; the pass line reads the
 * chosen one (the norm-wise error weighs every entry by its size, so tiny entries' rounding noise
 * barely moves it: its lines are far lower).
 */
export const ERROR_FORMS = Object.freeze({
  entry: Object.freeze({
    field: 'maxRel',
    column: 'max rel error per entry',
    formula: 'max over entries of |a − n| / max(|a|, |n|)',
  }),
  sum: Object.freeze({
    field: 'maxRelSum',
    column: 'max rel error (cs231n)',
    formula:
      'max over entries of |a − n| / max(10⁻⁸, |a| + |n|) (the rel_error of the assignments ' +
      'of cs231n, Stanford’s course on neural networks; its notes use the per-entry form)',
  }),
  norm: Object.freeze({
    field: 'normRel',
    column: 'norm-wise rel error',
    formula: '‖a − n‖ / (‖a‖ + ‖n‖) over the whole tensor (2-norms)',
  }),
});

/** The convention every check table starts with: as a notebook computes it. */
export const DEFAULT_CONVENTION = Object.freeze({
  stencil: 'two-point',
  eps: COURSE.eps.twoPoint,
  form: 'entry',
});

/** A check's pass line under a convention: lines (L4_LINES, L5_LINES, pgThreshold's) at it. */
export function conventionThreshold(lines, { stencil, form }) {
  const line = lines[stencil]?.[form];
  if (line === undefined) {
    throw new Error(`conventionThreshold: unknown convention ${stencil} / ${form}`);
  }
  return line;
}

/**
 * A check's pass lines in words: "per entry 1e-4 with two points and 1e-6 with five; in
 * cs231n's form …; norm-wise …". fmt formats a number.
 */
export function passLinesText(lines, fmt) {
  const pair = (form) =>
    `${fmt(conventionThreshold(lines, { stencil: 'two-point', form }))} with two points and ${fmt(conventionThreshold(lines, { stencil: 'five-point', form }))} with five`;
  return `per entry ${pair('entry')}; in cs231n’s form ${pair('sum')}; norm-wise ${pair('norm')}`;
}

/**
 * Where a check's pass lines come from, in words (check: 'lesson4' or 'lesson5'): the rule and
 * the default convention's measured figures. fmt formats a line, figure a measured error.
 */
export function passLineReason(check, fmt, figure = fmt) {
  const m = MEASURED_ERRORS[check]['two-point'];
  const lines = linesOf(MEASURED_ERRORS[check]);
  const fig = (form) =>
    `${figure(m[form].page)} here and up to ${figure(m[form].numpy)} in NumPy, so ${fmt(lines['two-point'][form])}`;
  const d = OTHER_DRAWS[check];
  const above = d.above ? `${d.above} of them above its line` : 'none above its line';
  const draws = `On ${d.draws} other draws of the same setting the per-entry error, set by the tiniest entry, reached ${figure(d.entry)} (${above}) and the norm-wise one ${figure(d.norm)}: the norm-wise column is the steady one`;
  return `Each line is ${PASS_MARGIN} times the largest error measured on the course's arrays of this lesson (seed ${COURSE.seed}; on this page, and in NumPy with two of OpenBLAS's kernels, each summing the products' terms in 24 orders), rounded up to a power of ten. With two points, per entry: ${fig('entry')}; norm-wise: ${fig('norm')}. ${draws}`;
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
