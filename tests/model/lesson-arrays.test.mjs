// web/model/lesson-arrays.js: what each lesson's "Download arrays (.npz)" holds. Every array
// equals, bit for bit, what the lesson's model computes (the figures the page shows); names that
// the notebook check reads have the meaning and a shape the check accepts (docs/notebook-check.md);
// and writeNpz's file of them reads back in NumPy (np.load) with the same values, bit for bit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  arraysFilename,
  layerArrays,
  lesson1Arrays,
  lesson2Arrays,
  lesson3Arrays,
  lesson4Arrays,
  lesson5Arrays,
} from '../../web/model/lesson-arrays.js';
import { checkNotebook, readNpz, writeNpz } from '../../web/check.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { courseData } from '../../web/model/course.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { bitEqual, loadMHA } from '../helpers.mjs';
import { numpyLoad } from './ipynb-run.mjs';

const mha = await loadMHA();
const tokens = tokenize(DEFAULT_SENTENCE);
const T5 = tokens.length;

// The notebook check's names (docs/notebook-check.md), each with the shapes it accepts for the
// course demo (B = 2, T = 6, C = 64, h = 4): written here from that document, not from code.
function contractShapes({ B, T, C, h }) {
  const hs = C / h;
  const split = [B, h, T, hs];
  const merged = [B, T, C];
  const tt = [B, h, T, T];
  const btc = [merged];
  const either = [split, merged];
  return {
    X: btc,
    Wq: [[C, C]],
    Wk: [[C, C]],
    Wv: [[C, C]],
    Wo: [[C, C]],
    dY: btc,
    target: btc,
    Q: either,
    K: either,
    V: either,
    scores: [tt],
    att: [tt],
    headout: either,
    concat: btc,
    Y: btc,
    loss: [[], [1]],
    dWo: [[C, C]],
    dconcat: btc,
    dheadout: either,
    dV: either,
    datt: [tt],
    dscores: [tt],
    dQ: either,
    dK: either,
    dWq: [[C, C]],
    dWk: [[C, C]],
    dWv: [[C, C]],
    dX: btc,
  };
}

function assertArrays(arrays) {
  for (const [name, a] of Object.entries(arrays)) {
    assert.ok(a.data instanceof Float64Array, `${name}: Float64Array`);
    const n = a.shape.reduce((x, y) => x * y, 1);
    assert.equal(a.data.length, n, `${name}: ${a.data.length} values for shape ${a.shape}`);
  }
}

function assertContract(arrays, dims) {
  const accepted = contractShapes(dims);
  for (const [name, a] of Object.entries(arrays)) {
    if (!(name in accepted)) continue;
    assert.ok(
      accepted[name].some((s) => JSON.stringify(s) === JSON.stringify(a.shape)),
      `${name}: shape (${a.shape}) is not one the notebook check accepts`,
    );
  }
}

const same = (a, b, what) => assert.ok(bitEqual(a, b), `${what}: not bit-identical`);

test('arraysFilename', () => {
  assert.equal(arraysFilename(3), 'mha-lesson3-arrays.npz');
});

test('lesson 1: E, ids, X, the two heads’ weights, A1, A2, diff: the lesson’s figures', () => {
  const a = lesson1Arrays(mha, { tokens });
  assertArrays(a);
  const r = lesson1(mha, { tokens });
  assert.deepEqual(Object.keys(a), [
    'E',
    'ids',
    'X',
    'Wq1',
    'Wk1',
    'Wv1',
    'A1',
    'Wq2',
    'Wk2',
    'Wv2',
    'A2',
    'diff',
  ]);
  assert.deepEqual(a.X.shape, [1, T5, 64]);
  assert.deepEqual(a.E.shape, [r.vocab.length, 64]);
  assert.deepEqual(Array.from(a.ids.data), Array.from(r.ids));
  assert.deepEqual(a.Wq1.shape, [64, 16]);
  assert.deepEqual(a.A1.shape, [T5, T5]);
  same(a.A1.data, r.A1, 'A1');
  same(a.A2.data, r.A2, 'A2');
  same(a.diff.data, r.diff, 'diff');
  // the weights are the ones behind A2: one head from them gives A2 again
  const again = mha.singleHead(a.X.data, {
    B: 1,
    T: T5,
    C: 64,
    headSize: 16,
    Wq: a.Wq2.data,
    Wk: a.Wk2.data,
    Wv: a.Wv2.data,
  });
  same(again.att, r.A2, 'A2 from Wq2, Wk2, Wv2');
});

