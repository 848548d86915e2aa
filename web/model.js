// model.js - the rules of the companion page, DOM-free (the browser tests import it from Node too).
//
//   tokenize / vocabulary      the sentence -> tokens -> embedding rows
//   buildInput                 X from one NumPy stream (E, then X = E[ids][None], optional PE)
//   validateSettings, parseQuery, settingsToQuery    the playground's settings and the URL
//   lesson1 ... lesson4, sentenceModel, Trainer      every lesson's computation, as plain data
//   Scheduler, gradcheckJob    chunked gradient checks / training runs that yield to the event loop
//
// Every number comes from the WebAssembly module through web/mha.js; this file only moves arrays
// around, draws from the module's NumPy-identical streams in the documented order, and reduces
// results to the figures the page prints (max, argmax, block maxima).

export const DEFAULT_SENTENCE = 'The lanterns of Lantern Bay guide boats home';
export const MAX_TOKENS = 64;
export const C_OPTIONS = [8, 16, 32, 48, 64, 96, 128];
export const RNG_OPTIONS = ['default_rng', 'legacy'];
export const MAX_STEPS = 100;
export const MAX_LR = 10;
export const MAX_SEED_DEFAULT = 2 ** 53 - 1; // what mha.js accepts for default_rng
export const MAX_SEED_LEGACY = 2 ** 32 - 1; // np.random.seed takes 0 ... 2**32 - 1

/** The playground's defaults (also the state an empty query string means). */
export const DEFAULTS = Object.freeze({
  s: DEFAULT_SENTENCE,
  C: 64,
  h: 4,
  seed: 42,
  rng: 'default_rng',
  causal: false,
  pe: false,
  lr: 0.1,
  steps: 10,
});

// The course setting of lessons 3 and 4.
export const COURSE = Object.freeze({ seed: 42, B: 2, T: 6, C: 64, heads: 4, hs: 16 });

// ------------------------------------------------------------------------------------------------
// sentence -> tokens -> rows

const TOKEN_RE = /[\p{L}\p{N}']+|\S/gu;

/**
 * Words are maximal runs of letters, digits and apostrophes; every other non-space character
 * (punctuation, each emoji code point) is a token of its own; whitespace only separates.
 * Python: re.findall(r"(?:[^\W_]|')+|\S", text).
 */
export function tokenize(text) {
  return String(text ?? '').match(TOKEN_RE) ?? [];
}

/**
 * Distinct lower-cased tokens in order of first appearance, and each token's row:
 * the same word in any case always gets the same row.
 */
export function vocabulary(tokens) {
  const vocab = [];
  const index = new Map();
  const ids = tokens.map((tok) => {
    const key = tok.toLowerCase();
    if (!index.has(key)) {
      index.set(key, vocab.length);
      vocab.push(key);
    }
    return index.get(key);
  });
  return { vocab, ids };
}

// Something that looks like an HTML tag, comment, doctype or character reference.
const HTML_RE = /<\/?[A-Za-z!?][^<>]*>|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i;

/**
 * Checks a sentence; returns { tokens } or { error } (a message for the student, plain text).
 */
export function checkSentence(text) {
  const s = String(text ?? '');
  const m = s.match(HTML_RE);
  if (m) {
    const shown = m[0].length > 24 ? `${m[0].slice(0, 24)}…` : m[0];
    return {
      error: `The sentence contains HTML (${shown}). Type plain words: markup is not read here, and the page never renders it.`,
    };
  }
  const tokens = tokenize(s);
  if (tokens.length === 0) {
    return { error: 'The sentence is empty: type at least one word (1 to 64 tokens).' };
  }
  if (tokens.length > MAX_TOKENS) {
    return {
      error: `The sentence has ${tokens.length} tokens; the page accepts 1 to ${MAX_TOKENS} (attention is T×T, so ${tokens.length}×${tokens.length} would be unreadable).`,
    };
  }
  return { tokens };
}

export function divisors(C) {
  const out = [];
  for (let d = 1; d <= C; d++) if (C % d === 0) out.push(d);
  return out;
}

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

// ------------------------------------------------------------------------------------------------
// playground settings and the URL

function parseIntStrict(v) {
  const s = String(v).trim();
  if (!/^[+]?\d+$/.test(s)) return NaN;
  return Number(s);
}

function parseNumber(v) {
  const s = String(v).trim();
  if (s === '' || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s)) return NaN;
  return Number(s);
}

