// mha.d.ts - TypeScript types of web/mha.js, the JS API of mha-wasm (hand-written; kept honest by
// tests/types: a typed usage file must type-check with `tsc --noEmit`, a wrong one must not).
//
//   import { loadMHA } from 'mha-wasm';
//   const mha = await loadMHA();
//   const layer = mha.createLayer({ C: 64, heads: 4, seed: 42 });
//   const { Y, attention } = layer.forward(X, { B: 2, T: 6 });
//
// Arrays are flat, row-major. Results are fresh Float64Array copies, except the live views
// `layer.weights`, `layer.grads`, `layer.params` and `layer.gradBuffer`. Every bad argument throws
// an Error whose message names the function and the argument; a failed call changes nothing.

/**
 * An array argument: a `Float64Array`, another (non-BigInt) typed array, or a plain array of
 * numbers. Its length must be exactly what the call expects (for example B*T*C).
 */
export type ArrayInput =
  | Float64Array
  | Float32Array
  | Int32Array
  | Uint32Array
  | Int16Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | readonly number[];

/**
 * A seed: an integer 0 ... 2^53-1, or a BigInt 0n ... 2^64-1 (the legacy generator takes
 * 0 ... 2^32-1 only, as NumPy does).
 */
export type Seed = number | bigint;

/**
 * The random generator: `'default_rng'` is `np.random.default_rng(seed)` (PCG64, ziggurat
 * normals); `'legacy'` is `np.random.seed(seed); np.random.randn` (MT19937, polar Box–Muller).
 */
export type RngKind = 'default_rng' | 'legacy';

/** The loss of a gradient check: `'dot'` is L = sum(G * Y), `'mse'` is L = mean((Y - target)^2). */
export type LossKind = 'dot' | 'mse';

/** The four weight matrices, each (C, C), used as Y = X @ W. */
export type WeightName = 'Wq' | 'Wk' | 'Wv' | 'Wo';

/**
 * Every tensor `layer.tensor()` can read, by its course name, in the order of the C tensor table
 * (`mha.tensorNames`, from `MHA_TENSORS` in c/mha.h; tests/tensor-table.test.mjs checks this list
 * against it). Shapes (`mha.tensorShape`): weights and their gradients (C, C); X, concat, Y, dY,
 * dconcat, dQm, dKm, dVm, dX (B, T, C); Q, K, V, headout and their gradients (B, h, T, hs);
 * scores, att, datt, dscores (B, h, T, T).
 */
export type TensorName =
  | 'Wq'
  | 'Wk'
  | 'Wv'
  | 'Wo'
  | 'dWq'
  | 'dWk'
  | 'dWv'
  | 'dWo'
  | 'X'
  | 'Q'
  | 'K'
  | 'V'
  | 'scores'
  | 'att'
  | 'headout'
  | 'concat'
  | 'Y'
  | 'dY'
  | 'dconcat'
  | 'dheadout'
  | 'dV'
  | 'datt'
  | 'dscores'
  | 'dQ'
  | 'dK'
  | 'dQm'
  | 'dKm'
  | 'dVm'
  | 'dX';

/**
 * What a tensor is (`MHA_KIND_*`): a weight, the input X, an intermediate of the forward, its
 * output Y, or a gradient.
 */
export type TensorKind = 'param' | 'input' | 'intermediate' | 'output' | 'gradient';

/** One line of the C tensor table (`mha.tensors`). */
export interface TensorInfo {
  /** Its id in the C API (`MHA_T_*`), its index in `mha.tensors`. */
  readonly id: number;
  /** Its course name. */
  readonly name: TensorName;
  readonly kind: TensorKind;
  /**
   * The forward stage (`MHA_STAGE_*` in `mha.constants`) `layer.forwardFrom(name)` restarts at
   * after the tensor was edited; null if forwardFrom refuses the tensor.
   */
  readonly stage: number | null;
  /** The name of its gradient, or null. */
  readonly grad: TensorName | null;
  /** The step of lesson 4's backward (1 ... 13) that computes it; 0 if none. */
  readonly step: number;
  /** Its row in the gradient-check report, or null if the check does not compare it. */
  readonly check: number | null;
}

