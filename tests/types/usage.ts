// usage.ts - the whole JS API of mha-wasm, typed through the package's public entry ('mha-wasm',
// resolved by the package's own `exports` map to web/mha.d.ts and web/mha.js).
//
// tests/types.test.mjs type-checks it (`tsc --noEmit -p tests/types`), then compiles it and runs it
// against the real module, so the types must both compile and describe what the code returns.
// The `@ts-expect-error` lines are calls the types must refuse: if the types ever became loose
// enough to accept one, tsc would report the unused directive and the check would fail.

import { loadMHA } from 'mha-wasm';
import type {
  ArrayInput,
  CheckName,
  ForwardResult,
  GradcheckOptions,
  GradcheckProgress,
  GradcheckRow,
  Layer,
  LayerOptions,
  MHA,
  MHAExports,
  Rng,
  Tensor,
  TensorInfo,
  TensorKind,
  TensorName,
  TrainError,
  WeightViews,
} from 'mha-wasm';

function check(cond: boolean, what: string): asserts cond {
  if (!cond) throw new Error(`usage.ts: ${what}`);
}

const B = 2,
  T = 3,
  C = 8,
  heads = 2;
const n = B * T * C;

// ---- the module
const mha: MHA = await loadMHA();
const version: string = mha.version;
check(/^\d+\.\d+\.\d+$/.test(version), `version ${version}`);
const names: TensorName[] = mha.tensorNames;
const checkNames: CheckName[] = mha.checkNames;
check(names.length === 29 && checkNames.length === 12, 'names');
// the C tensor table, its shapes, lesson 4's gradients and the header's constants
const tensors: readonly TensorInfo[] = mha.tensors;
const dQm: TensorInfo | undefined = tensors.find((x) => x.name === 'dQm');
const kind: TensorKind | undefined = dQm?.kind;
check(kind === 'gradient' && dQm?.step === 9 && dQm.grad === null && dQm.check === null, 'dQm');
const restart: number | null = tensors[names.indexOf('V')].stage;
check(restart === mha.constants.MHA_STAGE_HEADOUT, 'V restarts at headout');
const attShape: number[] = mha.tensorShape('att', { B, T, C, heads });
check(attShape.join() === [B, heads, T, T].join(), 'tensorShape');
const order: TensorName[] = mha.gradOrder;
check(order.length === 12 && order[0] === 'dWo' && order[11] === 'dX', 'gradOrder');
const noForward: number = mha.constants.MHA_ENOFORWARD;
check(mha.errorMessage(noForward).includes('forward'), 'constants');
const message: string = mha.errorMessage(-1);
check(message.includes('NULL'), message);
const ex: MHAExports = mha.exports;
check(ex.memory.buffer.byteLength > 0, 'memory');
check(typeof ex.mha_forward === 'function', 'raw export');

// ---- random streams
const rng: Rng = mha.rng(7, 'default_rng');
const X: Float64Array = rng.standardNormal(n);
const target: Float64Array = rng.normal(0, 0.5, n);
const u: Float64Array = rng.random(4);
check(
  u.every((v) => v >= 0 && v < 1),
  'random',
);
rng.free();
const legacy = mha.rng(2n ** 31n, 'legacy');
legacy.free();
const G: Float64Array = mha.standardNormal(n, { seed: 3 });
const same = mha.standardNormal(n, { seed: 7 });
check(same[0] === X[0], 'one-shot stream equals the generator');

// ---- lesson building blocks
const split: Float64Array = mha.splitHeads(X, { B, T, C, heads });
const merged: Float64Array = mha.mergeHeads(split, { B, T, C, heads });
check(
  merged.every((v, i) => v === X[i]),
  'merge(split(x)) == x',
);
const Wh: number[] = Array.from({ length: C * 4 }, (_, i) => Math.sin(i));
const single = mha.singleHead(X, {
  B,
  T,
  C,
  headSize: 4,
  Wq: Wh,
  Wk: Wh,
  Wv: Float32Array.from(Wh),
  causal: true,
});
const att1: Float64Array = single.att;
const out1: Float64Array = single.out;
check(att1.length === B * T * T && out1.length === B * T * 4, 'singleHead shapes');
const { loss: mse, dY: dMse } = mha.mseLoss(X, target);
check(Number.isFinite(mse) && dMse.length === n, 'mseLoss');

// ---- a layer
const opts: LayerOptions = { C, heads, seed: 42, rng: 'default_rng', scale: 0.125 };
const layer: Layer = mha.createLayer(opts);
check(layer.C === C && layer.heads === heads && layer.headSize === C / heads, 'layer sizes');
const w: WeightViews = layer.weights;
check(
  w.Wq.length === C * C &&
    layer.params.length === 4 * C * C &&
    layer.gradBuffer.length === 4 * C * C,
  'views',
);

