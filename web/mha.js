// mha.js - the JS API of mha-wasm: loads web/mha.wasm (browser: fetch; Node: fs) and wraps its C
// exports in plain objects. One ES module for the browser and Node.
//
//   const mha = await loadMHA();
//   const layer = mha.createLayer({ C: 64, heads: 4, seed: 42, rng: 'default_rng', scale: 0.125 });
//   const { Y, attention } = layer.forward(X, { B: 2, T: 6 });
//
// Arrays are flat row-major Float64Arrays (plain arrays of numbers are accepted as input). Results
// are copies; `layer.weights.Wq` etc. are live views into wasm memory, fresh on each access (a view
// dies when memory grows, so don't keep one across calls). Bad arguments throw an Error whose
// message names the function and the argument; a failed call changes nothing.

const isNode = typeof process === 'object' && !!(process.versions && process.versions.node);

// Every number the module shares with this file (status codes, flags, tensor ids, struct
// layouts, type sizes) comes from the module itself (mha_constant_*, see c/mha.h), and every list
// of tensors from its tensor table (mha_tensor_*): nothing here repeats the C side by hand.
const MAX_SEED = 2 ** 53 - 1;
const MEMORY_CAP = 2 ** 30; // the module's maximum memory (-sMAXIMUM_MEMORY=1GB in the Makefile)
const F64 = Float64Array.BYTES_PER_ELEMENT;
// The fields of mha_check_row a gradient-check report row shows, by their C names (camelCase in
// JS); the row's other fields (the sums of squares behind norm_rel) stay in the slices' rows.
const REPORT_FIELDS = [
  'checked',
  'max_abs',
  'max_rel',
  'max_rel_sum',
  'worst',
  'analytic',
  'numeric',
  'mean_rel',
  'norm_rel',
];
const MiB = (bytes) => `${Math.ceil(bytes / 2 ** 20)} MiB`;

