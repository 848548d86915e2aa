// The page loads in Chromium over http (tests/serve.mjs) and from file:// without console errors,
// uncaught exceptions or any request outside its own origin (it must work offline: no fonts, no
// CDNs), and reaches its ready flag; the time from navigation to performance.mark('mha:ready') is
// reported (a figure, not an assertion: speed targets belong to benchmarks). Both loads compute
// the same figures. The page shows one view at a time, built when first opened: a load builds
// only the view its address names, a link opens another, back and forward go between them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useBrowser, fileUrl, openPage, consoleErrors, figures, webDir } from './browser.mjs';
import { serve } from '../serve.mjs';
import { VIEWS } from '../../web/lessons/index.js';

const session = useBrowser();

const loaded = []; // figures() of each load, compared at the end

const SECTIONS = ['lesson-1', 'lesson-2', 'lesson-3', 'lesson-4', 'lesson-5', 'playground'];

async function checkLoad(t, pageUrl, ownRequest) {
  const { page, log, close } = await openPage(session.browser, pageUrl);
  try {
    // the first view only: Start here, built; no lesson computed
    const first = await page.evaluate(() => ({
      view: window.mhaPage.view,
      lessons: performance
        .getEntriesByType('mark')
        .filter((m) => /^mha:(lesson-\d|playground)$/.test(m.name)).length,
      shown: [...document.querySelectorAll('section')].filter((x) => !x.hidden).map((x) => x.id),
    }));
    assert.deepEqual(first, { view: 'start-here', lessons: 0, shown: VIEWS[0].sections });
    await page.evaluate(() => window.mhaPage.build()); // every view, as opening each would
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
    // index.html runs one inline script (its hash in the CSP: tests/page-html.test.mjs) that adds
    // the bundle once the page is painted; the bundle adds a view's chunks when it is built
    const [loader, bundle, ...chunks] = marks.scripts;
    assert.ok(loader.src === null && loader.inline > 0, 'the first script: inline');
    assert.deepEqual(bundle, { src: 'app.bundle.js', inline: 0 }, 'then the bundle');
    assert.ok(chunks.length > 0, 'every view built: chunks loaded');
    for (const c of chunks) assert.match(c.src, /\/chunks\/[\w-]+\.js$/, 'a chunk');

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

/** Wait until the view `id` is shown and built (its build's promise: window.mhaPage.build). */
async function opened(page, id) {
  await page.waitForFunction((v) => window.mhaPage.view === v, id);
  await page.evaluate((v) => window.mhaPage.build(v), id);
}

/**
 * In the page: the view shown, the lessons' and the playground's marks in the order the page set
 * them (the views built), the sections shown, where #id is, and what names the view.
 */
function viewState(id) {
  return {
    view: window.mhaPage.view,
    hash: location.hash,
    built: performance
      .getEntriesByType('mark')
      .map((m) => m.name)
      .filter((n) => /^mha:(lesson-\d|playground)$/.test(n)),
    shown: [...document.querySelectorAll('section')].filter((x) => !x.hidden).map((x) => x.id),
    top: id ? document.getElementById(id).getBoundingClientRect().top : null,
    scrollY,
    title: document.title,
    current: document.querySelector('#toc a[aria-current="page"]')?.getAttribute('href'),
  };
}

test('a link opens its view alone; an element it builds is scrolled to', async (t) => {
  for (const [hash, view, element] of [
    ['#lesson-3', 'lesson-3', 'lesson-3'], // a section: its view, from the top
    ['#l4-gradcheck', 'lesson-4', 'l4-gradcheck'], // built by lesson 4: the page scrolls to it
  ]) {
    const { page, log, close } = await openPage(session.browser, `${session.url}${hash}`, {
      viewport: { width: 390, height: 844 },
    });
    try {
      const seen = await page.evaluate(viewState, element);
      assert.equal(seen.view, view, hash);
      assert.deepEqual(seen.built, [`mha:${view}`], `${hash}: only its view built`);
      assert.deepEqual(seen.shown, [view], `${hash}: only its view shown`);
      assert.equal(seen.current, `#${view}`, `${hash}: the lesson bar marks it`);
      const { title } = VIEWS.find((v) => v.id === view);
      assert.ok(seen.title.startsWith(title), `${hash}: document.title ${seen.title}`);
      if (element !== view) {
        assert.ok(seen.scrollY > 1000, `${hash}: the page scrolled (scrollY ${seen.scrollY})`);
        assert.ok(Math.abs(seen.top) < 40, `${hash}: #${element} at the top (${seen.top} px)`);
      } else {
        assert.equal(seen.scrollY, 0, `${hash}: the view from its top`);
      }
      assert.deepEqual(consoleErrors(log), [], 'console errors');
      t.diagnostic(
        `${hash}: built ${seen.built.join(' ')}; shown ${seen.shown}; #${element} ${Math.round(seen.top)} px from the top`,
      );
    } finally {
      await close();
    }
  }
});

test('the lesson bar, next, back and forward: each view built once, kept', async (t) => {
  const { page, log, close } = await openPage(session.browser, session.url);
  try {
    const state = async () => {
      const { view, hash, built, shown } = await page.evaluate(viewState, null);
      return { view, hash, built, shown };
    };
    await page.click('#toc a[href="#lesson-2"]');
    await opened(page, 'lesson-2');
    let s = await state();
    assert.deepEqual(s, {
      view: 'lesson-2',
      hash: '#lesson-2',
      built: ['mha:lesson-2'],
      shown: ['lesson-2'],
    });
    await page.click('#pager-lesson-2 a[rel="next"]');
    await opened(page, 'lesson-3');
    s = await state();
    assert.deepEqual(s.built, ['mha:lesson-2', 'mha:lesson-3'], 'Next → builds lesson 3');
    await page.goBack();
    await opened(page, 'lesson-2');
    await page.goBack();
    await opened(page, 'start-here');
    s = await state();
    assert.deepEqual(s.shown, VIEWS[0].sections, 'back twice: Start here again');
    await page.goForward();
    await opened(page, 'lesson-2');
    s = await state();
    assert.deepEqual(s.shown, ['lesson-2'], 'forward: lesson 2 again');
    assert.deepEqual(s.built, ['mha:lesson-2', 'mha:lesson-3'], 'kept: nothing built twice');
    const copy = await page.locator('#lesson-2 button', { hasText: 'Copy as NumPy' }).count();
    assert.equal(copy, 1, 'lesson 2 as built the first time');
    assert.deepEqual(consoleErrors(log), [], 'console errors');
    assert.deepEqual(log.errors, [], 'page errors');
    t.diagnostic(`bar → lesson 2, Next → lesson 3, back ×2, forward: built ${s.built.join(' ')}`);
  } finally {
    await close();
  }
});

test("a lesson's script not loaded: its section says so; opening it again retries", async (t) => {
  let refuse = true; // the server answers 404 for lesson 3's chunk while this holds
  const { server, url } = await serve(webDir, 0, {
    rewrite: (path, body) => (refuse && /^\/chunks\/lesson3-[\w-]+\.js$/.test(path) ? null : body),
  });
  const { page, log, close } = await openPage(session.browser, `${url}#lesson-3`);
  try {
    const alert = page.locator('#l3-body > p.error[role="alert"]');
    await alert.waitFor({ timeout: 10_000 });
    const text = await alert.textContent();
    assert.match(text, /^Lesson 3 could not be loaded \(open it again to retry\): /);
    assert.match(text, /chunks\/lesson3-[\w-]+\.js could not be loaded/);
    const before = await page.evaluate(() => performance.getEntriesByName('mha:lesson-3').length);
    assert.equal(before, 0, 'lesson 3 not built');
    refuse = false;
    await page.click('#toc a[href="#lesson-2"]');
    await opened(page, 'lesson-2');
    await page.click('#toc a[href="#lesson-3"]');
    await page.waitForFunction(() => performance.getEntriesByName('mha:lesson-3').length === 1);
    assert.equal(await alert.count(), 0, 'the message gone: lesson 3 built');
    const f = await figures(page, 'lesson3');
    assert.ok(f && Object.keys(f).length > 0, "lesson 3's figures");
    assert.deepEqual(log.errors, [], 'page errors');
    t.diagnostic(`refused: "${text}"; then built on the second opening`);
  } finally {
    await close();
    server.close();
  }
});
