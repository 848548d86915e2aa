// Lesson 5 driven by a student's own run (issue 19, item 2). Course-style lesson-5 notebooks
// written by NumPy with their own seed, weight scale, learning rate and steps
// (tests/reference/notebook_lesson5.py: seed 7 with weights × 0.02, lr 0.5, 10 steps; seed 3 with
// weights / sqrt(C), lr 0.05, 25 steps), each saved four ways (lr and steps; only losses; only
// Wq_after and steps; losses with the final loss appended and Wq_after), load as the page loads a
// dropped .npz; "Use my arrays in the lessons" (customArrays) must find the notebook's lr and steps
// and lesson 5's Trainer, run at them, must print the losses the notebook printed. Then bad input:
// each gives its message and a run the page can take.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addArrays, customArrays, customModel, fileArrays } from '../../web/model/custom-arrays.js';
import { agreementText, lossesAgreement, runLine } from '../../web/model/training.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { loadNpz } from '../../web/check.js';
import { loadMHA, referenceDir } from '../helpers.mjs';

const mha = await loadMHA();
const dir = join(referenceDir(), 'notebook-lesson5');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));

/** The arrays of a notebook's .npz as the page holds them after the drop. */
function loaded(file) {
  const { arrays } = fileArrays(file, 'npz', loadNpz(readFileSync(join(dir, file))));
  return addArrays([], arrays).list;
}

/** The custom arrays "Use my arrays" gives for a list. */
function use(list, heads = 4) {
  const { custom, errors } = customArrays(mha, list, heads);
  assert.equal(errors, undefined);
  assert.equal(custom.main, true);
  return custom;
}

/** Lesson 5's Trainer on the custom arrays, every step of the run at its lr: the losses. */
function replay(custom) {
  const t = new Trainer(mha, customModel(custom));
  try {
    for (const lr of custom.training.lrs) t.step(lr);
    return [...t.losses];
  } finally {
    t.free();
  }
}

const relErr = (a, b) => Math.abs(a - b) / Math.abs(b);

// what each variant saved, where lr and steps must come from
const VARIANTS = {
  lr: { lrFrom: 'file', stepsFrom: 'file', lrTol: 0 },
  losses: { lrFrom: 'losses', stepsFrom: 'losses', lrTol: 1e-10 },
  after: { lrFrom: 'weights', stepsFrom: 'file', lrTol: 1e-10 },
  final: { lrFrom: 'losses', stepsFrom: 'losses+after', lrTol: 1e-10 },
};

for (const [name, e] of Object.entries(expected)) {
  const scale = e.scale === 'sqrt' ? '/ sqrt(C)' : '× 0.02';
  for (const [variant, v] of Object.entries(VARIANTS)) {
    test(`${name}-${variant} (seed ${e.seed}, weights ${scale}, lr ${e.lr}, ${e.steps} steps): lesson 5 prints what the notebook printed`, () => {
      const custom = use(loaded(`${name}-${variant}.npz`), e.heads);
      const run = custom.training;
      assert.equal(run.lrFrom, v.lrFrom);
      assert.equal(run.stepsFrom, v.stepsFrom);
      assert.equal(run.steps, e.steps);
      assert.ok(relErr(run.lr, e.lr) <= v.lrTol, `lr ${run.lr} vs ${e.lr}`);
      assert.equal(run.lrs.length, e.steps);
      assert.deepEqual(run.messages, []);
      const lr = String(e.lr);
      const lrText = {
        file: `lr ${lr} from your file`,
        losses: `lr ${lr} found from your losses`,
        weights: `lr ${lr} found from your Wq_after`,
      }[v.lrFrom];
      assert.equal(run.lrText, lrText);
      assert.match(
        runLine(run),
        new RegExp(`^Lesson 5 runs your training: ${lrText}; ${e.steps} steps`),
      );
      const losses = replay(custom);
      assert.equal(losses.length, e.steps + 1);
      for (let k = 0; k <= e.steps; k++) {
        assert.ok(
          relErr(losses[k], e.losses[k]) <= 1e-10,
          `step ${k}: ${losses[k]} vs ${e.losses[k]}`,
        );
      }
      // the lines the notebook printed, from the page's losses
      const printed = [
        ...losses.slice(0, -1).map((L, k) => `step ${k}: loss ${L.toFixed(4)}`),
        `after ${e.steps} steps: loss ${losses.at(-1).toFixed(4)}`,
      ];
      assert.deepEqual(
        printed,
        e.printed.filter((l) => /^(step|after) /.test(l)),
      );
      if (run.yours) {
        const a = lossesAgreement(run.yours.losses, losses);
        assert.equal(a.rows.length, run.yours.losses.length);
        assert.ok(a.agree && a.maxRel <= 1e-12, `max rel ${a.maxRel}`);
        assert.match(
          agreementText('losses', a),
          /^Your losses agree with the page's at all \d+ steps compared/,
        );
      }
    });
  }
}

