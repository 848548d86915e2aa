// ndarray.js - the few NumPy operations the course's program uses, on n-d float64 arrays
// { data: Float64Array (C order), shape: number[] }, with NumPy's rules: broadcasting for the
// elementwise operations, batch broadcasting for @, negative axes, keepdims. The notebook check's
// program (program.js) runs on these; an operation NumPy would refuse throws a ShapeError.
//
//   tensor(data, shape)   binary(op, a, b)   unary(fn, a)   matmul(a, b)
//   transpose(a, perm)    reshape(a, dims)   reduce(fn, a, axis, keepdims)   causalWhere(...)

/** The error of an operation NumPy would refuse (the edit that asked for it is not a program). */
export class ShapeError extends Error {}

const size = (shape) => shape.reduce((x, y) => x * y, 1);

export function tensor(data, shape) {
  if (data.length !== size(shape)) {
    throw new ShapeError(`${data.length} values for shape (${shape.join(', ')})`);
  }
  return { data, shape: [...shape] };
}

export const scalar = (x) => ({ data: Float64Array.of(x), shape: [] });

// C-order strides of shape
function strides(shape) {
  const out = new Array(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    out[i] = s;
    s *= shape[i];
  }
  return out;
}

/** The shape two shapes broadcast to, NumPy's rule (aligned on the right; 1 stretches). */
export function broadcastShape(a, b) {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new ShapeError(`shapes (${a.join(', ')}) and (${b.join(', ')}) do not broadcast`);
    }
    out.push(x === 1 ? y : x);
  }
  return out;
}

// The offsets read, in C order over `shape`, by the given stride of each axis.
function offsets(shape, step) {
  const total = size(shape);
  const out = new Int32Array(total);
  const counter = new Array(shape.length).fill(0);
  let at = 0;
  for (let i = 0; i < total; i++) {
    out[i] = at;
    for (let ax = shape.length - 1; ax >= 0; ax--) {
      counter[ax]++;
      at += step[ax];
      if (counter[ax] < shape[ax]) break;
      at -= step[ax] * shape[ax];
      counter[ax] = 0;
    }
  }
  return out;
}

// For every flat index of `shape`, the flat index into an array of shape `from` broadcast to it.
function broadcastIndex(from, shape) {
  const pad = shape.length - from.length;
  const fs = strides(from);
  return offsets(
    shape,
    shape.map((d, i) => (i < pad || from[i - pad] === 1 ? 0 : fs[i - pad])),
  );
}

const BINARY = {
  add: (x, y) => x + y,
  sub: (x, y) => x - y,
  mul: (x, y) => x * y,
  div: (x, y) => x / y,
};

/** a op b elementwise with broadcasting (op: add, sub, mul, div). */
export function binary(op, a, b) {
  const f = BINARY[op];
  const shape = broadcastShape(a.shape, b.shape);
  const ia = broadcastIndex(a.shape, shape);
  const ib = broadcastIndex(b.shape, shape);
  const out = new Float64Array(size(shape));
  for (let i = 0; i < out.length; i++) out[i] = f(a.data[ia[i]], b.data[ib[i]]);
  return { data: out, shape };
}

/** fn applied to every entry. */
export const unary = (fn, a) => ({ data: a.data.map(fn), shape: [...a.shape] });

/** a @ b: (…, m, k) @ (…, k, n) with the leading axes broadcast; both at least 2-d. */
export function matmul(a, b) {
  if (a.shape.length < 2 || b.shape.length < 2) throw new ShapeError('@ of a 1-d array');
  const [m, k] = a.shape.slice(-2);
  const [k2, n] = b.shape.slice(-2);
  if (k !== k2) {
    throw new ShapeError(`@ of (${a.shape.join(', ')}) and (${b.shape.join(', ')})`);
  }
  const batch = broadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const ia = broadcastIndex(a.shape.slice(0, -2), batch);
  const ib = broadcastIndex(b.shape.slice(0, -2), batch);
  const out = new Float64Array(size(batch) * m * n);
  // (row i of out accumulated over p in order: each entry's sum in the same order as the dot
  // product's, p = 0 … k-1, so the values are the same bit for bit; b read row by row)
  const A = a.data;
  const Bd = b.data;
  for (let t = 0; t < ia.length; t++) {
    const ao = ia[t] * m * k;
    const bo = ib[t] * k * n;
    const oo = t * m * n;
    for (let i = 0; i < m; i++) {
      const row = oo + i * n;
      for (let p = 0; p < k; p++) {
        const x = A[ao + i * k + p];
        const brow = bo + p * n;
        for (let j = 0; j < n; j++) out[row + j] += x * Bd[brow + j];
      }
    }
  }
  return { data: out, shape: [...batch, m, n] };
}

