// lesson4.js - "The backward pass": forward, backward with dY (loss L = sum(dY * Y)), every
// gradient in the lesson's order (DOM-free).

import { COURSE, courseData } from './course.js';
import { block2d, dot, frobenius, maxAbs } from './arrays.js';
import { withLayer } from './layers.js';

/** Lesson 4: forward, backward with dY (L = sum(dY * Y)); every gradient in the lesson's order. */
export function lesson4(mha, { data } = {}) {
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
    const loss = dot(dY, Y);
    // Wq, Wk, Wv, Wo (C, C) and X (B, T, C): what the gradient check moves besides intermediates
    const params = 4 * C * C + B * T * C;
    return { B, T, C, heads, hs: C / heads, X, W, dY, Y, order, grads, loss, params };
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
