// checkTraining (web/check/training.js) on students' lesson-5 notebooks written in NumPy
// (tests/reference/notebook_training.py, build/reference/notebook-training/): the weights after a
// step and the losses of a 10-step run, correct (float64, float32, causal, two sizes, the page's
// own download) and with each mistake of a training step, each with its exact status and
// diagnosis; the learning rate found when not saved; the first step of `losses` that differs; the
// names read and not read; and bad input, which never throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA, referenceDir } from '../helpers.mjs';
import { assertSentences } from './students.mjs';
import { readNpz } from '../../web/io/npz.js';
import { checkTraining } from '../../web/check/training.js';
import { checkNotebook } from '../../web/check/check.js';
import { lesson5Arrays } from '../../web/model/lesson-arrays.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { Trainer } from '../../web/jobs/trainer.js';

const mha = await loadMHA();
const dir = join(referenceDir(), 'notebook-training');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const byName = Object.fromEntries(manifest.map((r) => [r.name, r]));

const load = (name) => readNpz(readFileSync(join(dir, `${name}.npz`)));
const check = (run, arrays = load(run.name), opts = {}) =>
  checkTraining(mha, arrays, { heads: run.heads, causal: run.causal, ...opts });
// the training rows as checkNotebook gives them: checkTraining's, named by the loop's search
// (loop.js) — the first differing row names the edit, the others follow from it
const TRAINING_ROWS = /_after$|^losses$/;
const checkLoop = (run, arrays = load(run.name), opts = {}) => {
  const report = check(run, arrays, opts);
  const page = checkNotebook(mha, arrays, { heads: run.heads, causal: run.causal, ...opts });
  return { ...report, rows: page.rows.filter((r) => TRAINING_ROWS.test(r.name)) };
};
// the manifest's rows as the loop names them: its first differing row keeps its id, the others
// follow from it (rows in the check's order: losses, then Wq_after … Wo_after)
function loopRows(rows) {
  const order = ['losses', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after'].filter((n) => rows[n]);
  const first = order.find((n) => rows[n][0] === 'differs');
  return Object.fromEntries(
    order.map((n) => {
      const [status, id] = rows[n];
      return [n, [status, status === 'differs' && n !== first ? 'follows-from' : id]];
    }),
  );
}
const rowOf = (report, name) => report.rows.find((r) => r.name === name);
const statuses = (report) =>
  Object.fromEntries(report.rows.map((r) => [r.name, [r.status, r.diagnosis?.id ?? null]]));
const without = (arrays, ...names) => {
  const rest = { ...arrays };
  for (const n of names) delete rest[n];
  return rest;
};
const array = (data, shape, dtype = '<f8') => ({ data: Float64Array.from(data), shape, dtype });
const scalar = (x) => array([x], []);
const AFTER = ['Wq_after', 'Wk_after', 'Wv_after', 'Wo_after'];
const GRADS = ['dWq', 'dWk', 'dWv', 'dWo'];
// W - lr * dW in plain JS from the student's own NumPy arrays (not from the code under test)
const step = (W, dW, lr) => W.data.map((w, i) => w - lr * dW.data[i]);

// ------------------------------------------------------------------------------------------------
// the students' notebooks

test('the fixtures: correct runs, each mistake, two sizes, float32, losses without *_after', () => {
  const names = manifest.map((r) => r.name);
  for (const n of ['correct-course', 'ascent', 'no-lr', 'lr-doubled', 'wv-not-updated']) {
    assert.ok(names.includes(n), n);
  }
  for (const n of ['wk-with-dwq', 'lr-not-saved', 'loss-sum', 'losses-n-plus-1', 'losses-only']) {
    assert.ok(names.includes(n), n);
  }
  assert.ok(manifest.some((r) => r.heads === 4) && manifest.some((r) => r.heads === 3));
  assert.ok(manifest.some((r) => r.dtype === 'f4') && manifest.some((r) => r.causal));
  assert.ok(manifest.some((r) => !r.saved.includes('Wq_after') && r.saved.includes('losses')));
});

for (const run of manifest) {
  test(`${run.name}: ${run.note}`, () => {
    const report = checkLoop(run);
    assert.deepEqual(statuses(report), loopRows(run.rows), JSON.stringify(report.rows));
    for (const row of report.rows) {
      if (row.diagnosis) {
        const sentence =
          row.diagnosis.id === 'follows-from' ? /^follows from .*\.$/s : /^[A-Z].*\.$/s;
        assert.match(row.diagnosis.message, sentence, `${row.name}: a sentence`);
        assert.doesNotMatch(
          row.diagnosis.message,
          /loop-[a-z]|step-differs|mse-loss/,
          'no ids inside',
        );
      }
    }
    // every diagnosis and note, word for word as approved
    const rows = report.rows.filter((r) => r.diagnosis);
    const said = Object.fromEntries(
      rows.map((r) => [r.name, `${r.diagnosis.id}: ${r.diagnosis.message}`]),
    );
    assertSentences('training', run.name, { rows: said, notes: report.notes });
    const losses = rowOf(report, 'losses');
    if (run.first === null) {
      assert.ok(!losses || losses.first === null, 'no step of losses differs');
    } else {
      assert.equal(losses.first.index[0], run.first, 'the first step that differs');
      const match = run.first === 0 ? 'differ from step 0' : `at step ${run.first} yours is`;
      assert.ok(losses.diagnosis.message.includes(match), losses.diagnosis.message);
    }
    if (run.lr_found) {
      assert.ok(Math.abs(report.lr.value / run.lr - 1) < 1e-12, `lr ${report.lr.value}`);
      assert.notEqual(report.lr.source, 'saved');
      assert.ok(report.notes.some((n) => n.startsWith('lr = ') && n.includes('(not saved)')));
    } else if (run.lr !== null) {
      assert.equal(report.lr.value, run.lr, 'the lr saved');
    }
    const training = run.saved.filter((k) => /_after$|^(lr|lrs|steps|losses)$/.test(k));
    assert.deepEqual([...report.used].sort(), training.sort(), 'used: the training arrays');
  });
}

test('lr found from Wq and Wq_after is said in a note, with the student’s names', () => {
  const report = check(byName['lr-not-saved']);
  assert.ok(report.notes.includes('lr = 0.3 found from your Wq and Wq_after (not saved).'));
});

test('each diagnosis names the student’s arrays and numbers', () => {
  const msg = (run, row) => rowOf(checkLoop(byName[run]), row).diagnosis.message;
  const replay = /Replayed from your initial weights for 10 steps \(lr = 0\.1\), it reproduces/;
  assert.match(msg('ascent', 'losses'), /^Your losses match at step 0; at step 1 yours is 1\.448,/);
  assert.match(msg('ascent', 'losses'), /W = W \+ lr \* dW \(gradient ascent\)/);
  assert.match(msg('ascent', 'losses'), replay);
  assert.match(
    msg('ascent', 'losses'),
    /your losses, and Wq_after, Wk_after, Wv_after and Wo_after as the weights after its first step/,
  );
  assert.match(msg('ascent', 'Wq_after'), /^follows from losses: the same loop reproduces/);
  assert.match(msg('no-lr', 'losses'), /the step leaves lr out: W = W - dW/);
  assert.match(msg('lr-doubled', 'losses'), /twice the course’s: W = W - 2 \* lr \* dW/);
  assert.match(msg('wv-not-updated', 'losses'), /one change: Wv is never updated/);
  assert.match(msg('wv-not-updated', 'losses'), /The course: Wv = Wv - lr \* dWv\.$/);
  assert.match(msg('wk-with-dwq', 'losses'), /Wk is updated with dWq: Wk = Wk - lr \* dWq/);
  assert.match(
    msg('loss-sum', 'losses'),
    /sum of the squares, not their mean: each loss is 768 \(= Y\.size\) × the course's.*np\.mean/,
  );
  assert.match(msg('losses-only-ascent', 'losses'), /gradient ascent/);
});

test('losses with steps + 1 entries: the last is the loss after the last step (a note)', () => {
  const report = check(byName['losses-n-plus-1']);
  const note = report.notes.find((n) => n.startsWith('losses[k] is compared'));
  assert.match(note, /k = 0 … 10/);
  assert.match(note, /your steps is 10 and your losses 11: the last is the loss after the last/);
});

test('the page’s own lesson-5 download (Wq_after … after the steps taken, lrs) all matches', () => {
  const model = sentenceModel(mha, { tokens: tokenize(DEFAULT_SENTENCE) });
  const trainer = new Trainer(mha, model);
  let arrays;
  try {
    for (const lr of [0.1, 0.05, 0.2]) trainer.step(lr);
    const { att, losses, lrs } = trainer;
    arrays = lesson5Arrays(mha, model, { weights: trainer.layer.weights, att, losses, lrs });
  } finally {
    trainer.free();
  }
  const report = checkTraining(mha, arrays, { heads: model.heads, causal: model.causal });
  assert.deepEqual(statuses(report), {
    Wq_after: ['match', null],
    Wk_after: ['match', null],
    Wv_after: ['match', null],
    Wo_after: ['match', null],
    losses: ['match', null],
  });
  assert.deepEqual(report.lr.lrs, [0.1, 0.05, 0.2]);
  assert.ok(!report.used.includes('att_after'), 'att_after is not a training array');
});

// ------------------------------------------------------------------------------------------------
// names

test('other spellings are read (Wq_new, eta, loss_history, n_steps); Wq1 and Wq2 never are', () => {
  const run = byName['ascent'];
  const a = load(run.name);
  const renamed = without(a, 'Wq_after', 'Wk_after', 'lr', 'losses', 'steps');
  Object.assign(renamed, {
    Wq_new: a.Wq_after,
    wk_updated: a.Wk_after,
    eta: a.lr,
    loss_history: a.losses,
    n_steps: a.steps,
    Wq1: a.Wq_after,
    Wq2: a.Wk_after,
    Wq1_after: a.Wq_after,
  });
  const report = checkLoop(run, renamed);
  assert.deepEqual(statuses(report), loopRows(run.rows));
  assert.match(
    rowOf(report, 'losses').diagnosis.message,
    /your loss_history, and Wq_new, wk_updated/,
  );
  for (const k of ['Wq1', 'Wq2', 'Wq1_after']) assert.ok(!report.used.includes(k), k);
  assert.ok(report.notes.includes('Wq_new read as Wq_after'));
  assert.ok(report.notes.includes('loss_history read as losses'));
  const both = checkLoop(run, { ...a, Wq_next: a.Wq });
  assert.deepEqual(statuses(both), loopRows(run.rows), 'the course’s spelling wins a tie');
  assert.ok(both.notes.includes('Wq_next and Wq_after both name Wq_after: Wq_after was used'));
});

test('a file without training arrays gives nothing: no rows, no notes, nothing used', () => {
  const a = load('correct-course');
  const report = check(
    byName['correct-course'],
    without(a, 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after', 'lr', 'steps', 'losses'),
  );
  assert.deepEqual(report, { rows: [], notes: [], used: [], lr: null });
});

// ------------------------------------------------------------------------------------------------
// the student's own gradients, and the float32 tolerance

test('a step from the student’s own (wrong) dWq follows from dWq', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const dWq = array(
    a.dWq.data.map((x) => 1.5 * x),
    [64, 64],
  );
  const Wq_after = array(step(a.Wq, dWq, 0.1), [64, 64]);
  const report = check(run, { ...a, dWq, Wq_after });
  const row = rowOf(report, 'Wq_after');
  assert.equal(row.status, 'differs');
  assert.equal(row.diagnosis.id, 'follows-from');
  assert.match(row.diagnosis.message, /^follows from dWq: Wq_after, recomputed from your own Wq/);
});

test('a step smaller than the float32 tolerance: the row says it cannot tell', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const f32 = (x) => array(Array.from(x.data, Math.fround), x.shape, '<f4');
  const Wq_after = array(Array.from(step(a.Wq, a.dWq, 1e-8), Math.fround), [64, 64], '<f4');
  const arrays = { ...a, Wq: f32(a.Wq), Wq_after, lr: scalar(1e-8) };
  const row = rowOf(check(run, arrays), 'Wq_after');
  assert.equal(row.status, 'match');
  assert.match(row.note, /cannot show whether the step was taken/);
  const notMoved = rowOf(check(run, { ...arrays, Wq_after: f32(a.Wq) }), 'Wq_after');
  assert.equal(notMoved.status, 'match', 'not updated is within the float32 tolerance too');
});

