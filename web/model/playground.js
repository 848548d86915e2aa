// playground.js - the playground's rules (DOM-free): its model and forward pass for valid
// settings, how many heads the grid shows, which checks and training runs happen at once.

import { sentenceModel } from './sentence-model.js';
import { withLayer } from './layers.js';
import { gradcheckSize } from './gradcheck-report.js';

/** Entries per tensor of the playground's sampled check. */
export const PG_SAMPLES = 32;
const GRID_CELLS = 16384; // at most this many cells in the all-heads grid
const GRID_MAX = 16;
/** Above this many tokens the maps show one head at a time (the head picker), not a grid. */
export const GRID_MAX_T = 32;

/**
 * The model of valid settings (see sentenceModel) and its forward pass at the initial weights:
 * { model, att (1, h, T, T), Y (1, T, C) }.
 */
export function playgroundForward(mha, settings, tokens) {
  const model = sentenceModel(mha, {
    tokens,
    C: settings.C,
    heads: settings.h,
    seed: settings.seed,
    rng: settings.rng,
    pe: settings.pe,
    causal: settings.causal,
  });
  const { attention: att, Y } = withLayer(mha, settings.C, settings.h, model.W, (layer) =>
    layer.forward(model.X, { B: 1, T: model.T, causal: settings.causal }),
  );
  return { model, att, Y };
}

/** How many heads the all-heads grid draws: at most GRID_MAX and GRID_CELLS cells in all. */
export function gridCount(T, h) {
  return Math.max(1, Math.min(h, GRID_MAX, Math.floor(GRID_CELLS / (T * T))));
}

/** How many heads the grid draws: gridCount's, and none above GRID_MAX_T tokens. */
export function gridHeads(T, h) {
  return T > GRID_MAX_T ? 0 : gridCount(T, h);
}

/** Whether the full check starts on its own (about the size of lesson 5's, a few seconds). */
export function autoFull(mha, s, T) {
  return T * s.C * s.C <= 8 * 64 * 64 && gradcheckSize(mha, { T, C: s.C, heads: s.h }) <= 25000;
}

/** Whether training is small enough to run at once (a few ms) rather than in slices. */
export function trainsAtOnce(s, T) {
  return s.steps * T * s.C * s.C <= 4e6;
}

/** Which head the focus view keeps after a change to h heads: the same, else head 0. */
export function keptHead(prev, h) {
  return prev === 'mean' || (Number(prev) < h && prev !== '') ? prev : '0';
}

/** "1 step", "10 steps": a count of training steps, as lesson 5's script counts them. */
export function stepCount(n) {
  return `${n} step${n === 1 ? '' : 's'}`;
}

/**
 * The attention (1, h, T, T) after `steps` SGD steps of lesson 5's MSE training from the model's
 * initial weights (layer.train, then one forward pass): the same weights as the losses' last
 * entry was measured at. null when steps is 0 or training fails.
 */
export function trainedAttention(mha, s, model, steps) {
  if (!(steps > 0)) return null;
  return withLayer(mha, s.C, s.h, model.W, (layer) => {
    const dims = { B: 1, T: model.T, causal: s.causal };
    try {
      layer.train(model.X, model.target, { ...dims, steps, lr: s.lr });
    } catch {
      return null;
    }
    return layer.forward(model.X, dims).attention;
  });
}

/**
 * Which attention the maps show: the one the toggle asks for ('initial' or 'trained') when the
 * view has it; the initial attention otherwise. view.trained: { steps, att } or null (no step
 * taken yet). Returns { weights: 'initial' | 'trained', steps, att, label }.
 */
export function shownAttention(view, want) {
  const t = view.trained;
  if (want === 'trained' && t && t.steps > 0) {
    return { weights: 'trained', steps: t.steps, att: t.att, label: `after ${stepCount(t.steps)}` };
  }
  return { weights: 'initial', steps: 0, att: view.att, label: 'initial weights' };
}
