#!/usr/bin/env node
// bench_page.mjs - the companion page's timings in headless Chromium (part of `npm run bench`,
// or alone: `npm run bench:page`); never part of the pass/fail tests.
//
// For each of BENCH_PAGE_LOADS fresh loads (a new browser context each time, so nothing is cached
// between loads) over http (tests/serve.mjs) and from file://, it reads the page's own
// performance entries:
//   mha:navigation-to-ready        navigation start -> every lesson's first render done
//                                  (app.js marks mha:ready after the last lesson's render)
//   mha:lesson-1 ... mha:playground marks: when each lesson's first render was done
//   mha:figures                    every figure drawn, the off-screen ones too (drawn after ready)
//   mha:gradcheck:l4-gradcheck     lesson 4's full gradient check at course size (B=2, T=6, C=64,
//                                  h=4: 21,568 entries): the time spent in its own slices
//                                  (detail.busyMs), its duration from start to finish (measure) and
//                                  when it finished after navigation (mark). It shares the page's
//                                  scheduler, in 12 ms slices, with the figures still being drawn
//                                  and lesson 5's and the playground's checks.
// and prints median, min and max per quantity, plus web/mha.wasm's size raw and gzipped.
// A floor for the first render: the same index.html and style.css with app.bundle.js replaced by
// one performance.mark (served from a temporary copy), loaded the same way: how long after
// navigation any script of the page can start, before it has done anything.
//
// Environment: BENCH_PAGE_LOADS=11 (>= 1), MHA_CHROMIUM=/usr/bin/chromium.
// Needs the bundle: `make wasm bundle` (npm run bench builds it).

import fs from 'node:fs';
import os from 'node:os';
import { serve } from '../serve.mjs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { launchBrowser, servePage, fileUrl, webDir, CHROMIUM } from '../browser/browser.mjs';

const LOADS = Number(process.env.BENCH_PAGE_LOADS ?? 11);
if (!Number.isInteger(LOADS) || LOADS < 1) {
  console.error(
    `bench_page: BENCH_PAGE_LOADS must be an integer >= 1, got ${process.env.BENCH_PAGE_LOADS}`,
  );
  process.exit(2);
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => (Number.isFinite(x) ? `${Math.round(x)} ms` : '-');

/** One fresh load: the page's performance entries, in ms after navigation start. */
async function oneLoad(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, {
      timeout: 60_000,
    });
    await page.waitForFunction(
      () =>
        performance.getEntriesByName('mha:gradcheck:l4-gradcheck', 'measure').length > 0 &&
        performance.getEntriesByName('mha:figures', 'mark').length > 0,
      null,
      { timeout: 120_000, polling: 50 },
    );
    if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
    return await page.evaluate(() => {
      const mark = (n) => performance.getEntriesByName(n, 'mark')[0]?.startTime ?? NaN;
      const measure = (n) => performance.getEntriesByName(n, 'measure')[0]?.duration ?? NaN;
      return {
        ready: measure('mha:navigation-to-ready'),
        wasm: mark('mha:wasm'),
        lessons: [
          'mha:lesson-1',
          'mha:lesson-2',
          'mha:lesson-3',
          'mha:lesson-4',
          'mha:lesson-5',
          'mha:playground',
        ].map(mark),
        l4check: measure('mha:gradcheck:l4-gradcheck'),
        l4busy:
          performance.getEntriesByName('mha:gradcheck:l4-gradcheck', 'measure')[0]?.detail
            ?.busyMs ?? NaN,
        figures: mark('mha:figures'),
        l4done: mark('mha:gradcheck:l4-gradcheck'),
      };
    });
  } finally {
    await context.close();
  }
}

/** One fresh load of the floor page: when its one-line script ran, after navigation. */
async function floorLoad(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(
      () => performance.getEntriesByName('floor:script', 'mark').length > 0,
      null,
      { timeout: 30_000 },
    );
    return await page.evaluate(
      () => performance.getEntriesByName('floor:script', 'mark')[0].startTime,
    );
  } finally {
    await context.close();
  }
}

