// gradcheck-report.js - what a gradient check visits and how its report reads (DOM-free): sizes,
// the pending rows before anything is checked, pass/fail summaries, and the pass thresholds.

/** Lesson 4's threshold: L = sum(dY * Y), float64, five-point differences. */
export const L4_THRESHOLD = 1e-7;

// MSE divides by n = T*C = 512, so its gradients are ~1/512 of the dot loss's, while the rounding
// floor of the finite differences (~1e-13 absolute) stays: the smallest entries (~4e-8) then show
// relative errors up to ~1.5e-6 (measured on the sentence). 1e-5 keeps a ~7x headroom.
export const L5_THRESHOLD = 1e-5;

/**
 * The pass threshold of the playground's MSE check: 1e-5 at lesson 5's size n = T*C = 512,
 * scaled with n above it, because MSE's gradients shrink as 1/n while the finite differences'
 * rounding floor (~1e-13 absolute) does not.
 */
export function pgThreshold(T, C) {
  return L5_THRESHOLD * Math.max(1, (T * C) / 512);
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
    meanRel: 0,
  }));
}

/** pass/fail summary of a report against a threshold. */
export function summarize(report, threshold) {
  let maxRel = 0,
    maxAbsErr = 0,
    checked = 0;
  for (const r of report) {
    maxRel = Math.max(maxRel, r.maxRel);
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
    meanRel: r.meanRel,
  }));
}
