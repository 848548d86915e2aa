// web/model/custom-arrays.js, the page's side of the notebook check (DOM-free): names, files,
// merging loaded arrays, heads from a split array, what "Use my arrays in the lessons" builds
// (custom arrays, lesson 5's and the playground's model, their forward pass) and refuses, the
// matrix views and differences the section draws, the first-difference text and the summary;
// which arrays of a dropped file load and the line of each member skipped (issue 18).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adaptLayout } from '../../web/check.js';
import {
  CUSTOM_LIMITS,
  customLimitsText,
  CUSTOM_SEED,
  MAX_FILE_BYTES,
  addArrays,
  checkArgs,
  checkSamples,
  customArrays,
  customForward,
  customModel,
  difference,
  distinctPair,
  fileError,
  fileKind,
  findArray,
  firstDifferenceText,
  inferHeads,
  lessonData,
  matrixView,
  missingForCheck,
  missingInputs,
  nameError,
  fileArrays,
  skippedText,
  addSkipped,
  npyName,
  quoteName,
  removeArray,
  statusSummary,
  rootCauses,
  rootCauseText,
  unravel,
  checkedText,
  diagnosisText,
  diffHeader,
  headBlockWidth,
  nonFiniteCounts,
  rowMaps,
  toleranceRule,
  toleranceRules,
} from '../../web/model/custom-arrays.js';
import { courseData } from '../../web/model/course.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { loadMHA, bitEqual, referenceDir } from '../helpers.mjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadNpz } from '../../web/check.js';

const mha = await loadMHA();

const arr = (name, shape, fill = 0.5, source = 'test.npz') => ({
  name,
  shape,
  dtype: '<f8',
  source,
  data: new Float64Array(shape.reduce((a, b) => a * b, 1)).fill(fill),
});

/** The course's inputs as loaded arrays (X (2, 6, 64), Wq…Wo (64, 64), dY). */
function courseList({ dY = true } = {}) {
  const d = courseData(mha);
  const list = [{ name: 'X', shape: [2, 6, 64], dtype: '<f8', source: 'c.npz', data: d.X }];
  for (const [k, w] of Object.entries(d.W)) {
    list.push({ name: k, shape: [64, 64], dtype: '<f8', source: 'c.npz', data: w });
  }
  if (dY) list.push({ name: 'dY', shape: [2, 6, 64], dtype: '<f8', source: 'c.npz', data: d.dY });
  return addArrays([], list).list;
}

test('names: Python names pass, markup and empty names get a message quoting them as text', () => {
  for (const ok of ['X', 'dWq', 'att', '_x1', 'a'.repeat(200)]) assert.equal(nameError(ok), null);
  assert.match(nameError(''), /Give the array a name/);
  assert.match(nameError('   '), /Give the array a name/);
  const bad = nameError('<img src=x onerror=alert(1)>');
  assert.match(bad, /^“<img src=x onerror=alert\(1\)>” is not a Python name/);
  assert.match(nameError('1x'), /not a Python name/);
  assert.match(nameError('a'.repeat(201)), /not a Python name/);
  assert.equal(quoteName('x'.repeat(50)), `“${'x'.repeat(40)}…”`);
});

test('files: .npz / .npy by name, a .npy named by its stem, a size ceiling before reading', () => {
  assert.equal(npyName('dWq.npy'), 'dWq');
  assert.equal(npyName('att.NPY'), 'att');
  assert.equal(fileKind('mha_check.npz'), 'npz');
  assert.equal(fileKind('X.NPY'), 'npy');
  assert.equal(fileKind('notes.txt'), null);
  assert.equal(fileError({ name: 'a.npz', size: 1000 }), null);
  assert.equal(fileError({ name: 'a.npy', size: MAX_FILE_BYTES.npy }), null);
  assert.match(fileError({ name: 'a.txt', size: 10 }), /neither a \.npz nor a \.npy/);
  assert.match(fileError({ name: 'a.npy', size: MAX_FILE_BYTES.npy + 1 }), /up to 256 MiB/);
  assert.match(fileError({ name: 'a.npz', size: 600 * 2 ** 20 }), /is 600 MiB: .* up to 512 MiB/);
});

