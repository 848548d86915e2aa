// mha.js - the JS API of mha-wasm: loads web/mha.wasm (browser: fetch; Node: fs) and wraps its C
// exports in plain objects. One ES module for the browser and Node.
//
//   const mha = await loadMHA();
//   const layer = mha.createLayer({ C: 64, heads: 4, seed: 42, rng: 'default_rng', scale: 0.125 });
//   const { Y, attention } = layer.forward(X, { B: 2, T: 6 });
//
// Arrays are flat row-major Float64Arrays (plain arrays of numbers are accepted as input). Results
// are copies; `layer.weights.Wq` etc. are live views into wasm memory, fresh on each access (a view
// dies when memory grows, so don't keep one across calls). Bad arguments throw an Error whose message
// names the function and the argument; a failed call changes nothing.

const isNode = typeof process === 'object' && !!(process.versions && process.versions.node);

const RNG_KINDS = { default_rng: 0, legacy: 1 };
const LOSS_KINDS = { dot: 0, mse: 1 };
const MHA_CAUSAL = 1;
const CHECK_ROW_FIELDS = 8; // doubles per mha_check_row
const MAX_SEED = 2 ** 53 - 1;
const FORWARD_FROM = ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat'];
const MEMORY_CAP = 2 ** 30; // the module's maximum memory (-sMAXIMUM_MEMORY=1GB in the Makefile)
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

function checkSeed(fn, seed, kind) {
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed >= 2n ** 64n) {
      throw new Error(`${fn}: seed must be in 0 ... 2^64-1, got ${seed}n`);
    }
    if (kind === 1 && seed >= 2n ** 32n) {
      throw new Error(`${fn}: the legacy generator takes seeds 0 ... 2^32-1, got ${seed}n`);
    }
    return [Number(seed & 0xffffffffn), Number(seed >> 32n)];
  }
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new Error(
      `${fn}: seed must be an integer in 0 ... 2^53-1 (or a BigInt), got ${describe(seed)}`,
    );
  }
  if (kind === 1 && seed > 0xffffffff) {
    throw new Error(`${fn}: the legacy generator takes seeds 0 ... 2^32-1, got ${seed}`);
  }
  return [seed % 2 ** 32, Math.floor(seed / 2 ** 32)];
}

function checkRngKind(fn, rng) {
  const name = rng ?? 'default_rng';
  if (!Object.hasOwn(RNG_KINDS, name)) {
    throw new Error(`${fn}: rng must be 'default_rng' or 'legacy', got ${describe(rng)}`);
  }
  return RNG_KINDS[name];
}

// ------------------------------------------------------------------------------------------------
// the module

class MHA {
  #ex;
  #scratchPtr = 0;
  #scratchBytes = 0;
  #outPtr; // 64 bytes for C out-parameters (pointers, ranks, dims, lengths)
  #tensorIds = new Map();
  #tensorNames = [];
  #checkNames = [];

