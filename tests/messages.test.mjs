// The exact message of every error the JS API (web/mha.js) can give: the function, the argument and
// what was wrong with it, in words a student can act on. tests/errors.test.mjs checks that each
// error names the function and the argument and changes nothing; this file pins the whole text
// (a message that names the wrong argument, or none, is a bug).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA } from './helpers.mjs';

const mha = await loadMHA();
const C = 16,
  H = 4,
  B = 2,
  T = 3,
  n = B * T * C;
const X = mha.standardNormal(n, { seed: 1 });
const W8 = mha.standardNormal(C * 8, { seed: 2 });
const layer = mha.createLayer({ C, heads: H, seed: 3 });
const lay = { C: 64, heads: 4 };
const TENSORS = mha.tensorNames.join(', ');

/** The message of the Error `call` throws (fails if it returns or throws a non-Error). */
function messageOf(call) {
  try {
    call();
  } catch (e) {
    assert.equal(e.constructor, Error, `${e.constructor.name}: ${e.message}`);
    return e.message;
  }
  assert.fail('no Error thrown');
}

function check(t, cases) {
  cases.forEach(([call, message], i) => {
    let got;
    try {
      got = messageOf(call);
    } catch (e) {
      assert.fail(`case ${i} (${message}): ${e.message}`);
    }
    assert.equal(got, message, `case ${i}`);
  });
  t.diagnostic(`${cases.length} messages`);
}

test('describe(): how a wrong value is shown, for every kind of value', (t) => {
  const c = (v) => () => mha.createLayer({ ...lay, C: v });
  check(t, [
    [c('64'), 'createLayer: C must be an integer, got "64"'],
    [c('x'.repeat(40)), `createLayer: C must be an integer, got "${'x'.repeat(40)}"`],
    [c('y'.repeat(41)), `createLayer: C must be an integer, got "${'y'.repeat(40)}..."`],
    [c(64n), 'createLayer: C must be an integer, got 64n'],
    [c(null), 'createLayer: C must be an integer, got null'],
    [c(undefined), 'createLayer: C must be an integer, got undefined'],
    [c(true), 'createLayer: C must be an integer, got true'],
    [c(1.5), 'createLayer: C must be an integer, got 1.5'],
    [c(NaN), 'createLayer: C must be an integer, got NaN'],
    [c(Infinity), 'createLayer: C must be an integer, got Infinity'],
    [c([64]), 'createLayer: C must be an integer, got an array of length 1'],
    [c({}), 'createLayer: C must be an integer, got an object'],
    [c(Object.create(null)), 'createLayer: C must be an integer, got an object'],
    [c(new Map()), 'createLayer: C must be an integer, got a Map'],
    [c(Float64Array.of(1)), 'createLayer: C must be an integer, got a Float64Array'],
    [c(() => 1), 'createLayer: C must be an integer, got () => 1'],
  ]);
});

