// Every figure the page shows (window.mhaPage.figures()) equals the one computed in this Node
// process through the same JS API and wasm (tests/browser/expected.mjs, written from the model
// rules of the contract, not from web/model.js), bit for bit where the computation is the same;
// and the full gradient checks finish in the page, pass (at the tables' first convention, a
// notebook's two-point difference at ε = 1e-5: lesson 4's max rel error <= 1e-5; the MSE checks of
// lesson 5 and the playground: <= 1e-3) and equal layer.gradcheck's report in Node. Once they are
// done (every table complete), the screenshots of each section and of the full page are taken
// (test-results/browser/*.png).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useBrowser,
  figures,
  assertSameArray,
  assertSame,
  fmt,
  screenshotSections,
} from './browser.mjs';
import * as X from './expected.mjs';

const session = useBrowser();

test('the contract tokenizer written here agrees with web/model.js tokenize', async (t) => {
  const { tokenize } = await import('../../web/model/tokens.js');
  const sentences = [
    X.DEFAULT_SENTENCE,
    "Don't panic -- it's 42, isn't it?!",
    'naïve café Ωmega 2024年 über',
    'emoji 👍🏽 and 🦊🦊, tabs\tand\nnewlines  spaced',
    '<img src=x onerror=alert(1)>',
    '  leading and trailing  ',
  ];
  for (const s of sentences) assert.deepEqual(tokenize(s), X.tokenize(s), JSON.stringify(s));
  t.diagnostic(
    sentences
      .map((s) => `${X.tokenize(s).length} tokens: ${JSON.stringify(X.tokenize(s))}`)
      .join('; '),
  );
});