test('fileArrays: npz members by name, a .npy by its stem; nothing usable loads nothing', () => {
  const a = { data: new Float64Array(4), shape: [2, 2], dtype: '<f8' };
  const npz = fileArrays('m.npz', 'npz', { arrays: { X: a, Wq: a }, skipped: [] });
  assert.deepEqual(
    npz.arrays.map((e) => [e.name, e.source, e.shape]),
    [
      ['X', 'm.npz', [2, 2]],
      ['Wq', 'm.npz', [2, 2]],
    ],
  );
  assert.deepEqual(npz.skipped, []);
  assert.equal(fileArrays('att.npy', 'npy', a).arrays[0].name, 'att');
  assert.equal(fileArrays('q_proj.weight.npy', 'npy', a).arrays[0].name, 'q_proj.weight');
  assert.throws(() => fileArrays('<i>.npy', 'npy', a), /“<i>” is not a Python name/);
  // every member's name unusable: the file loads nothing, and says why for each
  assert.throws(() => fileArrays('m.npz', 'npz', { arrays: { '<b>x</b>': a }, skipped: [] }), {
    message:
      'no array in it can be loaded: “<b>x</b>” (m.npz): skipped — its name is not one the ' +
      "check reads (ASCII letters, digits and _, no digit first; parts joined by '.' or '/' as " +
      "in q_proj.weight); save it under the name the check reads, e.g. np.savez('mha_check.npz', " +
      'att=att).',
  });
});

const formatsFile = (name) => readFileSync(join(referenceDir(), 'notebook-formats', `${name}.npz`));

test('fileArrays + loadNpz: a notebook saved with its cache dict loads X and the weights', () => {
  // np.savez('mha_check.npz', X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, cache=cache): NumPy's own file
  const { arrays, skipped } = fileArrays(
    'mha_check.npz',
    'npz',
    loadNpz(formatsFile('npz-partial-cache')),
  );
  assert.deepEqual(
    arrays.map((e) => [e.name, e.shape, e.dtype, e.source]),
    [
      ['X', [2, 6, 8], '<f8', 'mha_check.npz'],
      ...['Wq', 'Wk', 'Wv', 'Wo'].map((w) => [w, [8, 8], '<f8', 'mha_check.npz']),
    ],
  );
  assert.deepEqual(skipped.map(skippedText), [
    'cache (mha_check.npz): skipped — an object array (a pickled Python object, never ' +
      "unpickled here); save a dict as its arrays: np.savez('mha_check.npz', **cache).",
  ]);
  // the X, weights and the complex, str, bytes, structured and object members of another file
  const mixed = fileArrays('m.npz', 'npz', loadNpz(formatsFile('npz-partial-mixed')));
  assert.deepEqual(
    mixed.arrays.map((e) => e.name),
    ['X', 'Wq', 'mask'],
  );
  assert.deepEqual(
    mixed.skipped.map((s) => skippedText(s).split(':')[0]),
    ['grads (m.npz)', 'z (m.npz)', 'labels (m.npz)', 'names (m.npz)', 'rec (m.npz)'],
  );
});

test('fileArrays: members whose names the check cannot read are skipped, quoted as text', () => {
  // NumPy's npz-names.npz: markup, non-ASCII letters, a module path (dir/X, as a dict of
  // parameters saves 'attn/c_attn/w' or 'q_proj.weight': read), __proto__ (a Python name)
  const { arrays, skipped } = fileArrays('names.npz', 'npz', loadNpz(formatsFile('npz-names')));
  assert.deepEqual(arrays.map((e) => e.name).sort(), ['__proto__', 'dir/X']);
  assert.deepEqual(
    skipped.map((s) => skippedText(s).split(': skipped')[0]),
    ['“<img src=x onerror=alert(1)>” (names.npz)', '“Wq_ünïcödé” (names.npz)'],
  );
  assert.ok(skipped.every((s) => s.reason.startsWith('its name is not one the check reads')));
  // control characters are escaped, a long name cut: one line of text
  const line = skippedText({
    name: `a\nb${'c'.repeat(60)}`,
    source: 'f.npz',
    reason: 'r',
    fix: 'f',
  });
  assert.equal(line, `“a\\nb${'c'.repeat(36)}…” (f.npz): skipped — r; f.`);
});

