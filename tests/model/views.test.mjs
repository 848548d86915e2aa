// web/model/, the page's number formatting (format.js: fmt, full, shapeText, trimmedPrecision),
// the guided project's training rules (training.js: stepLearningRate, lossSummary,
// divergedMessage, trainAtOnce against a stepped Trainer) and lesson 4's gradient views
// (gradientView, gradientSizes); hand-derived exact values at every branch and boundary.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Trainer } from '../../web/jobs/trainer.js';
import {
  MINUS,
  fmt,
  full,
  shapeText,
  timeLeftText,
  trimmedPrecision,
} from '../../web/model/format.js';
import { gradientView, gradientSizes } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { MAX_LR } from '../../web/model/settings.js';
import {
  divergedMessage,
  lossSummary,
  stepLearningRate,
  trainAtOnce,
} from '../../web/model/training.js';
import { loadMHA } from '../helpers.mjs';

const mha = await loadMHA();

/** 0, 1, ..., n - 1 as float64. */
const iota = (n) => Float64Array.from({ length: n }, (_, i) => i);

test('fmt: non-numbers, NaN, infinities and zero', () => {
  assert.equal(MINUS, '\u2212');
  assert.equal(fmt('abc'), 'abc');
  assert.equal(fmt(null), 'null');
  assert.equal(fmt(undefined), 'undefined');
  assert.equal(fmt(NaN), 'NaN');
  assert.equal(fmt(Infinity), '∞');
  assert.equal(fmt(-Infinity), '\u2212∞');
  assert.equal(fmt(0), '0');
  assert.equal(fmt(-0), '0');
});

test('fmt: integers as is below 1e15 (U+2212 minus), e-notation from 1e15', () => {
  assert.equal(fmt(42), '42');
  assert.equal(fmt(-7), '\u22127');
  assert.equal(fmt(1000000), '1000000'); // an integer: no e-notation at 1e6
  assert.equal(fmt(999999999999999), '999999999999999');
  assert.equal(fmt(-999999999999999), '\u2212999999999999999');
  assert.equal(fmt(1e15), '1e15');
  assert.equal(fmt(-1e15), '\u22121e15');
  assert.equal(fmt(2.5e20), '2.5e20');
});

test('fmt: tiny (< 1e-3) and huge (>= 1e6) numbers in e-notation, trailing zeros dropped', () => {
  assert.equal(fmt(0.001), '0.001'); // exactly 1e-3 is not tiny
  assert.equal(fmt(0.000999), '9.99e\u22124');
  assert.equal(fmt(1e-4), '1e\u22124');
  assert.equal(fmt(1.2e-4), '1.2e\u22124');
  assert.equal(fmt(1.05e-4), '1.05e\u22124');
  assert.equal(fmt(-1.5e-7), '\u22121.5e\u22127');
  assert.equal(fmt(1e-300), '1e\u2212300');
  assert.equal(fmt(1000000.5), '1e6'); // >= 1e6 and not an integer
  assert.equal(fmt(1234567.8), '1.23457e6');
  assert.equal(fmt(-1234567.8), '\u22121.23457e6');
  assert.equal(fmt(999999.5), '1000000'); // below 1e6: toPrecision(6) rounds up
  // at most 6 significant digits in e-notation, fewer on request
  assert.equal(fmt(1.23456789e-5, 10), '1.23457e\u22125');
  assert.equal(fmt(1.23456789e-5, 3), '1.23e\u22125');
  assert.equal(fmt(2.7e-5, 1), '3e\u22125');
});

test('fmt: other numbers with `digits` significant digits', () => {
  assert.equal(fmt(0.5), '0.5');
  assert.equal(fmt(-0.25), '\u22120.25');
  assert.equal(fmt(1 / 3), '0.333333');
  assert.equal(fmt(-1 / 3), '\u22120.333333');
  assert.equal(fmt(1 / 3, 3), '0.333');
  assert.equal(fmt(2 / 3, 2), '0.67');
  assert.equal(fmt(123.456789), '123.457');
  assert.equal(fmt(0.1 + 0.2), '0.3');
  assert.equal(fmt(999999.25, 7), '999999.3');
  assert.equal(fmt(0.0012345678), '0.00123457');
});

test('full: the shortest round-trip text; shapeText: Python tuples', () => {
  assert.equal(full(0.1), '0.1');
  assert.equal(full(1 / 3), '0.3333333333333333');
  assert.equal(full(-2), '-2');
  assert.equal(full(1e-7), '1e-7');
  assert.equal(full(0.1 + 0.2), '0.30000000000000004');
  assert.equal(shapeText([5]), '(5,)');
  assert.equal(shapeText([2, 3]), '(2, 3)');
  assert.equal(shapeText([2, 4, 6, 16]), '(2, 4, 6, 16)');
  assert.equal(shapeText([1, 1]), '(1, 1)');
});

