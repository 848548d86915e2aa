// The analyses of the notebook check (web/check/analyses/): what each constant factor means in
// this layer (worked out here by hand for one size), the array operations they recompute with
// (against plain loops written here), and the sentences the check says for the students'
// mistakes outside the catalogue (tests/reference/notebook_students.py, UNSEEN): the numbers,
// orders and names each must carry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SMALL_INPUTS, smallSizes } from './small-layer.mjs';
import { loadMHA } from '../helpers.mjs';
import { loadManifest, loadStudent } from './students.mjs';
import { checkNotebook } from '../../web/check/check.js';
import {
  factorNumber,
  fitFactor,
  meanings,
  stepReadings,
} from '../../web/check/analyses/factor.js';
import {
  isAre,
  layoutOf,
  meanAlong,
  reorder,
  sameBlock,
  shapeOf,
  softmaxAll,
  softmaxAxis,
  swapAxes,
  verbS,
} from '../../web/check/analyses/layout.js';
import { sameNumbers } from '../../web/check/analyses/permute.js';

// B = 3, T = 5, C = 24, h = 3: hs = 8, B·T = 15, Y.size = 360
const s = { B: 3, T: 5, C: 24, heads: 3, hs: 8, N: 15, n: 360 };
const exprs = (k, node, rel) => meanings(k, node, s, rel).map((r) => r.expr);
const specific = (k, node) =>
  meanings(k, node, s)
    .filter((r) => !r.generic)
    .map((r) => r.expr);

test('fitFactor: the least-squares k, null for an all-zero reference or k = 0', () => {
  assert.equal(fitFactor(Float64Array.of(2, 4, -6), Float64Array.of(1, 2, -3)), 2);
  assert.equal(fitFactor(Float64Array.of(1, 1), Float64Array.of(0, 0)), null);
  assert.equal(fitFactor(Float64Array.of(0, 0), Float64Array.of(1, 2)), null);
  // not exact: (1·1 + 3·1) / 2 = 2
  assert.equal(fitFactor(Float64Array.of(1, 3), Float64Array.of(1, 1)), 2);
  assert.equal(factorNumber(1 / 3), '0.333333');
  assert.equal(factorNumber(-1), '-1');
});

test('the scale of the scores: √hs / D for each divisor D a student writes', () => {
  const r8 = Math.sqrt(8);
  const cases = [
    [r8, '√hs', 'missing-scale'], // no division
    [r8 / 8, '√hs / hs', undefined], // divided by hs
    [r8 / Math.sqrt(24), '√hs / √C', 'scale-sqrt-C'],
    [r8 / 24, '√hs / C', undefined],
    [r8 / Math.sqrt(5), '√hs / √T', undefined],
    [r8 / Math.sqrt(3), '√hs / √h', undefined],
    [8, 'hs', undefined], // multiplied by √hs
    [1 / 8, '1 / hs', undefined], // divided by √hs three times
  ];
  for (const [k, expr, id] of cases) {
    const found = meanings(k, 'scores', s).filter((r) => !r.generic);
    assert.deepEqual(
      found.map((r) => r.expr),
      [expr],
      `k = ${k}`,
    );
    assert.equal(found[0].id, id, expr);
    assert.deepEqual(found[0].sites, ['scores']);
  }
  // dQ's own scale readings sit at dQ; the merged dQm reads as dQ
  assert.deepEqual(meanings(r8, 'dQm', s)[0].sites, ['dQ']);
  assert.match(meanings(r8, 'dK', s)[0].why, /dK is not divided by np\.sqrt\(hs\)/);
  // a factor of √hs itself (k = 1) is no reading
  assert.deepEqual(exprs(1, 'scores'), []);
});

test('the loss and dY: the sum, a batch mean, a missing or extra 2, the sign', () => {
  assert.deepEqual(specific(360, 'loss'), ['Y.size']);
  assert.equal(meanings(360, 'loss', s)[0].id, 'mse-loss-sum');
  assert.deepEqual(specific(120, 'loss'), ['Y.size / B']);
  assert.deepEqual(specific(1 / 3, 'loss'), ['1/B']);
  assert.deepEqual(specific(0.5, 'loss'), ['1/2']);
  const dY = (k) => meanings(k, 'dY', s).filter((r) => !r.generic);
  assert.deepEqual(
    dY(360).map((r) => [r.expr, r.id]),
    [['Y.size', 'mse-grad-factor']],
  );
  assert.deepEqual(
    dY(0.5).map((r) => [r.expr, r.id]),
    [['1/2', 'mse-grad-factor']],
  );
  assert.deepEqual(
    dY(180).map((r) => r.expr),
    ['Y.size / 2'],
  );
  assert.deepEqual(
    dY(2).map((r) => r.expr),
    ['2'],
  );
  assert.deepEqual(
    dY(-1).map((r) => r.expr),
    ['−1'],
  );
  assert.deepEqual(
    dY(1 / 3).map((r) => r.expr),
    ['1/B'],
  );
  assert.deepEqual(
    dY(24).map((r) => r.expr),
    ['C'],
  );
  assert.deepEqual(
    dY(15).map((r) => r.expr),
    ['B·T'],
  );
  for (const r of meanings(360, 'dY', s)) assert.deepEqual(r.sites, ['dY']);
});

test('a weight gradient: a mean over the batch or the tokens, accumulated backward calls', () => {
  const own = (k) => meanings(k, 'dWq', s).filter((r) => r.sites.includes('dWq') && !r.generic);
  assert.deepEqual(
    own(1 / 3).map((r) => r.expr),
    ['1/B'],
  );
  assert.deepEqual(
    own(1 / 15).map((r) => r.expr),
    ['1/(B·T)'],
  );
  assert.deepEqual(
    own(1 / 5).map((r) => r.expr),
    ['1/T'],
  );
  assert.match(own(2)[0].why, /two backward calls without zeroing/);
  assert.match(own(3)[0].why, /three backward calls/);
  // later than dY, a factor may also come from dY: both readings, each with its site
  const all = meanings(0.5, 'dWo', s).filter((r) => !r.generic);
  assert.deepEqual(all.map((r) => r.sites[0]).sort(), ['dY']);
  assert.ok(meanings(360, 'dWo', s).some((r) => r.id === 'mse-grad-factor'));
});

test('Y: the heads averaged is 1/h; dQ: a softmax backward over B sits at dscores', () => {
  const y = meanings(1 / 3, 'Y', s).filter((r) => !r.generic);
  assert.deepEqual(
    y.map((r) => [r.expr, r.id, r.sites[0]]),
    [['1/h', 'reduction', 'Y']],
  );
  const dq = meanings(1 / 3, 'dQ', s).filter((r) => r.sites.includes('dscores'));
  assert.equal(dq.length, 1);
  assert.match(dq[0].why, /softmax backward \(dscores\) divided by B = 3/);
  assert.equal(meanings(1 / 3, 'dscores', s).filter((r) => !r.generic)[0].expr, '1/B');
  // the generic readings name the number only
  const g = meanings(-1, 'att', s);
  assert.ok(g.every((r) => r.generic));
  assert.deepEqual(
    g.map((r) => r.expr),
    ['−1'],
  );
  assert.deepEqual(exprs(5, 'att'), ['T']);
  assert.deepEqual(exprs(0.2, 'att'), ['1/T']);
  assert.deepEqual(exprs(3, 'att').sort(), ['B', 'h']);
});

test('meanings: k must be as close to a quantity as the precision allows', () => {
  const k = (Math.sqrt(8) / 8) * (1 + 1e-7); // float32-like noise
  assert.deepEqual(exprs(k, 'scores'), []);
  assert.ok(exprs(k, 'scores', 1e-4).includes('√hs / hs'));
  assert.deepEqual(
    stepReadings('scores', s).map((r) => r.expr),
    meanings(1, 'scores', s, Infinity)
      .filter((r) => r.sites[0] === 'scores' && !r.generic && r.expr.includes('hs'))
      .map((r) => r.expr),
  );
  assert.equal(stepReadings('dY', s).length, 11);
  assert.equal(stepReadings('dQ', s)[0].expr, '√hs');
  assert.deepEqual(stepReadings('att', s), []);
});

// ------------------------------------------------------------------------------------------------
// the array operations, against plain index loops

const arange = (n) => Float64Array.from({ length: n }, (_, i) => Math.sin(i + 1) * 3);

test('layoutOf and shapeOf: the layout of each node of the check', () => {
  assert.deepEqual(['Q', 'att', 'dWo', 'loss', 'concat', 'Qm'].map(layoutOf), [
    'split',
    'square',
    'weight',
    'scalar',
    'merged',
    'merged',
  ]);
  assert.deepEqual(shapeOf('dK', s), [3, 3, 5, 8]);
  assert.deepEqual(shapeOf('dscores', s), [3, 3, 5, 5]);
  assert.deepEqual(shapeOf('Wq', s), [24, 24]);
  assert.deepEqual(shapeOf('loss', s), []);
  assert.deepEqual(shapeOf('dX', s), [3, 5, 24]);
  assert.deepEqual(
    [isAre('scores'), isAre('att'), isAre('loss'), isAre('dscores')],
    ['are', 'is', 'is', 'are'],
  );
  assert.deepEqual([verbS('scores'), verbS('Q')], ['', 's']);
  // weights are exactly (d)W + q, k, v or o
  assert.deepEqual(['xWq', 'dWqx', 'dWo'].map(layoutOf), ['merged', 'merged', 'weight']);
});

// softmax of x (2, 3, 4) over one axis at entry (i, j, k), by the definition
function softmaxAt(x, axis, idx) {
  const at = ([i, j, k]) => (i * 3 + j) * 4 + k;
  let sum = 0;
  for (let m = 0; m < [2, 3, 4][axis]; m++) {
    const o = [...idx];
    o[axis] = m;
    sum += Math.exp(x[at(o)]);
  }
  return Math.exp(x[at(idx)]) / sum;
}

