// layout.js - the shapes of the check's nodes, and the array operations the analyses need on them
// (softmax over any axis, axis swaps, block and token orders). DOM-free; flat C-order arrays.

/** Nodes stored split, (B, h, T, hs). */
const SPLIT = new Set(['Q', 'K', 'V', 'headout', 'dheadout', 'dV', 'dQ', 'dK']);
/** Nodes stored (B, h, T, T). */
const SQUARE = new Set(['scores', 'att', 'datt', 'dscores']);
/** Nodes stored (C, C). */
const WEIGHT = /^d?W[qkvo]$/;

/** 'split', 'square', 'weight', 'scalar' or 'merged' ((B, T, C)) for a node of the check. */
export function layoutOf(node) {
  if (SPLIT.has(node)) return 'split';
  if (SQUARE.has(node)) return 'square';
  if (WEIGHT.test(node)) return 'weight';
  if (node === 'loss') return 'scalar';
  return 'merged';
}

/** The shape of a node for sizes s. */
export function shapeOf(node, s) {
  const layout = layoutOf(node);
  if (layout === 'split') return [s.B, s.heads, s.T, s.hs];
  if (layout === 'square') return [s.B, s.heads, s.T, s.T];
  if (layout === 'weight') return [s.C, s.C];
  if (layout === 'scalar') return [];
  return [s.B, s.T, s.C];
}

// outer, size and inner stride of one axis of a C-order shape
function axisSpan(shape, axis) {
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  return { outer, n: shape[axis], inner };
}

/** softmax of x (C order, this shape) over one axis, the max subtracted first. */
export function softmaxAxis(x, shape, axis) {
  const out = new Float64Array(x.length);
  const { outer, n, inner } = axisSpan(shape, axis);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const at = (j) => (o * n + j) * inner + i;
      let max = -Infinity;
      for (let j = 0; j < n; j++) max = Math.max(max, x[at(j)]);
      let sum = 0;
      for (let j = 0; j < n; j++) sum += out[at(j)] = Math.exp(x[at(j)] - max);
      for (let j = 0; j < n; j++) out[at(j)] /= sum;
    }
  }
  return out;
}

/** np.exp(x) / np.sum(np.exp(x)): one softmax over every entry (no max subtracted). */
export function softmaxAll(x) {
  const e = x.map(Math.exp);
  let sum = 0;
  for (const v of e) sum += v;
  return e.map((v) => v / sum);
}

/** x with axes a and b swapped (they have the same size, so the shape stays). */
export function swapAxes(x, shape, a, b) {
  const out = new Float64Array(x.length);
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((p, q) => p * q, 1));
  const index = new Array(shape.length).fill(0);
  for (let flat = 0; flat < x.length; flat++) {
    let rest = flat;
    for (let i = 0; i < shape.length; i++) {
      index[i] = Math.floor(rest / strides[i]);
      rest -= index[i] * strides[i];
    }
    let to = 0;
    for (let i = 0; i < shape.length; i++) {
      let j = i;
      if (i === a) j = b;
      else if (i === b) j = a;
      to += index[j] * strides[i];
    }
    out[to] = x[flat];
  }
  return out;
}

/**
 * The blocks of x along one axis: x viewed as (outer, n, inner) → block j is every (o, j, ·).
 * reorder(x, shape, axis, perm): block j of the result is block perm[j] of x.
 */
export function reorder(x, shape, axis, perm) {
  const out = new Float64Array(x.length);
  const { outer, n, inner } = axisSpan(shape, axis);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < n; j++) {
      const from = (o * n + perm[j]) * inner;
      out.set(x.subarray(from, from + inner), (o * n + j) * inner);
    }
  }
  return out;
}

/** Whether block j of a and block i of b (along axis) are within tol entry by entry. */
export function sameBlock(a, b, { shape, axis, tol }, j, i) {
  const { outer, n, inner } = axisSpan(shape, axis);
  for (let o = 0; o < outer; o++) {
    const pa = (o * n + j) * inner;
    const pb = (o * n + i) * inner;
    for (let k = 0; k < inner; k++) {
      const x = a[pa + k];
      const y = b[pb + k];
      if (!(Math.abs(x - y) <= tol) && x !== y) return false;
    }
  }
  return true;
}

/** The mean of x over one axis, repeated along it (the shape stays). */
export function meanAlong(x, shape, axis) {
  const out = new Float64Array(x.length);
  const { outer, n, inner } = axisSpan(shape, axis);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) sum += x[(o * n + j) * inner + i];
      for (let j = 0; j < n; j++) out[(o * n + j) * inner + i] = sum / n;
    }
  }
  return out;
}

/** The shape (B, T, h, hs) a merged (B, T, C) array's head blocks form. */
export const headBlocks = (s) => [s.B, s.T, s.heads, s.hs];

/** "is", or "are" for a plural name (scores, losses); `s` for "holds"/"hold". */
/** The merged nodes of the pipeline (Qm: Q as (B, T, C)) under the name the student saves. */
const SHOWN = { Qm: 'Q', Km: 'K', Vm: 'V', dQm: 'dQ', dKm: 'dK', dVm: 'dV' };
export const shownName = (node) => SHOWN[node] ?? node;

export const isAre = (name) => (/[^s]s$/.test(name) ? 'are' : 'is');
export const verbS = (name) => (/[^s]s$/.test(name) ? '' : 's');