// ------------------------------------------------------------------------------------------------
// lr and steps

test('lr not a positive finite number: a note, and lr found from the weights instead', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  for (const [bad, said] of [
    [scalar(-0.1), 'is -0.1'],
    [scalar(NaN), 'is NaN'],
    [array([0.1, 0.1], [2]), 'is an array of shape (2,)'],
    [{ nope: 1 }, 'is not an array'],
  ]) {
    const report = check(run, { ...a, lr: bad });
    assert.ok(report.notes.some((n) => n.startsWith(`Your lr ${said}: a learning rate is one`)));
    assert.equal(report.lr.source, 'weights');
    assert.ok(Math.abs(report.lr.value / 0.1 - 1) < 1e-12);
    assert.ok(
      report.rows.every((r) => r.status === 'match'),
      said,
    );
  }
});

test('lr found negative (a climbing step): said, and the loop names gradient ascent', () => {
  const run = byName['ascent'];
  const report = checkLoop(run, without(load(run.name), 'lr'));
  assert.ok(Math.abs(report.lr.value / 0.1 - 1) < 1e-12);
  assert.ok(report.notes.some((n) => /^lr = 0\.1 found from your Wq and Wq_after .*-0\.1/.test(n)));
  assert.deepEqual(statuses(report), loopRows(run.rows));
});

