// The gradient check's norm-wise relative error, normRel = ‖a − n‖ / (‖a‖ + ‖n‖) per checked
// tensor (a: analytic, n: numeric gradient), beside the strict per-entry maxRel.
//
// Independent computation: on a small layer this file recomputes every numeric gradient itself,
// by full forward passes only (weights through the live views, X in a copy, intermediates through
// setTensor + forwardFrom), with the check's five-point stencil and its compensated loss sum, and
// takes the analytic gradients from backward(): the module's normRel must equal the norm-wise
// error of these arrays bit for bit (both add the squares in the same order). Hand cases: a
// gradient the loss does not depend on (0 exactly, no 0/0), and analytic gradients replaced by
// 2×, −1× and 0× the true ones (normRel 1/3, 1 and 1 up to the finite differences' noise).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, fmt } from './helpers.mjs';

const mha = await loadMHA();
const EPS = mha.constants.MHA_GRADCHECK_EPS;
const TINY = mha.constants.MHA_GRADCHECK_TINY;

// the check's loss sums: Neumaier-compensated, as csum_add in c/train.c
function compensatedSum(n, term) {
  let sum = 0;
  let comp = 0;
  for (let i = 0; i < n; i++) {
    const x = term(i);
    const t = sum + x;
    comp += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
    sum = t;
  }
  return sum + comp;
}

const lossOf = (loss, aux) =>
  loss === 'mse'
    ? (Y) => compensatedSum(Y.length, (i) => (Y[i] - aux[i]) * (Y[i] - aux[i])) / Y.length
    : (Y) => compensatedSum(Y.length, (i) => aux[i] * Y[i]);

// The loss with entry i of tensor `name` set to x, by full forward passes from X.
function lossWith({ layer, X, dims, L }, name, i, x) {
  const weights = ['Wq', 'Wk', 'Wv', 'Wo'];
  let Xp = X;
  let saved;
  if (weights.includes(name)) {
    saved = layer.weights[name][i];
    layer.weights[name][i] = x;
  } else if (name === 'X') {
    Xp = Float64Array.from(X);
    Xp[i] = x;
  }
  let { Y } = layer.forward(Xp, dims);
  if (!weights.includes(name) && name !== 'X') {
    const t = layer.tensor(name).data;
    t[i] = x;
    layer.setTensor(name, t);
    ({ Y } = layer.forwardFrom(name));
  }
  if (weights.includes(name)) layer.weights[name][i] = saved;
  return L(Y);
}

// Analytic gradients of every checked tensor (backward at X) and numeric ones (full forwards).
function independentGradients(layer, X, dims, loss, aux) {
  const L = lossOf(loss, aux);
  const { Y } = layer.forward(X, dims);
  const dY = loss === 'mse' ? mha.mseLoss(Y, aux).dY : aux;
  layer.zeroGrad();
  layer.backward(dY);
  const analytic = {};
  for (const name of mha.checkNames) {
    analytic[name] = ['Wq', 'Wk', 'Wv', 'Wo'].includes(name)
      ? Float64Array.from(layer.grads[name])
      : layer.tensor(`d${name}`).data;
  }
  const base = {};
  for (const name of mha.checkNames) {
    if (!['Wq', 'Wk', 'Wv', 'Wo', 'X'].includes(name)) base[name] = layer.tensor(name).data;
  }
  const numeric = {};
  for (const name of mha.checkNames) {
    const size = analytic[name].length;
    const x0 = name === 'X' ? X : (base[name] ?? layer.weights[name]);
    const at = Float64Array.from(x0);
    numeric[name] = new Float64Array(size);
    for (let i = 0; i < size; i++) {
      const f = (x) => lossWith({ layer, X, dims, L }, name, i, x);
      const d2 = f(at[i] + 2 * EPS) - f(at[i] - 2 * EPS);
      const d1 = f(at[i] + EPS) - f(at[i] - EPS);
      numeric[name][i] = (8 * d1 - d2) / (12 * EPS);
    }
  }
  return { analytic, numeric };
}

function normRel(a, n) {
  let dd = 0;
  let aa = 0;
  let nn = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - n[i]);
    dd += d * d;
    aa += a[i] * a[i];
    nn += n[i] * n[i];
  }
  return Math.sqrt(dd) / Math.max(Math.sqrt(aa) + Math.sqrt(nn), TINY);
}

