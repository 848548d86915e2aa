// Lesson 5 driven by a student's own run, in Chromium (issue 19, item 2). Course-style lesson-5
// notebooks of tests/reference/notebook_lesson5.py (NumPy: seed 3 with weights / sqrt(C), lr 0.05,
// 25 steps, saved with only its losses; seed 7 with weights × 0.02, lr 0.5, 10 steps, saved with
// only Wq_after and steps) go in through the file input (#nb-file); "Use my arrays in the lessons"
// (#nb-use) then runs the notebook's steps at the notebook's lr in lesson 5 by itself, and lesson
// 5 shows the first and last loss the notebook printed, says where lr and steps came from, and
// (with the losses saved) that the student's losses agree with the page's. "Back to the course's
// arrays" restores every figure of the page bit for bit.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  useBrowser,
  consoleErrors,
  dropNotebookFile,
  figures,
  showView,
  waitFigures,
} from './browser.mjs';
import { waitSettled } from './a11y.mjs';
import { referenceDir } from '../helpers.mjs';

const session = useBrowser();
const dir = join(referenceDir(), 'notebook-lesson5');
const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8'));

const load = dropNotebookFile;

/** The text of an element as a reader sees it: scrolled to first, and a frame drawn there (further
 * down, a view's blocks are laid out, and have their text, once they come near the screen). */
async function seen(locator) {
  await locator.scrollIntoViewIfNeeded();
  await locator.evaluate(() => new Promise((ok) => requestAnimationFrame(() => setTimeout(ok))));
  return locator.innerText();
}

const CASES = [
  { name: 'seed3-sqrtC', variant: 'losses', lrText: 'lr 0.05 found from your losses' },
  { name: 'seed7-scale002', variant: 'after', lrText: 'lr 0.5 found from your Wq_after' },
];

for (const c of CASES) {
  const e = expected[c.name];
  test(`${c.name}-${c.variant}.npz (seed ${e.seed}, lr ${e.lr}, ${e.steps} steps): lesson 5 shows the losses the notebook printed`, async (t) => {
    const { page, log, close } = await session.open('', { timeout: 60_000 });
    try {
      await waitSettled(page);
      const course = await figures(page);
      await load(page, join(dir, `${c.name}-${c.variant}.npz`));
      await page.click('#nb-use');
      await page.waitForFunction(() => window.mhaPage.check().custom, null, { timeout: 20_000 });
      await showView(page, 'lesson-5');
      const f = await waitFigures(page, (x) => x.lesson5.step === e.steps, {
        key: 'lesson5',
        timeout: 30_000,
        what: `lesson 5 to take the notebook's ${e.steps} steps`,
      });
      const losses = f.lesson5.losses;
      assert.equal(losses.length, e.steps + 1);
      // the first and last loss as the page shows them, and as the notebook printed them
      const shown = (key) => seen(page.locator(`#l5-body [data-figure="${key}"]`));
      const first = Number(await shown('loss0'));
      const last = Number(await shown('loss'));
      assert.equal(
        `step 0: loss ${first.toFixed(4)}`,
        e.printed.find((l) => l.startsWith('step 0')),
      );
      assert.equal(`after ${e.steps} steps: loss ${last.toFixed(4)}`, e.printed.at(-1));
      assert.ok(Math.abs(first / e.losses[0] - 1) < 1e-9, `shown ${first} vs ${e.losses[0]}`);
      assert.ok(Math.abs(last / e.losses.at(-1) - 1) < 1e-9, `shown ${last} vs ${e.losses.at(-1)}`);
      for (let k = 0; k <= e.steps; k++) {
        assert.ok(Math.abs(losses[k] / e.losses[k] - 1) <= 1e-10, `step ${k}`);
      }
      const banner = await seen(page.locator('#lesson-5 .custom-banner'));
      assert.match(
        banner,
        new RegExp(`Lesson 5 runs your training: ${c.lrText}; ${e.steps} steps`),
      );
      assert.equal(await seen(page.locator('#l5-run-yours')), `Run your ${e.steps} steps`);
      assert.equal(await page.locator('#l5-lr').inputValue(), String(e.lr));
      const compare = await seen(page.locator('#l5-yours-compare'));
      if (c.variant === 'losses') {
        assert.match(compare, /^Your losses agree with the page's at all 25 steps compared/);
        const table = page.locator('#l5-body table', { hasText: 'The loss table' });
        const heads = await table.locator('thead th').allInnerTexts();
        assert.deepEqual(heads.slice(3), ['your losses[k]', 'relative difference']);
      } else assert.equal(compare, '');
      // the check table: two-point, eps 1e-5 on the notebook's arrays, the size its check printed
      await page
        .locator('#l5-gradcheck[data-done="1"]')
        .waitFor({ state: 'attached', timeout: 60_000 });
      const rows = (await figures(page, 'lesson5')).gradcheck;
      assert.equal(await page.locator('#l5-gradcheck-stencil').inputValue(), 'two-point');
      assert.equal(await page.locator('#l5-gradcheck-eps').inputValue(), '1e-5');
      const sizes = [];
      for (const [w, numpy] of Object.entries(e.check)) {
        const row = rows.find((r) => r.tensor === w);
        const ratio = Math.max(row.maxRel / numpy, numpy / row.maxRel);
        assert.ok(ratio <= 10, `${w}: page ${row.maxRel}, notebook ${numpy}`);
        sizes.push(`${w} ${row.maxRel.toExponential(1)} (${numpy.toExponential(1)})`);
      }
      t.diagnostic(`check per entry, page (notebook): ${sizes.join(', ')}`);
      t.diagnostic(
        `notebook printed “${e.printed.find((l) => l.startsWith('step 0'))}” … “${e.printed.at(-1)}”; the page shows ${first} … ${last}`,
      );
      await page.click('#l5-body-back');
      await page.waitForFunction(() => !window.mhaPage.check().custom);
      await waitSettled(page);
      assert.deepStrictEqual(await figures(page), course);
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      assert.deepEqual(log.errors, [], 'page errors');
    } finally {
      await close();
    }
  });
}

test('a run that diverges (lr 10, 20 steps): lesson 5 stops, says so, works on', async () => {
  const { page, log, close } = await session.open('', { timeout: 60_000 });
  try {
    await waitSettled(page);
    await load(page, join(dir, 'seed3-sqrtC-diverges.npz'));
    await page.click('#nb-use');
    await page.waitForFunction(() => window.mhaPage.check().custom, null, { timeout: 20_000 });
    await showView(page, 'lesson-5');
    const status = page.locator('#l5-yours-status');
    await page.waitForFunction(
      () => /stopped/.test(document.getElementById('l5-yours-status')?.textContent ?? ''),
      null,
      { timeout: 30_000 },
    );
    const f = await figures(page, 'lesson5');
    assert.ok(f.step >= 1 && f.step < 20, `${f.step} steps kept`);
    assert.ok(f.losses.slice(0, -1).every(Number.isFinite));
    assert.equal(
      await seen(status),
      `Your run stopped after ${f.step} steps of 20: the loss stopped being finite (the run diverged at lr 10). The steps taken are shown.`,
    );
    assert.match(await seen(page.locator('#l5-error')), /Training stopped: the loss is NaN/);
    // the page works on: Reset, then one step at a smaller lr
    await page.click('#l5-reset');
    await page.fill('#l5-lr', '0.05');
    await page.click('#l5-step');
    await waitFigures(page, (x) => x.lesson5.step === 1, { key: 'lesson5', what: 'one step' });
    assert.ok(Number.isFinite((await figures(page, 'lesson5')).losses[1]));
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});