// The module's bytes: given, read from disk (Node) or fetched (browsers). Node's fs is reached
// through process.getBuiltinModule (Node >= 20.16; older Node: an import of a name held in a
// variable), never through an import a bundler can see, so a browser bundle holds no Node module.
async function readWasmBytes(source) {
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source;
  const url = source ?? new URL('./mha.wasm', import.meta.url);
  if (isNode) {
    const fsName = 'node:fs/promises';
    const fs =
      process.getBuiltinModule?.(fsName) ??
      (await import(/* @vite-ignore */ /* webpackIgnore: true */ fsName));
    return fs.readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`loadMHA: could not fetch ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

/** Load the wasm module. `source`: URL, path (Node), or the module's bytes; default: ./mha.wasm. */
export async function loadMHA(source) {
  const bytes = await readWasmBytes(source);
  // The module is standalone: its only possible import is the memory-growth notification.
  const imports = { env: { emscripten_notify_memory_growth() {} } };
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  return new MHA(instance.exports);
}

// ------------------------------------------------------------------------------------------------
// argument checks (each names the function and the argument)

function checkInt(fn, name, v, min = 1) {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new Error(`${fn}: ${name} must be an integer, got ${describe(v)}`);
  }
  if (v < min) throw new Error(`${fn}: ${name} must be >= ${min}, got ${v}`);
  if (v > 0x7fffffff) throw new Error(`${fn}: ${name} is too large (${v})`);
  return v;
}

function checkReal(fn, name, v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new Error(`${fn}: ${name} must be a finite number, got ${describe(v)}`);
  }
  return v;
}

function checkBool(fn, name, v) {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') {
    throw new Error(`${fn}: ${name} must be true or false, got ${describe(v)}`);
  }
  return v;
}

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `an array of length ${v.length}`;
  const name = v.constructor?.name;
  return name && name !== 'Object' ? `a ${name}` : 'an object';
}

function checkOptions(fn, opts) {
  if (opts === undefined) return {};
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) {
    throw new Error(`${fn}: options must be an object, got ${describe(opts)}`);
  }
  return opts;
}

// An array argument: Float64Array, other typed array or plain array of numbers, of length n.
function checkArray(fn, name, a, n, what) {
  const ok =
    a instanceof Float64Array ||
    (ArrayBuffer.isView(a) && !(a instanceof DataView)) ||
    Array.isArray(a);
  if (!ok) {
    throw new Error(
      `${fn}: ${name} must be a Float64Array or an array of numbers, got ${describe(a)}`,
    );
  }
  if (a.length !== n) {
    throw new Error(`${fn}: ${name} has ${a.length} elements, expected ${what} = ${n}`);
  }
  if (Array.isArray(a)) {
    for (let i = 0; i < n; i++) {
      if (typeof a[i] !== 'number') {
        throw new Error(`${fn}: ${name}[${i}] is not a number (${describe(a[i])})`);
      }
    }
  } else if (typeof a[0] === 'bigint') {
    throw new Error(`${fn}: ${name} must hold numbers, not BigInts`);
  }
  return a;
}

// Training would spread a NaN into every weight, so its data must be finite.
function checkFinite(fn, name, a) {
  for (let i = 0; i < a.length; i++) {
    if (!Number.isFinite(a[i])) {
      throw new Error(`${fn}: ${name}[${i}] is ${a[i]}; training data must be finite`);
    }
  }
}

function checkSeed(fn, seed, legacy) {
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed >= 2n ** 64n) {
      throw new Error(`${fn}: seed must be in 0 ... 2^64-1, got ${seed}n`);
    }
    if (legacy && seed >= 2n ** 32n) {
      throw new Error(`${fn}: the legacy generator takes seeds 0 ... 2^32-1, got ${seed}n`);
    }
    return [Number(seed & 0xffffffffn), Number(seed >> 32n)];
  }
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new Error(
      `${fn}: seed must be an integer in 0 ... 2^53-1 (or a BigInt), got ${describe(seed)}`,
    );
  }
  if (legacy && seed > 0xffffffff) {
    throw new Error(`${fn}: the legacy generator takes seeds 0 ... 2^32-1, got ${seed}`);
  }
  return [seed % 2 ** 32, Math.floor(seed / 2 ** 32)];
}

// One of the names of `codes` (an object: JS name -> C constant), or `fallback` when undefined.
function checkChoice(fn, name, value, codes, fallback) {
  const v = value ?? fallback;
  if (!Object.hasOwn(codes, v)) {
    const list = Object.keys(codes).map((k) => `'${k}'`);
    throw new Error(`${fn}: ${name} must be ${list.join(' or ')}, got ${describe(value)}`);
  }
  return v;
}

const product = (shape) => shape.reduce((a, b) => a * b, 1);
const camelCase = (snake) => snake.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

// ------------------------------------------------------------------------------------------------
// what the module says about itself

// The header's constants by C name: { MHA_OK: 0, ..., 'sizeof(int)': 4, ... } (mha_constant_*).
function readConstants(ex, string) {
  const K = {};
  for (let i = 0; i < ex.mha_constant_count(); i++) {
    K[string(ex.mha_constant_name(i))] = ex.mha_constant_value(i);
  }
  // the typed arrays this file reads the C types with must have the C types' sizes
  const sizes = {
    int: Int32Array,
    'void *': Uint32Array,
    size_t: Uint32Array,
    double: Float64Array,
  };
  for (const [type, array] of Object.entries(sizes)) {
    if (K[`sizeof(${type})`] !== array.BYTES_PER_ELEMENT) {
      throw new Error(`loadMHA: unsupported module: sizeof(${type}) = ${K[`sizeof(${type})`]}`);
    }
  }
  return Object.freeze(K);
}

// { value: name } of the constants named PREFIX<NAME>, the names lower-cased: MHA_KIND_* -> kinds.
function namesOf(K, prefix) {
  const names = new Map();
  for (const [k, v] of Object.entries(K)) {
    if (k.startsWith(prefix)) names.set(v, k.slice(prefix.length).toLowerCase());
  }
  return names;
}

// The layout of struct `type`, all doubles: { doubles, at: { field: index } } for `fields`.
function structLayout(K, type, fields) {
  const at = {};
  for (const field of fields) {
    const offset = K[`offsetof(${type}, ${field})`];
    if (offset === undefined) throw new Error(`loadMHA: the module has no ${type}.${field}`);
    at[field] = offset / F64;
  }
  return { doubles: K[`sizeof(${type})`] / F64, at };
}

// The tensor table (MHA_TENSORS in c/mha.h), one frozen object per tensor, by id.
function readTensorTable(ex, K, string) {
  const kinds = namesOf(K, 'MHA_KIND_');
  const checkRow = new Map();
  for (let w = 0; w < K.MHA_CHECK_COUNT; w++) checkRow.set(ex.mha_check_tensor(w), w);
  const names = [];
  for (let id = 0; id < ex.mha_tensor_count(); id++) names.push(string(ex.mha_tensor_name(id)));
  return Object.freeze(
    names.map((name, id) => {
      const stage = ex.mha_tensor_stage(id);
      const grad = ex.mha_tensor_grad(id);
      return Object.freeze({
        id,
        name,
        kind: kinds.get(ex.mha_tensor_kind(id)),
        stage: stage === K.MHA_STAGE_NONE ? null : stage,
        grad: grad === K.MHA_T_NONE ? null : names[grad],
        step: ex.mha_tensor_step(id),
        check: checkRow.get(id) ?? null,
      });
    }),
  );
}

// ------------------------------------------------------------------------------------------------
// the module's memory and C calls: one per module, shared by MHA, Layer and Rng through their
// private fields, so no public object exposes it

class Wasm {
  #scratchPtr = 0;
  #scratchBytes = 0;
  #tensorIds = new Map();

  constructor(exports) {
    this.ex = exports; // the raw exports
    exports._initialize?.();
    const string = (p) => this.string(p);
    this.K = readConstants(exports, string);
    this.out = this.#outSlots(); // C out-parameters in wasm memory: { ptr, rank, dims, len }
    this.tensors = readTensorTable(exports, this.K, string);
    for (const t of this.tensors) this.#tensorIds.set(t.name, t.id);
    this.checkRow = structLayout(this.K, 'mha_check_row', REPORT_FIELDS);
  }

  // One block for the C calls' out-parameters: a pointer, a rank, MHA_MAX_RANK dims, a length.
  #outSlots() {
    const K = this.K;
    const sizes = {
      ptr: K['sizeof(void *)'],
      rank: K['sizeof(int)'],
      dims: K.MHA_MAX_RANK * K['sizeof(int)'],
      len: K['sizeof(size_t)'],
    };
    const base = this.ex.malloc(Object.values(sizes).reduce((a, b) => a + b, 0));
    if (!base) throw new Error('loadMHA: out of memory');
    const slots = {};
    let p = base;
    for (const [name, bytes] of Object.entries(sizes)) {
      slots[name] = p;
      p += bytes;
    }
    return Object.freeze(slots);
  }

  f64(ptr, n) {
    return new Float64Array(this.ex.memory.buffer, ptr >>> 0, n);
  }
  i32(ptr, n) {
    return new Int32Array(this.ex.memory.buffer, ptr >>> 0, n);
  }
  // the pointer / length a C call wrote to its out-parameter slot
  ptrOut() {
    return new Uint32Array(this.ex.memory.buffer, this.out.ptr, 1)[0];
  }
  lenOut() {
    return new Uint32Array(this.ex.memory.buffer, this.out.len, 1)[0];
  }
  // the shape mha_tensor_shape(_for) wrote to the rank and dims slots
  shapeOut() {
    const rank = this.i32(this.out.rank, 1)[0];
    return Array.from(this.i32(this.out.dims, rank));
  }
  tensorId(fn, name) {
    if (typeof name !== 'string' || !this.#tensorIds.has(name)) {
      const names = this.tensors.map((t) => t.name);
      throw new Error(`${fn}: unknown tensor ${describe(name)}; one of ${names.join(', ')}`);
    }
    return this.#tensorIds.get(name);
  }
  flags(causal, twoPoint = false) {
    return (causal ? this.K.MHA_CAUSAL : 0) | (twoPoint ? this.K.MHA_CHECK_TWO_POINT : 0);
  }
  stencil(fn, stencil) {
    const codes = { 'five-point': false, 'two-point': true };
    return codes[checkChoice(fn, 'stencil', stencil, codes, 'five-point')];
  }
  rngKind(fn, rng) {
    const codes = { default_rng: this.K.MHA_RNG_DEFAULT, legacy: this.K.MHA_RNG_LEGACY };
    return codes[checkChoice(fn, 'rng', rng, codes, 'default_rng')];
  }
  lossKind(fn, loss) {
    const codes = { dot: this.K.MHA_LOSS_DOT, mse: this.K.MHA_LOSS_MSE };
    return codes[checkChoice(fn, 'loss', loss, codes, 'dot')];
  }

  string(ptr) {
    const bytes = new Uint8Array(this.ex.memory.buffer, ptr >>> 0);
    let end = 0;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(0, end));
  }
  errorMessage(code) {
    return this.string(this.ex.mha_strerror(code));
  }
  check(fn, code) {
    if (code !== this.K.MHA_OK) throw new Error(`${fn}: ${this.errorMessage(code)}`);
  }

  // A grow-only scratch block for arguments and results, carved into `counts` double arrays.
  // Returns their pointers. Anything held in scratch is dead after the next scratch call.
  scratch(fn, counts) {
    let total = 0;
    for (const n of counts) total += n;
    const bytes = total * F64;
    if (bytes > 2 ** 31) throw new Error(`${fn}: arrays too large (${bytes} bytes)`);
    if (bytes > this.#scratchBytes) {
      const ptr = this.ex.malloc(bytes);
      if (!ptr) throw new Error(`${fn}: out of memory (needed ${bytes} bytes of scratch)`);
      if (this.#scratchPtr) this.ex.free(this.#scratchPtr);
      this.#scratchPtr = ptr;
      this.#scratchBytes = bytes;
    }
    const ptrs = [];
    let p = this.#scratchPtr >>> 0;
    for (const n of counts) {
      ptrs.push(p);
      p += n * F64;
    }
    return ptrs;
  }
}

// ------------------------------------------------------------------------------------------------
// the module

class MHA {
  #w;
  #gradOrder = [];
  #checkNames = [];

  constructor(exports) {
    const w = new Wasm(exports);
    this.#w = w;
    for (let i = 0, id; (id = exports.mha_grad_order(i)) !== w.K.MHA_T_NONE; i++) {
      this.#gradOrder.push(w.tensors[id].name);
    }
    for (let k = 0; k < w.K.MHA_CHECK_COUNT; k++) {
      this.#checkNames.push(w.tensors[exports.mha_check_tensor(k)].name);
    }
    /** The library version, "MAJOR.MINOR.PATCH", as the C side reports it. */
    this.version = w.string(exports.mha_version());
  }

  /** The raw wasm exports (the C ABI of c/mha.h). */
  get exports() {
    return this.#w.ex;
  }
  /** Every constant of c/mha.h by its C name (status codes, flags, ids, struct layouts). */
  get constants() {
    return this.#w.K;
  }
  /** The tensor table: { id, name, kind, stage, grad, step, check } per tensor, by id. */
  get tensors() {
    return this.#w.tensors;
  }
  /** Names accepted by layer.tensor(), in the C table's order. */
  get tensorNames() {
    return this.#w.tensors.map((t) => t.name);
  }
  /** Tensors compared by the gradient check, in report order. */
  get checkNames() {
    return [...this.#checkNames];
  }
  /** The gradients of lesson 4, in the order its backward computes them. */
  get gradOrder() {
    return [...this.#gradOrder];
  }

  /** The shape of tensor `name` for sizes { B, T, C, heads } (no layer needed). */
  tensorShape(name, opts) {
    const fn = 'tensorShape';
    const w = this.#w;
    const id = w.tensorId(fn, name);
    const o = checkOptions(fn, opts);
    const [B, T, C, heads] = ['B', 'T', 'C', 'heads'].map((k) => checkInt(fn, k, o[k]));
    if (C % heads !== 0) throw new Error(`${fn}: C (${C}) must be divisible by heads (${heads})`);
    const { rank, dims } = w.out;
    w.check(fn, w.ex.mha_tensor_shape_for(id, B, T, C, heads, rank, dims));
    return w.shapeOut();
  }

  /** The C library's message for status code `code`. */
  errorMessage(code) {
    return this.#w.errorMessage(code);
  }

  // --- the API ---

  /**
   * A layer of width C with `heads` heads; weights = scale * standard normals from a NumPy stream
   * (Wq, Wk, Wv, Wo in turn). rng: 'default_rng' (np.random.default_rng(seed)) or 'legacy'
   * (np.random.seed(seed); np.random.randn). scale defaults to 1/sqrt(C).
   */
  createLayer(opts) {
    const fn = 'createLayer';
    const o = checkOptions(fn, opts);
    const C = checkInt(fn, 'C', o.C);
    const heads = checkInt(fn, 'heads', o.heads);
    if (C % heads !== 0) throw new Error(`${fn}: C (${C}) must be divisible by heads (${heads})`);
    // the weights and their gradients, (C, C) each
    const weights = this.#w.tensors.filter((t) => t.kind === 'param').length;
    const weightBytes = 2 * weights * C * C * F64;
    if (weightBytes > MEMORY_CAP) {
      throw new Error(
        `${fn}: C = ${C} is too large: its weights and gradients need ${MiB(weightBytes)}, over the module's 1 GiB memory`,
      );
    }
    const kind = this.#w.rngKind(fn, o.rng);
    const [lo, hi] = checkSeed(fn, o.seed ?? 0, kind === this.#w.K.MHA_RNG_LEGACY);
    const scale = o.scale === undefined ? 1 / Math.sqrt(C) : checkReal(fn, 'scale', o.scale);
    this.#w.check(fn, this.#w.ex.mha_create(C, heads, this.#w.out.ptr));
    const ptr = this.#w.ptrOut();
    const code = this.#w.ex.mha_init_weights(ptr, lo, hi, kind, scale);
    if (code !== this.#w.K.MHA_OK) {
      this.#w.ex.mha_free(ptr);
      this.#w.check(fn, code);
    }
    return new Layer(this, this.#w, ptr, C, heads);
  }

  /** A NumPy-identical random stream: rng(seed, 'default_rng' | 'legacy'); .free() it when done. */
  rng(seed = 0, kind = 'default_rng') {
    const fn = 'rng';
    const k = this.#w.rngKind(fn, kind);
    const [lo, hi] = checkSeed(fn, seed, k === this.#w.K.MHA_RNG_LEGACY);
    this.#w.check(fn, this.#w.ex.mha_rng_create(k, lo, hi, this.#w.out.ptr));
    return new Rng(this.#w, this.#w.ptrOut());
  }

  /** n standard normals from a fresh generator: np.random.default_rng(seed).standard_normal(n). */
  standardNormal(n, { seed = 0, rng = 'default_rng' } = {}) {
    const r = this.rng(seed, rng);
    try {
      return r.standardNormal(n);
    } finally {
      r.free();
    }
  }

  /** split_heads: x (B,T,C) -> (B,heads,T,C/heads). */
  splitHeads(x, opts) {
    return this.#splitMerge('splitHeads', this.#w.ex.mha_split_heads, x, opts);
  }
  /** merge_heads: x (B,heads,T,C/heads) -> (B,T,C). */
  mergeHeads(x, opts) {
    return this.#splitMerge('mergeHeads', this.#w.ex.mha_merge_heads, x, opts);
  }

  #splitMerge(fn, cfun, x, opts) {
    const o = checkOptions(fn, opts);
    const B = checkInt(fn, 'B', o.B),
      T = checkInt(fn, 'T', o.T),
      C = checkInt(fn, 'C', o.C);
    const heads = checkInt(fn, 'heads', o.heads);
    if (C % heads !== 0) throw new Error(`${fn}: C (${C}) must be divisible by heads (${heads})`);
    const n = B * T * C;
    checkArray(fn, 'x', x, n, 'B*T*C');
    const [px, pout] = this.#w.scratch(fn, [n, n]);
    this.#w.f64(px, n).set(x);
    this.#w.check(fn, cfun(px, B, T, C, heads, pout));
    return this.#w.f64(pout, n).slice();
  }

  /**
   * Single-head attention with its own (C, headSize) projections (lesson 1).
   * Returns { att (B,T,T), out (B,T,headSize) }.
   */
  singleHead(X, opts) {
    const fn = 'singleHead';
    const o = checkOptions(fn, opts);
    const B = checkInt(fn, 'B', o.B),
      T = checkInt(fn, 'T', o.T),
      C = checkInt(fn, 'C', o.C);
    const hs = checkInt(fn, 'headSize', o.headSize);
    const causal = checkBool(fn, 'causal', o.causal);
    checkArray(fn, 'X', X, B * T * C, 'B*T*C');
    checkArray(fn, 'Wq', o.Wq, C * hs, 'C*headSize');
    checkArray(fn, 'Wk', o.Wk, C * hs, 'C*headSize');
    checkArray(fn, 'Wv', o.Wv, C * hs, 'C*headSize');
    const [px, pq, pk, pv, patt, pout] = this.#w.scratch(fn, [
      B * T * C,
      C * hs,
      C * hs,
      C * hs,
      B * T * T,
      B * T * hs,
    ]);
    this.#w.f64(px, B * T * C).set(X);
    this.#w.f64(pq, C * hs).set(o.Wq);
    this.#w.f64(pk, C * hs).set(o.Wk);
    this.#w.f64(pv, C * hs).set(o.Wv);
    this.#w.check(
      fn,
      this.#w.ex.mha_single_head(px, B, T, C, hs, pq, pk, pv, this.#w.flags(causal), patt, pout),
    );
    return {
      att: this.#w.f64(patt, B * T * T).slice(),
      out: this.#w.f64(pout, B * T * hs).slice(),
    };
  }

  /** Mean squared error: { loss: mean((Y - target)^2), dY: 2 (Y - target) / n }. */
  mseLoss(Y, target) {
    const fn = 'mseLoss';
    checkArray(fn, 'Y', Y, Y?.length ?? 0, 'its length');
    if (Y.length === 0) throw new Error(`${fn}: Y is empty`);
    checkArray(fn, 'target', target, Y.length, 'Y.length');
    const n = Y.length;
    const [py, pt, pdy, ploss] = this.#w.scratch(fn, [n, n, n, 1]);
    this.#w.f64(py, n).set(Y);
    this.#w.f64(pt, n).set(target);
    this.#w.check(fn, this.#w.ex.mha_mse_loss(py, pt, n, ploss, pdy));
    return { loss: this.#w.f64(ploss, 1)[0], dY: this.#w.f64(pdy, n).slice() };
  }
}

