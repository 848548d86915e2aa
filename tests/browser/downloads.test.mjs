// Downloads: every file the page offers beyond a figure's PNG/SVG/CSV, clicked as a user would and
// captured with Playwright's download event, then read back by python3 + NumPy.
//
// - "Download notebook (.ipynb)" (top of the page and lesson 5): nbformat 4.5 that nbformat's own
//   validator accepts, with each section's heading and intro; the downloaded file, run by Jupyter
//   (nbconvert --execute, Debian's python3 kernel), prints the page's numbers (after changing the
//   page: lesson 3's causal mask on, two lesson-5 steps).
// - The gradient-check tables of lessons 4 and 5 show the norm-wise error beside max rel error,
//   with the line under the table quoting the page's own figures.
// - A heatmap's NPY button: np.load gives the matrix it shows, (rows, cols) float64, bit for bit.
// - Each lesson's "Download arrays (.npz)": np.load gives every array of the lesson under its
//   course name, equal bit for bit to the page's figures and to the Node API's computation.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  useBrowser,
  figures,
  waitFigures,
  waitFiguresDrawn,
  showView,
  openAround,
  openGoDeeper,
  consoleErrors,
  assertSameArray,
} from './browser.mjs';
import * as X from './expected.mjs';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { courseData } from '../../web/model/course.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { tokenize } from '../../web/model/tokens.js';
import {
  lesson1Arrays,
  lesson2Arrays,
  lesson3Arrays,
  lesson4Arrays,
  lesson5Arrays,
} from '../../web/model/lesson-arrays.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { L4_LINES, conventionThreshold } from '../../web/model/gradcheck-report.js';
import {
  assertClose,
  assertValidNotebook,
  checkRows,
  numpyLoad,
  printed,
  runNotebook,
} from '../model/ipynb-run.mjs';

const session = useBrowser();

/** Click `selector` and return the download it starts: { name, path, bytes (Buffer) }. */
async function download(page, selector, dir) {
  const [dl] = await Promise.all([
    page.waitForEvent('download', { timeout: 10_000 }),
    page.locator(selector).click(),
  ]);
  const path = join(dir, dl.suggestedFilename());
  await dl.saveAs(path);
  return { name: dl.suggestedFilename(), path, bytes: readFileSync(path) };
}

test('Download notebook (.ipynb): nbformat 4.5 that prints the page top to bottom', async (t) => {
  const { page, log, close } = await session.open();
  const dir = mkdtempSync(join(tmpdir(), 'mha-downloads-'));
  try {
    // change the page first: the notebook holds the page as it is at the click
    await showView(page, 'l3-causal');
    await page.locator('#l3-causal').check();
    await waitFigures(page, (f) => f.lesson3.causal === true, { key: 'lesson3' });
    await showView(page, 'l5-step');
    for (let k = 1; k <= 2; k++) {
      await page.locator('#l5-step').click();
      await waitFigures(page, (f) => f.lesson5.step === k, { key: 'lesson5' });
    }
    const top = await download(page, '#download-notebook', dir);
    const inLesson5 = await download(page, '#l5-notebook', dir);
    assert.equal(top.name, 'mha-wasm-companion.ipynb');
    assert.ok(top.bytes.equals(inLesson5.bytes), 'both buttons give the same notebook');

    const nb = JSON.parse(top.bytes.toString('utf8'));
    assertValidNotebook(top.path);
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
    const { stdout: out, stderr } = runNotebook(top.path);
    t.diagnostic(
      `the notebook's 6 code cells ran in Jupyter in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    assert.deepEqual(stderr, {}, 'no cell writes to stderr (a NumPy warning would)');
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

/** A check panel's table: headers, body cells, the contrast line and the summary under it. */
function panelTable(page, id) {
  return page.evaluate((panel) => {
    const table = document.querySelector(`#${panel} table`);
    return {
      headers: [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim()),
      body: [...table.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.children].map((td) => td.textContent.trim()),
      ),
      line: document.querySelector(`#${panel} .gradcheck-contrast`).textContent,
      summary: document.querySelector(`#${panel} .gradcheck-summary`).textContent,
      caption: table.querySelector('caption')?.textContent ?? '',
    };
  }, id);
}