test('lesson 2: X, Wq, q (1, 6, 64), q4 (1, 6, 4, 16), Q (1, 4, 6, 16)', () => {
  const r = lesson2(mha);
  const a = lesson2Arrays(r);
  assertArrays(a);
  assert.deepEqual(
    Object.entries(a).map(([k, v]) => [k, v.shape]),
    [
      ['X', [1, 6, 64]],
      ['Wq', [64, 64]],
      ['q', [1, 6, 64]],
      ['q4', [1, 6, 4, 16]],
      ['Q', [1, 4, 6, 16]],
    ],
  );
  same(a.q.data, r.q, 'q');
  same(a.Q.data, r.Qheads, 'Q');
  same(a.X.data, r.x, 'X');
});

test('lesson 3 (mask off / on): the inputs and every forward tensor of lesson3()', () => {
  const data = courseData(mha);
  for (const causal of [false, true]) {
    const a = lesson3Arrays(mha, data, { causal });
    assertArrays(a);
    assert.deepEqual(Object.keys(a), [
      'X',
      'Wq',
      'Wk',
      'Wv',
      'Wo',
      'Q',
      'K',
      'V',
      'scores',
      'att',
      'headout',
      'concat',
      'Y',
    ]);
    assertContract(a, { B: 2, T: 6, C: 64, h: 4 });
    const r = lesson3(mha, { causal, data });
    for (const [name, t] of Object.entries(r.tensors)) {
      same(a[name].data, t.data, `${name} (causal ${causal})`);
      assert.deepEqual(a[name].shape, t.shape);
    }
    same(a.att.data, r.att, 'att');
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) same(a[k].data, data.W[k], k);
  }
});

test('lesson 4: lesson 3’s arrays, dY, loss = sum(dY * Y) and every gradient of lesson4()', () => {
  const data = courseData(mha);
  const a = lesson4Arrays(mha, data);
  assertArrays(a);
  const r = lesson4(mha, { data });
  assert.deepEqual(Object.keys(a), [
    'X',
    'Wq',
    'Wk',
    'Wv',
    'Wo',
    'dY',
    'Q',
    'K',
    'V',
    'scores',
    'att',
    'headout',
    'concat',
    'Y',
    'loss',
    ...r.order,
  ]);
  assertContract(a, { B: 2, T: 6, C: 64, h: 4 });
  assert.deepEqual(a.loss.shape, []);
  assert.equal(a.loss.data[0], r.loss, 'the loss the page lists');
  same(a.Y.data, r.Y, 'Y');
  same(a.dY.data, data.dY, 'dY');
  for (const name of r.order) {
    same(a[name].data, r.grads[name].data, name);
    assert.deepEqual(a[name].shape, r.grads[name].shape, name);
    // the gradient table's max |g| and ‖g‖, computed with the values (in the worker)
    const g = Array.from(r.grads[name].data);
    assert.equal(r.gradSizes[name].maxAbs, Math.max(...g.map(Math.abs)), `max |${name}|`);
    const norm = Math.hypot(...g);
    assert.ok(Math.abs(r.gradSizes[name].norm - norm) <= 1e-14 * norm, `‖${name}‖`);
  }
});

