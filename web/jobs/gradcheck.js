// gradcheck.js - gradient checks as Scheduler jobs: each on a layer of its own, a few entries per
// slice, progress values { done, total, report }.

import { layerWith } from '../model/layers.js';

/**
 * Entries per slice of a check: one entry costs about one forward pass (B*T*C*C), so big layers
 * get small chunks (down to 1) and each slice stays short.
 */
export function checkChunk(B, T, C) {
  const cost = B * T * C * C;
  return Math.max(1, Math.min(32, Math.floor((16 * 8 * 64 * 64) / cost)));
}

/**
 * A gradient-check job for the Scheduler: its own layer from makeLayer(), checked with
 * layer.gradcheckSteps(X, {...opts, chunk}); the returned start() gives { iterator, cleanup }
 * (cleanup frees the layer).
 */
export function gradcheckJob(makeLayer, X, opts, chunk) {
  const c = chunk ?? checkChunk(opts.B ?? 1, opts.T, X.length / ((opts.B ?? 1) * opts.T));
  return () => {
    const layer = makeLayer();
    let freed = false;
    const cleanup = () => {
      if (!freed) {
        freed = true;
        layer.free();
      }
    };
    try {
      return { iterator: layer.gradcheckSteps(X, { ...opts, chunk: c }), cleanup };
    } catch (err) {
      cleanup();
      throw err;
    }
  };
}

/**
 * The check of a layer with weights W = { Wq, Wk, Wv, Wo } (C, C) and `heads` heads at input X:
 * gradcheckJob on a fresh layerWith(mha, C, heads, W). opts: { B, T, causal, loss, target, G,
 * samples } as layer.gradcheckSteps takes them; chunk: entries per step (checkChunk's if unset).
 */
export function layerCheck(mha, { C, heads, W }, X, opts, chunk) {
  return gradcheckJob(() => layerWith(mha, C, heads, W), X, opts, chunk);
}