test('no lr, and no step changed anything: the weights never updated, proven without lr', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const same = { Wq_after: a.Wq, Wk_after: a.Wk, Wv_after: a.Wv, Wo_after: a.Wo };
  const report = check(run, { ...without(a, 'lr', 'losses'), ...same });
  assert.deepEqual(statuses(report), {
    Wq_after: ['differs', 'loop-not-updated'],
    Wk_after: ['differs', 'follows-from'],
    Wv_after: ['differs', 'follows-from'],
    Wo_after: ['differs', 'follows-from'],
  });
  assert.match(
    report.rows[0].diagnosis.message,
    /^Your Wq_after, Wk_after, Wv_after and Wo_after equal your Wq, Wk, Wv and Wo, every entry exactly: no step changed the weights/,
  );
  // with losses: one number at every step says it too; losses that change do not
  const flat = array(new Array(10).fill(a.losses.data[0]), [10]);
  const withFlat = check(run, { ...without(a, 'lr'), ...same, losses: flat });
  assert.equal(withFlat.rows[0].name, 'losses');
  assert.match(withFlat.rows[0].diagnosis.message, /^Your losses are [\d.]+ at every step and/);
  const moving = check(run, { ...without(a, 'lr'), ...same });
  assert.ok(!moving.rows.some((r) => r.diagnosis?.id === 'loop-not-updated'));
});

