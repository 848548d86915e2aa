// bench_lighthouse.mjs - Lighthouse's scores of the page (a benchmark: it prints, asserts nothing).
//
//   npm run bench:lighthouse                  3 runs of each, medians
//   npm run bench:lighthouse -- --runs 5      more runs
//
// Lighthouse 12.8 (npm, pinned in package-lock.json) drives the system's Chromium
// (/usr/bin/chromium, or MHA_CHROMIUM) through chrome-launcher, headless, with the flags the
// browser suite uses here; nothing is downloaded. The page is served as `npm start` serves it
// (tests/serve.mjs: compressed), beside a blank page (one paragraph, no script) served the same
// way: what the machine and the browser cost before the page does anything. Each is measured
// with Lighthouse's default mobile run (a mid-range phone, simulated throttling) and its desktop
// configuration. The targets of docs/measured.md: mobile Performance >= 95, FCP <= 1.8 s,
// TBT <= 150 ms, CLS <= 0.02; Accessibility, Best Practices and SEO 100; desktop >= 99.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import * as chromeLauncher from 'chrome-launcher';
import { serve } from '../serve.mjs';
import { requireBrowsers } from '../tiers.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';

requireBrowsers(['Chromium']);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const argRuns = process.argv.indexOf('--runs');
const RUNS = argRuns > 0 ? Number(process.argv[argRuns + 1]) : 3;

const BLANK =
  '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
  '<meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<meta name="description" content="A blank page, the reference of the Lighthouse benchmark.">' +
  '<title>Blank</title><link rel="icon" href="data:,"></head>' +
  '<body><main><p>A blank page.</p></main></body></html>\n';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One Lighthouse run of `url` in a fresh Chromium: the figures of the table. */
async function runOnce(url, config) {
  const chrome = await chromeLauncher.launch({
    chromePath: CHROMIUM,
    chromeFlags: ['--headless=new', ...CHROMIUM_ARGS],
    userDataDir: mkdtempSync(join(tmpdir(), 'mha-lighthouse-')),
  });
  try {
    const result = await lighthouse(url, { port: chrome.port, logLevel: 'error' }, config);
    const { categories: c, audits: a } = result.lhr;
    if (result.lhr.runtimeError) throw new Error(result.lhr.runtimeError.message);
    return {
      performance: c.performance.score * 100,
      accessibility: c.accessibility.score * 100,
      bestPractices: c['best-practices'].score * 100,
      seo: c.seo.score * 100,
      fcp: a['first-contentful-paint'].numericValue,
      lcp: a['largest-contentful-paint'].numericValue,
      tbt: a['total-blocking-time'].numericValue,
      cls: a['cumulative-layout-shift'].numericValue,
      si: a['speed-index'].numericValue,
      failing: Object.values(c)
        .flatMap((cat) => cat.auditRefs.filter((r) => r.weight > 0).map((r) => a[r.id]))
        .filter((x) => x.score !== null && x.score < 1 && x.scoreDisplayMode !== 'informative')
        .map((x) => x.id),
    };
  } finally {
    chrome.kill();
  }
}

/** RUNS runs; the median of each figure, and the audits that failed in any run. */
async function measure(url, config) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await runOnce(url, config));
  const out = {};
  for (const key of Object.keys(runs[0]).filter((k) => k !== 'failing')) {
    out[key] = median(runs.map((r) => r[key]));
  }
  out.failing = [...new Set(runs.flatMap((r) => r.failing))];
  return out;
}

const blankDir = mkdtempSync(join(tmpdir(), 'mha-blank-'));
writeFileSync(join(blankDir, 'index.html'), BLANK);
const page = await serve(join(root, 'web'), 0);
const blank = await serve(blankDir, 0);
console.log(
  `Lighthouse 12.8, ${RUNS} runs each, medians; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the start`,
);
const rows = [];
try {
  for (const [form, config] of [
    ['mobile', undefined],
    ['desktop', desktopConfig],
  ]) {
    for (const [what, url] of [
      ['page', page.url],
      ['blank page', blank.url],
    ]) {
      const m = await measure(url, config);
      rows.push({
        run: `${form}: ${what}`,
        performance: m.performance,
        a11y: m.accessibility,
        'best pr.': m.bestPractices,
        seo: m.seo,
        'FCP ms': Math.round(m.fcp),
        'LCP ms': Math.round(m.lcp),
        'TBT ms': Math.round(m.tbt),
        CLS: Number(m.cls.toFixed(3)),
        'SI ms': Math.round(m.si),
      });
      if (what === 'page' && m.failing.length) {
        console.log(`${form}: audits below 1 in some run: ${m.failing.join(', ')}`);
      }
    }
  }
} finally {
  page.server.close();
  blank.server.close();
  rmSync(blankDir, { recursive: true, force: true });
}
console.table(rows);
