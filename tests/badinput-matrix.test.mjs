// The bad-input matrix through the JS API: every case throws an Error whose message names the
// argument at fault, and afterwards the same layer still computes the right bits. The TAP output
// lists each case with the message it gives.
//
// NaN and Inf in data: forward and backward propagate them (IEEE arithmetic, nothing is rejected);
// train rejects them, because one NaN would silently destroy every weight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA } from './helpers.mjs';

const mha = await loadMHA();
const C = 64,
  heads = 4,
  B = 2,
  T = 6,
  n = B * T * C;
const X = mha.standardNormal(n, { seed: 7 });
const target = mha.standardNormal(n, { seed: 8 });
const layer = mha.createLayer({ C, heads, seed: 42, scale: 0.125 });
const good = () => layer.forward(X, { B, T }).Y;
const reference = good();
const withNaN = (a, i, v = NaN) => {
  const b = a.slice();
  b[i] = v;
  return b;
};

const CASES = [
  // [case, call, the argument the message must name]
  ['createLayer C = -1', () => mha.createLayer({ C: -1, heads: 1 }), /\bC\b/],
  ['createLayer C = 0', () => mha.createLayer({ C: 0, heads: 1 }), /\bC\b/],
  ['createLayer C = 1.5', () => mha.createLayer({ C: 1.5, heads: 1 }), /\bC\b/],
  ['createLayer C = NaN', () => mha.createLayer({ C: NaN, heads: 1 }), /\bC\b/],
  ['createLayer C = "64"', () => mha.createLayer({ C: '64', heads: 4 }), /\bC\b/],
  ['createLayer C = 2^31', () => mha.createLayer({ C: 2 ** 31, heads: 1 }), /\bC\b/],
  [
    'createLayer C = 2^15 (weights > 1 GiB)',
    () => mha.createLayer({ C: 2 ** 15, heads: 1 }),
    /C = 32768 is too large/,
  ],
  ['createLayer heads = 0', () => mha.createLayer({ C: 64, heads: 0 }), /heads/],
  ['createLayer C % heads != 0', () => mha.createLayer({ C: 64, heads: 5 }), /divisible by heads/],
  ['createLayer rng = "mt"', () => mha.createLayer({ C: 64, heads: 4, rng: 'mt' }), /\brng\b/],
  ['createLayer seed = -1', () => mha.createLayer({ C: 64, heads: 4, seed: -1 }), /\bseed\b/],
  [
    'createLayer legacy seed = 2^32',
    () => mha.createLayer({ C: 64, heads: 4, seed: 2 ** 32, rng: 'legacy' }),
    /\bseed/,
  ],
  [
    'createLayer scale = Infinity',
    () => mha.createLayer({ C: 64, heads: 4, scale: Infinity }),
    /\bscale\b/,
  ],
  ['forward B = 0', () => layer.forward(X, { B: 0, T }), /\bB\b/],
  ['forward T = -3', () => layer.forward(X, { B, T: -3 }), /\bT\b/],
  ['forward T = 2.5', () => layer.forward(X, { B, T: 2.5 }), /\bT\b/],
  ['forward B = NaN', () => layer.forward(X, { B: NaN, T }), /\bB\b/],
  [
    'forward B*h*T*T overflows 32-bit byte counts',
    () => layer.forward(new Float64Array(64 * 65536), { B: 1, T: 65536 }),
    /B = 1, T = 65536 is too large/,
  ],
  [
    'forward beyond the 1 GiB memory cap',
    () => layer.forward(new Float64Array(64 * 4096), { B: 1, T: 4096 }),
    /B = 1, T = 4096 is too large/,
  ],
  ['forward X too short', () => layer.forward(X.subarray(1), { B, T }), /\bX has 767 elements/],
  ['forward X a string', () => layer.forward('0.1 0.2', { B, T }), /\bX must be/],
  ['forward X an object', () => layer.forward({ length: n }, { B, T }), /\bX must be/],
  [
    'forward X holds a string',
    () => layer.forward(Object.assign(Array.from(X), { 3: 'x' }), { B, T }),
    /X\[3\]/,
  ],
  [
    'forward X a BigInt64Array',
    () => layer.forward(new BigInt64Array(n), { B, T }),
    /\bX must hold numbers/,
  ],
  ['forward causal = "yes"', () => layer.forward(X, { B, T, causal: 'yes' }), /\bcausal\b/],
  ['forward options = null', () => layer.forward(X, null), /options/],
  [
    'backward dY wrong length',
    () => {
      layer.forward(X, { B, T });
      layer.backward(new Float64Array(10));
    },
    /\bdY has 10 elements/,
  ],
  [
    'train target of the wrong shape',
    () => layer.train(X, target.subarray(0, 384), { B, T }),
    /\btarget has 384 elements/,
  ],
  ['train lr = NaN', () => layer.train(X, target, { B, T, lr: NaN }), /\blr\b/],
  ['train steps = -1', () => layer.train(X, target, { B, T, steps: -1 }), /\bsteps\b/],
  ['train NaN in X', () => layer.train(withNaN(X, 5), target, { B, T }), /X\[5\] is NaN/],
  [
    'train Infinity in target',
    () => layer.train(X, withNaN(target, 9, Infinity), { B, T }),
    /target\[9\] is Infinity/,
  ],
  [
    'train -Infinity in X',
    () => layer.train(withNaN(X, 0, -Infinity), target, { B, T }),
    /X\[0\] is -Infinity/,
  ],
  ['sgdStep lr = NaN', () => layer.sgdStep(NaN), /\blr\b/],
  ['gradcheck eps = 0', () => layer.gradcheck(X, { B, T, eps: 0 }), /\beps\b/],
  ['gradcheck loss = "l1"', () => layer.gradcheck(X, { B, T, loss: 'l1' }), /\bloss\b/],
  ['gradcheck mse without target', () => layer.gradcheck(X, { B, T, loss: 'mse' }), /\btarget\b/],
  ['tensor("nope")', () => layer.tensor('nope'), /unknown tensor/],
  [
    'setTensor wrong length',
    () => layer.setTensor('Wq', new Float64Array(3)),
    /\bdata has 3 elements/,
  ],
  ['rng seed = "x"', () => mha.rng('x'), /\bseed\b/],
  [
    'rng n = -1',
    () => {
      const r = mha.rng(1);
      try {
        r.standardNormal(-1);
      } finally {
        r.free();
      }
    },
    /\bn\b/,
  ],
  [
    'splitHeads C % heads != 0',
    () => mha.splitHeads(X, { B, T, C, heads: 5 }),
    /divisible by heads/,
  ],
  ['mseLoss lengths differ', () => mha.mseLoss(X, target.subarray(1)), /\btarget has 767 elements/],
];

