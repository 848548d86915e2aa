// expected.mjs - the companion page's figures computed in Node, independently of web/model.js and
// web/lessons/*, from the model rules of the page contract, through the same JS API (web/mha.js)
// and the same wasm. The browser tests compare the page's window.mhaPage.figures() against these.
//
// Rules (one NumPy stream per view, weights = standard normals / sqrt(C), written into a layer):
//   tokens  words = maximal runs of letters, digits and apostrophes; every other non-space
//           character (code point) is a token of its own; whitespace only separates
//   vocab   distinct lower-cased tokens in order of first appearance; token t uses row
//           vocab.indexOf(tokens[t].toLowerCase()) of E = rng.standard_normal((V, C))
//   X       E[ids][None] (+ sinusoidal PE when asked)

import { loadMHA } from '../../web/mha.js';
import { LESSON4_ORDER } from '../helpers.mjs';

export const mha = await loadMHA();

export const DEFAULT_SENTENCE = 'The lanterns of Lantern Bay guide boats home';
export const DEFAULT_SETTINGS = Object.freeze({
  sentence: DEFAULT_SENTENCE,
  C: 64,
  heads: 4,
  seed: 42,
  rng: 'default_rng',
  causal: false,
  pe: false,
  lr: 0.1,
  steps: 10,
});

