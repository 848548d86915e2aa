// training.js - the guided project's training rules (DOM-free): SGD on L = mean((Y - target)**2),
// all steps in one wasm call, the learning rate a step accepts, the captions of its attention
// maps as NumPy, and how its MSE gradients compare with lesson 4's (what its check's text quotes).

import { COURSE } from './defaults.js';
import { withLayer } from './layers.js';
import { MAX_LR } from './settings.js';
import { frobenius } from './arrays.js';
import { weightNames } from './tensors.js';
import { lesson4 } from './lesson4.js';

/** Lesson 5's own run: lr 0.1 (its field's value) and 10 steps ("Run 10 steps"). */
export const LESSON5_DEFAULTS = Object.freeze({ lr: COURSE.lr, steps: COURSE.steps });

/** Losses that agree to at most this relative difference are the same run (float64 rounding). */
export const SAME_RUN_REL = 1e-10;

/**
 * A student's losses beside the page's, step by step (yours[k] and page[k]: the loss after k
 * steps, that is before step k): { rows: [{ k, yours, page, rel }] for the steps both have,
 * maxRel, at (its step), agree (maxRel <= SAME_RUN_REL) }; rel = |yours - page| / |page|
 * (Infinity when one is not finite and they differ).
 */
export function lossesAgreement(yours, page) {
  const n = Math.min(yours.length, page.length);
  const rows = [];
  let maxRel = 0;
  let at = 0;
  for (let k = 0; k < n; k++) {
    const [y, p] = [yours[k], page[k]];
    const d = Math.abs(y - p);
    let rel = Infinity;
    if (y === p) rel = 0;
    else if (Number.isFinite(d)) rel = d / Math.abs(p);
    rows.push({ k, yours: y, page: p, rel });
    if (rel > maxRel) [maxRel, at] = [rel, k];
  }
  return { rows, maxRel, at, agree: n > 0 && maxRel <= SAME_RUN_REL };
}

/** "Lesson 5 runs your training: lr 0.05 from your file; 10 steps from your file." */
export function runLine(run) {
  return `Lesson 5 runs your training: ${run.lrText}; ${run.stepsText}.`;
}

const sci = (x) => (Number.isFinite(x) ? x.toExponential(1) : String(x));

/**
 * What lossesAgreement found, in one sentence (key: the student's name for the losses; null
 * when no step is compared yet): "Your losses agree with the page's at all 10 steps compared: …".
 */
export function agreementText(key, a) {
  const n = a.rows.length;
  if (!n) return null;
  const r = a.rows[a.at];
  const compared = `${n === 1 ? 'the 1 step' : `all ${n} steps`} compared`;
  if (a.agree) {
    return `Your ${key} agree with the page's at ${compared}: the largest relative difference is ${sci(a.maxRel)} (step ${r.k}), float64 rounding. The page ran the run your notebook ran.`;
  }
  const pair = `yours ${r.yours.toPrecision(10)}, the page's ${r.page.toPrecision(10)}`;
  return `Your ${key} differ from the page's: the largest relative difference is ${sci(a.maxRel)}, at step ${r.k} (${pair}), of ${compared}. The same arrays at the same lr agree to about 1e-12, so this is not the run your notebook made on these arrays: another learning rate or number of steps, another loss (the course's is np.mean((Y - target) ** 2)), or weights saved after training instead of before.`;
}

/** The message of a diverged run (the same as Trainer.step's). */
export function divergedMessage(loss) {
  return `the loss is ${loss}: training diverged (the learning rate is too large). Reset and use a smaller learning rate.`;
}

/** The losses a layer.train error carries, cut after the first non-finite one, and the error. */
function divergedLosses(e, steps) {
  const all = Array.from(e.losses);
  const bad = all.findIndex((L) => !Number.isFinite(L));
  const losses = bad < 0 ? all : all.slice(0, bad + 1);
  // Trainer.step refuses to step from a non-finite loss; a non-finite final loss is just shown
  if (bad < 0 || bad >= steps) return { losses };
  return { losses, error: divergedMessage(losses[losses.length - 1]) };
}