// ------------------------------------------------------------------------------------------------
// a random stream

class Rng {
  #w;
  #ptr;
  constructor(w, ptr) {
    this.#w = w;
    this.#ptr = ptr;
  }

  #live(fn) {
    if (!this.#ptr) throw new Error(`rng.${fn}: this generator has been freed`);
    return this.#ptr;
  }

  #fill(fn, n, call) {
    const ptr = this.#live(fn);
    checkInt(`rng.${fn}`, 'n', n, 0);
    const [p] = this.#w.scratch(`rng.${fn}`, [Math.max(n, 1)]);
    this.#w.check(`rng.${fn}`, call(ptr, p));
    return this.#w.f64(p, n).slice();
  }

  /** The next n standard normals (rng.standard_normal(n) / np.random.randn(n)). */
  standardNormal(n) {
    return this.#fill('standardNormal', n, (r, p) => this.#w.ex.mha_rng_standard_normal(r, p, n));
  }
  /** The next n uniform doubles in [0, 1) (rng.random(n) / np.random.rand(n)). */
  random(n) {
    return this.#fill('random', n, (r, p) => this.#w.ex.mha_rng_random(r, p, n));
  }
  /** The next n normals loc + scale * z (rng.normal(loc, scale, n)). */
  normal(loc, scale, n) {
    checkReal('rng.normal', 'loc', loc);
    checkReal('rng.normal', 'scale', scale);
    return this.#fill('normal', n, (r, p) => this.#w.ex.mha_rng_normal(r, loc, scale, p, n));
  }
  free() {
    const ptr = this.#live('free');
    this.#w.ex.mha_rng_free(ptr);
    this.#ptr = 0;
  }
}

