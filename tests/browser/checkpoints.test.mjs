// The checkpoint box of every lesson and the corrected statements of lessons 1-3, in Chromium:
//   - each lesson shows "Checkpoint — what this lesson's script prints", the lines Node computes
//     through the same model and API (web/model/checkpoints.js on lessonN(); lesson 5: a Trainer at
//     its initial weights), character for character, and updates them with lesson 1's sentence
//     and lesson 3's causal mask; its copy button copies exactly those lines;
//   - the why of lessons 1-3 is there: 1/√hs with the spread of this page's Q Kᵀ and scores
//     measured live (the numbers Node computes), lesson 1's weights random and untrained, the
//     mean over heads marked as a view, why Wo lets heads interact, what lesson 2's proofs cannot
//     show, and every colour bar says what its limits are; the misleading wording is gone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  useBrowser,
  consoleErrors,
  openGoDeeper,
  setValue,
  showView,
  waitFiguresDrawn,
} from './browser.mjs';
import { mha } from './expected.mjs';
import { checkpointLabels, checkpointLine, checkpoints } from '../../web/model/checkpoints.js';
import { AGREEMENT } from '../../web/model/agreement.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { Trainer } from '../../web/jobs/trainer.js';

const session = useBrowser();

/** The checkpoint lines Node computes for each lesson's default view. */
function nodeLines({ sentence = DEFAULT_SENTENCE, causal = false } = {}) {
  const tokens = tokenize(sentence);
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42 });
  const trainer = new Trainer(mha, model);
  try {
    const results = {
      lesson1: lesson1(mha, { tokens }),
      lesson2: lesson2(mha),
      lesson3: lesson3(mha, { causal }),
      lesson4: lesson4(mha),
      lesson5: trainer,
    };
    return Object.fromEntries(
      Object.entries(results).map(([k, r]) => [k, checkpoints(k, r).map(checkpointLine)]),
    );
  } finally {
    trainer.free();
  }
}

