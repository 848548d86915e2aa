// web/model/playground.js (playgroundForward, gridCount, autoFull, trainsAtOnce, keptHead,
// PG_SAMPLES, stepCount, trainedAttention, shownAttention) and pgThreshold.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  PG_SAMPLES,
  playgroundForward,
  gridCount,
  autoFull,
  trainsAtOnce,
  keptHead,
  stepCount,
  trainedAttention,
  shownAttention,
} from '../../web/model/playground.js';
import { trainAtOnce } from '../../web/model/training.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { L5_LINES, gradcheckSize, pgThreshold } from '../../web/model/gradcheck-report.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { loadMHA, bitEqual } from '../helpers.mjs';

const mha = await loadMHA();

const TOKENS = ['the', 'cat', 'sat', 'on', 'the', 'mat'];

/** Y and att of a fresh layer of its own with weights W (independent of the pool in layers.js). */
function ownForward(model, C, heads, causal) {
  const layer = mha.createLayer({ C, heads, seed: 0 });
  try {
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) layer.weights[k].set(model.W[k]);
    return layer.forward(model.X, { B: 1, T: model.T, causal });
  } finally {
    layer.free();
  }
}

test(`PG_SAMPLES is 32`, () => {
  assert.equal(PG_SAMPLES, 32);
});

test(`playgroundForward: the sentence model of the settings and its forward pass, bit for bit`, () => {
  const cases = [
    { C: 8, h: 2, seed: 7, rng: 'legacy', pe: true, causal: true },
    { C: 8, h: 4, seed: 3, rng: 'default_rng', pe: false, causal: false },
    { C: 12, h: 3, seed: 42, rng: 'default_rng', pe: true, causal: false },
  ];
  for (const s of cases) {
    const { model, att, Y } = playgroundForward(mha, s, TOKENS);
    const T = TOKENS.length;
    // every setting reaches sentenceModel (same arguments: the same cached object)
    assert.equal(
      model,
      sentenceModel(mha, {
        tokens: TOKENS,
        C: s.C,
        heads: s.h,
        seed: s.seed,
        rng: s.rng,
        pe: s.pe,
        causal: s.causal,
      }),
    );
    assert.deepEqual(
      [model.C, model.heads, model.seed, model.rng, model.pe, model.causal, model.T],
      [s.C, s.h, s.seed, s.rng, s.pe, s.causal, T],
    );
    assert.equal(att.length, s.h * T * T);
    assert.equal(Y.length, T * s.C);
    const ref = ownForward(model, s.C, s.h, s.causal);
    assert.ok(bitEqual(att, ref.attention), `att ${JSON.stringify(s)}`);
    assert.ok(bitEqual(Y, ref.Y), `Y ${JSON.stringify(s)}`);
    // the causal flag reaches forward: the other mask gives another attention
    const other = ownForward(model, s.C, s.h, !s.causal);
    assert.ok(!bitEqual(att, other.attention), 'causal is passed to forward');
    // causal: nothing above the diagonal; otherwise every weight is positive
    att.forEach((a, n) => {
      const i = Math.floor(n / T) % T;
      const j = n % T;
      if (s.causal && j > i) assert.equal(a, 0, `att ${n}`);
      else assert.ok(a > 0, `att ${n}`);
    });
  }
  // the settings' seed, rng and pe each change the model
  const base = { C: 8, h: 2, seed: 1, rng: 'default_rng', pe: false, causal: false };
  const y0 = playgroundForward(mha, base, TOKENS).Y;
  for (const change of [{ seed: 2 }, { rng: 'legacy' }, { pe: true }, { h: 4 }]) {
    const y = playgroundForward(mha, { ...base, ...change }, TOKENS).Y;
    assert.ok(!bitEqual(y, y0), JSON.stringify(change));
  }
});

test(`gridCount: at most 16 heads and 16384 cells in all, at least 1`, () => {
  assert.equal(gridCount(4, 3), 3); // h is the limit
  assert.equal(gridCount(4, 1), 1);
  assert.equal(gridCount(4, 16), 16);
  assert.equal(gridCount(4, 17), 16); // GRID_MAX
  assert.equal(gridCount(32, 16), 16); // 16 * 32 * 32 = 16384 cells exactly
  assert.equal(gridCount(32, 17), 16);
  assert.equal(gridCount(33, 16), 15); // floor(16384 / 1089)
  assert.equal(gridCount(64, 8), 4); // 16384 / 4096
  assert.equal(gridCount(65, 8), 3); // floor(16384 / 4225)
  assert.equal(gridCount(64, 3), 3);
  assert.equal(gridCount(90, 8), 2); // floor(16384 / 8100)
  assert.equal(gridCount(91, 8), 1); // floor(16384 / 8281)
  assert.equal(gridCount(128, 8), 1); // exactly one grid's worth
  assert.equal(gridCount(129, 8), 1); // 0 cells' worth: still one head
  assert.equal(gridCount(500, 4), 1);
});

