// Lessons 4 and 5's DOM-free rules: the check tables' order (lesson 4's backward order, rows named
// by gradient, derived from the module's tensor table), and what the lesson-5 texts quote.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  backwardOrder,
  orderedRows,
  pendingReport,
  errorContrastText,
} from '../../web/model/gradcheck-report.js';
import { mseScale } from '../../web/model/training.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { courseData } from '../../web/model/course.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { Trainer } from '../../web/jobs/trainer.js';
import {
  LESSON4_ORDER,
  loadMHA,
  referenceBackward,
  referenceForward,
  referenceMse,
} from '../helpers.mjs';

const mha = await loadMHA();

test("backwardOrder: the check's tensors in the order lesson 4 computes their gradients", () => {
  const order = backwardOrder(mha);
  // written from the course (lesson 4 goes dWo ... dX), not read from the module
  assert.deepEqual(
    order.map((o) => o.gradient),
    ['dWo', 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX'],
  );
  assert.deepEqual(
    order.map((o) => o.tensor),
    ['Wo', 'concat', 'headout', 'V', 'att', 'scores', 'Q', 'K', 'Wq', 'Wk', 'Wv', 'X'],
  );
  // a subsequence of lesson 4's gradients, and exactly the module's check rows
  const at = order.map((o) => LESSON4_ORDER.indexOf(o.gradient));
  assert.ok(
    at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1])),
    `${at}`,
  );
  assert.deepEqual(order.map((o) => o.tensor).sort(), [...mha.checkNames].sort());
});

test('orderedRows: backward order, named by gradient, every figure of a row kept', () => {
  const pending = pendingReport(mha, { B: 2, T: 6, C: 64, heads: 4 });
  const rows = pending.map((r, i) => ({ ...r, checked: r.size, maxRel: i * 1e-9, analytic: i }));
  const shown = orderedRows(rows, backwardOrder(mha));
  assert.deepEqual(
    shown.map((r) => r.tensor),
    backwardOrder(mha).map((o) => o.gradient),
  );
  for (const r of shown) {
    const from = rows.find((x) => x.tensor === r.of);
    assert.deepEqual({ ...r, tensor: from.tensor, of: undefined }, { ...from, of: undefined });
  }
  assert.deepEqual(shown.find((r) => r.tensor === 'dX').shape, [2, 6, 64]);
  assert.deepEqual(shown.find((r) => r.tensor === 'dWo').shape, [64, 64]);
  // rows not in the order are left out; an empty report stays empty; the input is untouched
  assert.deepEqual(
    orderedRows(rows.slice(0, 2), backwardOrder(mha)).map((r) => r.tensor),
    ['dWq', 'dWk'],
  );
  assert.deepEqual(orderedRows(null, backwardOrder(mha)), []);
  assert.equal(rows[0].tensor, 'Wq');
  // the line under the table then names the gradient
  const line = errorContrastText(shown, (x) => x.toExponential(2));
  assert.match(line, /here dconcat: 1\.10e-8, on an entry of size 1\.10e\+1/);
});

test("mseScale: lesson 5's MSE gradients against lesson 4's, on the page's arrays", (t) => {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42, rng: 'default_rng' });
  const s = mseScale(mha, courseData(mha), model);
  assert.equal(s.n, 512);
  assert.equal(s.tokens4, 12);
  assert.equal(s.tokens5, 8);
  // the losses the two lessons show
  assert.equal(s.loss4, lesson4(mha).loss);
  const trainer = new Trainer(mha, model);
  try {
    assert.equal(s.loss5, trainer.losses[0]);
  } finally {
    trainer.free();
  }
  assert.ok(Math.abs(s.loss4 - 16.99) < 0.01 && Math.abs(s.loss5 - 1.3006) < 1e-4, `${s.loss4}`);
  // the ratios, from the reference layer (tests/helpers.mjs), not the module
  const d = courseData(mha);
  const dims4 = { B: d.B, T: d.T, C: d.C, heads: 4 };
  const g4 = referenceBackward(referenceForward(d.X, d.W, dims4), d.W, d.dY, dims4);
  const dims5 = { B: 1, T: model.T, C: 64, heads: 4 };
  const f5 = referenceForward(model.X, model.W, dims5);
  const mse = referenceMse(f5.Y, model.target);
  const g5 = referenceBackward(f5, model.W, mse.dY, dims5);
  const norm = (a) => Math.sqrt(Array.from(a).reduce((x, v) => x + v * v, 0));
  assert.deepEqual(
    s.weights.map((w) => [w.name, w.gradient]),
    [
      ['Wq', 'dWq'],
      ['Wk', 'dWk'],
      ['Wv', 'dWv'],
      ['Wo', 'dWo'],
    ],
  );
  for (const w of s.weights) {
    const want = norm(g4[w.gradient]) / norm(g5[w.gradient]);
    assert.ok(Math.abs(w.ratio - want) <= 1e-9 * want, `${w.name}: ${w.ratio} vs ${want}`);
  }
  const rms = (a) => norm(a) / Math.sqrt(a.length);
  assert.ok(Math.abs(s.dY - rms(d.dY) / rms(mse.dY)) <= 1e-9 * s.dY);
  // not the 512 the old text said: 180 to 240 for the weights, about 220 for dL/dY
  const ratios = s.weights.map((w) => w.ratio);
  assert.ok(Math.min(...ratios) > 150 && Math.max(...ratios) < 250, `${ratios}`);
  const each = s.weights.map((w) => `‖${w.gradient}‖ ratio ${w.ratio.toFixed(1)}`);
  t.diagnostic(`|L| ${s.loss4} / ${s.loss5}; rms dY ratio ${s.dY.toFixed(1)}; ${each.join(', ')}`);
});

test("mseScale: the root mean square of lesson 5's dL/dY is 2 sqrt(L) / n", () => {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42, rng: 'default_rng' });
  const s = mseScale(mha, courseData(mha), model);
  const want = (2 * Math.sqrt(s.loss5)) / s.n;
  assert.ok(Math.abs(s.rms5 - want) <= 1e-12 * want, `${s.rms5} vs ${want}`);
  assert.equal(s.dY, s.rms4 / s.rms5);
});
