// studentRun (web/check/training-run.js) on its own: lesson 5's learning rate and steps from what a
// student's file holds, on a small layer (T = 3, C = 4, h = 2). The runs a file "saved" are made
// here by layer.train of the Node API (checked against NumPy by tests/training.test.mjs); the
// NumPy-written notebooks of tests/model/lesson5-notebook.test.mjs cover the usual files. Here:
// each source in turn (saved lr, a schedule of lrs, losses, the weights after, the page's), the
// limits, every message a bad or inconsistent array gets, word for word in its important part,
// and an engine failure, which gives the page's run and says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { studentRun } from '../../web/check/training-run.js';
import { loadMHA } from '../helpers.mjs';

const mha = await loadMHA();
const [T, C, heads] = [3, 4, 2];
const LIMITS = Object.freeze({ maxLr: 10, maxSteps: 6, lr: 0.1, steps: 10 });

/** Numbers in [-1, 1) from a fixed linear congruential stream (no NumPy needed here). */
function draws(n, seed) {
  let x = seed >>> 0;
  return Float64Array.from({ length: n }, () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 31 - 1;
  });
}

const MODEL = Object.freeze({
  T,
  C,
  heads,
  X: draws(T * C, 1),
  W: Object.fromEntries(['Wq', 'Wk', 'Wv', 'Wo'].map((w, i) => [w, draws(C * C, 10 + i)])),
  target: draws(T * C, 2),
});

/** layer.train from MODEL's weights at lr for `steps`: { losses (before each step), after }. */
function trainRun(lr, steps) {
  const layer = mha.createLayer({ C, heads });
  try {
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) layer.weights[w].set(MODEL.W[w]);
    const losses = layer.train(MODEL.X, MODEL.target, { B: 1, T, steps, lr });
    const after = Object.fromEntries(
      ['Wq', 'Wk', 'Wv', 'Wo'].map((w) => [w, Float64Array.from(layer.weights[w])]),
    );
    return { losses: Float64Array.from(losses), after };
  } finally {
    layer.free();
  }
}

/** An array as the check reads it from a file. */
const arr = (data, shape = [data.length]) => ({
  data: Float64Array.from(data),
  shape,
  dtype: '<f8',
});
const scalar = (v) => arr([v], []);
const run = (arrays, limits = LIMITS, model = MODEL) => studentRun(mha, arrays, model, limits);
const rel = (a, b) => Math.abs(a - b) / Math.abs(b);

test('nothing saved: the page’s lr and steps, said so', () => {
  const r = run({});
  assert.deepEqual([r.lr, r.steps, r.lrFrom, r.stepsFrom], [0.1, 10, 'page', 'page']);
  assert.deepEqual(r.lrs, Array(10).fill(0.1));
  assert.equal(r.lrText, "lr 0.1, the page's: your file has no lr, losses or Wq_after");
  assert.equal(r.stepsText, "10 steps, the page's: your file has no steps or losses");
  assert.equal(r.yours, null);
  assert.deepEqual(r.messages, []);
});

test('a saved lr and steps: used as they are, under any of their names', () => {
  const r = run({ lr: scalar(0.05), steps: scalar(4) });
  assert.deepEqual([r.lr, r.steps, r.lrFrom, r.stepsFrom], [0.05, 4, 'file', 'file']);
  assert.equal(r.lrText, 'lr 0.05 from your file');
  assert.equal(r.stepsText, '4 steps from your file');
  const named = run({ learning_rate: scalar(0.05), n_steps: scalar(2) });
  assert.equal(named.lrText, 'lr 0.05 from your file (learning_rate)');
  assert.equal(named.steps, 2);
  assert.deepEqual(named.notes.sort(), ['learning_rate read as lr', 'n_steps read as steps']);
});

test('a schedule of lrs: one per step, its length the steps; its first and last said', () => {
  const r = run({ lrs: arr([0.2, 0.1, 0.05]) });
  assert.deepEqual(r.lrs, [0.2, 0.1, 0.05]);
  assert.deepEqual([r.steps, r.lrFrom, r.stepsFrom], [3, 'file', 'file']);
  assert.equal(r.lrText, 'lr 0.2 … 0.05 from your file (your lrs: one per step)');
  // saved steps beyond the schedule: its last rate for the rest
  assert.deepEqual(run({ lrs: arr([0.2, 0.1]), steps: scalar(4) }).lrs, [0.2, 0.1, 0.1, 0.1]);
  // longer than the page's limit: its first maxSteps
  assert.equal(run({ lrs: arr(Array(9).fill(0.01)) }).steps, LIMITS.maxSteps);
});

