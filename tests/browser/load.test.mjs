// The page loads in Chromium over http (tests/serve.mjs) and from file:// without console errors,
// uncaught exceptions or any request outside its own origin (it must work offline: no fonts, no
// CDNs), and reaches its ready flag; the time from navigation to performance.mark('mha:ready') is
// reported (a figure, not an assertion: speed targets belong to benchmarks). Both loads compute
// the same figures.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, fileUrl, openPage, consoleErrors, figures } from './browser.mjs';

const session = useBrowser();

const loaded = []; // figures() of each load, compared at the end

const SECTIONS = ['lesson-1', 'lesson-2', 'lesson-3', 'lesson-4', 'lesson-5', 'playground'];

async function checkLoad(t, pageUrl, ownRequest) {
  const { page, log, close } = await openPage(session.browser, pageUrl);
  try {
    // the structure the other tests rely on (one round trip: the page is busy with its checks)
    const sections = await page.evaluate(
      (ids) =>
        ids.map((id) => {
          const sec = document.querySelector(`section#${id}`);
          return {
            id,
            section: !!sec,
            h2: sec?.querySelector('h2')?.textContent.trim() ?? null,
            copy: sec
              ? [...sec.querySelectorAll('button')].some((b) =>
                  b.textContent.includes('Copy as NumPy'),
                )
              : false,
          };
        }),
      SECTIONS,
    );
    for (const s of sections) {
      assert.ok(s.section, `no section#${s.id}`);
      assert.ok(s.h2, `section#${s.id} has no <h2> (or an empty one)`);
      assert.ok(s.copy, `section#${s.id} has no "Copy as NumPy" button`);
    }
    const api = await page.evaluate(() => ({
      figures: typeof window.mhaPage?.figures,
      settings: typeof window.mhaPage?.settings?.(),
    }));
    assert.deepEqual(api, { figures: 'function', settings: 'object' }, 'window.mhaPage');
    const marks = await page.evaluate(() => {
      const get = (n) => performance.getEntriesByName(n)[0]?.startTime ?? null;
      return {
        start: get('mha:start'),
        ready: get('mha:ready'),
        lessons: [1, 2, 3, 4, 5].map((i) => get(`mha:lesson-${i}`)),
        scripts: [...document.scripts].map((s) => ({
          src: s.getAttribute('src'),
          inline: !s.src ? s.textContent.length : 0,
        })),
      };
    });
    assert.equal(typeof marks.ready, 'number', 'performance.mark("mha:ready") missing');
    assert.equal(typeof marks.start, 'number', 'performance.mark("mha:start") missing');
    marks.lessons.forEach((m, i) =>
      assert.equal(typeof m, 'number', `performance.mark("mha:lesson-${i + 1}") missing`),
    );
    assert.ok(marks.start <= marks.ready, 'mha:start after mha:ready');
    marks.lessons.forEach((m, i) =>
      assert.ok(m <= marks.ready, `mha:lesson-${i + 1} after mha:ready`),
    );
    // index.html loads only the bundle, as a classic script, and nothing inline
    assert.deepEqual(marks.scripts, [{ src: 'app.bundle.js', inline: 0 }], 'scripts of index.html');

    // let the background gradient checks run a moment, then look at the logs
    await page.waitForTimeout(500);
    const errors = consoleErrors(log);
    const warnings = log.console.filter((m) => m.type === 'warning').map((m) => m.text);
    assert.deepEqual(errors, [], 'console errors');
    assert.deepEqual(log.errors, [], 'uncaught exceptions (pageerror)');
    assert.deepEqual(log.dialogs, [], 'dialogs');
    const foreign = log.requests.filter((r) => !ownRequest(r));
    assert.deepEqual(foreign, [], "requests outside the page's own origin");
    assert.ok(log.requests.length >= 2, `only ${log.requests.length} requests recorded`);

    // what the page computed (the gradient checks, still filling in, left out)
    const f = await figures(page);
    for (const k of ['lesson4', 'lesson5', 'playground']) delete f[k].gradcheck;
    delete f.playground.sampled;
    loaded.push(f);

    t.diagnostic(
      `navigation -> mha:start ${marks.start.toFixed(1)} ms, -> mha:ready ${marks.ready.toFixed(1)} ms; ` +
        `lessons ${marks.lessons.map((m, i) => `${i + 1}: ${m.toFixed(1)}`).join(', ')} ms`,
    );
    t.diagnostic(
      `${log.requests.length} requests: ${log.requests.map((r) => new URL(r).pathname.split('/').pop() || '/').join(' ')}; ` +
        `${log.console.length} console messages (${warnings.length} warnings${warnings.length ? `: ${warnings.join(' | ')}` : ''})`,
    );
  } finally {
    await close();
  }
}

test('over http: no console error, no page error, only same-origin requests, ready', async (t) => {
  // the compute worker starts from a Blob URL of the page's own origin (blob:http://host/uuid)
  const own = `blob:${new URL(session.url).origin}/`;
  await checkLoad(t, session.url, (r) => r.startsWith(session.url) || r.startsWith(own));
});

test('from file://: no console error, no page error, only file:/data:/blob: requests, ready', async (t) => {
  await checkLoad(t, fileUrl, (r) => /^(file|data|blob):/.test(r));
});

test('the page computes the same figures over http and from file://', () => {
  assert.equal(loaded.length, 2, 'both loads ran');
  assert.deepStrictEqual(loaded[1], loaded[0]); // deepStrictEqual compares numbers with Object.is
});

test('a link into a lesson: it is built first; an element it builds is scrolled to', async (t) => {
  for (const [hash, first, element] of [
    ['#lesson-3', 'mha:lesson-3', 'lesson-3'], // a section of the HTML: the browser scrolls
    ['#l4-gradcheck', 'mha:lesson-4', 'l4-gradcheck'], // built by lesson 4: the page scrolls
  ]) {
    const { page, log, close } = await openPage(session.browser, `${session.url}${hash}`, {
      viewport: { width: 390, height: 844 },
    });
    try {
      await page.waitForFunction(() => document.documentElement.dataset.figures === '1');
      const seen = await page.evaluate(
        (id) => ({
          // the marks of the lessons and the playground, in the order the page set them
          order: performance
            .getEntriesByType('mark')
            .map((m) => m.name)
            .filter((n) => /^mha:(lesson-\d|playground)$/.test(n)),
          top: document.getElementById(id).getBoundingClientRect().top,
          scrollY,
          inView: performance.getEntriesByName('mha:in-view')[0]?.startTime ?? null,
          ready: performance.getEntriesByName('mha:ready')[0]?.startTime ?? null,
        }),
        element,
      );
      assert.equal(seen.order[0], first, `${hash}: built first (${seen.order.join(' ')})`);
      assert.equal(seen.order.length, 6, `${hash}: every section built`);
      assert.ok(seen.scrollY > 1000, `${hash}: the page scrolled (scrollY ${seen.scrollY})`);
      assert.ok(Math.abs(seen.top) < 40, `${hash}: #${element} at the top (${seen.top} px)`);
      assert.ok(seen.inView !== null && seen.inView <= seen.ready, `${hash}: mha:in-view first`);
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      t.diagnostic(
        `${hash}: ${seen.order.join(' ')}; #${element} ${Math.round(seen.top)} px from the top, mha:in-view ${Math.round(seen.inView)} ms, mha:ready ${Math.round(seen.ready)} ms`,
      );
    } finally {
      await close();
    }
  }
});
