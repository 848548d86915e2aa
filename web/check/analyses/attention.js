// attention.js - analyses of the scores and the attention weights: the causal mask (its fill
// value, its diagonal, which triangle), the softmax (its axis, a softmax over the whole array, a
// mask applied after it), and the invariants every att must keep (rows summing to 1, no negative
// weight, masked entries 0). Each cause is proven by recomputing the student's array from their
// own scores; what cannot be proven is reported as measured facts.

import { matmul, softmaxBackward, softmaxRows } from '../ops.js';
import { isAre, softmaxAll, softmaxAxis } from './layout.js';

const INF_TEXT = (f) => (f === -Infinity ? '-np.inf' : String(f));

/** scores with the entries at/after key i + k (np.triu(..., k)) or before the query (tril) set. */
function masked(x, T, { k = 1, fill = -Infinity, past = false }) {
  const out = Float64Array.from(x);
  for (let o = 0; o < out.length; o += T * T) {
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        const hide = past ? j < i : j >= i + k;
        if (hide) out[o + i * T + j] = fill;
      }
    }
  }
  return out;
}

// The masks a student writes instead of np.triu(np.ones((T, T), bool), k=1) filled with -inf
// (fills of -100 or lower give the future keys a weight below e^-100 of the others: the same as
// -np.inf within any tolerance, so they are not a mistake of the fill)
function maskForms() {
  const forms = [];
  for (const fill of [0, -1, -10]) {
    forms.push({
      k: 1,
      fill,
      why:
        `masked with ${fill} instead of -np.inf: exp(${fill}) > 0, so the future keys keep ` +
        'a weight; a causal mask fills with -np.inf (np.where(mask, -np.inf, scores))',
    });
  }
  for (const fill of [-Infinity, -1e9, 0]) {
    const f = INF_TEXT(fill);
    forms.push({
      k: 0,
      fill,
      why:
        `the mask hides the diagonal too (np.triu(..., k=0), filled with ${f}): each token ` +
        'must see itself; the course masks with np.triu(np.ones((T, T), bool), k=1)',
    });
    forms.push({
      k: 2,
      fill,
      why:
        `the mask is one off (np.triu(..., k=2), filled with ${f}): each token also sees the ` +
        'next one; the course masks with k=1',
    });
    forms.push({
      past: true,
      fill,
      why:
        `the mask hides the past instead of the future (np.tril, filled with ${f}); the ` +
        'course hides the keys after each query: np.triu(np.ones((T, T), bool), k=1)',
    });
  }
  return forms;
}

/** The causal switch's side of a mask diagnosis: never the cause, said beside it. */
const switchNote = (s) =>
  s.causal ? '' : ' (The check is not causal: tick causal if your notebook means a causal layer.)';

/** att and scores: a mask of another form reproduces yours. */
export function maskAnalysis(ctx, U = ctx.unmaskedScores()) {
  const { s, node } = ctx;
  for (const form of maskForms()) {
    const scores = masked(U, s.T, form);
    const mine = node === 'scores' ? scores : softmaxRows(scores, s.T);
    if (ctx.reproduces(mine)) {
      return {
        id: 'mask-fill',
        same: { key: `mask:${form.k}:${form.fill}:${form.past}`, label: 'mask' },
        message: `Your ${ctx.name}: ${form.why}.${switchNote(s)}`,
        why: form.why,
        site: node === 'scores' ? null : 'scores',
      };
    }
  }
  return null;
}

// The (query, key) pairs a causal mask of its own hides in every (T, T) block of att: the
// entries that are exactly 0 in each one (exp(-inf) and exp(-1e9) are 0), or null when the
// blocks disagree or nothing is 0
function ownMask(yours, T) {
  const hidden = new Uint8Array(T * T);
  for (let i = 0; i < T * T; i++) hidden[i] = yours[i] === 0 ? 1 : 0;
  if (!hidden.some(Boolean)) return null;
  for (let o = T * T; o < yours.length; o += T * T) {
    for (let i = 0; i < T * T; i++) if ((yours[o + i] === 0) !== (hidden[i] === 1)) return null;
  }
  return hidden;
}

