// arrays.js - small reductions and slices of flat float64 tensors (DOM-free).
// Shapes in comments are NumPy's; every tensor is one flat, row-major array.

/** max |a|; NaN if an entry is NaN. */
export function maxAbs(a) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** max |a - b| over two arrays of the same length. */
export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const v = Math.abs(a[i] - b[i]);
    if (v > m || Number.isNaN(v)) m = v;
  }
  return m;
}

/** a - b, elementwise. */
export function subtract(a, b) {
  const out = new Float64Array(a.length);
  for (let i = 0; i < out.length; i++) out[i] = a[i] - b[i];
  return out;
}

/** sqrt(sum(a**2)) (plain left-to-right sum). */
export function frobenius(a) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * a[i];
  return Math.sqrt(s);
}

/** sum(a * b) (plain left-to-right sum). */
export function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Index of the first maximum of a[off ... off+n). */
export function argmax(a, off = 0, n = a.length) {
  let best = 0;
  for (let j = 1; j < n; j++) if (a[off + j] > a[off + best]) best = j;
  return best;
}

/** The argmax of every row of a (T, T) matrix (first max wins on ties, like np.argmax). */
export function rowArgmax(A, T) {
  return Array.from({ length: T }, (_, t) => argmax(A, t * T, T));
}

/** Rows (0-based) of two T×T matrices whose argmax differs. */
export function argmaxDiffRows(A1, A2, T) {
  const rows = [];
  for (let t = 0; t < T; t++) if (argmax(A1, t * T, T) !== argmax(A2, t * T, T)) rows.push(t);
  return rows;
}

/** One (rows, cols) slice of a flat tensor: element block `index` of size rows*cols (a copy). */
export function slice2d(data, index, rows, cols) {
  return data.slice(index * rows * cols, (index + 1) * rows * cols);
}

/** The same block as slice2d, as a view (no copy). */
export function block2d(data, index, rows, cols) {
  return data.subarray(index * rows * cols, (index + 1) * rows * cols);
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

/** |s - 1| for each row sum s. */
export function distanceFromOne(sums) {
  return Array.from(sums, (s) => Math.abs(s - 1));
}

/** A copy of a (T, T) score matrix with −∞ above the diagonal (the causal mask). */
export function causalMasked(scores, T) {
  const s = Float64Array.from(scores);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) s[i * T + j] = -Infinity;
  return s;
}

/* The dot products of lessons 2 and 3, in k order from 0.0. Functions of their own: called
 * hundreds of times they are optimised at once, where the same loops inlined in a function that
 * runs once stay interpreted (lesson 2's took 11 ms of the first render). */

/** sum over k of row[off + k] * W[k, col] for a (C, C) W */
export function dotColumn(row, off, W, col, C) {
  let s = 0.0;
  for (let k = 0; k < C; k++) s += row[off + k] * W[k * C + col];
  return s;
}

/** sum over k < n of a[aOff + k] * b[bOff + k] */
export function dotRows(a, aOff, b, bOff, n) {
  let s = 0.0;
  for (let k = 0; k < n; k++) s += a[aOff + k] * b[bOff + k];
  return s;
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
