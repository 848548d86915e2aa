// The page's main thread and the playground at GPT-2 size:
//   - a load marks mha:ready (the first view, Start here, rendered: no lesson's mha:lesson-N
//     mark) and mha:checks-done; every view built then (as opening each would), each lesson
//     marks mha:lesson-N and, once every background check has finished, mha:checks-done again
//     (#status says so); the long tasks until then (PerformanceObserver 'longtask', from the
//     document's start) go to a diagnostic only: timings are the bench's business (npm run
//     bench:page), never a test's;
//   - the preset "GPT-2 small" (C = 768, h = 12) with a 64-token sentence: the attention equals the
//     Node API's bit for bit, one head at a time (no grid above 32 tokens), the focus map's NPY is
//     the picked head's (64, 64) matrix, and the head picker switches it; at 128 tokens the same
//     with a (128, 128) map.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  useBrowser,
  waitFigures,
  setValue,
  consoleErrors,
  assertSameArray,
  openAround,
} from './browser.mjs';
import * as X from './expected.mjs';
import { numpyLoad } from '../model/ipynb-run.mjs';

const session = useBrowser();

/** Records every long task from the document's start (window.__longTasks: [{ start, ms }]). */
function recordLongTasks() {
  window.__longTasks = [];
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        window.__longTasks.push({ start: e.startTime, ms: e.duration });
      }
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    window.__longTasks = null; // no Long Tasks API here
  }
}

const LESSON_MARKS = [
  'mha:lesson-1',
  'mha:lesson-2',
  'mha:lesson-3',
  'mha:lesson-4',
  'mha:lesson-5',
  'mha:playground',
];

test('a load: ready, checks-done; every view built: checks-done again; long tasks', async (t) => {
  const { browser, url } = session;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await context.addInitScript(recordLongTasks);
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    // a mark mha:checks-done at or after `since` (ms): the checks started by then all done (one
    // may come between two views' builds: the checks started so far)
    const checksDone = (since) =>
      page.waitForFunction(
        (t0) =>
          performance.getEntriesByName('mha:checks-done', 'mark').some((m) => m.startTime >= t0),
        since,
        { timeout: 180_000, polling: 100 },
      );
    const marks = (names) => {
      const mark = (n) => performance.getEntriesByName(n, 'mark').at(-1)?.startTime ?? null;
      return {
        ready: mark('mha:ready'),
        done: mark('mha:checks-done'),
        lessons: names.map(mark),
        flag: document.documentElement.dataset.ready,
        status: document.getElementById('status').textContent,
        longTasks: window.__longTasks,
      };
    };
    await checksDone(0);
    const first = await page.evaluate(marks, LESSON_MARKS);
    assert.equal(first.flag, '1', 'data-ready');
    assert.ok(first.ready !== null, 'mha:ready');
    assert.ok(first.done !== null && first.done >= first.ready, 'mha:checks-done after mha:ready');
    assert.deepEqual(
      first.lessons,
      LESSON_MARKS.map(() => null),
      'no lesson built at first',
    );
    const built = await page.evaluate(async () => {
      await window.mhaPage.build();
      return performance.now();
    });
    await checksDone(built);
    const r = await page.evaluate(marks, LESSON_MARKS);
    LESSON_MARKS.forEach((n, i) => {
      assert.ok(r.lessons[i] !== null && r.lessons[i] <= built, `${n} by build()`);
    });
    assert.ok(r.done >= built, 'mha:checks-done again, after the checks of every view');
    assert.match(r.status, /All gradient checks done\./);
    assert.deepEqual(errors, [], 'page errors');
    const tasks = r.longTasks ?? [];
    const until = tasks.filter((x) => x.start < r.done);
    const longest = until.reduce((a, x) => Math.max(a, x.ms), 0);
    t.diagnostic(
      `navigation -> mha:ready ${Math.round(r.ready)} ms; every view built at ` +
        `${Math.round(built)} ms, -> mha:checks-done ${Math.round(r.done)} ms; ${r.longTasks ? `${until.length} long tasks (> 50 ms) until then, the longest ${Math.round(longest)} ms` : 'no Long Tasks API'} (timings: npm run bench:page)`,
    );
  } finally {
    await context.close();
  }
});