test('createLayer: every option, the divisibility rule and the memory limit', (t) => {
  const mk = (o) => () => mha.createLayer(o);
  check(t, [
    [mk(undefined), 'createLayer: C must be an integer, got undefined'],
    [mk(null), 'createLayer: options must be an object, got null'],
    [mk([]), 'createLayer: options must be an object, got an array of length 0'],
    [mk(7), 'createLayer: options must be an object, got 7'],
    [mk({ ...lay, C: 0 }), 'createLayer: C must be >= 1, got 0'],
    [mk({ ...lay, C: -3 }), 'createLayer: C must be >= 1, got -3'],
    [mk({ ...lay, C: 2 ** 31 }), 'createLayer: C is too large (2147483648)'],
    [mk({ C: 64, heads: 2 ** 31 }), 'createLayer: heads is too large (2147483648)'],
    [mk({ C: 64, heads: 0 }), 'createLayer: heads must be >= 1, got 0'],
    [mk({ C: 64 }), 'createLayer: heads must be an integer, got undefined'],
    [mk({ C: 64, heads: 5 }), 'createLayer: C (64) must be divisible by heads (5)'],
    [
      mk({ C: 2 ** 15, heads: 1 }),
      `createLayer: C = 32768 is too large: its weights and gradients need 65536 MiB, over the module's 1 GiB memory`,
    ],
    [
      mk({ C: 4100, heads: 1 }),
      `createLayer: C = 4100 is too large: its weights and gradients need 1027 MiB, over the module's 1 GiB memory`,
    ],
    [
      mk({ ...lay, rng: 'pcg64' }),
      `createLayer: rng must be 'default_rng' or 'legacy', got "pcg64"`,
    ],
    [mk({ ...lay, rng: 0 }), `createLayer: rng must be 'default_rng' or 'legacy', got 0`],
    [
      mk({ ...lay, rng: 'toString' }),
      `createLayer: rng must be 'default_rng' or 'legacy', got "toString"`,
    ],
    [mk({ ...lay, scale: NaN }), 'createLayer: scale must be a finite number, got NaN'],
    [mk({ ...lay, scale: '1' }), 'createLayer: scale must be a finite number, got "1"'],
    [mk({ ...lay, scale: -Infinity }), 'createLayer: scale must be a finite number, got -Infinity'],
  ]);
});

test('seeds: numbers 0 ... 2^53-1, BigInts 0 ... 2^64-1, legacy 0 ... 2^32-1', (t) => {
  const mk =
    (seed, rng = 'default_rng') =>
    () =>
      mha.createLayer({ C: 4, heads: 1, seed, rng });
  const num = 'createLayer: seed must be an integer in 0 ... 2^53-1 (or a BigInt), got';
  check(t, [
    [mk(-1), `${num} -1`],
    [mk(1.5), `${num} 1.5`],
    [mk(2 ** 53), `${num} 9007199254740992`],
    [mk('42'), `${num} "42"`],
    [mk(true), `${num} true`],
    [mk(-1n), 'createLayer: seed must be in 0 ... 2^64-1, got -1n'],
    [mk(2n ** 64n), 'createLayer: seed must be in 0 ... 2^64-1, got 18446744073709551616n'],
    [
      mk(2 ** 32, 'legacy'),
      'createLayer: the legacy generator takes seeds 0 ... 2^32-1, got 4294967296',
    ],
    [
      mk(2n ** 32n, 'legacy'),
      'createLayer: the legacy generator takes seeds 0 ... 2^32-1, got 4294967296n',
    ],
    [() => mha.rng(-1), 'rng: seed must be an integer in 0 ... 2^53-1 (or a BigInt), got -1'],
    [() => mha.rng(1, 'mt'), `rng: rng must be 'default_rng' or 'legacy', got "mt"`],
  ]);
  // the largest accepted seeds of each kind, and 0
  for (const [seed, rng] of [
    [0, 'default_rng'],
    [0n, 'default_rng'],
    [2 ** 53 - 1, 'default_rng'],
    [2n ** 64n - 1n, 'default_rng'],
    [2 ** 32 - 1, 'legacy'],
    [2n ** 32n - 1n, 'legacy'],
  ]) {
    mk(seed, rng)().free();
  }
  // the two words of a seed: 2^32 * hi + lo, for numbers and BigInts alike
  const a = mha.standardNormal(3, { seed: 2 ** 40 + 5 });
  const b = mha.standardNormal(3, { seed: 2n ** 40n + 5n });
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, mha.standardNormal(3, { seed: 5 }));
  assert.notDeepEqual(a, mha.standardNormal(3, { seed: 2 ** 40 }));
});