/** Sizes for `mha.tensorShape`. */
export interface ShapeOptions {
  B: number;
  T: number;
  C: number;
  /** Must divide C. */
  heads: number;
}

/** The intermediates `layer.forwardFrom()` can restart the forward pass from. */
export type ForwardFromName = 'Q' | 'K' | 'V' | 'scores' | 'att' | 'headout' | 'concat';

/** The tensors the gradient check compares, in report order (`mha.checkNames`). */
export type CheckName =
  'Wq' | 'Wk' | 'Wv' | 'Wo' | 'X' | 'Q' | 'K' | 'V' | 'scores' | 'att' | 'headout' | 'concat';

/** Where `loadMHA` gets the module: a URL (browser: fetched; Node: read), a file path (Node), or the bytes. */
export type WasmSource = string | URL | ArrayBuffer | ArrayBufferView;

/**
 * Instantiate the module. `source` defaults to `mha.wasm` beside `mha.js` (in the package:
 * `mha-wasm/mha.wasm`); the browser fetches it, Node reads it from disk. Rejects if it cannot be
 * read or fetched.
 */
export function loadMHA(source?: WasmSource): Promise<MHA>;

/** Options of `mha.createLayer`. */
export interface LayerOptions {
  /** Model width (channels), an integer >= 1. */
  C: number;
  /** Number of heads, an integer >= 1 that divides C. */
  heads: number;
  /** Seed of the weights' stream. Default 0. */
  seed?: Seed;
  /** The generator of the weights' stream. Default `'default_rng'`. */
  rng?: RngKind;
  /** Each weight is scale · a standard normal; a finite number. Default 1/√C. */
  scale?: number;
}

/** Options of `mha.standardNormal`. */
export interface StandardNormalOptions {
  /** Default 0. */
  seed?: Seed;
  /** Default `'default_rng'`. */
  rng?: RngKind;
}

/** Sizes of `mha.splitHeads` / `mha.mergeHeads`: x is (B, T, C) or (B, heads, T, C/heads). */
export interface HeadsOptions {
  B: number;
  T: number;
  C: number;
  /** Must divide C. */
  heads: number;
}

/** Options of `mha.singleHead` (lesson 1): X is (B, T, C), each projection (C, headSize). */
export interface SingleHeadOptions {
  B: number;
  T: number;
  C: number;
  headSize: number;
  /** (C, headSize) query projection. */
  Wq: ArrayInput;
  /** (C, headSize) key projection. */
  Wk: ArrayInput;
  /** (C, headSize) value projection. */
  Wv: ArrayInput;
  /** Mask keys after the query (attention exactly 0 above the diagonal). Default false. */
  causal?: boolean;
}

/** The result of `mha.singleHead`. */
export interface SingleHeadResult {
  /** (B, T, T): softmax(X Wq (X Wk)ᵀ / √headSize), each row sums to 1. */
  att: Float64Array;
  /** (B, T, headSize): att @ (X Wv). */
  out: Float64Array;
}

/** The result of `mha.mseLoss`. */
export interface MseLossResult {
  /** mean((Y - target)^2). */
  loss: number;
  /** dloss/dY = 2 (Y - target) / n, same length as Y. */
  dY: Float64Array;
}

/** Sizes of a forward pass over X (B, T, C). */
export interface ForwardOptions {
  /** Batch size, an integer >= 1. */
  B: number;
  /** Tokens per sequence, an integer >= 1. */
  T: number;
  /** Causal mask (a token attends to itself and earlier tokens only). Default false. */
  causal?: boolean;
}

/** The result of `layer.forward` and `layer.forwardFrom` (copies). */
export interface ForwardResult {
  /** (B, T, C). */
  Y: Float64Array;
  /** (B, heads, T, T): the attention weights `att`, each row sums to 1. */
  attention: Float64Array;
}

/** The result of `layer.backward` (a copy). */
export interface BackwardResult {
  /** (B, T, C): dL/dX. */
  dX: Float64Array;
}

