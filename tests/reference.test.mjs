// The C/WASM layer against the independent NumPy reference (tests/reference/mha_reference.py),
// case by case: every build/reference/mha-*.json fixture. Weights must match bit for bit (same
// random stream); everything computed must agree to a normwise relative error of 1e-12
// (maxRelErr in helpers.mjs: max|a - b| / max|b| over the whole tensor).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  loadMHA,
  fixtureNames,
  loadFixture,
  f64,
  maxRelErr,
  bitMismatches,
  firstBitMismatch,
  fmt,
} from './helpers.mjs';

const TOL = 1e-12;
const mha = await loadMHA();
const names = fixtureNames();

test('the NumPy fixtures are present (all six cases of mha_reference.py)', (t) => {
  for (const n of ['course', 'course_causal', 'legacy', 'onehead', 'wide', 't1']) {
    assert.ok(names.includes(n), `build/reference/mha-${n}.json missing`);
  }
  t.diagnostic(`fixtures: ${names.join(', ')}`);
});

// Compare a computed tensor with the fixture's, recording the error in `errs`.
function close(errs, label, actual, expected, shape) {
  const ref = f64(expected);
  if (shape) assert.deepEqual(shape, expected.shape, `${label}: shape`);
  assert.equal(actual.length, ref.length, `${label}: length`);
  const e = maxRelErr(actual, ref);
  errs.push([label, e]);
  assert.ok(e <= TOL, `${label}: maxRelErr ${e} > ${TOL}`);
  return e;
}

function report(t, name, errs) {
  const worst = errs.reduce((m, [, e]) => Math.max(m, e), 0);
  t.diagnostic(
    `${name}: max rel err ${fmt(worst)}: ${errs.map(([l, e]) => `${l} ${fmt(e)}`).join(', ')}`,
  );
}

for (const name of names) {
  const fx = loadFixture(name);
  const { C, h, B, T, seed, rng, scale, causal, lr, steps, hs1 } = fx;
  const n = B * T * C;
  const X = f64(fx.inputs.X),
    G = f64(fx.inputs.G),
    target = f64(fx.inputs.target);
  const opts = { B, T, causal };
  const newLayer = () => mha.createLayer({ C, heads: h, seed, rng, scale });

  test(`${name}: weights from ${rng}(${seed}) * ${scale} equal NumPy's bit for bit`, (t) => {
    const layer = newLayer();
    let total = 0;
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
      const ref = f64(fx.inputs[w]);
      const got = layer.weights[w];
      assert.deepEqual(layer.tensor(w).shape, fx.inputs[w].shape);
      const bad = bitMismatches(got, ref);
      assert.equal(
        bad,
        0,
        `${w}: ${bad} of ${ref.length} differ (first at ${firstBitMismatch(got, ref)})`,
      );
      total += ref.length;
    }
    // The data streams of the case, default_rng(data_seed): X, G, target drawn in turn.
    const r = mha.rng(fx.data_seed, 'default_rng');
    for (const [k, ref] of [
      ['X', X],
      ['G', G],
      ['target', target],
    ]) {
      assert.equal(
        bitMismatches(r.standardNormal(n), ref),
        0,
        `${k} from default_rng(${fx.data_seed})`,
      );
    }
    r.free();
    t.diagnostic(`${total} weights and ${3 * n} data values identical to NumPy's`);
    layer.free();
  });

  test(`${name}: forward, backward (dot loss), MSE loss vs NumPy (maxRelErr <= ${TOL})`, (t) => {
    const layer = newLayer();
    const errs = [];
    const { Y, attention } = layer.forward(X, opts);
    for (const k of ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y']) {
      const tt = layer.tensor(k);
      close(errs, k, tt.data, fx.forward[k], tt.shape);
    }
    assert.ok(maxRelErr(Y, f64(fx.forward.Y)) <= TOL);
    assert.ok(maxRelErr(attention, f64(fx.forward.att)) <= TOL);

    // dot loss L = sum(G * Y), so dY = G
    let L = 0;
    for (let i = 0; i < n; i++) L += G[i] * Y[i];
    const eL = Math.abs(L - fx.backward_dot.loss) / Math.abs(fx.backward_dot.loss);
    errs.push(['dot loss', eL]);
    assert.ok(eL <= TOL, `dot loss ${L} vs ${fx.backward_dot.loss}`);
    const { dX } = layer.backward(G);
    for (const k of [
      'dconcat',
      'dheadout',
      'dV',
      'datt',
      'dscores',
      'dQ',
      'dK',
      'dWq',
      'dWk',
      'dWv',
      'dWo',
      'dX',
    ]) {
      const tt = layer.tensor(k);
      close(errs, k, tt.data, fx.backward_dot[k], tt.shape);
    }
    assert.ok(maxRelErr(dX, f64(fx.backward_dot.dX)) <= TOL);
    // The gradient buffer holds the same as the dW tensors (fresh layer: nothing accumulated).
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
      close(errs, `grads.${w}`, layer.grads[w], fx.backward_dot[`d${w}`]);
    }

    const mse = mha.mseLoss(Y, target);
    const eM = Math.abs(mse.loss - fx.mse.loss) / Math.abs(fx.mse.loss);
    errs.push(['mse loss', eM]);
    assert.ok(eM <= TOL, `mse loss ${mse.loss} vs ${fx.mse.loss}`);
    close(errs, 'mse dY', mse.dY, fx.mse.dY);
    report(t, name, errs);
    layer.free();
  });

  test(`${name}: ${steps} training steps at lr ${lr}${causal ? ' (causal)' : ''} vs NumPy`, (t) => {
    const layer = newLayer();
    const errs = [];
    const losses = layer.train(X, target, { B, T, causal, lr, steps });
    assert.equal(losses.length, steps);
    close(errs, 'losses', losses, fx.train.losses);
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
      close(errs, `final ${w}`, layer.weights[w], fx.train[w]);
    }
    // Elementwise on the losses too: they are scalars, so normwise would hide the last ones.
    let eLoss = 0;
    for (let s = 0; s < steps; s++) {
      eLoss = Math.max(
        eLoss,
        Math.abs(losses[s] - fx.train.losses[s]) / Math.abs(fx.train.losses[s]),
      );
    }
    assert.ok(eLoss <= TOL, `elementwise loss error ${eLoss}`);
    errs.push(['losses (elementwise)', eLoss]);
    report(t, name, errs);
    t.diagnostic(
      `loss ${losses[0]} -> ${losses[steps - 1]} (NumPy ${fx.train.losses[0]} -> ${fx.train.losses[steps - 1]})`,
    );
    layer.free();
  });

  test(`${name}: single head with its own (${C}, ${hs1}) projections vs NumPy`, (t) => {
    const errs = [];
    const { att, out } = mha.singleHead(X, {
      B,
      T,
      C,
      headSize: hs1,
      causal,
      Wq: f64(fx.inputs.Wq1),
      Wk: f64(fx.inputs.Wk1),
      Wv: f64(fx.inputs.Wv1),
    });
    close(errs, 'att', att, fx.single_head.att);
    close(errs, 'out', out, fx.single_head.out);
    report(t, name, errs);
  });
}