test('the module functions: splitHeads, mergeHeads, singleHead, mseLoss, rng', (t) => {
  const sh = (o) => () => mha.singleHead(X, { B, T, C, headSize: 8, Wq: W8, Wk: W8, Wv: W8, ...o });
  const r = mha.rng(1);
  check(t, [
    [() => mha.splitHeads(X), 'splitHeads: B must be an integer, got undefined'],
    [
      () => mha.splitHeads(X, { B, C, heads: H }),
      'splitHeads: T must be an integer, got undefined',
    ],
    [
      () => mha.splitHeads(X, { B, T, heads: H }),
      'splitHeads: C must be an integer, got undefined',
    ],
    [() => mha.splitHeads(X, { B, T, C }), 'splitHeads: heads must be an integer, got undefined'],
    [() => mha.mergeHeads(X, { B, T, C, heads: 0 }), 'mergeHeads: heads must be >= 1, got 0'],
    [
      () => mha.mergeHeads(X, { B, T, C, heads: 3 }),
      'mergeHeads: C (16) must be divisible by heads (3)',
    ],
    [
      () => mha.splitHeads(X.subarray(1), { B, T, C, heads: H }),
      'splitHeads: x has 95 elements, expected B*T*C = 96',
    ],
    [
      () => mha.splitHeads('x', { B, T, C, heads: H }),
      'splitHeads: x must be a Float64Array or an array of numbers, got "x"',
    ],
    [sh({ B: 0 }), 'singleHead: B must be >= 1, got 0'],
    [sh({ T: 'a' }), 'singleHead: T must be an integer, got "a"'],
    [sh({ C: 0.5 }), 'singleHead: C must be an integer, got 0.5'],
    [sh({ headSize: undefined }), 'singleHead: headSize must be an integer, got undefined'],
    [sh({ causal: 1 }), 'singleHead: causal must be true or false, got 1'],
    [
      sh({ Wv: undefined }),
      'singleHead: Wv must be a Float64Array or an array of numbers, got undefined',
    ],
    [sh({ Wk: W8.subarray(1) }), 'singleHead: Wk has 127 elements, expected C*headSize = 128'],
    [
      () => mha.singleHead(X.subarray(2), { B, T, C, headSize: 8, Wq: W8, Wk: W8, Wv: W8 }),
      'singleHead: X has 94 elements, expected B*T*C = 96',
    ],
    [() => mha.singleHead(X), 'singleHead: B must be an integer, got undefined'],
    [
      () => mha.mseLoss(undefined, X),
      'mseLoss: Y must be a Float64Array or an array of numbers, got undefined',
    ],
    [() => mha.mseLoss([], []), 'mseLoss: Y is empty'],
    [() => mha.mseLoss([1, 'a'], [1, 2]), 'mseLoss: Y[1] is not a number ("a")'],
    [() => mha.mseLoss([1, 2], [1]), 'mseLoss: target has 1 elements, expected Y.length = 2'],
    [() => mha.mseLoss(new BigInt64Array(2), [1, 2]), 'mseLoss: Y must hold numbers, not BigInts'],
    [
      () => mha.mseLoss(new DataView(new ArrayBuffer(8)), [1]),
      'mseLoss: Y must be a Float64Array or an array of numbers, got a DataView',
    ],
    [() => r.standardNormal(-1), 'rng.standardNormal: n must be >= 0, got -1'],
    [() => r.random(0.5), 'rng.random: n must be an integer, got 0.5'],
    [() => r.normal(NaN, 1, 2), 'rng.normal: loc must be a finite number, got NaN'],
    [() => r.normal(0, Infinity, 2), 'rng.normal: scale must be a finite number, got Infinity'],
    [() => r.normal(0, 1, -2), 'rng.normal: n must be >= 0, got -2'],
    [() => r.random(2 ** 31), 'rng.random: n is too large (2147483648)'],
    // the scratch block: over 2 GiB is refused before asking; 1 and 2 GiB are more than the
    // module's memory can hold (malloc fails at once, nothing is touched)
    [
      () => r.standardNormal(2 ** 28 + 1),
      'rng.standardNormal: arrays too large (2147483656 bytes)',
    ],
    [
      () => r.standardNormal(2 ** 28),
      'rng.standardNormal: out of memory (needed 2147483648 bytes of scratch)',
    ],
    [() => r.random(2 ** 27), 'rng.random: out of memory (needed 1073741824 bytes of scratch)'],
  ]);
  r.free();
});

