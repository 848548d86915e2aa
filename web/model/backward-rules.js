// backward-rules.js - lesson 4's matmul backward rule checked by shapes, and why dX sums three
// terms (DOM-free). Every shape comes from the module's tensor table for the lesson's sizes, so
// the rows follow a student's arrays (other B, T, C, h).

import { frobenius, maxAbsDiff } from './arrays.js';
import { weightNames } from './tensors.js';

/** A shape with its last two axes swapped (NumPy's .transpose(..., -1, -2); .T for 2-D). */
export function transposedShape(s) {
  return [...s.slice(0, -2), s[s.length - 1], s[s.length - 2]];
}

/** (…, n) -> (product of the leading axes, n): NumPy's a.reshape(-1, n). */
export function flatShape(s) {
  return [s.slice(0, -1).reduce((p, d) => p * d, 1), s[s.length - 1]];
}

/**
 * The shape of A @ B as NumPy's matmul gives it: (…, m, k) @ (…, k, n) -> (…, m, n), a 2-D B
 * applied to every leading index of A (and the other way round); null when the inner sizes k
 * differ or the leading axes do not match.
 */
export function matmulShape(a, b) {
  if (a.length < 2 || b.length < 2 || a[a.length - 1] !== b[b.length - 2]) return null;
  const lead = [a.slice(0, -2), b.slice(0, -2)];
  const [short, long] = lead[0].length <= lead[1].length ? lead : [lead[1], lead[0]];
  if (short.length && short.join() !== long.join()) return null;
  return [...long, a[a.length - 2], b[b.length - 1]];
}

/**
 * One row of the shape check: gradient `grad` = `rule`, computed as `left` @ `right` (shapes),
 * must have the shape of `of` (a shape too). Returns { grad, rule, left, right, result, of, ok }.
 */
function shapeRow(grad, rule, [left, right], [ofName, of]) {
  const result = matmulShape(left, right);
  const ok = result !== null && result.join() === of.join();
  return { grad, rule, left, right, result, ofName, of, ok };
}

/**
 * The rule for P = A @ B, dA = dP @ Bᵀ and dB = Aᵀ @ dP, on the layer's three products of
 * activations and weights: Y = concat @ Wo, headout = att @ V, scores = Q @ Kᵀ / √hs. Each row
 * multiplies the shapes of the sizes { B, T, C, heads } (mha.tensorShape) and checks the product
 * against the shape of what it is the gradient of. Returns [{ product, rows: [shapeRow] }].
 */
export function matmulRules(mha, sizes) {
  const s = (name) => mha.tensorShape(name, sizes);
  const t = (name) => transposedShape(s(name));
  const f = (name) => flatShape(s(name));
  return [
    {
      product: 'Y = concat @ Wo',
      rows: [
        shapeRow('dconcat', 'dY @ Woᵀ', [s('dY'), t('Wo')], ['concat', s('concat')]),
        shapeRow(
          'dWo',
          `concatᵀ @ dY, summed over batch and tokens (B·T = ${sizes.B * sizes.T} rows)`,
          [transposedShape(f('concat')), f('dY')],
          ['Wo', s('Wo')],
        ),
      ],
    },
    {
      product: 'headout = att @ V',
      rows: [
        shapeRow('datt', 'dheadout @ Vᵀ', [s('dheadout'), t('V')], ['att', s('att')]),
        shapeRow('dV', 'attᵀ @ dheadout', [t('att'), s('dheadout')], ['V', s('V')]),
      ],
    },
    {
      product: 'scores = Q @ Kᵀ / √hs',
      rows: [
        shapeRow('dQ', 'dscores @ K / √hs ((Kᵀ)ᵀ = K)', [s('dscores'), s('K')], ['Q', s('Q')]),
        shapeRow(
          'dKᵀ',
          'Qᵀ @ dscores / √hs; its transpose: dK = dscoresᵀ @ Q / √hs',
          [t('Q'), s('dscores')],
          ['Kᵀ', t('K')],
        ),
      ],
    },
  ];
}

/** A (rows, C) @ Wᵀ for a (C, C) W, plain loops: out[r, i] = Σ_j a[r, j] W[i, j]. */
function timesTransposed(a, W, C) {
  const out = new Float64Array(a.length);
  for (let r = 0; r < a.length / C; r++) {
    for (let i = 0; i < C; i++) {
      let acc = 0;
      for (let j = 0; j < C; j++) acc += a[r * C + j] * W[i * C + j];
      out[r * C + i] = acc;
    }
  }
  return out;
}

/**
 * X's three paths: Q = X @ Wq, K = X @ Wk, V = X @ Wv (merged over the heads: (B, T, C)), from
 * the module's first three weights (its order: Wq, Wk, Wv, Wo) -> [path, weight, grad] rows.
 */
function xPaths(mha) {
  return weightNames(mha)
    .slice(0, 3)
    .map((weight) => {
      const path = weight.slice(1).toUpperCase();
      return [path, weight, `d${path}m`];
    });
}

/** The gradients dXPaths reads: dX and dQ, dK, dV merged back (dQm, dKm, dVm). */
export function dXPathInputs(mha) {
  return ['dX', ...xPaths(mha).map(([, , grad]) => grad)];
}

/**
 * Why dX sums three terms: X feeds Q, K and V, so dX = dQm @ Wqᵀ + dKm @ Wkᵀ + dVm @ Wvᵀ (dQm,
 * dKm, dVm: dQ, dK, dV merged back to (B, T, C)). `grads`: the layer's gradients after backward,
 * by name ({ data }: dXPathInputs); W its weights. Returns { paths: [{ path, weight, grad, term,
 * norm, rel, leftOut, shapes }], sum, sumMaxDiff: max |sum − dX|, norm: ‖dX‖ }, where
 * rel = ‖term‖ / ‖dX‖ and leftOut the norm-wise relative error ‖a − dX‖ / (‖a‖ + ‖dX‖) of
 * a = dX without that term.
 */
export function dXPaths(mha, grads, W, sizes) {
  const { C } = sizes;
  const dX = grads.dX.data;
  const norm = frobenius(dX);
  const sum = new Float64Array(dX.length);
  const paths = xPaths(mha).map(([path, weight, grad]) => {
    const term = timesTransposed(grads[grad].data, W[weight], C);
    for (let i = 0; i < sum.length; i++) sum[i] += term[i];
    const without = new Float64Array(dX.length);
    for (let i = 0; i < dX.length; i++) without[i] = dX[i] - term[i];
    const termNorm = frobenius(term);
    const leftOut = termNorm / (frobenius(without) + norm);
    const shapes = shapeRow(
      `${grad} @ ${weight}ᵀ`,
      '',
      [mha.tensorShape(grad, sizes), transposedShape(mha.tensorShape(weight, sizes))],
      ['X', mha.tensorShape('X', sizes)],
    );
    return { path, weight, grad, term, norm: termNorm, rel: termNorm / norm, leftOut, shapes };
  });
  return { paths, sum, sumMaxDiff: maxAbsDiff(sum, dX), norm };
}
