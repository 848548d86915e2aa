// training.js - the guided project's training rules (DOM-free): SGD on L = mean((Y - target)**2),
// all steps in one wasm call, the learning rate a step accepts, and the captions of its attention
// maps as NumPy.

import { withLayer } from './layers.js';
import { MAX_LR } from './settings.js';

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

/** The loss at step 0, after the last step, and the change between them. */
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
