// lesson4.js - "The backward pass": forward, backward with dY (loss L = sum(dY * Y)), every
// gradient in the lesson's order, and each gradient's figure caption as NumPy that runs (DOM-free).

import { COURSE } from './defaults.js';
import { courseData } from './course.js';
import { block2d, dot, frobenius, maxAbs } from './arrays.js';
import { withLayer } from './layers.js';
import { dXPathInputs, dXPaths, matmulRules } from './backward-rules.js';

/**
 * Lesson 4's numbers: forward, backward with dY (L = sum(dY * Y)), every gradient in the lesson's
 * order, and the tensors dX's three paths start from; plain arrays and numbers only, so they can
 * be computed in the compute worker and sent to the page (jobs/tasks.js 'lesson4'). Without
 * `data`, the course demo's arrays (courseData) are drawn where this runs.
 */
export function lesson4Values(mha, { data } = {}) {
  const { X, W, dY, B, T, C } = data ?? courseData(mha);
  const heads = data?.heads ?? COURSE.heads; // a notebook's arrays bring their own
  return withLayer(mha, C, heads, W, (layer) => {
    const { Y } = layer.forward(X, { B, T });
    layer.zeroGrad();
    layer.backward(dY);
    // the gradients in lesson 4's order, as the module lists them (mha.gradOrder)
    const order = mha.gradOrder;
    const grads = {};
    for (const name of order) grads[name] = layer.tensor(name);
    const pathInputs = {};
    for (const name of dXPathInputs(mha)) pathInputs[name] = layer.tensor(name);
    // Wq, Wk, Wv, Wo (C, C) and X (B, T, C): what the gradient check moves besides intermediates
    const params = 4 * C * C + B * T * C;
    const gradSizes = gradientSizes(grads); // (computed here: in the worker where there is one)
    return {
      B,
      T,
      C,
      heads,
      hs: C / heads,
      X,
      W,
      dY,
      Y,
      order,
      grads,
      gradSizes,
      pathInputs,
      params,
    };
  });
}

/**
 * Lesson 4 from its values (lesson4Values, here or from the worker): with the loss, and the
 * matmul rule checked by the lesson's shapes and dX as the sum of X's three paths, each made when
 * first read (Go deeper's, built when it is opened).
 */
export function lesson4From(mha, values) {
  const { B, T, C, heads, W, dY, Y, pathInputs } = values;
  const sizes = { B, T, C, heads };
  let rules = null;
  let xPaths = null;
  return {
    ...values,
    loss: dot(dY, Y),
    get rules() {
      return (rules ??= matmulRules(mha, sizes));
    },
    get xPaths() {
      return (xPaths ??= dXPaths(mha, pathInputs, W, sizes));
    },
  };
}

/** Lesson 4: forward, backward with dY (L = sum(dY * Y)); every gradient in the lesson's order. */
export function lesson4(mha, { data } = {}) {
  return lesson4From(mha, lesson4Values(mha, { data }));
}

// Each gradient as NumPy that runs on the lesson's arrays, under the names of its Copy-as-NumPy
// script and of its .npz (X, Wq, Wk, Wv, Wo, dY, Q, K, V, att, concat and the gradients; B, T, C,
// h, hs = C // h; split_heads(x, h), merge_heads(x)), with the gradient's shape in those letters.
// On 4-D arrays (B, h, T, ·) `.T` would reverse every axis: the last two are swapped with
// .transpose(0, 1, 3, 2), and a weight's gradient sums over the B·T tokens of a (B·T, C) reshape.
const GRADIENT_CODE = {
  dWo: ['concat.reshape(-1, C).T @ dY.reshape(-1, C)', '(C, C)'],
  dconcat: ['dY @ Wo.T', '(B, T, C)'],
  dheadout: ['split_heads(dconcat, h)', '(B, h, T, hs)'],
  dV: ['att.transpose(0, 1, 3, 2) @ dheadout', '(B, h, T, hs)'],
  datt: ['dheadout @ V.transpose(0, 1, 3, 2)', '(B, h, T, T)'],
  dscores: ['att * (datt - (datt * att).sum(axis=-1, keepdims=True))', '(B, h, T, T)'],
  dQ: ['dscores @ K / np.sqrt(hs)', '(B, h, T, hs)'],
  dK: ['dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)', '(B, h, T, hs)'],
  dWq: ['X.reshape(-1, C).T @ merge_heads(dQ).reshape(-1, C)', '(C, C)'],
  dWk: ['X.reshape(-1, C).T @ merge_heads(dK).reshape(-1, C)', '(C, C)'],
  dWv: ['X.reshape(-1, C).T @ merge_heads(dV).reshape(-1, C)', '(C, C)'],
  dX: ['merge_heads(dQ) @ Wq.T + merge_heads(dK) @ Wk.T + merge_heads(dV) @ Wv.T', '(B, T, C)'],
};

/**
 * Lesson 4's figure captions, one per gradient in the lesson's order (mha.gradOrder): { name,
 * code, shape }, where `code` is NumPy that evaluates to the gradient `name` on the lesson's arrays
 * and `shape` its shape in the lesson's letters. The page shows `name = code` under each map;
 * tests/model/captions.test.mjs runs every one in python3.
 */
export function lesson4Captions(mha) {
  return mha.gradOrder.map((name) => {
    const entry = GRADIENT_CODE[name];
    if (!entry) throw new Error(`lesson 4 has no caption for the gradient ${name}`);
    return { name, code: entry[0], shape: entry[1] };
  });
}

/**
 * The (rows, cols) view of a gradient for batch item b and head h: 2-D as is, 3-D (B, T, C) at
 * [b], 4-D (B, h, T, ·) at [b, h]. Returns { data, rows, cols, where } (where: '[b]', '[b, h]').
 */
export function gradientView(grad, b, h) {
  const s = grad.shape;
  if (s.length === 2) return { data: grad.data, rows: s[0], cols: s[1], where: '' };
  if (s.length === 3) {
    return { data: block2d(grad.data, b, s[1], s[2]), rows: s[1], cols: s[2], where: `[${b}]` };
  }
  return {
    data: block2d(grad.data, b * s[1] + h, s[2], s[3]),
    rows: s[2],
    cols: s[3],
    where: `[${b}, ${h}]`,
  };
}

/** max |g| and ‖g‖ (square root of the sum of squares) of each gradient, by name. */
export function gradientSizes(grads) {
  const out = {};
  for (const name of Object.keys(grads)) {
    out[name] = { maxAbs: maxAbs(grads[name].data), norm: frobenius(grads[name].data) };
  }
  return out;
}