const fwd: ForwardResult = layer.forward(X, { B, T, causal: false });
check(fwd.Y.length === n && fwd.attention.length === B * heads * T * T, 'forward shapes');
const scores: Tensor = layer.tensor('scores');
check(
  scores.shape.join() === [B, heads, T, T].join() && scores.data.length === B * heads * T * T,
  'scores',
);

layer.zeroGrad();
const { dX } = layer.backward(G);
check(dX.length === n, 'backward');
const dWq: Float64Array = layer.grads.Wq;
check(
  dWq.some((v) => v !== 0),
  'grads accumulated',
);
check(layer.tensor('dscores').shape.length === 4, 'dscores');

const headout = layer.tensor('headout');
const edited = Float64Array.from(headout.data, (v) => v + 1);
layer.setTensor('headout', edited);
const again: ForwardResult = layer.forwardFrom('headout');
check(again.Y.length === n, 'forwardFrom');

const dotOpts: GradcheckOptions = { B, T, G, eps: 1e-3 };
const report: GradcheckRow[] = layer.gradcheck(X, dotOpts);
check(report.length === 12, 'report rows');
for (const row of report) {
  const name: CheckName = row.tensor;
  const shape: number[] = row.shape;
  check(
    row.checked === row.size && row.size === shape.reduce((a, b) => a * b, 1),
    `${name} checked`,
  );
  check(
    row.maxRel <= 1e-7 && row.maxAbs >= 0 && row.meanRel <= row.maxRel && row.normRel <= row.maxRel,
    `${name} maxRel ${row.maxRel}`,
  );
  check(
    row.worst >= 0 && Number.isFinite(row.analytic) && Number.isFinite(row.numeric),
    `${name} worst`,
  );
}
const mseReport = layer.gradcheck(X, { B, T, loss: 'mse', target, samples: 5 });
check(
  mseReport.every((r) => r.checked === Math.min(5, r.size)),
  'sampled mse check',
);
const seeded = layer.gradcheck(X, { B, T, loss: 'dot', seed: 9n, samples: 2 });
check(seeded.length === 12, 'seeded');

let last: GradcheckProgress | undefined;
for (const p of layer.gradcheckSteps(X, { B, T, chunk: 100, samples: 10 })) last = p;
check(
  last !== undefined && last.done === last.total && last.report.length === 12,
  'gradcheckSteps',
);

const losses: Float64Array = layer.train(X, target, { B, T, steps: 5, lr: 0.1, causal: true });
check(losses.length === 5 && losses[4] < losses[0], 'training lowers the loss');
layer.sgdStep(0.01);
let diverged = false;
try {
  layer.train(X, target, { B, T, steps: 3, lr: 1e300 });
} catch (e) {
  const err = e as TrainError;
  diverged =
    err.losses instanceof Float64Array &&
    err.losses.length === 3 &&
    err.message.includes('diverged');
}
check(diverged, 'train with lr 1e300 throws a TrainError with the losses');
layer.free();

// ---- calls the types must refuse (each fails the check if it ever compiles without error).
// Never called: only the type checker looks at it.
export function refused(frozen: Layer): void {
  // @ts-expect-error heads is required
  mha.createLayer({ C: 64 });
  // @ts-expect-error rng is 'default_rng' or 'legacy'
  mha.createLayer({ C: 64, heads: 4, rng: 'pcg64' });
  // @ts-expect-error seeds are numbers or BigInts
  mha.rng('42');
  // @ts-expect-error forward needs the sizes B and T
  frozen.forward(X);
  // @ts-expect-error X is an array of numbers, not strings
  frozen.forward(['1', '2'], { B: 1, T: 1 });
  // @ts-expect-error not a tensor name
  frozen.tensor('logits');
  // @ts-expect-error forward cannot restart from Y
  frozen.forwardFrom('Y');
  // @ts-expect-error tensorShape needs B, T, C and heads
  mha.tensorShape('Q', { C: 8, heads: 2 });
  // @ts-expect-error the tensor table is read-only
  mha.tensors[0].step = 3;
  // @ts-expect-error the mse check needs a target
  frozen.gradcheck(X, { B, T, loss: 'mse' });
  // @ts-expect-error there is no 'l1' loss
  frozen.gradcheck(X, { B, T, loss: 'l1' });
  // @ts-expect-error the report's rows have no 'relErr'
  report[0].relErr;
  // @ts-expect-error the version is read-only
  mha.version = '9.9.9';
  // @ts-expect-error train returns the losses, not a number
  const notNumber: number = frozen.train(X, target, { B, T });
  void notNumber;
  // @ts-expect-error a plain array is an input, never a result
  const result: Float64Array = [1, 2, 3] as ArrayInput;
  void result;
}

console.log(`usage.ts: ok (mha-wasm ${version}, ${report.length} gradient-check rows pass)`);