test('trimmedPrecision: `digits` significant digits without trailing zeros', () => {
  assert.equal(trimmedPrecision(1.25e-5), '0.0000125');
  assert.equal(trimmedPrecision(1e-5), '0.00001');
  assert.equal(trimmedPrecision(1.5), '1.5');
  assert.equal(trimmedPrecision(2), '2');
  assert.equal(trimmedPrecision(0.1), '0.1');
  assert.equal(trimmedPrecision(-0.25), '-0.25');
  assert.equal(trimmedPrecision(1.23456), '1.23');
  assert.equal(trimmedPrecision(1.23456, 5), '1.2346');
  assert.equal(trimmedPrecision(0.5, 1), '0.5');
  assert.equal(trimmedPrecision(2.56e-4), '0.000256');
  // only the fraction's zeros go: the integer's stay, and so does an exponent
  assert.equal(trimmedPrecision(100), '100');
  assert.equal(trimmedPrecision(1200, 2), '1.2e+3');
  assert.equal(trimmedPrecision(1e-7), '1e-7');
  assert.equal(trimmedPrecision(1.5e-7), '1.5e-7');
  assert.equal(trimmedPrecision(2.5), '2.5');
});

test('stepLearningRate: a number with 0 < lr <= MAX_LR, else null', () => {
  assert.equal(MAX_LR, 10);
  assert.equal(stepLearningRate('0.1'), 0.1);
  assert.equal(stepLearningRate(' 0.5 '), 0.5);
  assert.equal(stepLearningRate('1e-3'), 0.001);
  assert.equal(stepLearningRate(0.25), 0.25);
  assert.equal(stepLearningRate(String(MAX_LR)), MAX_LR);
  assert.equal(stepLearningRate(MAX_LR), MAX_LR);
  assert.equal(stepLearningRate(Number.MIN_VALUE), Number.MIN_VALUE);
  assert.equal(stepLearningRate(MAX_LR + 2 ** -49), null); // the next float64 above 10
  assert.equal(stepLearningRate('10.000001'), null);
  assert.equal(stepLearningRate('11'), null);
  assert.equal(stepLearningRate('0'), null);
  assert.equal(stepLearningRate(0), null);
  assert.equal(stepLearningRate('-0'), null);
  assert.equal(stepLearningRate('-0.1'), null);
  assert.equal(stepLearningRate(''), null);
  assert.equal(stepLearningRate('   '), null);
  assert.equal(stepLearningRate('abc'), null);
  assert.equal(stepLearningRate('0.1abc'), null);
  assert.equal(stepLearningRate('Infinity'), null);
  assert.equal(stepLearningRate(Infinity), null);
  assert.equal(stepLearningRate('NaN'), null);
  assert.equal(stepLearningRate(NaN), null);
  assert.equal(stepLearningRate(null), null);
  assert.equal(stepLearningRate(undefined), null);
});

test('lossSummary: first, last, last - first and the number of steps', () => {
  assert.deepEqual(lossSummary([3, 2, 1.5]), { first: 3, last: 1.5, change: -1.5, steps: 2 });
  assert.deepEqual(lossSummary([1, 4]), { first: 1, last: 4, change: 3, steps: 1 });
  assert.deepEqual(lossSummary([4]), { first: 4, last: 4, change: 0, steps: 0 });
  assert.deepEqual(lossSummary(Float64Array.of(8, 6, 5, 0.5)), {
    first: 8,
    last: 0.5,
    change: -7.5,
    steps: 3,
  });
});

test('divergedMessage: the loss, what happened and what to do', () => {
  const tail =
    ': training diverged (the learning rate is too large). Reset and use a smaller learning rate.';
  assert.equal(divergedMessage(Infinity), `the loss is Infinity${tail}`);
  assert.equal(divergedMessage(NaN), `the loss is NaN${tail}`);
  assert.equal(divergedMessage(-Infinity), `the loss is -Infinity${tail}`);
});

/** The losses of a Trainer after `steps` steps at `lr`, stopping at a non-finite loss. */
function stepped(model, steps, lr) {
  const tr = new Trainer(mha, model);
  try {
    for (let k = 0; k < steps && Number.isFinite(tr.loss); k++) tr.step(lr);
    return Array.from(tr.losses);
  } finally {
    tr.free();
  }
}

const bitsOf = (xs) => Array.from(new BigUint64Array(Float64Array.from(xs).buffer));

test('trainAtOnce: the same losses, bit for bit, as stepping a Trainer', () => {
  const tokens = ['one', 'two', 'three', 'four'];
  for (const causal of [false, true]) {
    const model = sentenceModel(mha, { tokens, C: 8, heads: 2, seed: 3, causal });
    for (const [steps, lr] of [
      [0, 0.1],
      [1, 0.1],
      [5, 0.1],
      [7, 0.5],
    ]) {
      const s = { C: 8, h: 2, steps, lr, causal };
      const r = trainAtOnce(mha, s, model);
      assert.equal(r.error, undefined);
      assert.equal(r.losses.length, steps + 1, `${steps} steps, causal ${causal}`);
      assert.deepEqual(bitsOf(r.losses), bitsOf(stepped(model, steps, lr)));
    }
  }
});