/**
 * The losses of `steps` SGD steps from the model's initial weights in one wasm call (layer.train:
 * one forward per step): losses[k] = the loss after k steps, k = 0 ... steps (the last of the
 * steps + 1 calls only measures). On divergence the list ends at the first non-finite loss and
 * `error` says so, as Trainer.step would. s: { C, h, steps, lr, causal }.
 */
export function trainAtOnce(mha, s, model) {
  return withLayer(mha, s.C, s.h, model.W, (layer) => {
    try {
      const opts = { B: 1, T: model.T, steps: s.steps + 1, lr: s.lr, causal: s.causal };
      return { losses: Array.from(layer.train(model.X, model.target, opts)) };
    } catch (e) {
      if (!e.losses) throw e;
      return divergedLosses(e, s.steps);
    }
  });
}

/** A step's learning rate typed in a number field: the number, or null unless 0 < lr <= MAX_LR. */
export function stepLearningRate(text) {
  const v = String(text).trim();
  const lr = Number(v);
  if (v === '' || !Number.isFinite(lr) || lr <= 0 || lr > MAX_LR) return null;
  return lr;
}

/** "0 steps", "1 step", "10 steps": how lesson 5's script counts (losses[k]: after k steps). */
export function stepsText(k) {
  return `${k} ${k === 1 ? 'step' : 'steps'}`;
}

/**
 * The loss after 0 steps (losses[0]), after the last step, the change between them and the
 * number of steps taken (losses.length - 1).
 */
export function lossSummary(losses) {
  const first = losses[0];
  const last = losses[losses.length - 1];
  return { first, last, change: last - first, steps: losses.length - 1 };
}

/**
 * Lesson 5's attention maps as NumPy on the lesson's arrays (att: (1, h, T, T), the layer's
 * attention at the weights shown): { name, code, shape } for head 0 ... h-1, att[0, i], then the
 * mean over heads, att[0].mean(axis=0): a view for the eye, not a step of the layer (the layer
 * concatenates the heads' outputs; it never averages them).
 */
export function attentionCaptions(heads) {
  const maps = Array.from({ length: heads }, (_, i) => ({
    name: `head ${i}`,
    code: `att[0, ${i}]`,
    shape: '(T, T)',
  }));
  maps.push({ name: 'mean over heads', code: 'att[0].mean(axis=0)', shape: '(T, T)' });
  return maps;
}

/** Root mean square of the entries of a. */
const rms = (a) => frobenius(a) / Math.sqrt(a.length);

/**
 * How lesson 5's MSE gradients compare with lesson 4's, measured: lesson 4 on data4 (the course
 * demo or a notebook's arrays; L = sum(dY * Y), so dL/dY = dY), lesson 5 on `model` at its initial
 * weights, as its gradient check sees it (L = mean((Y - target)**2), dL/dY = 2 (Y - target) / n).
 * Returns { n (Y's entries), loss4, loss5, tokens4 (B·T), tokens5 (T), rms4 and rms5 (the root
 * mean squares of lesson 4's dY and of lesson 5's dL/dY, 2 sqrt(loss5) / n), dY (rms4 / rms5),
 * weights: [{ name, gradient, ratio: lesson 4's ‖gradient‖ over lesson 5's }] (Wq, Wk, Wv, Wo) }.
 */
export function mseScale(mha, data4, model) {
  const r4 = lesson4(mha, { data: data4 });
  const { C, heads, T } = model;
  return withLayer(mha, C, heads, model.W, (layer) => {
    const Y = Float64Array.from(layer.forward(model.X, { B: 1, T }).Y); // (1, T, C)
    const mse = mha.mseLoss(Y, model.target);
    layer.zeroGrad();
    layer.backward(mse.dY);
    const gradOf = new Map(mha.tensors.map((t) => [t.name, t.grad]));
    const weights = weightNames(mha).map((name) => {
      const gradient = gradOf.get(name);
      const here = frobenius(layer.tensor(gradient).data);
      return { name, gradient, ratio: frobenius(r4.grads[gradient].data) / here };
    });
    return {
      n: Y.length,
      loss4: r4.loss,
      loss5: mse.loss,
      tokens4: r4.B * r4.T,
      tokens5: T,
      rms4: rms(r4.dY),
      rms5: rms(mse.dY),
      dY: rms(r4.dY) / rms(mse.dY),
      weights,
    };
  });
}
