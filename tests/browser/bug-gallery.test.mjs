// "A gallery of common bugs" (in "Check your notebook") in Chromium: nothing of it is computed at
// load; opened with the keyboard, it draws one card per known mistake of the check's catalogue
// (counted here from the catalogue, in Node), each recognised by the check, with the check's
// diagnosis as the model computes it in Node, the mistaken map beside the course's, the records
// with no line to draw in words; no console error; axe finds nothing on the page with it open.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, consoleErrors } from './browser.mjs';
import { runAxe, describeViolations } from './a11y.mjs';
import { mha } from './expected.mjs';
import { bugGallery, galleryFigure } from '../../web/model/bug-gallery.js';
import { diagnosisText } from '../../web/model/custom-arrays.js';

const session = useBrowser();
const gallery = bugGallery(mha);

/** What the page shows of every card and text-only record. */
function readGallery() {
  const cards = [...document.querySelectorAll('#nb-gallery article.bug-case')];
  return {
    cards: cards.map((c) => ({
      id: c.dataset.mistake,
      recognised: c.dataset.recognised,
      heading: c.querySelector('h4').textContent,
      labelled: document.getElementById(c.getAttribute('aria-labelledby')) !== null,
      check: c.querySelector('.bug-check').textContent,
      maps: c.querySelectorAll('figure.heatmap, .heatmap').length,
      titles: [...c.querySelectorAll('.heatmap-title, figcaption')].map((t) => t.textContent),
      scalar: c.querySelector('.bug-scalar')?.textContent ?? null,
    })),
    status: document.querySelector('#nb-gallery [role="status"]').textContent,
    textOnly: [...document.querySelectorAll('#nb-gallery .bug-text-only li')].map(
      (li) => li.dataset.mistake,
    ),
  };
}

test('the gallery: built on opening, a card per known mistake, named by the check', async () => {
  const { page, log, close } = await session.open('#notebook-check');
  try {
    const before = await page.evaluate(() => ({
      open: document.getElementById('nb-gallery').open,
      cards: document.querySelectorAll('#nb-gallery .bug-case').length,
      built: document.getElementById('nb-gallery').dataset.built ?? null,
    }));
    assert.deepEqual(before, { open: false, cards: 0, built: null }, 'nothing computed at load');
    await page.focus('#nb-gallery > summary');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('nb-gallery').dataset.built === '1');
    const seen = await page.evaluate(readGallery);
    assert.deepEqual(
      seen.cards.map((c) => c.id),
      gallery.cases.map((c) => c.id),
    );
    assert.deepEqual(
      seen.textOnly,
      gallery.textOnly.map((t) => t.id),
    );
    const n = gallery.cases.length;
    assert.match(seen.status, new RegExp(`^${n} mistakes .* the mistake made in ${n} of them;`));
    for (const [i, card] of seen.cards.entries()) {
      const c = gallery.cases[i];
      assert.equal(card.recognised, '1', c.id);
      assert.ok(card.labelled, c.id);
      assert.equal(card.heading, `${i + 1}. ${c.what}`);
      assert.ok(card.check.includes(diagnosisText(c.row.diagnosis)), `${c.id}: ${card.check}`);
      assert.ok(card.check.includes(`row for ${c.row.name}`), c.id);
      if (galleryFigure(c)) {
        assert.equal(card.maps, 2, `${c.id}: the mistaken map and the course's`);
      } else {
        assert.equal(card.maps, 0, c.id);
        assert.match(card.scalar, /: your line gives .*, the right line /, c.id);
        // the gallery's loss is its own: said before its numbers, never read as the course's MSE
        if (c.site === 'loss') {
          assert.match(card.scalar, /^The loss against this gallery’s made-up target \(/, c.id);
          assert.match(card.scalar, /not a loss the course prints\): your line gives /, c.id);
        }
      }
    }
    assert.deepEqual(consoleErrors(log), []);
    assert.deepEqual(log.errors, []);
  } finally {
    await close();
  }
});

test('axe finds nothing with the gallery open and drawn', async () => {
  const { page, close } = await session.open('#notebook-check');
  try {
    await page.evaluate(() => {
      document.getElementById('nb-gallery').open = true;
    });
    await page.waitForFunction(() => document.getElementById('nb-gallery').dataset.built === '1');
    await page.waitForFunction(() => !document.querySelector('#nb-gallery [data-pending]'));
    const r = await runAxe(page);
    assert.deepEqual(r.violations, [], describeViolations(r.violations));
  } finally {
    await close();
  }
});
