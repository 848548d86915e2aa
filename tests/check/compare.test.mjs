// compare.js on its own: the precision a dtype names, the tolerance and its words, the error
// figures, and the rows. Every expected value is worked out by hand from the definitions in
// compare.js's comments (1e-10 × max|expected| for float64, 1e-5 float32, 1e-3 float16, half a
// printed digit for text), on arrays small enough to check on paper.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  aboveDiagonal,
  compareArrays,
  comparedRow,
  precisionOf,
  relativeResolution,
  toleranceFor,
  uncomparedRow,
  unravel,
} from '../../web/check/compare.js';

const f64 = (...x) => Float64Array.from(x);

test('precisionOf: a dtype with or without its byte order; anything else is float64', () => {
  const cases = [
    ['<f4', 'f4'],
    ['>f4', 'f4'],
    ['=f4', 'f4'],
    ['|f4', 'f4'],
    ['f4', 'f4'],
    ['<f2', 'f2'],
    ['<f8', 'f8'],
    ['text', 'text'],
    [undefined, 'f8'],
    ['<i4', 'f8'],
    ['<f16', 'f8'],
    ['<f44', 'f8'],
    ['x<f4', 'f8'],
    ['<f4x', 'f8'],
    ['<>f4', 'f8'],
    ['<f', 'f8'],
    ['<c8', 'f8'],
  ];
  for (const [dtype, kind] of cases) assert.equal(precisionOf(dtype), kind, String(dtype));
});

test('toleranceFor: the base tolerance and its sentence, for each precision', () => {
  const e = f64(-4, 2, 1);
  const t8 = toleranceFor(e, {});
  assert.deepEqual(t8, {
    abs: 4e-10,
    perEntry: null,
    text: 'float64: 1e-10 × max|expected| = 4e-10',
  });
  assert.deepEqual(toleranceFor(e, { dtype: '<f4' }), {
    abs: 4e-5,
    perEntry: null,
    text: 'float32: 1e-5 × max|expected| = 4e-5',
  });
  assert.deepEqual(toleranceFor(e, { dtype: '<f2' }).abs, 4e-3);
  const scalar = toleranceFor(f64(-3), { scalar: true });
  assert.equal(scalar.text, 'float64: 1e-10 × |expected| = 3e-10');
  assert.deepEqual(toleranceFor(f64(0), { scalar: true }), {
    abs: 1e-300,
    perEntry: null,
    text: 'float64: expected is 0: absolute floor 1e-300',
  });
  assert.equal(
    toleranceFor(f64(0, 0), {}).text,
    'float64: expected is all zeros: absolute floor 1e-300',
  );
  assert.equal(
    toleranceFor(e, { dtype: '<i8' }).text,
    '<i8 (as float64): 1e-10 × max|expected| = 4e-10',
  );
  assert.equal(toleranceFor(e, { dtype: '<f8' }).text, 'float64: 1e-10 × max|expected| = 4e-10');
  // the scale: the largest finite |entry| of those compared (not Infinity, not skipped ones)
  assert.equal(toleranceFor(f64(1, Infinity, -2), {}).abs, 2e-10);
  assert.equal(toleranceFor(f64(1, -Infinity), {}).abs, 1e-10);
  assert.equal(toleranceFor(f64(1, 8, -2), { skip: (i) => i === 1 }).abs, 2e-10);
  assert.equal(toleranceFor(f64(3, 3), {}).abs, 3e-10, 'ties: the same maximum');
});

test('toleranceFor: slack for printed inputs is added and said, only when there is a scale', () => {
  const e = f64(2, -1);
  const t = toleranceFor(e, { slack: 1e-6 });
  assert.ok(Math.abs(t.abs - (1e-10 + 1e-6) * 2) < 1e-22, `abs ${t.abs}`);
  assert.equal(
    t.text,
    'float64: 1e-10 × max|expected| = 2e-10 + 1e-6 × max|expected| for your printed inputs',
  );
  const said = toleranceFor(e, { slack: 1e-6, slackText: 'X printed to 6 digits' });
  assert.match(said.text, /for your X printed to 6 digits$/);
  assert.equal(toleranceFor(e, { slack: 0 }).text, 'float64: 1e-10 × max|expected| = 2e-10');
  const zeros = toleranceFor(f64(0, 0), { slack: 1e-6 });
  assert.deepEqual(
    [zeros.abs, zeros.text],
    [1e-300, 'float64: expected is all zeros: absolute floor 1e-300'],
  );
});

