// Lessons 1 and 2 from a student's notebook (issue 19): course-style notebooks written by NumPy
// with other seeds and weight scales (tests/reference/notebook_lessons12.py: seed 7 with weights
// × 0.02, seed 3 with weights / sqrt(C) saved under aliases such as W_q1, head1_Wv, q2) load as the
// page loads a dropped .npz (loadNpz, fileArrays, addArrays), and "Use my arrays in the lessons"
// (customArrays) must give lessons 1 and 2 the figures the notebook printed: max gap, the rows
// whose argmax differs, each row's argmax (the rings), lesson 2's shapes and proofs, and the
// comparison of one head of hs = C with four heads of hs = C / 4 (also at the course's sentence,
// against tests/reference/page_reference.py). Then what it refuses, each with its message.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  addArrays,
  customArrays,
  fileArrays,
  findArray,
  lesson1Part,
  lesson2Part,
  removeArray,
} from '../../web/model/custom-arrays.js';
import { lesson1, lesson1FromArrays } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { LESSON1_NAMES, arrayKey, lessonName } from '../../web/check/names.js';
import { tokenize } from '../../web/model/tokens.js';
import { loadNpz } from '../../web/check.js';
import { loadMHA, loadPageFixture, maxRelErr, referenceDir, f64 } from '../helpers.mjs';

const mha = await loadMHA();
const dir = join(referenceDir(), 'notebook-lessons12');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));

/** The arrays of a notebook's .npz as the page holds them after the drop. */
function loaded(name) {
  const file = `${name}.npz`;
  const { arrays } = fileArrays(file, 'npz', loadNpz(readFileSync(join(dir, file))));
  return addArrays([], arrays).list;
}

/** "max gap 0.01, argmax differs in 7 of 8 rows" from the page's figures, as NumPy prints it. */
const printed = (r) =>
  `max gap ${r.maxGap.toFixed(2)}, argmax differs in ${r.argmaxDiffRows.length} of ${r.T} rows`;

for (const [name, e] of Object.entries(expected)) {
  test(`${name} (seed ${e.seed}, weights ${e.scale === 'sqrt' ? '/ sqrt(C)' : '× 0.02'}): lesson 1 prints what the notebook printed`, () => {
    const { custom, errors } = customArrays(mha, loaded(name), 4);
    assert.equal(errors, undefined);
    assert.equal(custom.main, false, 'no Wk, Wv, Wo: lessons 3-5 keep the course’s');
    assert.match(custom.why.main, /they need X and Wq, Wk, Wv, Wo; not loaded: Wk, Wv, Wo\./);
    const p = custom.lesson1;
    assert.deepEqual([p.T, p.C, p.hs], [e.T, e.C, e.hs]);
    const r = lesson1FromArrays(mha, p);
    assert.equal(printed(r), e.printed[0]);
    assert.ok(Math.abs(r.maxGap - e.lesson1.maxGap) <= 1e-14, `max gap ${r.maxGap}`);
    assert.ok(maxRelErr(r.A1, e.lesson1.A1) < 1e-12 && maxRelErr(r.A2, e.lesson1.A2) < 1e-12);
    assert.deepEqual(r.argmaxDiffRows, e.lesson1.argmaxDiffRows);
    // the rings of the two maps: NumPy's argmax of each row
    assert.deepEqual(r.argmax1, e.lesson1.argmax1);
    assert.deepEqual(r.argmax2, e.lesson1.argmax2);
    assert.deepEqual(
      r.tokens,
      Array.from({ length: e.T }, (_, t) => `t${t}`),
    );
    // one head of hs = C against four of hs = C / 4 (weights from default_rng(42))
    const c = r.compare;
    const x = e.lesson1.compare;
    assert.deepEqual([c.heads, c.hs], [4, e.C / 4]);
    assert.ok(maxRelErr(c.single, x.single) < 1e-12 && maxRelErr(c.four, x.four) < 1e-12);
    assert.deepEqual(c.singleArgmax, x.singleArgmax);
    assert.deepEqual(c.fourArgmax, x.fourArgmax);
    assert.deepEqual(c.distinct, x.distinct);
    assert.deepEqual(c.disagreeRows, x.disagreeRows);
    assert.deepEqual(c.offSingle, x.offSingle);
  });

  test(`${name}: lesson 2 from the notebook's x and Wq`, () => {
    const { custom } = customArrays(mha, loaded(name), 4);
    const r = lesson2(mha, { arrays: custom.lesson2 });
    const x = e.lesson2;
    assert.deepEqual([r.B, r.T, r.C, r.heads, r.hs], [x.B, x.T, x.C, x.heads, x.hs]);
    assert.deepEqual(r.shapes, x.shapes);
    assert.equal(r.roundTrip, x.roundTrip);
    assert.equal(r.roundTrip, 0);
    assert.ok(r.headMaxDiff <= 1e-14 && x.headMaxDiff <= 1e-14, `${r.headMaxDiff}`);
    assert.equal(r.perHead.length, x.heads);
    assert.ok(maxRelErr(r.head1Projection, x.head1Projection) < 1e-12);
    const four = r.head1Projection.map((v) => v.toFixed(4)).join(' ');
    const numpy = e.printed[3].replace(/^.*\[\s*|\s*\]$/g, '').split(/\s+/);
    assert.deepEqual(
      four.split(' ').map(Number),
      numpy.map(Number),
      `heads[0, 1, 0, :4]: ${e.printed[3]}`,
    );
  });
}