test('softmaxAxis over each axis of a (2, 3, 4) array equals the plain loops', () => {
  const x = arange(24);
  for (let axis = 0; axis < 3; axis++) {
    const mine = softmaxAxis(x, [2, 3, 4], axis);
    for (let flat = 0; flat < 24; flat++) {
      const idx = [Math.floor(flat / 12), Math.floor(flat / 4) % 3, flat % 4];
      assert.ok(Math.abs(mine[flat] - softmaxAt(x, axis, idx)) < 1e-15, `axis ${axis} ${idx}`);
    }
  }
  // large scores: the max is subtracted first, so nothing overflows
  const big = softmaxAxis(Float64Array.of(1000, 1001, 999), [3], 0);
  const z = Math.exp(-1) + 1 + Math.exp(-2);
  [Math.exp(-1) / z, 1 / z, Math.exp(-2) / z].forEach((w, i) => {
    assert.ok(Math.abs(big[i] - w) < 1e-15, `entry ${i}: ${big[i]}`);
  });
  // -inf entries get weight 0; the whole-array softmax sums to 1
  const masked = softmaxAxis(Float64Array.of(0, -Infinity, 1), [3], 0);
  assert.equal(masked[1], 0);
  const all = softmaxAll(x);
  assert.ok(Math.abs(all.reduce((a, b) => a + b, 0) - 1) < 1e-15);
  assert.ok(Math.abs(all[5] / all[2] - Math.exp(x[5] - x[2])) < 1e-12);
});

test('swapAxes, reorder, sameBlock and meanAlong equal the plain loops', () => {
  const x = arange(2 * 3 * 3);
  const shape = [2, 3, 3];
  const t = swapAxes(x, shape, 1, 2);
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 3; j++) {
      for (let k = 0; k < 3; k++) assert.equal(t[(i * 3 + k) * 3 + j], x[(i * 3 + j) * 3 + k]);
    }
  }
  const r = reorder(x, shape, 1, [2, 0, 1]);
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 3; j++) {
      for (let k = 0; k < 3; k++) {
        assert.equal(r[(i * 3 + j) * 3 + k], x[(i * 3 + [2, 0, 1][j]) * 3 + k]);
      }
    }
  }
  const opts = { shape, axis: 1, tol: 0 };
  assert.ok(sameBlock(r, x, opts, 0, 2));
  assert.ok(!sameBlock(r, x, opts, 0, 0));
  assert.ok(sameBlock(r, x, { ...opts, tol: 100 }, 0, 0));
  // with 0, 1, …, 17: block 2 is block 0 + 6 entry by entry, within a tolerance of 6, not 5.9
  const n = Float64Array.from({ length: 18 }, (_, i) => i);
  const rn = reorder(n, shape, 1, [2, 0, 1]);
  assert.ok(sameBlock(rn, n, { ...opts, tol: 6 }, 0, 0));
  assert.ok(!sameBlock(rn, n, { ...opts, tol: 5.9 }, 0, 0));
  // the mean over the middle and the last axis
  assert.deepEqual([...meanAlong(n.subarray(0, 6), [2, 3], 1)], [1, 1, 1, 4, 4, 4]);
  assert.deepEqual([...meanAlong(n.subarray(0, 6), [3, 2], 1)], [0.5, 0.5, 2.5, 2.5, 4.5, 4.5]);
  const m = meanAlong(x, shape, 0);
  for (let j = 0; j < 9; j++) {
    assert.ok(Math.abs(m[j] - (x[j] + x[9 + j]) / 2) < 1e-15);
    assert.equal(m[9 + j], m[j]);
  }
  assert.ok(sameNumbers(t, x, 0));
  assert.ok(!sameNumbers(Float64Array.of(1, 2), Float64Array.of(1, 3), 0.5));
  assert.ok(sameNumbers(Float64Array.of(1, 2), Float64Array.of(2, 1.25), 0.5));
  assert.ok(!sameNumbers(Float64Array.of(1), Float64Array.of(1, 1), 0));
});

// ------------------------------------------------------------------------------------------------
// the sentences said for the students' mistakes outside the catalogue

const mha = await loadMHA();
const unseen = Object.fromEntries(
  loadManifest()
    .filter((r) => r.unseen)
    .map((r) => [r.name, r]),
);