test('the layer: forward, backward, train, gradcheck, tensors, before and after a forward', (t) => {
  const fresh = mha.createLayer({ C, heads: H, seed: 3 });
  const big = 'is too large: the forward cache needs';
  check(t, [
    [() => fresh.backward(X), 'layer.backward: call forward first'],
    [() => fresh.forwardFrom('Q'), 'layer.forwardFrom: no forward pass has been run yet'],
    [() => fresh.tensor('Y'), 'layer.tensor: no forward pass has been run yet'],
    [() => fresh.setTensor('att', X), 'layer.tensor: no forward pass has been run yet'],
    [() => layer.forward(X), 'layer.forward: B must be an integer, got undefined'],
    [() => layer.forward(X, null), 'layer.forward: options must be an object, got null'],
    [() => layer.forward(X, 'B=2'), 'layer.forward: options must be an object, got "B=2"'],
    [() => layer.forward(X, { B, T: 0 }), 'layer.forward: T must be >= 1, got 0'],
    [
      () => layer.forward(X, { B, T, causal: 'no' }),
      'layer.forward: causal must be true or false, got "no"',
    ],
    [
      () => layer.forward(X.subarray(1), { B, T }),
      'layer.forward: X has 95 elements, expected B*T*C = 2*3*16 = 96',
    ],
    [
      () => layer.forward([...X.subarray(1), 'x'], { B, T }),
      'layer.forward: X[95] is not a number ("x")',
    ],
    [
      () => layer.forward(X, { B: 1, T: 2 ** 14 }),
      `layer.forward: B = 1, T = 16384 ${big} 32806 MiB (the attention alone is B*heads*T*T), over the module's 1 GiB memory`,
    ],
    [
      () => layer.forward(X, { B: 2 ** 31 - 1, T: 1 }),
      `layer.forward: B = 2147483647, T = 1 ${big} 5242880 MiB (the attention alone is B*heads*T*T), over the module's 1 GiB memory`,
    ],
    [() => layer.forward(X, { B: 2 ** 31, T: 1 }), 'layer.forward: B is too large (2147483648)'],
  ]);
  layer.forward(X, { B, T });
  check(t, [
    [
      () => layer.backward(X.subarray(3)),
      'layer.backward: dY has 93 elements, expected B*T*C of the last forward = 2*3*16 = 96',
    ],
    [() => layer.tensor('dX'), 'layer.tensor: dX does not exist yet (run backward first)'],
    [() => layer.tensor('nope'), `layer.tensor: unknown tensor "nope"; one of ${TENSORS}`],
    [() => layer.tensor(3), `layer.tensor: unknown tensor 3; one of ${TENSORS}`],
    [() => layer.setTensor('dQ', X), 'layer.setTensor: dQ does not exist yet'],
    [
      () => layer.setTensor('Wq', X),
      'layer.setTensor: data has 96 elements, expected the size of Wq (16x16) = 256',
    ],
    [
      () => layer.setTensor('att', X),
      'layer.setTensor: data has 96 elements, expected the size of att (2x4x3x3) = 72',
    ],
    [() => layer.setTensor('x', X), `layer.setTensor: unknown tensor "x"; one of ${TENSORS}`],
    [
      () => layer.forwardFrom('Y'),
      `layer.forwardFrom: name must be one of Q, K, V, scores, att, headout, concat (the intermediates forward can restart from), got "Y"`,
    ],
    [
      () => layer.forwardFrom(),
      `layer.forwardFrom: name must be one of Q, K, V, scores, att, headout, concat (the intermediates forward can restart from), got undefined`,
    ],
    [() => layer.sgdStep('0.1'), 'layer.sgdStep: lr must be a finite number, got "0.1"'],
    [() => layer.train(X, X, { B, T, steps: -1 }), 'layer.train: steps must be >= 0, got -1'],
    [
      () => layer.train(X, X, { B, T, lr: '0.1' }),
      'layer.train: lr must be a finite number, got "0.1"',
    ],
    [() => layer.train(X, X), 'layer.train: B must be an integer, got undefined'],
    [
      () => layer.train(X.subarray(1), X, { B, T }),
      'layer.train: X has 95 elements, expected B*T*C = 2*3*16 = 96',
    ],
    [
      () => layer.train(X, X.subarray(1), { B, T }),
      'layer.train: target has 95 elements, expected B*T*C = 2*3*16 = 96',
    ],
    [
      () => layer.train(X, Float64Array.of(...X.subarray(1), NaN), { B, T }),
      'layer.train: target[95] is NaN; training data must be finite',
    ],
    [() => layer.gradcheck(X, null), 'layer.gradcheck: options must be an object, got null'],
    [() => layer.gradcheck(X, { B }), 'layer.gradcheck: T must be an integer, got undefined'],
    [
      () => layer.gradcheck(X.subarray(1), { B, T }),
      'layer.gradcheck: X has 95 elements, expected B*T*C = 2*3*16 = 96',
    ],
    [
      () => layer.gradcheck(X, { B, T, loss: 'l2' }),
      `layer.gradcheck: loss must be 'dot' or 'mse', got "l2"`,
    ],
    [
      () => layer.gradcheck(X, { B, T, loss: 'mse' }),
      'layer.gradcheck: target must be a Float64Array or an array of numbers, got undefined',
    ],
    [
      () => layer.gradcheck(X, { B, T, loss: 'mse', target: X.subarray(4) }),
      'layer.gradcheck: target has 92 elements, expected B*T*C = 96',
    ],
    [
      () => layer.gradcheck(X, { B, T, G: X.subarray(1) }),
      'layer.gradcheck: G has 95 elements, expected B*T*C = 96',
    ],
    [
      () => layer.gradcheck(X, { B, T, eps: -1e-3 }),
      'layer.gradcheck: eps must be > 0, got -0.001',
    ],
    [() => layer.gradcheck(X, { B, T, eps: 0 }), 'layer.gradcheck: eps must be > 0, got 0'],
    [
      () => layer.gradcheck(X, { B, T, eps: 'big' }),
      'layer.gradcheck: eps must be a finite number, got "big"',
    ],
    [
      () => layer.gradcheck(X, { B, T, samples: -1 }),
      'layer.gradcheck: samples must be >= 0, got -1',
    ],
    [
      () => layer.gradcheckSteps(X, { B, T, chunk: 0 }).next(),
      'layer.gradcheck: chunk must be >= 1, got 0',
    ],
    [
      () => layer.gradcheckSteps(X, null).next(),
      'layer.gradcheck: options must be an object, got null',
    ],
  ]);
  // an error from the C library, through its message
  let diverged;
  try {
    layer.train(X, X, { B, T, lr: 1e300, steps: 3 });
  } catch (e) {
    diverged = e;
  }
  assert.equal(
    diverged.message,
    `layer.train: training diverged: the loss is no longer finite (weights kept from the last finite step)`,
  );
  fresh.free();
});

