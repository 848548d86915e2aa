// Bad input through the JS API (web/mha.js): every validation path throws an Error whose message
// names the function and the argument, and a failed call changes nothing — after each error the
// layer's weights and cached forward are bit-identical to before, and a new forward still gives
// the Y captured before any error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, bitEqual, bitMismatches } from './helpers.mjs';

const mha = await loadMHA();
const C = 64,
  H = 4,
  B = 2,
  T = 6,
  n = B * T * C;
const X = mha.standardNormal(n, { seed: 7 });
const target = mha.standardNormal(n, { seed: 8 });
const newLayer = () => mha.createLayer({ C, heads: H, seed: 42, rng: 'default_rng', scale: 0.125 });

// The shared layer and what it computed before any error.
const layer = newLayer();
const refY = layer.forward(X, { B, T }).Y;
const refParams = layer.params.slice();
layer.backward(target);
const refDX = layer.tensor('dX').data;
const refGrads = layer.gradBuffer.slice();

// The layer is untouched by the failed call, then still computes the same forward.
function assertUnchanged(label) {
  assert.ok(bitEqual(layer.params, refParams), `${label}: weights changed`);
  assert.ok(bitEqual(layer.tensor('Y').data, refY), `${label}: cached Y changed`);
  assert.ok(bitEqual(layer.tensor('dX').data, refDX), `${label}: cached dX changed`);
  assert.ok(bitEqual(layer.gradBuffer, refGrads), `${label}: gradients changed`);
  assert.deepEqual(layer.tensor('Y').shape, [B, T, C], `${label}: cached shape changed`);
  assert.equal(bitMismatches(layer.forward(X, { B, T }).Y, refY), 0, `${label}: forward changed`);
  // forward again leaves the cache as it was; restore the backward part too
  layer.backward(target);
  assert.ok(bitEqual(layer.tensor('dX').data, refDX), `${label}: backward changed`);
  layer.zeroGrad();
  layer.backward(target);
  assert.ok(bitEqual(layer.gradBuffer, refGrads), `${label}: gradients after zeroGrad + backward`);
}

// [label, call, regexes the message must match (function, then argument)]
function runCases(t, cases) {
  for (const [label, call, ...res] of cases) {
    let err = null;
    try {
      call();
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, `${label}: no Error thrown`);
    for (const re of res) assert.match(err.message, re, `${label}: message "${err.message}"`);
    assertUnchanged(label);
    t.diagnostic(`${label}: ${err.message}`);
  }
}

test('createLayer: C, heads, rng, seed and scale are validated and named', (t) => {
  const ok = { C, heads: H };
  runCases(t, [
    ['C missing', () => mha.createLayer({ heads: 4 }), /^createLayer: /, /\bC\b/],
    ['C 0', () => mha.createLayer({ ...ok, C: 0 }), /^createLayer: /, /\bC\b/],
    ['C -1', () => mha.createLayer({ ...ok, C: -1 }), /^createLayer: /, /\bC\b/],
    ['C 1.5', () => mha.createLayer({ ...ok, C: 1.5 }), /^createLayer: /, /\bC\b/, /integer/],
    ['C NaN', () => mha.createLayer({ ...ok, C: NaN }), /^createLayer: /, /\bC\b/],
    ["C '64'", () => mha.createLayer({ ...ok, C: '64' }), /^createLayer: /, /\bC\b/, /"64"/],
    ['heads missing', () => mha.createLayer({ C }), /^createLayer: /, /heads/],
    ['heads 0', () => mha.createLayer({ C, heads: 0 }), /^createLayer: /, /heads/],
    [
      'heads 5 (does not divide 64)',
      () => mha.createLayer({ C, heads: 5 }),
      /^createLayer: /,
      /heads/,
      /divisible/,
    ],
    ["rng 'foo'", () => mha.createLayer({ ...ok, rng: 'foo' }), /^createLayer: /, /\brng\b/, /foo/],
    ['seed -1', () => mha.createLayer({ ...ok, seed: -1 }), /^createLayer: /, /seed/],
    ['seed 1.5', () => mha.createLayer({ ...ok, seed: 1.5 }), /^createLayer: /, /seed/],
    [
      'seed 2**60 as a number (not exact)',
      () => mha.createLayer({ ...ok, seed: 2 ** 60 }),
      /^createLayer: /,
      /seed/,
      /BigInt/,
    ],
    [
      'seed 2**64 as a BigInt',
      () => mha.createLayer({ ...ok, seed: 2n ** 64n }),
      /^createLayer: /,
      /seed/,
    ],
    [
      'legacy seed 2**32',
      () => mha.createLayer({ ...ok, rng: 'legacy', seed: 2 ** 32 }),
      /^createLayer: /,
      /seed/,
      /legacy/,
    ],
    [
      'legacy seed 2n**32n',
      () => mha.createLayer({ ...ok, rng: 'legacy', seed: 2n ** 32n }),
      /^createLayer: /,
      /seed/,
      /legacy/,
    ],
    ['scale NaN', () => mha.createLayer({ ...ok, scale: NaN }), /^createLayer: /, /scale/],
    [
      'scale Infinity',
      () => mha.createLayer({ ...ok, scale: Infinity }),
      /^createLayer: /,
      /scale/,
    ],
    ['options null', () => mha.createLayer(null), /^createLayer: /, /options/],
  ]);
  // the limits themselves are accepted
  for (const o of [
    { seed: 2 ** 53 - 1 },
    { seed: 2n ** 64n - 1n },
    { rng: 'legacy', seed: 2 ** 32 - 1 },
    { scale: 0 },
  ]) {
    mha.createLayer({ ...ok, ...o }).free();
  }
});

