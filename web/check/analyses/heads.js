// heads.js - a loop over the heads that goes wrong: heads that read the wrong columns of a merged
// Q, K or V (V[:, :, i:i + hs] where the course's head i is V[:, :, i * hs:(i + 1) * hs]; at the
// scores, the same for Q and K), and a sum over the heads that keeps some heads' shares only
// (dX = … inside the loop where dX += … was meant). Each is found on the student's own arrays,
// then the whole array is recomputed from what was found and must reproduce the student's.

import { causalMask, matmul, mergeHeads, softmaxRows, splitHeads } from '../ops.js';
import { isAre, verbS } from './layout.js';

/** The column offsets tried for one head: every start at which hs columns fit. */
const starts = (s) => [...Array(s.C - s.hs + 1).keys()];

// head i of a (B, T, C) array's columns o:o + hs, as (B, T, hs)
function columns(merged, o, s) {
  const out = new Float64Array(s.B * s.T * s.hs);
  for (let r = 0; r < s.B * s.T; r++) {
    out.set(merged.subarray(r * s.C + o, r * s.C + o + s.hs), r * s.hs);
  }
  return out;
}

// head i of a (B, h, T, n) array, as (B, T, n)
function headBlock(x, i, s, n) {
  const out = new Float64Array(s.B * s.T * n);
  for (let b = 0; b < s.B; b++) {
    const src = (b * s.heads + i) * s.T * n;
    out.set(x.subarray(src, src + s.T * n), b * s.T * n);
  }
  return out;
}

// head i of the student's headout or concat, as (B, T, hs)
function outputBlock(node, yours, i, s) {
  return node === 'concat' ? columns(yours, i * s.hs, s) : headBlock(yours, i, s, s.hs);
}

// a and b equal within tol on the entries where the course's block is finite
function close(a, b, tol, course = a) {
  for (let j = 0; j < a.length; j++) {
    if (!Number.isFinite(course[j])) continue;
    if (!(Math.abs(a[j] - b[j]) <= tol * (1 + Math.abs(b[j])))) return false;
  }
  return true;
}

// the whole array from its head blocks (B, T, n) each, in this node's layout
function assemble(node, blocks, s, n) {
  const out = new Float64Array(s.B * s.heads * s.T * n);
  blocks.forEach((block, i) => {
    for (let b = 0; b < s.B; b++) {
      for (let t = 0; t < s.T; t++) {
        const row = block.subarray((b * s.T + t) * n, (b * s.T + t + 1) * n);
        if (node === 'concat') out.set(row, (b * s.T + t) * s.C + i * s.hs);
        else out.set(row, ((b * s.heads + i) * s.T + t) * n);
      }
    }
  });
  return out;
}

// headout's (or concat's) heads: for each, the start of V's columns that att's head reads
function valueStarts(ctx) {
  const { s, pipe, node } = ctx;
  const att = pipe.value('att');
  const V = mergeHeads(pipe.value('V'), s);
  const found = [];
  const blocks = [];
  for (let i = 0; i < s.heads; i++) {
    const a = headBlock(att, i, s, s.T);
    const mine = outputBlock(node, ctx.yours, i, s);
    const hit = [i * s.hs, ...starts(s)].find((o) => {
      const block = matmul(a, columns(V, o, s), { batch: s.B, m: s.T, k: s.T, n: s.hs });
      if (!close(block, mine, ctx.tolAbs + 1e-9)) return false;
      blocks.push(block);
      return true;
    });
    if (hit === undefined) return null;
    found.push({ V: hit });
  }
  return { found, yours: assemble(node, blocks, s, s.hs) };
}

// the scores' heads: for each, the starts of Q's and K's columns (one of them the course's, or
// both the same start)
function scoreStarts(ctx) {
  const { s, pipe } = ctx;
  const Q = mergeHeads(pipe.value('Q'), s);
  const K = mergeHeads(pipe.value('K'), s);
  const found = [];
  const blocks = [];
  for (let i = 0; i < s.heads; i++) {
    const mine = headBlock(ctx.yours, i, s, s.T);
    const course = headBlock(ctx.local, i, s, s.T);
    const pairs = [[i * s.hs, i * s.hs], ...starts(s)].flatMap((o) =>
      Array.isArray(o)
        ? [o]
        : [
            [o, o],
            [i * s.hs, o],
            [o, i * s.hs],
          ],
    );
    const hit = pairs.find(([q, k]) => {
      const block = matmul(columns(Q, q, s), columns(K, k, s), {
        batch: s.B,
        m: s.T,
        k: s.hs,
        n: s.T,
        transB: true,
      }).map((v, j) => (Number.isFinite(course[j]) ? v / Math.sqrt(s.hs) : course[j]));
      if (!close(block, mine, ctx.tolAbs + 1e-9, course)) return false;
      blocks.push(block);
      return true;
    });
    if (!hit) return null;
    found.push({ Q: hit[0], K: hit[1] });
  }
  return { found, yours: assemble('scores', blocks, s, s.T) };
}

