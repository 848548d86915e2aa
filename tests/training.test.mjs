// layer.train: plain gradient descent on the MSE loss (c/mha.h, mha_train), on the course layer
// (C = 64, 4 heads, default_rng(42) * 0.125; X, G, target = default_rng(7) standard normals, the
// 'course' fixture's data drawn here through the JS API).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadMHA,
  bitEqual,
  bitMismatches,
  fmt,
  maxRelErr,
  referenceForward,
  referenceBackward,
  referenceMse,
  referenceTrain,
} from './helpers.mjs';

const mha = await loadMHA();
const C = 64,
  H = 4,
  B = 2,
  T = 6,
  n = B * T * C;
const r = mha.rng(7);
const X = r.standardNormal(n);
r.standardNormal(n); // G (unused here)
const target = r.standardNormal(n);
r.free();
const newLayer = () => mha.createLayer({ C, heads: H, seed: 42, rng: 'default_rng', scale: 0.125 });
const dims = { B, T, C, heads: H, causal: false };
const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];
const TOL = 1e-12;

test('10 SGD steps at lr 0.1 lower the MSE loss strictly monotonically', (t) => {
  const layer = newLayer();
  const losses = layer.train(X, target, { B, T, lr: 0.1, steps: 10 });
  assert.ok(losses instanceof Float64Array);
  assert.equal(losses.length, 10);
  for (let s = 0; s < 10; s++) {
    assert.ok(Number.isFinite(losses[s]) && losses[s] > 0, `loss ${s} = ${losses[s]}`);
  }
  for (let s = 1; s < 10; s++) {
    assert.ok(losses[s] < losses[s - 1], `step ${s}: ${losses[s]} >= ${losses[s - 1]}`);
  }
  // The loss after the last update (not in `losses`) keeps going down.
  const after = mha.mseLoss(layer.forward(X, { B, T }).Y, target).loss;
  assert.ok(after < losses[9], `after training: ${after} >= ${losses[9]}`);
  t.diagnostic(
    `losses: ${Array.from(losses, (v) => v.toFixed(6)).join(' ')} -> ${after.toFixed(6)}`,
  );
  t.diagnostic(`loss ratio last/first ${(losses[9] / losses[0]).toFixed(4)}`);
  layer.free();
});

test(`train == the documented step (zero_grad, forward, mse, backward, sgd_step) in plain-JS float64`, (t) => {
  // an independent computation: helpers.mjs's plain-JS layer (no C, no wasm) runs the same 10
  // steps from the same initial weights
  const layer = newLayer();
  const W0 = Object.fromEntries(WEIGHTS.map((w) => [w, layer.weights[w].slice()]));
  const losses = layer.train(X, target, { B, T, lr: 0.1, steps: 10 });
  const ref = referenceTrain(X, target, W0, dims, { lr: 0.1, steps: 10 });
  let eLoss = 0;
  for (let s = 0; s < 10; s++) {
    eLoss = Math.max(eLoss, Math.abs(losses[s] - ref.losses[s]) / ref.losses[s]);
  }
  assert.ok(eLoss <= TOL, `losses vs plain JS: ${eLoss}`);
  const errs = WEIGHTS.map((w) => {
    const e = maxRelErr(layer.weights[w], ref.W[w]);
    assert.ok(e <= TOL, `${w} after 10 steps vs plain JS: ${e}`);
    return `${w} ${fmt(e)}`;
  });
  // Afterwards the gradient buffer holds the last step's gradient (taken before its update) and
  // the cache that step's forward: recompute both from the weights after 9 steps.
  const W9 = referenceTrain(X, target, W0, dims, { lr: 0.1, steps: 9 }).W;
  const f = referenceForward(X, W9, dims);
  const g = referenceBackward(f, W9, referenceMse(f.Y, target).dY, dims);
  for (const w of WEIGHTS) {
    const e = maxRelErr(layer.grads[w], g[`d${w}`]);
    assert.ok(e <= TOL, `d${w} of the last step: ${e}`);
  }
  assert.ok(maxRelErr(layer.tensor('Y').data, f.Y) <= TOL, 'cached Y is the last step forward');
  assert.ok(maxRelErr(layer.tensor('dX').data, g.dX) <= TOL, 'cached dX is the last step backward');
  t.diagnostic(
    `10 steps vs plain JS: losses ${fmt(eLoss)} (elementwise), weights ${errs.join(', ')}`,
  );
  layer.free();
});

test(`train runs the API's own step: the same bits as zeroGrad, forward, mseLoss, backward, sgdStep`, (t) => {
  // mha_train's loop and the same five calls made one by one from JS: one code path each side
  const a = newLayer(),
    b = newLayer();
  const losses = a.train(X, target, { B, T, lr: 0.1, steps: 10 });
  const manual = new Float64Array(10);
  for (let s = 0; s < 10; s++) {
    b.zeroGrad();
    const { Y } = b.forward(X, { B, T });
    const { loss, dY } = mha.mseLoss(Y, target);
    manual[s] = loss;
    b.backward(dY);
    b.sgdStep(0.1);
  }
  assert.equal(bitMismatches(losses, manual), 0);
  assert.equal(bitMismatches(a.params, b.params), 0);
  assert.ok(bitEqual(a.gradBuffer, b.gradBuffer), 'gradient buffer after the last step');
  t.diagnostic(
    `10 steps: losses and ${a.params.length} parameters identical to the loop of API calls`,
  );
  a.free();
  b.free();
});

