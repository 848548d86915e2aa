// Screenshots for looking at the page, under test-results/browser/ (gitignored). The section and
// full-page screenshots at 1280 px are taken by figures.test.mjs once the gradient checks have
// finished (so the tables are complete); this file adds the first screen at phone width and checks
// that the results directory stays out of git. Layout is reported, not asserted (the contract sets
// no rule).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { useBrowser, resultPath, repoRoot, consoleErrors } from './browser.mjs';

const session = useBrowser();

test('test-results/ is gitignored', () => {
  const ignore = readFileSync(`${repoRoot}/.gitignore`, 'utf8')
    .split('\n')
    .map((l) => l.trim());
  assert.ok(
    ignore.includes('/test-results/') || ignore.includes('test-results/'),
    '.gitignore lacks /test-results/',
  );
});

test('narrow viewport (390 px): first-screen shot; horizontal overflow reported', async (t) => {
  const { page, log, close } = await session.open('', { viewport: { width: 390, height: 844 } });
  try {
    const path = resultPath('narrow.png');
    await page.screenshot({ path }); // the first screen only: a 40k-px full page takes ~15 s
    const m = await page.evaluate(() => {
      const de = document.documentElement;
      // elements wider than the viewport that are not inside a scrolling container
      const wide = [...document.querySelectorAll('body *')]
        .filter((e) => {
          const r = e.getBoundingClientRect();
          if (r.right <= de.clientWidth + 1) return false;
          for (let p = e.parentElement; p; p = p.parentElement) {
            const o = getComputedStyle(p).overflowX;
            if (o === 'auto' || o === 'scroll' || o === 'hidden') return false;
          }
          return true;
        })
        .slice(0, 5)
        .map(
          (e) =>
            `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(' ')[0]}` : ''}`,
        );
      return { overflow: de.scrollWidth - de.clientWidth, height: de.scrollHeight, wide };
    });
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
    t.diagnostic(
      `${relative(repoRoot, path)} (390x844 of a 390x${m.height} page); horizontal overflow ${m.overflow} px` +
        `${m.wide.length ? `; sticking out: ${m.wide.join(', ')}` : ''}`,
    );
  } finally {
    await close();
  }
});