/** Each lesson's checkpoints' agreement titles: 'Bit-identical to NumPy' for a draw, etc. */
function nodeKinds() {
  const titles = (lesson) => checkpointLabels(lesson).map((l) => (/^[xX]\[/.test(l) ? 0 : 1));
  const words = [
    `${AGREEMENT.exact.title} (a random draw)`,
    `${AGREEMENT.lastDigits.title} (computed)`,
  ];
  return Object.fromEntries(Object.keys(SECTION).map((k) => [k, titles(k).map((i) => words[i])]));
}

/**
 * Opens the (folded) box of `lesson` (its lines are made when it is first opened), or closes it
 * (open: false); true when that changed it.
 */
function openBox(page, lesson, open = true) {
  return page.evaluate(
    async ([l, want]) => {
      const box = document.querySelector(`.checkpoints[data-lesson="${l}"]`);
      if (!box || box.open === want) return false;
      const toggled = new Promise((done) => box.addEventListener('toggle', done, { once: true }));
      box.open = want;
      await toggled;
      return true;
    },
    [lesson, open],
  );
}

/**
 * The lines the page's box of `lesson` shows (opened): "label = values", as its <dt> and <dd>
 * read.
 */
async function pageLines(page, lesson) {
  const opened = await openBox(page, lesson);
  const lines = await page.evaluate((l) => {
    const box = document.querySelector(`.checkpoints[data-lesson="${l}"]`);
    if (!box) return null;
    return {
      title: box.querySelector('h3').textContent,
      section: box.closest('section')?.id,
      lines: [...box.querySelectorAll('.checkpoint')].map(
        (c) =>
          `${c.querySelector('dt code').textContent} ${c.querySelector('dd code').textContent}`,
      ),
      kinds: [...box.querySelectorAll('.checkpoint-kind')].map((k) => k.textContent),
      copy: !!box.querySelector('button.copy-button'),
    };
  }, lesson);
  if (opened) await openBox(page, lesson, false); // (folded again, as the page shows it)
  return lines;
}

const SECTION = {
  lesson1: 'lesson-1',
  lesson2: 'lesson-2',
  lesson3: 'lesson-3',
  lesson4: 'lesson-4',
  lesson5: 'lesson-5',
};

test("every lesson's checkpoint box shows the Node API's values; the copy button", async (t) => {
  const { page, context, log, close } = await session.open();
  try {
    await page.evaluate(() => window.mhaPage.build()); // every lesson, as opening each would
    const want = nodeLines();
    const kinds = nodeKinds();
    for (const lesson of Object.keys(SECTION)) {
      const got = await pageLines(page, lesson);
      assert.ok(got, `${lesson}: no checkpoint box`);
      assert.equal(got.title, 'Checkpoint — what this lesson’s script prints');
      assert.equal(got.section, SECTION[lesson], `${lesson}: the box is in its section`);
      assert.deepEqual(got.lines, want[lesson], `${lesson}: the box's lines`);
      assert.ok(got.copy, `${lesson}: a copy button`);
      // each entry says how it agrees with NumPy, in web/model/agreement.js's words
      assert.deepEqual(got.kinds, kinds[lesson]);
      t.diagnostic(`${lesson}: ${got.lines.join(' | ')}`);
    }
    // the copy button copies the box's lines, one per line
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(session.url).origin,
    });
    await showView(page, 'lesson-2');
    // the box is folded, as the script is: opened, its copy button copies
    assert.equal(
      await page.locator('.checkpoints[data-lesson="lesson2"]').getAttribute('open'),
      null,
    );
    await page.locator('.checkpoints[data-lesson="lesson2"] > summary').click();
    await page.locator('.checkpoints[data-lesson="lesson2"] button.copy-button').click();
    await page.waitForFunction(() =>
      document.querySelector('.checkpoints[data-lesson="lesson2"] .copy-button.is-copied'),
    );
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, want.lesson2.join('\n'));
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

test("the boxes follow lesson 1's sentence and lesson 3's causal mask", async () => {
  const { page, log, close } = await session.open('#lesson-1');
  try {
    const sentence = 'Boats guide the lanterns home';
    await openBox(page, 'lesson1');
    await setValue(page, '#l1-sentence', sentence);
    const want1 = nodeLines({ sentence }).lesson1;
    await page.waitForFunction(
      (w) =>
        [...document.querySelectorAll('.checkpoints[data-lesson="lesson1"] dd code')].map(
          (c) => c.textContent,
        )[0] === w,
      want1[0].split(' = ')[1],
    );
    assert.deepEqual((await pageLines(page, 'lesson1')).lines, want1);
    await showView(page, 'l3-causal');
    await openBox(page, 'lesson3');
    await page.locator('#l3-causal').check();
    const want3 = nodeLines({ causal: true }).lesson3;
    await page.waitForFunction(
      (w) =>
        document.querySelectorAll('.checkpoints[data-lesson="lesson3"] dd code')[3]?.textContent ===
        w,
      want3[3].split(' = ')[1],
    );
    assert.deepEqual((await pageLines(page, 'lesson3')).lines, want3);
    assert.notDeepEqual(want3, nodeLines().lesson3, 'the mask changes headout and Y');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

/** The text of the lesson bodies, the notes' texts by class, and the legends' notes. */
function lessonTexts() {
  const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent);
  return {
    bodies: text('#l1-body, #l2-body, #l3-body').join('\n'),
    untrained: text('#l1-body .untrained-note'),
    proofs: text('#l2-body .proofs-note'),
    scaling: text('#l3-body .why-scaling'),
    scalingNums: [...document.querySelectorAll('#l3-body .why-scaling .fig-num')].map(
      (s) => s.dataset.full,
    ),
    mean: text('#l3-body .mean-note'),
    meanTitles: text('#l3-body .heatmap-title').filter((s) => /mean over heads/.test(s)),
    headings: text('#l3-body h3'),
    wo: text('#l3-body .why-wo'),
    legends: document.querySelectorAll('.legend').length,
    legendNotes: text('.legend > .legend-note'),
    unitNotes: [...document.querySelectorAll('.legend-unit > .legend-note')].map(
      (e) => e.textContent,
    ),
    divergingNotes: [...document.querySelectorAll('.legend-diverging > .legend-note')].map(
      (e) => e.textContent,
    ),
  };
}

test('the why of lessons 1-3, with live numbers; the misleading wording gone', async (t) => {
  const { page, log, close } = await session.open();
  try {
    await waitFiguresDrawn(page);
    await page.evaluate(() => window.mhaPage.build()); // every lesson, as opening each would
    await showView(page, 'lesson-3');
    await openGoDeeper(page, 'lesson-3'); // (the why of ÷ √hs, of Wo, of the mean: built then)
    const x = await page.evaluate(lessonTexts);
    const r1 = lesson1(mha, { tokens: tokenize(DEFAULT_SENTENCE) });
    const r3 = lesson3(mha, {});
    // lesson 1: the weights are random and untrained, where the page reads attention as language
    assert.equal(x.untrained.length, 1);
    assert.match(x.untrained[0], /^These weights are random and untrained/);
    const { query, key } = r1.strongest;
    assert.deepEqual([r1.tokens[query], r1.tokens[key]], ['guide', 'Bay']);
    assert.ok(x.untrained[0].includes('‘guide’ attends most to ‘Bay’ in head A'), x.untrained[0]);
    assert.match(x.untrained[0], /not of English/);
    // lesson 2: the proofs would be 0 with a wrong Wq too; the value to match is given
    assert.match(x.proofs[0], /What they cannot show: that q is right/);
    assert.match(x.proofs[0], /0 with a wrong Wq too/);
    assert.match(x.proofs[0], /heads\[0, 1, 0, :4\] and \(x @ Wq\[:, hs:2\*hs\]\)\[0, 0, :4\]/);
    // lesson 3: why ÷ √hs, with the page's own spreads (Node's numbers, every digit)
    assert.match(x.scaling[0], /^Why ÷ √hs: each score is a dot product of hs = 16 terms/);
    assert.match(x.scaling[0], /standard deviation about √hs = 4/);
    assert.deepEqual(x.scalingNums, [String(r3.scoreSpread.before), String(r3.scoreSpread.after)]);
    assert.match(x.scaling[0], /over all 288 entries/);
    // the mean over heads is a view, not a step of the layer
    assert.match(x.mean[0], /a view for the eye, not a step of the layer/);
    assert.match(x.mean[0], /never averages its heads\. It concatenates/);
    assert.equal(x.meanTitles.length, 2);
    for (const s of x.meanTitles) assert.match(s, /\(a view, not a layer step\)$/);
    assert.ok(!x.headings.some((h) => /heads and their mean$/.test(h)), x.headings.join('; '));
    // why Wo lets the heads interact
    assert.match(x.wo[0], /^Why Wo is where the heads interact/);
    assert.match(x.wo[0], /only the off-diagonal blocks let one output column read several heads/);
    assert.ok(!x.bodies.includes('Y = concat @ Wo. With Wo block-diagonal (the off-diagonal'));
    // every colour bar says its limits
    assert.ok(x.legends > 40, `${x.legends} legends`);
    assert.equal(x.legendNotes.length, x.legends, 'a note under every legend');
    assert.ok(
      x.unitNotes.length > 10 && x.unitNotes.every((s) => s === 'limits: fixed at 0 and 1'),
    );
    const diverging = new Set(x.divergingNotes);
    assert.deepEqual([...diverging].sort(), [
      'limits: ± the largest |value| in this map',
      'limits: ± the largest |value| of the maps that share this scale',
    ]);
    t.diagnostic(
      `${x.legends} legends (${x.unitNotes.length} attention, ${x.divergingNotes.length} signed); ` +
        `spread of Q Kᵀ ${x.scalingNums[0]}, of the scores ${x.scalingNums[1]}`,
    );
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});

// Issue 19: lesson 3's wording that named Y's column blocks after heads (under the full Wo a column
// of Y belongs to no head), as the page used to print it; never to come back
const OLD_L3 = [
  'block 0 (head 0)',
  'block 1 (head 1)',
  "(head 0's block)",
  'every block changes',
  'max |ΔY| per block',
  'carries head i into output block j',
  'moves only block 0 of Y',
];

/** Lesson 3's block experiment as the page shows it: table, map labels, notes, figures list. */
function blockTexts() {
  const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.textContent);
  const table = [...document.querySelectorAll('#l3-body table')].find((t) =>
    t.caption?.textContent.startsWith('Add 1.0 to every entry'),
  );
  const maps = [...document.querySelectorAll('#l3-body figure.heatmap')].filter((f) =>
    f.querySelector('.heatmap-title').textContent.startsWith('ΔY'),
  );
  return {
    body: document.querySelector('#l3-body').innerText,
    headers: [...table.querySelectorAll('thead th')].map((th) => th.textContent),
    rows: [...table.querySelectorAll('tbody tr')].map((tr) =>
      [...tr.children].slice(0, 2).map((c) => c.textContent),
    ),
    notes: maps.map((f) => f.querySelector('.heatmap-note').textContent),
    mapText: maps.map((f) => f.textContent).join('\n'),
    rowsNote: text('#l3-body .why-rows'),
    rowsNums: [...document.querySelectorAll('#l3-body .why-rows .fig-num')].map(
      (s) => s.dataset.full,
    ),
    figs: text('#l3-body .figures-list .stat dt'),
  };
}

test("lesson 3: Y's columns named as columns, heads where true; ΔY's equal rows", async (t) => {
  const { page, log, close } = await session.open('#lesson-3');
  try {
    await waitFiguresDrawn(page);
    await openGoDeeper(page, 'lesson-3'); // (why ΔY's rows are equal: built when opened)
    const x = await page.evaluate(blockTexts);
    const r3 = lesson3(mha, {});
    assert.deepEqual(x.headers, [
      'columns of Y',
      'with the block-diagonal Wo, they read',
      'block-diagonal Wo: max |ΔY|',
      'full Wo: max |ΔY|',
    ]);
    assert.deepEqual(x.rows, [
      ['columns 0–15', 'head 0 only'],
      ['columns 16–31', 'head 1 only'],
      ['columns 32–47', 'head 2 only'],
      ['columns 48–63', 'head 3 only'],
    ]);
    assert.deepEqual(x.notes, [
      'only columns 0–15 change: they read only head 0',
      'every column block changes: each column reads all 4 heads',
    ]);
    // the maps' column labels are Y's column numbers, not heads
    assert.doesNotMatch(x.mapText, /h\d:\d/);
    assert.match(x.mapText, /output column of Y/);
    assert.deepEqual(
      x.figs.filter((s) => s.includes('ΔY')),
      [
        'block-diagonal Wo: max |ΔY| in columns 0–15, 16–31, 32–47, 48–63 of Y',
        'full Wo: max |ΔY| in columns 0–15, 16–31, 32–47, 48–63 of Y',
      ],
    );
    // why every row of ΔY is the same, with Node's numbers (every digit)
    assert.equal(x.rowsNote.length, 1);
    const note = x.rowsNote[0];
    assert.match(note, /^Why every row of ΔY looks the same: the change is headout\[:, 0\] \+= 1/);
    assert.match(note, /for all 12 tokens \(B·T\)/);
    assert.match(note, /ones in head 0's columns 0–15, zeros elsewhere/);
    assert.match(
      note,
      /the sum of Wo's rows 0 to 15, Wo\[:16\]\.sum\(axis=0\), whatever the token/,
    );
    assert.deepEqual(x.rowsNums, [
      String(r3.fullRows.maxDiff),
      String(r3.bdRows.maxDiff),
      String(r3.fullRows.headSum[0]),
    ]);
    assert.ok(r3.fullRows.maxDiff <= 1e-14 && r3.bdRows.maxDiff <= 1e-14);
    for (const old of OLD_L3) assert.ok(!x.body.includes(old), `lesson 3 still says "${old}"`);
    t.diagnostic(`max |ΔY row − Wo[:16].sum(0)|: ${x.rowsNums[0]}, ${x.rowsNums[1]}`);
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
  } finally {
    await close();
  }
});