const sci = (x) => x.toExponential(2).replace(/-/g, '−');

/** The rows of a table against a Node report: per entry, cs231n's form and norm-wise. */
function assertRows(id, tab, report) {
  const cRel = tab.headers.findIndex((h) => h.startsWith('max rel error per entry'));
  const cSum = tab.headers.findIndex((h) => h.startsWith('max rel error (cs231n)'));
  const cNorm = tab.headers.findIndex((h) => h.startsWith('norm-wise rel error'));
  assert.deepEqual([cSum, cNorm], [cRel + 1, cRel + 2], `${id}: headers ${tab.headers}`);
  // the rows in lesson 4's backward order (dWo ... dX), each named by its gradient
  const shown = X.GRADS.map((g) => report.find((r) => `d${r.tensor}` === g)).filter(Boolean);
  assert.equal(shown.length, report.length, `${id}: rows`);
  shown.forEach((r, i) => {
    assert.equal(tab.body[i][0], `d${r.tensor}`, `${id} row ${i}`);
    assert.equal(tab.body[i][cNorm], sci(r.normRel), `${id} ${r.tensor}: normRel`);
    assert.equal(tab.body[i][cSum], sci(r.maxRelSum), `${id} ${r.tensor}: maxRelSum`);
    assert.equal(tab.body[i][cRel], sci(r.maxRel), `${id} ${r.tensor}: maxRel`);
  });
  return shown;
}

test('lessons 4 and 5: three relative errors and the line, as a notebook has them', async () => {
  const { page, close } = await session.open();
  try {
    await page.evaluate(() => window.mhaPage.build()); // both lessons, as opening each would
    for (const [id, report] of [
      ['l4-gradcheck', X.lesson4Gradcheck()],
      ['l5-gradcheck', X.sentenceGradcheck({})],
    ]) {
      await page.locator(`#${id}[data-done="1"]`).waitFor({ state: 'attached', timeout: 90_000 });
      const tab = await panelTable(page, id);
      const shown = assertRows(id, tab, report);
      // the table says which convention it shows, and which column the pass line reads
      assert.match(
        tab.caption,
        /two-point central differences \(L\(x\+ε\) − L\(x−ε\)\) \/ 2ε, ε = 1\.0e−5/,
      );
      assert.ok(tab.headers.includes('max rel error per entry (pass line)'), tab.headers);
      const strict = shown.reduce((w, r) => (r.maxRel > w.maxRel ? r : w));
      const norm = shown.reduce((w, r) => (r.normRel > w.normRel ? r : w));
      assert.ok(tab.line.includes(`here d${strict.tensor}: ${sci(strict.maxRel)}`), tab.line);
      assert.ok(tab.line.includes(`at most ${sci(norm.normRel)} here, d${norm.tensor}`), tab.line);
      assert.match(tab.line, /what many courses print/);
    }
  } finally {
    await close();
  }
});