function parseBool(v) {
  if (typeof v === 'boolean') return v;
  const s = String(v).trim().toLowerCase();
  if (s === '1' || s === 'true' || s === 'on' || s === 'yes') return true;
  if (s === '0' || s === 'false' || s === 'off' || s === 'no' || s === '') return false;
  return undefined;
}

// How a bad raw value is quoted in a message.
function shown(v) {
  const s = String(v ?? '');
  if (s.trim() === '') return 'an empty field';
  return `“${s.length > 30 ? `${s.slice(0, 30)}…` : s}”`;
}

/**
 * Validates raw settings (strings from the controls or the URL, or typed values). Returns
 * { settings, tokens, errors } where errors maps a field (s, C, h, seed, rng, causal, pe, lr, steps)
 * to a message; settings is complete only when errors is empty.
 */
export { shown as quoteValue };

export function validateSettings(raw) {
  const r = { ...DEFAULTS, ...raw };
  const errors = {};
  const settings = {};

  settings.s = String(r.s ?? '');
  const sc = checkSentence(settings.s);
  if (sc.error) errors.s = sc.error;

  settings.C = parseIntStrict(r.C);
  if (!C_OPTIONS.includes(settings.C)) {
    errors.C = `C must be one of ${C_OPTIONS.join(', ')}; got ${shown(r.C)}.`;
  }

  settings.h = parseIntStrict(r.h);
  if (!Number.isInteger(settings.h) || settings.h < 1) {
    errors.h = `The number of heads must be a whole number ≥ 1; got ${shown(r.h)}.`;
  } else if (!errors.C && settings.C % settings.h !== 0) {
    errors.h = `C = ${settings.C} is not divisible by ${settings.h} heads: each head gets C / heads columns, so heads must divide C (${divisors(settings.C).join(', ')}).`;
  }

  settings.rng = String(r.rng);
  if (!RNG_OPTIONS.includes(settings.rng)) {
    errors.rng = `The generator must be default_rng or legacy; got ${shown(settings.rng)}.`;
  }

  settings.seed = parseIntStrict(r.seed);
  const maxSeed = settings.rng === 'legacy' ? MAX_SEED_LEGACY : MAX_SEED_DEFAULT;
  if (!Number.isSafeInteger(settings.seed) || settings.seed < 0 || settings.seed > maxSeed) {
    errors.seed = `The seed must be a whole number from 0 to ${maxSeed === MAX_SEED_LEGACY ? '2³²−1 (np.random.seed’s range)' : '2⁵³−1'}; got ${shown(r.seed)}.`;
  }

  settings.causal = parseBool(r.causal);
  if (settings.causal === undefined) {
    errors.causal = `causal must be 0 or 1; got ${shown(r.causal)}.`;
  }
  settings.pe = parseBool(r.pe);
  if (settings.pe === undefined) errors.pe = `pe must be 0 or 1; got ${shown(r.pe)}.`;

  settings.lr = parseNumber(r.lr);
  if (!Number.isFinite(settings.lr) || settings.lr <= 0 || settings.lr > MAX_LR) {
    errors.lr = `The learning rate must be a number greater than 0 and at most ${MAX_LR}; got ${shown(r.lr)}.`;
  }

  settings.steps = parseIntStrict(r.steps);
  if (!Number.isInteger(settings.steps) || settings.steps < 1 || settings.steps > MAX_STEPS) {
    errors.steps = `Training steps must be a whole number from 1 to ${MAX_STEPS}; got ${shown(r.steps)}.`;
  }
  return { settings, tokens: sc.tokens, errors };
}

const QUERY_KEYS = ['s', 'C', 'h', 'seed', 'rng', 'causal', 'pe', 'lr', 'steps'];