test('forward: X, B, T, causal and the options object are validated and named', (t) => {
  runCases(t, [
    [
      'X one short',
      () => layer.forward(X.subarray(1), { B, T }),
      /^layer\.forward: /,
      /\bX\b/,
      /767/,
      /768/,
    ],
    ['X a string', () => layer.forward('x'.repeat(n), { B, T }), /^layer\.forward: /, /\bX\b/],
    [
      'X holding a string',
      () => layer.forward([...Array.from(X).slice(1), '1'], { B, T }),
      /^layer\.forward: /,
      /X\[767\]/,
    ],
    ['B 0', () => layer.forward(X, { B: 0, T }), /^layer\.forward: /, /\bB\b/],
    ['T 1.5', () => layer.forward(X, { B, T: 1.5 }), /^layer\.forward: /, /\bT\b/],
    [
      "causal 'yes'",
      () => layer.forward(X, { B, T, causal: 'yes' }),
      /^layer\.forward: /,
      /causal/,
    ],
    ['options null', () => layer.forward(X, null), /^layer\.forward: /, /options/],
    ['options missing', () => layer.forward(X), /^layer\.forward: /, /\bB\b/],
  ]);
});

test('backward: before any forward, and a dY of the wrong length', (t) => {
  const fresh = newLayer();
  assert.throws(
    () => fresh.backward(target),
    (e) => e instanceof Error && /^layer\.backward: /.test(e.message) && /forward/.test(e.message),
  );
  // the fresh layer still computes the same as the shared one
  assert.ok(bitEqual(fresh.forward(X, { B, T }).Y, refY));
  fresh.free();
  runCases(t, [
    [
      'dY wrong length',
      () => layer.backward(target.subarray(0, 100)),
      /^layer\.backward: /,
      /\bdY\b/,
      /768/,
    ],
    ['dY not an array', () => layer.backward({ length: n }), /^layer\.backward: /, /\bdY\b/],
  ]);
});

