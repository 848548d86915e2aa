// ops.js - small float64 array operations for the notebook check, on flat C-order arrays: what the
// course's NumPy lines do, written out so a student's pipeline (with or without a mistake) can be
// recomputed from their own arrays. Every function returns a fresh Float64Array.
//
//   matmul(a, b, { batch, m, k, n, transA, transB })   a @ b over a batch of matrices
//   splitHeads / mergeHeads (and the no-transpose reshapes a student may write instead)
//   softmax over the last axis (the keys) or the one before (the queries), causal mask, rowsum

/**
 * Batched matrix product out[i] = op(a[i]) @ op(b[i]) for i < batch, op = transpose or not.
 * Shapes: op(a) (m, k), op(b) (k, n), out (batch, m, n); a is stored (batch, m, k), or
 * (batch, k, m) with transA, b (batch, k, n), or (batch, n, k) with transB. Every entry is one
 * dot product of a row of op(a) with a column of op(b), summed in order of k.
 */
export function matmul(a, b, { batch = 1, m, k, n, transA = false, transB = false }) {
  if (transA && transB) throw new Error('matmul: transA and transB together are not supported');
  const out = new Float64Array(batch * m * n);
  // rows of op(a) and columns of op(b) made contiguous: one (m, k) and one (n, k) per matrix
  const rows = transA ? transposeEach(a, batch, k, m) : a;
  const cols = transB ? b : transposeEach(b, batch, k, n);
  for (let i = 0; i < batch; i++) {
    dotProducts(out, rows, cols, { ao: i * m * k, bo: i * k * n, oo: i * m * n, m, k, n });
  }
  return out;
}

// x (batch, r, c) -> (batch, c, r)
function transposeEach(x, batch, r, c) {
  const out = new Float64Array(batch * r * c);
  for (let o = 0; o < out.length; o += r * c) {
    for (let i = 0; i < r; i++) {
      for (let j = 0; j < c; j++) out[o + j * r + i] = x[o + i * c + j];
    }
  }
  return out;
}

// out[i, j] = dot(row i of a, row j of b) for a (m, k) and b (n, k): four rows of a and two of
// b at a time, eight sums kept in registers
function dotProducts(out, a, b, { ao, bo, oo, m, k, n }) {
  const m4 = m - (m % 4);
  const n2 = n - (n % 2);
  for (let i = 0; i < m4; i += 4) {
    const a0 = ao + i * k;
    const a1 = a0 + k;
    const a2 = a1 + k;
    const a3 = a2 + k;
    for (let j = 0; j < n2; j += 2) {
      const b0 = bo + j * k;
      const b1 = b0 + k;
      let s00 = 0;
      let s01 = 0;
      let s10 = 0;
      let s11 = 0;
      let s20 = 0;
      let s21 = 0;
      let s30 = 0;
      let s31 = 0;
      for (let p = 0; p < k; p++) {
        const y0 = b[b0 + p];
        const y1 = b[b1 + p];
        const x0 = a[a0 + p];
        const x1 = a[a1 + p];
        const x2 = a[a2 + p];
        const x3 = a[a3 + p];
        s00 += x0 * y0;
        s01 += x0 * y1;
        s10 += x1 * y0;
        s11 += x1 * y1;
        s20 += x2 * y0;
        s21 += x2 * y1;
        s30 += x3 * y0;
        s31 += x3 * y1;
      }
      const o = oo + i * n + j;
      out[o] = s00;
      out[o + 1] = s01;
      out[o + n] = s10;
      out[o + n + 1] = s11;
      out[o + 2 * n] = s20;
      out[o + 2 * n + 1] = s21;
      out[o + 3 * n] = s30;
      out[o + 3 * n + 1] = s31;
    }
  }
  leftovers(out, a, b, { ao, bo, oo, m, k, n, m4, n2 });
}

// the rows (after the last block of four) and the column (after the last pair) left over
function leftovers(out, a, b, { ao, bo, oo, m, k, n, m4, n2 }) {
  for (let i = 0; i < m; i++) {
    for (let j = i < m4 ? n2 : 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s += a[ao + i * k + p] * b[bo + j * k + p];
      out[oo + i * n + j] = s;
    }
  }
}

