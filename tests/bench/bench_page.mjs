#!/usr/bin/env node
// bench_page.mjs - the companion page's timings in headless Chromium (part of `npm run bench`,
// or alone: `npm run bench:page`); never part of the pass/fail tests.
//
// The page shows one view at a time (Start here, a lesson, the check, the playground), the one
// its address names, and builds only that one when it opens; an older build (BENCH_PAGE_WEB)
// built every section at load, scrolled to the #fragment. Fresh loads (a new browser context
// each time, so nothing is cached between loads) over http (tests/serve.mjs) and from file://,
// alternating, each under a Chromium trace, of two views: the default one (Start here, no
// #fragment) and lesson 4's (#lesson-4: the heaviest build, and lesson 4's full gradient check),
// each in its own table. Per load, from the page's own performance entries and the trace
// (tests/bench/page-trace.mjs); a figure the build does not mark is printed as "—":
//   mha:navigation-to-ready   navigation start -> the view opened drawn (app.js marks mha:ready
//                             once the first view's figures are on screen; an older build: once
//                             every section was rendered)
//   mha:in-view               an older build's only: what was in the window drawn (its row is
//                             printed only when a load has the mark)
//   mha:wasm, mha:figures (with mha:ready; an older build: every figure drawn, off-screen too),
//   mha:lesson-1 ... mha:playground (in the results, not printed: only the views built have them)
//   mha:checks-done           navigation start -> every background check done (app.js marks it
//                             when the scheduler and the compute engine are idle, again each time
//                             a view opened later has started more: the first mark is the load's;
//                             a page without the mark: when #status says "All gradient checks
//                             done.")
//   mha:gradcheck:l4-gradcheck  lesson 4's full check at course size (where lesson 4 is built: its
//                             view; an older build: every load): its own slices (busyMs), start ->
//                             done (measure), done after navigation (mark)
//   CPU time                  from the trace: every thread's own time in its tasks from navigation
//                             to ready and to checks done (the page's main thread, its compute
//                             workers, the browser's other threads), and all of it / cores: the
//                             least wall time that much work can take on this machine
//   main-thread tasks         every top-level task of the page's main thread from navigation to
//                             checks done (tests/bench/page-trace.mjs): the
//                             longest, and how many took over 50 ms; also in thread time (the
//                             task's own CPU time: a loaded machine's preemption left out); and
//                             the page's own: from its first script (mha:boot; a build without
//                             it: mha:start) to checks done, the longest and how many over 50 ms
// The GPT-2-size edit (over http, fresh loads): the playground opened at T = 64, C = 768,
// h = 12 (?s=<64 tokens>&C=768&h=12: a query with the playground's settings and no #fragment
// opens the playground's view); once its first view is shown, one word of the sentence is
// changed (input + change events, as typing and leaving the field do); timed from the event to
// the mark the playground makes when the shown head's attention of the new view is drawn
// (mha:pg-attention), with the longest main-thread task in between.
// The simulated phone (fresh loads over http): a 390x844 mobile viewport (device scale 3, touch)
// with the CPU throttled 4x (CDP Emulation.setCPUThrottlingRate), opened at the top (Start here)
// and at lesson 4's gradient check (#l4-gradcheck, as a link to it would: lesson 4's view,
// scrolled to the panel): first contentful paint, the page's script start (mha:start), the wasm
// compiled (mha:wasm), the first view drawn (mha:ready; an older build: every section, and what
// was in the window drawn, mha:in-view, beside it), every check in the window done (the
// gradient-check panels in the window at data-done="1"; none in the window: "—"), every check
// done, and its main-thread tasks (over 50 and 100 ms; the page's own from its first script).
// Printed: median, min and max per quantity, the floor beside every figure, the load average
// (1, 5, 15 min) before and after, and web/mha.wasm's size raw and gzipped. The floor: the same
// index.html and style.css with app.bundle.js replaced by one performance.mark (served from a
// temporary copy), loaded on the same device and traced: beside a time counted from navigation,
// when its script ran (how long after navigation any script of the page can start); beside a
// task figure, its own (its tasks from navigation until 1 s after it is drawn). The blank page
// (one paragraph, no style sheet, the same one-line script), measured the same way, gives what
// any page costs this browser here; the page's own tasks are also counted from its first script
// (mha:boot) on, leaving out the navigation and the first layout that come before it.
//
// BENCH_PAGE_PROFILE=1 adds one profiled load and one profiled edit with a readable (unminified)
// bundle: the functions V8's sampling profiler saw in the longest tasks, by self time.
//
// Environment: BENCH_PAGE_LOADS=11 (>= 1; of each view, each way), BENCH_PAGE_EDITS (default:
// the loads), BENCH_PAGE_PHONE_LOADS (default: the loads, of each; 0 leaves the phone out),
// BENCH_PAGE_PROFILE=0, BENCH_PAGE_QUERY (appended to each load's address, e.g. '?workers=2'),
// BENCH_PAGE_WEB (another build of web/ to measure, e.g. a worktree of an earlier commit's),
// MHA_CHROMIUM=/usr/bin/chromium.
// Needs the bundle: `make wasm bundle` (npm run bench:page builds it).