test(`autoFull: T*C*C at most 8*64*64 and a check of at most 25000 entries`, () => {
  // the real sizes: lesson 5's (8, 64, 4) is in, one more token is out
  assert.equal(gradcheckSize(mha, { T: 8, C: 64, heads: 4 }), 19968);
  assert.ok(gradcheckSize(mha, { T: 9, C: 64, heads: 4 }) <= 25000);
  assert.equal(autoFull(mha, { C: 64, h: 4 }, 8), true);
  assert.equal(autoFull(mha, { C: 64, h: 4 }, 9), false); // 36864 > 32768
  assert.equal(autoFull(mha, { C: 32, h: 2 }, 32), true); // 32 * 32 * 32 = 32768 exactly
  assert.equal(autoFull(mha, { C: 32, h: 2 }, 33), false);
  assert.equal(autoFull(mha, { C: 8, h: 2 }, 6), true);
  // the size limit on its own: a module stub whose check visits exactly n entries
  const stub = (n) => ({ tensors: [{ name: 'n', check: 0 }], tensorShape: () => [n] });
  assert.equal(gradcheckSize(stub(25000), { T: 1, C: 1, heads: 1 }), 25000);
  assert.equal(autoFull(stub(25000), { C: 1, h: 1 }, 1), true);
  assert.equal(autoFull(stub(25001), { C: 1, h: 1 }, 1), false);
  assert.equal(autoFull(stub(25001), { C: 64, h: 1 }, 9), false); // both over
  // the sizes reach gradcheckSize
  const seen = [];
  const spy = {
    tensors: [{ name: 'n', check: 0 }],
    tensorShape: (name, sizes) => (seen.push(sizes), [1]),
  };
  autoFull(spy, { C: 4, h: 2 }, 3);
  assert.deepEqual(seen, [{ B: 1, T: 3, C: 4, heads: 2 }]);
});

test(`trainsAtOnce: steps*T*C*C at most 4e6`, () => {
  assert.equal(trainsAtOnce({ steps: 1000, C: 20 }, 10), true); // 4e6 exactly
  assert.equal(trainsAtOnce({ steps: 1000, C: 20 }, 11), false);
  assert.equal(trainsAtOnce({ steps: 1001, C: 20 }, 10), false);
  assert.equal(trainsAtOnce({ steps: 1000, C: 21 }, 10), false);
  assert.equal(trainsAtOnce({ steps: 122, C: 64 }, 8), true); // 3,997,696
  assert.equal(trainsAtOnce({ steps: 123, C: 64 }, 8), false); // 4,030,464
  assert.equal(trainsAtOnce({ steps: 1, C: 1 }, 1), true);
});

test(`keptHead: 'mean' and heads below h are kept; anything else is head '0'`, () => {
  assert.equal(keptHead('mean', 1), 'mean');
  assert.equal(keptHead('mean', 8), 'mean');
  assert.equal(keptHead('3', 4), '3'); // the last head
  assert.equal(keptHead('4', 4), '0'); // one past it
  assert.equal(keptHead('7', 4), '0');
  assert.equal(keptHead('0', 1), '0');
  assert.equal(keptHead('1', 2), '1');
  assert.equal(keptHead('1', 1), '0');
  assert.equal(keptHead('', 4), '0'); // Number('') is 0, but '' is no head
  assert.equal(keptHead('all', 4), '0'); // NaN
  assert.equal(keptHead(undefined, 4), '0');
});

test(`pgThreshold: lesson 5's lines up to T*C = 512, scaled with T*C above`, () => {
  assert.equal(pgThreshold(8, 64), L5_LINES);
  assert.equal(pgThreshold(2, 8), L5_LINES);
  for (const [T, C] of [
    [8, 65],
    [16, 64],
  ]) {
    const k = (T * C) / 512;
    for (const [stencil, forms] of Object.entries(L5_LINES)) {
      for (const [form, line] of Object.entries(forms)) {
        const scaled = pgThreshold(T, C)[stencil][form];
        assert.ok(Math.abs(scaled / (line * k) - 1) < 1e-12, `${T}x${C} ${stencil} ${form}`);
      }
    }
  }
});

test('stepCount: steps counted as lesson 5 counts them', () => {
  assert.equal(stepCount(0), '0 steps');
  assert.equal(stepCount(1), '1 step');
  assert.equal(stepCount(10), '10 steps');
});

test("trainedAttention: after k steps, bit for bit the Trainer's attention after k steps", () => {
  const cases = [
    { C: 8, h: 2, seed: 5, rng: 'default_rng', pe: false, causal: true, lr: 0.05 },
    { C: 12, h: 3, seed: 1, rng: 'legacy', pe: true, causal: false, lr: 0.3 },
  ];
  for (const s of cases) {
    const model = sentenceModel(mha, { tokens: TOKENS, ...s, heads: s.h });
    assert.equal(trainedAttention(mha, s, model, 0), null, 'no step: no trained attention');
    const trainer = new Trainer(mha, model);
    try {
      for (const k of [1, 2, 10]) {
        while (trainer.steps < k) trainer.step(s.lr);
        const att = trainedAttention(mha, s, model, k);
        assert.ok(bitEqual(att, trainer.att), `${JSON.stringify(s)}: after ${k} steps`);
        // the losses the playground shows were measured at these very weights
        const { losses } = trainAtOnce(mha, { ...s, steps: k }, model);
        assert.ok(bitEqual(losses, trainer.losses), `losses of ${k} steps`);
      }
      assert.ok(!bitEqual(trainer.att, playgroundForward(mha, s, TOKENS).att), 'att moved');
    } finally {
      trainer.free();
    }
  }
});

test('shownAttention: the trained attention only when asked for and a step was taken', () => {
  const att = new Float64Array([1]);
  const after = new Float64Array([2]);
  const view = { att, trained: null };
  const initial = { weights: 'initial', steps: 0, att, label: 'initial weights' };
  assert.deepEqual(shownAttention(view, 'initial'), initial);
  assert.deepEqual(shownAttention(view, 'trained'), initial, 'no step yet: the initial');
  view.trained = { steps: 1, att: after };
  assert.deepEqual(shownAttention(view, 'initial'), initial);
  assert.deepEqual(shownAttention(view, 'trained'), {
    weights: 'trained',
    steps: 1,
    att: after,
    label: 'after 1 step',
  });
  view.trained = { steps: 10, att: after };
  assert.equal(shownAttention(view, 'trained').label, 'after 10 steps');
});
