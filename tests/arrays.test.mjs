// Every API that takes an array checks its length before anything reaches wasm memory: a wrong
// length (one short, one long, empty) is an Error that names the function, the argument, its length
// and the expected one, and nothing is computed from whatever the scratch memory held before (a
// short array copied into scratch would leave the rest of a previous call's data there).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, bitEqual } from './helpers.mjs';

const mha = await loadMHA();
const C = 16,
  heads = 4,
  B = 2,
  T = 3,
  hs = 8,
  n = B * T * C;
const r = mha.rng(3);
const X = r.standardNormal(n),
  dY = r.standardNormal(n),
  target = r.standardNormal(n),
  Wh = r.standardNormal(C * hs);
r.free();
const layer = mha.createLayer({ C, heads, seed: 1 });
const heads1 = { B, T, C, heads };
const single = { B, T, C, headSize: hs, Wq: Wh, Wk: Wh, Wv: Wh };

/** [name, expected length, call(array of the given length) ] */
const CALLS = [
  ['splitHeads', 'x', n, (a) => mha.splitHeads(a, heads1)],
  ['mergeHeads', 'x', n, (a) => mha.mergeHeads(a, heads1)],
  ['singleHead', 'X', n, (a) => mha.singleHead(a, single)],
  ['singleHead', 'Wq', C * hs, (a) => mha.singleHead(X, { ...single, Wq: a })],
  ['singleHead', 'Wk', C * hs, (a) => mha.singleHead(X, { ...single, Wk: a })],
  ['singleHead', 'Wv', C * hs, (a) => mha.singleHead(X, { ...single, Wv: a })],
  ['mseLoss', 'target', n, (a) => mha.mseLoss(X, a)],
  ['layer.forward', 'X', n, (a) => layer.forward(a, { B, T })],
  ['layer.backward', 'dY', n, (a) => layer.backward(a)],
  ['layer.train', 'X', n, (a) => layer.train(a, target, { B, T, steps: 1 })],
  ['layer.train', 'target', n, (a) => layer.train(X, a, { B, T, steps: 1 })],
  ['layer.gradcheck', 'X', n, (a) => layer.gradcheck(a, { B, T, samples: 1 })],
  ['layer.gradcheck', 'G', n, (a) => layer.gradcheck(X, { B, T, samples: 1, G: a })],
  [
    'layer.gradcheck',
    'target',
    n,
    (a) => layer.gradcheck(X, { B, T, samples: 1, loss: 'mse', target: a }),
  ],
  ['layer.setTensor', 'data', C * C, (a) => layer.setTensor('Wq', a)],
  ['layer.setTensor', 'data', n, (a) => layer.setTensor('Q', a)],
];

// The layer's state that a rejected call must leave alone.
function snapshot() {
  return {
    params: layer.params.slice(),
    grads: layer.gradBuffer.slice(),
    ...Object.fromEntries(['X', 'Q', 'att', 'Y', 'dX'].map((k) => [k, layer.tensor(k).data])),
  };
}

test(`a wrong-length array is an Error naming function, argument, length and expected length`, (t) => {
  layer.forward(X, { B, T });
  layer.backward(dY);
  // fill the scratch memory with a complete, valid call first: a short array must not complete it
  mha.singleHead(X, single);
  let cases = 0;
  for (const [fn, arg, len, call] of CALLS) {
    for (const got of [len - 1, len + 1, 0]) {
      for (const make of [
        (k) => new Float64Array(k),
        (k) => Array.from({ length: k }, () => 0.5),
      ]) {
        const before = snapshot();
        const a = make(got);
        let err = null;
        try {
          call(a);
        } catch (e) {
          err = e;
        }
        const what = `${fn}(${arg} of length ${got}, ${Array.isArray(a) ? 'array' : 'Float64Array'})`;
        assert.ok(err instanceof Error, `${what}: no Error thrown`);
        assert.equal(err.constructor, Error, `${what}: ${err.constructor.name}: ${err.message}`);
        assert.match(
          err.message,
          new RegExp(
            `^${fn.replace('.', '\\.')}: ${arg} has ${got} elements, expected .*\\b${len}$`,
          ),
          what,
        );
        const after = snapshot();
        for (const k of Object.keys(before)) {
          assert.ok(bitEqual(after[k], before[k]), `${what} changed ${k}`);
        }
        cases++;
      }
    }
  }
  t.diagnostic(`${cases} wrong-length calls over ${CALLS.length} array arguments: all rejected`);
});

test('the right lengths are accepted (the table above calls real, working APIs)', () => {
  const good = { x: X, X, dY, target, G: dY, Wq: Wh, Wk: Wh, Wv: Wh };
  layer.forward(X, { B, T });
  for (const [fn, arg, len, call] of CALLS) {
    const a = arg === 'data' ? layer.tensor(len === C * C ? 'Wq' : 'Q').data : good[arg];
    assert.equal(a.length, len, `${fn} ${arg}`);
    assert.doesNotThrow(() => call(a), `${fn}(${arg})`);
    if (fn === 'layer.train' || fn === 'layer.gradcheck') layer.forward(X, { B, T });
  }
});

test('singleHead after a larger call computes from its own X only (no leftover scratch)', () => {
  // a big call first leaves its data in the scratch block; a smaller valid call must give the same
  // bits as on a fresh module state
  const big = { B: 3, T: 5, C, headSize: hs, Wq: Wh, Wk: Wh, Wv: Wh };
  const Xbig = mha.standardNormal(3 * 5 * C, { seed: 9 });
  const a = mha.singleHead(X, single);
  mha.singleHead(Xbig, big);
  const b = mha.singleHead(X, single);
  assert.ok(bitEqual(a.att, b.att) && bitEqual(a.out, b.out));
});
