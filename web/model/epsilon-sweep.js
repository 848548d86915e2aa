// epsilon-sweep.js - one entry's finite-difference error against the step ε (DOM-free), for
// lesson 4's figure: why a notebook's two-point check prints errors near 1e-7 and not 1e-15.
// Too large an ε and the truncation error of the stencil dominates (it falls as ε² with two
// points, ε⁴ with five); too small and the rounding error of L, divided by ε, does.

import { withLayer } from './layers.js';
import { STENCILS } from './gradcheck-report.js';

/** An error below this at ε = 0.1 is rounding only: the loss is linear in the entry. */
const LINEAR_BELOW = 1e-10;

/** ε from 1e-1 down to 1e-12, two steps a decade: 23 values. */
export const SWEEP_EPS = Object.freeze(Array.from({ length: 23 }, (_, k) => 10 ** (-1 - k / 2)));

/** The tensors whose entry the figure can follow: the checked ones that are the layer's inputs. */
export function sweepTensors(mha) {
  return mha.tensors
    .filter((t) => t.check !== null && (t.kind === 'param' || t.kind === 'input'))
    .map((t) => t.name);
}

/** "Wq[0, 0]" / "X[0, 0, 0]": entry 0 of a tensor of this many axes. */
export function entryLabel(tensor, rank) {
  return `${tensor}[${new Array(rank).fill(0).join(', ')}]`;
}

/** |a − n| / max(|a|, |n|, 1e-12): the per-entry relative error of the check tables. */
function relError(a, n) {
  return Math.abs(a - n) / Math.max(Math.abs(a), Math.abs(n), 1e-12);
}

/**
 * Lesson 4's loss L = sum(dY ⊙ Y) on data { X, W, dY, B, T, C, heads } (lesson4()'s result):
 * entry 0 of `tensor`'s numeric gradient at every ε of SWEEP_EPS, with each stencil. Returns
 * { tensor, label, eps, analytic, series: [{ stencil, errors (relative, per ε), best: { eps,
 * error } }], linear (L is linear in the entry: no truncation error at any ε) }.
 */
export function epsilonSweep(mha, data, tensor = 'Wq') {
  const { X, W, dY, B, T, C, heads } = data;
  const names = sweepTensors(mha);
  if (!names.includes(tensor)) {
    throw new Error(`epsilonSweep: tensor must be one of ${names.join(', ')}`);
  }
  const rank = mha.tensorShape(tensor, { B, T, C, heads }).length;
  return withLayer(mha, C, heads, W, (layer) => {
    let analytic = NaN;
    const series = Object.keys(STENCILS).map((stencil) => {
      const r = layer.numericGradient(X, {
        B,
        T,
        G: dY,
        tensor,
        index: 0,
        eps: SWEEP_EPS,
        stencil,
      });
      analytic = r.analytic;
      const errors = Array.from(r.numeric, (n) => relError(r.analytic, n));
      let k = 0;
      errors.forEach((e, i) => {
        if (e < errors[k]) k = i;
      });
      return { stencil, errors, best: { eps: SWEEP_EPS[k], error: errors[k] } };
    });
    // L linear in the entry (Wv, Wo): even ε = 0.1 leaves no truncation error, only rounding
    const linear = series.every((sr) => sr.errors[0] < LINEAR_BELOW);
    const label = entryLabel(tensor, rank);
    return { tensor, label, eps: [...SWEEP_EPS], analytic, series, linear };
  });
}