export async function benchPage({ loads = LOADS, log = (...a) => console.error(...a) } = {}) {
  const browser = await launchBrowser();
  const { server, url } = await servePage();
  const floorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mha-floor-'));
  for (const f of ['index.html', 'style.css']) {
    fs.copyFileSync(path.join(webDir, f), path.join(floorDir, f));
  }
  fs.writeFileSync(path.join(floorDir, 'app.bundle.js'), 'performance.mark("floor:script");\n');
  const floor = await serve(floorDir, 0);
  const where = { http: url, 'file://': fileUrl };
  const runs = { http: [], 'file://': [] };
  const floorRuns = [];
  let version; // read inside the try, whose finally closes the browser
  try {
    version = browser.version();
    await oneLoad(browser, url); // warm the disk cache, untimed
    for (let i = 0; i < loads; i++) {
      for (const w of Object.keys(where)) {
        // alternating http / file://
        const r = await oneLoad(browser, where[w]);
        runs[w].push(r);
        log(
          `bench_page: ${w.padEnd(7)} load ${i + 1}/${loads}: ready ${ms(r.ready)}, lesson 4 check ${ms(r.l4check)} ` +
            `(done ${ms(r.l4done)} after navigation)`,
        );
      }
      floorRuns.push(await floorLoad(browser, floor.url));
    }
  } finally {
    await browser.close();
    server.close();
    floor.server.close();
    fs.rmSync(floorDir, { recursive: true, force: true });
  }

  const wasm = fs.readFileSync(path.join(webDir, 'mha.wasm'));
  const gz = zlib.gzipSync(wasm, { level: 9 }).length;
  const bundle = fs.statSync(path.join(webDir, 'app.bundle.js')).size;
  const stat = (w, f) => {
    const v = runs[w].map(f);
    return { median: median(v), min: Math.min(...v), max: Math.max(...v), values: v };
  };
  const quantities = [
    ['navigation -> every lesson rendered (mha:ready)', (r) => r.ready, 'target <= 300 ms'],
    ['  of which: navigation -> wasm compiled (mha:wasm)', (r) => r.wasm, ''],
    [
      '  last lesson render after wasm (mha:playground - mha:wasm)',
      (r) => r.lessons[5] - r.wasm,
      '',
    ],
    ['navigation -> every figure drawn, off-screen ones too (mha:figures)', (r) => r.figures, ''],
    ['lesson 4 full gradient check: its own slices (busy time)', (r) => r.l4busy, 'target <= 2 s'],
    ['lesson 4 full gradient check, start -> done', (r) => r.l4check, ''],
    ['navigation -> lesson 4 check done', (r) => r.l4done, ''],
  ];
  const lines = [];
  lines.push(
    `page: web/index.html in headless Chromium ${version} (${CHROMIUM}), ${loads} fresh loads each over http and`,
  );
  lines.push(
    `from file:// (alternating; a new browser context per load); load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`,
  );
  const rows = [];
  for (const [label, f, target] of quantities) {
    for (const w of Object.keys(where)) {
      const s = stat(w, f);
      rows.push([label, w, ms(s.median), ms(s.min), ms(s.max), target]);
    }
  }
  const widths = rows[0].map((_, i) =>
    Math.max(
      ...rows.map((r) => r[i].length),
      ['quantity', 'via', 'median', 'min', 'max', ''][i].length,
    ),
  );
  const fmt = (r) =>
    r
      .map((c, i) => (i >= 2 && i <= 4 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  lines.push(fmt(['quantity', 'via', 'median', 'min', 'max', '']));
  lines.push(widths.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows) lines.push(fmt(r));
  lines.push(
    `floor: the same index.html + style.css with a one-line script (over http): the script runs ` +
      `${ms(median(floorRuns))} after navigation (median; min ${ms(Math.min(...floorRuns))}, max ${ms(Math.max(...floorRuns))})`,
  );
  lines.push(
    `web/mha.wasm ${wasm.length} bytes, ${gz} bytes gzipped (gzip -9; target <= 40 KB = 40960 bytes); ` +
      `web/app.bundle.js ${bundle} bytes (the wasm inlined as base64)`,
  );
  return {
    text: lines.join('\n'),
    runs,
    floor: floorRuns,
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