/** Raw settings from a query string ('?s=...&C=64...'); keys that are absent keep their defaults. */
export function parseQuery(search) {
  const p = new URLSearchParams(search ?? '');
  const raw = {};
  for (const k of QUERY_KEYS) if (p.has(k)) raw[k] = p.get(k);
  return raw;
}

/** The query string for valid settings: ?s=<sentence>&C=64&h=4&seed=42&rng=default_rng&causal=0&pe=0&lr=0.1&steps=10 */
export function settingsToQuery(s) {
  const p = new URLSearchParams();
  p.set('s', s.s);
  p.set('C', String(s.C));
  p.set('h', String(s.h));
  p.set('seed', String(s.seed));
  p.set('rng', s.rng);
  p.set('causal', s.causal ? '1' : '0');
  p.set('pe', s.pe ? '1' : '0');
  p.set('lr', String(s.lr));
  p.set('steps', String(s.steps));
  return `?${p.toString()}`;
}

// ------------------------------------------------------------------------------------------------
// small reductions

export function maxAbs(a) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i] - b[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** sqrt(sum(a**2)) (plain left-to-right sum). */
export function frobenius(a) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * a[i];
  return Math.sqrt(s);
}

/** Index of the first maximum of a[off ... off+n). */
export function argmax(a, off = 0, n = a.length) {
  let best = 0;
  for (let j = 1; j < n; j++) if (a[off + j] > a[off + best]) best = j;
  return best;
}

/** Rows (0-based) of two T×T matrices whose argmax differs (first max wins on ties, like np.argmax). */
export function argmaxDiffRows(A1, A2, T) {
  const rows = [];
  for (let t = 0; t < T; t++) if (argmax(A1, t * T, T) !== argmax(A2, t * T, T)) rows.push(t);
  return rows;
}

/** One (rows, cols) slice of a flat tensor: element block `index` of size rows*cols. */
export function slice2d(data, index, rows, cols) {
  return data.slice(index * rows * cols, (index + 1) * rows * cols);
}

/** Mean over heads of att (B, h, T, T) for batch item b: (T, T). */
export function meanOverHeads(att, b, heads, T) {
  const out = new Float64Array(T * T);
  for (let hh = 0; hh < heads; hh++) {
    const off = (b * heads + hh) * T * T;
    for (let i = 0; i < T * T; i++) out[i] += att[off + i];
  }
  for (let i = 0; i < T * T; i++) out[i] /= heads;
  return out;
}

/** max |sum of each softmax row - 1| and the row sums of att (rows of length T). */
export function rowSums(att, T) {
  const sums = new Float64Array(att.length / T);
  let worst = 0;
  for (let r = 0; r < sums.length; r++) {
    let s = 0;
    for (let j = 0; j < T; j++) s += att[r * T + j];
    sums[r] = s;
    worst = Math.max(worst, Math.abs(s - 1));
  }
  return { sums, maxErr: worst };
}

// ------------------------------------------------------------------------------------------------
// lessons

/**
 * Lesson 1: two independent single heads on the sentence (C = 64, hs = 16, seed 42, default_rng):
 * one stream: E, then Wq1, Wk1, Wv1, then Wq2, Wk2, Wv2, each standard_normal((C, hs)) / sqrt(C).
 */
export function lesson1(mha, { tokens, C = 64, hs = 16, seed = 42 } = {}) {
  const rng = mha.rng(seed, 'default_rng');
  try {
    const { X, vocab, ids } = buildInput(rng, tokens, C);
    const heads = [];
    for (let k = 0; k < 2; k++) {
      const Wq = drawScaled(rng, C * hs, C);
      const Wk = drawScaled(rng, C * hs, C);
      const Wv = drawScaled(rng, C * hs, C);
      heads.push(mha.singleHead(X, { B: 1, T: tokens.length, C, headSize: hs, Wq, Wk, Wv }).att);
    }
    const T = tokens.length;
    const [A1, A2] = heads;
    const diff = new Float64Array(T * T);
    for (let i = 0; i < diff.length; i++) diff[i] = A1[i] - A2[i];
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
      argmax1: Array.from({ length: T }, (_, t) => argmax(A1, t * T, T)),
      argmax2: Array.from({ length: T }, (_, t) => argmax(A2, t * T, T)),
    };
  } finally {
    rng.free();
  }
}