test('an lr, lrs or steps that cannot be used: the page’s, and a message saying why', () => {
  const cases = [
    [
      { lr: scalar(-1) },
      /^Your lr is -1: not a learning rate \(one number greater than 0 and at most 10\), so it is not used\.$/,
    ],
    [{ lr: scalar(50) }, /^Your lr is 50: over the page's limit, 10 \(/],
    [{ lr: arr([0.1, 0.2]) }, /^Your lr is an array of shape \(2,\): not a learning rate/],
    [
      { lrs: arr([0.1, -0.1]) },
      /^Your lrs is an array of shape \(2,\): expected a 1-D array of learning rates, each greater than 0 and at most 10, so it is not used\.$/,
    ],
    [
      { lrs: arr([0.1, 0.2, 0.3, 0.4], [2, 2]) },
      /^Your lrs is an array of shape \(2, 2\): expected a 1-D/,
    ],
    [
      { steps: scalar(2.5) },
      /^Your steps is 2\.5: the number of steps is a whole number of at least 1, so it is not used\.$/,
    ],
    [{ steps: scalar(0) }, /^Your steps is 0: the number of steps/],
  ];
  for (const [arrays, message] of cases) {
    const r = run(arrays);
    assert.deepEqual(r.messages.length, 1, JSON.stringify(r.messages));
    assert.match(r.messages[0], message);
    assert.equal(r.lr, 0.1, 'the page’s lr');
  }
  const bad = run({ lr: scalar(-1) });
  assert.equal(
    bad.lrText,
    "lr 0.1, the page's: no learning rate could be read or found in your file (see below)",
  );
});

test('steps over the page’s limit: its first maxSteps, said so; losses the same', () => {
  const r = run({ lr: scalar(0.05), steps: scalar(40) });
  assert.equal(r.steps, LIMITS.maxSteps);
  assert.deepEqual(r.messages, [
    "Your steps is 40: lesson 5 runs at most 6 steps (the page's limit), so it runs your first 6.",
  ]);
  const { losses } = trainRun(0.05, 9);
  const fromLosses = run({ losses: arr(losses) });
  assert.equal(fromLosses.steps, LIMITS.maxSteps);
  assert.match(
    fromLosses.messages.at(-1),
    /^Your losses have 9 entries: lesson 5 runs at most 6 steps/,
  );
});

test('only the losses: the lr whose first step gives losses[1], their length the steps', () => {
  const { losses } = trainRun(0.05, 4);
  const r = run({ losses: arr(losses) });
  assert.equal(r.lrFrom, 'losses');
  assert.ok(rel(r.lr, 0.05) < 1e-9, `lr ${r.lr}`);
  assert.deepEqual([r.steps, r.stepsFrom], [4, 'losses']);
  assert.equal(r.lrText, `lr ${Number(r.lr.toPrecision(6))} found from your losses`);
  assert.equal(
    r.stepsText,
    "4 steps from your losses (one loss before each step, as the course's loop appends them)",
  );
  assert.deepEqual(r.yours, { key: 'losses', losses: [...losses] });
  assert.deepEqual(r.messages, []);
});

test('losses that are not this run’s, or not losses: no lr from them, and why', () => {
  const { losses } = trainRun(0.05, 3);
  const shifted = run({ losses: arr(losses.map((x) => x + 1)) });
  assert.equal(shifted.lrFrom, 'page');
  assert.match(
    shifted.messages[0],
    /^Your losses\[0\] is [\d.e+-]+, but the loss at your initial weights is [\d.e+-]+: your losses are not a run from these arrays, so no learning rate is found from them\.$/,
  );
  // a second loss no step can reach (below the minimum along the gradient)
  const unreachable = run({ losses: arr([losses[0], -1]) });
  assert.equal(unreachable.lrFrom, 'page');
  assert.match(
    unreachable.messages[0],
    /^No learning rate from 0 to 10 takes the loss at your initial weights to your losses\[1\] \(found: (none|lr = [-\d.e+]+)\), so none is found from your losses\.$/,
  );
  for (const [a, what] of [
    [arr([1, NaN, 2]), 'an array of shape (3,) with NaN or ∞'],
    [arr([1, 2, 3, 4], [2, 2]), 'an array of shape (2, 2)'],
  ]) {
    assert.deepEqual(run({ losses: a }).messages, [
      `Your losses is ${what}: expected a 1-D array of finite losses, one per step (losses = np.array(losses)), so it is not used.`,
    ]);
  }
});

test('only the weights after one step: the lr that gives them, one step', () => {
  const { after } = trainRun(0.07, 1);
  const r = run({ Wq_after: arr(after.Wq, [C, C]), Wo_after: arr(after.Wo, [C, C]) });
  assert.equal(r.lrFrom, 'weights');
  assert.ok(rel(r.lr, 0.07) < 1e-9, `lr ${r.lr}`);
  assert.deepEqual([r.steps, r.stepsFrom], [1, 'weights']);
  assert.equal(r.lrText, `lr ${Number(r.lr.toPrecision(6))} found from your Wq_after`);
  assert.equal(r.stepsText, '1 step, as your Wq_after shows');
  assert.deepEqual(r.messages, []);
});

test('the weights after several saved steps: the lr whose run gives them (secant steps)', () => {
  const { after } = trainRun(0.03, 3);
  const r = run({ Wk_after: arr(after.Wk, [C, C]), steps: scalar(3) });
  assert.equal(r.lrFrom, 'weights');
  assert.ok(rel(r.lr, 0.03) < 1e-8, `lr ${r.lr}`);
  assert.deepEqual([r.steps, r.stepsFrom], [3, 'file']);
});

test('weights after that no lr gives, or not (C, C): no lr from them, and why', () => {
  const noise = run({ Wq_after: arr(draws(C * C, 99), [C, C]) });
  assert.equal(noise.lrFrom, 'page');
  assert.deepEqual(noise.messages, [
    `No learning rate makes 1 step of W -= lr * dW from your initial weights give your Wq_after, so none is found from it.`,
  ]);
  const { after } = trainRun(0.07, 1);
  const both = run({ Wq_after: arr(draws(C * C, 98), [C, C]), Wv_after: arr(after.Wv, [C, C]) });
  assert.match(both.messages[0], /give your Wq_after, Wv_after, so none is found from them\.$/);
  const shape = run({ Wq_after: arr([1, 2, 3]) });
  assert.deepEqual(shape.messages, [
    `Your Wq_after is an array of shape (3,): expected the (4, 4) weights after the run, all finite, so it is not used.`,
  ]);
});

test('losses with the final loss appended, told apart by the weights after', () => {
  const { losses, after } = trainRun(0.05, 3);
  const final = trainRun(0.05, 4).losses; // 3 steps' losses, then the loss after the third
  assert.deepEqual([...final.slice(0, 3)], [...losses]);
  const r = run({ losses: arr(final), Wq_after: arr(after.Wq, [C, C]) });
  assert.deepEqual([r.steps, r.stepsFrom, r.lrFrom], [3, 'losses+after', 'losses']);
  assert.equal(
    r.stepsText,
    '3 steps from your losses and Wq_after (your last loss is the one after the last step)',
  );
  // the same losses with the weights after 4 steps: 4 steps
  const four = run({ losses: arr(final), Wq_after: arr(trainRun(0.05, 4).after.Wq, [C, C]) });
  assert.deepEqual([four.steps, four.stepsFrom], [4, 'losses']);
});

test('what the file says against itself: losses of another length, weights of another run', () => {
  const { losses, after } = trainRun(0.05, 3);
  const r = run({ lr: scalar(0.05), steps: scalar(5), losses: arr(losses) });
  assert.deepEqual(r.messages, [
    `Your losses have 3 entries, but your steps is 5: expected 5 (the loss before each step) or 6 (and the loss after the last step). They are shown beside the page's for the steps both have.`,
  ]);
  const other = run({ lr: scalar(0.08), steps: scalar(3), Wq_after: arr(after.Wq, [C, C]) });
  assert.deepEqual(other.messages, [
    `Your Wq_after is not the weights after 3 steps at lr 0.08 from your initial weights: your file's run is not the one lesson 5 replays (another lr or number of steps, or weights saved at another point).`,
  ]);
  // a run longer than the page takes: its weights after are not compared
  const long = run({ lr: scalar(0.05), steps: scalar(20), Wq_after: arr(after.Wq, [C, C]) });
  assert.equal(long.messages.length, 1, JSON.stringify(long.messages));
});

test('the engine fails (a model it refuses): the page’s run, and the reason', () => {
  const broken = { ...MODEL, C: 5 }; // 5 does not split into 2 heads
  const r = run({ lr: scalar(0.05) }, LIMITS, broken);
  assert.deepEqual([r.lr, r.steps, r.lrFrom, r.stepsFrom], [0.1, 10, 'page', 'page']);
  assert.deepEqual(r.lrs, Array(10).fill(0.1));
  assert.equal(r.lrText, "lr 0.1, the page's");
  assert.equal(r.stepsText, "10 steps, the page's");
  assert.equal(r.yours, null);
  assert.match(r.messages.at(-1), /^Your run could not be read: the engine failed \(.+\)\.$/);
});

test('no arrays at all (null): as an empty file', () => {
  const r = studentRun(mha, null, MODEL, LIMITS);
  assert.deepEqual([r.lrFrom, r.stepsFrom, r.messages, r.notes], ['page', 'page', [], []]);
});
