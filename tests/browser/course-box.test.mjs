// "Your course and this page" (issue 19, item 1): every lesson opens with the course's printed
// results beside the page's, the page's column computed in this Node process (expected.mjs) and
// from the finished check tables; the boxes say how to bring yours, and link to Start here, which
// says once why the course's numbers differ.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, consoleErrors, setValue, showView } from './browser.mjs';
import { DEFAULT_SENTENCE } from '../../web/model/tokens.js';
import { LESSON_KEYS, lessonSaveLine } from '../../web/check/names.js';
import * as X from './expected.mjs';

const session = useBrowser();

/** Every box: { lesson, heading, rows: [[what, course, page]], text }. */
function boxes(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.course-box')].map((b) => ({
      lesson: b.dataset.lesson,
      heading: b.querySelector('h3').textContent,
      rows: [...b.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.children].map((c) => c.textContent.trim()),
      ),
      text: b.textContent,
      link: [...b.querySelectorAll('a')].find((a) => a.textContent === 'Start here')?.hash,
    })),
  );
}

const sci = (x) => x.toExponential(1).replace(/-/g, '−');
const range = (rows, f) => {
  const v = rows.map((r) => r[f]).filter((x) => x > 0);
  return `${sci(Math.min(...v))} to ${sci(Math.max(...v))}`;
};