// "key 4 is never hidden (from queries 0–3)" or the pairs, of the (query, key) pairs listed
function pairsText(pairs, T) {
  const keys = new Set(pairs.map(([, k]) => k));
  const queries = (ps) => ps.map(([q]) => q).join(', ');
  if (keys.size === 1) {
    const [k] = keys;
    return `key ${k} from ${pairs.length > 1 ? 'queries' : 'query'} ${queries(pairs)}`;
  }
  const shown = pairs.slice(0, 4).map(([q, k]) => `(query ${q}, key ${k})`);
  return `${shown.join(', ')}${pairs.length > 4 ? `, … (${pairs.length} pairs of ${T * T})` : ''}`;
}

// How a mask of the student's own (hidden (query, key) pairs) departs from the course's
function maskDeparture(hidden, { T, causal }) {
  const open = [];
  const extra = [];
  for (let q = 0; q < T; q++) {
    for (let k = 0; k < T; k++) {
      const course = causal && k > q;
      if (course && !hidden[q * T + k]) open.push([q, k]);
      if (!course && hidden[q * T + k]) extra.push([q, k]);
    }
  }
  const parts = [];
  if (open.length) parts.push(`leaves visible ${pairsText(open, T)}, which the course hides`);
  if (extra.length) parts.push(`hides ${pairsText(extra, T)}, which the course keeps`);
  const last = open.length === T - 1 && open.every(([, k]) => k === T - 1);
  const hint = last
    ? ' (a loop over the keys that stops one short, range(T - 1), never masks the last key)'
    : '';
  return (
    `the mask is one of your own: it ${parts.join(' and ')}${hint}; the course hides exactly ` +
    'the keys after each query: np.triu(np.ones((T, T), bool), k=1)'
  );
}

/**
 * att the softmax of the scores under a mask of the student's own, read from the weights that are
 * exactly 0 (the same pairs in every batch item and head) and proven by recomputing att from
 * the unmasked scores with those pairs set to -inf; said as how it departs from the course's.
 */
export function ownMaskAnalysis(ctx, U = ctx.unmaskedScores()) {
  const { s, node, yours } = ctx;
  if (node !== 'att' || s.T < 2) return null;
  const hidden = ownMask(yours, s.T);
  // (the course's causal mask in a check that is not causal is the causal switch's analysis)
  if (
    !hidden ||
    (!s.causal && hidden.every((h, i) => h === (i % s.T > Math.floor(i / s.T) ? 1 : 0)))
  ) {
    return null;
  }
  const scores = Float64Array.from(U);
  for (let o = 0; o < scores.length; o += s.T * s.T) {
    for (let i = 0; i < s.T * s.T; i++) if (hidden[i]) scores[o + i] = -Infinity;
  }
  if (!ctx.reproduces(softmaxRows(scores, s.T))) return null;
  const why = maskDeparture(hidden, s);
  return {
    id: 'mask-fill',
    same: { key: `mask:own:${Array.from(hidden).join('')}`, label: 'mask' },
    message: `Your ${ctx.name}: ${why}.${switchNote(s)}`,
    why,
    site: 'scores',
  };
}

/**
 * att the softmax of the scores before the mask, while the student's saved scores hold it (-inf
 * above the diagonal): the masked array made and the softmax handed the other one.
 */
export function unusedMaskAnalysis(ctx) {
  const { s, node } = ctx;
  const given = ctx.givenValue('scores');
  if (node !== 'att' || !s.causal || !given?.some((x) => x === -Infinity)) return null;
  if (!ctx.reproduces(softmaxRows(ctx.unmaskedScores(), s.T))) return null;
  return {
    id: 'mask-not-used',
    message:
      'Your att is the softmax of the scores before the mask: your scores hold the mask (-inf ' +
      'above the diagonal), but the softmax reads the unmasked array (softmax(scores) where the ' +
      'masked one was meant), so every query sees the future keys. The course computes ' +
      `${ctx.courseLine}, the softmax of the masked scores.`,
  };
}

