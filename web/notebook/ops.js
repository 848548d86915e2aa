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
 * (batch, k, m) with transA, b (batch, k, n), or (batch, n, k) with transB.
 */
export function matmul(a, b, { batch = 1, m, k, n, transA = false, transB = false }) {
  if (transA && transB) throw new Error('matmul: transA and transB together are not supported');
  const out = new Float64Array(batch * m * n);
  for (let i = 0; i < batch; i++) {
    const at = { ao: i * m * k, bo: i * k * n, oo: i * m * n, m, k, n };
    if (transB) matmulNT(out, a, b, at);
    else if (transA) matmulTN(out, a, b, at);
    else matmulNN(out, a, b, at);
  }
  return out;
}

// (m, k) @ (k, n): row i of out accumulates a[i, p] * row p of b
function matmulNN(out, a, b, { ao, bo, oo, m, k, n }) {
  for (let i = 0; i < m; i++) {
    const row = oo + i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[ao + i * k + p];
      const bp = bo + p * n;
      for (let j = 0; j < n; j++) out[row + j] += aip * b[bp + j];
    }
  }
}

// (m, k) @ (n, k)^T: out[i, j] = dot(row i of a, row j of b)
function matmulNT(out, a, b, { ao, bo, oo, m, k, n }) {
  for (let i = 0; i < m; i++) {
    const ai = ao + i * k;
    for (let j = 0; j < n; j++) {
      const bj = bo + j * k;
      let s = 0;
      for (let p = 0; p < k; p++) s += a[ai + p] * b[bj + p];
      out[oo + i * n + j] = s;
    }
  }
}

// (k, m)^T @ (k, n): row i of out accumulates a[p, i] * row p of b
function matmulTN(out, a, b, { ao, bo, oo, m, k, n }) {
  for (let p = 0; p < k; p++) {
    const ap = ao + p * m;
    const bp = bo + p * n;
    for (let i = 0; i < m; i++) {
      const api = a[ap + i];
      const row = oo + i * n;
      for (let j = 0; j < n; j++) out[row + j] += api * b[bp + j];
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