test('bad-input matrix: each case throws an Error naming its argument; same bits after', (t) => {
  for (const [what, call, names] of CASES) {
    let err = null;
    try {
      call();
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof Error, `${what}: expected an Error, got ${err}`);
    assert.match(err.message, names, `${what}: "${err.message}"`);
    t.diagnostic(`${what} -> ${err.message}`);
    assert.deepEqual(good(), reference, `${what}: the layer computes something else afterwards`);
  }
  t.diagnostic(`${CASES.length} cases`);
});

test('NaN and Inf in data: forward and backward propagate them; nothing else is touched', (t) => {
  const other = mha.createLayer({ C, heads, seed: 42, scale: 0.125 });
  const { Y } = other.forward(withNaN(X, 3), { B, T }); // batch 0, token 0
  const { dX } = other.backward(withNaN(target, 700, Infinity)); // batch 1
  const nanY = Y.filter(Number.isNaN).length;
  assert.equal(
    nanY,
    T * C,
    'all of batch 0 is NaN (its token 0 reaches every score of that batch)',
  );
  assert.deepEqual(Y.subarray(T * C), reference.subarray(T * C), 'batch 1 is untouched');
  assert.ok(
    dX.some((v) => !Number.isFinite(v)),
    'the Infinity in dY propagates to dX',
  );
  t.diagnostic(
    `forward with one NaN in X: ${nanY} NaN outputs (batch 0), batch 1 identical; backward with an Infinity in dY: non-finite dX`,
  );
  other.free();
});