test('steps that disagree with len(losses) are said; steps not a count is not used', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const seven = check(run, { ...a, steps: scalar(7) });
  assert.ok(
    seven.notes.includes(
      'Your steps is 7, but your losses has 10 entries (neither that nor one more): ' +
        'all 10 are checked.',
    ),
  );
  // the course's first 10 losses while steps is 7: the loop ran 10 steps, named
  const sevenRow = rowOf(seven, 'losses');
  assert.deepEqual([sevenRow.status, sevenRow.diagnosis.id], ['shape', 'loop-steps']);
  assert.match(sevenRow.diagnosis.message, /while your steps is 7: your loop ran 10 steps\. /);
  const notesOf = (steps) => check(run, { ...a, steps }).notes.filter((n) => /^Your steps/.test(n));
  const off = (S) =>
    `Your steps is ${S}, but your losses has 10 entries (neither that nor one more): ` +
    'all 10 are checked.';
  assert.deepEqual(notesOf(scalar(0)), [off(0)], 'no steps at all is a count');
  assert.deepEqual(notesOf(scalar(11)), [off(11)], 'losses has 10: steps 10 or 9 agree');
  assert.deepEqual(notesOf(array([10], [1])), [], 'a 1-element array is one number');
  assert.deepEqual(notesOf(array([10, 10], [2])), [
    'Your steps is an array of shape (2,): expected one whole number of steps, so it is not used.',
  ]);
  const half = check(run, { ...a, steps: scalar(2.5) });
  assert.ok(
    half.notes.includes(
      'Your steps is 2.5: expected one whole number of steps, so it is not used.',
    ),
  );
});

// ------------------------------------------------------------------------------------------------
// bad input: never an unexplained error

test('wrong shapes: an uncompared row with the shape expected', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const report = check(run, {
    ...a,
    Wq_after: array(a.Wq_after.data.slice(0, 64 * 32), [64, 32]),
    losses: array(a.losses.data, [2, 5]),
  });
  const wq = rowOf(report, 'Wq_after');
  assert.deepEqual([wq.status, wq.shape, wq.expectedShape], ['shape', [64, 32], [64, 64]]);
  assert.match(wq.note, /expected \(C, C\) = \(64, 64\) like Wq/);
  const losses = rowOf(report, 'losses');
  assert.deepEqual([losses.status, losses.shape], ['shape', [2, 5]]);
  assert.match(losses.note, /expected a 1-D array \(n,\)/);
  assert.equal(rowOf(report, 'Wk_after').status, 'match');
  const empty = check(run, { ...a, losses: array([], [0]) });
  assert.equal(rowOf(empty, 'losses').status, 'shape');
});

test('non-finite values: the row differs and says where', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const Wv_after = array(a.Wv_after.data, [64, 64]);
  Wv_after.data[3 * 64 + 5] = NaN;
  const losses = array(a.losses.data, [10]);
  losses.data[4] = Infinity;
  const report = check(run, { ...a, Wv_after, losses });
  const wv = rowOf(report, 'Wv_after');
  assert.deepEqual([wv.status, wv.diagnosis.id], ['differs', 'non-finite']);
  assert.match(wv.diagnosis.message, /1 entry that is not finite, the first NaN at \[3, 5\]/);
  const row = rowOf(report, 'losses');
  assert.equal(row.first.index[0], 4);
  assert.match(row.diagnosis.message, /match for steps 0–3; at step 4 yours is Infinity/);
});

test('one loss only: compared without lr (the loss at the initial weights)', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const only = { ...without(a, 'lr', 'steps', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after') };
  only.losses = array([a.losses.data[0]], [1]);
  assert.deepEqual(statuses(check(run, only)), { losses: ['match', null] });
  only.losses = array([a.losses.data[0] * 2], [1]);
  const twice = check(run, only);
  assert.deepEqual(statuses(twice), { losses: ['differs', 'factor'] });
  assert.match(rowOf(twice, 'losses').diagnosis.message, /Your losses are 2 × the course's/);
});

test('target missing or unusable: a note, no rows', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const none = check(run, without(a, 'target'));
  assert.deepEqual(none.rows, []);
  assert.ok(none.notes.some((n) => /not checked: save target: lesson 5 trains on the MSE/.test(n)));
  const bad = check(run, { ...a, target: array([1, 2], [2]) });
  assert.ok(
    bad.notes.some((n) =>
      /your target has shape \(2,\); expected \(B, T, C\) = \(2, 6, 64\)/.test(n),
    ),
  );
  const nan = array(a.target.data, a.target.shape);
  nan.data[0] = NaN;
  assert.ok(check(run, { ...a, target: nan }).notes.some((n) => /not finite/.test(n)));
});

test('X or a weight missing, bad heads, or no arrays: no rows (checkNotebook says why)', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const none = { rows: [], notes: [], used: [], lr: null };
  assert.deepEqual(check(run, without(a, 'X')), none);
  assert.deepEqual(check(run, without(a, 'Wk')), none);
  assert.deepEqual(check(run, a, { heads: 5 }), none);
  assert.deepEqual(check(run, a, { causal: 'yes' }), none);
  assert.deepEqual(checkTraining(mha, null, { heads: 4 }), none);
  assert.deepEqual(checkTraining(mha, a), none, 'no heads');
});

