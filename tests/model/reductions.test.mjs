// web/model/, the small reductions the page prints: maxAbs, maxAbsDiff, frobenius, argmax,
// argmaxDiffRows, slice2d, meanOverHeads, rowSums, blockDiagonal, blockMaxima; hand-derived
// values, NaN handling, and NumPy's argmax on the lesson-1 fixture.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  maxAbs,
  maxAbsDiff,
  frobenius,
  argmax,
  argmaxDiffRows,
  slice2d,
  meanOverHeads,
  rowSums,
  blockDiagonal,
  blockMaxima,
} from '../../web/model/arrays.js';
import { loadPageFixture, f64 } from '../helpers.mjs';

test('maxAbs / maxAbsDiff: largest magnitude; 0 for empty input; NaN wins wherever it is', () => {
  assert.equal(maxAbs([1, -3, 2]), 3);
  assert.equal(maxAbs(Float64Array.of(-0.5, 0.25)), 0.5);
  assert.equal(maxAbs([]), 0);
  assert.ok(Object.is(maxAbs([-0]), 0));
  assert.ok(Number.isNaN(maxAbs([NaN, 5])));
  assert.ok(Number.isNaN(maxAbs([5, NaN, 1])));
  assert.equal(maxAbs([-Infinity, 1]), Infinity);
  assert.equal(maxAbsDiff([1, 2, 3], [1, 5, 2]), 3);
  assert.equal(maxAbsDiff([1, 2], [1, 2]), 0);
  assert.equal(maxAbsDiff([], []), 0);
  assert.ok(Number.isNaN(maxAbsDiff([0, 1], [NaN, 0])));
  assert.ok(Number.isNaN(maxAbsDiff([9, 1], [0, NaN])));
  assert.equal(maxAbsDiff([-2], [3]), 5);
});

test('frobenius: sqrt of the sum of squares', () => {
  assert.equal(frobenius([3, 4]), 5);
  assert.equal(frobenius([]), 0);
  assert.equal(frobenius([-2, 1, 2, 4]), 5);
  assert.equal(frobenius(Float64Array.of(1e200, 1e200)), Infinity); // a plain sum, no scaling
});

test('argmax: index of the first maximum, within a window', () => {
  assert.equal(argmax([1, 3, 3, 2]), 1);
  assert.equal(argmax([5, 1]), 0);
  assert.equal(argmax([1, 5]), 1);
  assert.equal(argmax([7]), 0);
  assert.equal(argmax([-3, -1, -2]), 1);
  // window [off, off + n): index relative to off
  assert.equal(argmax([9, 1, 5, 5, 8], 1, 3), 1);
  assert.equal(argmax([9, 1, 5, 5, 8], 2, 3), 2);
  assert.equal(argmax([9, 1, 5, 5, 8], 0, 2), 0);
  assert.equal(argmax([0, 2, 9], 0, 2), 1); // 9 lies outside the window
});

test('argmaxDiffRows: rows whose argmax differs (first max wins on ties)', () => {
  const T = 3;
  const A1 = [1, 0, 0, 0, 1, 0, 0.5, 0.5, 0];
  const A2 = [0, 1, 0, 0, 1, 0, 0.5, 0.5, 0.2];
  assert.deepEqual(argmaxDiffRows(A1, A2, T), [0]);
  assert.deepEqual(argmaxDiffRows(A1, A1, T), []);
  assert.deepEqual(argmaxDiffRows(A1, [0, 0, 1, 1, 0, 0, 0, 0, 1], T), [0, 1, 2]);
  // NumPy's np.argmax per row on lesson 1's two heads
  const l1 = loadPageFixture().lesson1;
  const n = l1.argmax1.length;
  assert.deepEqual(argmaxDiffRows(f64(l1.A1), f64(l1.A2), n), l1.argmaxDiffRows);
  for (let t = 0; t < n; t++) assert.equal(argmax(f64(l1.A1), t * n, n), l1.argmax1[t]);
});

