// Lessons 4 and 5 as a student reads them (issue 12): the captions of lesson 4's maps are the
// NumPy that tests/model/captions.test.mjs runs; the check tables go in lesson 4's backward order
// (dWo ... dX), each row named by its gradient; X is called an input; the softmax backward and
// its notation are explained; lesson 5's MSE statement quotes what the page measures (not "512
// times smaller", not a fixed rounding floor); and every step count of lesson 5 counts as its
// script does (after 0, 1 and 10 steps).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useBrowser,
  figures,
  waitFigures,
  waitFiguresDrawn,
  consoleErrors,
  openGoDeeper,
} from './browser.mjs';
import * as X from './expected.mjs';
import { lesson4, lesson4Captions } from '../../web/model/lesson4.js';
import { attentionCaptions, mseScale } from '../../web/model/training.js';
import { courseData } from '../../web/model/course.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { tokenize } from '../../web/model/tokens.js';
import { L4_LINES, conventionThreshold } from '../../web/model/gradcheck-report.js';

const session = useBrowser();

// every statement the issue found wrong, as the page used to print it
const OLD = [
  'parameters checked (Wq, Wk, Wv, Wo, X)',
  'about 512 times smaller',
  'measured on these arrays, not 512 times',
  'Same five-point check as lesson 4',
  'rounding floor (about 10⁻¹³ absolute) stays the same',
  'loss at step 0',
  'loss after step 0',
  'Attention after step',
  'values (1 step)',
  'values (11 steps)',
  'att.T @',
  'dheadout @ V.T',
  'dscores.T @',
  'X.T @ merge(',
  '(initial weights, step 0)',
];

/** The text of `selector` in the page (all matches, joined by newlines). */
const textOf = (page, selector) =>
  page.evaluate(
    (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent).join('\n'),
    selector,
  );

/** Rows of the check table in `#id`: [first cell, ...] per body row. */
const tableRows = (page, id) =>
  page.evaluate(
    (panel) =>
      [...document.querySelectorAll(`#${panel} table tbody tr`)].map((tr) =>
        [...tr.children].map((c) => c.textContent.trim()),
      ),
    id,
  );

/** Lesson 5's figures list as { label: value text }. */
const l5Figures = (page) =>
  page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#l5-body .figures-list .stat')].map((s) => [
        s.querySelector('dt').textContent,
        s.querySelector('dd').textContent,
      ]),
    ),
  );