test('addSkipped: a file dropped again replaces its lines; other files keep theirs', () => {
  const line = (name, source) => ({ name, source, reason: 'r', fix: 'f' });
  const first = addSkipped([], ['a.npz', 'b.npz'], [line('cache', 'a.npz'), line('z', 'b.npz')]);
  assert.deepEqual(
    first.map((s) => s.name),
    ['cache', 'z'],
  );
  // a.npz saved again with **cache: no line left for it; b.npz's stays
  assert.deepEqual(addSkipped(first, ['a.npz'], []), [line('z', 'b.npz')]);
  assert.deepEqual(addSkipped(first, ['c.npz'], [line('s', 'c.npz')]).length, 3);
  assert.equal(first.length, 2, 'the old list is unchanged');
});

test('addArrays replaces a name (any case) in its place; removeArray; findArray; checkArgs', () => {
  const first = addArrays([], [arr('X', [6, 4]), arr('att', [1, 2, 6, 6])]);
  assert.deepEqual(first.replaced, []);
  const { list, replaced } = addArrays(first.list, [
    arr('ATT', [1, 2, 6, 6], 1),
    arr('Wq', [4, 4]),
  ]);
  assert.deepEqual(replaced, ['ATT']);
  assert.deepEqual(
    list.map((e) => e.name),
    ['X', 'ATT', 'Wq'],
  );
  assert.equal(first.list.length, 2, 'the old list is unchanged');
  assert.equal(findArray(list, 'att').data[0], 1);
  assert.equal(findArray(list, 'nope'), null);
  // the names the check reads as course names (aliases, underscores) count for the inputs too
  assert.equal(findArray([{ ...arr('W_q', [2, 2]), key: 'w_q' }], 'Wq').name, 'W_q');
  const fewer = removeArray(list, 'att');
  assert.deepEqual(
    fewer.map((e) => e.name),
    ['X', 'Wq'],
  );
  const text = { resolution: new Float64Array(2), printedDtype: 'float32' };
  const pasted = addArrays(fewer, [{ ...arr('K', [2]), ...text }]).list;
  const args = checkArgs(pasted);
  assert.deepEqual(Object.keys(args), ['X', 'Wq', 'K']);
  assert.ok(args.K.resolution && !('resolution' in args.X));
  assert.equal(args.K.printedDtype, 'float32');
  assert.ok(!('printedDtype' in args.X));
});

test('inferHeads: the second axis of the first 4-D array; missingInputs: X and the weights', () => {
  assert.equal(inferHeads([arr('X', [2, 6, 64])]), null);
  assert.deepEqual(inferHeads(addArrays([], [arr('X', [2, 6, 64]), arr('Q', [2, 8, 6, 8])]).list), {
    heads: 8,
    from: 'Q',
  });
  // a split array that does not fit X (left from another notebook) gives no heads
  const other = addArrays([], [arr('Q', [2, 3, 5, 4]), arr('X', [2, 6, 64])]).list;
  assert.equal(inferHeads(other), null);
  assert.deepEqual(inferHeads([...other, arr('att', [2, 4, 6, 6])]), { heads: 4, from: 'att' });
  assert.equal(inferHeads([arr('X', [6, 64]), arr('att', [1, 3, 6, 6])]), null); // 3 ∤ 64
  assert.deepEqual(inferHeads([arr('X', [6, 64]), arr('K', [1, 2, 6, 32])]), {
    heads: 2,
    from: 'K',
  });
  assert.deepEqual(inferHeads([arr('Q', [2, 3, 5, 4])]), { heads: 3, from: 'Q' }); // no X yet
  assert.deepEqual(missingInputs(mha, []), ['X', 'Wq', 'Wk', 'Wv', 'Wo']);
  assert.deepEqual(missingInputs(mha, courseList()), []);
  assert.deepEqual(missingInputs(mha, removeArray(courseList(), 'wk')), ['Wk']);
});