// ------------------------------------------------------------------------------------------------
// a layer

class Layer {
  #m;
  #w;
  #ptr;

  constructor(m, w, ptr, C, heads) {
    this.#m = m;
    this.#w = w;
    this.#ptr = ptr;
    /** Model width. */
    this.C = C;
    /** Number of heads. */
    this.heads = heads;
    /** Head size C / heads. */
    this.headSize = C / heads;
  }

  #live(fn) {
    if (!this.#ptr) throw new Error(`layer.${fn}: the layer has been freed`);
    return this.#ptr;
  }

  #dims(fn, opts) {
    const o = checkOptions(`layer.${fn}`, opts);
    const B = checkInt(`layer.${fn}`, 'B', o.B);
    const T = checkInt(`layer.${fn}`, 'T', o.T);
    const causal = checkBool(`layer.${fn}`, 'causal', o.causal);
    const cacheBytes = this.#w.ex.mha_cache_bytes(B, T, this.C, this.heads);
    if (cacheBytes > MEMORY_CAP) {
      throw new Error(
        `layer.${fn}: B = ${B}, T = ${T} is too large: the forward cache needs ${MiB(cacheBytes)} (the attention alone is B*heads*T*T), over the module's 1 GiB memory`,
      );
    }
    return { o, B, T, causal };
  }

  // A live view of tensor `id` in wasm memory (NULL: null), its length as the C side gives it.
  #view(id) {
    const wasm = this.#w;
    const p = wasm.ex.mha_tensor(this.#ptr, id, wasm.out.len);
    return p ? wasm.f64(p, wasm.lenOut()) : null;
  }

  // { Wq: view, ... } for each weight: of the weight itself, or of its gradient
  #views(fn, ofGrad) {
    this.#live(fn);
    const views = {};
    for (const t of this.#w.tensors) {
      if (t.kind === 'param') {
        views[t.name] = this.#view(ofGrad ? this.#w.tensorId(fn, t.grad) : t.id);
      }
    }
    return views;
  }

  /** Live views {Wq, Wk, Wv, Wo} (each C*C) of the weights; writable; fresh on each access. */
  get weights() {
    return this.#views('weights', false);
  }
  /** Live views {Wq, Wk, Wv, Wo} of the accumulated gradients dWq ... dWo. */
  get grads() {
    return this.#views('grads', true);
  }
  /** All parameters [Wq | Wk | Wv | Wo] as one live view (4*C*C). */
  get params() {
    const ex = this.#w.ex;
    const ptr = this.#live('params');
    return this.#w.f64(ex.mha_params(ptr), ex.mha_num_params(ptr));
  }
  /** All gradients as one live view (4*C*C). */
  get gradBuffer() {
    const ex = this.#w.ex;
    const ptr = this.#live('gradBuffer');
    return this.#w.f64(ex.mha_grads(ptr), ex.mha_num_params(ptr));
  }

  /** Forward pass: X (B,T,C) -> { Y (B,T,C), attention (B,heads,T,T) }; caches everything. */
  forward(X, opts) {
    const fn = 'forward';
    const ptr = this.#live(fn);
    const { B, T, causal } = this.#dims(fn, opts);
    const n = B * T * this.C;
    checkArray(`layer.${fn}`, 'X', X, n, `B*T*C = ${B}*${T}*${this.C}`);
    const [px] = this.#w.scratch(`layer.${fn}`, [n]);
    this.#w.f64(px, n).set(X);
    this.#w.check(`layer.${fn}`, this.#w.ex.mha_forward(ptr, px, B, T, this.#w.flags(causal), 0));
    return this.#forwardResult();
  }

  // What forward and forwardFrom return: copies of the output Y and the attention weights att
  #forwardResult() {
    const Y = this.tensor('Y').data;
    const attention = this.tensor('att').data;
    return { Y, attention };
  }

  /** Backward pass of the last forward: dY (B,T,C) -> { dX }; adds to layer.grads. */
  backward(dY) {
    const fn = 'layer.backward';
    const ptr = this.#live('backward');
    const [B, T] = this.#cachedSize(fn);
    const n = B * T * this.C;
    checkArray(fn, 'dY', dY, n, `B*T*C of the last forward = ${B}*${T}*${this.C}`);
    const [pdy] = this.#w.scratch(fn, [n]);
    this.#w.f64(pdy, n).set(dY);
    this.#w.check(fn, this.#w.ex.mha_backward(ptr, pdy, 0));
    return { dX: this.tensor('dX').data };
  }

  // [B, T] of the forward held in the C cache (the single source of truth): X is (B, T, C)
  #cachedSize(fn) {
    const { rank, dims } = this.#w.out;
    const id = this.#w.tensorId(fn, 'X');
    const code = this.#w.ex.mha_tensor_shape(this.#ptr, id, rank, dims);
    if (code !== this.#w.K.MHA_OK) throw new Error(`${fn}: call forward first`);
    const [B, T] = this.#w.shapeOut();
    return [B, T];
  }

  /** Zero the gradient buffer. */
  zeroGrad() {
    this.#w.check('layer.zeroGrad', this.#w.ex.mha_zero_grad(this.#live('zeroGrad')));
  }

  /** params -= lr * grads. */
  sgdStep(lr) {
    const ptr = this.#live('sgdStep');
    checkReal('layer.sgdStep', 'lr', lr);
    this.#w.check('layer.sgdStep', this.#w.ex.mha_sgd_step(ptr, lr));
  }

  /**
   * `steps` steps of SGD on the MSE loss between forward(X) and target. Returns the loss before
   * each step (Float64Array of length steps).
   */
  train(X, target, opts) {
    const fn = 'layer.train';
    const ptr = this.#live('train');
    const { o, B, T, causal } = this.#dims('train', opts);
    const steps = checkInt(fn, 'steps', o.steps ?? 10, 0);
    const lr = checkReal(fn, 'lr', o.lr ?? 0.1);
    const n = B * T * this.C;
    checkArray(fn, 'X', X, n, `B*T*C = ${B}*${T}*${this.C}`);
    checkArray(fn, 'target', target, n, `B*T*C = ${B}*${T}*${this.C}`);
    checkFinite(fn, 'X', X);
    checkFinite(fn, 'target', target);
    const [px, pt, pl] = this.#w.scratch(fn, [n, n, Math.max(steps, 1)]);
    this.#w.f64(px, n).set(X);
    this.#w.f64(pt, n).set(target);
    const flags = this.#w.flags(causal);
    const code = this.#w.ex.mha_train(ptr, px, pt, B, T, flags, lr, steps, pl);
    const losses = this.#w.f64(pl, steps).slice();
    if (code !== this.#w.K.MHA_OK) {
      const err = new Error(`${fn}: ${this.#w.errorMessage(code)}`);
      err.losses = losses;
      throw err;
    }
    return losses;
  }

  /**
   * Gradient check by float64 central differences over every entry of Wq, Wk, Wv, Wo, X and the
   * intermediates (or `samples` entries of each). opts.stencil: 'five-point' (default,
   * (8 (L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε) or 'two-point' ((L(x+ε) − L(x−ε)) / 2ε,
   * as a notebook writes it); opts.eps: ε (default 1e-3). Loss: 'dot' (sum(G * Y), G from opts.G
   * or default_rng(opts.seed ?? 0).standard_normal) or 'mse' (against opts.target). Returns rows
   * { tensor, shape, size, checked, maxAbs, maxRel, maxRelSum, meanRel, normRel, worst,
   * analytic, numeric } (maxRelSum: |a − n| / max(|a| + |n|, 1e-8); normRel: ‖a − n‖ /
   * (‖a‖ + ‖n‖)).
   */
  gradcheck(X, opts) {
    let last;
    for (const progress of this.gradcheckSteps(X, {
      ...checkOptions('layer.gradcheck', opts),
      chunk: Infinity,
    })) {
      last = progress;
    }
    return last.report;
  }

  // The validated options of a gradient check, and its loss's aux array (G or the target).
  #checkOptions(fn, X, opts) {
    const { o, B, T, causal } = this.#dims('gradcheck', opts);
    const n = B * T * this.C;
    checkArray(fn, 'X', X, n, `B*T*C = ${B}*${T}*${this.C}`);
    const loss = this.#w.lossKind(fn, o.loss);
    let aux;
    if (loss === this.#w.K.MHA_LOSS_MSE) {
      aux = checkArray(fn, 'target', o.target, n, 'B*T*C');
    } else if (o.G !== undefined) {
      aux = checkArray(fn, 'G', o.G, n, 'B*T*C');
    } else {
      aux = this.#m.standardNormal(n, { seed: o.seed ?? 0 });
    }
    const eps = o.eps === undefined ? this.#w.K.MHA_GRADCHECK_EPS : checkReal(fn, 'eps', o.eps);
    if (eps <= 0) throw new Error(`${fn}: eps must be > 0, got ${eps}`);
    const samples = checkInt(fn, 'samples', o.samples ?? 0, 0);
    const chunk = o.chunk === Infinity ? Infinity : checkInt(fn, 'chunk', o.chunk ?? 256);
    const flags = this.#w.flags(causal, this.#w.stencil(fn, o.stencil));
    return { B, T, n, flags, loss, aux, eps, samples, chunk };
  }

  /**
   * The same check as a generator, for progress bars: yields { done, total, report } after every
   * `chunk` (default 256) finite-difference entries; report rows fill in as it goes. The layer
   * must not be used for anything else until the generator finishes.
   */
  *gradcheckSteps(X, opts) {
    const fn = 'layer.gradcheck';
    const ptr = this.#live('gradcheck');
    const { B, T, n, flags, loss, aux, eps, samples, chunk } = this.#checkOptions(fn, X, opts);
    const m = this.#m;
    const wasm = this.#w;
    const ex = wasm.ex;
    const [px, paux] = wasm.scratch(fn, [n, n]);
    wasm.f64(px, n).set(X);
    wasm.f64(paux, n).set(aux);
    wasm.check(fn, ex.mha_gradcheck_prepare(ptr, px, B, T, flags, loss, paux));

    // The rows (mha_check_row each, laid out as the C side says) live in JS between slices;
    // each slice merges into a copy in wasm memory.
    const names = m.checkNames;
    const shapes = names.map((name) => this.#shape(wasm.tensorId(fn, name)));
    const sizes = shapes.map(product);
    const positions = sizes.map((s) => (samples === 0 || samples >= s ? s : samples));
    const total = positions.reduce((a, b) => a + b, 0);
    const { doubles, at } = wasm.checkRow;
    const rows = names.map(() => new Float64Array(doubles));
    for (const row of rows) row[at.worst] = -1;
    const report = () =>
      names.map((tensor, w) => {
        const fields = { tensor, shape: shapes[w], size: sizes[w] };
        for (const f of REPORT_FIELDS) fields[camelCase(f)] = rows[w][at[f]];
        return fields;
      });
    let done = 0;
    for (let w = 0; w < names.length; w++) {
      for (let first = 0; first < positions[w];) {
        const count = Math.min(chunk === Infinity ? positions[w] : chunk, positions[w] - first);
        const live = this.#live('gradcheck');
        const [prow] = wasm.scratch(fn, [doubles]);
        wasm.f64(prow, doubles).set(rows[w]);
        const code = ex.mha_gradcheck_slice(live, w, samples, first, count, eps, prow);
        if (code === wasm.K.MHA_ENOFORWARD) {
          throw new Error(
            `${fn}: the check was interrupted: another call on this layer ran while it was in progress`,
          );
        }
        wasm.check(fn, code);
        rows[w].set(wasm.f64(prow, doubles));
        first += count;
        done += count;
        if (chunk !== Infinity) yield { done, total, report: report() };
      }
    }
    yield { done, total, report: report() };
  }

  /**
   * One entry's numeric gradient at several steps, for a figure of the error against ε: the check
   * of layer.gradcheck (same options: B, T, causal, loss, G/seed/target, stencil) prepared once,
   * then entry `index` (flat) of checked tensor `tensor` ('Wq' ... 'concat', see checkNames)
   * differenced at each ε of opts.eps (finite numbers > 0). Returns { analytic, numeric }
   * (numeric: a Float64Array, one per ε). Leaves the layer as a check does.
   */
  numericGradient(X, opts) {
    const fn = 'layer.numericGradient';
    const o = checkOptions(fn, opts);
    const ptr = this.#live('numericGradient');
    const epsList = Array.isArray(o.eps) ? o.eps : [o.eps];
    for (const e of epsList) {
      if (!(checkReal(fn, 'eps', e) > 0)) throw new Error(`${fn}: eps must be > 0, got ${e}`);
    }
    const { B, T, n, flags, loss, aux } = this.#checkOptions(fn, X, { ...o, eps: undefined });
    const m = this.#m;
    const w = m.checkNames.indexOf(o.tensor);
    if (w < 0) {
      throw new Error(`${fn}: tensor must be one of ${m.checkNames.join(', ')}, got ${o.tensor}`);
    }
    const size = product(m.tensorShape(o.tensor, { B, T, C: this.C, heads: this.heads }));
    const index = checkInt(fn, 'index', o.index ?? 0, 0);
    if (index >= size) {
      throw new Error(`${fn}: index ${index} is past ${o.tensor}'s ${size} entries`);
    }
    const wasm = this.#w;
    const ex = wasm.ex;
    const { doubles, at } = wasm.checkRow;
    const [px, paux, prow] = wasm.scratch(fn, [n, n, doubles]);
    wasm.f64(px, n).set(X);
    wasm.f64(paux, n).set(aux);
    wasm.check(fn, ex.mha_gradcheck_prepare(ptr, px, B, T, flags, loss, paux));
    const numeric = new Float64Array(epsList.length);
    let analytic = NaN;
    epsList.forEach((eps, k) => {
      const row = wasm.f64(prow, doubles);
      row.fill(0);
      row[at.worst] = -1;
      wasm.check(fn, ex.mha_gradcheck_slice(ptr, w, 0, index, 1, eps, prow));
      const out = wasm.f64(prow, doubles);
      numeric[k] = out[at.numeric];
      analytic = out[at.analytic];
    });
    return { analytic, numeric };
  }

  #shape(id) {
    const { rank, dims } = this.#w.out;
    this.#w.check(
      'layer.tensor',
      this.#w.ex.mha_tensor_shape(this.#live('tensor'), id, rank, dims),
    );
    return this.#w.shapeOut();
  }

  /**
   * A copy of a weight, gradient or cached intermediate by its course name ('Q', 'scores', 'att',
   * 'dscores', 'dX', ...; see mha.tensorNames): { data: Float64Array, shape }.
   */
  tensor(name) {
    const fn = 'layer.tensor';
    this.#live('tensor');
    const id = this.#w.tensorId(fn, name);
    const shape = this.#shape(id);
    const view = this.#view(id);
    if (!view) {
      const run = this.#w.tensors[id].kind === 'gradient' ? 'backward' : 'forward';
      throw new Error(`${fn}: ${name} does not exist yet (run ${run} first)`);
    }
    return { data: view.slice(), shape };
  }

  /** Overwrite a weight or cached intermediate (same length) by name. */
  setTensor(name, data) {
    const fn = 'layer.setTensor';
    this.#live('setTensor');
    const id = this.#w.tensorId(fn, name);
    const shape = this.#shape(id);
    checkArray(fn, 'data', data, product(shape), `the size of ${name} (${shape.join('x')})`);
    const view = this.#view(id);
    if (!view) throw new Error(`${fn}: ${name} does not exist yet`);
    view.set(data);
  }

  /**
   * Recompute everything downstream of an edited intermediate ('Q', 'K', 'V', 'scores', 'att',
   * 'headout' or 'concat': the tensors with a restart stage); returns { Y, attention } like
   * forward.
   */
  forwardFrom(name) {
    const fn = 'layer.forwardFrom';
    const ptr = this.#live('forwardFrom');
    const restartable = this.#w.tensors.filter((t) => t.stage !== null).map((t) => t.name);
    if (!restartable.includes(name)) {
      throw new Error(
        `${fn}: name must be one of ${restartable.join(', ')} (the intermediates forward can restart from), got ${describe(name)}`,
      );
    }
    this.#w.check(fn, this.#w.ex.mha_forward_from(ptr, this.#w.tensorId(fn, name)));
    return this.#forwardResult();
  }

  /** Release the layer's memory; any later call throws. */
  free() {
    const ptr = this.#live('free');
    this.#w.ex.mha_free(ptr);
    this.#ptr = 0;
  }
}