/**
 * att a softmax whose denominator has a small constant added (e / (e.sum(...) + eps), a guard
 * against dividing by zero): eps fitted from one row's sum, every row recomputed with it.
 */
export function epsilonAnalysis(ctx) {
  const { s, node, yours } = ctx;
  if (node !== 'att') return null;
  const T = s.T;
  const scores = s.causal ? masked(ctx.pipe.value('scores'), T, { k: 1, fill: -Infinity }) : null;
  const U = scores ?? ctx.pipe.value('scores');
  const e = new Float64Array(U.length);
  const sums = [];
  for (let r = 0; r < U.length / T; r++) {
    const row = U.subarray(r * T, (r + 1) * T);
    const max = Math.max(...row);
    let sum = 0;
    for (let j = 0; j < T; j++) sum += e[r * T + j] = Math.exp(row[j] - max);
    sums.push(sum);
  }
  const mine = yours.subarray(0, T).reduce((a, x) => a + x, 0);
  const eps = Number((sums[0] / mine - sums[0]).toPrecision(2));
  const after =
    'After the max is subtracted every row has an entry exp(0) = 1 and the sum is never below 1';
  if (eps > 0 && eps <= 1e-3) {
    const att = e.map((x, i) => x / (sums[Math.floor(i / T)] + eps));
    if (ctx.reproduces(att)) {
      return {
        id: 'softmax-epsilon',
        message:
          `Your att adds ${eps} to the softmax's denominator, e / (e.sum(axis=-1, keepdims=True) ` +
          `+ ${eps}): a guard against dividing by zero, so each row sums to just under 1. ${after}: ` +
          `the course computes ${ctx.courseLine} with no guard.`,
      };
    }
  }
  return everyExpEpsilon(ctx, e, sums, after);
}

// Whether att's zeros (where the course's weight is not 0) are a mask's, not dropout's: the same
// pattern in every (batch, head) block, or in a single block a triangle (dropout is random)
function maskLike(yours, local, T) {
  const zero = (i) => yours[i] === 0 && local[i] > 0;
  const blocks = yours.length / (T * T);
  const same = (i) => Array.from({ length: blocks }, (_, b) => zero(b * T * T + i));
  let alike = true;
  let upper = true;
  let lower = true;
  for (let i = 0; i < T * T; i++) {
    const z = same(i);
    if (z.some((x) => x !== z[0])) alike = false;
    const [q, k] = [Math.floor(i / T), i % T];
    if (z[0] && k <= q) upper = false;
    if (z[0] && k >= q) lower = false;
  }
  return blocks > 1 ? alike : upper || lower;
}

/**
 * att with dropout: the course's weights (from the student's scores) with some set to 0 and the
 * rest kept, as they are or scaled by 1/(1 - p): the kept ones prove it (every one the course's
 * times one factor), the zeros are read from the array.
 */
