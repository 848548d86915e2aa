// Each lesson's view on a phone (390×844) and a laptop (1280×800), as it opens (its folds
// closed): within its budget of screens (8 on the phone, 5 on the laptop); on the phone no table
// wider than its box, with its folds closed or open (the gradient-check table shows the tensor,
// its error and the result, the rest behind ⋯), no column of one word a line, and every number
// drawn in a map's cells at least 11 px (smaller cells show theirs on hover, tap or the arrow
// keys). Screenshots of lessons
// 1 and 4 and of lesson 4's check table at 390 px go to test-results/phone/ (git-ignored).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { useBrowser, consoleErrors, repoRoot, showView } from './browser.mjs';
import { VIEWS } from '../../web/lessons/index.js';

const session = useBrowser();

const LESSONS = VIEWS.filter((v) => /^lesson-\d$/.test(v.id)).map((v) => v.id);
const SIZES = [
  { width: 390, height: 844, screens: 8 },
  { width: 1280, height: 800, screens: 5 },
];
const phoneDir = join(repoRoot, 'test-results', 'phone');

/** In the page: what a phone reader would find wrong with the open view's tables and maps. */
function phoneFaults() {
  // (what a closed fold holds is not shown: checkVisibility, where content-visibility hides it)
  const shown = (e) => !e.closest('[hidden]') && e.checkVisibility();
  const what = (e) => `${e.tagName.toLowerCase()}${e.className ? `.${e.className}` : ''}`;
  const wide = [...document.querySelectorAll('table')]
    .filter(shown)
    .filter((t) => t.getBoundingClientRect().width > t.parentElement.clientWidth + 1)
    .map((t) => `${what(t)} ${Math.round(t.getBoundingClientRect().width)} px`);
  // a cell of three words or more squeezed under 40 px: a column of one word a line
  const squeezed = [...document.querySelectorAll('td, th')]
    .filter(shown)
    .filter((c) => c.textContent.trim().split(/\s+/).length >= 3)
    .filter((c) => c.getBoundingClientRect().width < 40)
    .filter((c) => !c.closest('table.stacks thead')) // (read by screen readers, not drawn)
    .map(
      (c) =>
        `“${c.textContent.trim().slice(0, 30)}” ${Math.round(c.getBoundingClientRect().width)} px`,
    );
  // a number's size on the screen: its font size in the SVG's units times the SVG's scale
  const small = [...document.querySelectorAll('.cell-numbers text')]
    .filter(shown)
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)
    .filter((px) => px < 10.95);
  return { wide, squeezed, small: small.length };
}

for (const size of SIZES) {
  const phone = size.width < 500;
  test(`each lesson's view at ${size.width}×${size.height}: within ${size.screens} screens${phone ? '; tables and maps fit a phone' : ''}`, async (t) => {
    const viewport = { width: size.width, height: size.height };
    const { page, log, close } = await session.open('', { viewport });
    try {
      const heights = [];
      for (const id of LESSONS) {
        await showView(page, id);
        await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
        const h = await page.evaluate(() => document.documentElement.scrollHeight);
        heights.push(`${id} ${h} px (${(h / size.height).toFixed(1)})`);
        assert.ok(
          h <= size.screens * size.height,
          `${id}: ${h} px = ${(h / size.height).toFixed(2)} screens of ${size.height} px`,
        );
        if (!phone) continue;
        const f = await page.evaluate(phoneFaults);
        assert.deepEqual(f.wide, [], `${id}: tables wider than their box`);
        assert.deepEqual(f.squeezed, [], `${id}: a column of one word a line`);
        assert.equal(f.small, 0, `${id}: numbers in map cells under 11 px`);
        if (id === 'lesson-1' || id === 'lesson-4') {
          mkdirSync(phoneDir, { recursive: true });
          const path = join(phoneDir, `view-${id}.png`);
          await page.screenshot({ path, fullPage: true });
          t.diagnostic(`${relative(repoRoot, path)}`);
        }
        // with every fold of the view open (Go deeper, the scripts …): no table wider either
        await page.evaluate(() => {
          for (const d of document.querySelectorAll('section:not([hidden]) details')) d.open = true;
        });
        await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => ok())));
        const open = await page.evaluate(phoneFaults);
        assert.deepEqual(open.wide, [], `${id}, every fold open: tables wider than their box`);
      }
      if (phone) {
        await showView(page, 'l4-gradcheck');
        await page.waitForFunction(() => document.getElementById('l4-gradcheck').dataset.done);
        const path = join(phoneDir, 'view-lesson-4-check-table.png');
        await page.locator('#l4-gradcheck').screenshot({ path });
        t.diagnostic(`${relative(repoRoot, path)}`);
      }
      t.diagnostic(`screens of ${size.height} px: ${heights.join(', ')}`);
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      assert.deepEqual(log.errors, [], 'page errors');
    } finally {
      await close();
    }
  });
}
