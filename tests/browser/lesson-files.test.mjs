// Two lessons' own files together, in Chromium (issue 34, item 6): lesson1.npz and lesson4.npz as
// NumPy writes them with each lesson's line (tests/model/lesson-files.mjs) go in through the file
// input one after the other; the loaded list groups them by lesson (what each name is read as),
// nothing is replaced, the check says it reads course names and why it does not run, and "Use my
// arrays in the lessons" gives lesson 1 and lesson 4 their own arrays, lesson 3 the course's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useBrowser, consoleErrors, dropNotebookFile, showView } from './browser.mjs';
import { writeLessonFiles } from '../model/lesson-files.mjs';
import { LESSON_SAVES } from '../../web/check/names.js';

const session = useBrowser();

test('lesson1.npz and lesson4.npz together: the list per lesson, each lesson its own', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-lesson-files-'));
  const { page, log, close } = await session.open('#notebook-check');
  try {
    const files = writeLessonFiles(dir);
    await dropNotebookFile(page, files.lesson1.path);
    await dropNotebookFile(page, files.lesson4.path);
    const groups = await page.locator('#nb-arrays .loaded-group').evaluateAll((gs) =>
      gs.map((g) => ({
        lesson: g.dataset.lesson,
        text: g.querySelector('p').textContent,
        rows: [...g.querySelectorAll('tbody tr')].map((r) => r.cells[0].textContent),
      })),
    );
    assert.deepEqual(
      groups.map((g) => g.lesson),
      ['lesson1', 'lesson4'],
    );
    for (const g of groups) {
      const { prefix, names } = LESSON_SAVES[g.lesson];
      assert.deepEqual(
        g.rows,
        names.map((n) => `${prefix}${n}`),
      );
      const read = names.map((n, i) => `${prefix}${n} ${i ? 'as' : 'read as'} ${n}`).join(', ');
      assert.ok(g.text.includes(`(${g.lesson}.npz): ${read}.`), g.text);
    }
    assert.match(
      await page.locator('#nb-arrays summary').textContent(),
      /^Loaded arrays: 13, for lesson 1 \(7\); lesson 4 \(6\)$/,
    );
    // nothing replaced, no check error; the status says what the check reads
    assert.equal(await page.locator('#nb-file-error').textContent(), '');
    assert.equal(await page.locator('#nb-check-error').textContent(), '');
    assert.match(
      await page.locator('#nb-status').textContent(),
      /^Still needed for the check: X, Wq, Wk, Wv, Wo\. Loaded: lessons 1 and 4’s own arrays, which feed those lessons/,
    );
    await page.click('#nb-use');
    await page.waitForFunction(() => window.mhaPage.check().custom, null, { timeout: 20_000 });
    assert.equal(await page.locator('#nb-use-error').textContent(), '');
    const banner = async (view, body) => {
      await showView(page, view);
      return page.locator(`#${body}`).evaluate((b) => b.previousElementSibling.textContent);
    };
    assert.match(await banner('lesson-1', 'l1-body'), /Lesson 1 from your l1_X, l1_Wq1, /);
    assert.match(
      await banner('lesson-4', 'l4-body'),
      /From your l4_X, l4_Wq, l4_Wk, l4_Wv, l4_Wo, l4_dY\./,
    );
    assert.match(await banner('lesson-4', 'l4-body'), /B = 2, T = 6, C = 64/);
    assert.match(
      await banner('lesson-3', 'l3-body'),
      /this section shows the course’s.*Lesson 3 shows the course’s arrays: no file of its own/,
    );
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
});
