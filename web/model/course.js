// course.js - the course setting of lessons 3 and 4 and its data (DOM-free).

import { COURSE } from './defaults.js';
import { weightNames } from './tensors.js';
import { drawScaled } from './input.js';

/** X (2, 6, 64) and Wq, Wk, Wv, Wo (64, 64) / 8 from default_rng(42), then dY (lesson 4). */
export function courseData(
  mha,
  { seed = COURSE.seed, B = COURSE.B, T = COURSE.T, C = COURSE.C } = {},
) {
  const rng = mha.rng(seed, COURSE.rng);
  try {
    const X = rng.standardNormal(B * T * C);
    const W = {};
    for (const k of weightNames(mha)) W[k] = drawScaled(rng, C * C, C);
    const dY = rng.standardNormal(B * T * C);
    return { X, W, dY, B, T, C };
  } finally {
    rng.free();
  }
}