test('two fresh runs give bit-identical losses and weights', (t) => {
  const a = newLayer(),
    b = newLayer();
  const la = a.train(X, target, { B, T, lr: 0.1, steps: 10 });
  const lb = b.train(X, target, { B, T, lr: 0.1, steps: 10 });
  assert.equal(bitMismatches(la, lb), 0);
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
    assert.equal(bitMismatches(a.weights[w], b.weights[w]), 0, w);
  }
  // and the weights did move
  const fresh = newLayer();
  const moved = bitMismatches(a.params, fresh.params);
  assert.ok(moved > 0.99 * 4 * C * C, `training changed only ${moved} weights`);
  t.diagnostic(`two runs identical; ${moved} of ${4 * C * C} weights differ from the initial ones`);
  a.free();
  b.free();
  fresh.free();
});

test('train with steps 0 returns an empty array and changes nothing', () => {
  const layer = newLayer();
  // a forward and backward first, so there is a cache and a gradient that must survive
  layer.forward(X.subarray(0, C * T), { B: 1, T });
  layer.backward(target.subarray(0, C * T));
  const params = layer.params.slice(),
    grads = layer.gradBuffer.slice();
  const cached = Object.fromEntries(['X', 'Y', 'att', 'dX', 'dQ'].map((k) => [k, layer.tensor(k)]));
  const losses = layer.train(X, target, { B, T, lr: 0.1, steps: 0 });
  assert.ok(losses instanceof Float64Array);
  assert.equal(losses.length, 0);
  assert.ok(bitEqual(layer.params, params), 'weights changed');
  assert.ok(bitEqual(layer.gradBuffer, grads), 'gradients changed');
  for (const [k, v] of Object.entries(cached)) {
    const now = layer.tensor(k);
    assert.deepEqual(now.shape, v.shape, `${k}: shape`);
    assert.ok(bitEqual(now.data, v.data), `${k} changed`);
  }
  // ... and the last forward is still the one backward works on (B = 1)
  assert.equal(layer.backward(target.subarray(0, C * T)).dX.length, C * T);
  layer.free();
});

test(`lr 1e6 diverges: Error mentioning "diverged" with err.losses; weights finite; layer still right`, (t) => {
  const steps = 10;
  const layer = newLayer();
  let caught = null;
  assert.throws(
    () => layer.train(X, target, { B, T, lr: 1e6, steps }),
    (e) => {
      caught = e;
      return e instanceof Error && /diverged/.test(e.message) && /layer\.train/.test(e.message);
    },
  );
  const L = caught.losses;
  assert.ok(L instanceof Float64Array && L.length === steps, 'err.losses: one entry per step');
  // losses[0] is the loss of the initial weights, as for any run
  const ref = newLayer();
  const firstLoss = mha.mseLoss(ref.forward(X, { B, T }).Y, target).loss;
  assert.ok(Object.is(L[0], firstLoss), `first loss ${L[0]} vs ${firstLoss}`);
  // finite losses up to the divergence, NaN for the steps that were not run
  const k = L.findIndex((v) => !Number.isFinite(v));
  assert.ok(k > 0, `losses ${Array.from(L)}`);
  for (let s = 0; s < k; s++) assert.ok(Number.isFinite(L[s]));
  for (let s = k; s < steps; s++) {
    assert.ok(Number.isNaN(L[s]), `loss ${s} after divergence should be NaN, is ${L[s]}`);
  }
  t.diagnostic(
    `lr 1e6: losses ${Array.from(L, (v) => fmt(v)).join(' ')}; stopped before step ${k}'s update`,
  );

  // Weights kept from the last finite step: all finite.
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
    assert.ok(layer.weights[w].every(Number.isFinite), `${w} not finite`);
  }
  // The layer still computes the right forward: same bits as a new layer given these weights.
  const twin = newLayer();
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) twin.weights[w].set(layer.weights[w]);
  assert.ok(bitEqual(twin.params, layer.params));
  const ya = layer.forward(X, { B, T }).Y;
  const yb = twin.forward(X, { B, T }).Y;
  assert.equal(bitMismatches(ya, yb), 0);
  assert.ok(bitEqual(layer.tensor('att').data, twin.tensor('att').data));
  // ... and backward too
  assert.ok(bitEqual(layer.backward(target).dX, twin.backward(target).dX));
  const max = Math.max(...Array.from(layer.params, Math.abs));
  t.diagnostic(
    `weights after divergence: all finite, max |w| = ${fmt(max)}; forward/backward identical to a twin layer`,
  );
  for (const l of [layer, ref, twin]) l.free();
});

test(`after train() throws "diverged", backward() checks dY against the forward the C cache holds`, (t) => {
  // mha_train ran forwards with the train's B and T before it stopped, so the C cache holds a
  // (2,6,64) forward. backward must size dY from that cache (regression: it once used a JS-side
  // record of the last forward, which a diverged train left stale at 1*6*64 = 384).
  const layer = newLayer();
  layer.forward(X.subarray(0, T * C), { B: 1, T });
  assert.throws(() => layer.train(X, target, { B, T, lr: 1e6, steps: 5 }), /diverged/);
  assert.deepEqual(layer.tensor('Y').shape, [B, T, C], 'the C cache holds the training forward');
  // The dY of the cached forward must be accepted, a dY of the wrong size rejected.
  let wrongAccepted = false;
  try {
    layer.backward(new Float64Array(T * C));
    wrongAccepted = true;
  } catch {
    /* expected */
  }
  let rightError = null;
  try {
    layer.backward(new Float64Array(n));
  } catch (e) {
    rightError = e.message;
  }
  t.diagnostic(
    `384-element dY accepted: ${wrongAccepted}; 768-element dY: ${rightError ?? 'accepted'}`,
  );
  assert.equal(
    wrongAccepted,
    false,
    "backward accepted a dY of the previous forward's size (C reads past it)",
  );
  assert.equal(rightError, null, 'backward rejected the dY of the forward actually cached');
  layer.free();
});