test("figures of every lesson equal the Node API's for the same settings", async (t) => {
  const { page, close } = await session.open();
  try {
    const f = await figures(page);
    for (const k of ['lesson1', 'lesson2', 'lesson3', 'lesson4', 'lesson5', 'playground']) {
      assert.ok(f[k] && typeof f[k] === 'object', `figures().${k} missing`);
    }

    await t.test('lesson 1: A1, A2, maxGap, argmaxDiffRows', (sub) => {
      const e = X.lesson1();
      assert.deepEqual(f.lesson1.tokens, e.tokens, 'tokens');
      assertSameArray(f.lesson1.A1, e.A1, 'A1');
      assertSameArray(f.lesson1.A2, e.A2, 'A2');
      assertSame(f.lesson1.maxGap, e.maxGap, 'maxGap');
      assert.deepEqual(f.lesson1.argmaxDiffRows, e.argmaxDiffRows, 'argmaxDiffRows');
      assert.ok(e.maxGap > 0, 'the two heads attend differently');
      // the rings (each row's argmax) and one head of hs = 64 against four of hs = 16
      assert.deepEqual([f.lesson1.argmax1, f.lesson1.argmax2], [e.argmax1, e.argmax2], 'argmax');
      const c = f.lesson1.compare;
      assert.deepEqual(c.singleArgmax, e.compare.singleArgmax, 'one head of hs = 64');
      assert.deepEqual(c.fourArgmax, e.compare.fourArgmax, 'four heads of hs = 16');
      assert.deepEqual(c.disagreeRows, e.compare.disagreeRows, 'rows the four heads disagree on');
      sub.diagnostic(
        `T=${e.tokens.length}, maxGap=${e.maxGap}, argmax differs in rows [${e.argmaxDiffRows}]`,
      );
    });

    await t.test('lesson 2: shapes, and both proof numbers exactly 0', (sub) => {
      const e = X.lesson2();
      assert.deepEqual(f.lesson2.shapes, e.shapes, 'shapes');
      assertSame(f.lesson2.headMaxDiff, e.headMaxDiff, 'headMaxDiff');
      assertSame(f.lesson2.roundTrip, e.roundTrip, 'roundTrip');
      assert.equal(f.lesson2.headMaxDiff, 0, 'headMaxDiff');
      assert.equal(f.lesson2.roundTrip, 0, 'roundTrip');
      sub.diagnostic(
        `shapes ${JSON.stringify(e.shapes)}, headMaxDiff=${f.lesson2.headMaxDiff}, roundTrip=${f.lesson2.roundTrip}`,
      );
    });

    await t.test('lesson 3: shapes, att, row sums, block-diagonal vs full Wo deltas', (sub) => {
      assert.equal(f.lesson3.causal, false, 'lesson 3 starts without the causal mask');
      const e = X.lesson3({ causal: false });
      assert.deepEqual(f.lesson3.shapes, e.shapes, 'shapes');
      assertSameArray(f.lesson3.att, e.att, 'att');
      assertSame(f.lesson3.rowSumMaxErr, e.rowSumMaxErr, 'rowSumMaxErr');
      assert.ok(f.lesson3.rowSumMaxErr <= 1e-15, `rows sum to 1: ${f.lesson3.rowSumMaxErr}`);
      assertSameArray(f.lesson3.blockDiagDelta, e.blockDiagDelta, 'blockDiagDelta');
      assertSameArray(f.lesson3.fullDelta, e.fullDelta, 'fullDelta');
      // the point of the lesson: block-diagonal Wo keeps head 0's change in its own column block
      assert.ok(
        e.blockDiagDelta[0] > 0 && e.blockDiagDelta.slice(1).every((d) => d === 0),
        `${e.blockDiagDelta}`,
      );
      assert.ok(
        e.fullDelta.every((d) => d > 0),
        `${e.fullDelta}`,
      );
      sub.diagnostic(
        `shapes ${Object.entries(e.shapes)
          .map(([k, s]) => `${k}(${s})`)
          .join(' ')}; rowSumMaxErr=${e.rowSumMaxErr}`,
      );
      sub.diagnostic(
        `max|dY| per column block: block-diagonal Wo [${e.blockDiagDelta.map(fmt)}], full Wo [${e.fullDelta.map(fmt)}]`,
      );
    });

    await t.test('lesson 4: every gradient', (sub) => {
      const e = X.lesson4();
      assert.deepEqual(
        Object.keys(f.lesson4.grads).sort(),
        X.GRADS.slice().sort(),
        'gradient names',
      );
      for (const g of X.GRADS) assertSameArray(f.lesson4.grads[g], e.grads[g], g);
      sub.diagnostic(`${X.GRADS.map((g) => `${g}[${e.grads[g].length}]`).join(' ')} identical`);
    });

    await t.test("lesson 5: tokens, att, losses (a prefix of layer.train's)", (sub) => {
      const e = X.sentenceForward({});
      assert.deepEqual(f.lesson5.tokens, e.tokens, 'tokens');
      assertSameArray(f.lesson5.att, e.att, 'att');
      const losses = X.sentenceLosses({}, f.lesson5.step + 2);
      assert.ok(
        [f.lesson5.step, f.lesson5.step + 1].includes(f.lesson5.losses.length),
        `${f.lesson5.losses.length} losses after ${f.lesson5.step} steps`,
      );
      assertSameArray(f.lesson5.losses, losses.slice(0, f.lesson5.losses.length), 'losses');
      sub.diagnostic(
        `T=${e.tokens.length}, first loss ${losses[0]}, page at step ${f.lesson5.step} shows ${f.lesson5.losses.length} loss(es)`,
      );
    });

    await t.test('playground (defaults): tokens, C, heads, att, Y, losses', (sub) => {
      const s = X.DEFAULT_SETTINGS;
      const e = X.sentenceForward(s);
      assert.deepEqual(f.playground.tokens, e.tokens, 'tokens');
      assert.equal(f.playground.C, s.C);
      assert.equal(f.playground.heads, s.heads);
      assertSameArray(f.playground.att, e.att, 'att');
      assertSameArray(f.playground.Y, e.Y, 'Y');
      const losses = X.sentenceLosses(s, s.steps + 1);
      assert.ok(
        [s.steps, s.steps + 1].includes(f.playground.losses.length),
        `${f.playground.losses.length} losses for ${s.steps} steps`,
      );
      assertSameArray(f.playground.losses, losses.slice(0, f.playground.losses.length), 'losses');
      for (let i = 1; i < f.playground.losses.length; i++) {
        assert.ok(
          f.playground.losses[i] < f.playground.losses[i - 1],
          `loss ${i} did not decrease`,
        );
      }
      sub.diagnostic(`losses ${f.playground.losses.map((l) => l.toFixed(6)).join(' ')}`);
    });
  } finally {
    await close();
  }
});

// rows of a figures() gradcheck against layer.gradcheck's report
function assertSameReport(rows, report, name, threshold) {
  assert.ok(Array.isArray(rows), `${name}: gradcheck rows missing (${rows})`);
  assert.deepEqual(
    rows.map((r) => r.tensor),
    report.map((r) => r.tensor),
    `${name}: tensors`,
  );
  for (const [i, e] of report.entries()) {
    const r = rows[i];
    assert.equal(r.checked, e.checked, `${name} ${e.tensor}: checked`);
    assertSame(r.maxAbs, e.maxAbs, `${name} ${e.tensor}: maxAbs`);
    assertSame(r.maxRel, e.maxRel, `${name} ${e.tensor}: maxRel`);
    assert.ok(r.maxRel <= threshold, `${name} ${e.tensor}: maxRel ${r.maxRel} > ${threshold}`);
  }
}

// the table the page draws in `#id` (header row + one row per tensor) as objects keyed by header
async function readTable(page, id) {
  return page.evaluate((tableId) => {
    const table = document.querySelector(`#${tableId} table`);
    if (!table) return null;
    const headers = [...table.querySelectorAll('thead th, tr:first-child th')].map((th) =>
      th.textContent.trim(),
    );
    const body = [...table.querySelectorAll('tbody tr')].map((tr) =>
      [...tr.children].map((td) => td.textContent.trim()),
    );
    return { headers, body, text: document.getElementById(tableId).textContent };
  }, id);
}

