// Downloads: every file the page offers beyond a figure's PNG/SVG/CSV, clicked as a user would and
// captured with Playwright's download event, then read back by python3 + NumPy.
//
// - "Download notebook (.ipynb)" (top of the page and lesson 5): valid nbformat 4.5 JSON with each
//   section's heading and intro; its code cells, run top to bottom in one python3 process, print
//   the page's numbers (after changing the page: lesson 3's causal mask on, two lesson-5 steps).
// - The gradient-check tables of lessons 4 and 5 show the norm-wise error beside max rel error,
//   with the line under the table quoting the page's own figures.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useBrowser, figures, waitFigures, consoleErrors } from './browser.mjs';
import * as X from './expected.mjs';
import { lesson4 } from '../../web/model/lesson4.js';
import {
  assertClose,
  assertValidNotebook,
  checkRows,
  printed,
  runNotebook,
} from '../model/notebook-run.mjs';

const session = useBrowser();

/** Click `selector` and return the download it starts: { name, bytes (Buffer) }. */
async function download(page, selector, dir) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.locator(selector).click()]);
  const path = join(dir, dl.suggestedFilename());
  await dl.saveAs(path);
  return { name: dl.suggestedFilename(), bytes: readFileSync(path) };
}

test('Download notebook (.ipynb): nbformat 4.5 that prints the page top to bottom', async (t) => {
  const { page, log, close } = await session.open();
  const dir = mkdtempSync(join(tmpdir(), 'mha-downloads-'));
  try {
    // change the page first: the notebook holds the page as it is at the click
    await page.locator('#l3-causal').check();
    await waitFigures(page, (f) => f.lesson3.causal === true, { key: 'lesson3' });
    for (let k = 1; k <= 2; k++) {
      await page.locator('#l5-step').click();
      await waitFigures(page, (f) => f.lesson5.step === k, { key: 'lesson5' });
    }
    const top = await download(page, '#download-notebook', dir);
    const inLesson5 = await download(page, '#l5-notebook', dir);
    assert.equal(top.name, 'mha-wasm-companion.ipynb');
    assert.ok(top.bytes.equals(inLesson5.bytes), 'both buttons give the same notebook');

    const nb = JSON.parse(top.bytes.toString('utf8'));
    assertValidNotebook(nb);
    const sections = await page.evaluate(() =>
      ['lesson-1', 'lesson-2', 'lesson-3', 'lesson-4', 'lesson-5', 'playground'].map((id) => {
        const s = document.getElementById(id);
        return { id, heading: s.querySelector('h2').textContent.trim() };
      }),
    );
    const code = nb.cells.filter((c) => c.cell_type === 'code');
    assert.deepEqual(
      code.map((c) => c.id),
      sections.map((s) => `${s.id}-code`),
      'one code cell per section, in page order',
    );
    for (const s of sections) {
      const md = nb.cells.find((c) => c.id === `${s.id}-text`);
      assert.ok(md && md.cell_type === 'markdown', `${s.id}: markdown cell`);
      const text = md.source.join('');
      assert.ok(text.startsWith('## ') && text.includes(s.heading), `${s.heading}: ${text}`);
      assert.ok(text.split('\n\n').length >= 2, `${s.id}: heading and intro`);
    }

    const t0 = Date.now();
    const out = runNotebook(nb);
    t.diagnostic(`the notebook's 6 code cells ran in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const f = await figures(page);
    assertClose(printed(out['lesson-1-code'], 'maxGap'), f.lesson1.maxGap, 'lesson 1 maxGap');
    assert.equal(printed(out['lesson-2-code'], 'roundTrip'), f.lesson2.roundTrip);
    assert.ok(f.lesson3.causal, 'lesson 3 is causal on the page');
    for (const label of ['blockDiagDelta', 'fullDelta']) {
      const got = JSON.parse(out['lesson-3-code'].match(new RegExp(`^${label} = (.*)$`, 'm'))[1]);
      assertClose(got, f.lesson3[label], `lesson 3 ${label} (causal)`);
    }
    const L = printed(out['lesson-4-code'], 'L = sum\\(dY \\* Y\\)');
    assertClose(L, lesson4(X.mha).loss, 'lesson 4 L (the figure the page lists)');
    for (const [name, row] of Object.entries(checkRows(out['lesson-4-code']))) {
      assert.equal(row[3], 'pass', `lesson 4 check ${name}`);
    }
    assert.equal(f.lesson5.losses.length, 3);
    f.lesson5.losses.forEach((want, k) => {
      assertClose(printed(out['lesson-5-code'], `step +${k} +loss`), want, `lesson 5 loss ${k}`);
    });
    f.playground.losses.forEach((want, k) => {
      assertClose(printed(out['playground-code'], `step +${k} +loss`), want, `playground ${k}`);
    });
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await close();
  }
});

test('lessons 4 and 5: the norm-wise error beside max rel error, the line on both', async () => {
  const { page, close } = await session.open();
  try {
    for (const [id, report] of [
      ['l4-gradcheck', X.lesson4Gradcheck()],
      ['l5-gradcheck', X.sentenceGradcheck({})],
    ]) {
      await page.locator(`#${id}[data-done="1"]`).waitFor({ state: 'attached', timeout: 90_000 });
      const tab = await page.evaluate((panel) => {
        const table = document.querySelector(`#${panel} table`);
        return {
          headers: [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim()),
          body: [...table.querySelectorAll('tbody tr')].map((tr) =>
            [...tr.children].map((td) => td.textContent.trim()),
          ),
          line: document.querySelector(`#${panel} .gradcheck-contrast`).textContent,
        };
      }, id);
      const cRel = tab.headers.indexOf('max rel error');
      const cNorm = tab.headers.indexOf('norm-wise rel error');
      assert.equal(cNorm, cRel + 1, `${id}: headers ${tab.headers}`);
      const sci = (x) => x.toExponential(2).replace(/-/g, '−');
      report.forEach((r, i) => {
        assert.equal(tab.body[i][cNorm], sci(r.normRel), `${id} ${r.tensor}: normRel`);
        assert.equal(tab.body[i][cRel], sci(r.maxRel), `${id} ${r.tensor}: maxRel`);
      });
      const strict = report.reduce((w, r) => (r.maxRel > w.maxRel ? r : w));
      const norm = report.reduce((w, r) => (r.normRel > w.normRel ? r : w));
      assert.ok(tab.line.includes(`here ${strict.tensor}: ${sci(strict.maxRel)}`), tab.line);
      assert.ok(tab.line.includes(`at most ${sci(norm.normRel)} here, ${norm.tensor}`), tab.line);
      assert.match(tab.line, /what many courses print/);
    }
  } finally {
    await close();
  }
});