test("the course's sentence: one head of hs = 64 against four of hs = 16, as NumPy has it", () => {
  const page = loadPageFixture();
  const r = lesson1(mha, { tokens: tokenize(page.tokenize[0].text) });
  const x = page.lesson1.compare;
  const c = r.compare;
  assert.ok(maxRelErr(c.single, f64(x.single)) < 1e-12, 'single head');
  assert.ok(maxRelErr(c.four, f64(x.four)) < 1e-12, 'four heads');
  assert.deepEqual(c.singleArgmax, x.singleArgmax);
  assert.deepEqual(c.fourArgmax, x.fourArgmax);
  assert.deepEqual(c.disagreeRows, x.disagreeRows);
  assert.deepEqual(c.distinct, x.distinct);
  // the rings of the course's maps are NumPy's argmax
  assert.deepEqual(r.argmax1, page.lesson1.argmax1);
  assert.deepEqual(r.argmax2, page.lesson1.argmax2);
});

test('lesson names: the aliases a course notebook uses for Wq1 … Wv2', () => {
  const cases = {
    Wq1: ['Wq1', 'W_q1', 'Wq_1', 'W_q_1', 'q1', 'head1_Wq', 'Wq_head1', 'h1_Wq', 'W1q', 'WqA'],
    Wk2: ['WK2', 'W_k2', 'k2', 'head2_Wk', 'Wk_h2', 'W2_k', 'Wk_B', 'headB_Wk'],
    Wv1: ['wv1', 'v1', 'head1_Wv', 'Wv_a'],
  };
  for (const [name, aliases] of Object.entries(cases)) {
    for (const a of aliases) assert.equal(lessonName(a), name, a);
  }
  for (const other of ['Wq', 'X', 'q', 'Wq3', 'head3_Wq', 'att']) {
    assert.equal(lessonName(other), null, other);
  }
  assert.deepEqual(LESSON1_NAMES, ['Wq1', 'Wk1', 'Wv1', 'Wq2', 'Wk2', 'Wv2']);
  // lesson 2's x is kept apart from X; any other name differing only in case replaces
  assert.notEqual(arrayKey('x'), arrayKey('X'));
  assert.equal(arrayKey('ATT'), arrayKey('att'));
  const list = loaded('seed3-sqrtC-aliases');
  assert.deepEqual(findArray(list, 'X').shape, [6, 32]);
  assert.deepEqual(findArray(list, 'Wv2').name, 'Wv_B');
});

/** A loaded array of `shape` filled with `fill`. */
const arr = (name, shape, fill = 0.5) => ({
  name,
  shape,
  dtype: '<f8',
  source: 'bad.npz',
  data: new Float64Array(shape.reduce((a, b) => a * b, 1)).fill(fill),
});

test('lessons 1 and 2 refuse what they cannot use, each with its message; the rest runs', () => {
  const base = loaded('seed7-scale002');
  // only lessons 3-5's arrays: lesson 1 keeps the course's and names what it needs
  const only35 = addArrays(
    [],
    [arr('X', [1, 6, 8]), ...['Wq', 'Wk', 'Wv', 'Wo'].map((n) => arr(n, [8, 8]))],
  ).list;
  const c35 = customArrays(mha, only35, 2).custom;
  assert.equal(c35.main, true);
  assert.equal(c35.lesson1, null);
  assert.match(c35.why.lesson1, /needs X and the two heads’ weights Wq1, Wk1, Wv1, Wq2/);
  assert.match(c35.why.lesson1, /not loaded: Wq1, Wk1, Wv1, Wq2, Wk2, Wv2/);
  assert.match(c35.why.lesson2, /not loaded: x\./);
  // a head's weight of the wrong shape
  const wrong = addArrays(base, [arr('Wk1', [64, 17])]).list;
  assert.match(
    lesson1Part(wrong).errors.join(' '),
    /Wk1 has shape \(64, 17\), expected \(64, 16\)/,
  );
  // a non-finite weight, and a non-finite x
  const nan = arr('Wq2', [64, 16]);
  nan.data[17] = NaN;
  assert.match(lesson1Part(addArrays(base, [nan]).list).errors.join(' '), /Wq2\[1, 1\] is NaN/);
  const inf = arr('x', [2, 5, 64]);
  inf.data[3] = Infinity;
  assert.match(lesson2Part(addArrays(base, [inf]).list, 4).errors.join(' '), /x\[0, 0, 3\] is ∞/);
  // X of the wrong rank, too many tokens
  assert.match(
    lesson1Part(addArrays(base, [arr('X', [512])]).list).errors[0],
    /X has shape \(512,\)/,
  );
  assert.match(
    lesson1Part(addArrays(base, [arr('X', [1, 65, 64])]).list).errors.join(' '),
    /T = 65/,
  );
  // lesson 2: Wq of another size than x's C; h not dividing C
  assert.match(
    lesson2Part(addArrays(base, [arr('Wq', [32, 32])]).list, 4).errors.join(' '),
    /Wq has shape \(32, 32\), expected \(64, 64\)/,
  );
  assert.match(lesson2Part(base, 5).errors.join(' '), /h = 5 does not divide C = 64/);
  // lesson 1 broken, lesson 2 fine: custom with lesson 1's why
  const half = customArrays(mha, addArrays(base, [arr('Wk1', [64, 17])]).list, 4).custom;
  assert.equal(half.lesson1, null);
  assert.ok(half.lesson2);
  assert.match(half.why.lesson1, /^Lesson 1 shows the course’s arrays: Wk1 has shape/);
  // nothing usable: errors for every part, no custom
  const none = customArrays(mha, removeArray(addArrays(base, [nan]).list, 'x (lesson 2)'), 4);
  assert.equal(none.custom, undefined);
  assert.match(none.errors.join(' '), /Wk is not loaded/);
  assert.match(none.errors.join(' '), /Wq2\[1, 1\] is NaN/);
});