test('toleranceFor: printed text: half a digit per entry plus the base, float32 text too', () => {
  const e = f64(10, -5, 0);
  const resolution = f64(0.005, 0.05, 0.0005);
  const t = toleranceFor(e, { dtype: 'text', resolution });
  // base = 1e-10 × 10 = 1e-9; each entry: its resolution + 1e-9; abs: the worst + 1e-9
  assert.deepEqual([...t.perEntry], [0.005 + 1e-9, 0.05 + 1e-9, 0.0005 + 1e-9]);
  assert.equal(t.abs, 0.05 + 1e-9);
  assert.equal(
    t.text,
    "printed text: half a unit of each entry's last printed digit (up to 5e-2) + " +
      '1e-10 × max|expected| = 1e-9',
  );
  const t32 = toleranceFor(e, { dtype: 'text', resolution, printedDtype: 'float32' });
  assert.equal(t32.perEntry[0], 0.005 + 1e-4);
  assert.match(t32.text, /^printed float32 text: half a unit .* \+ 1e-5 × max\|expected\| = 1e-4$/);
  const t16 = toleranceFor(e, { dtype: 'text', resolution, printedDtype: 'float16' });
  assert.match(t16.text, /^printed float16 text: .* 1e-3 × max\|expected\| = 1e-2$/);
  assert.match(
    toleranceFor(e, { dtype: 'text', resolution, printedDtype: 'int64' }).text,
    /^printed text: /,
  );
  // an all-zero expected array: each entry its resolution, or the floor when that is 0
  const z = toleranceFor(f64(0, 0), { dtype: 'text', resolution: f64(0.5, 0) });
  assert.deepEqual([...z.perEntry], [0.5, 1e-300]);
  assert.equal(z.abs, 0.5 + 1e-300);
  // float32 data (not text) never gets per-entry tolerances, resolution or not
  assert.equal(toleranceFor(e, { dtype: '<f4', resolution }).perEntry, null);
  assert.equal(toleranceFor(e, { dtype: 'text' }).perEntry, null, 'text without resolution');
});

test('relativeResolution: the largest printed half-digit over max|data|, text only', () => {
  const a = { data: f64(2, -8, 4), dtype: 'text', resolution: f64(0.05, 0.5, 0.005) };
  assert.equal(relativeResolution(a), 0.5 / 8);
  assert.equal(relativeResolution({ ...a, dtype: '<f8' }), 0);
  assert.equal(relativeResolution({ ...a, resolution: undefined }), 0);
  assert.equal(relativeResolution(null), 0);
  assert.equal(relativeResolution(undefined), 0);
  assert.equal(relativeResolution({ ...a, data: f64(0, 0, 0) }), 0);
});

test('compareArrays: the figures worked out by hand, the first entry beyond tolerance', () => {
  const tol = { abs: 0.1, perEntry: null };
  const y = f64(1, 2.05, 4, -1);
  const e = f64(1, 2, 3.5, -2);
  // d = 0, 0.05, 0.5, 1: first beyond 0.1 is entry 2
  const c = compareArrays(y, e, tol);
  assert.equal(c.pass, false);
  assert.equal(c.firstIndex, 2);
  assert.equal(c.maxAbs, 1);
  assert.equal(c.maxRel, 0.5, 'max(0.05 / 2.05, 0.5 / 4, 1 / 2)');
  const dd = 0.05 ** 2 + 0.5 ** 2 + 1;
  const norms = Math.hypot(1, 2.05, 4, -1) + Math.hypot(1, 2, 3.5, -2);
  assert.ok(Math.abs(c.normRel - Math.sqrt(dd) / norms) < 1e-15);
  assert.equal(c.compared, 4);
  // an entry exactly at the tolerance agrees; a hair beyond does not
  assert.equal(compareArrays(f64(1.5), f64(1), { abs: 0.5 }).pass, true);
  assert.equal(compareArrays(f64(1.5000001), f64(1), { abs: 0.5 }).pass, false);
  // per-entry tolerances win over abs
  const per = { abs: 10, perEntry: f64(0.01, 10) };
  assert.equal(compareArrays(f64(1.1, 5), f64(1, 1), per).firstIndex, 0);
  // skipped entries: not compared, not counted, not in the figures
  const s = compareArrays(f64(9, 1), f64(0, 1), tol, (i) => i === 0);
  assert.deepEqual([s.pass, s.compared, s.maxAbs, s.normRel], [true, 1, 0, 0]);
  // both zero: no relative error from them; equal arrays: all figures 0
  assert.deepEqual(compareArrays(f64(0, 0), f64(0, 0), tol), {
    pass: true,
    maxAbs: 0,
    maxRel: 0,
    normRel: 0,
    firstIndex: -1,
    compared: 2,
  });
});