const SEARCH = { scores: scoreStarts, headout: valueStarts, concat: valueStarts };

/** Multiply-adds above which the slices are not searched (a few tens of ms in JS). */
const BUDGET = 3e7;
// the search's multiply-adds at worst: three pairs of starts per start and head at the scores
const work = (node, s) =>
  (node === 'scores' ? 3 : 1) * (s.C - s.hs + 1) * s.heads * s.B * s.T * s.T * s.hs;

// 'i:i + hs' when every head's start is its index, else the starts head by head
function describe(found, array, s) {
  const at = found.map((f) => f[array]);
  const range = (o) => `${o}:${o + s.hs}`;
  if (at.every((o, i) => o === i)) {
    return `${array}[:, :, i:i + hs] (head i from column i, columns ${at.map(range).join(', ')})`;
  }
  const off = at.flatMap((o, i) => (o === i * s.hs ? [] : [`${range(o)} for head ${i}`]));
  return `columns ${off.join(', ')} of ${array}`;
}

/**
 * Every head of the student's scores, headout or concat computed from hs columns of the merged
 * Q, K or V, at least one head at columns other than the course's i * hs:(i + 1) * hs.
 */
export function headSliceAnalysis(ctx) {
  const { s, node } = ctx;
  if (!SEARCH[node] || s.heads < 2 || work(node, s) > BUDGET) return null;
  const result = SEARCH[node](ctx);
  if (!result || !ctx.reproduces(result.yours)) return null;
  const arrays = Object.keys(result.found[0]).filter((a) =>
    result.found.some((f, i) => f[a] !== i * s.hs),
  );
  if (!arrays.length) return null;
  const read = arrays.map((a) => describe(result.found, a, s)).join(', and ');
  return {
    id: 'head-slice',
    message:
      `Your ${ctx.name} read${verbS(ctx.name)} the heads from the wrong columns: ${read}. Head i is the ` +
      `columns i * hs:(i + 1) * hs, ${arrays[0]}[:, :, i * hs:(i + 1) * hs]; the course ` +
      `computes ${ctx.courseLine}.`,
  };
}

// ------------------------------------------------------------------------------------------------
// a sum over the heads with some heads' shares only

// out (B·T, C) += a[:, cols] @ W[:, cols].T for head i's columns (a merged (B, T, C), W (C, C))
function addShare(out, a, W, i, s, transposeW) {
  const { C, hs } = s;
  for (let r = 0; r < s.B * s.T; r++) {
    for (let j = i * hs; j < (i + 1) * hs; j++) {
      const x = a[r * C + j];
      if (x === 0) continue;
      for (let c = 0; c < C; c++) out[r * C + c] += x * (transposeW ? W[c * C + j] : W[j * C + c]);
    }
  }
}

// each head's share of Y (headout_i @ Wo's rows of head i) or of dX (the three paths through
// head i's columns of Wq, Wk, Wv): [Float64Array (B, T, C)] by head
function headShares(ctx) {
  const { s, pipe, node } = ctx;
  const terms =
    node === 'Y'
      ? [['headout', 'Wo', false]]
      : [
          ['dQ', 'Wq', true],
          ['dK', 'Wk', true],
          ['dV', 'Wv', true],
        ];
  const merged = terms.map(([a, W, t]) => [mergeHeads(pipe.value(a), s), pipe.value(W), t]);
  return [...Array(s.heads).keys()].map((i) => {
    const out = new Float64Array(s.B * s.T * s.C);
    for (const [a, W, t] of merged) addShare(out, a, W, i, s, t);
    return out;
  });
}

