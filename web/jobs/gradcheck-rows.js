// gradcheck-rows.js - some rows of a gradient check (DOM-free): what one worker of the pool
// computes when a check is split by tensor. It drives the C functions that
// layer.gradcheckSteps drives (c/mha.h: mha_gradcheck_prepare once, then mha_gradcheck_slice over
// entry ranges of a tensor, each merging into that tensor's row), on a layer of its own, for the
// chosen tensors only. A row is computed whole and a slice leaves the layer as it found it, so
// every row equals that row of layer.gradcheck's report, bit for bit (tests/jobs/compute.test.mjs
// checks it).

import { weightNames } from '../model/tensors.js';

const OWN_KEYS = new Set(['tensor', 'shape', 'size']); // a report row's keys that JS fills in
const fieldCache = new WeakMap(); // mha -> [{ key, at }]
const product = (shape) => shape.reduce((a, b) => a * b, 1);

/**
 * The fields of a report row after tensor, shape and size, in the engine's order, each with its
 * index (in doubles) in mha_check_row. Read from the engine itself (a one-entry check at C = 1),
 * so this module keeps no list of the row's fields.
 */
function reportFields(mha) {
  let fields = fieldCache.get(mha);
  if (fields) return fields;
  const layer = mha.createLayer({ C: 1, heads: 1 });
  let row;
  try {
    [row] = layer.gradcheck([1], { B: 1, T: 1, G: [1] });
  } finally {
    layer.free();
  }
  const K = mha.constants;
  fields = Object.keys(row)
    .filter((key) => !OWN_KEYS.has(key))
    .map((key) => {
      const snake = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const offset = K[`offsetof(mha_check_row, ${snake})`];
      if (offset === undefined) throw new Error(`checkRows: the module has no row field ${snake}`);
      return { key, at: offset / Float64Array.BYTES_PER_ELEMENT };
    });
  fieldCache.set(mha, fields);
  return fields;
}

/** A report row from the doubles of an mha_check_row (mem) and what JS knows (own). */
function rowOf(fields, own, mem) {
  const row = { ...own };
  for (const { key, at } of fields) row[key] = mem[at];
  return row;
}

/**
 * The sizes of every checked tensor for these dims: { names, shapes, sizes, positions } (positions:
 * the entries a check visits, `samples` of each or all of them).
 */
export function checkPlan(mha, { B, T, C, heads }, samples = 0) {
  const names = mha.checkNames;
  const shapes = names.map((name) => mha.tensorShape(name, { B, T, C, heads }));
  const sizes = shapes.map(product);
  const positions = sizes.map((s) => (samples === 0 || samples >= s ? s : samples));
  return { names, shapes, sizes, positions };
}

/** The row of tensor w before any entry is checked (as layer.gradcheckSteps reports it). */
export function blankRow(mha, plan, w) {
  const fields = reportFields(mha);
  const mem = new Float64Array(mha.constants['sizeof(mha_check_row)'] / 8);
  mem[fields.find((f) => f.key === 'worst').at] = -1;
  return rowOf(fields, { tensor: plan.names[w], shape: plan.shapes[w], size: plan.sizes[w] }, mem);
}

function argError(what) {
  return new Error(`compute.gradcheck: ${what}`);
}

function positiveInt(name, v) {
  if (!Number.isInteger(v) || v < 1) throw argError(`${name} must be an integer >= 1, got ${v}`);
  return v;
}

function arrayOf(name, a, n) {
  if (!(ArrayBuffer.isView(a) || Array.isArray(a)) || a.length !== n) {
    throw argError(`${name} must be an array of ${n} numbers, got ${a?.length ?? typeof a}`);
  }
  return a;
}

/** The C flags of a check: MHA_CAUSAL and MHA_CHECK_TWO_POINT from opts.causal and opts.stencil. */
function checkFlags(K, opts) {
  const stencil = opts.stencil ?? 'five-point';
  if (stencil !== 'five-point' && stencil !== 'two-point') {
    throw argError(`stencil must be 'five-point' or 'two-point', got ${stencil}`);
  }
  return (opts.causal ? K.MHA_CAUSAL : 0) | (stencil === 'two-point' ? K.MHA_CHECK_TWO_POINT : 0);
}

/** The check's validated arguments: { B, T, n, flags, loss, aux, eps, samples }. */
function checkArgs(mha, { C, heads, W, X, opts }) {
  const K = mha.constants;
  positiveInt('C', C);
  positiveInt('heads', heads);
  if (C % heads !== 0) throw argError(`C (${C}) must be divisible by heads (${heads})`);
  for (const k of weightNames(mha)) arrayOf(`W.${k}`, W?.[k], C * C);
  const B = positiveInt('B', opts.B);
  const T = positiveInt('T', opts.T);
  const n = B * T * C;
  arrayOf('X', X, n);
  const mse = opts.loss === 'mse';
  if (!mse && opts.loss !== undefined && opts.loss !== 'dot') {
    throw argError(`loss must be 'dot' or 'mse', got ${opts.loss}`);
  }
  let aux;
  if (mse) aux = arrayOf('target', opts.target, n);
  else if (opts.G !== undefined) aux = arrayOf('G', opts.G, n);
  else aux = mha.standardNormal(n, { seed: opts.seed ?? 0 });
  const eps = opts.eps ?? K.MHA_GRADCHECK_EPS;
  if (!(eps > 0) || !Number.isFinite(eps)) throw argError(`eps must be > 0, got ${eps}`);
  const samples = opts.samples ?? 0;
  if (!Number.isInteger(samples) || samples < 0) throw argError(`samples must be >= 0`);
  const flags = checkFlags(K, opts);
  const loss = mse ? K.MHA_LOSS_MSE : K.MHA_LOSS_DOT;
  return { B, T, n, flags, loss, aux, eps, samples };
}

