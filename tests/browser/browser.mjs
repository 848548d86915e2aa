// browser.mjs - shared helpers of the real-browser suite (tests/browser/*.test.mjs): Debian's
// Chromium driven by playwright-core, the page served by tests/serve.mjs or opened from file://,
// per-page logs of console messages, page errors, requests and dialogs, and exact comparisons.
//
// The suite needs /usr/bin/chromium (CI installs it: apt-get install chromium). Without it every
// browser test file FAILS at once with one line saying what to install; it never skips.
// Playwright never downloads a browser here: only executablePath is used. MHA_CHROMIUM=/path
// overrides the binary (for trying another build, or checking that a missing browser fails).
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';
import { requireBrowsers } from '../tiers.mjs';

// without Chromium: one line naming the package, and this file's process ends (no test starts)
requireBrowsers(['Chromium']);

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const webDir = join(repoRoot, 'web');
export const fileUrl = pathToFileURL(join(webDir, 'index.html')).href;
/** Screenshots go here (gitignored: /test-results/). */
export const resultsDir = join(repoRoot, 'test-results', 'browser');

export const CHROMIUM = process.env.MHA_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Throws unless the page's bundle exists and is newer than every page source (make bundle), so a
 * stale bundle can't pass for the current sources. MHA_BROWSER_ALLOW_STALE=1 skips the age check
 * (only for iterating while someone else is editing web/).
 */