/** Options of `layer.train`: SGD on the MSE loss between forward(X) and target. */
export interface TrainOptions extends ForwardOptions {
  /** Number of steps, an integer >= 0 (0 only validates). Default 10. */
  steps?: number;
  /** Learning rate, a finite number. Default 0.1. */
  lr?: number;
}

/**
 * The Error `layer.train` throws when the loss stops being finite (learning rate far too large):
 * the weights are kept from the last finite step.
 */
export interface TrainError extends Error {
  /** The loss before each step, NaN for the steps not taken. */
  losses: Float64Array;
}

/** Options common to both losses of the gradient check. */
export interface GradcheckCommonOptions extends ForwardOptions {
  /** Finite-difference step ε, a finite number > 0. Default 1e-3 (MHA_GRADCHECK_EPS). */
  eps?: number;
  /**
   * `'five-point'` (default): (8 (L(x+ε) − L(x−ε)) − (L(x+2ε) − L(x−2ε))) / 12ε, error O(ε⁴);
   * `'two-point'`: (L(x+ε) − L(x−ε)) / 2ε, error O(ε²), the central difference a notebook writes.
   */
  stencil?: 'five-point' | 'two-point';
  /** 0 (default): every entry of every tensor; N > 0: N entries spread evenly over each tensor. */
  samples?: number;
}

/** The dot loss L = sum(G * Y): G is `G`, or standard normals from default_rng(`seed`). */
export interface GradcheckDotOptions extends GradcheckCommonOptions {
  /** Default `'dot'`. */
  loss?: 'dot';
  /** (B, T, C) weights of the dot loss, so dL/dY = G. */
  G?: ArrayInput;
  /** When G is not given: G = default_rng(seed).standard_normal(B*T*C). Default 0. */
  seed?: Seed;
}

/** The MSE loss L = mean((Y - target)^2). */
export interface GradcheckMseOptions extends GradcheckCommonOptions {
  loss: 'mse';
  /** (B, T, C). */
  target: ArrayInput;
}

/** Options of `layer.gradcheck`. */
export type GradcheckOptions = GradcheckDotOptions | GradcheckMseOptions;

/** Options of `layer.gradcheckSteps`: those of `gradcheck` plus the chunk size. */
export type GradcheckStepsOptions = GradcheckOptions & {
  /** Finite-difference entries between two yields, an integer >= 1. Default 256. */
  chunk?: number;
};

/**
 * One row of the gradient-check report: one checked tensor. Relative error is
 * |a - n| / max(|a|, |n|, 1e-12) with a the analytic and n the numeric gradient; a non-finite
 * gradient counts as an infinite error. The course passes a tensor when maxRel <= 1e-7.
 * normRel is the norm-wise figure many courses print, ‖a − n‖ / (‖a‖ + ‖n‖) over the checked
 * entries: it weighs entries by their size, so it is far smaller than the strict per-entry maxRel.
 */
export interface GradcheckRow {
  /** Which tensor. */
  tensor: CheckName;
  /** Its shape, e.g. [64, 64] or [2, 4, 6, 16]. */
  shape: number[];
  /** Its number of entries. */
  size: number;
  /** Entries compared so far (size, or `samples`, once done). */
  checked: number;
  /** max |analytic - numeric| over the checked entries. */
  maxAbs: number;
  /** max relative error over the checked entries. */
  maxRel: number;
  /** max |a − n| / max(|a| + |n|, 1e-8) over the checked entries (the form of cs231n's notes). */
  maxRelSum: number;
  /** Mean relative error over the checked entries. */
  meanRel: number;
  /**
   * Norm-wise relative error ‖a − n‖ / (‖a‖ + ‖n‖) over the checked entries (2-norms; the
   * denominator at least 1e-12), in [0, 1]; Infinity if a gradient is not finite.
   */
  normRel: number;
  /** Flat index of the entry with the largest relative error (-1 before any is checked). */
  worst: number;
  /** The analytic gradient at `worst`. */
  analytic: number;
  /** The numeric gradient at `worst`. */
  numeric: number;
}

/** What `layer.gradcheckSteps` yields after every chunk. */
export interface GradcheckProgress {
  /** Entries checked so far. */
  done: number;
  /** Entries to check in all. */
  total: number;
  /** The report so far (rows fill in as the check goes). */
  report: GradcheckRow[];
}