test('missingForCheck: the weights a per-head file gives are not asked for; Wo still is', () => {
  // X (1, 4, 6), 2 heads of 3: Wq, Wk, Wv as one (6, 3) array per head, no Wo
  const heads = ['Q', 'K', 'V'].flatMap((w) => [0, 1].map((h) => arr(`W${w}_${h}_h`, [6, 3])));
  const list = addArrays([], [arr('X', [1, 4, 6]), ...heads]).list;
  assert.deepEqual(missingInputs(mha, list), ['Wq', 'Wk', 'Wv', 'Wo']);
  assert.deepEqual(missingForCheck(mha, list, adaptLayout), ['Wo']);
  assert.deepEqual(missingForCheck(mha, [], adaptLayout), ['X', 'Wq', 'Wk', 'Wv', 'Wo']);
  assert.deepEqual(missingForCheck(mha, courseList(), adaptLayout), []);
});

test("customArrays of the course's inputs: lessons 3 and 4 give the course's figures", () => {
  const { custom, errors } = customArrays(mha, courseList(), 4);
  assert.equal(errors, undefined);
  assert.deepEqual([custom.B, custom.T, custom.C, custom.heads], [2, 6, 64, 4]);
  assert.deepEqual(custom.given, { dY: true, target: false });
  const course = courseData(mha);
  const r3 = lesson3(mha, { data: lessonData(custom) });
  const c3 = lesson3(mha, { data: course });
  assert.ok(bitEqual(r3.att, c3.att) && bitEqual(r3.fullDeltaY, c3.fullDeltaY));
  const r4 = lesson4(mha, { data: lessonData(custom) });
  const c4 = lesson4(mha, { data: course });
  for (const n of r4.order) assert.ok(bitEqual(r4.grads[n].data, c4.grads[n].data), n);
  // the arrays are copies: the loaded ones can go without changing the lessons' data
  assert.notEqual(custom.X, courseList()[0].data);
});

test('customArrays: another heads count reaches lessons 3 and 4', () => {
  const { custom } = customArrays(mha, courseList(), 8);
  const r3 = lesson3(mha, { data: lessonData(custom) });
  assert.equal(r3.heads, 8);
  assert.deepEqual(r3.shapes.att, [2, 8, 6, 6]);
  assert.equal(lesson4(mha, { data: lessonData(custom) }).heads, 8);
});

test(`customArrays: dY and target drawn from default_rng(${CUSTOM_SEED}) when missing`, () => {
  const { custom } = customArrays(mha, courseList({ dY: false }), 4);
  const rng = mha.rng(CUSTOM_SEED, 'default_rng');
  const dY = rng.standardNormal(2 * 6 * 64);
  const target = rng.standardNormal(6 * 64);
  rng.free();
  assert.deepEqual(custom.given, { dY: false, target: false });
  assert.ok(bitEqual(custom.dY, dY) && bitEqual(custom.target, target));
  // a target of X's size: batch item 0 of it
  const t = arr('target', [2, 6, 64], 0.25);
  const withTarget = customArrays(mha, addArrays(courseList(), [t]).list, 4).custom;
  assert.equal(withTarget.given.target, true);
  assert.equal(withTarget.target.length, 6 * 64);
  assert.equal(withTarget.target[0], 0.25);
});

