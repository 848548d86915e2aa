// layer.backward's contract with the gradient buffer (c/mha.h, mha_backward): dWq ... dWo are ADDED
// to it (call zeroGrad first), while the intermediate gradients (dY, dconcat, ..., dX) are
// overwritten. Two backwards without zeroGrad must therefore give twice the gradient of one, and
// gradients of different batches must add up; checked against the NumPy fixtures
// (tests/reference/mha_reference.py) and the plain-JS float64 layer of helpers.mjs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadMHA,
  fixtureNames,
  loadFixture,
  f64,
  maxRelErr,
  bitEqual,
  fmt,
  referenceForward,
  referenceBackward,
} from './helpers.mjs';

const TOL = 1e-12;
const WEIGHTS = ['Wq', 'Wk', 'Wv', 'Wo'];
const INTERMEDIATE = ['dY', 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dX'];
const mha = await loadMHA();

const times = (k, a) => a.map((v) => k * v);
const plus = (a, b) => a.map((v, i) => v + b[i]);

for (const name of fixtureNames()) {
  const fx = loadFixture(name);
  const { C, h, B, T, seed, rng, scale, causal } = fx;
  const X = f64(fx.inputs.X),
    G = f64(fx.inputs.G);
  const newLayer = () => mha.createLayer({ C, heads: h, seed, rng, scale });

  test(`${name}: backward twice without zeroGrad adds up: every dW = 2x one backward = 2x NumPy's`, (t) => {
    const layer = newLayer();
    layer.forward(X, { B, T, causal });
    layer.backward(G);
    const once = Object.fromEntries(WEIGHTS.map((w) => [w, layer.grads[w].slice()]));
    const inter = Object.fromEntries(INTERMEDIATE.map((k) => [k, layer.tensor(k).data]));
    layer.backward(G);
    const errs = [];
    for (const w of WEIGHTS) {
      const twice = layer.grads[w];
      const numpy = times(2, f64(fx.backward_dot[`d${w}`]));
      const eSelf = maxRelErr(twice, times(2, once[w]));
      const eNumPy = maxRelErr(twice, numpy);
      errs.push(`d${w} ${fmt(eSelf)}/${fmt(eNumPy)}`);
      assert.ok(eSelf <= TOL, `d${w} after two backwards vs 2x one: ${eSelf}`);
      assert.ok(eNumPy <= TOL, `d${w} after two backwards vs 2x NumPy's: ${eNumPy}`);
      // the tensor view of the buffer says the same
      assert.ok(bitEqual(layer.tensor(`d${w}`).data, twice), `tensor('d${w}') != grads.${w}`);
    }
    // the intermediate gradients are overwritten, not accumulated: the same bits as after one
    for (const k of INTERMEDIATE) {
      assert.ok(bitEqual(layer.tensor(k).data, inter[k]), `${k} changed by the second backward`);
    }
    // zeroGrad, then one backward: exactly the first backward's gradient again
    layer.zeroGrad();
    assert.ok(
      layer.gradBuffer.every((v) => v === 0),
      'zeroGrad left a nonzero gradient',
    );
    layer.backward(G);
    for (const w of WEIGHTS) {
      assert.ok(bitEqual(layer.grads[w], once[w]), `d${w} after zeroGrad + backward`);
    }
    t.diagnostic(`vs 2x one backward / 2x NumPy (maxRelErr): ${errs.join(', ')}`);
    layer.free();
  });
}

test(`gradients of two batches accumulate: forward(X1) backward(G1) forward(X2) backward(G2)`, (t) => {
  // the gradient-accumulation use of +=: two different inputs (B = 1 and B = 3, so the cache's
  // sizes change in between) and two different dY, against the plain-JS layer
  const C = 32,
    heads = 4;
  const layer = mha.createLayer({ C, heads, seed: 5, scale: 0.2 });
  const W = Object.fromEntries(WEIGHTS.map((w) => [w, layer.weights[w].slice()]));
  const batches = [
    { B: 1, T: 5, causal: false, seed: 11 },
    { B: 3, T: 4, causal: true, seed: 12 },
  ];
  const sum = Object.fromEntries(WEIGHTS.map((w) => [w, new Float64Array(C * C)]));
  for (const { B, T, causal, seed } of batches) {
    const n = B * T * C;
    const r = mha.rng(seed);
    const X = r.standardNormal(n),
      dY = r.standardNormal(n);
    r.free();
    const dims = { B, T, C, heads, causal };
    const g = referenceBackward(referenceForward(X, W, dims), W, dY, dims);
    for (const w of WEIGHTS) sum[w] = plus(sum[w], g[`d${w}`]);
    layer.forward(X, { B, T, causal });
    const { dX } = layer.backward(dY);
    assert.ok(maxRelErr(dX, g.dX) <= TOL, `dX of batch B=${B}: ${maxRelErr(dX, g.dX)}`);
  }
  const errs = WEIGHTS.map((w) => {
    const e = maxRelErr(layer.grads[w], sum[w]);
    assert.ok(e <= TOL, `d${w}: accumulated ${e} from the sum of the two batches' gradients`);
    return `d${w} ${fmt(e)}`;
  });
  t.diagnostic(`accumulated over two batches vs plain JS: ${errs.join(', ')}`);
  layer.free();
});

test('every gradient of one backward on an arbitrary dY matches the plain-JS layer', (t) => {
  // the fixtures' dY is G; here dY = 3 G - 1 (no NumPy file needed: helpers.mjs's layer, which
  // itself matches NumPy to 1e-15 on the fixtures, see tests/reference.test.mjs)
  const fx = loadFixture('legacy');
  const { C, h, B, T } = fx;
  const dims = { B, T, C, heads: h, causal: true };
  const layer = mha.createLayer({ C, heads: h, seed: fx.seed, rng: fx.rng, scale: fx.scale });
  const W = Object.fromEntries(WEIGHTS.map((w) => [w, layer.weights[w].slice()]));
  const X = f64(fx.inputs.X);
  const dY = f64(fx.inputs.G).map((v) => 3 * v - 1);
  const f = referenceForward(X, W, dims);
  const g = referenceBackward(f, W, dY, dims);
  layer.forward(X, { B, T, causal: true });
  layer.backward(dY);
  const errs = [];
  for (const k of ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y']) {
    const e = maxRelErr(layer.tensor(k).data, f[k]);
    errs.push(`${k} ${fmt(e)}`);
    assert.ok(e <= TOL, `${k}: ${e}`);
  }
  for (const k of [...INTERMEDIATE.slice(1), 'dWq', 'dWk', 'dWv', 'dWo']) {
    const e = maxRelErr(layer.tensor(k).data, g[k]);
    errs.push(`${k} ${fmt(e)}`);
    assert.ok(e <= TOL, `${k}: ${e}`);
  }
  t.diagnostic(errs.join(', '));
  layer.free();
});