test("lesson 4: captions are NumPy that runs; the check table in the lesson's order", async () => {
  const { page, log, close } = await session.open('#lesson-4');
  try {
    await waitFiguresDrawn(page);
    await openGoDeeper(page, 'lesson-4'); // (the maps of every gradient)
    const maps = await page.evaluate(() =>
      [...document.querySelectorAll('#l4-body figure.heatmap')].map((f) => ({
        title: f.querySelector('.heatmap-title').textContent,
        note: f.querySelector('.heatmap-note').textContent,
      })),
    );
    const caps = lesson4Captions(X.mha);
    assert.deepEqual(
      maps.map((m) => m.note),
      caps.map((c) => `${c.name} = ${c.code}`),
    );
    // the title indexes the gradient the caption computes: 4. dV[0, 0] ...
    maps.forEach((m, k) => assert.ok(m.title.startsWith(`${k + 1}. ${caps[k].name}`), m.title));
    assert.ok(maps.some((m) => m.note === 'dV = att.transpose(0, 1, 3, 2) @ dheadout'));
    assert.ok(maps.some((m) => m.note === 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)'));

    await page.locator('#l4-gradcheck[data-done="1"]').waitFor({ timeout: 90_000 });
    const rows = await tableRows(page, 'l4-gradcheck');
    const order = ['dWo', 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK'];
    assert.deepEqual(
      rows.map((r) => r[0]),
      [...order, 'dWq', 'dWk', 'dWv', 'dX'],
    );
    assert.deepEqual(
      rows.map((r) => r[0]),
      X.GRADS,
      "the rows follow lesson 4's gradients",
    );
    for (const r of rows) assert.match(r.at(-1), /pass/, r.join(' | '));
    // dX is the input's gradient, with X's shape; dWo a weight's
    assert.equal(rows.find((r) => r[0] === 'dX')[1], '(2, 6, 64)');
    assert.equal(rows.find((r) => r[0] === 'dWo')[1], '(64, 64)');

    const body = await textOf(page, '#l4-body');
    assert.match(body, /parameters checked \(Wq, Wk, Wv, Wo\) and the input X/);
    assert.match(body, /the parameters Wq, Wk, Wv, Wo and the input X/);
    // ⊙ and rowsum defined before lesson 4's body uses them, then the softmax backward
    const notation = await textOf(page, '#l4-body .notation');
    assert.match(notation, /⊙ B is the element-wise product \(NumPy: A \* B\)/);
    assert.match(notation, /rowsum\(A\) sums each row of A/);
    assert.ok(body.indexOf(notation) < body.indexOf('L = sum(dY ⊙ Y)'), 'notation first');
    const why = await page.evaluate(() =>
      [...document.querySelectorAll('#l4-body .softmax-why li')].map((li) => li.textContent),
    );
    assert.equal(why.length, 3);
    assert.match(why[0], /∂att_j\/∂s_k = att_j \(δ_jk − att_k\)/);
    assert.match(why[2], /dscores = att ⊙ \(datt − rowsum\(datt ⊙ att\)\)/);
    for (const old of OLD) assert.ok(!body.includes(old), `lesson 4 still says "${old}"`);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

/** Lesson 4's matmul rule and dX's three terms as the page shows them. */
function ruleTexts() {
  const cells = (sel) =>
    [...document.querySelectorAll(`${sel} tbody tr`)].map((tr) =>
      [...tr.children].map((c) => c.textContent),
    );
  const body = document.querySelector('#l4-body').innerText;
  const at = (sel) => body.indexOf(document.querySelector(sel).innerText.slice(0, 40));
  return {
    rule: document.querySelector('#l4-body .matmul-rule > p').textContent,
    rules: cells('#l4-body .matmul-rule'),
    paths: cells('#l4-body .dx-paths'),
    why: document.querySelector('#l4-body .why-dx').textContent,
    nums: [...document.querySelectorAll('#l4-body .why-dx .fig-num')].map((s) => s.dataset.full),
    notation: document.querySelector('#l4-body .notation').textContent,
    order: [at('.notation'), at('.matmul-rule'), at('.softmax-why'), at('.dx-paths')],
  };
}

test('lesson 4: the matmul rule checked by the shapes; why dX sums three terms', async (t) => {
  const { page, log, close } = await session.open('#lesson-4');
  try {
    await waitFiguresDrawn(page);
    await openGoDeeper(page, 'lesson-4'); // (the rules: in Go deeper, built when opened)
    const x = await page.evaluate(ruleTexts);
    // before the softmax derivation, after the notation; the three paths after the softmax
    assert.ok(
      x.order.every((v, k) => v >= 0 && (k === 0 || v > x.order[k - 1])),
      `${x.order}`,
    );
    assert.match(x.rule, /for P = A @ B, dA = dP @ Bᵀ and dB = Aᵀ @ dP/);
    assert.match(x.rule, /sums over all B·T of them/);
    assert.match(x.rule, /Check it by shapes/);
    // B = 2, T = 6, C = 64, h = 4, hs = 16: the shapes as NumPy's matmul gives them
    assert.deepEqual(
      x.rules.map((r) => [r[0], r[1], r[3], r[4]]),
      [
        [
          'dconcat',
          'Y = concat @ Wo',
          '(2, 6, 64) @ (64, 64) → (2, 6, 64)',
          'concat: (2, 6, 64) ✓',
        ],
        ['dWo', 'Y = concat @ Wo', '(64, 12) @ (12, 64) → (64, 64)', 'Wo: (64, 64) ✓'],
        [
          'datt',
          'headout = att @ V',
          '(2, 4, 6, 16) @ (2, 4, 16, 6) → (2, 4, 6, 6)',
          'att: (2, 4, 6, 6) ✓',
        ],
        [
          'dV',
          'headout = att @ V',
          '(2, 4, 6, 6) @ (2, 4, 6, 16) → (2, 4, 6, 16)',
          'V: (2, 4, 6, 16) ✓',
        ],
        [
          'dQ',
          'scores = Q @ Kᵀ / √hs',
          '(2, 4, 6, 6) @ (2, 4, 6, 16) → (2, 4, 6, 16)',
          'Q: (2, 4, 6, 16) ✓',
        ],
        [
          'dKᵀ',
          'scores = Q @ Kᵀ / √hs',
          '(2, 4, 16, 6) @ (2, 4, 6, 6) → (2, 4, 16, 6)',
          'Kᵀ: (2, 4, 16, 6) ✓',
        ],
      ],
    );
    assert.deepEqual(
      x.rules.map((r) => r[2]),
      [
        'dY @ Woᵀ',
        'concatᵀ @ dY, summed over batch and tokens (B·T = 12 rows)',
        'dheadout @ Vᵀ',
        'attᵀ @ dheadout',
        'dscores @ K / √hs ((Kᵀ)ᵀ = K)',
        'Qᵀ @ dscores / √hs; its transpose: dK = dscoresᵀ @ Q / √hs',
      ],
    );
    // dX's three terms, each checked by shapes, with Node's numbers (NumPy's in tests/model)
    const p = lesson4(X.mha).xPaths;
    assert.deepEqual(
      x.paths.map((r) => r.slice(0, 4)),
      ['Q', 'K', 'V'].map((v) => [
        `d${v}m @ W${v.toLowerCase()}ᵀ`,
        `${v} = X @ W${v.toLowerCase()}`,
        '(2, 6, 64) @ (64, 64) → (2, 6, 64)',
        'X: (2, 6, 64) ✓',
      ]),
    );
    assert.match(x.why, /dX = dQm @ Wqᵀ \+ dKm @ Wkᵀ \+ dVm @ Wvᵀ, where dQm = merge_heads\(dQ\)/);
    const normLine = conventionThreshold(L4_LINES, { stencil: 'two-point', form: 'norm' });
    const lineText = normLine.toExponential(0).replace('-', '−');
    assert.ok(x.why.includes(`norm-wise pass line is ${lineText} (two points)`), x.why);
    const least = Math.min(...p.paths.map((q) => q.leftOut)) / normLine;
    assert.deepEqual(x.nums, [
      String(p.sumMaxDiff),
      ...p.paths.map((q) => String(q.leftOut)),
      String(least),
    ]);
    assert.ok(p.sumMaxDiff <= 1e-14 && least > 1e5, `${p.sumMaxDiff} ${least}`);
    // split_heads and merge_heads defined before the captions use them
    assert.match(x.notation, /split_heads\(x, h\) is lesson 2's x\.reshape\(B, T, h, hs\)/);
    assert.match(x.notation, /merge_heads\(x\), its inverse, is x\.transpose\(0, 2, 1, 3\)/);
    t.diagnostic(`max |sum − dX| ${x.nums[0]}; left out: ${x.nums.slice(1, 4).join(', ')}`);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

test("lesson 5: the MSE statement quotes the page's measurements", async () => {
  const { page, log, close } = await session.open('#lesson-5');
  try {
    // the line and why in brief, then the measured reasons (in Go deeper)
    const note = await textOf(page, '#l5-body .mse-scale, #l5-body .mse-scale-why');
    const model = sentenceModel(X.mha, { tokens: tokenize(X.DEFAULT_SENTENCE) });
    const s = mseScale(X.mha, courseData(X.mha), model);
    const ratios = s.weights.map((w) => String(Math.round(w.ratio)));
    assert.deepEqual(ratios, ['225', '219', '180', '238']);
    assert.ok(
      note.includes(`‖dWq‖, ‖dWk‖, ‖dWv‖ and ‖dWo‖ here are ${ratios.slice(0, 3).join(', ')}`),
      note,
    );
    assert.match(note, /times smaller than in lesson 4, measured on these arrays \(the rest/);
    // no straw man: the size is derived from dL/dY = 2(Y − target)/n, not set against a guess
    assert.doesNotMatch(note, /not 512 times/);
    assert.match(note, /so dL\/dY = 2\(Y − target\)\/n: each entry is one output's error divided/);
    assert.match(note, /Its root mean square is 2√L\/n = 0\.00445/);
    assert.match(note, /against 0\.992 for lesson 4's dY, whose entries are standard normals: 223/);
    assert.match(note, /\|L\| = 17\.0 in lesson 4, 1\.30 here/);
    // this table's absolute errors, once its check has run (Node's report, formatted as the table)
    await page.locator('#l5-gradcheck[data-done="1"]').waitFor({ timeout: 90_000 });
    const report = X.sentenceGradcheck({});
    const sci = (x) => x.toExponential(2).replace(/-/g, '−');
    const abs = report.map((r) => r.maxAbs);
    const after = await textOf(page, '#l5-body .mse-scale-why');
    assert.ok(
      after.includes(`run from ${sci(Math.min(...abs))} to ${sci(Math.max(...abs))}.`),
      after,
    );
    // its rows too: lesson 4's order, named by gradient
    const rows = await tableRows(page, 'l5-gradcheck');
    assert.deepEqual(
      rows.map((r) => r[0]),
      X.GRADS,
    );
    const body = await textOf(page, '#l5-body');
    for (const old of OLD) assert.ok(!body.includes(old), `lesson 5 still says "${old}"`);
    assert.doesNotMatch(body, /stays the same/);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

/** What lesson 5 says about its steps, after k of them. */
async function stepTexts(page) {
  return {
    figs: await l5Figures(page),
    title: await textOf(page, '#l5-body details.go-deeper > h3'),
    header: await textOf(page, '#l5-body .figure-row > div table thead'),
    first: await textOf(page, '#l5-body .figure-row > div table tbody tr:first-child'),
    rows: await page.evaluate(
      () => document.querySelectorAll('#l5-body .figure-row > div table tbody tr').length,
    ),
    summary: await textOf(page, '#l5-body details.chart-values > summary'),
  };
}

async function expectSteps(page, k) {
  const w = await stepTexts(page);
  const steps = k === 1 ? '1 step' : `${k} steps`;
  assert.equal(w.figs['steps taken'], String(k), JSON.stringify(w.figs));
  assert.ok('loss after 0 steps (initial weights)' in w.figs, JSON.stringify(w.figs));
  if (k === 0) {
    assert.deepEqual(Object.keys(w.figs), ['steps taken', 'loss after 0 steps (initial weights)']);
    assert.match(w.title, /Attention of the initial weights \(0 steps\)/);
    assert.equal(w.summary, 'MSE loss after each step: 1 value (step 0)');
  } else {
    assert.ok(`loss after ${steps}` in w.figs, JSON.stringify(w.figs));
    assert.ok(`change over the ${steps}` in w.figs, JSON.stringify(w.figs));
    assert.match(w.title, new RegExp(`Attention after ${steps}$`, 'm'));
    assert.equal(w.summary, `MSE loss after each step: ${k + 1} values (steps 0–${k})`);
  }
  assert.match(w.header, /steps taken k/);
  assert.match(w.header, /loss after k steps/);
  assert.match(w.first, /^0— \(none yet\)/);
  assert.equal(w.rows, k + 1);
  const all = JSON.stringify(w);
  for (const old of OLD) assert.ok(!all.includes(old), `after ${steps}: "${old}" in ${all}`);
}

test('lesson 5: steps counted as its script counts them, after 0, 1 and 10 steps', async () => {
  const { page, log, close } = await session.open('#lesson-5');
  try {
    await expectSteps(page, 0);
    await page.locator('#l5-step').click();
    await waitFigures(page, (f) => f.lesson5.step === 1, { key: 'lesson5', what: 'one step' });
    await expectSteps(page, 1);
    await page.locator('#l5-reset').click();
    await waitFigures(page, (f) => f.lesson5.step === 0, { key: 'lesson5', what: 'reset' });
    await expectSteps(page, 0);
    await page.locator('#l5-run').click();
    await waitFigures(page, (f) => f.lesson5.step === 10, { key: 'lesson5', what: 'ten steps' });
    await expectSteps(page, 10);
    // losses[k] is the loss after k steps, as the script's `losses` list
    const f = await figures(page, 'lesson5');
    assert.equal(f.losses.length, 11);
    assert.deepEqual(log.errors, []);
    assert.deepEqual(consoleErrors(log), []);
  } finally {
    await close();
  }
});

test("lesson 5: the maps' NumPy, the layer built as the course builds it", async () => {
  const { page, log, close } = await session.open('#lesson-5');
  try {
    await waitFiguresDrawn(page);
    const maps = await page.evaluate(() =>
      [...document.querySelectorAll('#l5-body figure.heatmap')].map((f) => ({
        shape: f.querySelector('.heatmap-shape').textContent,
        note: f.querySelector('.heatmap-note').textContent,
      })),
    );
    const T = tokenize(X.DEFAULT_SENTENCE).length;
    assert.deepEqual(
      maps.map((m) => m.shape),
      attentionCaptions(4).map((c) => `${c.code} (${T}, ${T})`),
    );
    assert.match(maps.at(-1).note, /not a step of the layer: it concatenates the heads/);
    const intro = await textOf(page, '#l5-body .sentence-display');
    assert.match(intro, /MultiHeadAttention\(C, h, seed=rng\) draws Wq, Wk, Wv, Wo/);
    const listing = await textOf(page, '#l5-body details pre');
    assert.match(listing, /def __init__\(self, C, h, seed=0, causal=False\):/);
    assert.doesNotMatch(listing, /MultiHeadAttention\(Wq/);
    assert.deepEqual(log.errors, []);
  } finally {
    await close();
  }
});
