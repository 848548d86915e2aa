// "Your course and this page": the course's printed results (quoted from the course, the issue's
// figures) beside the page's values, formatted from the values the lessons compute.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  COURSE_RESULTS,
  HOW_YOURS,
  courseBoxRows,
  errorRange,
} from '../../web/model/course-results.js';

test('every lesson has a box: what to save, and rows of the course beside the page', () => {
  assert.deepEqual(Object.keys(COURSE_RESULTS), [
    'lesson1',
    'lesson2',
    'lesson3',
    'lesson4',
    'lesson5',
  ]);
  for (const [key, entry] of Object.entries(COURSE_RESULTS)) {
    assert.match(entry.save, /^np\.savez\("lesson\d\.npz", /, key);
    assert.ok(entry.rows.length > 0, key);
  }
  // the course's own figures, as the course prints them
  const course = (key) => courseBoxRows(key, null).map((r) => r.course);
  assert.deepEqual(course('lesson1'), ['0.26', '7 of 8']);
  assert.deepEqual(course('lesson4'), ['between 10⁻¹⁰ and 10⁻⁷']);
  assert.deepEqual(course('lesson5'), ['around 10⁻⁷', '0.6508 → 0.3840']);
  // nothing computed yet: the page's column waits
  for (const key of Object.keys(COURSE_RESULTS)) {
    assert.ok(
      courseBoxRows(key, null).every((r) => r.page === null),
      key,
    );
  }
  assert.throws(() => courseBoxRows('lesson6', {}), /no course results for lesson6/);
  // why the numbers differ: said once, in Start here (web/index.html), where each box links
  const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
  const why = html.match(/<p class="note" id="start-why-different">([\s\S]*?)<\/p>/)[1];
  assert.match(why.replace(/\s+/g, ' '), /The shapes, the checks and the conclusions are the same/);
  assert.equal(html.split('The course draws its own random numbers').length, 2, 'said once');
  assert.match(HOW_YOURS, /Use my arrays in the lessons/);
});

test("the page's column, from the lesson's values", () => {
  const sci = (x) => x.toExponential(1);
  assert.deepEqual(
    courseBoxRows('lesson1', { maxGap: 0.55312, argmaxDiff: 7, T: 8 }, sci).map((r) => r.page),
    ['0.553', '7 of 8'],
  );
  // an edited sentence: no number of another input is set beside the course's
  assert.deepEqual(
    courseBoxRows('lesson1', { otherInput: 'another sentence' }, sci).map((r) => r.page),
    ['— (another sentence)', '— (another sentence)'],
  );
  assert.deepEqual(
    courseBoxRows('lesson2', { roundTrip: 0 }).map((r) => r.page),
    ['0.0'],
  );
  assert.deepEqual(
    courseBoxRows('lesson2', { roundTrip: 1e-9 }).map((r) => r.page),
    ['1e-9'],
  );
  const l3 = courseBoxRows(
    'lesson3',
    {
      shapes: [
        [2, 6, 64],
        [2, 4, 6, 16],
        [2, 4, 6, 6],
        [2, 6, 64],
      ],
      rowSumMaxErr: 2.2e-16,
    },
    sci,
  );
  assert.deepEqual(
    l3.map((r) => r.page),
    ['(2, 6, 64) → (2, 4, 6, 16) → (2, 4, 6, 6) → (2, 6, 64)', '2.2e-16'],
  );
  // a check's rows: the ranges of the per-entry and the norm-wise errors (zeros and NaN left out)
  const rows = [
    { maxRel: 3e-7, normRel: 2e-10 },
    { maxRel: 4e-9, normRel: 1e-11 },
    { maxRel: 0, normRel: 0 },
    { maxRel: NaN, normRel: NaN },
  ];
  assert.deepEqual(errorRange(rows), { lo: 4e-9, hi: 3e-7 });
  assert.deepEqual(errorRange(rows, 'normRel'), { lo: 1e-11, hi: 2e-10 });
  assert.equal(errorRange([]), null);
  assert.equal(errorRange(null), null);
  assert.deepEqual(
    courseBoxRows('lesson4', { gradcheck: rows }, sci)[0].page,
    'per entry 4.0e-9 to 3.0e-7; norm-wise 1.0e-11 to 2.0e-10',
  );
  assert.equal(courseBoxRows('lesson4', { gradcheck: null }, sci)[0].page, null);
  const losses10 = Array.from({ length: 11 }, (_, k) => 1.30064 - 0.04162 * k);
  assert.equal(
    courseBoxRows('lesson5', { gradcheck: null, losses10 }, sci)[1].page,
    '1.3006 → 0.8844',
  );
});