/** What the first differing row must say: its numbers, orders and names, per notebook. */
const SAYS = {
  'scale-hs': [/^Your scores are 0\.353553 × the course's \(k = √hs \/ hs\)/, /hs = 8/],
  'scale-hs-f32-causal': [/0\.447214 × .*\(k = √hs \/ hs\)/, /hs = 5/],
  'scale-times-sqrt-hs': [/9 × the course's \(k = hs\): multiplied by √hs/],
  'scale-hs-only-att': [/^Your att is the course's step from scores 0\.353553 ×/, /not in your/],
  'mask-diagonal': [/hides the diagonal too \(np\.triu\(\.\.\., k=0\), filled with -1000000000\)/],
  'mask-diagonal-nan': [/has 45 NaN entries/, /\[0, 0, 0, 0\]/, /divides 0 by 0/],
  'mask-k2-f32': [/one off \(np\.triu\(\.\.\., k=2\)/],
  'mask-tril': [/hides the past instead of the future \(np\.tril/],
  'mask-fill-zero-only-Y': [/^Your Y is the course's step from an att that is masked with 0/],
  'dscores-diagonal-only-dX': [/^Your dX is the course's step from dscores = att \* \(1 - att\)/],
  'mask-fill-zero': [/masked with 0 instead of -np\.inf/],
  'mask-fill-zero-f32-in-place': [/^Your scores are masked with 0 above the diagonal/],
  'mask-after-softmax': [/the mask applied after the softmax/],
  'heads-reversed': [/head blocks in the order 3, 2, 1, 0 \(reversed\) instead of 0…3/],
  'merge-interleaved-f32': [/merge_heads with \(h, hs\) swapped/, /h = 3, hs = 8/],
  'q-head-slice-fixed': [/^Your Q's heads are the course's heads 0, 0, 0 instead of 0…2/],
  'heads-reversed-only-Y': [/step from concat with its head blocks in the order 3, 2, 1, 0/],
  'tokens-reversed': [/tokens in the order 4, 3, 2, 1, 0 \(reversed\)/],
  'heads-averaged': [/0\.25 × the course's \(k = 1\/h\): the 4 heads averaged/],
  'split-h-hs-swapped': [/split_heads reshaped to \(B, T, hs, h\)/, /h = 4, hs = 5/],
  'k-from-wq': [/^Your K is the course's step with Wq in place of Wk/],
  'v-from-wk-f32-causal': [/^Your V is the course's step with Wk in place of Wv/],
  'bias-q': [/a vector of 24 numbers/, /a bias\. The course's layer has none/],
  'bias-y': [/a vector of 20 numbers \(b\[:3\] = [^)]*\): a bias/],
  'q-residual': [/^Your Q is the course's plus X; the course computes Q = split_heads\(X @ Wq\)/],
  'residual-in-layer-f32': [/plus X: a residual connection inside the layer/],
  'scores-transposed': [/axes 2 and 3 swapped \(its transpose: K @ Q\.T/],
  'scores-transposed-causal': [/axes 2 and 3 swapped/],
  'softmax-whole-array-causal': [/a softmax over the whole array/],
  'softmax-axis-1': [/a softmax over the heads \(axis=1\)/],
  'softmax-no-max-overflow-f32': [/12 NaN/, /largest score in that row is 166\.5/, /88\.72/],
  'softmax-sum-no-keepdims': [/without keepdims=True: the row sums broadcast/],
  'softmax-no-keepdims-f32': [/np\.max and np\.sum without keepdims=True/],
  'dscores-no-keepdims': [
    /^Your dscores subtract np\.sum\(att \* datt, axis=-1\) without keepdims/,
  ],
  'dy-over-B': [/^Your dY is 120 × the course's \(k = T·C\): divided by B = 3 instead of Y\.size/],
  'dy-batch-mean': [/0\.333333 × the course's \(k = 1\/B\): an extra 1\/B = 1\/3/],
  'dy-batch-mean-B2h4': [/Two causes .*B = 2, T = 5, C = 16, h = 4/, /factor 2 .* 1\/B = 1\/2/],
  'dscores-diagonal': [/^Your dscores are att \* \(1 - att\) \* datt/],
  'dscores-diagonal-f32-causal': [/only the diagonal of the softmax’s Jacobian/],
  'dscores-batch-mean': [/^Your dscores are 0\.333333 × .*divided by B = 3/],
  'dscores-batch-mean-B2h4-hidden': [/^Your dQ is 0\.5 × .*\(k = 1\/B\): the softmax backward/],
  'dq-scaled-twice': [/0\.333333 × the course's \(k = √hs \/ hs\)/],
  'grads-not-zeroed': [/^Your dWo is 2 × .*two backward calls without zeroing/],
  'dw-first-item': [/^Your dWq sums over batch item 0 only, of the 3/],
  'dwo-batch-subset': [/^Your dWo sums over batch items 1, 2 only, of the 3/],
  'dx-q-path-twice': [/the Q path \(dQm @ Wq\.T\) counted twice/],
  'dx-k-path-wq-f32-causal': [/^Your dX is the course's step with Wq in place of Wk/],
};

test('every mistake notebook outside the catalogue has its sentence here, and back', () => {
  const mistakes = Object.values(unseen).filter((r) => r.blame.length);
  assert.deepEqual(mistakes.map((r) => r.name).sort(), Object.keys(SAYS).sort());
});

for (const [name, patterns] of Object.entries(SAYS)) {
  test(`${name}: the first differing row says what the student did`, () => {
    const run = unseen[name];
    const report = checkNotebook(mha, loadStudent(name), { heads: run.heads, causal: run.causal });
    const row = report.rows.find((r) => r.status === 'differs');
    assert.equal(row.name, run.blame[0][0]);
    assert.equal(row.diagnosis.id, run.blame[0][1]);
    for (const re of patterns) assert.match(row.diagnosis.message, re);
    // no id of the check inside the sentence
    assert.doesNotMatch(row.diagnosis.message, /step-differs|follows-from|wrong-operand/);
    if (row.diagnosis.id === 'factor' && /× the course's/.test(row.diagnosis.message)) {
      const k = Number(/ ([-\d.]+) × the course's/.exec(row.diagnosis.message)[1]);
      if (!/step from/.test(row.diagnosis.message)) {
        assert.ok(Math.abs(row.diagnosis.factor - k) < 1e-5 * Math.abs(k), name);
      }
    }
  });
}

test('at a large size the steps not saved are not searched, and the row says so', async () => {
  const { LARGE, measuredFacts } = await import('../../web/check/analyses/index.js');
  assert.equal(LARGE, 131072);
  const ctx = {
    yours: Float64Array.of(1, 2),
    local: Float64Array.of(3, 5),
    tolAbs: 0,
    large: true,
    hidden: ['att', 'headout'],
    s: { n: 196608 },
    name: 'Y',
    courseLine: 'Y = concat @ Wo',
  };
  const row = { maxAbs: 3, normRel: 0.5 };
  const { id, message } = measuredFacts(ctx, row);
  assert.equal(id, 'step-differs');
  assert.match(
    message,
    /At this size \(B·T·C = 196608\) the steps you did not save were not searched/,
  );
  assert.match(message, /the largest difference is 3e\+0 \(norm-wise 5e-1\)/);
  assert.doesNotMatch(measuredFacts({ ...ctx, large: false }, row).message, /not searched/);
  assert.doesNotMatch(measuredFacts({ ...ctx, hidden: [] }, row).message, /not searched/);
  // the same numbers in another order are said as such
  const swapped = measuredFacts({ ...ctx, yours: Float64Array.of(5, 3) }, row).message;
  assert.match(swapped, /holds the course's numbers, in another order/);
  // word for word: both facts; then no facts at all (no finite difference, not a reorder)
  assert.equal(
    measuredFacts({ ...ctx, yours: Float64Array.of(5, 3), large: false }, row).message,
    'No known mistake or relation reproduces your Y: it is not a multiple, a reordering or a sum ' +
      "of the course's array, nor the step with another operand. Measured: it holds the course's " +
      'numbers, in another order (a reshape or transpose?); the largest difference is 3e+0 ' +
      '(norm-wise 5e-1). The course computes Y = concat @ Wo.',
  );
  for (const r of [null, { maxAbs: Infinity, normRel: 1 }, { normRel: 1 }]) {
    assert.equal(
      measuredFacts({ ...ctx, large: false }, r).message,
      'No known mistake or relation reproduces your Y: it is not a multiple, a reordering or a ' +
        "sum of the course's array, nor the step with another operand. The course computes " +
        'Y = concat @ Wo.',
    );
  }
});

// ------------------------------------------------------------------------------------------------
// the relations on small hand-made arrays (a context as check.js builds it, its parts set here)

const { addedAnalysis, batchSubsetAnalysis, biasAnalysis, factorAnalysis, headMeanAnalysis } =
  await import('../../web/check/analyses/relations.js');

/** A context for `node` with the student's `yours` and the course's `local`. */
function context(node, yours, local, more = {}) {
  return {
    node,
    name: node.replace(/m$/, ''),
    yours: Float64Array.from(yours),
    local: Float64Array.from(local),
    s: { B: 2, T: 3, C: 4, heads: 2, hs: 2, N: 6, n: 24 },
    hidden: [],
    courseLine: 'the line',
    dtypeTol: 1e-9,
    reproduces(mine) {
      return (
        mine.length === this.yours.length &&
        mine.every((x, i) => Math.abs(x - this.yours[i]) < 1e-12)
      );
    },
    laterEvidence: () => 'open',
    savedValue: () => null,
    matched: () => false,
    bias: () => null,
    ...more,
  };
}
const ramp = (n, f = (i) => Math.sin(i + 1)) => Float64Array.from({ length: n }, (_, i) => f(i));
const times = (a, k) => a.map((x) => k * x);

test('factorAnalysis: k = 1 or no fit is nothing; one reading named with its id', () => {
  const local = ramp(24);
  assert.equal(factorAnalysis(context('Y', local, local)), null);
  assert.equal(
    factorAnalysis(
      context(
        'Y',
        ramp(24, () => 0),
        local,
      ),
    ),
    null,
  );
  // not a multiple at all
  assert.equal(
    factorAnalysis(
      context(
        'Y',
        ramp(24, (i) => i * i),
        local,
      ),
    ),
    null,
  );
  // dY: the sum (k = Y.size = 24): mse-grad-factor
  const sum = factorAnalysis(context('dY', times(local, 24), local));
  assert.equal(sum.id, 'mse-grad-factor');
  assert.ok(Math.abs(sum.factor - 24) < 1e-12);
  assert.match(sum.message, /^Your dY is 24 × the course's \(k = Y\.size\): no division/);
  assert.match(sum.message, /; the course computes the line\.$/);
  assert.equal(sum.same.label, 'factor 24');
});

test('factorAnalysis: two causes at one number, and what tells them apart', () => {
  const local = ramp(24);
  // dY × 1/2 at B = 2: the missing 2, or a mean over the batch; dY is the step itself
  const half = factorAnalysis(context('dY', times(local, 0.5), local));
  assert.equal(half.id, 'factor');
  assert.match(
    half.message,
    /Two causes give this number at these sizes \(B = 2, T = 3, C = 4, h = 2\)/,
  );
  assert.match(
    half.message,
    /the factor 2 of the square is missing \(k = 1\/2\); or an extra 1\/B/,
  );
  assert.match(
    half.message,
    /A run with other sizes \(another B, T or h\) tells them apart\. The course computes the line\.$/,
  );
  // dWo × 2, dY not saved: two backward calls (at dWo) or a factor 2 in dY; saving dY tells
  const twice = (more) =>
    factorAnalysis(context('dWo', times(local, 2), local, { hidden: ['dY'], ...more }));
  assert.match(twice().message, /Saving dY tells them apart\./);
  // a later array the dY factor would scale matches: only the step's own cause is left
  const own = twice({ laterEvidence: () => 'contradicted' });
  assert.match(own.message, /\(k = 2\): two backward calls without zeroing/);
  // a later array shows the same factor: only the dY cause is left
  const dy = twice({ laterEvidence: () => 'confirmed' });
  assert.match(dy.message, /\(k = 2\): a factor 2 too many; the course/);
  // dY itself saved (and differing elsewhere): its readings are not open
  assert.match(twice({ hidden: [] }).message, /\(k = 2\): two backward calls/);
});

test('factorAnalysis at dQ: the forward scale mistakes are not named when the scores match', () => {
  const local = ramp(24);
  const s16 = { B: 2, T: 3, C: 16, heads: 4, hs: 4, N: 6, n: 96 };
  const k = 2; // √hs: no 1/√hs in dQ
  const plain = factorAnalysis(context('dQ', times(local, k), local, { s: s16 }));
  assert.equal(plain.id, 'missing-scale');
  const matched = factorAnalysis(
    context('dQ', times(local, k), local, { s: s16, matched: (n) => n === 'scores' }),
  );
  assert.equal(matched.id, 'factor');
  assert.match(matched.message, /it lacks the course's 1\/√hs; your scores match/);
});

test('factorAnalysis: generic readings name the number, an unknown k only k', () => {
  const local = ramp(24);
  const neg = factorAnalysis(context('headout', times(local, -1), local));
  assert.match(neg.message, /^Your headout is -1 × the course's: one constant factor k = -1 over/);
  const odd = factorAnalysis(context('headout', times(local, 0.37), local));
  assert.match(odd.message, /one constant factor k = 0\.37 over every entry; the course computes/);
  assert.ok(Math.abs(odd.factor - 0.37) < 1e-12);
  assert.equal(odd.unexplained, true); // k is no quantity of the layer: the edits are tried
  assert.equal(neg.unexplained, true);
  // word for word; the quantities k equals (h = B = 2 here), each once, not k itself again
  assert.deepEqual(factorAnalysis(context('att', times(local, 2), local)), {
    id: 'factor',
    factor: 2,
    message:
      "Your att is 2 × the course's: one constant factor k = 2 = h = B over every entry; " +
      'the course computes the line.',
    unexplained: false,
  });
  // k = 1 within 1e-9 is no factor; just outside it is one
  assert.equal(factorAnalysis(context('att', times(local, 1 + 5e-10), local)), null);
  assert.equal(factorAnalysis(context('att', times(local, 1 + 2e-9), local)).id, 'factor');
});

test('biasAnalysis: the same row on every token, named when saved', () => {
  const local = ramp(24); // Y (2, 3, 4)
  const b = Float64Array.of(0.5, -1, 2, 0.25);
  const yours = local.map((x, i) => x + b[i % 4]);
  const unnamed = biasAnalysis(context('Y', yours, local));
  assert.equal(unnamed.id, 'bias');
  assert.match(
    unnamed.message,
    /a vector of 4 numbers \(b\[:3\] = 0\.5, -1, 2\): a bias\. The course's layer has none: the line\./,
  );
  const named = biasAnalysis(context('Y', yours, local, { bias: (n) => (n === 'bo' ? b : null) }));
  assert.match(named.message, /same row added to every token, your bo: a bias/);
  const other = biasAnalysis(
    context('Y', yours, local, { bias: () => Float64Array.of(0.5, -1, 2, 0.3) }),
  );
  assert.match(other.message, /a vector of 4 numbers/);
  // a row vector that is not the same on every token is no bias; nor a zero one
  assert.equal(
    biasAnalysis(
      context(
        'Y',
        local.map((x, i) => x + (i === 5 ? 1 : 0)),
        local,
      ),
    ),
    null,
  );
  assert.equal(biasAnalysis(context('Y', local, local)), null);
  // one token only: nothing to tell a bias from a difference
  const one = { B: 1, T: 1, C: 4, heads: 2, hs: 2, N: 1, n: 4 };
  assert.equal(biasAnalysis(context('Y', yours.slice(0, 4), local.slice(0, 4), { s: one })), null);
  // split Q (2, 2, 3, 2): head h's part of b on every token of that head
  const split = local.map((x, i) => x + b[Math.floor(i / 6) % 2 === 0 ? i % 2 : 2 + (i % 2)]);
  assert.match(biasAnalysis(context('Q', split, local)).message, /^Your Q is the course's plus/);
  assert.equal(biasAnalysis(context('att', yours, local)), null);
  // each result's own bias by name: Q and Qm bq, K and Km bk, V and Vm bv, Y bo
  const own = { Q: 'bq', Qm: 'bq', K: 'bk', Km: 'bk', V: 'bv', Vm: 'bv', Y: 'bo' };
  for (const [node, name] of Object.entries(own)) {
    const data = node.length === 1 && node !== 'Y' ? split : yours;
    const found = biasAnalysis(
      context(node, data, local, { bias: (n) => (n === name ? b : null) }),
    );
    assert.match(found.message, new RegExp(`every token, your ${name}: a bias`), node);
  }
  // the saved bias named when it reproduces the row too (here within 1e-12: the context's
  // tolerance), and not beyond
  const near = (e) => biasAnalysis(context('Y', yours, local, { bias: () => b.map((x) => x + e) }));
  assert.match(near(1e-13).message, /your bo/);
  assert.match(near(1e-7).message, /a vector of 4 numbers/);
});

test('addedAnalysis: another array added, a residual named at Y', () => {
  const local = ramp(24);
  const X = ramp(24, (i) => Math.cos(3 * i));
  const with2 = context(
    'Y',
    local.map((x, i) => x + X[i]),
    local,
    {
      sameLayout: () => [{ name: 'X', data: X }],
    },
  );
  assert.match(
    addedAnalysis(with2).message,
    /^Your Y is the course's plus X: a residual connection inside/,
  );
  const twiceQ = context(
    'K',
    local.map((x, i) => x + 2 * X[i]),
    local,
    {
      sameLayout: () => [{ name: 'Q', data: X }],
    },
  );
  const m = addedAnalysis(twiceQ).message;
  assert.match(m, /^Your K is the course's plus 2 × Q; the course computes the line\.$/);
  // a multiple fitted from float32 arrays lands on 1 or a few float32 ulps off it (which, depends
  // on the BLAS that made the arrays): the sentence is the same for each
  for (const c of [1, 1 + 2 ** -23, 1 - 3 * 2 ** -24, 1 + 4e-7]) {
    const near1 = context(
      'Y',
      local.map((x, i) => x + c * X[i]),
      local,
      { sameLayout: () => [{ name: 'X', data: X }] },
    );
    assert.match(
      addedAnalysis(near1).message,
      /^Your Y is the course's plus X: a residual/,
      `${c}`,
    );
  }
  // 1 + 1e-5 prints as 1.00001: a different multiple, said
  const off = context(
    'Y',
    local.map((x, i) => x + 1.00001 * X[i]),
    local,
    { sameLayout: () => [{ name: 'X', data: X }] },
  );
  assert.match(addedAnalysis(off).message, /^Your Y is the course's plus 1\.00001 × X: a residual/);
  assert.equal(addedAnalysis({ ...twiceQ, sameLayout: () => [] }), null);
});

test('batchSubsetAnalysis: which batch items a weight gradient sums', () => {
  const s3 = { B: 3, T: 1, C: 2, heads: 1, hs: 2, N: 3, n: 6 };
  const G = [
    Float64Array.of(1, 2, 3, 4),
    Float64Array.of(0, 1, -1, 2),
    Float64Array.of(5, -2, 1, 1),
  ];
  const sum = (bs) =>
    Float64Array.from({ length: 4 }, (_, i) => bs.reduce((a, b) => a + G[b][i], 0));
  const ctx = (bs) => context('dWq', sum(bs), sum([0, 1, 2]), { s: s3, weightGradShares: () => G });
  assert.match(
    batchSubsetAnalysis(ctx([0, 2])).message,
    /^Your dWq sums over batch items 0, 2 only, of the 3/,
  );
  assert.match(batchSubsetAnalysis(ctx([1])).message, /sums over batch item 1 only, of the 3/);
  assert.equal(batchSubsetAnalysis(ctx([0, 1, 2])), null);
  assert.equal(batchSubsetAnalysis({ ...ctx([0]), yours: times(G[0], 0.5) }), null);
  assert.equal(batchSubsetAnalysis({ ...ctx([0]), node: 'Wq' }), null);
  assert.equal(batchSubsetAnalysis({ ...ctx([0]), weightGradShares: () => null }), null);
});

test('headMeanAnalysis: every head the mean over the heads (att, concat)', () => {
  const local = ramp(36); // att (2, 2, 3, 3)
  const mean = meanAlong(local, [2, 2, 3, 3], 1);
  const found = headMeanAnalysis(context('att', mean, local));
  assert.equal(found.id, 'reduction');
  assert.match(found.message, /^Every head of your att is the mean over the 2 heads/);
  const concat = ramp(24);
  const cmean = meanAlong(concat, [2, 3, 2, 2], 2);
  assert.match(
    headMeanAnalysis(context('concat', cmean, concat)).message,
    /your concat is the mean/,
  );
  assert.equal(headMeanAnalysis(context('Y', cmean, concat)), null);
  const one = { B: 2, T: 3, C: 4, heads: 1, hs: 4, N: 6, n: 24 };
  assert.equal(headMeanAnalysis(context('att', mean, local, { s: one })), null);
  // word for word; a split node (Q (2, 2, 3, 2)) too; dconcat as concat
  assert.deepEqual(headMeanAnalysis(context('Q', meanAlong(concat, [2, 2, 3, 2], 1), concat)), {
    id: 'reduction',
    same: { key: 'head-mean', label: 'mean over the heads' },
    message:
      'Every head of your Q is the mean over the 2 heads: the heads were averaged, not kept ' +
      'apart; each head attends on its own and merge_heads concatenates them. The course ' +
      'computes the line.',
  });
  assert.equal(headMeanAnalysis(context('dconcat', cmean, concat)).id, 'reduction');
  // the (B, T, h, hs) mean is not a split node's
  assert.equal(headMeanAnalysis(context('Q', cmean, concat)), null);
});

// ------------------------------------------------------------------------------------------------
// the orders and the operands on hand-made arrays

const { permutationAnalysis } = await import('../../web/check/analyses/permute.js');
const { diagonalSoftmaxAnalysis, dxPathAnalysis, rowsumKeepdimsAnalysis } =
  await import('../../web/check/analyses/operand.js');
const ops = await import('../../web/check/ops.js');

test('permutationAnalysis: axes swapped, heads or tokens reordered, heads copied', () => {
  const small = { B: 1, T: 3, C: 4, heads: 2, hs: 2, N: 3, n: 12 };
  const scores = ramp(18); // (1, 2, 3, 3)
  const t = swapAxes(scores, [1, 2, 3, 3], 2, 3);
  const swapped = permutationAnalysis(context('scores', t, scores, { s: small }));
  assert.match(
    swapped.message,
    /^Your scores are the course's with axes 2 and 3 swapped \(its transpose: K @ Q\.T/,
  );
  assert.equal(swapped.same.key, 'swap:2,3');
  const concat = ramp(12); // (1, 3, 4): head blocks of 2 columns
  const heads = reorder(concat, [1, 3, 2, 2], 2, [1, 0]);
  const h = permutationAnalysis(context('concat', heads, concat, { s: small }));
  assert.match(h.message, /with its head blocks in the order 1, 0 \(reversed\) instead of 0…1\. /);
  assert.match(h.message, /, the heads in order\.$/);
  const tokens = reorder(concat, [1, 3, 4], 1, [2, 0, 1]);
  const tk = permutationAnalysis(context('concat', tokens, concat, { s: small }));
  assert.match(
    tk.message,
    /with its tokens in the order 2, 0, 1 instead of 0…2\. The course computes the line\.$/,
  );
  const copied = reorder(concat, [1, 3, 2, 2], 2, [0, 0]);
  const c = permutationAnalysis(context('concat', copied, concat, { s: small }));
  assert.match(c.message, /^Your concat's heads are the course's heads 0, 0 instead of 0…1/);
  assert.equal(
    permutationAnalysis(
      context(
        'concat',
        concat.map((x) => x + 1),
        concat,
        { s: small },
      ),
    ),
    null,
  );
});

test('dxPathAnalysis: whole coefficients on the three paths, other than 1, 1, 1', () => {
  const s1 = { B: 1, T: 2, C: 2, heads: 1, hs: 2, N: 2, n: 4 };
  const v = {
    dQm: Float64Array.of(1, 2, 0, 1),
    dKm: Float64Array.of(0, 1, 3, -1),
    dVm: Float64Array.of(2, 0, 1, 1),
    Wq: Float64Array.of(1, 0, 2, 1),
    Wk: Float64Array.of(0, 1, 1, 3),
    Wv: Float64Array.of(2, -1, 0, 1),
  };
  const path = (x) =>
    ops.matmul(v[`d${x}m`], v[`W${x.toLowerCase()}`], { m: 2, k: 2, n: 2, transB: true });
  const [q, k, w] = ['Q', 'K', 'V'].map(path);
  const dx = (a, b, c) => q.map((x, i) => a * x + b * k[i] + c * w[i]);
  const ctx = (yours) => context('dX', yours, dx(1, 1, 1), { s: s1, pipeValue: (n) => v[n] });
  assert.match(
    dxPathAnalysis(ctx(dx(2, 1, 1))).message,
    /^Your dX has the Q path \(dQm @ Wq\.T\) counted twice:/,
  );
  assert.match(
    dxPathAnalysis(ctx(dx(1, 0, -1))).message,
    /the K path \(dKm @ Wk\.T\) missing and the V path \(dVm @ Wv\.T\) with its sign flipped/,
  );
  assert.equal(dxPathAnalysis(ctx(dx(1, 1, 1))), null);
  assert.equal(dxPathAnalysis(ctx(dx(1, 1.5, 1))), null);
  // whole, but no mistake a student makes (3 times a path)
  assert.equal(dxPathAnalysis(ctx(dx(3, 1, 1))), null);
  // word for word, every path's fault named
  assert.deepEqual(dxPathAnalysis(ctx(dx(0, 2, -1))), {
    id: 'wrong-operand',
    message:
      'Your dX has the Q path (dQm @ Wq.T) missing and the K path (dKm @ Wk.T) counted twice ' +
      'and the V path (dVm @ Wv.T) with its sign flipped: X feeds Q, K and V once each, so dX ' +
      'sums each path once; the course computes the line.',
  });
  // paths that cannot be told apart (all zero): no fit, no cause
  const zero = {
    ...v,
    dQm: new Float64Array(4),
    dKm: new Float64Array(4),
    dVm: new Float64Array(4),
  };
  const flat = context('dX', dx(2, 1, 1), dx(1, 1, 1), { s: s1, pipeValue: (n) => zero[n] });
  assert.equal(dxPathAnalysis(flat), null);
  assert.equal(dxPathAnalysis({ ...ctx(dx(2, 1, 1)), node: 'dQm' }), null);
});

test('the softmax backward: the Jacobian diagonal only, the row sums without keepdims', () => {
  const s2 = { B: 1, T: 2, C: 2, heads: 1, hs: 2, N: 2, n: 4 };
  const att = Float64Array.of(0.3, 0.7, 0.6, 0.4); // (1, 1, 2, 2)
  const datt = Float64Array.of(1, -2, 0.5, 3);
  const v = { att, datt };
  const right = ops.softmaxBackward(att, datt, 2);
  const ctx = (yours) => context('dscores', yours, right, { s: s2, pipeValue: (n) => v[n] });
  // by hand: att * (1 - att) * datt
  const diag = Float64Array.of(0.3 * 0.7 * 1, 0.7 * 0.3 * -2, 0.6 * 0.4 * 0.5, 0.4 * 0.6 * 3);
  assert.equal(diagonalSoftmaxAnalysis(ctx(diag)).id, 'softmax-diagonal-only');
  assert.match(
    diagonalSoftmaxAnalysis(ctx(diag)).message,
    /^Your dscores are att \* \(1 - att\) \* datt/,
  );
  assert.equal(diagonalSoftmaxAnalysis(ctx(right)), null);
  // by hand: row sums r = [0.3 - 1.4, 0.3 + 1.2] = [-1.1, 1.5], subtracted by column
  const r = [-1.1, 1.5];
  const cols = att.map((a, i) => a * (datt[i] - r[i % 2]));
  assert.match(rowsumKeepdimsAnalysis(ctx(cols)).message, /without keepdims=True/);
  assert.equal(rowsumKeepdimsAnalysis(ctx(right)), null);
  assert.equal(rowsumKeepdimsAnalysis({ ...ctx(cols), node: 'datt' }), null);
});

test('attentionFacts: rows off 1, negative weights, open future weights, the edges', async () => {
  const { attentionFacts } = await import('../../web/check/analyses/attention.js');
  const tol = 2 ** -10; // sums within tol·T of 1 and weights within tol of 0 are kept
  const att = (yours, sizes) =>
    attentionFacts({ node: 'att', yours: Float64Array.from(yours), s: sizes, dtypeTol: tol });
  const causal = { B: 1, T: 2, heads: 2, causal: true };
  // (1, 2, 2, 2): head 0 right; head 1: row 0 sees its future (0.3), row 1 a negative weight
  const broken = att([1, 0, 0.5, 0.5, 0.7, 0.3, 1.2, -0.2], causal);
  assert.deepEqual(broken, {
    id: 'attention-invariant',
    message:
      'Your att breaks what every attention matrix keeps: 1 weights are negative; 1 weights ' +
      "above the diagonal, which the causal mask sets to 0, are not 0. Each query's weights " +
      'over the keys are ≥ 0 and sum to 1: att = softmax(scores, axis=-1), with the masked ' +
      '(future) weights 0.',
    measured: true,
  });
  // exactly at the edges nothing is broken: a sum 1 + tol·T, a weight -tol, a future weight tol
  const edge = [1 - tol, tol, 0.5, 0.5 + 2 * tol, 1 + tol, -tol, 0.5, 0.5];
  assert.equal(att(edge, causal), null);
  assert.equal(att(edge, { ...causal, causal: false }), null);
  // only other nodes than att have no invariants
  assert.equal(attentionFacts({ node: 'scores', yours: Float64Array.of(-5), s: causal }), null);
  // (2, 2, 2, 2) not causal: rows 1 to 5 sum to 1.1 … 1.5; the first three are shown
  const rows = [];
  for (let r = 0; r < 8; r++) rows.push(0.5, r >= 1 && r <= 5 ? 0.5 + r / 10 : 0.5);
  const sums = att(rows, { B: 2, T: 2, heads: 2, causal: false });
  assert.equal(sums.id, 'softmax-not-normalised');
  assert.equal(
    sums.message,
    'Your att breaks what every attention matrix keeps: 5 of 8 rows do not sum to 1 (row ' +
      '[0, 0, 1] sums to 1.1, row [0, 1, 0] sums to 1.2, row [0, 1, 1] sums to 1.3, …). Each ' +
      "query's weights over the keys are ≥ 0 and sum to 1: att = softmax(scores, axis=-1).",
  );
  // three rows: all shown, no "…"; batch item 1 (row 4 = [1, 0, 0])
  rows[2 * 1 + 1] = 0.5;
  rows[2 * 2 + 1] = 0.5;
  const three = att(rows, { B: 2, T: 2, heads: 2, causal: false });
  assert.match(
    three.message,
    /: 3 of 8 rows do not sum to 1 \(row \[0, 1, 1\] sums to 1\.3, row \[1, 0, 0\] sums to 1\.4, row \[1, 0, 1\] sums to 1\.5\)\. /,
  );
});

test('nonFiniteAnalysis: counts, the first entry, and a cause only where it is shown', async () => {
  const { nonFiniteAnalysis } = await import('../../web/check/analyses/nonfinite.js');
  const sizes = { B: 1, T: 2, C: 2, heads: 1, hs: 2, causal: false };
  const nf = (node, yours, more = {}) =>
    nonFiniteAnalysis({
      node,
      name: node,
      s: sizes,
      yours: Float64Array.from(yours),
      local: Float64Array.of(0.25, 0.75, 0.5, 0.5),
      precision: 'f8',
      reproduces: () => false,
      ...more,
    });
  const head = (what, at) =>
    `Your Y has ${what} entries, though the course's step gives finite numbers from your own ` +
    `arrays: the first at [0, ${at}]`;
  assert.deepEqual(nf('Y', [1, NaN, Infinity, -Infinity]), {
    id: 'non-finite',
    message: `${head('1 NaN and 2 ±inf', '0, 1')} (NaN): a NaN comes from 0/0, inf − inf or inf × 0 in this step.`,
    measured: true,
  });
  assert.equal(
    nf('Y', [1, 2, -Infinity, 3]).message,
    `${head('1 ±inf', '1, 0')} (-Infinity): an inf comes from an overflow or a division by ` +
      'zero in this step.',
  );
  assert.equal(nf('Y', [1, 2, 3, 4]), null);
  // where the course's own step is not finite either, it is not the student's doing
  assert.equal(nf('Y', [NaN, 2, 3, 4], { local: Float64Array.of(NaN, 0, 0, 0) }), null);
  // in the scores -inf is a mask's fill (other analyses read it); +inf is not
  assert.equal(nf('scores', [1, -Infinity, 2, 3]), null);
  assert.match(nf('scores', [1, Infinity, 2, 3]).message, /^Your scores has 1 ±inf entries/);

  // att: the scores row of the first NaN says why
  const att = (scores, yours, more = {}) =>
    nf('att', yours, {
      pipeValue: () => Float64Array.from(scores),
      unmaskedScores: () => Float64Array.from(scores),
      ...more,
    });
  const causal = { s: { ...sizes, causal: true } };
  const zeroByZero =
    'every key of that query is masked (-inf), so the softmax divides 0 by 0: each row must ' +
    'keep at least one key (the diagonal: np.triu(..., k=1)).';
  // an att that is -inf exactly above the diagonal (masked scores saved as att): said so, as
  // what was measured
  const scoresAsAtt = att([1, 2, 3, 4], [1.5, -Infinity, 0.2, -0.7], causal);
  assert.equal(scoresAsAtt.measured, true);
  assert.match(scoresAsAtt.message, /exactly those above the diagonal.*holds masked scores/);
  // not so when an entry on or below the diagonal is not finite too
  assert.doesNotMatch(
    att([1, 2, 3, 4], [-Infinity, -Infinity, 0.2, -0.7], causal).message,
    /above the diagonal/,
  );
  // causal: query 0 sees key 0 only, masked
  const masked = att([-Infinity, 5, 1, 2], [NaN, NaN, 0.3, 0.7], causal);
  assert.equal(masked.measured, false);
  assert.ok(masked.message.endsWith(`(NaN): ${zeroByZero}`), masked.message);
  // not causal: key 1 is seen (5), nothing overflows: only what was measured
  assert.match(att([-Infinity, 5, 1, 2], [NaN, NaN, 0.3, 0.7]).message, /: a NaN comes from 0\/0/);
  // causal query 1 sees both keys, one of them finite
  const row1 = att([0, -Infinity, -Infinity, 7], [1, 0, NaN, NaN], causal);
  assert.match(row1.message, /the first at \[0, 0, 1, 0\] \(NaN\): a NaN comes from 0\/0/);
  // exp overflowing: above 88.72 in float32, above 709.8 in float64, not at the limit itself
  const f4 = att([100, 3, 1, 2], [NaN, NaN, 0.3, 0.7], { precision: 'f4' });
  assert.equal(f4.measured, false);
  assert.ok(
    f4.message.endsWith(
      '(NaN): the largest score in that row is 100, and np.exp overflows to inf in float32 ' +
        "above 88.72, so the softmax divides inf by inf: subtract each row's max first, " +
        'np.exp(scores - scores.max(axis=-1, keepdims=True)).',
    ),
    f4.message,
  );
  assert.match(att([100, 3, 1, 2], [NaN, NaN, 0.3, 0.7]).message, /: a NaN comes from 0\/0/);
  assert.match(
    att([800, 3, 1, 2], [NaN, NaN, 0.3, 0.7], { precision: 'text' }).message,
    /the largest score in that row is 800, and np\.exp overflows to inf in float64 above 709\.8,/,
  );
  const limit = 88.72283935546875;
  const atLimit = att([limit, 3, 1, 2], [NaN, NaN, 0.3, 0.7], { precision: 'f4' });
  assert.match(atLimit.message, /: a NaN comes from 0\/0/);
  // a mask form that reproduces the array is the cause, proven
  const byMask = att([1, 5, 1, 2], [NaN, NaN, 0.3, 0.7], { reproduces: () => true });
  assert.equal(byMask.measured, false);
  assert.match(
    byMask.message,
    /; it leaves a query with every key masked, and the softmax divides 0 by 0\.$/,
  );
});

// ------------------------------------------------------------------------------------------------
// one operand swapped, in each group of operands a student can swap (operand.js GROUPS)

// plain loops at the size of notebook correct-f64-mse (B = 2, T = 5, C = 12, h = 3, hs = 4):
// (m, k) @ (k, n), each operand optionally transposed, over `batch` blocks; merge_heads
function mm(a, b, { batch = 1, m, k, n, tA = false, tB = false }) {
  const out = new Float64Array(batch * m * n);
  for (let z = 0; z < batch; z++) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) {
          const x = a[z * m * k + (tA ? p * m + i : i * k + p)];
          sum += x * b[z * k * n + (tB ? j * k + p : p * n + j)];
        }
        out[z * m * n + i * n + j] = sum;
      }
    }
  }
  return out;
}
function merge(x, [B, T, C, h, hs] = [2, 5, 12, 3, 4]) {
  const out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let hd = 0; hd < h; hd++) {
      for (let t = 0; t < T; t++) {
        for (let e = 0; e < hs; e++) {
          out[(b * T + t) * C + hd * hs + e] = x[((b * h + hd) * T + t) * hs + e];
        }
      }
    }
  }
  return out;
}

test('wrong operands of every group: the array recomputed by hand, the operand named', () => {
  // B = 2, T = 5, C = 12, h = 3, hs = 4; the course's arrays, float64, not causal
  const base = loadStudent('correct-f64-mse');
  const [B, T, C, h, hs] = [2, 5, 12, 3, 4];
  const val = (n) => base[n].data;
  const N = B * T;
  const keep = (names, extra) => {
    const arrays = {};
    for (const n of ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', ...names]) arrays[n] = base[n];
    for (const [n, data] of Object.entries(extra)) arrays[n] = { ...base[n], data };
    return arrays;
  };
  const said = (arrays) => {
    const report = checkNotebook(mha, arrays, { heads: h, causal: false });
    const row = report.rows.find((r) => r.status === 'differs');
    return [row.name, row.diagnosis.id, row.diagnosis.message];
  };
  const heads = { batch: B * h, m: T, k: hs, n: T };
  const qq = mm(val('Q'), val('Q'), { ...heads, tB: true }).map((x) => x / Math.sqrt(hs));
  assert.deepEqual(said(keep(['Q', 'K', 'V'], { scores: qq })), [
    'scores',
    'wrong-operand',
    "Your scores are the course's step with Q in place of K: recomputed that way from your " +
      'own arrays, it matches; the course computes scores = Q @ K.transpose(0, 1, 3, 2) / ' +
      'np.sqrt(hs).',
  ]);
  const sv = mm(val('scores'), val('V'), { batch: B * h, m: T, k: T, n: hs });
  assert.deepEqual(said(keep(['Q', 'K', 'V', 'scores', 'att'], { headout: sv })), [
    'headout',
    'wrong-operand',
    "Your headout is the course's step with scores in place of att: recomputed that way from " +
      'your own arrays, it matches; the course computes headout = att @ V.',
  ]);
  const xo = mm(val('X'), val('Wo'), { m: N, k: C, n: C });
  assert.deepEqual(said(keep(['concat'], { Y: xo })), [
    'Y',
    'wrong-operand',
    "Your Y is the course's step with X in place of concat: recomputed that way from your own " +
      'arrays, it matches; the course computes Y = concat @ Wo.',
  ]);
  const dwo = mm(val('concat'), val('dconcat'), { m: C, k: N, n: C, tA: true });
  assert.deepEqual(said(keep(['concat', 'Y', 'dY', 'dconcat'], { dWo: dwo })), [
    'dWo',
    'wrong-operand',
    "Your dWo is the course's step with dconcat in place of dY: recomputed that way from your " +
      'own arrays, it matches; the course computes dWo = concat.reshape(-1, C).T @ ' +
      'dY.reshape(-1, C).',
  ]);
  const grads = ['Y', 'dY', 'dQ', 'dK', 'dV'];
  const xdq = mm(val('X'), merge(val('dQ')), { m: C, k: N, n: C, tA: true });
  assert.deepEqual(said(keep(grads, { dWk: xdq })), [
    'dWk',
    'wrong-operand',
    "Your dWk is the course's step with dQ in place of dK (in dK, not in your file): " +
      'recomputed that way from your own arrays, it matches; the course computes dWk = ' +
      'X.reshape(-1, C).T @ merge_heads(dK).reshape(-1, C).',
  ]);
  const qdq = mm(merge(val('Q')), merge(val('dQ')), { m: C, k: N, n: C, tA: true });
  assert.deepEqual(said(keep(['Q', ...grads], { dWq: qdq })), [
    'dWq',
    'wrong-operand',
    "Your dWq is the course's step with Q in place of X: recomputed that way from your own " +
      'arrays, it matches; the course computes dWq = X.reshape(-1, C).T @ ' +
      'merge_heads(dQ).reshape(-1, C).',
  ]);
});

test('meanings: every reading at dX and dWq, a size where no two quantities coincide', () => {
  // B = 3, T = 5, C = 28, h = 4: hs = 7, B·T = 15, Y.size = 420
  const S = { B: 3, T: 5, C: 28, heads: 4, hs: 7, N: 15, n: 420 };
  const at = (k, node) => meanings(k, node, S).map((r) => `${r.expr}@${r.sites.join()}`);
  const r7 = Math.sqrt(7);
  // dX: what dY may carry (sites dY), then the generic numbers (site dX)
  const dX = [
    [420, ['Y.size@dY']],
    [0.5, ['1/2@dY', '1/2@dX']],
    [210, ['Y.size / 2@dY']],
    [2, ['2@dY', '2@dX']],
    [-1, ['−1@dY', '−1@dX']],
    [1 / 3, ['1/B@dY', '1/B@dX']],
    [28, ['C@dY']],
    [15, ['B·T@dY']],
    [140, ['T·C@dY']],
    [84, ['B·C@dY']],
    [4, ['h@dX']],
    [0.25, ['1/h@dX']],
    [3, ['B@dX']],
    [5, ['T@dX']],
    [0.2, ['1/T@dX']],
    [1 / r7, ['1/√hs@dX']],
    [r7, ['√hs@dX']],
    [7, []],
    [1, []],
  ];
  for (const [k, want] of dX) assert.deepEqual(at(k, 'dX'), want, `dX, k = ${k}`);
  // dWq: a weight gradient's own readings first, then dY's, then the generic ones
  const dWq = [
    [1 / 3, ['1/B@dWq', '1/B@dY', '1/B@dWq']],
    [1 / 15, ['1/(B·T)@dWq']],
    [0.2, ['1/T@dWq', '1/T@dWq']],
    [2, ['2@dWq', '2@dY', '2@dWq']],
    [3, ['3@dWq', 'B@dWq']],
  ];
  for (const [k, want] of dWq) assert.deepEqual(at(k, 'dWq'), want, `dWq, k = ${k}`);
  // the words of the generic readings (they name the number only)
  const why = (k) => meanings(k, 'att', S).map((r) => [r.why, r.generic]);
  assert.deepEqual(why(-1), [['the sign is flipped', true]]);
  assert.deepEqual(why(2), [['twice the course’s', true]]);
  assert.deepEqual(why(0.5), [['half the course’s', true]]);
  assert.deepEqual(why(4), [['h = 4 times the course’s', true]]);
  assert.deepEqual(why(0.25), [['divided by h = 4', true]]);
  assert.deepEqual(why(3), [['B = 3 times the course’s', true]]);
  assert.deepEqual(why(1 / 3), [['divided by B = 3', true]]);
  assert.deepEqual(why(5), [['T = 5 times the course’s', true]]);
  assert.deepEqual(why(0.2), [['divided by T = 5', true]]);
  assert.deepEqual(why(1 / r7), [["divided by √hs = √7: the scores' scale, applied here", true]]);
  assert.deepEqual(why(r7), [['multiplied by √hs = √7', true]]);
  // Y.size at a backward step other than dY: dY without its division, with its id
  const size = meanings(420, 'dV', S)[0];
  assert.deepEqual(
    [size.why, size.id],
    ['dY without the division by Y.size (the gradient of the sum)', 'mse-grad-factor'],
  );
  // dY's own factor 2 and the loss's B·C are not read at forward steps
  assert.deepEqual(at(84, 'Y'), []);
  assert.deepEqual(at(0.25, 'Y'), ['1/h@Y', '1/h@Y']);
  assert.deepEqual(at(1 / 3, 'dQ'), ['1/B@dY', '1/B@dscores', '1/B@dQ']);
  assert.deepEqual(at(1 / 3, 'datt'), ['1/B@dY', '1/B@datt', '1/B@datt']);
  assert.deepEqual(at(1 / 3, 'V'), ['1/B@V']);
});

test('one relation at two rows: the second follows from the first, "with the same …"', () => {
  // B = 2, T = 5, C = 12, h = 3, hs = 4 (reorder is checked against plain loops above)
  const base = loadStudent('correct-f64-mse');
  const split = [2, 3, 5, 4];
  const arrays = (names, change) => {
    const out = {};
    for (const n of ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', ...names]) out[n] = base[n];
    for (const n of Object.keys(change)) out[n] = { ...base[n], data: change[n](base[n].data) };
    return out;
  };
  const rows = (a) => {
    const report = checkNotebook(mha, a, { heads: 3, causal: false });
    return Object.fromEntries(report.rows.map((r) => [r.name, r.diagnosis?.message ?? r.status]));
  };
  // Q and K with their tokens reversed
  const tokens = (x) => reorder(x, split, 2, [4, 3, 2, 1, 0]);
  const t = rows(arrays(['Q', 'K'], { Q: tokens, K: tokens }));
  assert.match(
    t.Q,
    /^Your Q holds the course's numbers with its tokens in the order 4, 3, 2, 1, 0/,
  );
  assert.equal(
    t.K,
    'follows from Q: K, recomputed from your own X, Wk (with the same tokens order as your Q), ' +
      'matches your array.',
  );
  // Q and K with head 0 in every head
  const copies = (x) => reorder(x, split, 1, [0, 0, 0]);
  const c = rows(arrays(['Q', 'K'], { Q: copies, K: copies }));
  assert.match(c.Q, /^Your Q's heads are the course's heads 0, 0, 0 instead of 0…2/);
  assert.match(c.K, /\(with the same repeated heads as your Q\), matches your array\.$/);
  // the scores and the datt transposed
  const T = (x) => swapAxes(x, [2, 3, 5, 5], 2, 3);
  const all = ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y', 'dY', 'dconcat'];
  const w = rows(arrays([...all, 'dheadout', 'dV', 'datt'], { scores: T, datt: T }));
  assert.match(w.scores, /^Your scores are the course's with axes 2 and 3 swapped/);
  assert.match(w.datt, /\(with the same axes swapped as your scores\), matches your array\.$/);
});

test('attentionAnalyses: a finite fill in the scores, softmaxes over other axes', async () => {
  const { attentionAnalyses } = await import('../../web/check/analyses/attention.js');
  // plain loops: a softmax over each run of n entries
  const softmaxRuns = (x, n) => {
    const out = new Float64Array(x.length);
    for (let o = 0; o < x.length; o += n) {
      const m = Math.max(...x.subarray(o, o + n));
      let sum = 0;
      for (let i = o; i < o + n; i++) sum += Math.exp(x[i] - m);
      for (let i = o; i < o + n; i++) out[i] = Math.exp(x[i] - m) / sum;
    }
    return out;
  };
  const sizes = { B: 2, T: 2, C: 2, heads: 2, hs: 1, N: 4, n: 8, causal: true };
  // (2, 2, 2, 2); the largest |score| on or below the diagonal is 2, on the diagonal
  const scores = Float64Array.of(0.5, 9, 0.25, 2, 1, 9, -1, 0.5, 0.5, 9, 1, 1.5, -2, 9, 0.5, 1);
  const filled = (fill) => scores.map((x, i) => (i % 2 > Math.floor(i / 2) % 2 ? fill : x));
  const ctx = (yours, given, at = sizes) => ({
    node: 'att',
    name: 'att',
    s: at,
    yours,
    local: softmaxRuns(filled(-Infinity), 2),
    tolAbs: 1e-12,
    pipeValue: () => scores,
    unmaskedScores: () => scores,
    givenValue: () => given,
    reproduces: (mine) => mine.every((x, i) => Math.abs(x - yours[i]) < 1e-12),
  });
  const fillOf = (fill) => {
    const given = filled(fill);
    return attentionAnalyses(ctx(softmaxRuns(given, 2), given))?.message ?? null;
  };
  assert.equal(
    fillOf(-5),
    'Your scores are masked with -5 above the diagonal instead of -np.inf: exp(-5) > 0, so ' +
      'your att gives the future keys a weight; a causal mask fills with -np.inf ' +
      '(np.where(mask, -np.inf, scores)).',
  );
  // a fill beyond -1000 × the largest |score| (2) acts as -inf: not named
  assert.match(fillOf(-1999), /masked with -1999 above the diagonal/);
  assert.doesNotMatch(fillOf(-2000) ?? '', /masked with -2000/);
  assert.doesNotMatch(fillOf(-1e9) ?? '', /masked with/);
  // not one value above the diagonal: no fill
  const mixed = filled(-5);
  mixed[13] = -6;
  assert.doesNotMatch(
    attentionAnalyses(ctx(softmaxRuns(mixed, 2), mixed))?.message ?? '',
    /masked with/,
  );
  // the same notebook not causal: the check says the switch beside the cause
  const open = { ...sizes, causal: false };
  const given = filled(0);
  assert.match(
    attentionAnalyses(ctx(softmaxRuns(given, 2), given, open)).message,
    / \(The check is not causal: tick causal if your notebook means a causal layer\.\)$/,
  );
  // softmaxes over the batch axis and over each head's whole block, not causal
  const overBatch = new Float64Array(16);
  for (let i = 0; i < 8; i++) {
    const [a, b] = softmaxRuns(Float64Array.of(scores[i], scores[8 + i]), 2);
    overBatch[i] = a;
    overBatch[8 + i] = b;
  }
  const course =
    "; the course normalises each query's row over the keys: att = softmax(scores, axis=-1).";
  assert.equal(
    attentionAnalyses(ctx(overBatch, null, open)).message,
    `Your att is a softmax over the batch (axis=0)${course}`,
  );
  assert.equal(
    attentionAnalyses(ctx(softmaxRuns(scores, 4), null, open)).message,
    `Your att is a softmax over each head’s whole (T, T) block instead of each row${course}`,
  );
  // only scores and att are read
  assert.equal(attentionAnalyses({ ...ctx(overBatch, null, open), node: 'headout' }), null);
});

test('hiddenFactorAnalysis: dQ, dK or both scaled before dX, none of them saved', () => {
  // B = 2, T = 5, C = 12, h = 3, hs = 4; dX = a·(Q path) + b·(K path) + (V path), by hand
  const base = loadStudent('correct-f64-mse');
  const [B, T, C, h] = [2, 5, 12, 3];
  const path = (d, W) => mm(merge(base[d].data), base[W].data, { m: B * T, k: C, n: C, tB: true });
  const [q, k, v] = [path('dQ', 'Wq'), path('dK', 'Wk'), path('dV', 'Wv')];
  const said = (a, b) => {
    const arrays = {};
    for (const n of ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', 'Y', 'dY', 'dV']) arrays[n] = base[n];
    arrays.dX = { ...base.dX, data: q.map((x, i) => a * x + b * k[i] + v[i]) };
    const report = checkNotebook(mha, arrays, { heads: h, causal: false });
    return report.rows.find((r) => r.name === 'dX').diagnosis;
  };
  const why = 'divided by hs = 4 instead of √hs (or by √hs twice)';
  const dQline = 'dQ = dscores @ K / np.sqrt(hs)';
  const dKline = 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)';
  assert.deepEqual(said(0.5, 0.5), {
    id: 'factor',
    message:
      "Your dX is the course's step from dQ and dK 0.5 × the course's (k = √hs / hs; dQ, dK " +
      `not in your file): ${why}; the course computes ${dQline}.`,
  });
  assert.equal(
    said(0.5, 1).message,
    "Your dX is the course's step from dQ 0.5 × the course's (k = √hs / hs; dQ not in your " +
      `file): ${why}; the course computes ${dQline}.`,
  );
  assert.equal(
    said(1, 0.5).message,
    "Your dX is the course's step from dK 0.5 × the course's (k = √hs / hs; dK not in your " +
      `file): ${why}; the course computes ${dKline}.`,
  );
  // a factor no reading of dQ's step gives, 1/3 on both paths: the edit search finds the step
  // before them both, dscores divided by h = 3
  const third = said(1 / 3, 1 / 3);
  assert.equal(third.id, 'edit-factor');
  assert.match(third.message, /with one change, dscores divided by h: dscores = /);
  // 1/3 on the Q path alone: dQ divided by h; 0.37 on both: no edit, what was measured
  assert.match(said(1 / 3, 1).message, /with one change, dQm divided by h: dQm = /);
  assert.equal(said(0.37, 0.37).id, 'step-differs');
  // √hs on both paths: no 1/√hs in dQ and dK (dscores × √hs gives the same numbers, an edit of
  // no record: the factor analysis says it, with the scale's cause and its record's id)
  assert.deepEqual(said(2, 2), {
    id: 'missing-scale',
    message:
      "Your dX is the course's step from dQ and dK 2 × the course's (k = √hs; dQ, dK not in " +
      `your file): no 1/√hs: dQ is not divided by np.sqrt(hs); the course computes ${dQline}.`,
  });
  assert.match(said(2, 1).message, /from dQ 2 × the course's \(k = √hs; dQ not in your file\)/);
});

test('analysisContext: the values, tolerances, recomputations every analysis reads', async () => {
  const { analysisContext, LARGE } = await import('../../web/check/analyses/index.js');
  const { Pipeline, simulate } = await import('../../web/check/pipeline.js');
  const sz = smallSizes();
  const f = (...x) => Float64Array.of(...x);
  const inputs = SMALL_INPUTS;
  const expected = simulate(sz, inputs);
  const make = (node, yours, more = {}) => {
    const pipe = new Pipeline(sz, inputs);
    pipe.seed(expected);
    for (const [n, data] of Object.entries(more.given ?? {})) pipe.provide(n, data);
    const opts = { dtype: more.dtype ?? '<f8' };
    return analysisContext({
      pipe,
      node,
      name: node,
      yours,
      opts,
      courseLine: 'the line',
      ...more,
    });
  };
  // tolerances of the invariants by precision; above LARGE entries the hidden steps are skipped
  const tolOf = (dtype) => make('Y', expected.Y, { dtype }).dtypeTol;
  assert.deepEqual(['<f8', '<f4', '<f2', 'text', '|u1'].map(tolOf), [1e-9, 1e-5, 1e-3, 1e-9, 1e-9]);
  const largeAt = (n) => {
    const pipe = new Pipeline({ ...sz, n }, inputs);
    const opts = { dtype: '<f8' };
    return analysisContext({ pipe, node: 'Q', name: 'Q', yours: expected.Q, opts }).large;
  };
  assert.deepEqual([largeAt(LARGE), largeAt(LARGE + 1)], [false, true]);
  // reproduces: same length and within the row's tolerance
  const ctx = make('Y', expected.Y);
  assert.equal(ctx.reproduces(expected.Y), true);
  assert.equal(ctx.reproduces(expected.Y.subarray(1)), false);
  assert.equal(ctx.reproduces(expected.Y.map((x) => x + 1e-3)), false);
  // givenValue: a result the student gave, never an input
  const scores = f(5, 6, 7, 8, 1, 2, 3, 4);
  const withScores = make('att', expected.att, { given: { scores } });
  assert.equal(withScores.givenValue('scores'), scores);
  assert.equal(withScores.givenValue('X'), null);
  assert.equal(withScores.givenValue('Q'), null);
  // the unmasked scores: the student's on and below the diagonal, the course's step above it
  const step = withScores.pipe.step('scores');
  assert.deepEqual(withScores.unmaskedScores(), f(5, step[1], 7, 8, 1, step[5], 3, 4));
  assert.deepEqual(make('att', expected.att).unmaskedScores(), expected.scores);
  // later evidence for a factor k entering at Q: the saved Y against the course's
  const later = (Y, node = 'att') =>
    make(node, expected[node], { saved: new Map([['Y', Y]]) }).laterEvidence(['Q'], 2);
  assert.equal(later(expected.Y), 'contradicted');
  assert.equal(later(expected.Y.map((x) => 2 * x)), 'confirmed');
  assert.equal(later(expected.Y.map((x) => 3 * x)), 'open');
  assert.equal(later(expected.Y, 'Y'), 'open'); // the row itself is no evidence
  assert.equal(make('att', expected.att).laterEvidence(['Q'], 2), 'open');
  // the arrays of the same layout and length, under the student's names
  // a split node also gets the merged arrays (not Qm, concat…) split into heads, X among them
  const splitSame = make('Q', expected.Q).sameLayout();
  assert.deepEqual(
    splitSame.map((a) => a.name),
    ['X', 'target', 'dY', 'K', 'V', 'headout', 'Y', 'dheadout', 'dV', 'dQ', 'dK', 'dX'],
  );
  assert.deepEqual(splitSame[0].data, ops.splitHeads(inputs.X, sz));
  assert.deepEqual(
    make('Qm', expected.Qm)
      .sameLayout()
      .map((a) => a.name),
    ['X', 'target', 'dY', 'K', 'V', 'concat', 'Y', 'dconcat', 'dQ', 'dK', 'dV', 'dX'],
  );
  // a weight gradient's share per batch item sums to the gradient
  const shares = make('dWq', expected.dWq).weightGradShares();
  assert.equal(shares.length, 2);
  assert.ok(shares[0].every((x, i) => Math.abs(x + shares[1][i] - expected.dWq[i]) < 1e-12));
  assert.equal(make('att', expected.att).weightGradShares(), null);
});

test('the softmax backward’s diagonal at dscores not saved: found at dQ, used for dK', () => {
  const base = loadStudent('correct-f64-mse');
  const [att, datt] = [base.att.data, base.datt.data];
  const diag = att.map((a, i) => a * (1 - a) * datt[i]); // by hand: the Jacobian's diagonal
  const heads = { batch: 6, m: 5, k: 5, n: 4 };
  const dQ = mm(diag, base.K.data, heads).map((x) => x / 2); // / √hs
  const dK = mm(diag, base.Q.data, { ...heads, tA: true }).map((x) => x / 2);
  const arrays = { ...base, dQ: { ...base.dQ, data: dQ }, dK: { ...base.dK, data: dK } };
  for (const n of ['dscores', 'dWq', 'dWk', 'dWv', 'dX']) delete arrays[n];
  const report = checkNotebook(mha, arrays, { heads: 3, causal: false });
  const said = Object.fromEntries(report.rows.map((r) => [r.name, r.diagnosis?.message]));
  assert.equal(
    said.dQ,
    "Your dQ is the course's step from dscores = att * (1 - att) * datt (dscores is not in " +
      'your file: recomputed that way, it matches): only the diagonal of the softmax’s ' +
      'Jacobian. Every weight of a row depends on every score of that row (they share the ' +
      'sum), so the backward subtracts the row’s total: dscores = att * (datt - np.sum(att * ' +
      'datt, axis=-1, keepdims=True)).',
  );
  assert.match(said.dK, /^follows from dQ: dK, recomputed from your own /);
});

test('meanings: the words of each reading of the loss, dY, the scores, a weight gradient', () => {
  // B = 3, T = 5, C = 28, h = 4: hs = 7, B·T = 15, Y.size = 420; k in the order of the list
  const S = { B: 3, T: 5, C: 28, heads: 4, hs: 7, N: 15, n: 420 };
  const said = (node, k) =>
    meanings(k, node, S)
      .filter((r) => !r.generic)
      .map((r) => `${r.expr}@${r.sites.join()}: ${r.why}`);
  const r7 = Math.sqrt(7);
  assert.deepEqual(said('loss', 420), [
    'Y.size@loss: the sum instead of the mean (np.sum, not np.mean)',
  ]);
  assert.deepEqual(said('loss', 140), [
    'Y.size / B@loss: a mean over the batch only (divided by B = 3, not Y.size)',
  ]);
  assert.deepEqual(said('loss', 1 / 3), ['1/B@loss: divided by B = 3 once more than the mean']);
  assert.deepEqual(said('loss', 0.5), ['1/2@loss: half the mean squared error (a 1/2 in front)']);
  const dY = [
    [420, 'Y.size@dY: no division by Y.size: the gradient of the sum'],
    [0.5, '1/2@dY: the factor 2 of the square is missing'],
    [210, 'Y.size / 2@dY: dY = Y − target: no 2 and no division by Y.size'],
    [2, '2@dY: a factor 2 too many'],
    [-1, '−1@dY: the sign is flipped: target − Y'],
    [1 / 3, '1/B@dY: an extra 1/B = 1/3: a mean over the batch on top of Y.size'],
    [28, 'C@dY: divided by B·T instead of Y.size (a factor C = 28)'],
    [15, 'B·T@dY: divided by C instead of Y.size (a factor B·T = 15)'],
    [140, 'T·C@dY: divided by B = 3 instead of Y.size'],
    [84, 'B·C@dY: divided by T = 5 instead of Y.size'],
  ];
  for (const [k, want] of dY) assert.deepEqual(said('dY', k), [want], `dY, k = ${k}`);
  const scores = [
    [r7, '√hs@scores: no 1/√hs: scores is not divided by np.sqrt(hs)'],
    [r7 / 7, '√hs / hs@scores: divided by hs = 7 instead of √hs (or by √hs twice)'],
    [r7 / Math.sqrt(28), '√hs / √C@scores: divided by √C = √28 instead of √hs'],
    [r7 / 28, '√hs / C@scores: divided by C = 28 instead of √hs'],
    [r7 / Math.sqrt(5), '√hs / √T@scores: divided by √T = √5 instead of √hs'],
    [r7 / 2, '√hs / √h@scores: divided by √h = √4 instead of √hs'],
    [7, 'hs@scores: multiplied by √hs instead of dividing by it'],
    [1 / 7, '1 / hs@scores: divided by √hs three times'],
  ];
  for (const [k, want] of scores) assert.deepEqual(said('scores', k), [want], `scores, k = ${k}`);
  assert.deepEqual(said('dKm', r7), ['√hs@dK: no 1/√hs: dK is not divided by np.sqrt(hs)']);
  const dWv = (k) => said('dWv', k).filter((w) => w.includes('@dWv'));
  assert.deepEqual(dWv(1 / 3), [
    '1/B@dWv: a mean over the batch (divided by B = 3): the course sums',
  ]);
  assert.deepEqual(dWv(1 / 15), ['1/(B·T)@dWv: a mean over the B·T = 15 tokens: the course sums']);
  assert.deepEqual(dWv(0.2), ['1/T@dWv: divided by T = 5: the course sums over the tokens']);
  assert.deepEqual(dWv(3), [
    '3@dWv: three backward calls without zeroing the gradients in between',
  ]);
  // dY's own readings are not repeated as "what dY may carry"; Y with one head has no mean
  assert.equal(said('dY', 0.5).length, 1);
  assert.deepEqual(said('Y', 1), []);
  const oneHead = meanings(1, 'Y', { ...S, heads: 1, hs: 28 });
  assert.deepEqual(
    oneHead.filter((r) => !r.generic),
    [],
  );
  assert.deepEqual(
    stepReadings('dK', S).map((r) => r.sites[0]),
    Array(8).fill('dK'),
  );
});

test('heads merged out of order, concat not saved: any order to h = 5, then reversed', async () => {
  const { simulate } = await import('../../web/check/pipeline.js');
  const said = (heads, perm) => {
    const [B, T, C] = [1, 3, 6 * heads];
    const hs = C / heads;
    const sz = { B, T, C, heads, hs, N: B * T, n: B * T * C, causal: false, loss: null };
    const draw = (n, seed) =>
      Float64Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.3));
    const inputs = { X: draw(B * T * C, 1) };
    for (const [i, w] of ['Wq', 'Wk', 'Wv', 'Wo'].entries()) inputs[w] = draw(C * C, i + 2);
    const { headout } = simulate(sz, inputs);
    // the heads of headout (B, h, T, hs) in the student's order, merged, @ Wo: by hand
    const moved = new Float64Array(headout.length);
    for (let j = 0; j < heads; j++) {
      moved.set(headout.subarray(perm[j] * T * hs, (perm[j] + 1) * T * hs), j * T * hs);
    }
    const Y = mm(merge(moved, [B, T, C, heads, hs]), inputs.Wo, { m: T, k: C, n: C });
    const arrays = {};
    for (const [k, v] of Object.entries(inputs)) {
      arrays[k] = { data: v, shape: k === 'X' ? [B, T, C] : [C, C], dtype: '<f8' };
    }
    arrays.Y = { data: Y, shape: [B, T, C], dtype: '<f8' };
    const report = checkNotebook(mha, arrays, { heads, causal: false });
    return report.rows.find((r) => r.name === 'Y').diagnosis;
  };
  const at3 = said(3, [1, 2, 0]);
  assert.equal(at3.id, 'permuted');
  assert.equal(
    at3.message,
    "Your Y is the course's step from concat with its head blocks in the order 1, 2, 0 instead " +
      'of 0…2 (concat is not in your file): recomputed that way from your own arrays, it ' +
      'matches; the course computes concat with the heads in order.',
  );
  assert.match(said(5, [0, 1, 2, 4, 3]).message, /in the order 0, 1, 2, 4, 3 instead of 0…4/);
  assert.match(said(6, [5, 4, 3, 2, 1, 0]).message, /in the order 5, 4, 3, 2, 1, 0 \(reversed\)/);
  // beyond 5 heads only the reversed order is tried: another one is only measured
  assert.equal(said(6, [1, 0, 2, 3, 4, 5]).id, 'step-differs');
});

test('a wrong operand at a step not saved is used downstream: K from Wq with only Y saved', () => {
  const run = unseen['k-from-wq'];
  const all = loadStudent('k-from-wq');
  const arrays = {};
  for (const n of ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', 'Y', 'dY', 'dWk', 'dX']) {
    arrays[n] = all[n];
  }
  const report = checkNotebook(mha, arrays, { heads: run.heads, causal: run.causal });
  const said = Object.fromEntries(
    report.rows.map((r) => [r.name, r.diagnosis?.message ?? r.status]),
  );
  assert.equal(
    said.Y,
    "Your Y is the course's step with Wq in place of Wk (in K, not in your file): recomputed " +
      'that way from your own arrays, it matches; the course computes Y = concat @ Wo.',
  );
  const from = 'recomputed from your own X, Wq, Wk, dY, Wo, Wv, matches your array.';
  assert.equal(said.dWk, `follows from Y: dWk, ${from}`);
  assert.equal(said.dX, `follows from Y: dX, ${from}`);
});

test('meanings: dscores 1/√hs, the gradient of the unscaled scores; beside 1/B when equal', () => {
  // hs = 8 here: 1/√8 names only the unscaled scores' gradient
  assert.deepEqual(specific(1 / Math.sqrt(8), 'dscores'), ['1/√hs']);
  // B = 2, hs = 4: 1/2 is both a batch mean of the softmax backward and the unscaled gradient
  const small = { B: 2, T: 5, C: 12, heads: 3, hs: 4, N: 10, n: 120 };
  const both = meanings(0.5, 'dscores', small).filter((r) => !r.generic);
  assert.ok(
    ['1/B', '1/√hs'].every((e) => both.some((r) => r.expr === e)),
    `${both.map((r) => r.expr)}`,
  );
  assert.match(both.find((r) => r.expr === '1/√hs').why, /^the gradient of the unscaled Q @ K\.T/);
});
