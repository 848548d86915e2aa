// Lessons 1 and 2 from a student's notebook, in Chromium (issue 19). The course-style notebooks of
// tests/reference/notebook_lessons12.py (NumPy: seed 7 with weights × 0.02; seed 3 with weights
// / sqrt(C), saved under aliases W_q1, Wk_1, head1_Wv, q2, h2_Wk, Wv_B and X of shape (T, C)) go
// in through the file input (#nb-file); "Use my arrays in the lessons" (#nb-use) then
//   - shows in lesson 1 the max gap and the rows whose argmax differs that the notebook printed
//     ("max gap 0.01, argmax differs in 7 of 8 rows"), rings NumPy's argmax of each row (read
//     from the maps' accessible names), and compares one head of hs = C with four of hs = C / 4
//     as NumPy does;
//   - shows in lesson 2 the notebook's shapes and heads[0, 1, 0, :4];
//   - puts a banner over lessons 1 and 2 (your arrays in use) and over lessons 3-5 (why they keep
//     the course's: no Wk, Wv, Wo);
// a notebook with only lessons 3-5's arrays leaves lesson 1 as it was, its banner naming what it
// needs; "Back to the course's arrays" restores every figure of the page bit for bit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  useBrowser,
  consoleErrors,
  dropNotebookFile,
  figures,
  openAround,
  showView,
} from './browser.mjs';
import { waitSettled } from './a11y.mjs';
import { referenceDir } from '../helpers.mjs';

const session = useBrowser();
const dir = join(referenceDir(), 'notebook-lessons12');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));

const load = dropNotebookFile;

/** Click "Use my arrays in the lessons" and wait for the lessons to use them. */
async function useArrays(page) {
  await page.click('#nb-use');
  await page.waitForFunction(() => window.mhaPage.check().custom, null, { timeout: 20_000 });
  assert.equal(await page.locator('#nb-use-error').textContent(), '');
}

/**
 * The accessible names of lesson 1's three heatmaps (a map draws its plot at the first width the
 * browser gives it: a frame after its view is shown).
 */
async function mapLabels(page) {
  await page.waitForFunction(
    () => document.querySelectorAll('#l1-body svg.heatmap-svg').length >= 3,
  );
  return page
    .locator('#l1-body svg.heatmap-svg')
    .evaluateAll((svgs) => svgs.map((s) => s.getAttribute('aria-label')));
}

/** The ringed cells an accessible name lists: [[row, col], …]. */
const ringsOf = (label) =>
  [...label.matchAll(/row (\d+) ‘[^’]*’ → column (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);

async function checkLesson1(page, e) {
  await showView(page, 'lesson-1');
  const f = await figures(page, 'lesson1');
  const x = e.lesson1;
  // what the notebook printed: "max gap 0.01, argmax differs in 7 of 8 rows"
  const shown = await page.locator('#l1-body [data-figure="maxGap"]').innerText();
  const rows = await page.locator('#l1-body [data-figure="argmaxDiff"]').innerText();
  const printed = `max gap ${Number(shown).toFixed(2)}, argmax differs in ${rows.split('\n')[0]} rows`;
  assert.equal(printed, e.printed[0]);
  assert.ok(Math.abs(f.maxGap - x.maxGap) <= 1e-14, `max gap ${f.maxGap} vs ${x.maxGap}`);
  assert.deepEqual(f.argmaxDiffRows, x.argmaxDiffRows);
  assert.deepEqual(
    f.tokens,
    Array.from({ length: e.T }, (_, t) => `t${t}`),
  );
  // the rings of head A's and head B's maps: NumPy's argmax of each row
  const labels = await mapLabels(page);
  assert.deepEqual(
    ringsOf(labels[0]),
    x.argmax1.map((c, t) => [t, c]),
  );
  assert.deepEqual(
    ringsOf(labels[1]),
    x.argmax2.map((c, t) => [t, c]),
  );
  assert.deepEqual(ringsOf(labels[2]), [], 'the difference map has no rings');
  // one head of hs = C against four of hs = C / 4
  assert.deepEqual(f.compare.singleArgmax, x.compare.singleArgmax);
  assert.deepEqual(f.compare.fourArgmax, x.compare.fourArgmax);
  assert.deepEqual(f.compare.disagreeRows, x.compare.disagreeRows);
  const k = x.compare.disagreeRows.length;
  await openAround(page, '#l1-body .l1-compare-conclusion'); // (in Go deeper)
  const conclusion = await page.locator('#l1-body .l1-compare-conclusion').innerText();
  assert.ok(conclusion.startsWith(k ? `On ${k} of ${e.T} rows` : `On all ${e.T} rows`), conclusion);
}

for (const [name, e] of Object.entries(expected)) {
  const what = `${name} (seed ${e.seed}, ${e.scale})`;
  test(`${what}: lessons 1 and 2 print what the notebook printed`, async (t) => {
    const { page, log, close } = await session.open('', { timeout: 60_000 });
    try {
      await waitSettled(page);
      const course = await figures(page);
      await load(page, join(dir, `${name}.npz`));
      await useArrays(page);
      await checkLesson1(page, e);
      const l2 = await figures(page, 'lesson2');
      assert.deepEqual(l2.shapes, e.lesson2.shapes);
      assert.equal(l2.roundTrip, 0);
      const four = l2.head1Projection.map((v) => v.toFixed(4)).map(Number);
      const numpy = e.printed[3]
        .replace(/^.*\[\s*|\s*\]$/g, '')
        .split(/\s+/)
        .map(Number);
      assert.deepEqual(four, numpy, e.printed[3]);
      const banner = (id) => page.locator(`#${id} .custom-banner`).innerText();
      assert.match(await banner('lesson-1'), /Lesson 1 from your X, /);
      assert.match(await banner('lesson-2'), /Lesson 2 from your x and Wq/);
      assert.match(
        await banner('lesson-3'),
        /show the course’s arrays: they need X and Wq, Wk, Wv, Wo; not loaded: Wk, Wv, Wo\./,
      );
      assert.deepEqual(await figures(page, 'lesson3'), course.lesson3, 'lesson 3 as it was');
      t.diagnostic(`notebook printed “${e.printed[0]}”; the page shows the same`);
      await page.click('#l1-body-back');
      await page.waitForFunction(() => !window.mhaPage.check().custom);
      assert.equal(await page.locator('.custom-banner').count(), 0, 'no banner left');
      assert.deepStrictEqual(await figures(page), course);
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      assert.deepEqual(log.errors, [], 'page errors');
    } finally {
      await close();
    }
  });
}

test("only lessons 3-5's arrays: lesson 1 keeps the course's, names what it needs", async () => {
  const { page, log, close } = await session.open('', { timeout: 60_000 });
  try {
    await waitSettled(page);
    const course = await figures(page, 'lesson1');
    // NumPy's np.savez of X (2, 6, 8), Wq … Wo and a cache dict (reference/notebook_formats.py)
    await load(page, join(referenceDir(), 'notebook-formats', 'npz-partial-cache.npz'));
    await useArrays(page);
    await showView(page, 'lesson-1');
    const banner = await page.locator('#lesson-1 .custom-banner').innerText();
    assert.match(banner, /needs X and the two heads’ weights Wq1, Wk1, Wv1, Wq2, Wk2, Wv2/);
    assert.match(banner, /not loaded: Wq1, Wk1, Wv1, Wq2, Wk2, Wv2/);
    assert.deepEqual(await figures(page, 'lesson1'), course, 'lesson 1 as it was');
    assert.deepEqual((await figures(page, 'lesson3')).shapes.att, [2, 4, 6, 6]);
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});