import fs from 'node:fs';
import os from 'node:os';
import { serve } from '../serve.mjs';
import { bundlePage } from '../tools/bundle.mjs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchBrowser, webDir as ownWebDir, CHROMIUM } from '../browser/browser.mjs';
import {
  cpuBudget,
  hotFunctions,
  mainThread,
  readTrace,
  taskParts,
  taskStats,
  traceCategories,
} from './page-trace.mjs';

function countFromEnv(name, fallback) {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`bench_page: ${name} must be an integer >= 0, got ${process.env[name]}`);
    process.exit(2);
  }
  return v;
}
const LOADS = countFromEnv('BENCH_PAGE_LOADS', 11);
const EDITS = countFromEnv('BENCH_PAGE_EDITS', LOADS);
const PHONE_LOADS = countFromEnv('BENCH_PAGE_PHONE_LOADS', LOADS);
const PROFILE = process.env.BENCH_PAGE_PROFILE === '1';
// appended to every load's address, to compare settings (e.g. '?workers=2')
const QUERY = process.env.BENCH_PAGE_QUERY ?? '';
const CORES = os.cpus().length;
// the page measured: web/, or another build of it (e.g. an earlier commit's, for before -> after)
const webDir = path.resolve(process.env.BENCH_PAGE_WEB ?? ownWebDir);
const fileUrl = pathToFileURL(path.join(webDir, 'index.html')).href;
if (LOADS < 1) {
  console.error('bench_page: BENCH_PAGE_LOADS must be >= 1');
  process.exit(2);
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
// a figure the build does not mark (or a load could not measure): "—"
const ms = (x) => (Number.isFinite(x) ? `${Math.round(x)} ms` : '—');
const count = (x) => (Number.isFinite(x) ? String(Math.round(x)) : '—');
const loadAverage = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');

// The GPT-2-size playground: the default sentence eight times (64 tokens), then its last word
// changed (still 64 tokens, one more word in the vocabulary).
const GPT2 = { C: 768, h: 12 };
const SENTENCE_64 = Array(8).fill('The lanterns of Lantern Bay guide boats home').join(' ');
const EDITED_64 = SENTENCE_64.replace(/home$/, 'harbour');
const gpt2Query = `?s=${encodeURIComponent(SENTENCE_64)}&C=${GPT2.C}&h=${GPT2.h}`;

/** The devices: this machine's desktop window, and a mid-tier phone simulated by Chromium. */
const DEVICES = {
  desktop: { context: { viewport: { width: 1280, height: 900 } }, cpuThrottle: 1 },
  phone: {
    context: {
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 3,
      isMobile: true,
      hasTouch: true,
    },
    cpuThrottle: 4,
  },
};

/**
 * Records when #status first says every check is done (for a page without mha:checks-done), and
 * when every gradient-check panel in the window is done (window.__benchChecksInView; only when
 * one is in the window).
 */
function watchStatus() {
  document.addEventListener('DOMContentLoaded', () => {
    const status = document.getElementById('status');
    if (!status) return;
    const mo = new MutationObserver(() => {
      if (!status.textContent.includes('All gradient checks done')) return;
      window.__benchChecksDone = performance.now();
      mo.disconnect();
    });
    mo.observe(status, { childList: true, characterData: true, subtree: true });
    const inWindow = (e) => {
      const r = e.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight && r.height > 0;
    };
    const panels = new MutationObserver(() => {
      const seen = [...document.querySelectorAll('[id$="-gradcheck"]')].filter(inWindow);
      if (!seen.length || seen.some((p) => p.dataset.done !== '1')) return;
      window.__benchChecksInView = performance.now();
      panels.disconnect();
    });
    panels.observe(document.body, {
      attributes: true,
      attributeFilter: ['data-done'],
      subtree: true,
    });
  });
}

async function newPage(browser, device = DEVICES.desktop) {
  const context = await browser.newContext(device.context);
  await context.addInitScript(watchStatus);
  const page = await context.newPage();
  if (device.cpuThrottle !== 1) {
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: device.cpuThrottle });
  }
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}