test('slice2d: block `index` of rows x cols entries, a copy', () => {
  const data = Float64Array.from({ length: 12 }, (_, i) => i);
  assert.deepEqual(Array.from(slice2d(data, 0, 2, 3)), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(slice2d(data, 1, 2, 3)), [6, 7, 8, 9, 10, 11]);
  assert.deepEqual(Array.from(slice2d(data, 2, 2, 2)), [8, 9, 10, 11]);
  const s = slice2d(data, 0, 1, 2);
  s[0] = 99;
  assert.equal(data[0], 0);
});

test('meanOverHeads: the mean of batch item b over heads, (T, T)', () => {
  // B = 2, heads = 2, T = 2: att[b, h] filled with b*10 + h*4 + (0, 1, 2, 3)
  const T = 2,
    heads = 2;
  const att = new Float64Array(2 * heads * T * T);
  for (let b = 0; b < 2; b++) {
    for (let hh = 0; hh < heads; hh++) {
      for (let i = 0; i < T * T; i++) att[(b * heads + hh) * T * T + i] = b * 10 + hh * 4 + i;
    }
  }
  assert.deepEqual(Array.from(meanOverHeads(att, 0, heads, T)), [2, 3, 4, 5]);
  assert.deepEqual(Array.from(meanOverHeads(att, 1, heads, T)), [12, 13, 14, 15]);
  assert.deepEqual(Array.from(meanOverHeads(att, 1, 1, T)), [4, 5, 6, 7]); // heads = 1: one block
  // three heads: sum then divide
  assert.deepEqual(Array.from(meanOverHeads([1, 2, 4], 0, 3, 1)), [7 / 3]);
});

test('rowSums: the sum of each row of length T and max |sum - 1|', () => {
  const { sums, maxErr } = rowSums([0.5, 0.5, 0.25, 0.5, 1, 0.25], 2);
  assert.deepEqual(Array.from(sums), [1, 0.75, 1.25]);
  assert.equal(maxErr, 0.25);
  const one = rowSums([0.25, 0.75], 2);
  assert.deepEqual(Array.from(one.sums), [1]);
  assert.equal(one.maxErr, 0);
  assert.equal(rowSums([0.1, 0.2, 0.3], 3).maxErr, Math.abs(0.1 + 0.2 + 0.3 - 1));
  assert.equal(rowSums([2, 0], 1).maxErr, 1);
});

test('blockDiagonal: Wo with the off-diagonal (hs x hs) blocks zeroed, a copy', () => {
  const C = 4,
    heads = 2;
  const Wo = Float64Array.from({ length: 16 }, (_, i) => i + 1);
  // prettier-ignore
  assert.deepEqual(Array.from(blockDiagonal(Wo, C, heads)), [
    1, 2, 0, 0,
    5, 6, 0, 0,
    0, 0, 11, 12,
    0, 0, 15, 16,
  ]);
  assert.equal(Wo[2], 3, 'the input is not modified');
  // one head: unchanged; C heads: the diagonal
  assert.deepEqual(Array.from(blockDiagonal(Wo, C, 1)), Array.from(Wo));
  // prettier-ignore
  assert.deepEqual(Array.from(blockDiagonal(Wo, C, 4)), [
    1, 0, 0, 0,
    0, 6, 0, 0,
    0, 0, 11, 0,
    0, 0, 0, 16,
  ]);
  // C = 6, 2 heads: blocks of 3
  const W6 = new Float64Array(36).fill(1);
  const bd = blockDiagonal(W6, 6, 2);
  for (let r = 0; r < 6; r++) {
    for (let c = 0; c < 6; c++) {
      assert.equal(bd[r * 6 + c], r < 3 === c < 3 ? 1 : 0, `[${r}, ${c}]`);
    }
  }
});

test('blockMaxima: max |d| per hs-wide column block of a (rows, C) array', () => {
  // rows = 2, C = 4, heads = 2
  assert.deepEqual(blockMaxima([1, -5, 2, 0, -3, 1, 0, 7], 4, 2), [5, 7]);
  assert.deepEqual(blockMaxima([1, -5, 2, 0, -3, 1, 0, 7], 4, 4), [3, 5, 2, 7]);
  assert.deepEqual(blockMaxima([0, 0, 0, 0], 4, 2), [0, 0]);
  assert.deepEqual(blockMaxima([-2, 1, 0, 0, 0, 0], 6, 3), [2, 0, 0]);
});