/** The contract's tokenizer, written from its wording (not imported from the page). */
export function tokenize(text) {
  return text.match(/[\p{L}\p{N}']+|\S/gu) ?? [];
}

/** { vocab, ids } for a token list: distinct lower-cased tokens, first appearance first. */
export function vocabIds(tokens) {
  const vocab = [];
  const ids = tokens.map((tok) => {
    const key = tok.toLowerCase();
    let i = vocab.indexOf(key);
    if (i < 0) i = vocab.push(key) - 1;
    return i;
  });
  return { vocab, ids };
}

/** n standard normals of the stream divided by sqrt(C) (division, like NumPy's `/ np.sqrt(C)`). */
function drawScaled(r, n, C) {
  const s = Math.sqrt(C);
  return Float64Array.from(r.standardNormal(n), (z) => z / s);
}

/**
 * The sinusoidal positional encoding, PE[t, 2i] = sin(t / 10000**(2i/C)), PE[t, 2i+1] = cos(...),
 * (T, C) flat. Self-contained (one array argument) so a test can also run it inside the browser
 * with page.evaluate(peTable, [T, C]): Math.sin/cos and ** are not the same in every JS engine
 * (Node 20's V8 and Chromium's differ in the last bit for some arguments), so the page's X is
 * predicted exactly only with the browser's own values.
 */
export function peTable([T, C]) {
  const pe = new Array(T * C).fill(0);
  for (let t = 0; t < T; t++) {
    for (let i = 0; 2 * i < C; i++) {
      const angle = t / 10000 ** ((2 * i) / C);
      pe[t * C + 2 * i] = Math.sin(angle);
      if (2 * i + 1 < C) pe[t * C + 2 * i + 1] = Math.cos(angle);
    }
  }
  return pe;
}

/** X = E[ids][None] (+ PE, from `pe` if it is a table): draws E from r, returns (1, T, C). */
function embed(r, tokens, C, pe) {
  const { vocab, ids } = vocabIds(tokens);
  const E = r.standardNormal(vocab.length * C);
  const T = tokens.length;
  const X = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    for (let c = 0; c < C; c++) X[t * C + c] = E[ids[t] * C + c];
  }
  if (pe) {
    const table = Array.isArray(pe) ? pe : peTable([T, C]);
    if (table.length !== T * C) {
      throw new Error(`embed: PE table has ${table.length} entries, expected ${T * C}`);
    }
    for (let i = 0; i < T * C; i++) X[i] += table[i];
  }
  return X;
}

/** A layer of width C with `heads` heads, its weights overwritten with W = [Wq, Wk, Wv, Wo]. */
function layerWith(C, heads, W) {
  const layer = mha.createLayer({ C, heads, seed: 0 });
  const views = layer.weights;
  ['Wq', 'Wk', 'Wv', 'Wo'].forEach((name, i) => views[name].set(W[i]));
  return layer;
}

const maxAbsDiff = (a, b) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

function argmax(a, from, n) {
  let best = 0;
  for (let j = 1; j < n; j++) if (a[from + j] > a[from + best]) best = j;
  return best;
}

// ------------------------------------------------------------------------------------------------
// lesson 1: two single heads on the sentence (C = 64, hs = 16, seed 42)

/**
 * Lesson 1's comparison at equal parameter count, drawn next from the stream: Wq, Wk, Wv (C, C) /
 * sqrt(C); one single head of hs = C, and four single heads on the column blocks (head i: columns
 * i*hs … (i+1)*hs − 1 of each weight, copied out here: not the page's layer). The argmaxes.
 */
function oneVsFour(r, X, { T, C }) {
  const [Wq, Wk, Wv] = [0, 1, 2].map(() => drawScaled(r, C * C, C));
  const rowMax = (A) => Array.from({ length: T }, (_, i) => argmax(A, i * T, T));
  const single = mha.singleHead(X, { B: 1, T, C, headSize: C, Wq, Wk, Wv }).att;
  const hs = C / 4;
  const block = (W, i) =>
    Float64Array.from({ length: C * hs }, (_, k) => W[Math.floor(k / hs) * C + i * hs + (k % hs)]);
  const fourArgmax = [0, 1, 2, 3].map((i) => {
    const w = { Wq: block(Wq, i), Wk: block(Wk, i), Wv: block(Wv, i) };
    return rowMax(mha.singleHead(X, { B: 1, T, C, headSize: hs, ...w }).att);
  });
  const disagreeRows = [];
  for (let t = 0; t < T; t++) {
    if (new Set(fourArgmax.map((a) => a[t])).size > 1) disagreeRows.push(t);
  }
  return { singleArgmax: rowMax(single), fourArgmax, disagreeRows };
}

export function lesson1(sentence = DEFAULT_SENTENCE) {
  const C = 64,
    hs = 16;
  const tokens = tokenize(sentence);
  const T = tokens.length;
  const r = mha.rng(42, 'default_rng');
  try {
    const X = embed(r, tokens, C, false);
    const heads = [0, 1].map(() => {
      const Wq = drawScaled(r, C * hs, C);
      const Wk = drawScaled(r, C * hs, C);
      const Wv = drawScaled(r, C * hs, C);
      return mha.singleHead(X, { B: 1, T, C, headSize: hs, Wq, Wk, Wv }).att;
    });
    const [A1, A2] = heads;
    const argmaxDiffRows = [];
    for (let i = 0; i < T; i++) {
      if (argmax(A1, i * T, T) !== argmax(A2, i * T, T)) argmaxDiffRows.push(i);
    }
    const rowMax = (A) => Array.from({ length: T }, (_, i) => argmax(A, i * T, T));
    return {
      tokens,
      A1: Array.from(A1),
      A2: Array.from(A2),
      maxGap: maxAbsDiff(A1, A2),
      argmaxDiffRows,
      argmax1: rowMax(A1),
      argmax2: rowMax(A2),
      compare: oneVsFour(r, X, { T, C }),
    };
  } finally {
    r.free();
  }
}

// ------------------------------------------------------------------------------------------------
// lesson 2: splitting q into heads is a reshape (seed 42, x (1, 6, 64), Wq (64, 64))

export function lesson2() {
  const B = 1,
    T = 6,
    C = 64,
    H = 4,
    hs = 16;
  const r = mha.rng(42, 'default_rng');
  const x = r.standardNormal(B * T * C);
  const Wq = drawScaled(r, C * C, C);
  r.free();
  const layer = mha.createLayer({ C, heads: H, seed: 0 });
  layer.weights.Wq.set(Wq);
  layer.forward(x, { B, T });
  const Q = layer.tensor('Q'); // (1, 4, 6, 16): split(q)
  layer.free();
  // head i of split(q) against the small projection x @ Wq[:, i*hs:(i+1)*hs], k-ordered from 0.0
  let headMaxDiff = 0;
  for (let i = 0; i < H; i++) {
    for (let t = 0; t < T; t++) {
      for (let d = 0; d < hs; d++) {
        let s = 0.0;
        for (let k = 0; k < C; k++) s += x[t * C + k] * Wq[k * C + i * hs + d];
        headMaxDiff = Math.max(headMaxDiff, Math.abs(Q.data[(i * T + t) * hs + d] - s));
      }
    }
  }
  const q = mha.mergeHeads(Q.data, { B, T, C, heads: H });
  const back = mha.mergeHeads(mha.splitHeads(q, { B, T, C, heads: H }), { B, T, C, heads: H });
  return {
    shapes: { x: [B, T, C], q4: [B, T, H, hs], heads: Q.shape },
    headMaxDiff,
    roundTrip: maxAbsDiff(back, q),
  };
}

// ------------------------------------------------------------------------------------------------
// lessons 3 and 4: the course demo (seed 42, X (2, 6, 64), Wq, Wk, Wv, Wo, then dY)

export function courseStream() {
  const C = 64;
  const r = mha.rng(42, 'default_rng');
  const X = r.standardNormal(2 * 6 * C);
  const W = [0, 1, 2, 3].map(() => drawScaled(r, C * C, C));
  const dY = r.standardNormal(2 * 6 * C);
  r.free();
  return { X, W, dY, B: 2, T: 6, C, heads: 4 };
}

export const STAGES = ['X', 'Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y'];

export function lesson3({ causal = false } = {}) {
  const { X, W, B, T, C, heads } = courseStream();
  const hs = C / heads;
  const layer = layerWith(C, heads, W);
  layer.forward(X, { B, T, causal });
  const shapes = {};
  for (const s of STAGES) shapes[s] = layer.tensor(s).shape;
  const att = layer.tensor('att').data;
  layer.free();
  let rowSumMaxErr = 0;
  for (let row = 0; row < B * heads * T; row++) {
    let s = 0;
    for (let j = 0; j < T; j++) s += att[row * T + j];
    rowSumMaxErr = Math.max(rowSumMaxErr, Math.abs(s - 1));
  }
  // +1.0 on every entry of head 0's headout, then recompute Y from there
  const deltas = (Wo) => {
    const l = layerWith(C, heads, [W[0], W[1], W[2], Wo]);
    const Y0 = l.forward(X, { B, T, causal }).Y;
    const h = l.tensor('headout').data;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        for (let d = 0; d < hs; d++) h[((b * heads + 0) * T + t) * hs + d] += 1.0;
      }
    }
    l.setTensor('headout', h);
    const Y1 = l.forwardFrom('headout').Y;
    l.free();
    const out = new Array(heads).fill(0);
    for (let i = 0; i < Y0.length; i++) {
      const block = Math.floor((i % C) / hs);
      out[block] = Math.max(out[block], Math.abs(Y1[i] - Y0[i]));
    }
    return out;
  };
  const blockDiag = Float64Array.from(W[3], (v, i) =>
    Math.floor(Math.floor(i / C) / hs) === Math.floor((i % C) / hs) ? v : 0,
  );
  return {
    shapes,
    att: Array.from(att),
    rowSumMaxErr,
    blockDiagDelta: deltas(blockDiag),
    fullDelta: deltas(W[3]),
    causal,
  };
}