/* The dot products of lessons 2 and 3, in k order from 0.0. Functions of their own: called
 * hundreds of times they are optimised at once, where the same loops inlined in a function that
 * runs once stay interpreted (lesson 2's took 11 ms of the first render). */
/** sum over k of row[off + k] * W[k, col] for a (C, C) W */
function dotColumn(row, off, W, col, C) {
  let s = 0.0;
  for (let k = 0; k < C; k++) s += row[off + k] * W[k * C + col];
  return s;
}

/** sum over k < n of a[aOff + k] * b[bOff + k] */
function dotRows(a, aOff, b, bOff, n) {
  let s = 0.0;
  for (let k = 0; k < n; k++) s += a[aOff + k] * b[bOff + k];
  return s;
}

/**
 * Lesson 2: x = standard_normal((1, 6, 64)), Wq = standard_normal((64, 64)) / sqrt(64) from
 * default_rng(42); Q from a layer (already split, (1, 4, 6, 16)); the two proofs.
 */
export function lesson2(mha, { seed = 42, T = 6, C = 64, heads = 4 } = {}) {
  const hs = C / heads;
  const rng = mha.rng(seed, 'default_rng');
  let x, Wq;
  try {
    x = rng.standardNormal(T * C);
    Wq = drawScaled(rng, C * C, C);
  } finally {
    rng.free();
  }
  // Q = x @ Wq depends on Wq only; the other weights are whatever the borrowed layer holds
  const layer = borrowLayer(mha, C, heads, { Wq, Wk: Wq, Wv: Wq, Wo: Wq });
  try {
    layer.forward(x, { B: 1, T });
    const Qheads = layer.tensor('Q').data; // (1, h, T, hs)
    const q = mha.mergeHeads(Qheads, { B: 1, T, C, heads }); // x @ Wq, (1, T, C)
    // head i against the small projection x @ Wq[:, i*hs:(i+1)*hs] (k-ordered sums from 0.0)
    let headMaxDiff = 0;
    const perHead = [];
    for (let i = 0; i < heads; i++) {
      let m = 0;
      for (let t = 0; t < T; t++) {
        for (let d = 0; d < hs; d++) {
          const s = dotColumn(x, t * C, Wq, i * hs + d, C);
          m = Math.max(m, Math.abs(Qheads[(i * T + t) * hs + d] - s));
        }
      }
      perHead.push(m);
      headMaxDiff = Math.max(headMaxDiff, m);
    }
    const split = mha.splitHeads(q, { B: 1, T, C, heads });
    const back = mha.mergeHeads(split, { B: 1, T, C, heads });
    const roundTrip = maxAbsDiff(back, q);
    const splitEqualsLayer = maxAbsDiff(split, Qheads);
    return {
      T,
      C,
      heads,
      hs,
      x,
      Wq,
      q,
      Qheads,
      perHead,
      headMaxDiff,
      roundTrip,
      splitEqualsLayer,
      shapes: { x: [1, T, C], q4: [1, T, heads, hs], heads: [1, heads, T, hs] },
    };
  } finally {
    returnLayer(mha, layer);
  }
}

/** X (2, 6, 64) and Wq, Wk, Wv, Wo (64, 64) / 8 from default_rng(42), then dY (lesson 4). */
export function courseData(
  mha,
  { seed = COURSE.seed, B = COURSE.B, T = COURSE.T, C = COURSE.C } = {},
) {
  const rng = mha.rng(seed, 'default_rng');
  try {
    const X = rng.standardNormal(B * T * C);
    const W = {};
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) W[k] = drawScaled(rng, C * C, C);
    const dY = rng.standardNormal(B * T * C);
    return { X, W, dY, B, T, C };
  } finally {
    rng.free();
  }
}

/** A layer with the given weights (the layer's own init is overwritten). */
export function layerWith(mha, C, heads, W) {
  const layer = mha.createLayer({ C, heads, seed: 0 });
  setWeights(layer, W);
  return layer;
}