const HEAD_SUMS = { Y: 'Y = concat @ Wo', dX: 'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T' };
/** Heads above which the subsets of heads are not all tried (2^h sums). */
const MAX_HEADS = 10;

/**
 * Y or dX the sum of some heads' shares only (a loop over the heads that assigns where it should
 * add, or stops early), proven by the sum of those shares.
 */
export function headShareAnalysis(ctx) {
  const { s, node } = ctx;
  if (!HEAD_SUMS[node] || s.heads < 2 || s.heads > MAX_HEADS || ctx.large) return null;
  const shares = headShares(ctx);
  for (let set = 1; set < (1 << s.heads) - 1; set++) {
    const kept = shares.filter((_, i) => set & (1 << i));
    const mine = kept.reduce((acc, x) => acc.map((v, j) => v + x[j]));
    if (!ctx.reproduces(mine)) continue;
    const heads = [...Array(s.heads).keys()].filter((i) => set & (1 << i));
    const last = heads.length === 1 && heads[0] === s.heads - 1;
    const which =
      heads.length > 1
        ? `the shares of heads ${heads.slice(0, -1).join(', ')} and ${heads.at(-1)}`
        : `head ${heads[0]}’s share`;
    const how = last
      ? `${ctx.name} = … inside the loop over the heads where ${ctx.name} += … was meant, so ` +
        'each head overwrote the one before and only the last is left'
      : 'a sum over the heads that leaves the others out';
    return {
      id: 'head-share',
      message:
        `Your ${ctx.name} holds ${which} only, of the ${s.heads} heads: ${how}. Every head adds ` +
        `its share; the course computes ${HEAD_SUMS[node]}.`,
    };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// heads written to the wrong slots

const SLOT_NODES = new Set(['scores', 'att', 'headout', 'datt', 'dscores', 'dheadout', 'dV']);

/**
 * Each head of the student's (B, h, …) array the course's head of another index, or zeros, at
 * least one out of its place: a loop over the heads that writes to the wrong index (a loop
 * variable reused inside the loop: every head lands in one slot, the last written kept).
 */
export function headSlotAnalysis(ctx) {
  const { s, node, yours, local } = ctx;
  if (!SLOT_NODES.has(node) || s.heads < 2) return null;
  const n = node === 'headout' || node === 'dheadout' || node === 'dV' ? s.hs : s.T;
  const tol = ctx.tolAbs + 1e-9;
  const slots = [];
  for (let j = 0; j < s.heads; j++) {
    const mine = headBlock(yours, j, s, n);
    const zero = mine.every((x) => x === 0);
    const from = [j, ...Array(s.heads).keys()].find((i) => {
      const course = headBlock(local, i, s, n);
      return (
        !course.every((x) => x === 0 || !Number.isFinite(x)) && close(course, mine, tol, course)
      );
    });
    if (from === undefined && !zero) return null;
    slots.push(from === undefined ? null : from);
  }
  if (slots.every((from, j) => from === j)) return null;
  const blocks = slots.map((from) =>
    from === null ? new Float64Array(s.B * s.T * n) : headBlock(local, from, s, n),
  );
  if (!ctx.reproduces(assemble(node, blocks, s, n))) return null;
  const moved = slots.flatMap((from, j) => (from !== null && from !== j ? [[from, j]] : []));
  const zeros = slots.flatMap((from, j) => (from === null ? [j] : []));
  const parts = [
    ...moved.map(([from, j]) => `head ${from}'s numbers in head ${j}'s place`),
    ...(zeros.length ? [`zeros in head${zeros.length > 1 ? 's' : ''} ${zeros.join(', ')}`] : []),
  ];
  return {
    id: 'head-slot',
    message:
      `Your ${ctx.name} holds ${parts.join(', and ')}: the loop over the heads writes to the ` +
      'wrong index (a loop variable reused inside the loop, an inner for i in range(T) over ' +
      `the heads' i, lands every head in one place). The course computes ${ctx.courseLine}, ` +
      'each head in its own place.',
  };
}

// ------------------------------------------------------------------------------------------------
// heads split along the tokens

// the layer with its heads cut from the tokens: T / h tokens to a head, each attending within
// its block over all C columns (scaled by `scale`), the blocks joined back along T: (B, T, C)
function tokenBlocks(ctx, scale) {
  const { s, pipe } = ctx;
  const [Q, K, V] = ['Q', 'K', 'V'].map((x) => mergeHeads(pipe.value(x), s));
  const { C } = s;
  const n = s.T / s.heads;
  const out = new Float64Array(s.B * s.T * C);
  for (let r = 0; r < s.B * s.T; r += n) {
    const [q, k, v] = [Q, K, V].map((x) => x.subarray(r * C, (r + n) * C));
    const raw = matmul(q, k, { m: n, k: C, n, transB: true }).map((x) => x / scale);
    const att = softmaxRows(s.causal ? causalMask(raw, n) : raw, n);
    out.set(matmul(att, v, { m: n, k: n, n: C }), r * C);
  }
  return out;
}

/**
 * concat or Y from heads cut along the tokens (np.hsplit(x, h) on a (B, T, C) array splits axis
 * 1; np.hstack joins the heads back along it), proven by the layer recomputed so.
 */
export function tokenSplitAnalysis(ctx) {
  const { s, node } = ctx;
  if ((node !== 'concat' && node !== 'Y') || s.heads < 2 || s.T % s.heads || ctx.large) {
    return null;
  }
  for (const [scale, text] of [
    [Math.sqrt(s.hs), 'np.sqrt(hs)'],
    [Math.sqrt(s.C), 'np.sqrt(C)'],
  ]) {
    const concat = tokenBlocks(ctx, scale);
    const mine =
      node === 'Y'
        ? matmul(concat, ctx.pipe.value('Wo'), { m: s.B * s.T, k: s.C, n: s.C })
        : concat;
    if (!ctx.reproduces(mine)) continue;
    const n = s.T / s.heads;
    return {
      id: 'token-split',
      message:
        `Your ${ctx.name} ${isAre(ctx.name)} the layer's with its heads cut from the tokens, not ` +
        `the columns: each head is a block of ${n} tokens with all ${s.C} columns, attending ` +
        `within its block (scores scaled by ${text}), and the blocks joined back along the ` +
        'tokens. np.hsplit(x, h) and np.hstack on a (B, T, C) array split and join axis 1, the ' +
        'tokens; the heads are the columns: np.split(x, h, axis=-1) and np.concatenate(heads, ' +
        `axis=-1), or split_heads and merge_heads. The course computes ${ctx.courseLine}.`,
    };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// the batch flattened into one sequence

// the layer run on X.reshape(1, B·T, C): every token of the batch attends to every other (under a
// causal mask, to those before it in the flattened order): (B, T, C) by the node
function flattenedLayer(ctx, node) {
  const { s, pipe } = ctx;
  const one = { B: 1, T: s.B * s.T, C: s.C, heads: s.heads };
  const n = one.T;
  const [Q, K, V] = ['Q', 'K', 'V'].map((x) => splitHeads(mergeHeads(pipe.value(x), s), one));
  const raw = matmul(Q, K, { batch: s.heads, m: n, k: s.hs, n, transB: true });
  const scaled = raw.map((x) => x / Math.sqrt(s.hs));
  const att = softmaxRows(s.causal ? causalMask(scaled, n) : scaled, n);
  const concat = mergeHeads(matmul(att, V, { batch: s.heads, m: n, k: n, n: s.hs }), one);
  if (node === 'concat') return concat;
  return matmul(concat, pipe.value('Wo'), { m: n, k: s.C, n: s.C });
}

/**
 * concat or Y of the layer run on the batch as one sequence, X.reshape(B·T, C) (a 2-D attention
 * given the flattened batch: the items attend to each other), proven by recomputing it so.
 */
export function batchFlattenedAnalysis(ctx) {
  const { s, node } = ctx;
  if ((node !== 'concat' && node !== 'Y') || s.B < 2 || ctx.large) return null;
  if (!ctx.reproduces(flattenedLayer(ctx, node))) return null;
  return {
    id: 'batch-flattened',
    message:
      `Your ${ctx.name} ${isAre(ctx.name)} the layer's on the whole batch as one sequence of ` +
      `${s.B * s.T} tokens (X.reshape(B * T, C)): each item's tokens attend to the other ` +
      `items' too, so the ${s.B} sequences mix. Attention runs within each sequence: the ` +
      'scores are (B, h, T, T), Q @ K.transpose(0, 1, 3, 2) on (B, h, T, hs) arrays (with a ' +
      `loop over the batch, one item at a time). The course computes ${ctx.courseLine}.`,
  };
}
