// sentence-model.js - lesson 5's and the playground's model of a sentence (DOM-free): one stream
// gives E, then Wq, Wk, Wv, Wo (C, C) / sqrt(C), then target = standard_normal((1, T, C)).

import { COURSE } from './defaults.js';
import { weightNames } from './tensors.js';
import { buildInput, drawScaled } from './input.js';
import { vocabulary } from './tokens.js';

const modelCache = []; // the last two sentence models: [{ mha, key, model }]

function drawModel(mha, { tokens, C, heads, seed, kind, pe, causal }) {
  const rng = mha.rng(seed, kind);
  try {
    const input = buildInput(rng, tokens, C, { pe });
    const W = {};
    for (const k of weightNames(mha)) W[k] = drawScaled(rng, C * C, C);
    const target = rng.standardNormal(tokens.length * C);
    return Object.freeze({
      tokens,
      C,
      heads,
      hs: C / heads,
      seed,
      rng: kind,
      pe,
      causal,
      T: tokens.length,
      ...input,
      W: Object.freeze(W),
      target,
    });
  } finally {
    rng.free();
  }
}

/**
 * Lesson 5 and the playground: one stream: E, then Wq, Wk, Wv, Wo (C, C) / sqrt(C), then
 * target = standard_normal((1, T, C)). rng: 'default_rng' or 'legacy' (np.random.seed + randn:
 * the same calls continue one stream).
 */
export function sentenceModel(mha, options) {
  const { tokens } = options; // the caller's array: the model keeps it
  const { C, heads, seed, rng: kind, pe, causal } = sentenceSpec(options); // defaults filled in
  // lesson 5 and the playground's default view draw the very same stream: computed once. The
  // model is read-only for everyone (its arrays are only ever copied into wasm memory).
  const key = JSON.stringify([tokens, C, heads, seed, kind, pe, causal]);
  const hit = modelCache.find((m) => m.mha === mha && m.key === key);
  if (hit) return hit.model;
  const model = drawModel(mha, { tokens, C, heads, seed, kind, pe, causal });
  modelCache.unshift({ mha, key, model });
  modelCache.length = Math.min(modelCache.length, 2);
  return model;
}

/**
 * A sentence model's description, without its arrays: JSON-able, what a compute worker needs to
 * draw the very same model (sentenceModel(mha, spec) there).
 */
export function sentenceSpec({
  tokens,
  C = COURSE.C,
  heads = COURSE.heads,
  seed = COURSE.seed,
  rng = COURSE.rng,
  pe = false,
  causal = false,
}) {
  return { tokens: [...tokens], C, heads, seed, rng, pe, causal };
}

/**
 * A model that is not drawn here (a large one: a compute worker draws it): the tokens, their
 * vocabulary rows and the sizes as sentenceModel gives them, and its spec; no X, W or target.
 */
export function undrawnModel(spec) {
  const { vocab, ids } = vocabulary(spec.tokens);
  return Object.freeze({
    tokens: spec.tokens,
    C: spec.C,
    heads: spec.heads,
    hs: spec.C / spec.heads,
    seed: spec.seed,
    rng: spec.rng,
    pe: spec.pe,
    causal: spec.causal,
    T: spec.tokens.length,
    vocab,
    ids,
    spec: Object.freeze(spec),
  });
}