test('trainAtOnce: diverged runs stop at the first non-finite loss, error if steps remain', () => {
  const model = sentenceModel(mha, { tokens: ['one', 'two', 'three'], C: 8, heads: 2, seed: 3 });
  const lr = 1e200;
  const ref = stepped(model, 50, lr);
  const k = ref.length - 1; // the step whose loss is the first non-finite one
  assert.ok(k >= 1 && !Number.isFinite(ref[k]), 'lr 1e200 diverges');
  assert.ok(ref.slice(0, k).every(Number.isFinite));
  // more steps than it takes to diverge: cut after the bad loss, and the Trainer's message
  for (const steps of [k + 1, k + 5]) {
    const r = trainAtOnce(mha, { C: 8, h: 2, steps, lr, causal: false }, model);
    assert.equal(r.losses.length, k + 1, `${steps} steps`);
    assert.deepEqual(bitsOf(r.losses), bitsOf(ref));
    assert.equal(r.error, divergedMessage(ref[k]));
  }
  // diverging on the very last step: the bad final loss is shown, not an error
  const last = trainAtOnce(mha, { C: 8, h: 2, steps: k, lr, causal: false }, model);
  assert.deepEqual(bitsOf(last.losses), bitsOf(ref));
  assert.equal(last.error, undefined);
  // one step fewer: all finite
  const before = trainAtOnce(mha, { C: 8, h: 2, steps: k - 1, lr, causal: false }, model);
  assert.deepEqual(bitsOf(before.losses), bitsOf(ref.slice(0, k)));
  assert.equal(before.error, undefined);
});

test('gradientView: 2-D as is, 3-D at [b], 4-D at [b, h]', () => {
  const g2 = { data: iota(6), shape: [2, 3] };
  const v2 = gradientView(g2, 1, 1);
  assert.equal(v2.data, g2.data);
  assert.deepEqual([v2.rows, v2.cols, v2.where], [2, 3, '']);

  const g3 = { data: iota(12), shape: [2, 2, 3] };
  const v30 = gradientView(g3, 0, 1);
  assert.deepEqual(Array.from(v30.data), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual([v30.rows, v30.cols, v30.where], [2, 3, '[0]']);
  const v31 = gradientView(g3, 1, 0);
  assert.deepEqual(Array.from(v31.data), [6, 7, 8, 9, 10, 11]);
  assert.deepEqual([v31.rows, v31.cols, v31.where], [2, 3, '[1]']);

  // (B, h, T, hs) = (2, 3, 2, 4): block b * 3 + h of 8 entries
  const g4 = { data: iota(48), shape: [2, 3, 2, 4] };
  const cases = [
    [0, 0, 0],
    [0, 2, 16],
    [1, 0, 24],
    [1, 2, 40],
    [1, 1, 32],
  ];
  for (const [b, h, start] of cases) {
    const v = gradientView(g4, b, h);
    assert.deepEqual(
      Array.from(v.data),
      Array.from(iota(8), (x) => x + start),
      `[${b}, ${h}]`,
    );
    assert.deepEqual([v.rows, v.cols, v.where], [2, 4, `[${b}, ${h}]`]);
  }
});

test('gradientSizes: max |g| and sqrt(sum of squares) per gradient', () => {
  const grads = {
    a: { data: Float64Array.of(3, -4), shape: [2] },
    b: { data: Float64Array.of(1, -2, 2), shape: [3] },
    c: { data: Float64Array.of(0, 0, 0, 0), shape: [2, 2] },
    d: { data: Float64Array.of(-6, 2, 3), shape: [1, 3] },
    e: { data: Float64Array.of(-0.5), shape: [1] },
  };
  const sizes = gradientSizes(grads);
  assert.deepEqual(Object.keys(sizes), ['a', 'b', 'c', 'd', 'e']);
  assert.deepEqual(sizes, {
    a: { maxAbs: 4, norm: 5 },
    b: { maxAbs: 2, norm: 3 },
    c: { maxAbs: 0, norm: 0 },
    d: { maxAbs: 6, norm: 7 },
    e: { maxAbs: 0.5, norm: 0.5 },
  });
  assert.deepEqual(gradientSizes({}), {});
});

test('timeLeftText: whole seconds, a second under 1.5 s, nothing without an estimate', () => {
  assert.equal(timeLeftText(12_400), ' About 12 s left.');
  assert.equal(timeLeftText(1_500), ' About 2 s left.');
  assert.equal(timeLeftText(1_499), ' About a second left.');
  assert.equal(timeLeftText(1), ' About a second left.');
  for (const x of [0, -5, null, undefined, NaN, Infinity]) {
    assert.equal(timeLeftText(x), '', `${x}`);
  }
});