test('compareArrays: NaN and infinities: the same non-finite agrees, any other does not', () => {
  const tol = { abs: 1e-9 };
  const same = compareArrays(f64(NaN, Infinity, 1), f64(NaN, Infinity, 1), tol);
  assert.deepEqual([same.pass, same.maxAbs, same.normRel], [true, 0, 0]);
  // the norms leave out non-finite entries: yours (3, inf) and expected (4, inf) -> 1 / (3 + 4)
  const finite = compareArrays(f64(3, Infinity), f64(4, Infinity), { abs: 2 });
  assert.equal(finite.normRel, 1 / 7);
  assert.equal(finite.pass, true);
  const one = compareArrays(f64(Infinity, 5), f64(1, 5), tol);
  assert.deepEqual(one, {
    pass: false,
    maxAbs: Infinity,
    maxRel: Infinity,
    normRel: 1,
    firstIndex: 0,
    compared: 2,
  });
  assert.equal(compareArrays(f64(1, NaN), f64(1, 2), tol).firstIndex, 1);
  assert.equal(compareArrays(f64(-Infinity), f64(Infinity), tol).pass, false);
});

test('unravel and aboveDiagonal: C order, by hand', () => {
  assert.deepEqual(unravel(0, [2, 3, 4]), [0, 0, 0]);
  assert.deepEqual(unravel(23, [2, 3, 4]), [1, 2, 3]);
  assert.deepEqual(unravel(13, [2, 3, 4]), [1, 0, 1]);
  assert.deepEqual(unravel(5, [6]), [5]);
  assert.deepEqual(unravel(0, []), []);
  const above = aboveDiagonal(3);
  // (T, T) = (3, 3) blocks: entries 1, 2, 5 are above the diagonal in each
  const marks = Array.from({ length: 18 }, (_, i) => above(i));
  const block = [false, true, true, false, false, true, false, false, false];
  assert.deepEqual(marks, [...block, ...block]);
});

test('uncomparedRow and comparedRow: every field', () => {
  assert.deepEqual(
    uncomparedRow('Q', 'shape', { shape: [2, 3], expectedShape: [3, 2], note: 'n' }),
    {
      name: 'Q',
      status: 'shape',
      shape: [2, 3],
      expectedShape: [3, 2],
      maxAbs: null,
      maxRel: null,
      normRel: null,
      tolerance: { abs: null, text: 'not compared' },
      first: null,
      compared: 0,
      note: 'n',
      diagnosis: null,
      expected: null,
      yours: null,
    },
  );
  const missing = uncomparedRow('K', 'missing', { expectedShape: [1] });
  assert.deepEqual([missing.shape, missing.note], [null, null]);

  const shape = [2, 2];
  const a = { data: f64(1, 2, 3, 5), shape, dtype: '<f4' };
  const row = comparedRow('V', a, f64(1, 2, 3, 4), { note: 'a note' });
  assert.deepEqual(row, {
    name: 'V',
    status: 'differs',
    shape: [2, 2],
    expectedShape: [2, 2],
    maxAbs: 1,
    maxRel: 0.2,
    normRel: 1 / (Math.hypot(1, 2, 3, 5) + Math.hypot(1, 2, 3, 4)),
    tolerance: { abs: 4e-5, text: 'float32: 1e-5 × max|expected| = 4e-5' },
    first: { index: [1, 1], yours: 5, expected: 4 },
    compared: 4,
    note: 'a note',
    diagnosis: null,
    expected: f64(1, 2, 3, 4),
    yours: f64(1, 2, 3, 5),
  });
  assert.notEqual(row.shape, shape, 'a copy of the shape');
  assert.notEqual(row.yours, a.data, 'a copy of the data');
  const same = comparedRow('V', a, f64(1, 2, 3, 5), {});
  assert.deepEqual([same.status, same.first, same.note], ['match', null, null]);
  const sc = comparedRow('loss', { data: f64(-2), shape: [] }, f64(-2 + 1e-12), { scalar: true });
  assert.deepEqual(
    [sc.status, sc.tolerance.text],
    ['match', 'float64: 1e-10 × |expected| = 2e-10'],
  );
  const skipped = comparedRow('att', a, f64(1, 2, 3, 4), { skip: (i) => i === 3 });
  assert.deepEqual([skipped.status, skipped.compared], ['match', 3]);
  const slack = comparedRow('Y', a, f64(1, 2, 3, 4), { slack: 0.5 });
  assert.equal(slack.status, 'match', '|5 - 4| <= (1e-5 + 0.5) × 4');
  const text = { data: f64(1.5), shape: [1], dtype: 'text', resolution: f64(0.05) };
  assert.equal(comparedRow('X', text, f64(1.54), {}).status, 'match');
  assert.equal(comparedRow('X', text, f64(1.56), {}).status, 'differs');
  const t32 = { ...text, printedDtype: 'float32' };
  assert.match(comparedRow('X', t32, f64(1.54), {}).tolerance.text, /^printed float32 text/);
});