// ------------------------------------------------------------------------------------------------
// measured facts, and printed losses

test('a step no simple rule reproduces: only what was measured', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const Wq_after = array(a.Wq_after.data, [64, 64]);
  Wq_after.data[70] += 1e-3;
  const losses = array(a.losses.data, [10]);
  losses.data[5] += 1e-3;
  const report = check(run, { ...a, Wq_after, losses });
  const wq = rowOf(report, 'Wq_after');
  assert.deepEqual([wq.status, wq.diagnosis.id], ['differs', 'step-differs']);
  assert.deepEqual(wq.first.index, [1, 6]);
  assert.match(
    wq.diagnosis.message,
    /^Your Wq_after differs from Wq - lr \* dWq \(lr = 0\.1\) by up to 0\.001,/,
  );
  const row = rowOf(report, 'losses');
  assert.deepEqual(
    [row.status, row.diagnosis.id, row.first.index],
    ['differs', 'step-differs', [5]],
  );
  assert.match(
    row.diagnosis.message,
    /^Your losses match for steps 0–4; at step 5 yours is [\d.]+, the course's [\d.]+\.$/,
  );
});

test('no weight updated at all: the loop names the four, the rest follows', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const flat = array(new Array(10).fill(a.losses.data[0]), [10]);
  const same = { Wq_after: a.Wq, Wk_after: a.Wk, Wv_after: a.Wv, Wo_after: a.Wo, losses: flat };
  const report = checkLoop(run, { ...a, ...same });
  assert.deepEqual(statuses(report), {
    losses: ['differs', 'loop-not-updated'],
    Wq_after: ['differs', 'follows-from'],
    Wk_after: ['differs', 'follows-from'],
    Wv_after: ['differs', 'follows-from'],
    Wo_after: ['differs', 'follows-from'],
  });
  assert.match(
    rowOf(report, 'losses').diagnosis.message,
    /with these changes: Wq, Wk, Wv and Wo are never updated\./,
  );
});

test('losses printed to 4 decimals (text) match within their printed digits', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const printed = {
    data: Float64Array.from(a.losses.data, (x) => Number(x.toFixed(4))),
    shape: [10],
    dtype: 'text',
    resolution: new Float64Array(10).fill(0.5e-4),
  };
  assert.equal(rowOf(check(run, { ...a, losses: printed }), 'losses').status, 'match');
  printed.data[3] += 2e-4;
  assert.equal(rowOf(check(run, { ...a, losses: printed }), 'losses').first.index[0], 3);
});

test('every spelling of each training name is read, and nothing around it', () => {
  const run = byName['ascent'];
  const a = load(run.name);
  const spellings = {
    lr: ['lr', 'learning_rate', 'ETA', 'alpha'],
    steps: ['steps', 'nsteps', 'num_steps'],
    losses: ['losses', 'loss_history', 'loss_curve', 'history'],
    Wq_after: ['Wq_after', 'wq_new', 'WQ_NEXT', 'Wq_updated'],
  };
  for (const [name, keys] of Object.entries(spellings)) {
    for (const key of keys) {
      const report = checkLoop(run, { ...without(a, name), [key]: a[name] });
      assert.ok(report.used.includes(key), `${key} used`);
      if (key !== name) assert.ok(report.notes.includes(`${key} read as ${name}`), key);
      assert.deepEqual(statuses(report), loopRows(run.rows), key);
    }
  }
  // a name inside a longer one is not read: the checks of Wq_after then have no Wq_after
  for (const key of ['xWq_after', 'Wq_after2', 'my_lr', 'lrate', 'steps2', 'losses_']) {
    const report = check(run, { ...a, [key]: a.lr });
    assert.ok(!report.used.includes(key), key);
  }
  // the course's spelling wins whatever the order of the file
  const tie = check(run, { eta: a.lr, ...a });
  assert.ok(tie.notes.includes('eta and lr both name lr: lr was used'), tie.notes.join('\n'));
});