function setWeights(layer, W) {
  const v = layer.weights;
  v.Wq.set(W.Wq);
  v.Wk.set(W.Wk);
  v.Wv.set(W.Wv);
  v.Wo.set(W.Wo);
}

// Short-lived layers (one computation, then gone) are borrowed from a small pool: createLayer
// draws 4*C*C initial weights (16,384 normals at C = 64) that are overwritten at once, and the
// first render alone would make seven such layers. A borrowed layer gets all four weights set;
// forward rewrites its whole cache; gradients are zeroed before a backward (lesson 4), so what
// a previous borrower left behind never shows.
const layerPools = new WeakMap(); // mha -> Map('C/heads' -> [layers])
const POOL_MAX = 3;

/** A layer of width C with `heads` heads and weights W (Wq, Wk, Wv, Wo; all four required). */
export function borrowLayer(mha, C, heads, W) {
  const free = layerPools.get(mha)?.get(`${C}/${heads}`);
  const layer = free?.length ? free.pop() : mha.createLayer({ C, heads, seed: 0 });
  setWeights(layer, W);
  return layer;
}

/** Give a borrowed layer back (it must not be used afterwards). */
export function returnLayer(mha, layer) {
  let pools = layerPools.get(mha);
  if (!pools) {
    pools = new Map();
    layerPools.set(mha, pools);
  }
  const key = `${layer.C}/${layer.heads}`;
  const free = pools.get(key) ?? [];
  pools.set(key, free);
  if (free.length < POOL_MAX && !free.includes(layer)) free.push(layer);
  else layer.free();
}

/** Wo with its off-diagonal (hs × hs) blocks zeroed. */
export function blockDiagonal(Wo, C, heads) {
  const hs = C / heads;
  const out = Float64Array.from(Wo);
  for (let r = 0; r < C; r++) {
    for (let c = 0; c < C; c++) if (Math.floor(r / hs) !== Math.floor(c / hs)) out[r * C + c] = 0;
  }
  return out;
}

/** max |d| in each hs-wide column block of a (rows, C) array. */
export function blockMaxima(d, C, heads) {
  const hs = C / heads;
  const out = new Array(heads).fill(0);
  for (let i = 0; i < d.length; i++) {
    const j = Math.floor((i % C) / hs);
    out[j] = Math.max(out[j], Math.abs(d[i]));
  }
  return out;
}

/**
 * Lesson 3: the course forward pass (seed 42, B=2, T=6, C=64, h=4), every intermediate, and the
 * block-diagonal vs full Wo experiment (+1.0 on every entry of headout[:, 0], forwardFrom('headout')).
 */