test(`train: target, lr, steps, and non-finite data (rejected, naming the array and the index)`, (t) => {
  const Xnan = X.slice();
  Xnan[5] = NaN;
  const Xinf = X.slice();
  Xinf[700] = -Infinity;
  const tnan = target.slice();
  tnan[0] = NaN;
  runCases(t, [
    [
      'target wrong length',
      () => layer.train(X, target.subarray(1), { B, T }),
      /^layer\.train: /,
      /target/,
    ],
    ['lr NaN', () => layer.train(X, target, { B, T, lr: NaN }), /^layer\.train: /, /\blr\b/],
    ['steps -1', () => layer.train(X, target, { B, T, steps: -1 }), /^layer\.train: /, /steps/],
    ['steps 2.5', () => layer.train(X, target, { B, T, steps: 2.5 }), /^layer\.train: /, /steps/],
    [
      'NaN in X',
      () => layer.train(Xnan, target, { B, T, steps: 3 }),
      /^layer\.train: /,
      /X\[5\] is NaN/,
    ],
    [
      '-Infinity in X',
      () => layer.train(Xinf, target, { B, T, steps: 3 }),
      /^layer\.train: /,
      /X\[700\] is -Infinity/,
    ],
    [
      'NaN in target',
      () => layer.train(X, tnan, { B, T, steps: 3 }),
      /^layer\.train: /,
      /target\[0\] is NaN/,
    ],
    [
      'NaN in X with steps 0 (validation only)',
      () => layer.train(Xnan, target, { B, T, steps: 0 }),
      /^layer\.train: /,
      /X\[5\] is NaN/,
    ],
    ['sgdStep lr Infinity', () => layer.sgdStep(Infinity), /^layer\.sgdStep: /, /\blr\b/],
  ]);
});

test(`forward propagates NaN in X (Y has NaN in that batch row only), while train rejects it`, (t) => {
  const other = newLayer();
  const Xnan = X.slice();
  Xnan[3] = NaN; // batch 0, token 0
  const { Y } = other.forward(Xnan, { B, T });
  const half = T * C;
  let nan0 = 0;
  for (let i = 0; i < half; i++) if (Number.isNaN(Y[i])) nan0++;
  // token 0's q, k, v are NaN, so every score of batch 0 involves NaN: all of batch 0's Y is NaN
  assert.equal(nan0, half, 'every output of batch 0 is NaN');
  // batch 1 never meets the NaN: bit-identical to the clean forward
  assert.ok(bitEqual(Y.subarray(half), refY.subarray(half)), 'batch 1 unaffected');
  assert.throws(() => other.train(Xnan, target, { B, T, steps: 1 }), /X\[3\] is NaN/);
  t.diagnostic(
    `forward with X[3] = NaN: ${nan0} of ${half} outputs of batch 0 NaN, batch 1 identical; train rejects it`,
  );
  other.free();
});