export function dropoutAnalysis(ctx) {
  const { node, yours, local } = ctx;
  if (node !== 'att') return null;
  let [live, dropped, ratio] = [0, 0, NaN];
  for (let i = 0; i < local.length; i++) {
    if (!(local[i] > 0)) continue;
    live++;
    if (yours[i] === 0) dropped++;
    else if (Number.isNaN(ratio)) ratio = yours[i] / local[i];
  }
  if (!dropped || dropped > live / 2 || !(ratio > 0) || maskLike(yours, local, ctx.s.T)) {
    return null;
  }
  const r = Math.abs(ratio - 1) < 1e-3 ? 1 : ratio;
  if (!ctx.reproduces(local.map((x, i) => (yours[i] === 0 ? 0 : x * r)))) return null;
  const p = dropped / live;
  const scale =
    r === 1
      ? 'the kept ones as they are (no 1/(1 - p) rescale)'
      : `the kept ones scaled by ${Number(r.toPrecision(6))} = 1/(1 - p) for p = ${Number((1 - 1 / r).toPrecision(3))}`;
  return {
    id: 'attention-dropout',
    message:
      `Your att is dropout applied to the course's weights: ${dropped} of its ${live} nonzero ` +
      `weights are set to 0 (${(100 * p).toFixed(1)} %), ${scale}. Dropout is random at every ` +
      "call and only for training; the course's layer has none: save the arrays with dropout " +
      `off (training=False, model.eval()). The course computes ${ctx.courseLine}.`,
  };
}

// (e + eps) / (e + eps).sum(…): eps added to every exponential, fitted from the student's first
// row at its largest entry (e = 1 there): att (S + T·eps) = 1 + eps
function everyExpEpsilon(ctx, e, sums, after) {
  const { T } = ctx.s;
  const row = e.subarray(0, T);
  const j = row.indexOf(Math.max(...row));
  const a = ctx.yours[j];
  const eps = Number(((row[j] - a * sums[0]) / (a * T - 1)).toPrecision(2));
  if (!(eps > 0) || eps > 1e-3) return null;
  const att = e.map((x, i) => (x + eps) / (sums[Math.floor(i / T)] + T * eps));
  if (!ctx.reproduces(att)) return null;
  const hidden = ctx.s.causal ? ' (the masked keys too: a weight near eps, not 0)' : '';
  return {
    id: 'softmax-epsilon',
    message:
      `Your att adds ${eps} to every exponential before normalising, (e + ${eps}) / (e + ` +
      `${eps}).sum(axis=-1, keepdims=True): a guard against dividing by zero that gives every ` +
      `key a little weight${hidden}. ${after}: the course computes ${ctx.courseLine} with no ` +
      'guard.',
  };
}

/**
 * dV or dscores computed from an att without the causal mask: the backward recomputes the
 * softmax from the scores it cached before the mask (A = softmax(S)) instead of the forward's att.
 */
export function backwardUnmaskedAnalysis(ctx) {
  const { s, node, pipe } = ctx;
  if (!s.causal || (node !== 'dV' && node !== 'dscores')) return null;
  const A = softmaxRows(pipe.step('scores'), s.T);
  const mine =
    node === 'dV'
      ? matmul(A, pipe.value('dheadout'), {
          ...{ batch: s.B * s.heads, m: s.T, k: s.T, n: s.hs, transA: true },
        })
      : softmaxBackward(A, pipe.value('datt'), s.T);
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'backward-unmasked',
    message:
      `Your ${ctx.name} ${isAre(ctx.name)} computed from an att without the causal mask: the ` +
      'backward ' +
      'recomputes the softmax from the scores before the mask (A = softmax(scores)) instead of ' +
      "using the forward's att, whose future weights are 0. Use the att of the forward (cache " +
      `it); the course computes ${ctx.courseLine}.`,
  };
}

// The student's own scores hold a constant finite value above the diagonal: a mask with that fill
// ({ fill, scores, large: a fill whose exponential underflows to 0, as -np.inf's does, and the
// queries whose every key it hides })
function givenFill(ctx) {
  const sc = ctx.givenValue('scores');
  if (!sc || ctx.s.T < 2) return null;
  const fill = sc[1];
  const { T } = ctx.s;
  let scale = 0;
  for (let i = 0; i < sc.length; i++) {
    const j = i % T;
    const q = Math.floor(i / T) % T;
    if (j > q && sc[i] !== fill) return null;
    if (j <= q && sc[i] !== fill) scale = Math.max(scale, Math.abs(sc[i]));
  }
  if (fill === -Infinity) return null;
  if (fill > -1e3 * Math.max(scale, 1)) return { fill, scores: sc, large: null };
  const hidden = [];
  for (let q = 0; q < T; q++) {
    if (sc.every((x, i) => Math.floor(i / T) % T !== q || x === fill)) hidden.push(q);
  }
  return hidden.length ? { fill, scores: sc, large: hidden } : null;
}