const small = { C: 8, heads: 2, B: 2, T: 3 };

function smallCase(loss, causal) {
  const { C, heads, B, T } = small;
  const rng = mha.rng(5);
  const X = rng.standardNormal(B * T * C);
  const aux = rng.standardNormal(B * T * C); // G (dot loss) or the target (MSE)
  rng.free();
  const dims = { B, T, causal };
  const opts = loss === 'mse' ? { ...dims, loss, target: aux } : { ...dims, G: aux };
  const make = () => mha.createLayer({ C, heads, seed: 3, scale: 0.4 });
  const checker = make();
  const report = checker.gradcheck(X, opts);
  checker.free();
  const layer = make();
  const mine = independentGradients(layer, X, dims, loss, aux);
  layer.free();
  return { report, mine };
}

for (const [loss, causal] of [
  ['dot', false],
  ['mse', true],
]) {
  test(`normRel equals the norm-wise error of independently computed gradients (${loss}${causal ? ', causal' : ''})`, (t) => {
    const { report, mine } = smallCase(loss, causal);
    for (const row of report) {
      const a = mine.analytic[row.tensor];
      const n = mine.numeric[row.tensor];
      assert.equal(row.checked, a.length);
      // the check's numeric gradient is the one recomputed here, bit for bit
      assert.equal(row.numeric, n[row.worst], `${row.tensor}: numeric at worst`);
      assert.equal(row.analytic, a[row.worst], `${row.tensor}: analytic at worst`);
      assert.equal(row.normRel, normRel(a, n), `${row.tensor}: normRel`);
      assert.ok(row.normRel <= row.maxRel, `${row.tensor}: normRel ${row.normRel} > maxRel`);
      t.diagnostic(
        `${row.tensor.padEnd(8)} maxRel ${fmt(row.maxRel)}  normRel ${fmt(row.normRel)}`,
      );
    }
  });
}

test('normRel is 0, not NaN, for a gradient that is exactly 0 (T = 1: att = 1 for any Wq)', () => {
  const layer = mha.createLayer({ C: 4, heads: 2, seed: 1 });
  const X = mha.standardNormal(4, { seed: 2 });
  const report = layer.gradcheck(X, { B: 1, T: 1, seed: 3 });
  const byName = Object.fromEntries(report.map((r) => [r.tensor, r]));
  for (const name of ['Wq', 'Wk', 'Q', 'K', 'scores']) {
    assert.equal(byName[name].normRel, 0, name);
    assert.equal(byName[name].maxRel, 0, name);
  }
  assert.ok(byName.Wv.normRel > 0 && byName.Wv.normRel < 1e-10, `Wv ${byName.Wv.normRel}`);
  layer.free();
});

test('normRel of analytic gradients replaced by k× the true ones is |k − 1| / (|k| + 1)', (t) => {
  const { C, heads, B, T } = small;
  const X = mha.standardNormal(B * T * C, { seed: 9 });
  for (const [k, want] of [
    [2, 1 / 3],
    [-1, 1],
    [0, 1],
    [1.5, 0.2],
  ]) {
    const layer = mha.createLayer({ C, heads, seed: 4, scale: 0.4 });
    // prepare (the first slice of Wq), then scale dWo in the gradient buffer before its slices
    const gen = layer.gradcheckSteps(X, { B, T, seed: 6, chunk: 1 });
    gen.next();
    const g = layer.grads.Wo;
    for (let i = 0; i < g.length; i++) g[i] *= k;
    let p;
    for (p of gen);
    const row = p.report.find((r) => r.tensor === 'Wo');
    assert.ok(Math.abs(row.normRel - want) < 1e-9, `k = ${k}: normRel ${row.normRel} vs ${want}`);
    // per entry the error is the same |k − 1| / max(|k|, 1) everywhere
    const perEntry = Math.abs(k - 1) / Math.max(Math.abs(k), 1);
    assert.ok(Math.abs(row.maxRel - perEntry) < 1e-9, `k = ${k}: maxRel ${row.maxRel}`);
    t.diagnostic(`dWo × ${k}: normRel ${row.normRel} (hand: ${want}), maxRel ${row.maxRel}`);
    layer.free();
  }
});
