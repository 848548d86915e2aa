// state.js - analyses of a student's array that is the course's with part of it never computed or
// computed over: a later step's values written into it in place (an in-place softmax over the
// scores), a head left as the zeros it was made with (a loop over the heads that stops early),
// whole query rows masked (an integer mask used as an index). Each proven on the student's own
// arrays: the exact values, the rest of the array the course's.

import { isAre, layoutOf, shapeOf } from './layout.js';
import { PROGRAM_NODES, evaluate, print, program, subtrees } from '../program.js';

// the nodes computed from node (its children, theirs …)
function descendants(pipe, node) {
  const out = new Set();
  const stack = [...(pipe.children.get(node) ?? [])];
  while (stack.length) {
    const n = stack.pop();
    if (out.has(n)) continue;
    out.add(n);
    stack.push(...(pipe.children.get(n) ?? []));
  }
  return out;
}

/**
 * Yours holds, bit for bit, another result you saved that the course computes from it (your
 * scores equal your att): it was overwritten in place after it was computed and saved after.
 */
export function overwrittenAnalysis(ctx) {
  const inSoftmax = softmaxStep(ctx);
  if (inSoftmax) return inSoftmax;
  const later = descendants(ctx.pipe, ctx.node);
  for (const n of later) {
    // (a later array of the same layout only: a reshape of this one holds its numbers too)
    if (layoutOf(n) !== layoutOf(ctx.node)) continue;
    const other = ctx.savedValue(n);
    if (!other || other.length !== ctx.yours.length) continue;
    if (!ctx.yours.every((x, i) => Object.is(x, other[i]))) continue;
    return {
      id: 'overwritten',
      message:
        `Your ${ctx.name} holds exactly the numbers of your ${n}, which is computed from it: ` +
        `your ${ctx.name} was overwritten in place after it was used (np.exp(${ctx.name}, ` +
        `out=${ctx.name}), ${ctx.name} /= …, or a function that changes its argument), so the ` +
        `file holds the later values. Compute ${n} into a new array (or save ` +
        `${ctx.name}.copy() before); the course computes ${ctx.courseLine}.`,
    };
  }
  return laterInPlace(ctx) ?? laterStep(ctx, later);
}

// Yours is the course's value of a later step computed from it (the array saved as scores is the
// softmax's att): saved under this name after the later line replaced it, or the wrong array
// given this name
function laterStep(ctx, later) {
  for (const n of later) {
    if (layoutOf(n) !== layoutOf(ctx.node) || ctx.savedValue(n)) continue;
    const value = valueOf(ctx, n);
    if (!value || value.length !== ctx.yours.length || !ctx.reproduces(value)) continue;
    return {
      id: 'overwritten',
      message:
        `Your ${ctx.name} ${isAre(ctx.name)} the course's ${n}, which is computed from it: the ` +
        `array saved as ${ctx.name} holds a later step's values (${n} computed into it in ` +
        `place, or the name given to ${n}). Save ${ctx.name} as it is before ${n} is computed ` +
        `from it; the course computes ${ctx.courseLine}.`,
    };
  }
  return null;
}
// node n's value in the check, or null when it has none
function valueOf(ctx, n) {
  try {
    return ctx.pipeValue(n);
  } catch {
    return null;
  }
}

// An elementwise part of a later line that reads this array directly (g = datt; g *= att inside
// dscores' line: datt * att), computed into the array itself: yours holds that part's value,
// evaluated from the course's value of this step and the other arrays as they are
const ELEMENTWISE = new Set(['mul', 'add', 'sub', 'div', 'exp', 'square']);
function laterInPlace(ctx) {
  const { node, s, pipe } = ctx;
  const shape = shapeOf(node, s);
  const at = PROGRAM_NODES.indexOf(node);
  if (at < 0 || !shape) return null;
  const reads = (t) => ['a', 'b'].some((k) => t[k]?.op === 'name' && t[k].name === node);
  for (const later of PROGRAM_NODES.slice(at + 1)) {
    const statements = program(later, s);
    if (!statements || !pipe.nodes[later]) continue;
    for (const st of statements) {
      for (const t of subtrees(st.expr)) {
        if (!ELEMENTWISE.has(t.op) || !reads(t)) continue;
        const value = evaluateWith(t, ctx, shape);
        if (!value || value.length !== ctx.yours.length || !ctx.reproduces(value)) continue;
        const part = print(t);
        return {
          id: 'overwritten',
          message:
            `Your ${ctx.name} holds ${part}, a part of the line that computes ${later} ` +
            `(${later} = ${print(st.expr)}), computed in place into ${ctx.name} (g = ` +
            `${ctx.name} then g *= …, or an operation with out=${ctx.name}) after ${ctx.name} ` +
            `was computed, so the file holds that later value. Work on a copy (${ctx.name}.copy()) ` +
            `or a new array; the course computes ${ctx.courseLine}.`,
        };
      }
    }
  }
  return null;
}