// att from scores masked with a large finite fill, some queries' every key hidden
const largeFillMessage = ({ fill, large }, s) =>
  `Your att is the softmax of your own scores, masked with ${fill} in place of -np.inf: where ` +
  'a query keeps a key it can see, that fill gives the same weights as -np.inf (its ' +
  `exponential is 0); but your mask hides every key of ${large.length > 1 ? 'queries' : 'query'} ` +
  `${large.join(', ')}, whose row${large.length > 1 ? 's' : ''} then spread${large.length > 1 ? '' : 's'} ` +
  `equal weights 1/${s.T} over all the keys, the future ones too (with -np.inf: NaN). A causal ` +
  'mask leaves each query its own key: np.triu(np.ones((T, T), bool), k=1), filled with ' +
  `-np.inf.${switchNote(s)}`;

/** att from scores the student masked with a finite fill (0, -1 …): named as such. */
function givenFillAnalysis(ctx) {
  const found = givenFill(ctx);
  if (!found || ctx.node !== 'att') return null;
  if (!ctx.reproduces(softmaxRows(found.scores, ctx.s.T))) return null;
  if (found.large) return { id: 'mask-fill', message: largeFillMessage(found, ctx.s) };
  return {
    id: 'mask-fill',
    message:
      `Your scores are masked with ${found.fill} above the diagonal instead of -np.inf: ` +
      `exp(${found.fill}) > 0, so your att gives the future keys a weight; a causal mask ` +
      `fills with -np.inf (np.where(mask, -np.inf, scores)).${switchNote(ctx.s)}`,
  };
}

// The softmaxes a student writes instead of softmax(scores, axis=-1)
function softmaxForms(s, scores) {
  const shape = [s.B, s.heads, s.T, s.T];
  return [
    {
      make: () => softmaxNoKeepdims(scores, s.T, false),
      why:
        'divided by np.sum(e, axis=-1) without keepdims=True: the row sums broadcast along the ' +
        'last axis, so entry (i, j) is divided by the sum of row j, not of row i',
    },
    {
      make: () => softmaxNoKeepdims(scores, s.T, true),
      why:
        'written with np.max and np.sum without keepdims=True: both broadcast along the last ' +
        'axis, so entry (i, j) takes the max and the sum of row j, not of row i',
    },
    {
      make: () => softmaxAll(scores),
      why:
        'a softmax over the whole array (np.exp(s) / np.sum(np.exp(s))): the weights of ' +
        'every row, head and batch item sum to 1 together',
    },
    {
      make: () => softmaxAxis(scores, shape, 1),
      why: 'a softmax over the heads (axis=1)',
    },
    {
      make: () => softmaxAxis(scores, shape, 0),
      why: 'a softmax over the batch (axis=0)',
    },
    {
      make: () => softmaxAll4(scores, s),
      why: 'a softmax over each head’s whole (T, T) block instead of each row',
    },
    {
      make: () => maskAfter(scores, s),
      why:
        'the mask applied after the softmax (att * ~mask): the rows no longer sum to 1; mask ' +
        'the scores with -np.inf before the softmax',
      causalOnly: true,
    },
  ];
}