/**
 * A layer of the C API with weights W, and blocks for X, the loss's aux array and one row:
 * { ptr, px, paux, prow, free() }.
 */
function checkLayer(mha, { C, heads, W }, n) {
  const ex = mha.exports;
  const K = mha.constants;
  const status = (code) => {
    if (code !== K.MHA_OK) throw argError(mha.errorMessage(code));
  };
  const blocks = [];
  const alloc = (bytes) => {
    const p = ex.malloc(bytes);
    if (!p) throw argError(`out of memory (${bytes} bytes)`);
    blocks.push(p);
    return p;
  };
  const r = { ptr: 0 };
  r.free = () => {
    if (r.ptr) ex.mha_free(r.ptr);
    r.ptr = 0;
    for (const p of blocks.splice(0)) ex.free(p);
  };
  try {
    const slot = alloc(K['sizeof(void *)']);
    status(ex.mha_create(C, heads, slot));
    r.ptr = new Uint32Array(ex.memory.buffer, slot, 1)[0];
    const params = new Float64Array(ex.memory.buffer, ex.mha_params(r.ptr), 4 * C * C);
    weightNames(mha).forEach((k, i) => params.set(W[k], i * C * C));
    [r.px, r.paux] = [alloc(n * 8), alloc(n * 8)];
    r.prow = alloc(K['sizeof(mha_check_row)']);
  } catch (err) {
    r.free();
    throw err;
  }
  r.status = status;
  return r;
}

/**
 * The check of tensors `rows` (indices into mha.checkNames) of the layer { C, heads, W } at input
 * X, as a generator: after every `chunk` entries it yields { done, total, rows: [[w, row], ...] }
 * (rows of the tensors not reached yet are blank). opts: as layer.gradcheckSteps takes them
 * ({ B, T, causal, loss, target, G, seed, eps, stencil, samples }). Stopping it early (return())
 * frees its layer.
 */
export function* checkRowsSteps(mha, { C, heads, W, X, opts = {}, rows, chunk = 16 }) {
  const a = checkArgs(mha, { C, heads, W, X, opts });
  const plan = checkPlan(mha, { B: a.B, T: a.T, C, heads }, a.samples);
  const fields = reportFields(mha);
  const total = rows.reduce((s, w) => s + plan.positions[w], 0);
  const out = new Map(rows.map((w) => [w, blankRow(mha, plan, w)]));
  const ex = mha.exports;
  const L = checkLayer(mha, { C, heads, W }, a.n);
  const doubles = mha.constants['sizeof(mha_check_row)'] / 8;
  const worst = fields.find((f) => f.key === 'worst').at;
  try {
    new Float64Array(ex.memory.buffer, L.px, a.n).set(X);
    new Float64Array(ex.memory.buffer, L.paux, a.n).set(a.aux);
    L.status(ex.mha_gradcheck_prepare(L.ptr, L.px, a.B, a.T, a.flags, a.loss, L.paux));
    let done = 0;
    for (const w of rows) {
      const own = { tensor: plan.names[w], shape: plan.shapes[w], size: plan.sizes[w] };
      new Float64Array(ex.memory.buffer, L.prow, doubles).fill(0)[worst] = -1;
      for (let first = 0; first < plan.positions[w];) {
        const count = Math.min(chunk, plan.positions[w] - first);
        L.status(ex.mha_gradcheck_slice(L.ptr, w, a.samples, first, count, a.eps, L.prow));
        first += count;
        done += count;
        out.set(w, rowOf(fields, own, new Float64Array(ex.memory.buffer, L.prow, doubles)));
        yield { done, total, rows: [...out] };
      }
    }
    if (total === 0) yield { done, total, rows: [...out] };
  } finally {
    L.free();
  }
}

/**
 * Tensors of a check split into `parts` groups of about equal entry counts (the largest first,
 * each to the lightest group); each group in report order. Empty groups are left out.
 */
export function splitRows(positions, parts) {
  const groups = Array.from({ length: Math.max(1, parts) }, () => ({ rows: [], entries: 0 }));
  const order = positions.map((p, w) => w).sort((a, b) => positions[b] - positions[a] || a - b);
  for (const w of order) {
    const g = groups.reduce((best, x) => (x.entries < best.entries ? x : best));
    g.rows.push(w);
    g.entries += positions[w];
  }
  return groups
    .filter((g) => g.rows.length)
    .map((g) => ({ rows: g.rows.sort((a, b) => a - b), entries: g.entries }));
}
