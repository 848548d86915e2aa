// lesson1.js - "Why one head isn't enough": two independent single heads on the sentence
// (DOM-free).

import { COURSE } from './defaults.js';
import { buildInput, drawScaled } from './input.js';
import { argmaxDiffRows, maxAbs, rowArgmax, subtract } from './arrays.js';
import { withLayer } from './layers.js';

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

/** The figures of two heads' maps A1, A2 (T, T) of the same X: difference, max gap, argmaxes. */
function twoHeads(A1, A2, T) {
  const diff = subtract(A1, A2);
  const argmax1 = rowArgmax(A1, T);
  return {
    A1,
    A2,
    diff,
    maxGap: maxAbs(diff),
    argmaxDiffRows: argmaxDiffRows(A1, A2, T),
    argmax1,
    strongest: strongestRow(A1, argmax1, T),
    argmax2: rowArgmax(A2, T),
  };
}

/** The number of heads the comparison at equal parameter count cuts C into. */
export const COMPARE_HEADS = 4;

/**
 * One head of hs = C against COMPARE_HEADS heads of hs = C / COMPARE_HEADS on the same X (T, C),
 * with the same Wq, Wk, Wv (each (C, C): the same parameter count; head i of the four is columns
 * i·hs … (i+1)·hs − 1 of them): { heads, hs, single (T, T), four (h, T, T), singleArgmax [T],
 * fourArgmax [h][T], disagreeRows (rows where the four heads' argmaxes are not all the same),
 * distinct [T] (how many different keys the four heads attend most to), offSingle [T] (how many
 * of the four differ from the single head's argmax) }. null when COMPARE_HEADS does not divide C.
 */
export function oneVsFour(mha, X, { T, C, W }) {
  const heads = COMPARE_HEADS;
  if (C % heads) return null;
  const single = mha.singleHead(X, { B: 1, T, C, headSize: C, ...W }).att;
  const four = withLayer(mha, C, heads, { ...W, Wo: W.Wq }, (layer) =>
    Float64Array.from(layer.forward(X, { B: 1, T }).attention),
  );
  const singleArgmax = rowArgmax(single, T);
  const fourArgmax = Array.from({ length: heads }, (_, i) =>
    rowArgmax(four.subarray(i * T * T, (i + 1) * T * T), T),
  );
  const distinct = [];
  const offSingle = [];
  for (let t = 0; t < T; t++) {
    const keys = fourArgmax.map((a) => a[t]);
    distinct.push(new Set(keys).size);
    offSingle.push(keys.filter((k) => k !== singleArgmax[t]).length);
  }
  const disagreeRows = distinct.flatMap((n, t) => (n > 1 ? [t] : []));
  const hs = C / heads;
  return { heads, hs, single, four, singleArgmax, fourArgmax, distinct, offSingle, disagreeRows };
}

/** Wq, Wk, Wv, each (C, C) / sqrt(C), drawn next from rng (the comparison's weights). */
function drawCompareWeights(rng, C) {
  return {
    Wq: drawScaled(rng, C * C, C),
    Wk: drawScaled(rng, C * C, C),
    Wv: drawScaled(rng, C * C, C),
  };
}

/**
 * Lesson 1: two independent single heads on the sentence (C = 64, hs = 16, seed 42, default_rng):
 * one stream: E, then Wq1, Wk1, Wv1, then Wq2, Wk2, Wv2, each standard_normal((C, hs)) / sqrt(C),
 * then the comparison's Wq, Wk, Wv, each standard_normal((C, C)) / sqrt(C) (after every draw of
 * the two heads, which stay as they were). A1, A2, diff = A1 - A2: (T, T); compare: oneVsFour.
 */
export function lesson1(mha, { tokens, C = COURSE.C, hs = COURSE.hs, seed = COURSE.seed } = {}) {
  const rng = mha.rng(seed, COURSE.rng);
  try {
    const T = tokens.length;
    const { X, vocab, ids } = buildInput(rng, tokens, C);
    const A1 = singleHeadAttention(mha, rng, X, { T, C, hs });
    const A2 = singleHeadAttention(mha, rng, X, { T, C, hs });
    const compare = oneVsFour(mha, X, { T, C, W: drawCompareWeights(rng, C) });
    return { tokens, vocab, ids, C, hs, seed, T, X, ...twoHeads(A1, A2, T), compare };
  } finally {
    rng.free();
  }
}

/** The seed of the comparison's weights when lesson 1 runs on a notebook's X and heads. */
export const COMPARE_SEED = COURSE.seed;

/**
 * Lesson 1 on a notebook's arrays (lesson1Part of web/model/custom-arrays.js): X (T, C), the two
 * heads' weights W1, W2 ({ Wq, Wk, Wv }, each (C, hs)); tokens t0, t1, …. The comparison's Wq,
 * Wk, Wv (C, C) are drawn from default_rng(COMPARE_SEED), each standard_normal((C, C)) / sqrt(C).
 */
export function lesson1FromArrays(mha, { X, T, C, hs, W1, W2, tokens }) {
  const head = (W) => mha.singleHead(X, { B: 1, T, C, headSize: hs, ...W }).att;
  const rng = mha.rng(COMPARE_SEED, COURSE.rng);
  let W;
  try {
    W = drawCompareWeights(rng, C);
  } finally {
    rng.free();
  }
  const ids = tokens.map((_, t) => t);
  const two = twoHeads(head(W1), head(W2), T);
  const compare = oneVsFour(mha, X, { T, C, W });
  return { tokens, vocab: tokens, ids, C, hs, seed: null, T, X, ...two, compare, custom: true };
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