// The one test of use after free (a layer, a generator): each member, double free, and the
// other layers and generators unaffected, bit for bit.
test('after free(): each member names itself; other layers and generators are unaffected', () => {
  const before = layer.forward(X, { B, T }).Y;
  const other = mha.rng(5);
  other.standardNormal(3);
  const l = mha.createLayer({ C, heads: H, seed: 3 });
  l.forward(X, { B, T });
  l.free();
  const calls = {
    weights: () => l.weights,
    grads: () => l.grads,
    params: () => l.params,
    gradBuffer: () => l.gradBuffer,
    forward: () => l.forward(X, { B, T }),
    backward: () => l.backward(X),
    zeroGrad: () => l.zeroGrad(),
    sgdStep: () => l.sgdStep(0.1),
    train: () => l.train(X, X, { B, T }),
    gradcheck: () => l.gradcheck(X, { B, T }),
    tensor: () => l.tensor('Y'),
    setTensor: () => l.setTensor('Y', X),
    forwardFrom: () => l.forwardFrom('Q'),
    free: () => l.free(),
  };
  for (const [member, call] of Object.entries(calls)) {
    assert.equal(messageOf(call), `layer.${member}: the layer has been freed`, member);
  }
  // gradcheckSteps checks when it starts
  assert.equal(
    messageOf(() => l.gradcheckSteps(X, { B, T }).next()),
    'layer.gradcheck: the layer has been freed',
  );
  // a freed generator, used and freed again
  const r = mha.rng(3);
  r.free();
  for (const [call, member] of [
    [() => r.standardNormal(1), 'standardNormal'],
    [() => r.random(1), 'random'],
    [() => r.normal(0, 1, 1), 'normal'],
    [() => r.free(), 'free'],
  ]) {
    assert.equal(messageOf(call), `rng.${member}: this generator has been freed`, member);
  }
  // the live layer computes the same bits; the live generator goes on with its own stream
  assert.deepEqual(layer.forward(X, { B, T }).Y, before);
  const again = mha.rng(5);
  again.standardNormal(3);
  assert.deepEqual(other.standardNormal(4), again.standardNormal(4));
  other.free();
  again.free();
});

