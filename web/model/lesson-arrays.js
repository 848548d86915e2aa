// lesson-arrays.js - what each lesson's "Download arrays (.npz)" holds (DOM-free): every tensor
// of the lesson under the course's names, as { name: { data: Float64Array (C order), shape } },
// the form writeNpz takes. Where a name is one the notebook check reads (X Wq Wk Wv Wo dY target
// Q K V scores att headout concat Y loss dWo dconcat dheadout dV datt dscores dQ dK dWq dWk dWv
// dX), it means exactly that, so a lesson's .npz fed back to the check matches.

import { COURSE } from './defaults.js';
import { buildInput, drawScaled } from './input.js';
import { dot, subtract } from './arrays.js';
import { forwardNames, weightNames } from './tensors.js';
import { withLayer } from './layers.js';

const array = (data, shape) => ({ data: Float64Array.from(data), shape: [...shape] });

/** The file name of lesson n's arrays. */
export function arraysFilename(n) {
  return `mha-lesson${n}-arrays.npz`;
}

/**
 * Lesson 1 (the sentence, C = 64, hs = 16, seed 42): E (V, C), ids (T,), X (1, T, C), each head's
 * Wq1 Wk1 Wv1 / Wq2 Wk2 Wv2 (C, hs) as drawn after E from the same stream, their attention A1, A2
 * (T, T) and A1 - A2 as diff.
 */
export function lesson1Arrays(mha, { tokens, C = COURSE.C, hs = COURSE.hs, seed = COURSE.seed }) {
  const T = tokens.length;
  const rng = mha.rng(seed, COURSE.rng);
  const out = {};
  try {
    const { X, E, ids } = buildInput(rng, tokens, C);
    Object.assign(out, {
      E: array(E, [E.length / C, C]),
      ids: array(ids, [T]),
      X: array(X, [1, T, C]),
    });
    const projections = weightNames(mha).slice(0, 3); // Wq, Wk, Wv: a single head has no Wo
    for (const head of [1, 2]) {
      const W = {};
      for (const k of projections) W[k] = drawScaled(rng, C * hs, C);
      for (const k of projections) out[`${k}${head}`] = array(W[k], [C, hs]);
      const { att } = mha.singleHead(X, { B: 1, T, C, headSize: hs, ...W });
      out[`A${head}`] = array(att, [T, T]);
    }
  } finally {
    rng.free();
  }
  out.diff = array(subtract(out.A1.data, out.A2.data), [T, T]);
  return out;
}

/**
 * Lesson 2, from lesson2()'s result r: X (1, T, C), Wq (C, C), q = X @ Wq (1, T, C), q4 = q cut
 * into heads (1, T, h, hs) and Q = the heads axis moved forward (1, h, T, hs), the layer's Q.
 */
export function lesson2Arrays(r) {
  const { T, C, heads, hs } = r;
  return {
    X: array(r.x, [1, T, C]),
    Wq: array(r.Wq, [C, C]),
    q: array(r.q, [1, T, C]),
    q4: array(r.q, [1, T, heads, hs]),
    Q: array(r.Qheads, [1, heads, T, hs]),
  };
}

/**
 * The layer's arrays for inputs X (B, T, C) and weights W (C, C): X, Wq, Wk, Wv, Wo, then dY or
 * target, every forward tensor (Q K V scores att headout concat Y, shapes as the layer keeps
 * them), and with a loss: loss (a 0-d array: sum(dY * Y), or mean((Y - target)^2) with dY = its
 * gradient 2 (Y - target) / n) and every gradient in lesson 4's order.
 */
export function layerArrays(mha, { X, W, B, T, C, heads, causal = false, dY, target }) {
  return withLayer(mha, C, heads, W, (layer) => {
    const out = { X: array(X, [B, T, C]) };
    for (const k of weightNames(mha)) out[k] = array(W[k], [C, C]);
    if (target) out.target = array(target, [B, T, C]);
    else if (dY) out.dY = array(dY, [B, T, C]);
    const { Y } = layer.forward(X, { B, T, causal });
    for (const name of forwardNames(mha)) if (!(name in out)) out[name] = layer.tensor(name);
    if (!target && !dY) return out;
    let g = dY;
    if (target) {
      const mse = mha.mseLoss(Y, target);
      out.loss = array([mse.loss], []);
      out.dY = array(mse.dY, [B, T, C]);
      g = mse.dY;
    } else {
      out.loss = array([dot(dY, Y)], []);
    }
    layer.zeroGrad();
    layer.backward(g);
    for (const name of mha.gradOrder) out[name] = layer.tensor(name);
    return out;
  });
}

/** Lesson 3: the course demo's forward pass (data: courseData), with the page's causal mask. */
export function lesson3Arrays(mha, data, { causal = false } = {}) {
  const { X, W, B, T, C, heads = COURSE.heads } = data;
  return layerArrays(mha, { X, W, B, T, C, heads, causal });
}

/** Lesson 4: the course demo with dY, L = sum(dY * Y): lesson 3's arrays, dY, loss, gradients. */
export function lesson4Arrays(mha, data) {
  const { X, W, B, T, C, dY, heads = COURSE.heads } = data;
  return layerArrays(mha, { X, W, B, T, C, heads, dY });
}

/**
 * Lesson 5: the sentence model (sentenceModel) at its initial weights with its MSE target (the
 * layer's arrays, as its gradient check sees them), then the training on the page: Wq_after ...
 * Wo_after (the weights now), att_after (1, h, T, T) at those weights, losses (steps + 1,: the
 * loss after k steps) and lrs (steps,: the learning rate of each step).
 */
export function lesson5Arrays(mha, model, { weights, att, losses, lrs }) {
  const { X, W, T, C, heads, causal, target } = model;
  const out = layerArrays(mha, { X, W, B: 1, T, C, heads, causal, target });
  for (const k of weightNames(mha)) out[`${k}_after`] = array(weights[k], [C, C]);
  out.att_after = array(att, [1, heads, T, T]);
  out.losses = array(losses, [losses.length]);
  out.lrs = array(lrs, [lrs.length]);
  return out;
}