// e = exp(x − max) and e / sum with the row's max and sum indexed by the column (a (T,) vector
// broadcast along the last axis, as np.sum(e, axis=-1) without keepdims does); `maxToo`: the
// max taken the same way
function softmaxNoKeepdims(x, T, maxToo) {
  const out = new Float64Array(x.length);
  for (let o = 0; o < x.length; o += T * T) {
    const max = new Float64Array(T).fill(-Infinity);
    for (let i = 0; i < T * T; i++) {
      max[Math.floor(i / T)] = Math.max(max[Math.floor(i / T)], x[o + i]);
    }
    const e = new Float64Array(T * T);
    for (let i = 0; i < T * T; i++) {
      e[i] = Math.exp(x[o + i] - max[maxToo ? i % T : Math.floor(i / T)]);
    }
    const sum = new Float64Array(T);
    for (let i = 0; i < T * T; i++) sum[Math.floor(i / T)] += e[i];
    for (let i = 0; i < T * T; i++) out[o + i] = e[i] / sum[i % T];
  }
  return out;
}

// softmax over each (T, T) block
function softmaxAll4(x, s) {
  const out = new Float64Array(x.length);
  const size = s.T * s.T;
  for (let o = 0; o < x.length; o += size) out.set(softmaxAll(x.subarray(o, o + size)), o);
  return out;
}

// softmax(unmasked scores) with the future weights set to 0 afterwards
function maskAfter(x, s) {
  return masked(softmaxRows(x, s.T), s.T, { fill: 0 });
}

/** att: another softmax reproduces yours. */
function softmaxAnalysis(ctx, U, scores) {
  const { s } = ctx;
  for (const form of softmaxForms(s, s.causal ? masked(scores, s.T, {}) : scores)) {
    if (form.causalOnly && !s.causal) continue;
    const mine = form.causalOnly ? maskAfter(U, s) : form.make();
    if (ctx.reproduces(mine)) {
      return {
        id: 'softmax-not-normalised',
        message: `Your att is ${form.why}; the course normalises each query's row over the keys: att = softmax(scores, axis=-1).`,
      };
    }
  }
  return null;
}

const fmt = (x) => String(Number(x.toPrecision(4)));

// "[0, 1, 2]" of row r of a (B, h, T, T) array
const rowIndex = (r, s) => {
  const b = Math.floor(r / (s.heads * s.T));
  return `[${b}, ${Math.floor(r / s.T) % s.heads}, ${r % s.T}]`;
};

/** The invariants att breaks, measured: rows not summing to 1, negative or masked weights. */
function invariants(ctx) {
  const { s, yours } = ctx;
  const tol = ctx.dtypeTol;
  const facts = [];
  const bad = [];
  const rows = yours.length / s.T;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let j = 0; j < s.T; j++) sum += yours[r * s.T + j];
    if (!(Math.abs(sum - 1) <= tol * s.T)) bad.push([r, sum]);
  }
  if (bad.length) {
    const shown = bad.slice(0, 3).map(([r, sum]) => `row ${rowIndex(r, s)} sums to ${fmt(sum)}`);
    facts.push(
      `${bad.length} of ${rows} rows do not sum to 1 (${shown.join(', ')}${bad.length > 3 ? ', …' : ''})`,
    );
  }
  const negative = yours.filter((x) => x < -tol).length;
  if (negative) facts.push(`${negative} weights are negative`);
  if (s.causal) {
    let open = 0;
    for (let i = 0; i < yours.length; i++) {
      if (i % s.T > Math.floor(i / s.T) % s.T && Math.abs(yours[i]) > tol) open++;
    }
    if (open) {
      facts.push(`${open} weights above the diagonal, which the causal mask sets to 0, are not 0`);
    }
  }
  if (!facts.length) return null;
  return {
    id: bad.length ? 'softmax-not-normalised' : 'attention-invariant',
    message:
      `Your att breaks what every attention matrix keeps: ${facts.join('; ')}. Each query's ` +
      'weights over the keys are ≥ 0 and sum to 1: att = softmax(scores, axis=-1)' +
      `${s.causal ? ', with the masked (future) weights 0' : ''}.`,
    measured: true,
  };
}