test('a layer freed while its gradient check is in progress: the next step says so', () => {
  const l = mha.createLayer({ C, heads: H, seed: 3 });
  const gen = l.gradcheckSteps(X, { B, T, chunk: 5 });
  gen.next();
  l.free();
  assert.equal(
    messageOf(() => gen.next()),
    'layer.gradcheck: the layer has been freed',
  );
});

test(`just under 1 GiB of forward cache the JS check lets C try, and C reports out of memory`, async () => {
  // C = 1024, 1024 heads of 1, T = 4: the cache is 8 (19 BTC + 4 BhT^2) bytes = 1,146,880 B bytes
  // (19 (B,T,C) blocks: the forward's and the backward's, dQm/dKm/dVm included). B = 936 needs
  // 1,073,479,680 bytes <= 2^30: the JS check lets it through and C cannot allocate it (the
  // module already holds memory). B = 937 needs 1,074,626,560 > 2^30: refused by the JS check.
  // (Exactly 2^30 would need 19 C + 4 h T to be a power of two: with 19 odd, only a C far too
  // large for the module's memory gives that, so this pair brackets the limit instead.)
  // A fresh module, so no other test's memory counts.
  const m = await loadMHA();
  const l = m.createLayer({ C: 1024, heads: 1024, seed: 1 });
  const big = new Float64Array(937 * 4 * 1024);
  assert.equal(
    messageOf(() => l.forward(big.subarray(0, 936 * 4 * 1024), { B: 936, T: 4 })),
    'layer.forward: out of memory (nothing was changed)',
  );
  assert.match(
    messageOf(() => l.forward(big, { B: 937, T: 4 })),
    /is too large: the forward cache needs 1025 MiB/,
  );
  assert.match(
    messageOf(() => l.forward(big.subarray(0, 512 * 8 * 1024), { B: 512, T: 8 })),
    /is too large: the forward cache needs 1632 MiB/,
  );
  l.free();
});

test('a gradient check interrupted by another call says so', () => {
  const l = mha.createLayer({ C, heads: H, seed: 3 });
  const gen = l.gradcheckSteps(X, { B, T, chunk: 5 });
  gen.next();
  l.zeroGrad(); // does not cancel
  gen.next();
  l.backward(X); // does
  assert.equal(
    messageOf(() => gen.next()),
    `layer.gradcheck: the check was interrupted: another call on this layer ran while it was in progress`,
  );
  l.free();
});