/** A copy of one tensor with its shape (`layer.tensor`). */
export interface Tensor {
  /** Flat row-major values; length is the product of `shape`. */
  data: Float64Array;
  /** Its shape, e.g. [2, 4, 6, 6] for scores. */
  shape: number[];
}

/** The four (C, C) weight matrices (or their gradients), each a Float64Array of C*C. */
export interface WeightViews {
  Wq: Float64Array;
  Wk: Float64Array;
  Wv: Float64Array;
  Wo: Float64Array;
}

/**
 * A NumPy-identical random stream from `mha.rng`. Each call continues the stream exactly as the
 * same sequence of NumPy calls would. Release it with `free()`; any later call throws.
 */
export interface Rng {
  /** The next n standard normals (`rng.standard_normal(n)` / `np.random.randn(n)`); n >= 0. */
  standardNormal(n: number): Float64Array;
  /** The next n uniform doubles in [0, 1) (`rng.random(n)` / `np.random.rand(n)`); n >= 0. */
  random(n: number): Float64Array;
  /** The next n normals loc + scale · z (`rng.normal(loc, scale, n)`); loc and scale finite. */
  normal(loc: number, scale: number, n: number): Float64Array;
  /** Release the generator; any later call throws. */
  free(): void;
}

/**
 * A multi-head self-attention layer from `mha.createLayer`, owning its weights, gradients and the
 * cache of the last forward/backward in wasm memory. Release it with `free()`; any later call
 * throws.
 */
export interface Layer {
  /** Model width. */
  readonly C: number;
  /** Number of heads. */
  readonly heads: number;
  /** Head size C / heads. */
  readonly headSize: number;

  /**
   * Live, writable views {Wq, Wk, Wv, Wo} (each C*C) of the weights. Fresh on each access: a view
   * dies when wasm memory grows, so don't keep one across calls.
   */
  readonly weights: WeightViews;
  /** Live views {Wq, Wk, Wv, Wo} of the accumulated gradients dWq ... dWo (same caveat). */
  readonly grads: WeightViews;
  /** All parameters [Wq | Wk | Wv | Wo] as one live view of 4*C*C. */
  readonly params: Float64Array;
  /** All gradients [dWq | dWk | dWv | dWo] as one live view of 4*C*C. */
  readonly gradBuffer: Float64Array;

  /**
   * Forward pass: X (B, T, C) of length B*T*C → { Y (B, T, C), attention (B, heads, T, T) }.
   * Caches X, Q, K, V, scores, att, headout, concat and Y for `backward` and `tensor`. NaN or Inf
   * in X propagate to Y. Throws if the cache for this B and T would not fit the 1 GiB memory.
   */
  forward(X: ArrayInput, opts: ForwardOptions): ForwardResult;
  /**
   * Backward pass of the last forward: dY (B, T, C) → { dX }. Adds dWq ... dWo to `grads` (call
   * `zeroGrad` first) and keeps every intermediate gradient (dconcat ... dK, the merged dQm, dKm,
   * dVm, and dX) for `tensor`. Throws before any forward.
   */
  backward(dY: ArrayInput): BackwardResult;
  /** Set the gradient buffer to zero. */
  zeroGrad(): void;
  /** One SGD step: params -= lr · grads (lr finite). */
  sgdStep(lr: number): void;
  /**
   * `steps` steps of SGD on the MSE loss between forward(X) and target, both (B, T, C) and finite.
   * Returns the loss before each step (length `steps`). Throws a {@link TrainError} if the loss
   * stops being finite.
   */
  train(X: ArrayInput, target: ArrayInput, opts: TrainOptions): Float64Array;
  /**
   * Gradient check by float64 central differences (five-point stencil) over every entry of Wq,
   * Wk, Wv, Wo, X and the intermediates Q, K, V, scores, att, headout, concat (or `samples`
   * entries of each). Returns one row per tensor, in `mha.checkNames` order. Afterwards the
   * weights are unchanged, `grads` holds this loss's gradient, and the cache its forward/backward.
   */
  gradcheck(X: ArrayInput, opts: GradcheckOptions): GradcheckRow[];
  /**
   * One entry's numeric gradient at several steps ε (for a figure of the error against ε): the
   * check of `gradcheck` prepared once, then entry `index` of checked tensor `tensor` differenced
   * at each ε of `eps`.
   */
  numericGradient(
    X: ArrayInput,
    opts: GradcheckOptions & { tensor: CheckName; index?: number; eps: number | number[] },
  ): { analytic: number; numeric: Float64Array };
  /**
   * The same check as a generator, for progress bars: yields { done, total, report } after every
   * `chunk` entries and once at the end. Don't use the layer for anything else until it finishes.
   */
  gradcheckSteps(
    X: ArrayInput,
    opts: GradcheckStepsOptions,
  ): Generator<GradcheckProgress, void, unknown>;
  /**
   * A copy of a weight, gradient or cached intermediate with its shape. Throws if it does not
   * exist yet (an intermediate before forward, an intermediate gradient before backward).
   */
  tensor(name: TensorName): Tensor;
  /** Overwrite a weight or cached intermediate in place (data of exactly its size). */
  setTensor(name: TensorName, data: ArrayInput): void;
  /** Recompute everything downstream of an intermediate edited with `setTensor`; returns like `forward`. */
  forwardFrom(name: ForwardFromName): ForwardResult;
  /** Release the layer's memory; any later call throws. */
  free(): void;
}