export const GRADS = LESSON4_ORDER;

export function lesson4() {
  const { X, W, dY, B, T, C, heads } = courseStream();
  const layer = layerWith(C, heads, W);
  layer.forward(X, { B, T });
  layer.backward(dY);
  const grads = {};
  for (const g of GRADS) grads[g] = Array.from(layer.tensor(g).data);
  layer.free();
  return { grads };
}

/**
 * The convention the page's check tables start with, as the contract says: a notebook's two-point
 * central difference (L(x+ε) − L(x−ε)) / 2ε at ε = 1e-5.
 */
export const PAGE_CHECK = Object.freeze({ stencil: 'two-point', eps: 1e-5 });

/** The full gradient check of lesson 4 (dot loss with G = dY), at a convention { stencil, eps }. */
export function lesson4Gradcheck(convention = PAGE_CHECK) {
  const { X, W, dY, B, T, C, heads } = courseStream();
  const layer = layerWith(C, heads, W);
  const report = layer.gradcheck(X, { B, T, G: dY, ...convention });
  layer.free();
  return report;
}

// ------------------------------------------------------------------------------------------------
// lesson 5 and the playground: the layer on a sentence, MSE against a random target

/**
 * Inputs of a sentence view: { tokens, T, X, W, target }. s.pe: false, true (PE computed here) or
 * a PE table (e.g. the browser's, from peTable).
 */
export function sentenceStream(s) {
  const tokens = tokenize(s.sentence);
  const T = tokens.length;
  const r = mha.rng(s.seed, s.rng);
  try {
    const X = embed(r, tokens, s.C, s.pe);
    const W = [0, 1, 2, 3].map(() => drawScaled(r, s.C * s.C, s.C));
    const target = r.standardNormal(T * s.C);
    return { tokens, T, X, W, target };
  } finally {
    r.free();
  }
}

/** Forward on the initial weights: { tokens, att, Y }. */
export function sentenceForward(settings) {
  const s = { ...DEFAULT_SETTINGS, ...settings };
  const { tokens, T, X, W } = sentenceStream(s);
  const layer = layerWith(s.C, s.heads, W);
  const { Y, attention } = layer.forward(X, { B: 1, T, causal: s.causal });
  layer.free();
  return { tokens, C: s.C, heads: s.heads, att: Array.from(attention), Y: Array.from(Y) };
}

/** layer.train from the initial weights: the loss before each of `steps` steps. */
export function sentenceLosses(settings, steps) {
  const s = { ...DEFAULT_SETTINGS, ...settings };
  const { T, X, W, target } = sentenceStream(s);
  const layer = layerWith(s.C, s.heads, W);
  const losses = layer.train(X, target, { B: 1, T, steps, lr: s.lr, causal: s.causal });
  layer.free();
  return Array.from(losses);
}

/** layer.gradcheck on the initial weights, MSE loss against the target. */
export function sentenceGradcheck(settings, samples = 0) {
  const s = { ...DEFAULT_SETTINGS, ...settings };
  const { T, X, W, target } = sentenceStream(s);
  const layer = layerWith(s.C, s.heads, W);
  const opts = { B: 1, T, causal: s.causal, loss: 'mse', target, samples, ...PAGE_CHECK };
  const report = layer.gradcheck(X, opts);
  layer.free();
  return report;
}