export function lesson3(mha, { causal = false, data } = {}) {
  const d = data ?? courseData(mha);
  const { X, W, B, T, C } = d;
  const heads = COURSE.heads,
    hs = C / heads;
  const layer = borrowLayer(mha, C, heads, W);
  const bdLayer = borrowLayer(mha, C, heads, { ...W, Wo: blockDiagonal(W.Wo, C, heads) });
  try {
    layer.forward(X, { B, T, causal });
    const t = {};
    for (const name of ['X', 'Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y']) {
      t[name] = layer.tensor(name);
    }
    const shapes = {};
    for (const [k, v] of Object.entries(t)) shapes[k] = v.shape;
    // Q K^T before the scaling (for the step view): (B, h, T, T)
    const QK = new Float64Array(B * heads * T * T);
    const Qd = t.Q.data,
      Kd = t.K.data;
    for (let bh = 0; bh < B * heads; bh++) {
      for (let i = 0; i < T; i++) {
        for (let j = 0; j < T; j++) {
          QK[(bh * T + i) * T + j] = dotRows(Qd, (bh * T + i) * hs, Kd, (bh * T + j) * hs, hs);
        }
      }
    }
    const att = t.att.data;
    const { sums, maxErr } = rowSums(att, T);

    // the perturbation experiment
    const perturbed = Float64Array.from(t.headout.data);
    for (let b = 0; b < B; b++) {
      const off = (b * heads + 0) * T * hs;
      for (let i = 0; i < T * hs; i++) perturbed[off + i] += 1.0;
    }
    const fullBase = t.Y.data;
    layer.setTensor('headout', perturbed);
    const fullY = layer.forwardFrom('headout').Y;
    bdLayer.forward(X, { B, T, causal });
    const bdBase = bdLayer.tensor('Y').data;
    bdLayer.setTensor('headout', perturbed);
    const bdY = bdLayer.forwardFrom('headout').Y;
    const fullDeltaY = new Float64Array(fullY.length);
    const bdDeltaY = new Float64Array(bdY.length);
    for (let i = 0; i < fullY.length; i++) {
      fullDeltaY[i] = fullY[i] - fullBase[i];
      bdDeltaY[i] = bdY[i] - bdBase[i];
    }
    return {
      B,
      T,
      C,
      heads,
      hs,
      causal,
      tensors: t,
      shapes,
      QK,
      att,
      rowSums: sums,
      rowSumMaxErr: maxErr,
      fullDeltaY,
      bdDeltaY,
      blockDiagDelta: blockMaxima(bdDeltaY, C, heads),
      fullDelta: blockMaxima(fullDeltaY, C, heads),
      stages: [
        { stage: 'X (input)', shape: [B, T, C], note: 'B sequences of T tokens, C features each' },
        {
          stage: 'X @ Wq  (also Wk, Wv)',
          shape: [B, T, C],
          note: 'one (C, C) matmul for all heads at once',
        },
        {
          stage: '.reshape(B, T, h, hs)',
          shape: [B, T, heads, hs],
          note: `C = h · hs = ${heads} · ${hs}`,
        },
        {
          stage: '.transpose(0, 2, 1, 3) → Q, K, V',
          shape: shapes.Q,
          note: 'heads become a batch axis',
        },
        {
          stage: 'Q @ K.transpose(0, 1, 3, 2) / √hs → scores',
          shape: shapes.scores,
          note: `one T×T matrix per head; √hs = ${Math.sqrt(hs)}`,
        },
        {
          stage: causal ? 'causal mask + softmax → att' : 'softmax(scores) → att',
          shape: shapes.att,
          note: 'each row sums to 1',
        },
        { stage: 'att @ V → headout', shape: shapes.headout, note: 'each head mixes its own V' },
        {
          stage: 'merge_heads → concat',
          shape: shapes.concat,
          note: 'transpose back, reshape (B, T, C)',
        },
        { stage: 'concat @ Wo → Y', shape: shapes.Y, note: 'Wo mixes the heads' },
      ],
    };
  } finally {
    returnLayer(mha, layer);
    returnLayer(mha, bdLayer);
  }
}

export const GRAD_ORDER = [
  'dWo',
  'dconcat',
  'dheadout',
  'dV',
  'datt',
  'dscores',
  'dQ',
  'dK',
  'dWq',
  'dWk',
  'dWv',
  'dX',
];

/** Lesson 4: forward, backward with dY (loss L = sum(dY * Y)); every gradient in the lesson's order. */
export function lesson4(mha, { data } = {}) {
  const d = data ?? courseData(mha);
  const { X, W, dY, B, T, C } = d;
  const heads = COURSE.heads;
  const layer = borrowLayer(mha, C, heads, W);
  try {
    const { Y } = layer.forward(X, { B, T });
    layer.zeroGrad();
    layer.backward(dY);
    const grads = {};
    for (const name of GRAD_ORDER) grads[name] = layer.tensor(name);
    let loss = 0;
    for (let i = 0; i < Y.length; i++) loss += dY[i] * Y[i];
    return { B, T, C, heads, hs: C / heads, X, W, dY, Y, grads, loss };
  } finally {
    returnLayer(mha, layer);
  }
}

/**
 * Lesson 5 and the playground: one stream: E, then Wq, Wk, Wv, Wo (C, C) / sqrt(C), then
 * target = standard_normal((1, T, C)). rng: 'default_rng' or 'legacy' (np.random.seed + randn:
 * the same calls continue one stream).
 */
const modelCache = []; // the last two sentence models: [{ mha, key, model }]