/** The analyses of scores and att, first proven causes, then (att) the broken invariants. */
export function attentionAnalyses(ctx) {
  if (ctx.node !== 'scores' && ctx.node !== 'att') return null;
  const U = ctx.unmaskedScores();
  if (ctx.node === 'att') {
    const scores = ctx.pipeValue('scores');
    const hit =
      givenFillAnalysis(ctx) ??
      maskAnalysis(ctx, U) ??
      ownMaskAnalysis(ctx, U) ??
      softmaxAnalysis(ctx, U, scores);
    return hit;
  }
  // (at scores itself, the course's step from the student's Q and K: their own scores on the
  // visible entries would make every fill reproduce them)
  return maskAnalysis(ctx, ctx.pipe.step('scores'));
}

// The forms of att a student writes instead of the course's, as steps from their scores:
// [{ id, why, fn(p) }] (the masks, then the softmaxes)
function attForms(s) {
  const list = maskForms().map((form, i) => ({
    id: 'mask-fill',
    key: `mask:${i}`,
    why: form.why,
    fn: (p) => softmaxRows(masked(p.scores, s.T, form), s.T),
  }));
  const scoresOf = (p) => (s.causal ? masked(p.scores, s.T, {}) : p.scores);
  softmaxForms(s, null).forEach((form, i) => {
    if (form.causalOnly && !s.causal) return;
    list.push({
      id: 'softmax-not-normalised',
      key: `softmax:${i}`,
      why: form.why,
      fn: (p) =>
        form.causalOnly ? maskAfter(p.scores, s) : softmaxForms(s, scoresOf(p))[i].make(),
    });
  });
  return list;
}

/** A later result (headout, Y …) from an att of another form the student did not save. */
export function hiddenAttentionAnalysis(ctx) {
  if (ctx.large || !ctx.hidden.includes('att')) return null;
  for (const form of attForms(ctx.s)) {
    const mine = ctx.tryAt('att', `att:${form.key}`, form.fn);
    if (!ctx.reproduces(mine)) continue;
    return {
      id: form.id,
      same: { key: `att:${form.key}`, label: 'att' },
      message:
        `Your ${ctx.name} is the course's step from an att that is ${form.why} (att is not in ` +
        `your file: recomputed that way from your own arrays, it matches); the course computes ` +
        `att = softmax(scores, axis=-1)${ctx.s.causal ? ' on the masked scores' : ''}.`,
      site: 'att',
      variant: { id: `att:${form.key}`, fn: form.fn },
    };
  }
  return null;
}

/** The invariants of att as a last, measured word (after every other analysis). */
export const attentionFacts = (ctx) => (ctx.node === 'att' ? invariants(ctx) : null);

/**
 * att with the max subtracted in the numerator only: e = np.exp(scores - max) divided by
 * np.exp(scores).sum(…): each row is the softmax times exp(-max of its row), exactly.
 */
export function unshiftedSumAnalysis(ctx) {
  if (ctx.node !== 'att') return null;
  const { T } = ctx.s;
  const scores = ctx.pipeValue('scores');
  const sm = ctx.local;
  const mine = new Float64Array(sm.length);
  for (let r = 0; r < sm.length / T; r++) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) max = Math.max(max, scores[r * T + j]);
    const c = Math.exp(-max);
    for (let j = 0; j < T; j++) mine[r * T + j] = sm[r * T + j] * c;
  }
  if (mine.every((x, i) => Math.abs(x - sm[i]) <= ctx.tolAbs)) return null; // max 0 everywhere
  if (!ctx.reproduces(mine)) return null;
  return {
    id: 'softmax-not-normalised',
    message:
      `Each row of your att is the softmax times exp(-m), m the row's largest score: you ` +
      `subtracted the max in the numerator, e = np.exp(scores - scores.max(axis=-1, ` +
      `keepdims=True)), but divided by the sum of np.exp(scores), without it. Divide e by its ` +
      `own sum: att = e / e.sum(axis=-1, keepdims=True).`,
  };
}