test('gradcheck: loss, eps, samples, target; tensor/setTensor/forwardFrom names', (t) => {
  runCases(t, [
    [
      "loss 'foo'",
      () => layer.gradcheck(X, { B, T, loss: 'foo' }),
      /^layer\.gradcheck: /,
      /loss/,
      /foo/,
    ],
    ['eps 0', () => layer.gradcheck(X, { B, T, eps: 0 }), /^layer\.gradcheck: /, /eps/],
    ['eps NaN', () => layer.gradcheck(X, { B, T, eps: NaN }), /^layer\.gradcheck: /, /eps/],
    [
      'samples -1',
      () => layer.gradcheck(X, { B, T, samples: -1 }),
      /^layer\.gradcheck: /,
      /samples/,
    ],
    [
      'mse without target',
      () => layer.gradcheck(X, { B, T, loss: 'mse' }),
      /^layer\.gradcheck: /,
      /target/,
    ],
    [
      'G wrong length',
      () => layer.gradcheck(X, { B, T, G: [1, 2] }),
      /^layer\.gradcheck: /,
      /\bG\b/,
    ],
    [
      'chunk 0',
      () => layer.gradcheckSteps(X, { B, T, chunk: 0 }).next(),
      /^layer\.gradcheck: /,
      /chunk/,
    ],
    ["tensor('nope')", () => layer.tensor('nope'), /^layer\.tensor: /, /nope/],
    ['tensor(3)', () => layer.tensor(3), /^layer\.tensor: /, /unknown tensor/],
    [
      'setTensor wrong length',
      () => layer.setTensor('Q', new Float64Array(767)),
      /^layer\.setTensor: /,
      /data/,
      /\bQ\b/,
      /768/,
    ],
    ["setTensor('nope')", () => layer.setTensor('nope', X), /^layer\.setTensor: /, /nope/],
    ["forwardFrom('nope')", () => layer.forwardFrom('nope'), /^layer\.forwardFrom: /, /nope/],
    [
      "forwardFrom('Y') (not a stage)",
      () => layer.forwardFrom('Y'),
      /^layer\.forwardFrom: /,
      /name must be one of Q, K, V/,
    ],
    [
      "forwardFrom('dQm') (a gradient: no restart stage in the C table)",
      () => layer.forwardFrom('dQm'),
      /^layer\.forwardFrom: /,
      /name must be one of Q, K, V, scores, att, headout, concat \(/,
      /dQm/,
    ],
  ]);
});

test('tensorShape: the name and the sizes B, T, C, heads are validated and named', (t) => {
  const sizes = { B, T, C, heads: H };
  runCases(t, [
    ["tensorShape('nope')", () => mha.tensorShape('nope', sizes), /^tensorShape: /, /nope/],
    ['tensorShape no sizes', () => mha.tensorShape('Q'), /^tensorShape: /, /\bB\b/],
    ['tensorShape B 0', () => mha.tensorShape('Q', { ...sizes, B: 0 }), /^tensorShape: /, /\bB\b/],
    [
      'tensorShape T 1.5',
      () => mha.tensorShape('Q', { ...sizes, T: 1.5 }),
      /^tensorShape: /,
      /\bT\b/,
    ],
    [
      'tensorShape heads 5',
      () => mha.tensorShape('Q', { ...sizes, heads: 5 }),
      /^tensorShape: /,
      /divisible by heads/,
    ],
  ]);
});

test('a gradient read before its backward names the call to run; the merged ones too', () => {
  const l = newLayer();
  assert.throws(() => l.tensor('dQm'), {
    message: /^layer\.tensor: no forward pass has been run yet$/,
  });
  l.forward(X, { B, T });
  for (const name of ['dQm', 'dX', 'dscores']) {
    assert.throws(() => l.tensor(name), {
      message: `layer.tensor: ${name} does not exist yet (run backward first)`,
    });
  }
  l.backward(target);
  assert.deepEqual(l.tensor('dQm').shape, [B, T, C]);
  l.free();
});

test('module functions: rng seed/kind/n, splitHeads, singleHead, mseLoss', (t) => {
  const r = mha.rng(1);
  const W1 = new Float64Array(C * 16);
  runCases(t, [
    ["rng seed 'x'", () => mha.rng('x'), /^rng: /, /seed/],
    ["rng kind 'mt'", () => mha.rng(1, 'mt'), /^rng: /, /rng/, /mt/],
    ['rng legacy seed 2**32', () => mha.rng(2 ** 32, 'legacy'), /^rng: /, /seed/],
    ['standardNormal n -1', () => r.standardNormal(-1), /^rng\.standardNormal: /, /\bn\b/],
    ['random n 1.5', () => r.random(1.5), /^rng\.random: /, /\bn\b/],
    ['normal loc NaN', () => r.normal(NaN, 1, 3), /^rng\.normal: /, /loc/],
    ['normal scale Infinity', () => r.normal(0, Infinity, 3), /^rng\.normal: /, /scale/],
    [
      'splitHeads heads 5',
      () => mha.splitHeads(X, { B, T, C, heads: 5 }),
      /^splitHeads: /,
      /heads/,
    ],
    [
      'mergeHeads x short',
      () => mha.mergeHeads(X.subarray(1), { B, T, C, heads: H }),
      /^mergeHeads: /,
      /\bx\b/,
    ],
    [
      'singleHead Wk missing',
      () => mha.singleHead(X, { B, T, C, headSize: 16, Wq: W1, Wv: W1 }),
      /^singleHead: /,
      /Wk/,
    ],
    [
      'singleHead headSize 0',
      () => mha.singleHead(X, { B, T, C, headSize: 0, Wq: W1, Wk: W1, Wv: W1 }),
      /^singleHead: /,
      /headSize/,
    ],
    ['mseLoss target short', () => mha.mseLoss(X, target.subarray(1)), /^mseLoss: /, /target/],
    ['mseLoss Y empty', () => mha.mseLoss([], []), /^mseLoss: /, /\bY\b/],
  ]);
  // the generator was not advanced by its failed calls
  assert.equal(r.standardNormal(1)[0], mha.standardNormal(1, { seed: 1 })[0]);
  r.free();
});