  constructor(exports) {
    this.#ex = exports;
    exports._initialize?.();
    this.#outPtr = exports.malloc(64);
    if (!this.#outPtr) throw new Error('loadMHA: out of memory');
    for (let id = 0; ; id++) {
      const p = exports.mha_tensor_name(id);
      if (!p) break;
      const name = this.#string(p);
      this.#tensorIds.set(name, id);
      this.#tensorNames.push(name);
    }
    for (let w = 0; ; w++) {
      const p = exports.mha_check_name(w);
      if (!p) break;
      this.#checkNames.push(this.#string(p));
    }
    /** The library version, "MAJOR.MINOR.PATCH", as the C side reports it. */
    this.version = this.#string(exports.mha_version());
  }

  /** The raw wasm exports (the C ABI of c/mha.h). */
  get exports() {
    return this.#ex;
  }
  /** Names accepted by layer.tensor(), in the C enum's order. */
  get tensorNames() {
    return [...this.#tensorNames];
  }
  /** Tensors compared by the gradient check, in report order. */
  get checkNames() {
    return [...this.#checkNames];
  }

  // --- memory helpers (internal, used by Layer and Rng through the module) ---

  _f64(ptr, n) {
    return new Float64Array(this.#ex.memory.buffer, ptr >>> 0, n);
  }
  _i32(ptr, n) {
    return new Int32Array(this.#ex.memory.buffer, ptr >>> 0, n);
  }
  _out() {
    return this.#outPtr;
  }
  _tensorId(fn, name) {
    if (typeof name !== 'string' || !this.#tensorIds.has(name)) {
      throw new Error(
        `${fn}: unknown tensor ${describe(name)}; one of ${this.#tensorNames.join(', ')}`,
      );
    }
    return this.#tensorIds.get(name);
  }

  #string(ptr) {
    const bytes = new Uint8Array(this.#ex.memory.buffer, ptr >>> 0);
    let end = 0;
    while (bytes[end] !== 0) end++;
    return new TextDecoder().decode(bytes.subarray(0, end));
  }

  /** The C library's message for status code `code`. */
  errorMessage(code) {
    return this.#string(this.#ex.mha_strerror(code));
  }

  _check(fn, code) {
    if (code !== 0) throw new Error(`${fn}: ${this.errorMessage(code)}`);
  }

  // A grow-only scratch block for arguments and results, carved into `counts` double arrays.
  // Returns their pointers. Anything held in scratch is dead after the next _scratch call.
  _scratch(fn, counts) {
    let total = 0;
    for (const n of counts) total += n;
    const bytes = total * 8;
    if (bytes > 2 ** 31) throw new Error(`${fn}: arrays too large (${bytes} bytes)`);
    if (bytes > this.#scratchBytes) {
      const ptr = this.#ex.malloc(bytes);
      if (!ptr) throw new Error(`${fn}: out of memory (needed ${bytes} bytes of scratch)`);
      if (this.#scratchPtr) this.#ex.free(this.#scratchPtr);
      this.#scratchPtr = ptr;
      this.#scratchBytes = bytes;
    }
    const ptrs = [];
    let p = this.#scratchPtr >>> 0;
    for (const n of counts) {
      ptrs.push(p);
      p += n * 8;
    }
    return ptrs;
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
    const weightBytes = 2 * 4 * C * C * 8; // parameters and gradients
    if (weightBytes > MEMORY_CAP) {
      throw new Error(
        `${fn}: C = ${C} is too large: its weights and gradients need ${MiB(weightBytes)}, over the module's 1 GiB memory`,
      );
    }
    const kind = checkRngKind(fn, o.rng);
    const [lo, hi] = checkSeed(fn, o.seed ?? 0, kind);
    const scale = o.scale === undefined ? 1 / Math.sqrt(C) : checkReal(fn, 'scale', o.scale);
    const out = this.#outPtr;
    this._check(fn, this.#ex.mha_create(C, heads, out));
    const ptr = this._i32(out, 1)[0];
    const code = this.#ex.mha_init_weights(ptr, lo, hi, kind, scale);
    if (code !== 0) {
      this.#ex.mha_free(ptr);
      this._check(fn, code);
    }
    return new Layer(this, ptr, C, heads);
  }

  /** A NumPy-identical random stream: rng(seed, 'default_rng' | 'legacy'). Call .free() when done. */
  rng(seed = 0, kind = 'default_rng') {
    const fn = 'rng';
    const k = checkRngKind(fn, kind);
    const [lo, hi] = checkSeed(fn, seed, k);
    this._check(fn, this.#ex.mha_rng_create(k, lo, hi, this.#outPtr));
    return new Rng(this, this._i32(this.#outPtr, 1)[0]);
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
    return this.#splitMerge('splitHeads', this.#ex.mha_split_heads, x, opts);
  }
  /** merge_heads: x (B,heads,T,C/heads) -> (B,T,C). */
  mergeHeads(x, opts) {
    return this.#splitMerge('mergeHeads', this.#ex.mha_merge_heads, x, opts);
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
    const [px, pout] = this._scratch(fn, [n, n]);
    this._f64(px, n).set(x);
    this._check(fn, cfun(px, B, T, C, heads, pout));
    return this._f64(pout, n).slice();
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
    for (const w of ['Wq', 'Wk', 'Wv']) checkArray(fn, w, o[w], C * hs, 'C*headSize');
    const [px, pq, pk, pv, patt, pout] = this._scratch(fn, [
      B * T * C,
      C * hs,
      C * hs,
      C * hs,
      B * T * T,
      B * T * hs,
    ]);
    this._f64(px, B * T * C).set(X);
    this._f64(pq, C * hs).set(o.Wq);
    this._f64(pk, C * hs).set(o.Wk);
    this._f64(pv, C * hs).set(o.Wv);
    this._check(
      fn,
      this.#ex.mha_single_head(px, B, T, C, hs, pq, pk, pv, causal ? MHA_CAUSAL : 0, patt, pout),
    );
    return { att: this._f64(patt, B * T * T).slice(), out: this._f64(pout, B * T * hs).slice() };
  }

  /** Mean squared error: { loss: mean((Y - target)^2), dY: 2 (Y - target) / n }. */
  mseLoss(Y, target) {
    const fn = 'mseLoss';
    checkArray(fn, 'Y', Y, Y?.length ?? 0, 'its length');
    if (Y.length === 0) throw new Error(`${fn}: Y is empty`);
    checkArray(fn, 'target', target, Y.length, 'Y.length');
    const n = Y.length;
    const [py, pt, pdy, ploss] = this._scratch(fn, [n, n, n, 1]);
    this._f64(py, n).set(Y);
    this._f64(pt, n).set(target);
    this._check(fn, this.#ex.mha_mse_loss(py, pt, n, ploss, pdy));
    return { loss: this._f64(ploss, 1)[0], dY: this._f64(pdy, n).slice() };
  }
}

// ------------------------------------------------------------------------------------------------
// a random stream

class Rng {
  #m;
  #ptr;
  constructor(m, ptr) {
    this.#m = m;
    this.#ptr = ptr;
  }

  #live(fn) {
    if (!this.#ptr) throw new Error(`rng.${fn}: this generator has been freed`);
    return this.#ptr;
  }

  #fill(fn, n, call) {
    const ptr = this.#live(fn);
    checkInt(`rng.${fn}`, 'n', n, 0);
    const [p] = this.#m._scratch(`rng.${fn}`, [Math.max(n, 1)]);
    this.#m._check(`rng.${fn}`, call(ptr, p));
    return this.#m._f64(p, n).slice();
  }

  /** The next n standard normals (rng.standard_normal(n) / np.random.randn(n)). */
  standardNormal(n) {
    return this.#fill('standardNormal', n, (r, p) =>
      this.#m.exports.mha_rng_standard_normal(r, p, n),
    );
  }
  /** The next n uniform doubles in [0, 1) (rng.random(n) / np.random.rand(n)). */
  random(n) {
    return this.#fill('random', n, (r, p) => this.#m.exports.mha_rng_random(r, p, n));
  }
  /** The next n normals loc + scale * z (rng.normal(loc, scale, n)). */
  normal(loc, scale, n) {
    checkReal('rng.normal', 'loc', loc);
    checkReal('rng.normal', 'scale', scale);
    return this.#fill('normal', n, (r, p) => this.#m.exports.mha_rng_normal(r, loc, scale, p, n));
  }
  free() {
    const ptr = this.#live('free');
    this.#m.exports.mha_rng_free(ptr);
    this.#ptr = 0;
  }
}

// ------------------------------------------------------------------------------------------------
// a layer

class Layer {
  #m;
  #ptr;

  constructor(m, ptr, C, heads) {
    this.#m = m;
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
    // the forward cache: 16 (B,T,C) tensors and 4 (B,h,T,T) ones (c/layer.h)
    const cacheBytes = 8 * (16 * B * T * this.C + 4 * B * this.heads * T * T);
    if (cacheBytes > MEMORY_CAP) {
      throw new Error(
        `layer.${fn}: B = ${B}, T = ${T} is too large: the forward cache needs ${MiB(cacheBytes)} (the attention alone is B*heads*T*T), over the module's 1 GiB memory`,
      );
    }
    return { o, B, T, causal };
  }

  #views(fn, base) {
    const ptr = this.#live(fn);
    const cc = this.C * this.C;
    const p = base(ptr) >>> 0;
    const views = {};
    ['Wq', 'Wk', 'Wv', 'Wo'].forEach((name, i) => {
      views[name] = this.#m._f64(p + i * cc * 8, cc);
    });
    return views;
  }

  /** Live views {Wq, Wk, Wv, Wo} (each C*C) of the weights; writable; fresh on each access. */
  get weights() {
    return this.#views('weights', (p) => this.#m.exports.mha_params(p));
  }
  /** Live views {Wq, Wk, Wv, Wo} of the accumulated gradients dWq ... dWo. */
  get grads() {
    return this.#views('grads', (p) => this.#m.exports.mha_grads(p));
  }
  /** All parameters [Wq | Wk | Wv | Wo] as one live view (4*C*C). */
  get params() {
    return this.#m._f64(this.#m.exports.mha_params(this.#live('params')), 4 * this.C * this.C);
  }
  /** All gradients as one live view (4*C*C). */
  get gradBuffer() {
    return this.#m._f64(this.#m.exports.mha_grads(this.#live('gradBuffer')), 4 * this.C * this.C);
  }

  /** Forward pass: X (B,T,C) -> { Y (B,T,C), attention (B,heads,T,T) }; caches everything. */
  forward(X, opts) {
    const fn = 'forward';
    const ptr = this.#live(fn);
    const { B, T, causal } = this.#dims(fn, opts);
    const n = B * T * this.C;
    checkArray(`layer.${fn}`, 'X', X, n, `B*T*C = ${B}*${T}*${this.C}`);
    const [px] = this.#m._scratch(`layer.${fn}`, [n]);
    this.#m._f64(px, n).set(X);
    this.#m._check(
      `layer.${fn}`,
      this.#m.exports.mha_forward(ptr, px, B, T, causal ? MHA_CAUSAL : 0, 0),
    );
    return { Y: this.tensor('Y').data, attention: this.tensor('att').data };
  }

  /** Backward pass of the last forward: dY (B,T,C) -> { dX }; adds to layer.grads. */
  backward(dY) {
    const fn = 'layer.backward';
    const ptr = this.#live('backward');
    const [B, T] = this.#cachedSize(fn);
    const n = B * T * this.C;
    checkArray(fn, 'dY', dY, n, `B*T*C of the last forward = ${B}*${T}*${this.C}`);
    const [pdy] = this.#m._scratch(fn, [n]);
    this.#m._f64(pdy, n).set(dY);
    this.#m._check(fn, this.#m.exports.mha_backward(ptr, pdy, 0));
    return { dX: this.tensor('dX').data };
  }

  // [B, T] of the forward held in the C cache (the single source of truth)
  #cachedSize(fn) {
    const out = this.#m._out();
    const code = this.#m.exports.mha_tensor_shape(
      this.#ptr,
      this.#m._tensorId(fn, 'X'),
      out,
      out + 4,
    );
    if (code !== 0) throw new Error(`${fn}: call forward first`);
    const dims = this.#m._i32(out + 4, 3);
    return [dims[0], dims[1]];
  }

  /** Zero the gradient buffer. */
  zeroGrad() {
    this.#m._check('layer.zeroGrad', this.#m.exports.mha_zero_grad(this.#live('zeroGrad')));
  }

  /** params -= lr * grads. */
  sgdStep(lr) {
    const ptr = this.#live('sgdStep');
    checkReal('layer.sgdStep', 'lr', lr);
    this.#m._check('layer.sgdStep', this.#m.exports.mha_sgd_step(ptr, lr));
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
    const [px, pt, pl] = this.#m._scratch(fn, [n, n, Math.max(steps, 1)]);
    this.#m._f64(px, n).set(X);
    this.#m._f64(pt, n).set(target);
    const code = this.#m.exports.mha_train(
      ptr,
      px,
      pt,
      B,
      T,
      causal ? MHA_CAUSAL : 0,
      lr,
      steps,
      pl,
    );
    const losses = this.#m._f64(pl, steps).slice();
    if (code !== 0) {
      const err = new Error(`${fn}: ${this.#m.errorMessage(code)}`);
      err.losses = losses;
      throw err;
    }
    return losses;
  }

  /**
   * Gradient check by float64 central differences (five-point stencil) over every entry of
   * Wq, Wk, Wv, Wo, X and the intermediates (or `samples` entries of each). Loss: 'dot'
   * (sum(G * Y), G from opts.G or default_rng(opts.seed ?? 0).standard_normal) or 'mse'
   * (against opts.target). Returns rows { tensor, shape, size, checked, maxAbs, maxRel,
   * meanRel, worst, analytic, numeric }.
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

  /**
   * The same check as a generator, for progress bars: yields { done, total, report } after every
   * `chunk` (default 256) finite-difference entries; report rows fill in as it goes. The layer
   * must not be used for anything else until the generator finishes.
   */
  *gradcheckSteps(X, opts) {
    const fn = 'layer.gradcheck';
    const ptr = this.#live('gradcheck');
    const { o, B, T, causal } = this.#dims('gradcheck', opts);
    const n = B * T * this.C;
    checkArray(fn, 'X', X, n, `B*T*C = ${B}*${T}*${this.C}`);
    const lossName = o.loss ?? 'dot';
    if (!Object.hasOwn(LOSS_KINDS, lossName)) {
      throw new Error(`${fn}: loss must be 'dot' or 'mse', got ${describe(o.loss)}`);
    }
    let aux;
    if (lossName === 'mse') {
      aux = checkArray(fn, 'target', o.target, n, 'B*T*C');
    } else if (o.G !== undefined) {
      aux = checkArray(fn, 'G', o.G, n, 'B*T*C');
    } else {
      aux = this.#m.standardNormal(n, { seed: o.seed ?? 0 });
    }
    const eps = o.eps === undefined ? 1e-3 : checkReal(fn, 'eps', o.eps);
    if (eps <= 0) throw new Error(`${fn}: eps must be > 0, got ${eps}`);
    const samples = checkInt(fn, 'samples', o.samples ?? 0, 0);
    const chunk = o.chunk === Infinity ? Infinity : checkInt(fn, 'chunk', o.chunk ?? 256);

    const ex = this.#m.exports;
    const [px, paux] = this.#m._scratch(fn, [n, n]);
    this.#m._f64(px, n).set(X);
    this.#m._f64(paux, n).set(aux);
    this.#m._check(
      fn,
      ex.mha_gradcheck_prepare(ptr, px, B, T, causal ? MHA_CAUSAL : 0, LOSS_KINDS[lossName], paux),
    );

    // The rows live in JS between slices; each slice merges into a copy in wasm memory.
    const names = this.#m.checkNames;
    const shapes = names.map((name) => this.#shape(this.#m._tensorId(fn, name)));
    const sizes = shapes.map((s) => s.reduce((a, b) => a * b, 1));
    const positions = sizes.map((s) => (samples === 0 || samples >= s ? s : samples));
    const total = positions.reduce((a, b) => a + b, 0);
    const rows = new Float64Array(names.length * CHECK_ROW_FIELDS);
    for (let w = 0; w < names.length; w++) rows[w * CHECK_ROW_FIELDS + 4] = -1;

    const report = () =>
      names.map((tensor, w) => {
        const f = rows.subarray(w * CHECK_ROW_FIELDS, (w + 1) * CHECK_ROW_FIELDS);
        return {
          tensor,
          shape: shapes[w],
          size: sizes[w],
          checked: f[1],
          maxAbs: f[2],
          maxRel: f[3],
          worst: f[4],
          analytic: f[5],
          numeric: f[6],
          meanRel: f[7],
        };
      });
    let done = 0;
    for (let w = 0; w < names.length; w++) {
      const row = rows.subarray(w * CHECK_ROW_FIELDS, (w + 1) * CHECK_ROW_FIELDS);
      for (let first = 0; first < positions[w];) {
        const count = Math.min(chunk === Infinity ? positions[w] : chunk, positions[w] - first);
        const live = this.#live('gradcheck');
        const [prow] = this.#m._scratch(fn, [CHECK_ROW_FIELDS]);
        this.#m._f64(prow, CHECK_ROW_FIELDS).set(row);
        const code = ex.mha_gradcheck_slice(live, w, samples, first, count, eps, prow);
        if (code === -6) {
          throw new Error(
            `${fn}: the check was interrupted: another call on this layer ran while it was in progress`,
          );
        }
        this.#m._check(fn, code);
        row.set(this.#m._f64(prow, CHECK_ROW_FIELDS));
        first += count;
        done += count;
        if (chunk !== Infinity) yield { done, total, report: report() };
      }
    }
    yield { done, total, report: report() };
  }

  #shape(id) {
    const out = this.#m._out();
    this.#m._check(
      'layer.tensor',
      this.#m.exports.mha_tensor_shape(this.#live('tensor'), id, out, out + 4),
    );
    const rank = this.#m._i32(out, 1)[0];
    return Array.from(this.#m._i32(out + 4, rank));
  }

  /**
   * A copy of a weight, gradient or cached intermediate by its course name ('Q', 'scores', 'att',
   * 'dscores', 'dX', ...; see mha.tensorNames): { data: Float64Array, shape }.
   */
  tensor(name) {
    const fn = 'layer.tensor';
    const ptr = this.#live('tensor');
    const id = this.#m._tensorId(fn, name);
    const shape = this.#shape(id);
    const p = this.#m.exports.mha_tensor(ptr, id, 0);
    if (!p) {
      throw new Error(
        `${fn}: ${name} does not exist yet (run ${name.startsWith('d') ? 'backward' : 'forward'} first)`,
      );
    }
    const n = shape.reduce((a, b) => a * b, 1);
    return { data: this.#m._f64(p, n).slice(), shape };
  }

  /** Overwrite a weight or cached intermediate (same length) by name. */
  setTensor(name, data) {
    const fn = 'layer.setTensor';
    const ptr = this.#live('setTensor');
    const id = this.#m._tensorId(fn, name);
    const shape = this.#shape(id);
    const n = shape.reduce((a, b) => a * b, 1);
    checkArray(fn, 'data', data, n, `the size of ${name} (${shape.join('x')})`);
    const p = this.#m.exports.mha_tensor(ptr, id, 0);
    if (!p) throw new Error(`${fn}: ${name} does not exist yet`);
    this.#m._f64(p, n).set(data);
  }

  /**
   * Recompute everything downstream of an edited intermediate ('Q', 'K', 'V', 'scores', 'att',
   * 'headout' or 'concat'); returns { Y, attention } like forward.
   */
  forwardFrom(name) {
    const fn = 'layer.forwardFrom';
    const ptr = this.#live('forwardFrom');
    if (!FORWARD_FROM.includes(name)) {
      throw new Error(
        `${fn}: name must be one of ${FORWARD_FROM.join(', ')} (the intermediates forward can restart from), got ${describe(name)}`,
      );
    }
    this.#m._check(fn, this.#m.exports.mha_forward_from(ptr, this.#m._tensorId(fn, name)));
    return { Y: this.tensor('Y').data, attention: this.tensor('att').data };
  }

  /** Release the layer's memory; any later call throws. */
  free() {
    const ptr = this.#live('free');
    this.#m.exports.mha_free(ptr);
    this.#ptr = 0;
  }
}