/** url with BENCH_PAGE_QUERY before its #fragment. */
function withQuery(url) {
  const [base, hash] = url.split('#');
  return `${base}${QUERY}${hash === undefined ? '' : `#${hash}`}`;
}

/** The page's performance entries after every check is done (ms after navigation). */
function readMarks() {
  const mark = (n) => performance.getEntriesByName(n, 'mark')[0]?.startTime ?? NaN;
  const measure = (n) => performance.getEntriesByName(n, 'measure')[0];
  const l4 = measure('mha:gradcheck:l4-gradcheck');
  const done = mark('mha:checks-done');
  return {
    ready: measure('mha:navigation-to-ready')?.duration ?? NaN,
    fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
    inView: mark('mha:in-view'),
    checksInView: window.__benchChecksInView ?? NaN,
    start: mark('mha:start'),
    boot: mark('mha:boot'),
    wasm: mark('mha:wasm'),
    lessons: [
      'mha:lesson-1',
      'mha:lesson-2',
      'mha:lesson-3',
      'mha:lesson-4',
      'mha:lesson-5',
      'mha:playground',
    ].map(mark),
    l4check: l4?.duration ?? NaN,
    l4busy: l4?.detail?.busyMs ?? NaN,
    figures: mark('mha:figures'),
    l4done: mark('mha:gradcheck:l4-gradcheck'),
    checksDone: Number.isFinite(done) ? done : (window.__benchChecksDone ?? NaN),
    checksMark: Number.isFinite(done),
  };
}

/**
 * The task figures of a load, the page's and a reference page's alike: its main-thread tasks from
 * navigation to `to` (over 50 ms, over 100 ms), and its own, from its first script (`ownFrom`) on.
 */
function taskFigures(tasks, ownFrom, to) {
  return {
    tasks: taskStats(tasks, 0, to),
    tasks100: taskStats(tasks, 0, to, 100).longTasks,
    own: taskStats(tasks, ownFrom, to),
    own100: taskStats(tasks, ownFrom, to, 100).longTasks,
  };
}

/** The browser's work and the functions in a task (a trace recorded with profile). */
function profileOf(trace, t, task) {
  if (!task) return { parts: [], functions: [] };
  return { parts: taskParts(trace, t, task), functions: hotFunctions(trace, t, task) };
}

/** One fresh load: the page's marks and its main-thread tasks until every check is done. */
async function oneLoad(browser, url, { profile = false, device = DEVICES.desktop } = {}) {
  const { context, page, errors } = await newPage(browser, device);
  try {
    await browser.startTracing(page, { categories: traceCategories({ profile }) });
    await page.goto(withQuery(url));
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, {
      timeout: 120_000,
    });
    await page.waitForFunction(
      () =>
        (performance.getEntriesByName('mha:checks-done', 'mark').length > 0 ||
          window.__benchChecksDone !== undefined) &&
        performance.getEntriesByName('mha:figures', 'mark').length > 0,
      null,
      { timeout: 240_000, polling: 50 },
    );
    const r = await page.evaluate(readMarks);
    const trace = readTrace(await browser.stopTracing());
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
    const t = mainThread(trace, 'mha:start', r.start);
    // the page's own tasks: from its first script (boot.js; mha:start for a build without it)
    Object.assign(
      r,
      taskFigures(t.tasks, Number.isFinite(r.boot) ? r.boot : r.start, r.checksDone),
    );
    r.cpu = cpuBudget(trace, t, 0, r.checksDone);
    r.cpuReady = cpuBudget(trace, t, 0, r.ready);
    if (profile) r.hot = profileOf(trace, t, r.tasks.longTask);
    return r;
  } finally {
    await context.close();
  }
}