// t's value with this step's array the course's and every other array its value in the check
function evaluateWith(t, ctx, shape) {
  const env = {};
  const names = new Set();
  for (const u of subtrees(t)) if (u.op === 'name') names.add(u.name);
  try {
    for (const n of names) {
      const sh = shapeOf(n, ctx.s);
      if (!sh) return null;
      const data = n === ctx.node ? ctx.local : ctx.pipeValue(n);
      if (!data) return null;
      env[n] = { data, shape: sh };
    }
    const out = evaluate(t, env, ctx.s);
    return out.shape.length === shape.length ? out.data : null;
  } catch {
    return null;
  }
}

// The scores holding a line of the softmax's own, computed from them in place: scores minus each
// row's max (s -= s.max(axis=-1, keepdims=True)), or its exponential (np.exp(s, out=s))
function softmaxStep(ctx) {
  if (ctx.node !== 'scores') return null;
  const T = ctx.s.T;
  const shifted = new Float64Array(ctx.local.length);
  for (let r = 0; r < ctx.local.length / T; r++) {
    const row = ctx.local.subarray(r * T, r * T + T);
    // (causal: the max of the keys the query sees, its masked entries -inf)
    const seen = ctx.s.causal ? row.subarray(0, (r % T) + 1) : row;
    const max = Math.max(...seen);
    for (let j = 0; j < T; j++) shifted[r * T + j] = j < seen.length ? row[j] - max : -Infinity;
  }
  const lines = [
    [shifted, `${ctx.name} -= ${ctx.name}.max(axis=-1, keepdims=True)`],
    [
      shifted.map(Math.exp),
      `np.exp(${ctx.name} - ${ctx.name}.max(axis=-1, keepdims=True), out=${ctx.name})`,
    ],
  ];
  const hit = lines.find(([mine]) => ctx.reproduces(mine));
  if (!hit) return null;
  return {
    id: 'overwritten',
    message:
      `Your ${ctx.name} holds the softmax's own first step, ${hit[1]}: the softmax changed ` +
      `${ctx.name} in place (an array it was handed, or a cache that holds the same array), so ` +
      `the file holds that later value. Work on a copy inside the softmax (s = s - s.max(...)); ` +
      `the course computes ${ctx.courseLine}.`,
  };
}

// head h of a flat array of this node: a function of the flat index, or null (no head axis)
function headOf(node, s) {
  const layout = layoutOf(node);
  const shape = shapeOf(node, s);
  if (layout === 'split' || layout === 'square') {
    const inner = shape[2] * shape[3];
    return (i) => Math.floor(i / inner) % s.heads;
  }
  if (layout === 'merged' && !['X', 'Y', 'dY', 'dX', 'target'].includes(node)) {
    return (i) => Math.floor((i % s.C) / s.hs);
  }
  return null;
}

