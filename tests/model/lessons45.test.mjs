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
import { LESSON4_ORDER, loadMHA } from '../helpers.mjs';

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