// ------------------------------------------------------------------------------------------------
// the notebook's gradient check (two-point central differences, eps = 1e-5, every entry of each
// weight, MSE loss at the initial weights) against the page's lesson-5 check of its arrays: a
// finite-difference error is rounding noise, so the same stencil and eps give the same size, not
// the same digits (web/model/agreement.js says so: norm-wise within a factor of three; the
// per-entry maximum, set by the tiniest entry, moves with the BLAS kernel and is only printed)

/** The page's lesson-5 check of a notebook's arrays, as its panel runs it: { tensor: row }. */
function pageCheck(custom) {
  const m = customModel(custom);
  const layer = mha.createLayer({ C: m.C, heads: m.heads });
  try {
    for (const name of ['Wq', 'Wk', 'Wv', 'Wo']) layer.setTensor(name, m.W[name]);
    const opts = { B: 1, T: m.T, loss: 'mse', target: m.target, stencil: 'two-point', eps: 1e-5 };
    return Object.fromEntries(layer.gradcheck(m.X, opts).map((r) => [r.tensor, r]));
  } finally {
    layer.free();
  }
}

const within = (a, b, factor) => a / b <= factor && b / a <= factor;

for (const [name, e] of Object.entries(expected)) {
  test(`${name}: the notebook's two-point check and the page's agree in size (norm-wise ×3)`, (t) => {
    const rows = pageCheck(use(loaded(`${name}-lr.npz`), e.heads));
    const lines = [];
    for (const [w, numpy] of Object.entries(e.check)) {
      const { maxRel, normRel } = rows[w];
      assert.ok(maxRel > 0 && numpy > 0, `${w} per entry: page ${maxRel}, NumPy ${numpy}`);
      const norm = e.check_norm[w];
      assert.ok(within(normRel, norm, 3), `${w} norm-wise: page ${normRel}, NumPy ${norm}`);
      lines.push(`${w} ${maxRel.toExponential(1)} (${numpy.toExponential(1)})`);
    }
    t.diagnostic(`page (notebook) per entry: ${lines.join(', ')}`);
  });
}

// ------------------------------------------------------------------------------------------------
// bad input: a message each, and a run the page can take

const [NAME, E] = Object.entries(expected)[0];
const base = () => loaded(`${NAME}-lr.npz`).filter((a) => !['lr', 'steps'].includes(a.name));
/** A loaded float64 array of this shape, as a dropped t.npz gives it. */
const array = (name, shape, data) => ({
  name,
  data: Float64Array.from(data),
  shape,
  dtype: '<f8',
  source: 't.npz',
});
const scalar = (name, value) => array(name, [], [value]);
const vector = (name, data) => array(name, [data.length], data);
const runOf = (...extra) => use(addArrays(base(), extra).list).training;

test('no lr, losses or Wq_after: the page’s lr 0.1 and 10 steps, said so', () => {
  const run = runOf();
  assert.equal(run.lrText, "lr 0.1, the page's: your file has no lr, losses or Wq_after");
  assert.equal(run.stepsText, "10 steps, the page's: your file has no steps or losses");
  assert.deepEqual([run.lr, run.steps, run.yours], [0.1, 10, null]);
});

for (const [value, why] of [
  [-0.05, 'not a learning rate'],
  [0, 'not a learning rate'],
  [NaN, 'not a learning rate'],
  [25, "over the page's limit, 10"],
]) {
  test(`lr = ${value}: not used (${why}), the page's lr instead`, () => {
    const run = runOf(scalar('lr', value), scalar('steps', 3));
    assert.equal(run.lrFrom, 'page');
    assert.equal(run.lr, 0.1);
    assert.equal(run.steps, 3);
    assert.match(
      run.lrText,
      /^lr 0\.1, the page's: no learning rate could be read or found in your file/,
    );
    assert.equal(run.messages.length, 1);
    assert.ok(
      run.messages[0].startsWith(
        `Your lr is ${value}: ${why} (one number greater than 0 and at most 10)`,
      ),
      run.messages[0],
    );
  });
}