test("lesson 4: the stencil, ε and the pass line's form are the student's to choose", async () => {
  const { page, close } = await session.open('#lesson-4');
  const id = 'l4-gradcheck';
  try {
    await page.locator(`#${id}[data-done="1"]`).waitFor({ state: 'attached', timeout: 90_000 });
    // the pass line on the norm-wise error, two points (its value: tests/gradcheck-conventions)
    await page.selectOption(`#${id}-form`, 'norm');
    let tab = await panelTable(page, id);
    assert.ok(tab.headers.includes('norm-wise rel error (pass line)'), tab.headers);
    const worstNorm = Math.max(...X.lesson4Gradcheck().map((r) => r.normRel));
    const normLine = conventionThreshold(L4_LINES, { stencil: 'two-point', form: 'norm' });
    assert.equal(
      tab.summary,
      `✓ All 12 tensors pass: norm-wise rel error ${sci(worstNorm)} ≤ ${normLine
        .toExponential(0)
        .replace('-', '−')}.`,
    );
    // five points: ε becomes 1e-3, the check runs again and equals Node's five-point report
    await page.selectOption(`#${id}-stencil`, 'five-point');
    assert.equal(await page.inputValue(`#${id}-eps`), '1e-3');
    await page.locator(`#${id}[data-done="1"]`).waitFor({ state: 'attached', timeout: 90_000 });
    tab = await panelTable(page, id);
    const five = X.lesson4Gradcheck({ stencil: 'five-point', eps: 1e-3 });
    assertRows(id, tab, five);
    assert.match(tab.caption, /five-point central differences .*, ε = 1\.0e−3/);
    // a bad ε: a message, and the last table stays
    await page.fill(`#${id}-eps`, '0');
    await page.locator(`#${id}-eps`).press('Enter');
    await page.locator(`#${id}-eps`).blur();
    assert.match(await page.textContent(`#${id}-eps-error`), /between 1e-15 and 1, got 0/);
    assertRows(id, await panelTable(page, id), five);
    // ε = 1e-8 with two points: rounding takes over, the per-entry line fails
    await page.selectOption(`#${id}-stencil`, 'two-point');
    await page.selectOption(`#${id}-form`, 'entry');
    await page.fill(`#${id}-eps`, '1e-8');
    await page.locator(`#${id}-eps`).blur();
    await page.locator(`#${id}[data-done="1"]`).waitFor({ state: 'attached', timeout: 90_000 });
    tab = await panelTable(page, id);
    const tiny = X.lesson4Gradcheck({ stencil: 'two-point', eps: 1e-8 });
    assertRows(id, tab, tiny);
    assert.match(tab.summary, /^✗ \d+ of 12 tensors fail/);
  } finally {
    await close();
  }
});

test('every heatmap has NPY: np.load gives the matrix it shows, float64', async (t) => {
  const { page, log, close } = await session.open();
  const dir = mkdtempSync(join(tmpdir(), 'mha-npy-'));
  try {
    await waitFiguresDrawn(page);
    await page.evaluate(() => window.mhaPage.build()); // every view, as opening each would
    await showView(page, 'lesson-4');
    await openGoDeeper(page, 'lesson-4'); // (lesson 4's maps are built when it is opened)
    const counts = await page.evaluate(() => ({
      figures: document.querySelectorAll('figure.heatmap').length,
      npy: document.querySelectorAll('figure.heatmap button[data-export="npy"]').length,
    }));
    assert.ok(counts.figures > 40, `${counts.figures} heatmaps`);
    assert.equal(counts.npy, counts.figures, 'one NPY button per heatmap');
    const f = await figures(page);
    const e4 = X.lesson4();
    const T = f.lesson1.tokens.length;
    const cases = [
      ['lesson1-head-A', f.lesson1.A1, [T, T]],
      ['lesson1-difference', f.lesson1.A1.map((v, i) => v - f.lesson1.A2[i]), [T, T]],
      ['lesson4-dWo', e4.grads.dWo, [64, 64]],
      ['lesson4-dX', e4.grads.dX.slice(0, 6 * 64), [6, 64]],
    ];
    for (const [name, want, shape] of cases) {
      const sel = `figure[data-export-name="${name}"] button[data-export="npy"]`;
      const view = name.startsWith('lesson1') ? 'lesson-1' : 'lesson-4';
      await showView(page, view);
      await openAround(page, sel); // (every figure: its export menu)
      await page.locator(sel).scrollIntoViewIfNeeded();
      const file = await download(page, sel, dir);
      assert.equal(file.name, `${name}.npy`);
      const { '': a } = numpyLoad(file.path);
      assert.deepEqual(a.shape, shape, `${name}: shape`);
      assert.equal(a.dtype, '<f8', `${name}: dtype`);
      assertSameArray(Array.from(a.data), want, `${name}.npy through np.load`);
    }
    t.diagnostic(`${counts.npy} NPY buttons; checked ${cases.map((c) => c[0]).join(', ')}`);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await close();
  }
});