/** split_heads: x (B, T, C) -> (B, h, T, hs), x.reshape(B, T, h, hs).transpose(0, 2, 1, 3). */
export function splitHeads(x, { B, T, C, heads }) {
  const hs = C / heads;
  const out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let h = 0; h < heads; h++) {
        const src = (b * T + t) * C + h * hs;
        out.set(x.subarray(src, src + hs), ((b * heads + h) * T + t) * hs);
      }
    }
  }
  return out;
}

/** merge_heads: x (B, h, T, hs) -> (B, T, C), x.transpose(0, 2, 1, 3).reshape(B, T, C). */
export function mergeHeads(x, { B, T, C, heads }) {
  const hs = C / heads;
  const out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < heads; h++) {
      for (let t = 0; t < T; t++) {
        const src = ((b * heads + h) * T + t) * hs;
        out.set(x.subarray(src, src + hs), (b * T + t) * C + h * hs);
      }
    }
  }
  return out;
}

/**
 * The mistaken split x.reshape(B, h, T, hs) and merge x.reshape(B, T, C) without the transpose:
 * a reshape keeps the C-order data as it is, so both are a copy.
 */
export function reshapeOnly(x) {
  return Float64Array.from(x);
}

/** Fill the entries above the diagonal (key j > query i) of every (T, T) block with `fill`. */
export function causalMask(x, T, fill = -Infinity) {
  const out = Float64Array.from(x);
  for (let o = 0; o < out.length; o += T * T) {
    for (let i = 0; i < T; i++) out.fill(fill, o + i * T + i + 1, o + (i + 1) * T);
  }
  return out;
}

/** softmax over the last axis (axis=-1) of (rows, T): max subtracted, as the course writes it. */
export function softmaxRows(x, T) {
  const out = new Float64Array(x.length);
  for (let o = 0; o < x.length; o += T) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) max = Math.max(max, x[o + j]);
    let sum = 0;
    for (let j = 0; j < T; j++) {
      out[o + j] = Math.exp(x[o + j] - max);
      sum += out[o + j];
    }
    for (let j = 0; j < T; j++) out[o + j] /= sum;
  }
  return out;
}

/** softmax over the axis before the last (axis=-2) of (…, T, T) blocks: each column sums to 1. */
export function softmaxColumns(x, T) {
  return transposeBlocks(softmaxRows(transposeBlocks(x, T), T), T);
}

/** Transpose every (T, T) block (x.transpose(0, 1, 3, 2) for (B, h, T, T)). */
export function transposeBlocks(x, T) {
  const out = new Float64Array(x.length);
  for (let o = 0; o < x.length; o += T * T) {
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) out[o + j * T + i] = x[o + i * T + j];
    }
  }
  return out;
}

/** np.sum(x, axis=-1) of (rows, T) -> (rows,). */
export function rowsum(x, T) {
  const out = new Float64Array(x.length / T);
  for (let r = 0; r < out.length; r++) {
    let s = 0;
    for (let j = 0; j < T; j++) s += x[r * T + j];
    out[r] = s;
  }
  return out;
}

/** Elementwise a op b of two arrays of one length. */
export const add = (a, b) => a.map((v, i) => v + b[i]);
export const sub = (a, b) => a.map((v, i) => v - b[i]);
export const mul = (a, b) => a.map((v, i) => v * b[i]);
/** c · a, or a / d with `divide`. */
export const scale = (a, c) => a.map((v) => v * c);
export const divide = (a, d) => a.map((v) => v / d);

/** sum(a ⊙ b). */
export function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** att ⊙ (datt − rowsum(att ⊙ datt)) of (rows, T): the softmax backward of lesson 4. */
export function softmaxBackward(att, datt, T) {
  const r = rowsum(mul(att, datt), T);
  return att.map((a, i) => a * (datt[i] - r[Math.floor(i / T)]));
}
