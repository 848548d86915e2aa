// lesson1.js - "Why one head isn't enough": two independent single heads on the sentence
// (DOM-free).

import { buildInput, drawScaled } from './input.js';
import { argmaxDiffRows, maxAbs, rowArgmax, subtract } from './arrays.js';

/** One single head's attention (T, T): Wq, Wk, Wv drawn next from rng, each (C, hs) / sqrt(C). */
function singleHeadAttention(mha, rng, X, { T, C, hs }) {
  const Wq = drawScaled(rng, C * hs, C);
  const Wk = drawScaled(rng, C * hs, C);
  const Wv = drawScaled(rng, C * hs, C);
  return mha.singleHead(X, { B: 1, T, C, headSize: hs, Wq, Wk, Wv }).att;
}

/**
 * The query row of A whose largest weight is the largest of all (first on ties): { query, key,
 * weight }, the strongest "attends most to" of the map (T, T).
 */
function strongestRow(A, argmaxes, T) {
  let best = { query: 0, key: argmaxes[0], weight: A[argmaxes[0]] };
  for (let t = 1; t < T; t++) {
    const w = A[t * T + argmaxes[t]];
    if (w > best.weight) best = { query: t, key: argmaxes[t], weight: w };
  }
  return best;
}

/**
 * Lesson 1: two independent single heads on the sentence (C = 64, hs = 16, seed 42, default_rng):
 * one stream: E, then Wq1, Wk1, Wv1, then Wq2, Wk2, Wv2, each standard_normal((C, hs)) / sqrt(C).
 * A1, A2, diff = A1 - A2: (T, T).
 */
export function lesson1(mha, { tokens, C = 64, hs = 16, seed = 42 } = {}) {
  const rng = mha.rng(seed, 'default_rng');
  try {
    const T = tokens.length;
    const { X, vocab, ids } = buildInput(rng, tokens, C);
    const A1 = singleHeadAttention(mha, rng, X, { T, C, hs });
    const A2 = singleHeadAttention(mha, rng, X, { T, C, hs });
    const diff = subtract(A1, A2);
    const argmax1 = rowArgmax(A1, T);
    return {
      tokens,
      vocab,
      ids,
      C,
      hs,
      seed,
      T,
      A1,
      A2,
      diff,
      maxGap: maxAbs(diff),
      argmaxDiffRows: argmaxDiffRows(A1, A2, T),
      argmax1,
      strongest: strongestRow(A1, argmax1, T),
      argmax2: rowArgmax(A2, T),
    };
  } finally {
    rng.free();
  }
}

/**
 * Lesson 1's captions as NumPy that runs in its Copy-as-NumPy script (and on its .npz): { name,
 * code, shape }; `code` evaluates to the array `name` of the page (A1, A2, diff: (T, T)) or the
 * figure (max_gap). tests/model/captions.test.mjs runs every one in python3.
 */
export function lesson1Captions() {
  const head = (n) => `softmax((X @ Wq${n}) @ (X @ Wk${n}).transpose(0, 2, 1) / np.sqrt(hs))[0]`;
  return [
    { name: 'A1', code: head(1), shape: '(T, T)' },
    { name: 'A2', code: head(2), shape: '(T, T)' },
    { name: 'diff', code: 'A1 - A2', shape: '(T, T)' },
    { name: 'max_gap', code: 'np.abs(A1 - A2).max()', shape: '()' },
  ];
}