export function sentenceModel(
  mha,
  { tokens, C = 64, heads = 4, seed = 42, rng: kind = 'default_rng', pe = false, causal = false },
) {
  // lesson 5 and the playground's default view draw the very same stream: computed once. The
  // model is read-only for everyone (its arrays are only ever copied into wasm memory).
  const key = JSON.stringify([tokens, C, heads, seed, kind, pe, causal]);
  const hit = modelCache.find((m) => m.mha === mha && m.key === key);
  if (hit) return hit.model;
  const rng = mha.rng(seed, kind);
  try {
    const input = buildInput(rng, tokens, C, { pe });
    const W = {};
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) W[k] = drawScaled(rng, C * C, C);
    const target = rng.standardNormal(tokens.length * C);
    const model = Object.freeze({
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
    modelCache.unshift({ mha, key, model });
    modelCache.length = Math.min(modelCache.length, 2);
    return model;
  } finally {
    rng.free();
  }
}

/**
 * The guided project's training loop on one layer object: each step is zero_grad, forward, MSE
 * loss, backward, W -= lr * dW. `losses[k]` is the loss after k steps (losses[0]: initial weights).
 */
export class Trainer {
  constructor(mha, model) {
    this.mha = mha;
    this.model = model;
    this.layer = layerWith(mha, model.C, model.heads, model.W);
    this.reset();
  }

  #evaluate() {
    const { X, T, causal, target } = this.model;
    const { Y, attention } = this.layer.forward(X, { B: 1, T, causal });
    this.Y = Y;
    this.att = attention;
    this.loss = this.mha.mseLoss(Y, target).loss;
  }

  reset() {
    const v = this.layer.weights;
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) v[k].set(this.model.W[k]);
    this.layer.zeroGrad();
    this.lrs = [];
    this.#evaluate();
    this.losses = [this.loss];
  }

  /** One step of gradient descent with learning rate lr; returns the new loss. */
  step(lr) {
    if (!Number.isFinite(this.loss)) {
      throw new Error(
        `the loss is ${this.loss}: training diverged (the learning rate is too large). Reset and use a smaller learning rate.`,
      );
    }
    // the layer's cache already holds the forward pass of the current weights (#evaluate ran it
    // after the last change), so backward starts from there: one forward per step, not two
    this.layer.zeroGrad();
    const { dY } = this.mha.mseLoss(this.Y, this.model.target);
    this.layer.backward(dY);
    this.layer.sgdStep(lr);
    this.lrs.push(lr);
    this.#evaluate();
    this.losses.push(this.loss);
    return this.loss;
  }

  get steps() {
    return this.lrs.length;
  }

  free() {
    this.layer.free();
  }
}

// ------------------------------------------------------------------------------------------------
// chunked gradient checks