/**
 * One fresh load of the GPT-2-size playground and one edit of its sentence: { editMs, longest,
 * longTasks, after } or { refused: the page's message } when the page does not take the size.
 */
async function oneEdit(browser, url, { profile = false } = {}) {
  const { context, page, errors } = await newPage(browser);
  try {
    await page.goto(url + gpt2Query);
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, {
      timeout: 60_000,
    });
    const refused = await page.evaluate(() => document.getElementById('pg-error').textContent);
    if (refused.trim()) return { refused: refused.trim() };
    await page.waitForFunction(
      () =>
        performance.getEntriesByName('mha:pg-attention', 'mark').some((m) => m.detail?.C === 768),
      null,
      { timeout: 120_000, polling: 50 },
    );
    await page.waitForTimeout(500); // the first view's follow-up work is under way
    await browser.startTracing(page, { categories: traceCategories({ profile }) });
    const t0 = await page.evaluate((text) => {
      performance.mark('bench:edit');
      const input = document.getElementById('pg-sentence');
      input.value = text;
      const at = performance.now();
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true })); // leaving the field: no pause
      return at;
    }, EDITED_64);
    const shown = await page.waitForFunction(
      (at) =>
        performance
          .getEntriesByName('mha:pg-attention', 'mark')
          .find((m) => m.startTime > at && m.detail?.C === 768)?.startTime,
      t0,
      { timeout: 120_000, polling: 20 },
    );
    const at = await shown.jsonValue();
    await page.waitForTimeout(1000); // the tasks that follow, for the record
    const anchor = await page.evaluate(
      () => performance.getEntriesByName('bench:edit', 'mark')[0].startTime,
    );
    const trace = readTrace(await browser.stopTracing());
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
    const t = mainThread(trace, 'bench:edit', anchor);
    const during = taskStats(t.tasks, t0, at);
    const after = taskStats(t.tasks, at, at + 1000);
    const { longest, longTasks, longestCpu } = during;
    const r = { editMs: at - t0, longest, longTasks, longestCpu, after };
    if (profile) r.hot = profileOf(trace, t, during.longTask);
    return r;
  } finally {
    await context.close();
  }
}

/**
 * One fresh load of a reference page (the floor, or the blank page): when its one-line script
 * ran and its first contentful paint (ms after navigation), and its main-thread tasks from
 * navigation until 1 s after both (the same task figures as the page's).
 */
async function floorLoad(browser, url, device = DEVICES.desktop) {
  const { context, page } = await newPage(browser, device);
  try {
    await browser.startTracing(page, { categories: traceCategories() });
    await page.goto(url);
    await page.waitForFunction(
      () =>
        performance.getEntriesByName('floor:script', 'mark').length > 0 &&
        performance.getEntriesByName('first-contentful-paint').length > 0,
      null,
      { timeout: 30_000 },
    );
    await page.waitForTimeout(1000);
    const [script, fcp] = await page.evaluate(() => [
      performance.getEntriesByName('floor:script', 'mark')[0].startTime,
      performance.getEntriesByName('first-contentful-paint')[0].startTime,
    ]);
    const t = mainThread(readTrace(await browser.stopTracing()), 'floor:script', script);
    const end = Math.max(script, fcp) + 1000;
    return { script, fcp, ...taskFigures(t.tasks, script, end) };
  } finally {
    await context.close();
  }
}

// The blank page: one paragraph, no style sheet, the floor's one-line script: what any page
// costs this browser on this machine (navigation, first layout and paint), whatever it holds.
const BLANK_HTML =
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1"><title>blank</title>' +
  '</head><body><p>A blank page.</p><script type="module" src="app.bundle.js"></script>' +
  '</body></html>\n';