/**
 * The raw wasm exports: the C ABI of `c/mha.h` (pointers, sizes and status codes are numbers) plus
 * `malloc`, `free` and the module's `memory`. For calls the JS API does not wrap.
 */
export interface MHAExports {
  readonly memory: WebAssembly.Memory;
  malloc(bytes: number): number;
  free(ptr: number): void;
  mha_strerror(code: number): number;
  mha_version(): number;
  mha_rng_create(kind: number, seedLo: number, seedHi: number, out: number): number;
  mha_rng_free(rng: number): void;
  mha_rng_standard_normal(rng: number, out: number, n: number): number;
  mha_rng_random(rng: number, out: number, n: number): number;
  mha_rng_normal(rng: number, loc: number, scale: number, out: number, n: number): number;
  mha_create(C: number, h: number, out: number): number;
  mha_free(layer: number): void;
  mha_layer_C(layer: number): number;
  mha_layer_heads(layer: number): number;
  mha_init_weights(
    layer: number,
    seedLo: number,
    seedHi: number,
    rngKind: number,
    scale: number,
  ): number;
  mha_params(layer: number): number;
  mha_grads(layer: number): number;
  mha_num_params(layer: number): number;
  mha_forward(layer: number, X: number, B: number, T: number, flags: number, Y: number): number;
  mha_backward(layer: number, dY: number, dX: number): number;
  mha_zero_grad(layer: number): number;
  mha_forward_from(layer: number, stage: number): number;
  mha_tensor(layer: number, id: number, len: number): number;
  mha_tensor_name(id: number): number;
  mha_tensor_shape(layer: number, id: number, rank: number, dims: number): number;
  mha_mse_loss(Y: number, target: number, n: number, loss: number, dY: number): number;
  mha_sgd_step(layer: number, lr: number): number;
  mha_train(
    layer: number,
    X: number,
    target: number,
    B: number,
    T: number,
    flags: number,
    lr: number,
    steps: number,
    losses: number,
  ): number;
  mha_check_name(which: number): number;
  mha_check_tensor(which: number): number;
  mha_tensor_count(): number;
  mha_tensor_kind(id: number): number;
  mha_tensor_stage(id: number): number;
  mha_tensor_grad(id: number): number;
  mha_tensor_step(id: number): number;
  mha_grad_order(i: number): number;
  mha_tensor_shape_for(
    id: number,
    B: number,
    T: number,
    C: number,
    h: number,
    rank: number,
    dims: number,
  ): number;
  mha_constant_count(): number;
  mha_constant_name(i: number): number;
  mha_constant_value(i: number): number;
  mha_cache_bytes(B: number, T: number, C: number, h: number): number;
  mha_gradcheck(
    layer: number,
    X: number,
    B: number,
    T: number,
    flags: number,
    lossKind: number,
    aux: number,
    eps: number,
    samples: number,
    report: number,
  ): number;
  mha_gradcheck_prepare(
    layer: number,
    X: number,
    B: number,
    T: number,
    flags: number,
    lossKind: number,
    aux: number,
  ): number;
  mha_gradcheck_slice(
    layer: number,
    which: number,
    samples: number,
    first: number,
    count: number,
    eps: number,
    row: number,
  ): number;
  mha_split_heads(x: number, B: number, T: number, C: number, h: number, out: number): number;
  mha_merge_heads(x: number, B: number, T: number, C: number, h: number, out: number): number;
  mha_single_head(
    X: number,
    B: number,
    T: number,
    C: number,
    hs: number,
    Wq: number,
    Wk: number,
    Wv: number,
    flags: number,
    att: number,
    out: number,
  ): number;
}