for (const value of [2.5, 0, -3, NaN]) {
  test(`steps = ${value}: not a positive whole number, the page's 10 steps`, () => {
    const run = runOf(scalar('lr', 0.05), scalar('steps', value));
    assert.deepEqual([run.lr, run.steps, run.stepsFrom], [0.05, 10, 'page']);
    assert.equal(
      run.messages[0],
      `Your steps is ${value}: the number of steps is a whole number of at least 1, so it is not used.`,
    );
  });
}

test('steps over the limit: the first 100, and the limit said', () => {
  const run = runOf(scalar('lr', 0.05), scalar('n_steps', 250));
  assert.deepEqual([run.steps, run.lrs.length], [100, 100]);
  assert.ok(
    run.messages.includes(
      "Your n_steps is 250: lesson 5 runs at most 100 steps (the page's limit), " +
        'so it runs your first 100.',
    ),
  );
});

test('losses of the wrong length: said, and compared where both have a step', () => {
  const run = runOf(
    scalar('lr', E.lr),
    scalar('steps', E.steps),
    vector('losses', E.losses.slice(0, 4)),
  );
  assert.equal(run.steps, E.steps);
  assert.ok(
    run.messages.some((m) =>
      m.startsWith(
        `Your losses have 4 entries, but your steps is ${E.steps}: expected ${E.steps} (the loss before each step) or ${E.steps + 1}`,
      ),
    ),
  );
  assert.equal(run.yours.losses.length, 4);
});

test('losses of another run: no lr from them, and the comparison says they differ', () => {
  const other = E.losses.map((L) => L * 1.5);
  const custom = use(addArrays(base(), [vector('loss_history', other)]).list);
  const run = custom.training;
  assert.equal(run.lrFrom, 'page');
  assert.equal(run.stepsFrom, 'losses');
  assert.ok(run.messages.some((m) => m.startsWith('Your loss_history[0] is ')));
  const a = lossesAgreement(run.yours.losses, replay(custom));
  assert.equal(a.agree, false);
  assert.ok(Math.abs(a.maxRel - 0.5) < 1e-12, String(a.maxRel));
  assert.match(
    agreementText('loss_history', a),
    /^Your loss_history differ from the page's: the largest relative difference is 5\.0e-1, at step 0 .*this is not the run your notebook made on these arrays/,
  );
});

test('losses with a NaN, a 2-D lr, a Wq_after of the wrong shape: each said, nothing used', () => {
  const bad = array('Wq_after', [2, 3], new Float64Array(6));
  const lr2 = array('eta', [2, 2], new Float64Array(4));
  const run = runOf(vector('losses', [1, NaN, 0.5]), lr2, bad);
  assert.equal(run.lrFrom, 'page');
  assert.ok(
    run.messages.some((m) => m.startsWith('Your losses is an array of shape (3,) with NaN or ∞')),
  );
  assert.ok(
    run.messages.some((m) =>
      m.startsWith('Your eta is an array of shape (2, 2): not a learning rate'),
    ),
  );
  assert.ok(
    run.messages.some((m) =>
      m.startsWith('Your Wq_after is an array of shape (2, 3): expected the (64, 64) weights'),
    ),
  );
});

for (const name of Object.keys(expected)) {
  test(`${name}-diverges.npz (lr 10, 20 steps): the Trainer stops with its message, the steps taken kept`, () => {
    const custom = use(loaded(`${name}-diverges.npz`));
    const run = custom.training;
    assert.deepEqual([run.lr, run.steps, run.lrText], [10, 20, 'lr 10 from your file']);
    const t = new Trainer(mha, customModel(custom));
    let error = null;
    try {
      for (const lr of run.lrs) t.step(lr);
    } catch (err) {
      error = err;
    } finally {
      t.free();
    }
    assert.match(error?.message ?? '', /^the loss is NaN: training diverged/);
    assert.ok(t.steps >= 1 && t.steps < 20, `${t.steps} steps taken`);
    assert.ok(t.losses.slice(0, -1).every(Number.isFinite));
  });
}