test('lr and lrs that cannot be used: each said word for word, lr found from the weights', () => {
  const run = byName['ascent'];
  const rest = without(load(run.name), 'lr');
  const notesOf = (extra, re) => check(run, { ...rest, ...extra }).notes.filter((n) => re.test(n));
  const lrsNote = (what) =>
    `Your lrs is ${what}: expected a 1-D array of positive finite learning rates, one per ` +
    'step, so it is not used.';
  assert.deepEqual(notesOf({ lrs: array([0.1, 0, 0.1], [3]) }, /lrs/), [
    lrsNote('an array of shape (3,)'),
  ]);
  assert.deepEqual(notesOf({ lrs: array([0.1, 0.1], [1, 2]) }, /lrs/), [
    lrsNote('an array of shape (1, 2)'),
  ]);
  assert.deepEqual(notesOf({ lrs: array([0.1, Infinity], [2]) }, /lrs/), [
    lrsNote('an array of shape (2,)'),
  ]);
  assert.deepEqual(notesOf({ lrs: { data: null, shape: [2] } }, /lrs/), [lrsNote('not an array')]);
  const lrNote = (what) =>
    `Your lr is ${what}: a learning rate is one positive finite number, so it is not used (lr ` +
    'is found from your other arrays instead).';
  for (const [lr, what] of [
    [scalar(0), '0'],
    [scalar(NaN), 'NaN'],
    [array([0.1, 0.2], [2]), 'an array of shape (2,)'],
  ]) {
    const report = check(run, { ...rest, lr });
    assert.deepEqual(
      report.notes.filter((n) => /^Your lr /.test(n)),
      [lrNote(what)],
    );
    assert.ok(Math.abs(report.lr.value - 0.1) < 1e-12, `found: ${report.lr.value}`);
  }
  // a schedule of positive rates is used as saved, one per step
  const lrs = check(run, { ...rest, lrs: array([0.1, 0.1, 0.1], [3]) }).lr;
  assert.deepEqual([lrs.value, lrs.source], [0.1, 'saved']);
});

test('a step with k × lr: k named when it is a size of the layer (B 2, T 6, C 64, h 4)', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  // one step saved (no losses, no steps): Wq_after is W - k lr dWq, the other weights the course's
  const one = without(a, 'losses', 'steps');
  const said = (k) => {
    const Wq_after = { ...a.Wq, data: Float64Array.from(step(a.Wq, a.dWq, k * 0.1)) };
    const row = rowOf(checkLoop(run, { ...one, Wq_after }), 'Wq_after');
    return [
      row.status,
      row.diagnosis.id,
      row.diagnosis.message.match(/one change: (.*?)\. Replayed/)?.[1],
    ];
  };
  for (const [k, shown] of [
    [2, 'for Wq: the step is twice the course’s: W = W - 2 * lr * dW'],
    [0.5, 'for Wq: the step is half the course’s: W = W - lr * dW / 2'],
    [4, 'for Wq: the step is 4 × lr * dW (4 = h)'],
    [6, 'for Wq: the step is 6 × lr * dW (6 = T)'],
    [64, 'for Wq: the step is 64 × lr * dW (64 = C)'],
    [12, 'for Wq: the step is 12 × lr * dW (12 = B·T)'],
    [768, 'for Wq: the step is 768 × lr * dW (768 = Y.size)'],
    [7, 'for Wq: the step’s learning rate is 0.7, not your lr = 0.1: W = W - 0.7 * dW'],
  ]) {
    assert.deepEqual(said(k), ['differs', 'loop-lr', shown], `k = ${k}`);
  }
});

test('another weight’s gradient with a factor or a sign; non-finite weights, counted', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const one = without(a, 'losses', 'steps');
  const said = (key, data) => {
    const row = rowOf(
      checkLoop(run, { ...one, [key]: { ...a[key], data: Float64Array.from(data) } }),
      key,
    );
    return `${row.diagnosis.id} | ${row.diagnosis.message}`;
  };
  // the other weight's gradient, alone or with another step size or its sign: named
  const other = (how) => new RegExp(`^loop-other-gradient \\| .*Wk is updated with dWq${how}`);
  assert.match(said('Wk_after', step(a.Wk, a.dWq, 0.1)), other(': Wk = Wk - lr \\* dWq'));
  assert.match(said('Wk_after', step(a.Wk, a.dWq, 0.2)), other(' at 2 × lr: Wk = Wk - 2 \\* lr'));
  assert.match(
    said('Wk_after', step(a.Wk, a.dWq, -0.1)),
    other(' at -1 × lr: Wk = Wk \\+ lr \\* dWq'),
  );
  // no change tried reproduces it: what was measured, and what was ruled out
  assert.match(
    said(
      'Wk_after',
      step(a.Wk, a.dWq, 0.1).map((x, i) => (i ? x : x + 1)),
    ),
    /^step-differs \| Your Wk_after differs from Wk - lr \* dWk .*No change of the training loop tried/,
  );
  const nan = a.Wq_after.data.map((x, i) => (i === 3 ? NaN : x));
  assert.equal(
    said('Wq_after', nan),
    'non-finite | Your Wq_after has 1 entry that is not finite, the first NaN at [0, 3]; the ' +
      "course's Wq - lr * dWq is finite everywhere.",
  );
  const inf = a.Wq_after.data.map((x, i) => (i < 2 ? Infinity : x));
  assert.equal(
    said('Wq_after', inf),
    'non-finite | Your Wq_after has 2 entries that are not finite, the first Infinity at [0, 0]; ' +
      "the course's Wq - lr * dWq is finite everywhere.",
  );
});