/** A sentence of n tokens: the default sentence's words, numbered after the first 8. */
function sentenceOf(n) {
  const words = X.tokenize(X.DEFAULT_SENTENCE);
  return Array.from({ length: n }, (_, i) => (i < 8 ? words[i] : `${words[i % 8]}${i}`)).join(' ');
}

async function download(page, selector, dir) {
  const [dl] = await Promise.all([
    page.waitForEvent('download', { timeout: 20_000 }),
    page.locator(selector).click(),
  ]);
  const path = join(dir, dl.suggestedFilename());
  await dl.saveAs(path);
  return path;
}

/** The focus map's matrix through its NPY button and np.load: { shape, data }. */
async function focusMatrix(page, dir) {
  const sel = 'figure[data-export-name="playground-attention"] button[data-export="npy"]';
  await openAround(page, sel); // the figure's export menu
  await page.locator(sel).scrollIntoViewIfNeeded();
  const { '': a } = numpyLoad(await download(page, sel, dir));
  return a;
}

/** Pick `head` in the head picker; wait until the focus map's title names it. */
async function pickHead(page, head) {
  await page.locator('#pg-head').selectOption(String(head));
  await page.waitForFunction(
    (h) =>
      document
        .querySelector('figure[data-export-name="playground-attention"]')
        ?.textContent.includes(`head ${h},`),
    head,
    { timeout: 20_000 },
  );
}

/** The Node API's attention for the sentence at GPT-2 small, and the page's, compared. */
async function gpt2View(page, sentence) {
  const want = X.sentenceForward({ sentence, C: 768, heads: 12 });
  const T = want.tokens.length;
  const f = await waitFigures(
    page,
    (now) => now.playground.C === 768 && now.playground.tokens.length === T,
    { key: 'playground', timeout: 120_000, what: `the playground at C = 768, T = ${T}` },
  );
  assert.equal(f.playground.heads, 12);
  assert.deepEqual(f.playground.tokens, want.tokens, 'tokens');
  assertSameArray(f.playground.att, want.att, `att (1, 12, ${T}, ${T})`);
  return { want, T };
}

/** The focus map shows head k of `want` (T, T) bit for bit. */
async function assertFocusHead(page, dir, want, T, k) {
  await pickHead(page, k);
  const a = await focusMatrix(page, dir);
  assert.deepEqual(a.shape, [T, T], `head ${k}: shape`);
  assertSameArray(Array.from(a.data), want.att.slice(k * T * T, (k + 1) * T * T), `head ${k}`);
}

test('GPT-2 small: one head at a time, as the Node API has it; the picker switches', async (t) => {
  const { page, log, close } = await session.open('#playground');
  const dir = mkdtempSync(join(tmpdir(), 'mha-gpt2-'));
  try {
    await setValue(page, '#pg-sentence', sentenceOf(64));
    await page.locator('#pg-preset').selectOption('gpt2-small');
    assert.equal(await page.locator('#pg-C').inputValue(), '768', 'the preset sets C');
    assert.equal(await page.locator('#pg-heads').inputValue(), '12', 'the preset sets h');
    const g64 = await gpt2View(page, sentenceOf(64));
    assert.equal(
      await page.locator('#pg-body .figure-grid figure').count(),
      0,
      'no grid at T = 64',
    );
    await assertFocusHead(page, dir, g64.want, 64, 0);
    await assertFocusHead(page, dir, g64.want, 64, 7);
    assert.match(page.url(), /[?&]C=768&h=12/, 'the URL holds the size');

    await setValue(page, '#pg-sentence', sentenceOf(128));
    const g128 = await gpt2View(page, sentenceOf(128));
    await assertFocusHead(page, dir, g128.want, 128, 11);
    await page.locator('#pg-C').selectOption('1024');
    assert.equal(await page.locator('#pg-preset').inputValue(), '', 'C alone: no preset');
    t.diagnostic('GPT-2 small at T = 64 (heads 0, 7) and T = 128 (head 11): bit for bit');
    assert.deepEqual(log.errors, [], 'page errors');
    assert.deepEqual(consoleErrors(log), [], 'console errors');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await close();
  }
});