test("each lesson's box: the course's results, the page's, why, how to bring yours", async () => {
  const { page, log, close } = await session.open();
  try {
    await page.evaluate(() => window.mhaPage.build()); // every lesson, as opening each would
    await page
      .locator('#l4-gradcheck[data-done="1"]')
      .waitFor({ state: 'attached', timeout: 90_000 });
    await page
      .locator('#l5-gradcheck[data-done="1"]')
      .waitFor({ state: 'attached', timeout: 90_000 });
    const got = await boxes(page);
    assert.deepEqual(
      got.map((b) => b.lesson),
      ['lesson1', 'lesson2', 'lesson3', 'lesson4', 'lesson5'],
    );
    const by = Object.fromEntries(got.map((b) => [b.lesson, b]));
    const l1 = X.lesson1();
    assert.deepEqual(by.lesson1.rows, [
      ['largest weight gap, max |A1 − A2|', '0.26', l1.maxGap.toFixed(3)],
      ['rows whose argmax differs', '7 of 8', `${l1.argmaxDiffRows.length} of 8`],
    ]);
    assert.equal(by.lesson2.rows[0][2], '0.0');
    assert.equal(by.lesson3.rows[0][2], '(2, 6, 64) → (2, 4, 6, 16) → (2, 4, 6, 6) → (2, 6, 64)');
    const c4 = X.lesson4Gradcheck();
    assert.deepEqual(by.lesson4.rows[0].slice(1), [
      'between 10⁻¹⁰ and 10⁻⁷',
      `per entry ${range(c4, 'maxRel')}; norm-wise ${range(c4, 'normRel')}`,
    ]);
    const c5 = X.sentenceGradcheck({});
    assert.equal(
      by.lesson5.rows[0][2],
      `per entry ${range(c5, 'maxRel')}; norm-wise ${range(c5, 'normRel')}`,
    );
    // the course's 10 steps at lr 0.1 on the page's sentence: layer.train's losses in Node
    const losses = X.sentenceLosses({}, 11);
    assert.deepEqual(by.lesson5.rows[1].slice(1), [
      '0.6508 → 0.3840',
      `${losses[0].toFixed(4)} → ${losses[10].toFixed(4)}`,
    ]);
    // why they differ, said once: in Start here, where every box links
    const once = await page.evaluate(() => ({
      text: document.getElementById('start-why-different').textContent,
      count: document.body.textContent.split('The course draws its own random numbers').length - 1,
    }));
    assert.match(once.text, /^The course draws its own random numbers .* the numbers are not\.$/s);
    assert.equal(once.count, 1, 'said once');
    // where the gap is not the draws, the box says what it is
    assert.match(by.lesson4.text, /Here the gap is not the draws: .*convention selector/);
    assert.match(by.lesson5.text, /expected MSE is E\[Y²\] \+ 1, at least 1/);
    for (const b of ['lesson1', 'lesson2', 'lesson3']) {
      assert.doesNotMatch(by[b].text, /gap is not the draws|E\[Y²\]/, b);
    }
    for (const b of got) {
      assert.equal(b.heading, 'Your course and this page');
      assert.match(b.text, /Why the numbers differ and which ones match yours: Start here\./);
      assert.doesNotMatch(b.text, /The course draws its own random numbers/, 'said once');
      assert.equal(b.link, '#start-why-different');
      assert.match(b.text, /Use my arrays in the lessons/);
      assert.match(b.text, /np\.savez\("lesson\d\.npz"/);
    }
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

test("lesson 1's box, the sentence edited: no other sentence's numbers beside", async () => {
  const { page, log, close } = await session.open('#lesson-1');
  try {
    const l1 = async () => (await boxes(page)).find((b) => b.lesson === 'lesson1').rows;
    const before = await l1();
    assert.equal(before[1][1], '7 of 8');
    assert.match(before[1][2], /^\d+ of 8$/);
    await setValue(page, '#l1-sentence', 'a b c d e f g h i j');
    await page.waitForFunction(() =>
      document.querySelector('.course-box[data-lesson="lesson1"] tbody')?.textContent.includes('—'),
    );
    for (const row of await l1()) {
      assert.equal(row[2], '— (another sentence than the course’s: edit it back to compare)');
    }
    // back to the course's sentence: its numbers again
    await setValue(page, '#l1-sentence', DEFAULT_SENTENCE);
    await page.waitForFunction(
      () =>
        !document
          .querySelector('.course-box[data-lesson="lesson1"] tbody')
          ?.textContent.includes('—'),
    );
    assert.deepEqual(await l1(), before);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

test("each lesson's np.savez line, Copy, and a link to the check's file drop", async () => {
  const { page, log, close } = await session.open();
  try {
    for (const key of LESSON_KEYS) {
      const view = key.replace('lesson', 'lesson-');
      await showView(page, view);
      const box = page.locator(`#${view} .course-box`);
      assert.equal(await box.locator('.course-box-save pre').textContent(), lessonSaveLine(key));
      assert.equal(
        await box.locator('.course-box-save button').getAttribute('aria-label'),
        `Copy the line: np.savez for ${key.replace('lesson', 'lesson ')}`,
      );
      const link = box.locator('a', { hasText: 'Check this lesson’s arrays' });
      assert.equal(await link.count(), 1, key);
      const href = await link.getAttribute('href');
      // a plain link into the check view: to its drop zone, the button of the file input
      assert.match(href, /^#[\w-]+$/, key);
      // followed with the keyboard: the check view opens, the drop zone has the focus
      await link.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((h) => location.hash === h, href);
      await page.waitForFunction(() => document.activeElement?.classList.contains('drop-zone'));
      const seen = await page.evaluate(
        ([id, lesson]) => {
          const zone = document.getElementById(id);
          const section = zone.closest('section');
          return {
            focused: document.activeElement === zone,
            section: section.id,
            shown: !section.hidden && zone.checkVisibility(),
            input: section.querySelector('input[type="file"]')?.id ?? null,
            lessonHidden: document.getElementById(lesson).hidden,
          };
        },
        [href.slice(1), view],
      );
      assert.deepEqual(
        seen,
        {
          focused: true,
          section: 'notebook-check',
          shown: true,
          input: 'nb-file',
          lessonHidden: true,
        },
        key,
      );
      // the zone is the button of the file input beside it (a press opens its picker)
      assert.equal(
        await page.evaluate(
          (id) => document.getElementById(id).previousElementSibling?.id,
          href.slice(1),
        ),
        'nb-file',
      );
      // back: the lesson's view again
      await page.goBack();
      await page.waitForFunction((v) => !document.getElementById(v).hidden, view);
      assert.equal(await page.evaluate(() => location.hash), `#${view}`);
      await page.goForward();
      await page.waitForFunction(() => !document.getElementById('notebook-check').hidden);
      await page.goBack();
      await page.waitForFunction((v) => !document.getElementById(v).hidden, view);
    }
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});