const parseNum = (s) => Number(s.replace(/[−–]/g, '-').replace(/\s*[×x]\s*10\^?([-−]?\d+)/, 'e$1'));

test('in-page full gradient checks finish, pass, and equal layer.gradcheck in Node', async (t) => {
  const t0 = Date.now();
  const { page, close } = await session.open();
  const ready = Date.now() - t0;
  try {
    // every view built, as opening each would: the three checks start (one view at a time)
    await page.evaluate(() => window.mhaPage.build());
    // Node's reports while the page computes its own
    const e4 = X.lesson4Gradcheck();
    const e5 = X.sentenceGradcheck({});
    await page
      .locator('#l4-gradcheck[data-done="1"]')
      .waitFor({ state: 'attached', timeout: 90_000 });
    const done4 = Date.now() - t0;
    await page
      .locator('#l5-gradcheck[data-done="1"]')
      .waitFor({ state: 'attached', timeout: 90_000 });
    await page
      .locator('#pg-gradcheck[data-done="1"]')
      .waitFor({ state: 'attached', timeout: 90_000 });
    const doneAll = Date.now() - t0;
    const f = await figures(page);

    // two points at ε = 1e-5: lesson 4 (dot loss): every entry within 1e-5. The MSE checks (lesson
    // 5, playground) pass at 1e-3, the page's stated line: MSE gradients are T*C times smaller
    // while the rounding floor of the differences stays, so the smallest entries reach ~1.6e-5.
    assertSameReport(f.lesson4.gradcheck, e4, 'lesson 4', 1e-5);
    assertSameReport(f.lesson5.gradcheck, e5, 'lesson 5', 1e-3);
    if (f.playground.sampled) {
      assert.fail(
        `the playground checks only a sample (${JSON.stringify(f.playground.sampled)}) at the default size`,
      );
    }
    assertSameReport(f.playground.gradcheck, e5, 'playground', 1e-3);

    // the lesson-4 table on the page says the same
    const tab = await readTable(page, 'l4-gradcheck');
    assert.ok(tab, '#l4-gradcheck has no <table>');
    const col = (re) => {
      const i = tab.headers.findIndex((h) => re.test(h));
      assert.ok(i >= 0, `no ${re} column in ${JSON.stringify(tab.headers)}`);
      return i;
    };
    const cTensor = col(/tensor/i),
      cRel = col(/per entry/i);
    assert.equal(tab.body.length, e4.length, `table rows: ${tab.body.length}`);
    // the rows in lesson 4's backward order (dWo ... dX), each named by its gradient
    const shown4 = X.GRADS.map((g) => e4.find((e) => `d${e.tensor}` === g)).filter(Boolean);
    assert.equal(shown4.length, e4.length, 'every checked tensor has its gradient in GRADS');
    for (const [i, e] of shown4.entries()) {
      const row = tab.body[i];
      assert.equal(row[cTensor], `d${e.tensor}`, `row ${i} tensor`);
      const rel = parseNum(row[cRel]);
      assert.ok(Number.isFinite(rel), `row ${i}: max rel error "${row[cRel]}" is not a number`);
      assert.ok(rel <= 1e-5, `${e.tensor}: max rel error ${row[cRel]} > 1e-5`);
      assert.ok(
        Math.abs(rel - e.maxRel) <= 0.05 * e.maxRel,
        `${e.tensor}: table shows ${row[cRel]}, Node ${e.maxRel}`,
      );
      assert.match(
        row.join(' '),
        /pass/i,
        `${e.tensor}: row does not say pass: ${row.join(' | ')}`,
      );
      assert.doesNotMatch(row.join(' '), /fail/i, `${e.tensor}: ${row.join(' | ')}`);
    }
    // the finished page, for the eye: one PNG per section and one of the whole page
    const t1 = Date.now();
    const shots = await screenshotSections(page);
    const shotMs = Date.now() - t1;
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    t.diagnostic(
      `screenshots: ${shots.join(', ')}; horizontal overflow at 1280 px: ${overflow} px; took ${shotMs} ms`,
    );
    t.diagnostic(
      `page ready ${ready} ms after goto; lesson-4 check done at ${done4} ms, all three at ${doneAll} ms`,
    );
    t.diagnostic(
      `lesson 4 max rel error: ${e4.map((r) => `${r.tensor} ${fmt(r.maxRel)}`).join(', ')}`,
    );
    t.diagnostic(
      `lesson 5 / playground (mse) max rel error: ${e5.map((r) => `${r.tensor} ${fmt(r.maxRel)}`).join(', ')}`,
    );
    t.diagnostic(
      `entries checked: lesson 4 ${e4.reduce((a, r) => a + r.checked, 0)}, lesson 5 ${e5.reduce((a, r) => a + r.checked, 0)}`,
    );
  } finally {
    await close();
  }
});