/** np.load of a lesson's .npz against the Node API's arrays: same names, shapes, bits. */
function assertSameNpz(got, want, what) {
  assert.deepEqual(Object.keys(got), Object.keys(want), `${what}: names`);
  for (const [name, a] of Object.entries(want)) {
    assert.deepEqual(got[name].shape, a.shape, `${what} ${name}: shape`);
    assert.equal(got[name].dtype, '<f8', `${what} ${name}: dtype`);
    assertSameArray(Array.from(got[name].data), Array.from(a.data), `${what} ${name}`);
  }
}

test('Download arrays (.npz), lessons 1-5: np.load gives the page’s arrays', async (t) => {
  const { page, log, close } = await session.open();
  const dir = mkdtempSync(join(tmpdir(), 'mha-npz-'));
  const model = sentenceModel(X.mha, { tokens: tokenize(X.DEFAULT_SENTENCE) });
  const trainer = new Trainer(X.mha, model);
  try {
    // the page as the user left it: lesson 3 masked, two lesson-5 steps at lr 0.1
    await showView(page, 'l3-causal');
    await page.locator('#l3-causal').check();
    await waitFigures(page, (f) => f.lesson3.causal === true, { key: 'lesson3' });
    await showView(page, 'l5-step');
    for (let k = 1; k <= 2; k++) {
      await page.locator('#l5-step').click();
      await waitFigures(page, (f) => f.lesson5.step === k, { key: 'lesson5' });
      trainer.step(0.1);
    }
    const f = await figures(page);
    const got = {};
    for (let n = 1; n <= 5; n++) {
      await showView(page, `l${n}-arrays`);
      const file = await download(page, `#l${n}-arrays`, dir);
      assert.equal(file.name, `mha-lesson${n}-arrays.npz`);
      got[n] = numpyLoad(file.path);
    }
    // the Node API's arrays for the same state
    const data = courseData(X.mha);
    const want = {
      1: lesson1Arrays(X.mha, { tokens: f.lesson1.tokens }),
      2: lesson2Arrays(lesson2(X.mha)),
      3: lesson3Arrays(X.mha, data, { causal: true }),
      4: lesson4Arrays(X.mha, data),
      5: lesson5Arrays(X.mha, model, {
        weights: trainer.layer.weights,
        att: trainer.att,
        losses: trainer.losses,
        lrs: trainer.lrs,
      }),
    };
    for (let n = 1; n <= 5; n++) assertSameNpz(got[n], want[n], `lesson ${n}`);
    // and the figures the page shows
    assertSameArray(Array.from(got[1].A1.data), f.lesson1.A1, 'lesson 1 A1');
    assertSameArray(Array.from(got[1].A2.data), f.lesson1.A2, 'lesson 1 A2');
    assertSameArray(Array.from(got[3].att.data), f.lesson3.att, 'lesson 3 att (causal)');
    for (const g of X.GRADS) {
      assertSameArray(Array.from(got[4][g].data), f.lesson4.grads[g], `lesson 4 ${g}`);
    }
    assert.equal(got[4].loss.data[0], lesson4(X.mha).loss, 'lesson 4 loss');
    assertSameArray(Array.from(got[5].losses.data), f.lesson5.losses, 'lesson 5 losses');
    assertSameArray(Array.from(got[5].att_after.data), f.lesson5.att, 'lesson 5 att_after');
    t.diagnostic(
      Object.entries(got)
        .map(([n, a]) => `lesson ${n}: ${Object.keys(a).join(' ')}`)
        .join('; '),
    );
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    trainer.free();
    rmSync(dir, { recursive: true, force: true });
    await close();
  }
});
