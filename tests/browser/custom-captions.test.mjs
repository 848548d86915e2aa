// With a notebook's arrays in use, no caption claims what they are not (issue 34, statement 14):
// a file of X and the four weights only (no dY, no target: the page draws those), made here with
// sizes of its own, goes in through the file input and "Use my arrays in the lessons". Lessons 3,
// 4 and 5 then show its arrays: what a reader sees of them by default never says "seed 42" of
// them (only of the course's arrays, by name) nor "should print", and lesson 5 does not call the
// drawn target the student's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useBrowser, consoleErrors, dropNotebookFile, showView } from './browser.mjs';
import { writeNpz } from '../../web/io/npz.js';

const session = useBrowser();

/** Numbers in (-1, 1) from a small LCG: a notebook's arrays, not the page's draws. */
function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/** X (B, T, C) and Wq, Wk, Wv, Wo (C, C): what a notebook without dY or target saves. */
function notebookArrays({ B, T, C }) {
  const next = lcg(20240);
  const arr = (shape, scale = 1) => ({
    shape,
    data: Float64Array.from({ length: shape.reduce((a, b) => a * b) }, () => next() * scale),
  });
  const w = () => arr([C, C], 1 / Math.sqrt(C));
  return { X: arr([B, T, C]), Wq: w(), Wk: w(), Wv: w(), Wo: w() };
}

/** The texts a reader sees in the open view (folds closed), one per paragraph, cell, caption. */
function shownTexts() {
  const sel = 'p, li, caption, figcaption, td, th, h3, h4, summary, .heatmap-title, text';
  return [...document.querySelectorAll(sel)]
    .filter((e) => !e.closest('[hidden]') && e.checkVisibility())
    .map((e) => e.textContent.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

test('arrays without dY or target: no caption says seed 42 or claims a target', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-captions-'));
  const { page, log, close } = await session.open('#notebook-check');
  try {
    const path = join(dir, 'mine.npz');
    writeFileSync(path, writeNpz(notebookArrays({ B: 1, T: 5, C: 32 })));
    await dropNotebookFile(page, path);
    await page.click('#nb-use');
    await page.waitForFunction(() => window.mhaPage.check().custom, null, { timeout: 20_000 });
    for (const [view, body] of [
      ['lesson-3', 'l3-body'],
      ['lesson-4', 'l4-body'],
      ['lesson-5', 'l5-body'],
    ]) {
      await showView(page, body);
      // the view shows the notebook's arrays (its banner) before its texts are read
      const banner = await page
        .locator(`#${body}`)
        .evaluate((b) => b.previousElementSibling?.textContent ?? '');
      assert.match(banner, /Custom arrays in use/, view);
      assert.match(banner, /B = 1, T = 5, C = 32/, view);
      const texts = await page.evaluate(shownTexts);
      const seed = texts.filter((t) => /seed[ -]42/.test(t) && !/course['’]s arrays/.test(t));
      assert.deepEqual(seed, [], `${view}: "seed 42" said of the notebook's arrays`);
      const should = texts.filter((t) => /should print/.test(t));
      assert.deepEqual(should, [], `${view}: "should print"`);
      const target = texts.filter((t) => /your[^.;]*\btarget\b/i.test(t) && !/drawn/.test(t));
      assert.deepEqual(target, [], `${view}: a target the file does not have called yours`);
      if (view === 'lesson-5') {
        assert.ok(
          texts.some((t) => /^Your arrays: .*a target drawn for them/.test(t)),
          'lesson 5 says its target was drawn',
        );
      }
    }
    assert.deepEqual(consoleErrors(log), []);
    assert.deepEqual(log.errors, []);
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
});