test('unusable arrays: no rows for a bad X or heads, a shape row for bad W_after, losses', () => {
  const run = byName['correct-course'];
  const a = load(run.name);
  const rowsOf = (extra, opts = { heads: 4 }) =>
    checkTraining(mha, { ...a, ...extra }, opts).rows.filter((r) => r.status !== 'match');
  const n = (extra, opts) =>
    checkTraining(mha, { ...a, ...extra }, opts ?? { heads: 4 }).rows.length;
  assert.equal(n({ X: { ...a.X, data: a.X.data.map((x, i) => (i ? x : NaN)) } }), 0);
  assert.equal(n({ X: { ...a.X, shape: [768] } }), 0);
  assert.equal(n({}, { heads: 0 }), 0);
  assert.equal(n({}, { heads: 2.5 }), 0);
  assert.equal(n({}), 5);
  const notArray = (key) => `${key} is not an array: expected { data, shape } as readNpy returns`;
  for (const bad of [
    { data: a.Wq_after.data, shape: [64, -64] },
    { data: a.Wq_after.data.slice(1), shape: [64, 64] },
    { data: a.Wq_after.data, shape: [64, 64.5] },
    { data: [Symbol('not a number'), ...a.Wq_after.data.slice(1)], shape: [64, 64] },
    'x',
  ]) {
    const [row] = rowsOf({ Wq_after: bad });
    assert.deepEqual(
      [row.name, row.status, row.shape, row.expectedShape, row.note],
      ['Wq_after', 'shape', null, [64, 64], notArray('Wq_after')],
    );
  }
  const [flat] = rowsOf({ Wq_after: { data: a.Wq_after.data, shape: [4096] } });
  assert.deepEqual([flat.shape, flat.note], [[4096], 'expected (C, C) = (64, 64) like Wq']);
  const [list] = rowsOf({ losses: 'x' });
  assert.deepEqual(
    [list.name, list.expectedShape, list.note],
    ['losses', [10], notArray('losses')],
  );
  const [grid] = rowsOf({ losses: { data: a.losses.data, shape: [2, 5] } });
  assert.equal(
    grid.note,
    'expected a 1-D array (n,) of the loss at each step, e.g. losses = np.array(losses); your ' +
      'losses has shape (2, 5)',
  );
});

test('nothing to check, no lr from losses, an engine that fails: each a note, no rows', () => {
  const a = load('correct-course');
  const only = checkTraining(mha, without(a, 'steps', 'losses', ...AFTER, ...GRADS), { heads: 4 });
  assert.deepEqual(only, {
    rows: [],
    notes: [
      'lr read, but there is nothing of the training step to check: save the weights after one ' +
        'step (Wq_after=…, Wk_after=…, Wv_after=…, Wo_after=…) or the losses.',
    ],
    used: ['lr'],
    lr: null,
  });
  // losses[1] that no learning rate reaches from the initial weights' loss (0 is below any MSE
  // the gradient's line reaches; a loss that stays flat needs lr = 0, which is no step)
  const b = load('losses-only');
  for (const second of [0, -1, b.losses.data[0]]) {
    const losses = array(b.losses.data, b.losses.shape);
    losses.data[1] = second;
    const report = checkTraining(mha, { ...b, losses }, { heads: 3 });
    assert.deepEqual([report.rows, report.lr], [[], null], `losses[1] = ${second}`);
    assert.deepEqual(report.notes, [
      "losses not checked: lr is not saved and no learning rate takes your initial weights' " +
        "loss to your losses[1]; save it: np.savez('mha_check.npz', ..., lr=lr).",
    ]);
  }
  const broken = Object.create(mha);
  broken.createLayer = () => {
    throw new Error('out of memory');
  };
  const failed = checkTraining(broken, a, { heads: 4 });
  assert.deepEqual([failed.rows, failed.lr], [[], null]);
  assert.deepEqual(failed.notes, [
    'The training step could not be checked: the engine failed (out of memory).',
  ]);
  assert.deepEqual(failed.used, ['lr', 'steps', 'losses', ...AFTER]);
});