const list = (xs) =>
  xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}` : `${xs[0]}`;

/** Some heads of yours all zeros where the course's are not, every other head the course's. */
export function missingHeadAnalysis(ctx) {
  const { s, yours, local } = ctx;
  const head = s.heads > 1 ? headOf(ctx.node, s) : null;
  if (!head) return null;
  const zero = new Array(s.heads).fill(true);
  const course = new Array(s.heads).fill(false);
  for (let i = 0; i < yours.length; i++) {
    if (yours[i] !== 0) zero[head(i)] = false;
    if (Number.isFinite(local[i]) && local[i] !== 0) course[head(i)] = true;
  }
  const missing = zero.flatMap((z, h) => (z && course[h] ? [h] : []));
  if (!missing.length || missing.length === s.heads) return null;
  const mine = local.map((x, i) => (missing.includes(head(i)) ? 0 : x));
  if (!ctx.reproduces(mine)) return null;
  const kept = [...Array(s.heads).keys()].filter((h) => !missing.includes(h));
  const heads = (xs) => `head${xs.length > 1 ? 's' : ''} ${list(xs)}`;
  return {
    id: 'head-missing',
    message:
      `Your ${ctx.name} ${/[^s]s$/.test(ctx.name) ? 'match' : 'matches'} the course's in ` +
      `${heads(kept)}; ${heads(missing)} ${missing.length > 1 ? 'are' : 'is'} all zeros: never ` +
      `computed (a loop over the heads that stops early, for i in range(h - 1), or an array of ` +
      `zeros not filled in). The course computes every head: ${ctx.courseLine}.`,
  };
}

/**
 * scores -inf at every key of some query rows (the same rows in every head) and not masked
 * elsewhere: the mask picked whole rows (an integer mask of 0s and 1s used as an index).
 */
export function maskedRowsAnalysis(ctx) {
  const { s, yours, node } = ctx;
  if (node !== 'scores' || !s.causal || s.T < 2) return null;
  const U = ctx.pipe.step('scores'); // the course's scores before the mask, from your Q and K
  const { T } = s;
  const rows = new Set();
  for (let q = 0; q < T; q++) {
    const all = [];
    for (let i = q * T; i < yours.length; i += T * T) all.push(...yours.subarray(i, i + T));
    if (all.every((x) => x === -Infinity)) rows.add(q);
  }
  if (!rows.size || rows.size === T) return null;
  const row = (i) => Math.floor(i / T) % T;
  const tol = ctx.tolAbs;
  const rest = yours.every((x, i) => rows.has(row(i)) || Math.abs(x - U[i]) <= tol);
  if (!rest) return null;
  const picked = [...rows].sort((a, b) => a - b);
  const intMask = picked.every((q) => q <= 1);
  const why = intMask
    ? ': an integer mask of 0s and 1s used as an index (scores[..., mask] with ' +
      `mask = np.triu(np.ones((T, T)), k=1).astype(int)) selects rows 0 and 1, not entries`
    : '';
  return {
    id: 'mask-fill',
    message:
      `Your scores are -inf at every key of query row${picked.length > 1 ? 's' : ''} ` +
      `${list(picked)} (in every head) and not masked anywhere else: the mask picked whole ` +
      `rows${why}. The course hides the keys after each query with a boolean mask: ` +
      `np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores).`,
  };
}

/**
 * Yours saved as an integer array where the course's step gives fractions: computed into an
 * integer array (np.zeros_like of an integer X, or .astype(int)), each value cut toward zero; yours
 * holds whole numbers within one per term of the course's (dX sums three).
 */
export function integerAnalysis(ctx) {
  const m = /^[<>=|]?([iu])(\d+)$/.exec(ctx.opts.dtype ?? '');
  if (!m) return null;
  const { yours, local } = ctx;
  const terms = ctx.node === 'dX' ? 3 : 1;
  if (local.every((x) => Number.isInteger(x))) return null;
  const close = yours.every((y, i) => Number.isInteger(y) && Math.abs(y - local[i]) < terms);
  if (!close) return null;
  const dtype = `${m[1] === 'u' ? 'uint' : 'int'}${Number(m[2]) * 8}`;
  return {
    id: 'integer-array',
    message:
      `Your ${ctx.name} is an array of whole numbers (${dtype}) within ${terms} of the course's ` +
      `at every entry: it was computed into an integer array (np.zeros_like of an integer ` +
      `array, or .astype(int)), which cuts every value toward zero. Make it a float array ` +
      `(np.zeros_like(X, dtype=float), or X.astype(float) first); the course computes ` +
      `${ctx.courseLine}.`,
  };
}
