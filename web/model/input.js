// input.js - X from one NumPy stream (DOM-free): E = standard_normal((V, C)), X = E[ids][None],
// optionally X += PE (the sinusoidal positional encoding).

import { COURSE } from './defaults.js';
import { vocabulary } from './tokens.js';

/** PE[t, 2i] = sin(t / 10000**(2i/C)), PE[t, 2i+1] = cos(t / 10000**(2i/C)); (T, C) flat. */
export function positionalEncoding(T, C) {
  const pe = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    for (let c = 0; c < C; c += 2) {
      const angle = t / 10000 ** (c / C);
      pe[t * C + c] = Math.sin(angle);
      if (c + 1 < C) pe[t * C + c + 1] = Math.cos(angle);
    }
  }
  return pe;
}

/** n standard normals divided by sqrt(C), like NumPy's rng.standard_normal(shape) / np.sqrt(C). */
export function drawScaled(rng, n, C) {
  const z = rng.standardNormal(n);
  const s = Math.sqrt(C);
  for (let i = 0; i < n; i++) z[i] /= s;
  return z;
}

/**
 * X for the tokens, drawn from the given stream: E = standard_normal((V, C)); X = E[ids][None];
 * X += PE when pe. Returns { X (T*C), E (V*C), vocab, ids, PE? }.
 */
export function buildInput(rng, tokens, C, { pe = false } = {}) {
  const { vocab, ids } = vocabulary(tokens);
  const E = rng.standardNormal(vocab.length * C);
  const T = tokens.length;
  const X = new Float64Array(T * C);
  for (let t = 0; t < T; t++) X.set(E.subarray(ids[t] * C, ids[t] * C + C), t * C);
  let PE;
  if (pe) {
    PE = positionalEncoding(T, C);
    for (let i = 0; i < X.length; i++) X[i] += PE[i];
  }
  return { X, E, vocab, ids, PE };
}

/** buildInput from a fresh default_rng(seed) stream (the sentence section's X). */
export function sentenceInput(mha, tokens, { C = COURSE.C, seed = COURSE.seed, pe = false } = {}) {
  const rng = mha.rng(seed, COURSE.rng);
  try {
    return buildInput(rng, tokens, C, { pe });
  } finally {
    rng.free();
  }
}