/** The loaded module (`await loadMHA()`): layers, random streams and the lessons' building blocks. */
export interface MHA {
  /** The library version "MAJOR.MINOR.PATCH", as the C side reports it (`mha_version()`). */
  readonly version: string;
  /** The raw wasm exports (the C ABI of c/mha.h). */
  readonly exports: MHAExports;
  /**
   * Every constant of c/mha.h by its C name, read from the module (`mha_constant_*`): status
   * codes (`MHA_OK`, `MHA_ENOFORWARD`, ...), flags, kinds, stages, tensor ids `MHA_T_*`, check
   * rows `MHA_CHECK_*`, `MHA_GRADCHECK_EPS`, and layouts such as `'sizeof(mha_check_row)'` and
   * `'offsetof(mha_check_row, max_rel)'`.
   */
  readonly constants: Readonly<Record<string, number>>;
  /** The C tensor table, one entry per tensor, by id (frozen). */
  readonly tensors: readonly TensorInfo[];
  /** Names accepted by `layer.tensor()`, in the C table's order (a fresh copy). */
  readonly tensorNames: TensorName[];
  /** Tensors compared by the gradient check, in report order (a fresh copy). */
  readonly checkNames: CheckName[];
  /**
   * The gradients lesson 4 shows, in the order its backward computes them: dWo, dconcat,
   * dheadout, dV, datt, dscores, dQ, dK, dWq, dWk, dWv, dX (a fresh copy).
   */
  readonly gradOrder: TensorName[];
  /** The shape of a tensor for these sizes, without a layer (e.g. [B, heads, T, T] for 'att'). */
  tensorShape(name: TensorName, sizes: ShapeOptions): number[];
  /** The C library's message for a status code (`mha_strerror`). */
  errorMessage(code: number): string;

  /**
   * A layer of width C with `heads` heads; Wq, Wk, Wv, Wo = scale · standard normals drawn in
   * that order from one NumPy stream (`rng`, `seed`). Throws if the weights and gradients would
   * not fit the module's 1 GiB memory.
   */
  createLayer(opts: LayerOptions): Layer;
  /** A NumPy-identical random stream. Defaults: seed 0, `'default_rng'`. Call `.free()` when done. */
  rng(seed?: Seed, kind?: RngKind): Rng;
  /** n standard normals from a fresh stream: `np.random.default_rng(seed).standard_normal(n)`. */
  standardNormal(n: number, opts?: StandardNormalOptions): Float64Array;
  /** split_heads: x (B, T, C) → (B, heads, T, C/heads). */
  splitHeads(x: ArrayInput, opts: HeadsOptions): Float64Array;
  /** merge_heads: x (B, heads, T, C/heads) → (B, T, C); mergeHeads(splitHeads(x)) equals x exactly. */
  mergeHeads(x: ArrayInput, opts: HeadsOptions): Float64Array;
  /** Single-head attention with its own (C, headSize) projections (lesson 1). */
  singleHead(X: ArrayInput, opts: SingleHeadOptions): SingleHeadResult;
  /** Mean squared error and its gradient; Y non-empty, target of the same length. */
  mseLoss(Y: ArrayInput, target: ArrayInput): MseLossResult;
}