test('lesson 5: the MSE check’s arrays at the initial weights, then the page’s training', () => {
  const model = sentenceModel(mha, { tokens });
  const trainer = new Trainer(mha, model);
  try {
    trainer.step(0.1);
    trainer.step(0.05);
    const a = lesson5Arrays(mha, model, {
      weights: trainer.layer.weights,
      att: trainer.att,
      losses: trainer.losses,
      lrs: trainer.lrs,
    });
    assertArrays(a);
    assert.deepEqual(Object.keys(a).slice(0, 6), ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target']);
    assert.deepEqual(Object.keys(a).slice(-7), [
      'Wq_after',
      'Wk_after',
      'Wv_after',
      'Wo_after',
      'att_after',
      'losses',
      'lrs',
    ]);
    assertContract(a, { B: 1, T: T5, C: 64, h: 4 });
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) same(a[k].data, model.W[k], k);
    same(a.target.data, model.target, 'target');
    assert.equal(a.loss.data[0], trainer.losses[0], 'loss: the page’s loss at step 0');
    same(a.losses.data, trainer.losses, 'losses');
    assert.deepEqual(Array.from(a.lrs.data), [0.1, 0.05]);
    same(a.att_after.data, trainer.att, 'att_after');
    same(a.Wq_after.data, trainer.layer.weights.Wq, 'Wq_after');
    assert.ok(!bitEqual(a.Wq_after.data, a.Wq.data), 'training moved Wq');
    // dY and the gradients are the MSE check's at the initial weights
    same(a.dY.data, mha.mseLoss(a.Y.data, model.target).dY, 'dY = 2 (Y - target) / n');
    assert.deepEqual(a.dWq.shape, [64, 64]);
  } finally {
    trainer.free();
  }
});

test('layerArrays without a loss: only inputs and the forward pass', () => {
  const data = courseData(mha);
  const { X, W, B, T, C } = data;
  const a = layerArrays(mha, { X, W, B, T, C, heads: 4 });
  assert.ok(!('loss' in a) && !('dWq' in a) && !('dY' in a));
  assert.ok('Y' in a);
});

test('np.load reads every lesson’s .npz (writeNpz) back with the same values, bit for bit', () => {
  const data = courseData(mha);
  const model = sentenceModel(mha, { tokens });
  const trainer = new Trainer(mha, model);
  const lessons = {
    1: lesson1Arrays(mha, { tokens }),
    2: lesson2Arrays(lesson2(mha)),
    3: lesson3Arrays(mha, data, { causal: true }),
    4: lesson4Arrays(mha, data),
    5: lesson5Arrays(mha, model, {
      weights: trainer.layer.weights,
      att: trainer.att,
      losses: trainer.losses,
      lrs: trainer.lrs,
    }),
  };
  trainer.free();
  const dir = mkdtempSync(join(tmpdir(), 'mha-lesson-arrays-'));
  try {
    for (const [n, arrays] of Object.entries(lessons)) {
      const path = join(dir, arraysFilename(n));
      writeFileSync(path, writeNpz(arrays));
      const got = numpyLoad(path);
      assert.deepEqual(Object.keys(got), Object.keys(arrays), `lesson ${n}: names in order`);
      for (const [name, a] of Object.entries(arrays)) {
        assert.deepEqual(got[name].shape, a.shape, `lesson ${n} ${name}: shape`);
        assert.equal(got[name].dtype, '<f8', `lesson ${n} ${name}: dtype`);
        same(got[name].data, a.data, `lesson ${n} ${name} through np.load`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the notebook check reads lessons 4 and 5’s .npz back: each result given matches', () => {
  const lesson4File = lesson4Arrays(mha, courseData(mha));
  const model = sentenceModel(mha, { tokens });
  const trainer = new Trainer(mha, model);
  let lesson5File;
  try {
    trainer.step(0.1);
    lesson5File = lesson5Arrays(mha, model, {
      weights: trainer.layer.weights,
      att: trainer.att,
      losses: trainer.losses,
      lrs: trainer.lrs,
    });
  } finally {
    trainer.free();
  }
  for (const [name, file, loss] of [
    ['lesson 4', lesson4File, 'dot'],
    ['lesson 5', lesson5File, 'mse'],
  ]) {
    const arrays = readNpz(writeNpz(file, { compress: true }));
    const report = checkNotebook(mha, arrays, { heads: 4 });
    assert.equal(report.loss, loss, name);
    const given = report.rows.filter((r) => r.status !== 'missing');
    assert.ok(given.length >= 20, `${name}: ${given.length} results checked`);
    for (const row of given) {
      assert.equal(row.status, 'match', `${name} ${row.name}: ${row.status} ${row.maxAbs}`);
      assert.equal(row.diagnosis, null, `${name} ${row.name}`);
    }
  }
});