test("customArrays refuses what the lessons can't draw, each with its message", () => {
  const list = courseList();
  const errs = (l, h = 4) => customArrays(mha, l, h).errors ?? [];
  assert.match(errs(removeArray(list, 'x'))[0], /X is not loaded/);
  assert.match(errs(removeArray(list, 'wo')).join(' '), /Wo is not loaded/);
  assert.match(errs(list, 5).join(' '), /heads = 5 does not divide C = 64/);
  assert.match(errs(list, 32).join(' '), /heads = 32: the lessons draw every head, at most 16/);
  const big = addArrays(list, [arr('X', [1, CUSTOM_LIMITS.T + 1, 64])]).list;
  assert.match(errs(big).join(' '), /T = 65: the lessons take your arrays with 1 to 64 tokens\./);
  const wide = addArrays(
    [],
    [arr('X', [1, 2, 256]), ...['Wq', 'Wk', 'Wv', 'Wo'].map((n) => arr(n, [256, 256]))],
  ).list;
  assert.match(
    errs(wide).join(' '),
    /C = 256: the lessons take your arrays with C from 1 to 128\./,
  );
  assert.doesNotMatch(errs(wide).join(' '), /playground/); // its own limits are 128 and 1024
  assert.equal(customLimitsText(), 'T ≤ 64, C ≤ 128, at most 4 batch items and 16 heads');
  const batch = addArrays(list, [arr('X', [5, 6, 64])]).list;
  assert.match(errs(batch).join(' '), /B = 5: the lessons draw every batch item, at most 4/);
  const flat = addArrays(list, [arr('X', [768])]).list;
  assert.match(errs(flat)[0], /X has shape \(768,\): it must be \(B, T, C\) or \(T, C\)/);
  const wrongW = addArrays(list, [arr('Wk', [64, 32])]).list;
  assert.match(errs(wrongW).join(' '), /Wk has shape \(64, 32\), expected \(64, 64\)/);
  const nan = arr('X', [2, 6, 64]);
  nan.data[7] = NaN;
  assert.match(
    errs(addArrays(list, [nan]).list).join(' '),
    /X\[0, 0, 7\] is NaN: the lessons need finite/,
  );
  const inf = arr('dY', [2, 6, 64]);
  inf.data[64] = -Infinity;
  assert.match(errs(addArrays(list, [inf]).list).join(' '), /dY\[0, 1, 0\] is −∞/);
});

test('customArrays: X of shape (T, C) is B = 1', () => {
  const d = courseData(mha, { B: 1 });
  const list = courseList().map((e) => (e.key === 'x' ? { ...e, shape: [6, 64], data: d.X } : e));
  const { custom } = customArrays(mha, removeArray(list, 'dy'), 4);
  assert.deepEqual([custom.B, custom.T, custom.C], [1, 6, 64]);
});

