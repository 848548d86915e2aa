// web/model/playground.js (playgroundForward, gridCount, autoFull, trainsAtOnce, keptHead,
// PG_SAMPLES, stepCount, trainedAttention, shownAttention), web/jobs/trainer.js's trainingRun
// driven through a Scheduler, and pgThreshold.

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
import { gradcheckSize, pgThreshold } from '../../web/model/gradcheck-report.js';
import { Trainer, trainingRun } from '../../web/jobs/trainer.js';
import { Scheduler } from '../../web/jobs/scheduler.js';
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

test(`pgThreshold: 1e-5 up to T*C = 512, scaled with T*C above`, () => {
  assert.equal(pgThreshold(8, 64), 1e-5);
  assert.equal(pgThreshold(2, 8), 1e-5);
  assert.equal(pgThreshold(8, 65), (1e-5 * 520) / 512);
  assert.equal(pgThreshold(16, 64), 1e-5 * 2);
});

/** A small playground model for the training runs. */
function smallModel() {
  return sentenceModel(mha, { tokens: TOKENS, C: 8, heads: 2, seed: 5, causal: true });
}

/** Count the trainer's frees (the run's free() calls trainer.free()). */
function countFrees(trainer) {
  const free = trainer.free.bind(trainer);
  const counter = { n: 0 };
  trainer.free = () => {
    counter.n++;
    free();
  };
  return counter;
}

test(`trainingRun: one step per slice, progress 1..steps, then done at steps; losses equal a Trainer's`, async () => {
  const model = smallModel();
  const steps = 6;
  const lr = 0.05;
  const run = trainingRun(mha, model, { steps, lr });
  const frees = countFrees(run.trainer);
  assert.equal(run.trainer.steps, 0, 'nothing runs before the job starts');
  const log = [];
  const s = new Scheduler({ sliceMs: 0 }); // one iteration per slice
  s.submit({
    start: run.start,
    onProgress: (v) => log.push(['progress', v, run.trainer.steps]),
    onDone: (v) => log.push(['done', v, run.trainer.steps]),
    onError: (e) => log.push(['error', e.message]),
  });
  await s.idle();
  assert.deepEqual(log, [
    ['progress', 1, 1],
    ['progress', 2, 2],
    ['progress', 3, 3],
    ['progress', 4, 4],
    ['progress', 5, 5],
    ['progress', 6, 6], // the generator ends on the slice after its last step
    ['done', 6, 6],
  ]);
  const ref = new Trainer(mha, model);
  try {
    for (let k = 0; k < steps; k++) ref.step(lr);
    assert.deepEqual(run.trainer.lrs, ref.lrs);
    assert.equal(run.trainer.losses.length, steps + 1);
    assert.ok(bitEqual(run.trainer.losses, ref.losses), 'losses bit for bit');
    assert.ok(run.trainer.losses[steps] < run.trainer.losses[0], 'training lowers the loss');
  } finally {
    ref.free();
  }
  // the job's cleanup freed the layer once; free() again is a no-op
  assert.equal(frees.n, 1);
  assert.throws(() => run.trainer.layer.forward(model.X, { B: 1, T: model.T }), /freed/);
  run.free();
  assert.equal(frees.n, 1);
});

test(`trainingRun: cancel stops it at once and frees; cancelled before starting, free() releases`, async () => {
  const model = smallModel();
  const run = trainingRun(mha, model, { steps: 50, lr: 0.05 });
  const frees = countFrees(run.trainer);
  const log = [];
  const s = new Scheduler({ sliceMs: 0 });
  const job = s.submit({
    start: run.start,
    onProgress: (v) => {
      log.push(v);
      if (v === 3) job.cancel();
    },
    onDone: (v) => log.push(`done ${v}`),
  });
  await s.idle();
  assert.deepEqual(log, [1, 2, 3]);
  assert.equal(job.cancelled, true);
  assert.equal(run.trainer.steps, 3);
  assert.equal(run.trainer.losses.length, 4);
  assert.equal(frees.n, 1, 'cancel runs the cleanup');
  run.free();
  assert.equal(frees.n, 1);

  // cancelled before its first slice: start never runs, no cleanup; free() releases it once
  const early = trainingRun(mha, model, { steps: 5, lr: 0.05 });
  const earlyFrees = countFrees(early.trainer);
  const s2 = new Scheduler({ sliceMs: 0 });
  const j2 = s2.submit({ start: early.start, onDone: () => assert.fail('must not finish') });
  j2.cancel();
  await s2.idle();
  assert.equal(early.trainer.steps, 0);
  assert.equal(earlyFrees.n, 0);
  early.free();
  early.free();
  assert.equal(earlyFrees.n, 1);
  assert.throws(() => early.trainer.layer.zeroGrad(), /freed/);
});

test(`trainingRun: a run with 0 steps is done at once; a long slice runs it in one go`, async () => {
  const model = smallModel();
  const zero = trainingRun(mha, model, { steps: 0, lr: 0.05 });
  const log = [];
  const s = new Scheduler({ sliceMs: 1e9 });
  s.submit({ start: zero.start, onDone: (v) => log.push(['zero', v]) });
  const run = trainingRun(mha, model, { steps: 4, lr: 0.1 });
  s.submit({
    start: run.start,
    onProgress: (v) => log.push(['progress', v]),
    onDone: (v) => log.push(['run', v]),
  });
  await s.idle();
  assert.deepEqual(log, [
    ['zero', undefined],
    ['run', 4],
  ]);
  assert.equal(zero.trainer.steps, 0);
  assert.deepEqual(run.trainer.lrs, [0.1, 0.1, 0.1, 0.1]);
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