/** a.transpose(perm); perm null: every axis reversed (a.T). */
export function transpose(a, perm = null) {
  const rank = a.shape.length;
  const p = perm ?? [...Array(rank).keys()].reverse();
  if (p.length !== rank || new Set(p).size !== rank || p.some((x) => !(x >= 0 && x < rank))) {
    throw new ShapeError(`axes (${p.join(', ')}) do not match a ${rank}-d array`);
  }
  const shape = p.map((ax) => a.shape[ax]);
  const from = strides(a.shape);
  const at = offsets(
    shape,
    p.map((ax) => from[ax]),
  );
  return { data: Float64Array.from(at, (i) => a.data[i]), shape };
}

/** a.reshape(dims): one dimension may be -1. */
export function reshape(a, dims) {
  const known = dims.filter((d) => d !== -1);
  const free = dims.length - known.length;
  const total = a.data.length;
  const rest = size(known);
  if (free > 1 || (free === 1 && (rest === 0 || total % rest !== 0))) {
    throw new ShapeError(`cannot reshape ${total} values to (${dims.join(', ')})`);
  }
  const shape = dims.map((d) => (d === -1 ? total / rest : d));
  if (size(shape) !== total) throw new ShapeError(`cannot reshape ${total} values to (${dims})`);
  return { data: a.data, shape };
}

const REDUCE = {
  sum: { init: 0, f: (s, x) => s + x },
  max: { init: -Infinity, f: (s, x) => (x > s || Number.isNaN(x) ? x : s) },
  mean: { init: 0, f: (s, x) => s + x },
};

/** a.sum / a.max / a.mean over axis (null: all), keepdims as NumPy. */
export function reduce(fn, a, axis = null, keepdims = false) {
  const rank = a.shape.length;
  const ax = axis === null ? null : (axis + rank) % rank;
  if (axis !== null && !(axis >= -rank && axis < rank)) {
    throw new ShapeError(`axis ${axis} is out of bounds for a ${rank}-d array`);
  }
  const { init, f } = REDUCE[fn];
  if (ax === null) {
    let s = init;
    for (const x of a.data) s = f(s, x);
    if (fn === 'mean') s /= a.data.length;
    return { data: Float64Array.of(s), shape: keepdims ? a.shape.map(() => 1) : [] };
  }
  const outer = size(a.shape.slice(0, ax));
  const len = a.shape[ax];
  const inner = size(a.shape.slice(ax + 1));
  const out = new Float64Array(outer * inner).fill(init);
  for (let o = 0; o < outer; o++) {
    for (let j = 0; j < len; j++) {
      const base = (o * len + j) * inner;
      for (let i = 0; i < inner; i++) out[o * inner + i] = f(out[o * inner + i], a.data[base + i]);
    }
  }
  if (fn === 'mean') for (let i = 0; i < out.length; i++) out[i] /= len;
  const shape = keepdims
    ? a.shape.map((d, i) => (i === ax ? 1 : d))
    : a.shape.filter((_, i) => i !== ax);
  return { data: out, shape };
}

/**
 * np.where(mask, fill, a) with mask = np.triu(np.ones((T, T), bool), k=k) (lower: np.tril with
 * k) over the last two axes of a, which must be (T, T).
 */
export function causalWhere(a, { fill = -Infinity, k = 1, lower = false } = {}) {
  const [r, c] = a.shape.slice(-2);
  if (a.shape.length < 2 || r !== c) throw new ShapeError('a causal mask needs (…, T, T)');
  const out = Float64Array.from(a.data);
  for (let o = 0; o < out.length; o += r * c) {
    for (let i = 0; i < r; i++) {
      for (let j = 0; j < c; j++) {
        const masked = lower ? j - i <= k : j - i >= k;
        if (masked) out[o + i * c + j] = fill;
      }
    }
  }
  return { data: out, shape: [...a.shape] };
}