export function checkBundle() {
  const bundle = join(webDir, 'app.bundle.js');
  if (!existsSync(bundle)) {
    throw new Error(`${bundle} is missing: run \`make wasm bundle\` before the browser tests`);
  }
  const built = statSync(bundle).mtimeMs;
  // every module of web/, in every folder (the layers: model/, jobs/, components/, lessons/...)
  const sources = ['mha.wasm'];
  const walk = (dir) => {
    for (const f of readdirSync(join(webDir, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${f.name}` : f.name;
      if (f.isDirectory()) {
        if (rel !== 'chunks') walk(rel); // (chunks/: built with the bundle)
      } else if (f.name.endsWith('.js') && f.name !== 'app.bundle.js') sources.push(rel);
    }
  };
  walk('');
  const stale = sources.filter(
    (f) => existsSync(join(webDir, f)) && statSync(join(webDir, f)).mtimeMs > built,
  );
  if (stale.length && !process.env.MHA_BROWSER_ALLOW_STALE) {
    throw new Error(
      `web/app.bundle.js is older than ${stale.map((f) => `web/${f}`).join(', ')}: run \`make wasm bundle\``,
    );
  }
}

/** One Chromium per test file (its absence ended the process at import: requireBrowsers). */
export async function launchBrowser() {
  checkBundle();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * One browser and one server for a test file: registers node:test before/after hooks that launch
 * Chromium and serve web/, and close both. Returns the session, filled in by the time tests run:
 *   session.browser, session.url    the browser and the page's http URL (ends with '/')
 *   session.open(path = '', opts)   openPage(browser, url + path, opts)
 */
export function useBrowser() {
  const session = {
    browser: null,
    url: '',
    server: null,
    open: (path = '', opts) => openPage(session.browser, session.url + path, opts),
  };
  before(async () => {
    session.browser = await launchBrowser();
    ({ server: session.server, url: session.url } = await servePage());
  });
  after(async () => {
    await session.browser?.close();
    session.server?.close();
  });
  return session;
}

/** Serve web/ on a free port of 127.0.0.1: { server, url } (url ends with '/'). */
export function servePage() {
  return serve(webDir, 0);
}

/**
 * A new context and page of Chromium at `url`, recording everything the tests assert on:
 *   log.console   [{ type, text, location }]   every console message
 *   log.errors    [message]                    uncaught exceptions (pageerror)
 *   log.requests  [url]                        every request of the context (page and workers)
 *   log.dialogs   [message]                    alert/confirm/prompt (dismissed)
 * `init`: functions run in the page before its own scripts. Returns { context, page, log }.
 */
export async function chromiumTab(browser, url, { viewport, init = [] }) {
  const context = await browser.newContext({ viewport });
  const log = { console: [], errors: [], requests: [], dialogs: [] };
  context.on('request', (r) => log.requests.push(r.url()));
  // every block laid out from the start, on screen or not (see layOutEverything): what tests read
  // of a view does not depend on how far down it is
  await context.addInitScript(layOutEverything);
  for (const script of init) await context.addInitScript(script);
  const page = await context.newPage();
  page.on('console', (m) =>
    log.console.push({ type: m.type(), text: m.text(), location: m.location() }),
  );
  page.on('pageerror', (e) => log.errors.push(e.stack || e.message));
  page.on('dialog', (d) => {
    log.dialogs.push(`${d.type()}: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  await page.goto(url);
  return { context, page, log };
}

/**
 * chromiumTab at `url` (1280×900 unless `viewport`); waits for
 * document.documentElement.dataset.ready === '1' unless ready: false.
 */
export async function openPage(
  browser,
  url,
  { ready = true, timeout = 30_000, viewport = { width: 1280, height: 900 } } = {},
) {
  const { context, page, log } = await chromiumTab(browser, url, { viewport });
  if (ready) await waitReady(page, log, timeout);
  return { context, page, log, close: () => context.close() };
}

/**
 * Open the view that holds the element with this id, as a link to #id does (the page shows one
 * view at a time: a lesson, the check, the playground), and wait until the element shows.
 */
export async function showView(page, id) {
  await page.evaluate((target) => {
    location.hash = target;
  }, id);
  await page.waitForFunction(
    (target) => {
      // (a control may be hidden itself, as the file input behind its button: its view shows)
      const e = document.getElementById(target);
      return !!e && !e.closest('section')?.hidden;
    },
    id,
    { timeout: 30_000 },
  );
  await page.evaluate(() => window.mhaPage.build(window.mhaPage.view)); // (its scripts loaded)
}

/**
 * Open the Go deeper fold of section `id` as a reader would (a click on its summary: what it
 * holds may be built only then); nothing if it is open.
 */
export async function openGoDeeper(page, id) {
  const fold = page.locator(`#${id} details.go-deeper`);
  if ((await fold.getAttribute('open')) === null) await fold.locator('> summary').click();
  await page.waitForFunction(
    (s) => document.querySelector(s)?.dataset.built === '1',
    `#${id} details.go-deeper`,
  );
}

/**
 * Open every closed <details> around the element at `selector` (a lesson's Go deeper, a figure's
 * export menu), outermost first, by clicking its summary as a reader would.
 */
export async function openAround(page, selector) {
  for (let i = 0; i < 8; i++) {
    const closed = await page.locator(selector).evaluate((e) => {
      let outer = null;
      for (
        let d = e.parentElement?.closest('details');
        d;
        d = d.parentElement?.closest('details')
      ) {
        if (!d.open) outer = d;
      }
      if (outer) outer.dataset.openMe = '1';
      return !!outer;
    });
    if (!closed) return;
    await page.locator('[data-open-me="1"] > summary').click();
    await page.evaluate(() => {
      for (const d of document.querySelectorAll('[data-open-me]')) delete d.dataset.openMe;
    });
  }
}

/**
 * Lay out every block of the page, on screen or not (run as an init script of every test page).
 * A view lays out and paints the blocks further down only as they come near the screen
 * (style.css: content-visibility: auto, their height guessed until then, their innerText empty);
 * what a test measures or reads (a view's height, axe's colours, a figure's text) must not depend
 * on how far down it is. Through a constructed style sheet: the page's CSP blocks an injected
 * <style>. (The benches measure the page as it is.)
 */
function layOutEverything() {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync('.lesson-body > * { content-visibility: visible !important; }');
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** Wait until the open view's figures are drawn (data-figures="1", after ready). */
export async function waitFiguresDrawn(page, timeout = 30_000) {
  await page.waitForFunction(() => document.documentElement.dataset.figures === '1', null, {
    timeout,
  });
}

/** Wait for the page's ready flag; on timeout, say what the page logged. */
export async function waitReady(page, log, timeout = 30_000) {
  try {
    await page.waitForFunction(() => document.documentElement.dataset.ready === '1', null, {
      timeout,
    });
  } catch (err) {
    throw new Error(
      `the page never set data-ready="1" (${err.message.split('\n')[0]}); ` +
        `page errors: ${JSON.stringify(log.errors)}; console errors: ${JSON.stringify(consoleErrors(log))}`,
      { cause: err },
    );
  }
}

export const consoleErrors = (log) =>
  log.console
    .filter((m) => m.type === 'error')
    .map((m) => `${m.text} @ ${m.location?.url ?? ''}:${m.location?.lineNumber ?? ''}`);

/**
 * window.mhaPage.figures() (or one of its keys), moved out of the page as a JSON string (much
 * faster than Playwright's structured serialisation of ~50k numbers). JSON round-trips every
 * finite double exactly; -0, NaN and the infinities are tagged so they survive too, and typed
 * arrays become plain arrays.
 */
export async function figures(page, key) {
  const json = await page.evaluate(async (part) => {
    const all = await window.mhaPage.figures(part ?? undefined); // (one key: only its view built)
    return JSON.stringify(part ? all[part] : all, (k, v) => {
      if (ArrayBuffer.isView(v)) return Array.from(v);
      if (typeof v === 'number' && (Object.is(v, -0) || !Number.isFinite(v))) {
        return { $num: Object.is(v, -0) ? '-0' : String(v) };
      }
      return v;
    });
  }, key ?? null);
  return json === undefined
    ? undefined
    : JSON.parse(json, (k, v) =>
        v && typeof v === 'object' && typeof v.$num === 'string' ? Number(v.$num) : v,
      );
}

/**
 * Wait until fn(figures) is true, polling window.mhaPage.figures(); returns those figures. With
 * `key` only that part is fetched (fn still sees it as figures[key]): cheaper to poll.
 */
export async function waitFigures(
  page,
  fn,
  { timeout = 20_000, what = 'the figures to change', key } = {},
) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const last = key ? { [key]: await figures(page, key) } : await figures(page);
    if (fn(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await page.waitForTimeout(50);
  }
}

/** Set an input's value as a user would (fill fires input), then fire change too. */
export async function setValue(page, selector, value) {
  const el = page.locator(selector);
  await el.fill(String(value));
  await el.dispatchEvent('change');
}

/** Set a value the input may refuse to type ('NaN' in a number field), fire input and change. */
export async function forceValue(page, selector, value) {
  await page.locator(selector).evaluate((el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, String(value));
}

// ------------------------------------------------------------------------------------------------
// exact comparisons

/** Number of elements that differ by Object.is, and the first few of them. */
export function mismatches(actual, expected) {
  const out = [];
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) if (!Object.is(actual[i], expected[i])) out.push(i);
  return out;
}

/**
 * Assert two number arrays are identical element by element (Object.is: bit equality up to NaN
 * payloads).
 */
export function assertSameArray(actual, expected, name) {
  assert.ok(
    Array.isArray(actual) || ArrayBuffer.isView(actual),
    `${name}: not an array (${typeof actual})`,
  );
  assert.equal(
    actual.length,
    expected.length,
    `${name}: length ${actual.length}, expected ${expected.length}`,
  );
  const bad = mismatches(actual, expected);
  if (bad.length) {
    const i = bad[0];
    let worst = 0;
    for (const j of bad) worst = Math.max(worst, Math.abs(actual[j] - expected[j]));
    assert.fail(
      `${name}: ${bad.length} of ${expected.length} elements differ from the Node API's; first at [${i}]: ` +
        `page ${actual[i]} vs node ${expected[i]}; largest difference ${worst}`,
    );
  }
}

/** Assert two numbers are identical (Object.is). */
export function assertSame(actual, expected, name) {
  assert.ok(Object.is(actual, expected), `${name}: page ${actual} vs node ${expected}`);
}

/** Make test-results/browser/ and return the path of `name` in it. */
export function resultPath(name) {
  mkdirSync(resultsDir, { recursive: true });
  return join(resultsDir, name);
}

export const SECTIONS = ['lesson-1', 'lesson-2', 'lesson-3', 'lesson-4', 'lesson-5', 'playground'];

/**
 * Screenshots of every section (test-results/browser/<id>.png) and of the whole page
 * (full.png). Returns lines describing the files written.
 */
export async function screenshotSections(page, prefix = '') {
  const written = [];
  // A sticky bar (the contents) would be drawn across the middle of every section taller than
  // the viewport, so sticky elements are laid out statically for these shots. Through the CSSOM:
  // the page's CSP (style-src 'self') blocks injected <style> tags, and with them Playwright's
  // screenshot `style` option (silently).
  const unstuck = await page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((e) => getComputedStyle(e).position === 'sticky')
      .map((e) => {
        e.style.setProperty('position', 'static', 'important');
        return `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}`;
      }),
  );
  for (const id of SECTIONS) {
    await showView(page, id);
    const path = resultPath(`${prefix}${id}.png`);
    const section = page.locator(`section#${id}`);
    const box = await section.boundingBox();
    assert.ok(
      box && box.width > 100 && box.height > 100,
      `section#${id} is ${JSON.stringify(box)}`,
    );
    await section.screenshot({ path });
    written.push(
      `${relative(repoRoot, path)} (${Math.round(box.width)}x${Math.round(box.height)})`,
    );
  }
  const full = resultPath(`${prefix}full.png`);
  await page.screenshot({ path: full, fullPage: true });
  const { w, h } = await page.evaluate(() => ({
    w: document.documentElement.scrollWidth,
    h: document.documentElement.scrollHeight,
  }));
  written.push(`${relative(repoRoot, full)} (${w}x${h})`);
  if (unstuck.length) written.push(`(made static for the shots: ${unstuck.join(', ')})`);
  return written;
}

export const fmt = (x) => (typeof x === 'number' ? x.toExponential(3) : String(x));

/** Drop one file on the notebook check's file input (#nb-file); wait until it is listed. */
export async function dropNotebookFile(page, path) {
  await showView(page, 'nb-file');
  const listed = await page.evaluate(() => window.mhaPage.check().arrays?.length ?? 0);
  await page.setInputFiles('#nb-file', path);
  await page.waitForFunction((n) => (window.mhaPage.check().arrays?.length ?? 0) !== n, listed, {
    timeout: 10_000,
  });
}