/** Yield to the event loop (MessageChannel where available: no 4 ms clamp of nested timeouts). */
export function yieldToEventLoop() {
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        ch.port1.close();
        resolve();
      };
      ch.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Runs long computations (gradient checks, training runs) in time slices of ~sliceMs, yielding to
 * the event loop between slices (rendering and input go on). A job is an iterator: `start()`
 * returns { iterator, cleanup? }; each value it yields is a progress report; the last one is
 * passed to onDone. Higher priority first, then the order of submission; job.busyMs adds up the
 * time spent in the job's own slices. cancel() stops a job at
 * once (its cleanup runs: a gradient check's own layer is freed), so a check can restart cleanly.
 *
 *   const job = scheduler.submit({ start, priority, onProgress, onDone, onError });
 *   job.cancel();
 */
export class Scheduler {
  constructor({ sliceMs = 12 } = {}) {
    this.sliceMs = sliceMs;
    this.jobs = [];
    this.running = false;
    this.serial = 0;
    this.idleWaiters = [];
  }

  submit({ start, priority = 0, onProgress, onDone, onError, name = '', sliceMs }) {
    const job = {
      id: ++this.serial,
      name,
      priority,
      cancelled: false,
      finished: false,
      sliceMs: sliceMs ?? this.sliceMs,
      busyMs: 0,
      start,
      onProgress,
      onDone,
      onError,
      iterator: null,
      cleanup: null,
      last: undefined,
    };
    job.cancel = () => this.#end(job, true);
    this.jobs.push(job);
    this.#pump();
    return job;
  }

  /** Resolves when no job is left. */
  idle() {
    if (!this.jobs.length && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  #end(job, cancelled) {
    if (job.finished) return;
    job.finished = true;
    job.cancelled = cancelled;
    this.jobs = this.jobs.filter((j) => j !== job);
    if (job.cleanup) {
      try {
        job.cleanup();
      } catch {
        /* already released */
      }
    }
    job.cleanup = null;
    job.iterator = null;
  }

  async #pump() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.jobs.length) {
        await yieldToEventLoop();
        const job = this.#next();
        if (!job) continue;
        const t0 = Date.now();
        try {
          if (!job.iterator) {
            const s = job.start();
            job.iterator = s.iterator;
            job.cleanup = s.cleanup ?? null;
          }
          let r;
          do {
            r = job.iterator.next();
            if (!r.done) job.last = r.value;
          } while (!r.done && !job.finished && Date.now() - t0 < job.sliceMs);
          job.busyMs += Date.now() - t0; // time spent in this job's own slices
          if (job.finished) continue; // cancelled from inside a callback
          if (r.done) {
            this.#end(job, false);
            job.onDone?.(job.last);
          } else {
            job.onProgress?.(job.last);
          }
        } catch (err) {
          this.#end(job, false);
          if (job.onError) job.onError(err);
          else console.error(err);
        }
      }
    } finally {
      this.running = false;
      const w = this.idleWaiters.splice(0);
      for (const f of w) f();
    }
  }

  #next() {
    let best = null;
    for (const j of this.jobs) if (!best || j.priority > best.priority) best = j;
    return best;
  }
}

/**
 * A gradient-check job for the Scheduler: its own layer from makeLayer(), checked with
 * layer.gradcheckSteps(X, {...opts, chunk}); progress values are { done, total, report }.
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
 * Entries per slice of a check: one entry costs about one forward pass (B*T*C*C), so big layers
 * get small chunks (down to 1) and each slice stays short.
 */
export function checkChunk(B, T, C) {
  const cost = B * T * C * C;
  return Math.max(1, Math.min(32, Math.floor((16 * 8 * 64 * 64) / cost)));
}

/** Entries a full check visits: weights, X and the intermediates. */
export function gradcheckSize({ B = 1, T, C, heads }) {
  // Wq, Wk, Wv, Wo; X, Q, K, V, headout, concat; scores, att
  return 4 * C * C + 6 * B * T * C + 2 * B * heads * T * T;
}

/** The rows of a gradient-check report before anything is checked (for a "pending" table). */
export function pendingReport({ B = 1, T, C, heads }) {
  const hs = C / heads;
  const shapes = {
    Wq: [C, C],
    Wk: [C, C],
    Wv: [C, C],
    Wo: [C, C],
    X: [B, T, C],
    Q: [B, heads, T, hs],
    K: [B, heads, T, hs],
    V: [B, heads, T, hs],
    scores: [B, heads, T, T],
    att: [B, heads, T, T],
    headout: [B, heads, T, hs],
    concat: [B, T, C],
  };
  return Object.entries(shapes).map(([tensor, shape]) => ({
    tensor,
    shape,
    size: shape.reduce((a, b) => a * b, 1),
    checked: 0,
    maxAbs: 0,
    maxRel: 0,
    meanRel: 0,
  }));
}

/** pass/fail summary of a report against a threshold. */
export function summarize(report, threshold) {
  let maxRel = 0,
    maxAbsErr = 0,
    checked = 0;
  for (const r of report) {
    maxRel = Math.max(maxRel, r.maxRel);
    maxAbsErr = Math.max(maxAbsErr, r.maxAbs);
    checked += r.checked;
  }
  return { maxRel, maxAbs: maxAbsErr, checked, pass: maxRel <= threshold };
}

/** A report as JSON-able rows (for figures()). */
export function reportRows(report) {
  return report.map((r) => ({
    tensor: r.tensor,
    shape: [...r.shape],
    size: r.size,
    checked: r.checked,
    maxAbs: r.maxAbs,
    maxRel: r.maxRel,
    meanRel: r.meanRel,
  }));
}