test("customModel / customForward: batch item 0, positions as tokens, the layer's forward", () => {
  const { custom } = customArrays(mha, courseList(), 4);
  const m = customModel(custom, { causal: true });
  assert.deepEqual(m.tokens, ['t0', 't1', 't2', 't3', 't4', 't5']);
  assert.deepEqual(m.ids, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual([m.T, m.C, m.heads, m.hs, m.causal], [6, 64, 4, 16, true]);
  assert.ok(bitEqual(m.X, custom.X.subarray(0, 6 * 64)));
  const f = customForward(mha, custom, { causal: true });
  const layer = mha.createLayer({ C: 64, heads: 4 });
  for (const k of Object.keys(custom.W)) layer.weights[k].set(custom.W[k]);
  const own = layer.forward(m.X, { B: 1, T: 6, causal: true });
  layer.free();
  assert.ok(bitEqual(f.att, own.attention) && bitEqual(f.Y, own.Y));
});

test("checkSamples: every entry at the course's sizes, a sample when a full check is long", () => {
  assert.equal(checkSamples(mha, { B: 2, T: 6, C: 64, heads: 4 }), 0);
  assert.equal(checkSamples(mha, { B: 1, T: 8, C: 64, heads: 4 }), 0);
  assert.equal(checkSamples(mha, { B: 1, T: 64, C: 128, heads: 8 }), 32);
  assert.equal(checkSamples(mha, { B: 4, T: 64, C: 128, heads: 16 }, 16), 16);
});

test('matrixView: the (rows, cols) shown for each number of axes', () => {
  const data = Float64Array.from({ length: 2 * 3 * 4 * 5 }, (_, i) => i);
  const v4 = matrixView(data, [2, 3, 4, 5], 1, 2);
  assert.deepEqual([v4.rows, v4.cols, v4.where, v4.data[0]], [4, 5, '[1, 2]', (1 * 3 + 2) * 20]);
  const v3 = matrixView(data.subarray(0, 24), [2, 3, 4], 1);
  assert.deepEqual([v3.rows, v3.cols, v3.where, v3.data[0]], [3, 4, '[1]', 12]);
  assert.deepEqual(matrixView(data.subarray(0, 6), [2, 3]).where, '');
  const v1 = matrixView(data.subarray(0, 5), [5]);
  assert.deepEqual([v1.rows, v1.cols], [1, 5]);
  const v0 = matrixView(Float64Array.of(3), []);
  assert.deepEqual([v0.rows, v0.cols], [1, 1]);
  // out-of-range picks show the last batch item / head
  assert.equal(matrixView(data, [2, 3, 4, 5], 9, 9).where, '[1, 2]');
});

test('difference: yours − expected, equal infinities (masked scores) give 0', () => {
  const row = {
    yours: Float64Array.of(1, -Infinity, 2, NaN),
    expected: Float64Array.of(0.5, -Infinity, 5, 1),
  };
  const d = difference(row);
  assert.deepEqual(Array.from(d.data), [0.5, 0, -3, NaN]);
  assert.equal(d.maxAbs, 3);
});

test('the first difference: enough digits to tell the numbers apart; a scalar has no index', () => {
  assert.deepEqual(distinctPair(0.1234, 0.2345), ['0.1234', '0.2345']);
  assert.deepEqual(distinctPair(0.123456781, 0.123456789), ['0.12345678', '0.12345679']);
  assert.deepEqual(unravel(7, [2, 2, 3]), [1, 0, 1]);
  const row = { name: 'att', first: { index: [0, 1, 2, 3], yours: 0.1234, expected: 0.2345 } };
  assert.equal(firstDifferenceText(row), 'att[0, 1, 2, 3]: yours 0.1234, expected 0.2345');
  const loss = { name: 'loss', first: { index: [], yours: -2.5, expected: 17 } };
  assert.equal(firstDifferenceText(loss), 'loss: yours −2.5, expected 17');
  assert.equal(firstDifferenceText({ name: 'Q', first: null }), '');
});

test('statusSummary counts the statuses', () => {
  const rows = ['match', 'match', 'differs', 'shape', 'missing', 'missing'].map((status) => ({
    status,
  }));
  const s = statusSummary(rows);
  assert.deepEqual(s.counts, { match: 2, differs: 1, shape: 1, missing: 2, checked: 3 });
  assert.equal(s.text, '2 match, 1 differs, 1 with the wrong shape, 2 not given (of 6).');
  assert.equal(statusSummary([{ status: 'match' }]).text, '1 match (of 1).');
});

test('rootCauses, rootCauseText: rows with a mistake of their own; how many follow', () => {
  const row = (name, status, id = null) => ({ name, status, diagnosis: id && { id } });
  const rows = [
    row('Q', 'match'),
    row('att', 'differs', 'softmax-wrong-axis'),
    row('Y', 'differs', 'follows-from'),
    row('dV', 'shape'),
    row('dK', 'differs', 'dk-transposed'),
    row('dX', 'differs', 'follows-from'),
    row('dWq', 'missing'),
  ];
  assert.deepEqual(
    rootCauses(rows).map((r) => r.name),
    ['att', 'dV', 'dK'],
  );
  assert.equal(
    rootCauseText(rows),
    'Where to look first: att (its cause is named in its row), dV (wrong shape), dK (its cause ' +
      'is named in its row). 2 other differences follow from them.',
  );
  assert.equal(
    rootCauseText(rows.slice(0, 3)),
    'Where to look first: att (its cause is named in its row). 1 other difference follows from it.',
  );
  // no id in the sentence: a factor, no known mistake, a measurement, in words
  const words = rootCauseText([
    row('scores', 'differs', 'step-differs'),
    {
      name: 'dQ',
      status: 'differs',
      diagnosis: { id: 'scale-factor', message: 'm', factor: 0.25 },
    },
    row('att', 'differs', 'attention-invariant'),
    { name: 'Y', status: 'differs', diagnosis: null },
  ]);
  assert.equal(
    words,
    'Where to look first: scores (no known mistake reproduces it), dQ (yours = 0.25 × expected), ' +
      'att (what was measured is in its row), Y (no known mistake reproduces it).',
  );
  assert.doesNotMatch(words, /step-differs|scale-factor|attention-invariant/);
  assert.equal(rootCauseText([row('Q', 'match'), row('K', 'missing')]), null);
});

test('diagnosisText: an id quoted in a message becomes words', () => {
  const d = {
    id: 'follows-from',
    message:
      'follows from Q: K, recomputed from your own X, Wk (with the same weights-transposed as ' +
      'your Q), matches your array.',
  };
  assert.equal(
    diagnosisText(d),
    'follows from Q: K, recomputed from your own X, Wk (with the same mistake as your Q), ' +
      'matches your array.',
  );
  assert.equal(
    diagnosisText({ id: 'x', message: 'You computed att; fine.' }),
    'You computed att; fine.',
  );
  assert.equal(diagnosisText(null), '');
});

test('checkedText counts the arrays compared: not missing, not wrong shape, not the inputs', () => {
  const rows = ['match', 'match', 'differs', 'shape', 'missing'].map((status) => ({ status }));
  assert.equal(
    checkedText(rows, 9),
    'Checked 3 arrays of the 9 loaded: the results with a course name and an accepted shape ' +
      '(X, the weights, dY and target are inputs).',
  );
  assert.match(checkedText([{ status: 'differs' }], 6), /^Checked 1 array of the 6 loaded/);
  assert.match(checkedText([{ status: 'missing' }], 5), /^Checked 0 arrays of the 5 loaded/);
});

test('toleranceRules: each rule once, without its numbers; which rule each row follows', () => {
  assert.equal(
    toleranceRule('float64: 1e-10 × max|expected| = 2.3e-11'),
    'float64: 1e-10 × max|expected|',
  );
  assert.equal(
    toleranceRule(
      "printed text: half a unit of each entry's last printed digit (up to 5e-5) + 1e-10 × " +
        'max|expected| = 1e-11',
    ),
    "printed text: half a unit of each entry's last printed digit + 1e-10 × max|expected|",
  );
  assert.equal(
    toleranceRule(
      'float64: 1e-10 × max|expected| = 2e-11 + 1e-7 × max|expected| for your printed inputs',
    ),
    'float64: 1e-10 × max|expected| + 1e-7 × max|expected| for your printed inputs',
  );
  // a scalar (the loss): its |expected| is its max|expected|, one rule
  assert.equal(
    toleranceRule('float64: 1e-10 × |expected| = 3e-10'),
    'float64: 1e-10 × max|expected|',
  );
  const tol = (text, abs = 1e-11) => ({ abs, text });
  const rows = [
    { name: 'Q', compared: 30, tolerance: tol('float64: 1e-10 × max|expected| = 2.3e-11') },
    { name: 'K', compared: 30, tolerance: tol('float64: 1e-10 × max|expected| = 4.1e-11') },
    { name: 'V', compared: 0, tolerance: { abs: null, text: 'not compared' } },
    { name: 'att', compared: 9, tolerance: tol('float32: 1e-5 × max|expected| = 1e-5') },
  ];
  const r = toleranceRules(rows);
  assert.deepEqual(r.rules, ['float64: 1e-10 × max|expected|', 'float32: 1e-5 × max|expected|']);
  assert.deepEqual(
    [...r.ruleOf],
    [
      ['Q', 0],
      ['K', 0],
      ['att', 1],
    ],
  );
});

test('headBlockWidth: (B, T, C) forms of results whose columns are head blocks', () => {
  const sizes = { C: 64, heads: 4, hs: 16 };
  assert.equal(headBlockWidth({ name: 'concat', expectedShape: [2, 6, 64] }, sizes), 16);
  assert.equal(headBlockWidth({ name: 'Q', expectedShape: [2, 6, 64] }, sizes), 16);
  assert.equal(headBlockWidth({ name: 'dQ', expectedShape: [6, 64] }, sizes), 16, 'B = 1 dropped');
  assert.equal(headBlockWidth({ name: 'Q', expectedShape: [2, 4, 6, 16] }, sizes), 0, 'split');
  assert.equal(headBlockWidth({ name: 'Y', expectedShape: [2, 6, 64] }, sizes), 0, 'Y mixes heads');
  assert.equal(headBlockWidth({ name: 'dWq', expectedShape: [64, 64] }, sizes), 0);
  assert.equal(
    headBlockWidth({ name: 'concat', expectedShape: [2, 6, 64] }, { C: 64, heads: 1, hs: 64 }),
    0,
  );
});

test('nonFiniteCounts and diffHeader: the header agrees with the table (∞ max abs error)', () => {
  const row = {
    name: 'att',
    yours: Float64Array.of(NaN, NaN, NaN, Infinity, 0.5, 0.27, NaN),
    expected: Float64Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.25, NaN),
  };
  assert.deepEqual(nonFiniteCounts(row), {
    yours: { nan: 3, inf: 1 },
    expected: { nan: 0, inf: 0 },
  });
  const d = difference(row);
  assert.equal(
    diffHeader(row, d.maxAbs),
    'yours has 3 NaN and 1 infinite entries; max |yours − expected| over the finite ones = 0.02; ' +
      'colours symmetric, −0.02 to +0.02',
  );
  const plain = { name: 'Q', yours: Float64Array.of(1, 2), expected: Float64Array.of(1, 2.5) };
  assert.equal(
    diffHeader(plain, difference(plain).maxAbs),
    'max |yours − expected| = 0.5; colours symmetric, −0.5 to +0.5',
  );
  // masked scores (expected −∞) are not compared: not counted
  const scores = {
    name: 'scores',
    yours: Float64Array.of(1, -1e9, Infinity),
    expected: Float64Array.of(1, -Infinity, 2),
  };
  assert.deepEqual(nonFiniteCounts(scores).yours, { nan: 0, inf: 1 });
  assert.match(
    diffHeader(scores, 0),
    /^yours has 1 infinite entry; max .* over the finite ones = 0;/,
  );
});

test('rowMaps: shared scale, masked scores blank, yours / expected with a factor', () => {
  const row = {
    name: 'scores',
    yours: Float64Array.of(0.25, -1e9, 0.5, 3),
    expected: Float64Array.of(1, -Infinity, 2, 0),
    diagnosis: { id: 'x', message: 'm' },
  };
  const m = rowMaps(row);
  assert.deepEqual(Array.from(m.blank), [0, 1, 0, 0]);
  assert.equal(m.scale, 1e9, 'the largest finite |entry| of yours and expected');
  assert.equal(m.ratio, undefined, 'no factor: no ratio map');
  const f = rowMaps({ ...row, diagnosis: { id: 'x', message: 'm', factor: 0.25 } });
  assert.equal(f.ratio.factor, 0.25);
  assert.deepEqual(Array.from(f.ratio.blank), [0, 1, 0, 1], 'masked, and expected 0');
  assert.deepEqual(Array.from(f.ratio.data).slice(0, 3), [0.25, NaN, 0.25]);
  assert.ok(Number.isNaN(f.ratio.data[3]));
  assert.equal(rowMaps({ ...row, diagnosis: { factor: NaN } }).ratio, undefined);
});