/** A copy of web/ (index.html, style.css) in a temporary folder, with app.bundle.js = text. */
function pageCopy(prefix, bundleText, html = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const f of ['index.html', 'style.css']) {
    fs.copyFileSync(path.join(webDir, f), path.join(dir, f));
  }
  if (html !== null) fs.writeFileSync(path.join(dir, 'index.html'), html);
  fs.writeFileSync(path.join(dir, 'app.bundle.js'), bundleText);
  return dir;
}

/** The profiled load and edit: the functions in their longest tasks. */
async function profileRuns(browser, log) {
  const dir = pageCopy('mha-profile-', ''); // the page's scripts unminified (names a profile shows)
  await bundlePage({ minify: false, dir });
  const copy = await serve(dir, 0);
  try {
    const load = await oneLoad(browser, copy.url, { profile: true });
    log(`bench_page: profiled load: longest task ${ms(load.tasks.longest)}`);
    const edit = await oneEdit(browser, copy.url, { profile: true });
    return { load, edit };
  } finally {
    copy.server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function hotLines(what, task, hot) {
  const parts = hot.parts.slice(0, 6).map((p) => `${p.name} ${ms(p.ms)}`);
  const lines = [`${what}: ${ms(task)}: ${parts.join(', ')}; by self time (V8's profiler):`];
  for (const h of hot.functions) {
    lines.push(
      `  ${ms(h.ms).padStart(7)}  ${h.name}${h.stack.length ? `  <- ${h.stack.join(' <- ')}` : ''}`,
    );
  }
  return lines;
}

function table(rows) {
  const head = ['quantity', 'via', 'median', 'min', 'max', 'floor', 'target'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r) =>
    r
      .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [fmt(head), widths.map((n) => '-'.repeat(n)).join('  '), ...rows.map(fmt)];
}

// [label, value of a load, format, target, the same of a floor load (printed beside; none: ''),
//  IF_ANY: the row only when a load has the figure (an older build's mark)]
// A time counted from navigation has the floor's script time beside it: the soonest any script of
// the page runs; a task figure has the floor page's own (its tasks until 1 s after it is drawn).
const FROM_NAV = (f) => f.script;
const IF_ANY = true;
// a task figure: a load of the page and of the floor have the same fields (tasks, own, ...)
const taskRow = (label, get, format, target = '') => [label, get, format, target, get];
const TASKS_50 = [
  taskRow(
    'longest main-thread task, navigation -> checks done',
    (r) => r.tasks.longest,
    ms,
    '<= 50 ms',
  ),
  taskRow(
    'main-thread tasks over 50 ms, navigation -> checks done',
    (r) => r.tasks.longTasks,
    count,
    '0',
  ),
  taskRow('  longest task in thread time (its own CPU time)', (r) => r.tasks.longestCpu, ms),
  taskRow('  tasks over 50 ms of thread time', (r) => r.tasks.longCpuTasks, count),
  taskRow(
    "  the page's own: longest task from its first script (mha:boot)",
    (r) => r.own.longest,
    ms,
  ),
  taskRow('  its tasks over 50 ms', (r) => r.own.longTasks, count),
  taskRow("  the page's own longest in thread time", (r) => r.own.longestCpu, ms),
];
const IN_VIEW = [
  'navigation -> what is in the window drawn (mha:in-view, an older build)',
  (r) => r.inView,
  ms,
  '',
  FROM_NAV,
  IF_ANY,
];
const LOAD_QUANTITIES = [
  IN_VIEW,
  [
    'navigation -> the view drawn (mha:ready; older: every section)',
    (r) => r.ready,
    ms,
    '<= 2 x floor',
    FROM_NAV,
  ],
  ['  of which: navigation -> wasm compiled (mha:wasm)', (r) => r.wasm, ms, '', FROM_NAV],
  ['  the view drawn after the wasm (mha:ready - mha:wasm)', (r) => r.ready - r.wasm, ms, ''],
  ['navigation -> every check done (mha:checks-done)', (r) => r.checksDone, ms, '', FROM_NAV],
  [
    'navigation -> every figure drawn (mha:figures; older: off-screen too)',
    (r) => r.figures,
    ms,
    '',
    FROM_NAV,
  ],
  ['lesson 4 full check: its own slices (busy time)', (r) => r.l4busy, ms, ''],
  ['lesson 4 full check, start -> done', (r) => r.l4check, ms, ''],
  ['navigation -> lesson 4 check done', (r) => r.l4done, ms, '', FROM_NAV],
  ...TASKS_50,
  ["CPU time, navigation -> ready: the page's main thread", (r) => r.cpuReady.main, ms, ''],
  ['  every thread of the browser, / cores', (r) => r.cpuReady.total / CORES, ms, ''],
  ["CPU time, navigation -> checks done: the page's main thread", (r) => r.cpu.main, ms, ''],
  ['  the compute worker(s)', (r) => r.cpu.workers, ms, ''],
  ["  the browser's other threads (all its processes)", (r) => r.cpu.other, ms, ''],
  ['  all of it, / cores: the least wall time it needs', (r) => r.cpu.total / CORES, ms, ''],
];
// the simulated phone: what a student sees first, and the longest tasks
const PHONE_QUANTITIES = [
  ['navigation -> first contentful paint', (r) => r.fcp, ms, '', (f) => f.fcp],
  ["navigation -> the page's script starts (mha:start)", (r) => r.start, ms, '', FROM_NAV],
  ['navigation -> wasm compiled (mha:wasm)', (r) => r.wasm, ms, '', FROM_NAV],
  [
    'navigation -> the first view drawn (mha:ready; older: every section)',
    (r) => r.ready,
    ms,
    '<= 1000 ms',
    FROM_NAV,
  ],
  IN_VIEW,
  [
    'navigation -> every check in the window done',
    (r) => r.checksInView,
    ms,
    '<= 3000 ms',
    FROM_NAV,
  ],
  ['navigation -> every check done (mha:checks-done)', (r) => r.checksDone, ms, '', FROM_NAV],
  taskRow(
    'longest main-thread task, navigation -> checks done',
    (r) => r.tasks.longest,
    ms,
    '<= 100 ms',
  ),
  taskRow(
    'main-thread tasks over 50 ms, navigation -> checks done',
    (r) => r.tasks.longTasks,
    count,
  ),
  taskRow('main-thread tasks over 100 ms', (r) => r.tasks100, count, '0'),
  taskRow(
    "  the page's own: longest task from its first script (mha:boot)",
    (r) => r.own.longest,
    ms,
  ),
  taskRow('  its tasks over 100 ms', (r) => r.own100, count),
  taskRow("  the page's own longest in thread time", (r) => r.own.longestCpu, ms),
];
const EDIT_QUANTITIES = [
  ['GPT-2-size edit (T=64, C=768, h=12): event -> head drawn', (r) => r.editMs, ms, '<= 300 ms'],
  ['  longest main-thread task during the edit', (r) => r.longest, ms, '<= 100 ms'],
  ['  main-thread tasks over 50 ms during the edit', (r) => r.longTasks, count, ''],
  ['  longest task during the edit in thread time', (r) => r.longestCpu, ms, ''],
  ['  longest main-thread task in the 1 s after', (r) => r.after.longest, ms, ''],
];

/** Median, min and max of each quantity for each way in (the floor beside the ones it bounds). */
function rowsOf(quantities, runsByWhere, floorRuns = []) {
  const rows = [];
  const medianOf = (runs, f) => {
    const v = runs.map(f).filter(Number.isFinite);
    return v.length ? [median(v), Math.min(...v), Math.max(...v)] : [NaN, NaN, NaN];
  };
  const ways = Object.values(runsByWhere);
  for (const [label, f, format, target, ofFloor, ifAny] of quantities) {
    if (ifAny && !ways.some((runs) => runs.map(f).some(Number.isFinite))) continue;
    const floor = ofFloor && floorRuns.length ? format(medianOf(floorRuns, ofFloor)[0]) : '';
    for (const [w, runs] of Object.entries(runsByWhere)) {
      const [med, lo, hi] = medianOf(runs, f);
      rows.push([label, w, format(med), format(lo), format(hi), floor, target]);
    }
  }
  return rows;
}

/** What the blank page's loads cost, per device: its tasks from navigation to 1 s after paint. */
function blankLines(blankRuns) {
  const lines = [
    'the blank page (one paragraph, no style sheet, a one-line script; tasks from navigation ' +
      'until 1 s after it is drawn), medians:',
  ];
  for (const [device, runs] of Object.entries(blankRuns)) {
    if (!runs.length) continue;
    const of = (f) => median(runs.map(f));
    lines.push(
      `  ${device}: first contentful paint ${ms(of((r) => r.fcp))}, longest task ` +
        `${ms(of((r) => r.tasks.longest))} (max ${ms(Math.max(...runs.map((r) => r.tasks.longest)))}), ` +
        `tasks over 50 ms ${count(of((r) => r.tasks.longTasks))}, over 100 ms ${count(of((r) => r.tasks100))}`,
    );
  }
  return lines;
}

async function runLoads(browser, where, loads, log, device = DEVICES.desktop) {
  const runs = Object.fromEntries(Object.keys(where).map((w) => [w, []]));
  const first = Object.values(where)[0];
  const width = Math.max(...Object.keys(where).map((w) => w.length));
  await oneLoad(browser, first, { device }); // warm the disk cache, untimed
  for (let i = 0; i < loads; i++) {
    for (const w of Object.keys(where)) {
      const r = await oneLoad(browser, where[w], { device });
      runs[w].push(r);
      const inView = Number.isFinite(r.inView) ? `in view ${ms(r.inView)}, ` : '';
      log(
        `bench_page: ${w.padEnd(width)} load ${i + 1}/${loads}: ${inView}ready ${ms(r.ready)}, ` +
          `checks done ${ms(r.checksDone)}, longest task ${ms(r.tasks.longest)} ` +
          `(${r.tasks.longTasks} over 50 ms; own ${ms(r.own.longest)}, ${r.own.longTasks})`,
      );
    }
  }
  return runs;
}

async function runEdits(browser, url, edits, log) {
  const runs = [];
  for (let i = 0; i < edits; i++) {
    const r = await oneEdit(browser, url);
    if (r.refused) {
      log(`bench_page: the GPT-2-size playground is refused: ${r.refused}`);
      return { refused: r.refused, runs: [] };
    }
    runs.push(r);
    log(
      `bench_page: edit ${i + 1}/${edits}: ${ms(r.editMs)}, longest task ${ms(r.longest)}, ` +
        `after: ${ms(r.after.longest)}`,
    );
  }
  return { refused: null, runs };
}

export async function benchPage({
  loads = LOADS,
  edits = EDITS,
  phoneLoads = PHONE_LOADS,
  profile = PROFILE,
  log = (...a) => console.error(...a),
} = {}) {
  const load0 = loadAverage();
  const browser = await launchBrowser();
  const { server, url } = await serve(webDir, 0);
  const floorDir = pageCopy('mha-floor-', 'performance.mark("floor:script");\n');
  const floor = await serve(floorDir, 0);
  const blankDir = pageCopy('mha-blank-', 'performance.mark("floor:script");\n', BLANK_HTML);
  const blank = await serve(blankDir, 0);
  const blankRuns = { desktop: [], phone: [] };
  // the default view (Start here) and lesson 4's, each over http and from file://
  const where = { http: url, 'file://': fileUrl };
  const l4Where = {
    'http, #lesson-4': `${url}#lesson-4`,
    'file://, #lesson-4': `${fileUrl}#lesson-4`,
  };
  const phoneWhere = { 'phone, top': url, 'phone, #l4-gradcheck': `${url}#l4-gradcheck` };
  const floorRuns = [];
  const phone = { runs: null, floor: [] };
  let version; // read inside the try, whose finally closes the browser
  let runs;
  let edit;
  let profiled = null;
  try {
    version = browser.version();
    runs = await runLoads(browser, { ...where, ...l4Where }, loads, log);
    for (let i = 0; i < loads; i++) {
      floorRuns.push(await floorLoad(browser, floor.url));
      blankRuns.desktop.push(await floorLoad(browser, blank.url));
    }
    if (phoneLoads) {
      phone.runs = await runLoads(browser, phoneWhere, phoneLoads, log, DEVICES.phone);
      for (let i = 0; i < phoneLoads; i++) {
        phone.floor.push(await floorLoad(browser, floor.url, DEVICES.phone));
        blankRuns.phone.push(await floorLoad(browser, blank.url, DEVICES.phone));
      }
    }
    edit = await runEdits(browser, url, edits, log);
    if (profile) profiled = await profileRuns(browser, log);
  } finally {
    await browser.close();
    server.close();
    floor.server.close();
    blank.server.close();
    fs.rmSync(floorDir, { recursive: true, force: true });
    fs.rmSync(blankDir, { recursive: true, force: true });
  }
  const load1 = loadAverage();

  const wasm = fs.readFileSync(path.join(webDir, 'mha.wasm'));
  const gz = zlib.gzipSync(wasm, { level: 9 }).length;
  const bundle = fs.statSync(path.join(webDir, 'app.bundle.js')).size;
  const pick = (keys) => Object.fromEntries(Object.keys(keys).map((w) => [w, runs[w]]));
  const lines = [
    `page: ${path.relative(process.cwd(), path.join(webDir, 'index.html'))} in headless Chromium ${version} (${CHROMIUM}), ${loads} fresh loads of`,
    `each view (the default one, Start here; and #lesson-4) over http and from file:// (alternating; a new`,
    `browser context per load, traced); ${os.cpus().length} cores; load average (1, 5, 15 min) ${load0} before,`,
    `${load1} after`,
  ];
  if (QUERY) lines.push(`every load's address ends in ${QUERY} (before its #fragment)`);
  if (runs.http.some((r) => !r.checksMark)) {
    lines.push(
      '(no mha:checks-done mark: checks done = when #status said "All gradient checks done.")',
    );
  }
  lines.push(
    'the default view (Start here: the address without a #fragment)',
    ...table(rowsOf(LOAD_QUANTITIES, pick(where), floorRuns)),
    '',
    "lesson 4's view (#lesson-4: its build and its full gradient check)",
    ...table(rowsOf(LOAD_QUANTITIES, pick(l4Where), floorRuns)),
  );
  if (edit.runs.length) {
    lines.push(
      '',
      "the GPT-2-size edit (the playground's view, opened by ?s=<64 tokens>&C=768&h=12)",
      ...table(rowsOf(EDIT_QUANTITIES, { http: edit.runs })),
    );
  }
  if (phone.runs) {
    lines.push(
      '',
      `the simulated phone: 390x844, mobile, device scale 3, touch, CPU throttled ${DEVICES.phone.cpuThrottle}x ` +
        `(CDP Emulation.setCPUThrottlingRate), ${phoneLoads} fresh loads each at the top and at #l4-gradcheck ` +
        '(over http, alternating); floor: the one-line-script page on the same phone',
      ...table(rowsOf(PHONE_QUANTITIES, phone.runs, phone.floor)),
    );
  }
  if (edit.refused) lines.push(`GPT-2-size edit: the playground refuses the size: ${edit.refused}`);
  else lines.push(`GPT-2-size edit: ${edit.runs.length} fresh loads over http, one edit each`);
  const scripts = floorRuns.map((f) => f.script);
  lines.push(
    `floor: the same index.html + style.css with a one-line script (over http): the script runs ` +
      `${ms(median(scripts))} after navigation (median; min ${ms(Math.min(...scripts))}, max ${ms(Math.max(...scripts))})`,
    ...blankLines(blankRuns),
  );
  lines.push(
    `web/mha.wasm ${wasm.length} bytes, ${gz} bytes gzipped (gzip -9; target <= 40 KB = 40960 bytes); ` +
      `web/app.bundle.js ${bundle} bytes (the wasm inlined as base64)`,
  );
  if (profiled) {
    lines.push(
      ...hotLines('profiled load, longest task', profiled.load.tasks.longest, profiled.load.hot),
    );
    if (!profiled.edit.refused) {
      lines.push(
        ...hotLines('profiled edit, longest task', profiled.edit.longest, profiled.edit.hot),
      );
    }
  }
  return {
    text: lines.join('\n'),
    runs,
    edit,
    floor: floorRuns,
    blank: blankRuns,
    phone,
    load: { before: load0, after: load1 },
    wasmBytes: wasm.length,
    wasmGzipBytes: gz,
    bundleBytes: bundle,
    chromium: version,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchPage()
    .then((r) => console.log(r.text))
    .catch((e) => {
      console.error(`bench_page: ${e.stack ?? e}`);
      process.exit(1);
    });
}