test('lr found going up, k × lr ascent, X of 2 or 4 axes, heads not a count, names around', () => {
  // losses that climb, lr not saved: lr found from losses[1], said as going up, and the run
  // named gradient ascent
  const up = load('losses-only-ascent');
  const report = checkLoop({ heads: 4, causal: false }, without(up, 'lr'));
  assert.equal(
    report.notes[0],
    'lr = 0.1 found from your losses (not saved): the learning rate whose first step from your ' +
      'initial weights gives your losses[1], going up (lr = -0.1).',
  );
  assert.deepEqual(statuses(report), { losses: ['differs', 'loop-sign'] });
  // W + 2 lr dW: ascent with its factor
  const a = load('correct-course');
  const lr = a.lr.data[0];
  const plus = { ...a.Wq, data: a.Wq.data.map((w, i) => w + 2 * lr * a.dWq.data[i]) };
  const one = without(a, 'losses', 'steps');
  const row = rowOf(checkLoop({ heads: 4, causal: false }, { ...one, Wq_after: plus }), 'Wq_after');
  assert.equal(row.diagnosis.id, 'loop-sign');
  assert.match(
    row.diagnosis.message,
    /one change: for Wq: the sign of the step is flipped and its learning rate is 0\.2: W = W \+ 0\.2 \* dW \(gradient ascent\)\. Replayed from your initial weights for 1 step \(/,
  );
  // X (T, C) is one item (B = 1): read; X of 4 axes or with no tokens is not; heads a whole
  // number >= 1 (4.0 is 4)
  const rows = (arrays, heads = 4) => checkTraining(mha, arrays, { heads }).rows.length;
  assert.equal(rows({ ...a, X: { ...a.X, shape: [12, 64] } }), 5);
  assert.equal(rows({ ...a, X: { ...a.X, shape: [1, 2, 6, 64] } }), 0);
  assert.equal(rows({ ...a, X: { ...a.X, shape: [2, 0, 64], data: new Float64Array(0) } }), 0);
  assert.deepEqual(
    [-1, '4', 4.0].map((h) => rows(a, h)),
    [0, 0, 5],
  );
  // a weight's name with something before or after it is not a training name
  for (const key of ['old_Wq_after', 'Wq_after2', 'xWq_new']) {
    const used = checkTraining(mha, { ...without(a, 'Wq_after'), [key]: a.Wq_after }, { heads: 4 });
    assert.ok(!used.used.includes(key), key);
  }
});

test('lr neither saved nor found from one W_after: equal to its W, or not finite, said', () => {
  const a = load('correct-course');
  const base = { X: a.X, Wq: a.Wq, Wk: a.Wk, Wv: a.Wv, Wo: a.Wo, target: a.target };
  const noteOf = (after) => checkTraining(mha, { ...base, Wq_after: after }, { heads: 4 });
  const save = "save it: np.savez('mha_check.npz', ..., lr=lr).";
  assert.deepEqual(noteOf(a.Wq), {
    rows: [],
    notes: [
      'Wq_after not checked: lr is not saved and cannot be found (your Wq_after equals your Wq: ' +
        `no step changed them); ${save}`,
    ],
    used: ['Wq_after'],
    lr: null,
    shown: [],
  });
  const nan = { ...a.Wq, data: a.Wq.data.map(() => NaN) };
  assert.deepEqual(noteOf(nan).notes, [
    'Wq_after not checked: lr is not saved and cannot be found (none of your weights after the ' +
      `step is finite and different from your initial one); ${save}`,
  ]);
});

test('losses k × the course’s: k named when it is B·T, C or T·C (B 2, T 6, C 64), else k', () => {
  const a = load('correct-course');
  const said = (k) => {
    const losses = { ...a.losses, data: a.losses.data.map((x) => x * k) };
    const row = rowOf(checkLoop({ heads: 4, causal: false }, { ...a, losses }), 'losses');
    return [row.diagnosis.id, row.diagnosis.message.match(/one change: (.*?)\. Replayed/)?.[1]];
  };
  const divides = 'the loss divides the sum of the squares by';
  assert.deepEqual(said(12), [
    'factor',
    `${divides} C only (a mean over the features): each loss is 12 (= B·T) × the course's`,
  ]);
  assert.deepEqual(said(64), [
    'factor',
    `${divides} B·T only (a mean over the tokens): each loss is 64 (= C) × the course's`,
  ]);
  assert.deepEqual(said(384), [
    'factor',
    `${divides} B only (the mean over the batch of each item's sum): each loss is 384 (= T·C) × the course's`,
  ]);
  for (const k of [2, 0.5, 3]) {
    const losses = { ...a.losses, data: a.losses.data.map((x) => x * k) };
    const row = rowOf(checkTraining(mha, { ...a, losses }, { heads: 4 }), 'losses');
    assert.deepEqual(row.diagnosis.id, 'factor');
    assert.match(
      row.diagnosis.message,
      new RegExp(`Your losses are ${k} × the course's at every step\\.$`),
    );
  }
  const zero = { ...a.losses, data: a.losses.data.map(() => 0) };
  const row = rowOf(checkTraining(mha, { ...a, losses: zero }, { heads: 4 }), 'losses');
  assert.equal(row.diagnosis.id, 'step-differs', row.diagnosis.message);
});

test('a training run alone: h read from its first loss when the h set does not fit', () => {
  for (const name of ['losses-only', 'correct-other-causal', 'ascent-other-f32']) {
    const run = byName[name];
    assert.equal(run.heads, 3);
    const wrongH = checkNotebook(mha, load(name), { heads: 4, causal: run.causal });
    const setH = checkNotebook(mha, load(name), { heads: 3, causal: run.causal });
    assert.equal(wrongH.sizes.heads, 3, name);
    assert.match(
      wrongH.notes[0],
      /^checked with h = 3 heads: your losses\[0\], the loss at your initial weights, is the course's with h = 3, not with h = 4 \(as set\)$/,
    );
    // (the same rows as with h = 3 set: the reading changes nothing else)
    assert.deepEqual(statuses(wrongH), statuses(setH), name);
  }
  // the h set fits: no other h is tried, nothing said
  const course = checkNotebook(mha, load('correct-course'), { heads: 4 });
  assert.ok(!course.notes.some((n) => n.startsWith('checked with h')));
});
