// engines.mjs - the browser suite in three engines. The same test body runs in Debian's Chromium
// (playwright-core, as in browser.mjs), in Debian's firefox-esr (puppeteer-core over WebDriver
// BiDi: Playwright drives only its own patched Firefox builds, never a stock one) and in Debian's
// WebKitGTK, Safari's engine (selenium-webdriver over WebKitWebDriver: webkit.mjs). Each engine
// gives the test the same small surface:
//
//   engine = await launchEngine('webkit')      { name, version, url, fileUrl, open(url, opts),
//                                                close() }
//   tab = await engine.open(url, opts)         { page, log, evaluate, figures, waitFor, waitReady,
//                                                waitChecksDone, cspViolations, flushLog,
//                                                screenshot, setInputFiles, close }
//   tab.log                                    { console, errors, requests, dialogs }, as openPage
//
// WebKit reports its log through the page itself (webkit.mjs): tab.log is up to date after each
// evaluate (and waitFor poll); await tab.flushLog() brings it up to date otherwise. WebKit gets
// its own time limits (TIME_SCALE): under a loaded machine its first load took 15 s to ready.
//
// The hook for tests that must hold in every engine (the loads, the figures, the compute worker and
// its main-thread fallback...): useEngines() launches one browser of each engine and one server for
// the whole test file (WebKit serves web/ itself: e.url and e.fileUrl are each engine's), and its
// test() registers one test per engine:
//
//   const engines = useEngines();
//   engines.test('the worker computes the checks', async (t, e) => {
//     const tab = await e.open(e.url, { init: () => { window.Worker = undefined; } });
//     ...
//   });
//
// Every browser is Debian's: nothing is ever downloaded. Without one, every test of the file
// FAILS saying which binary is missing; it never skips. MHA_FIREFOX=/path overrides firefox-esr
// (MHA_CHROMIUM the Chromium, as in browser.mjs; webkit.mjs names WebKit's).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  checkBundle,
  chromiumTab,
  consoleErrors,
  fileUrl,
  figures,
  servePage,
} from './browser.mjs';
import { launchWebKit } from './webkit.mjs';
import { requireBrowsers } from '../tiers.mjs';

// without one of the three: one line naming the packages, and this file's process ends
requireBrowsers(['Chromium', 'Firefox', 'WebKit']);

export const FIREFOX = process.env.MHA_FIREFOX || '/usr/bin/firefox-esr';

/**
 * Preferences on top of puppeteer's (it writes ~80 into the fresh profile: no updates, no
 * telemetry, no safe browsing, dummy servers...). Puppeteer relaxes file:// to one shared origin
 * (security.fileuri.strict_origin_policy false); a student's Firefox keeps every file its own
 * origin, so the file:// load here does too.
 */
export const FIREFOX_PREFS = {
  'security.fileuri.strict_origin_policy': true,
};

export const ENGINE_NAMES = ['chromium', 'firefox', 'webkit'];

/** Each engine's time limits are the suite's times this (WebKit: its own, longer ones). */
export const TIME_SCALE = { chromium: 1, firefox: 1, webkit: 3 };

/**
 * Run in every tab before the page's own scripts: records the page's Content-Security-Policy
 * violations in window.__mhaCsp. Chromium logs each as a console error; Firefox passes only some
 * to WebDriver BiDi's log (a blocked icon: a page error; a blocked Blob-URL worker: nothing).
 */
function recordCspViolations() {
  window.__mhaCsp = [];
  window.addEventListener('securitypolicyviolation', (e) =>
    window.__mhaCsp.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`),
  );
}

const VIEWPORT = { width: 1280, height: 900 };

/** A fresh log, filled by the engine's listeners (types as Playwright names them). */
const newLog = () => ({ console: [], errors: [], requests: [], dialogs: [] });

/** Chromium through playwright-core: one context per tab, as openPage. */
async function launchChromium() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const open = async (url, { init, viewport = VIEWPORT } = {}) => {
    const scripts = [recordCspViolations, init].filter(Boolean);
    const { context, page, log } = await chromiumTab(browser, url, { viewport, init: scripts });
    return { page, log, close: () => context.close(), flushLog: async () => {} };
  };
  return { version: `Chromium ${browser.version()}`, open, close: () => browser.close() };
}

/** firefox-esr through puppeteer-core over WebDriver BiDi, in a fresh profile of its own. */
async function launchFirefox() {
  const profile = mkdtempSync(join(tmpdir(), 'mha-firefox-'));
  let browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox',
      protocol: 'webDriverBiDi',
      executablePath: FIREFOX,
      headless: true,
      userDataDir: profile,
      extraPrefsFirefox: FIREFOX_PREFS,
      defaultViewport: null,
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  const open = async (url, { init, viewport = VIEWPORT } = {}) => {
    const context = await browser.createBrowserContext();
    const log = newLog();
    const page = await context.newPage();
    await page.setViewport(viewport);
    page.on('request', (r) => log.requests.push(r.url()));
    page.on('console', (m) =>
      log.console.push({
        type: m.type() === 'warn' ? 'warning' : m.type(),
        text: m.text(),
        location: m.location(),
      }),
    );
    page.on('pageerror', (e) => log.errors.push(e.stack || e.message));
    page.on('dialog', (d) => {
      log.dialogs.push(`${d.type()}: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    for (const script of [recordCspViolations, init].filter(Boolean)) {
      await page.evaluateOnNewDocument(script);
    }
    await page.goto(url);
    // puppeteer's uploadFile, under the name Playwright and webkit.mjs give it
    page.setInputFiles = async (selector, path) => (await page.$(selector)).uploadFile(path);
    return { page, log, close: () => context.close(), flushLog: async () => {} };
  };
  const close = async () => {
    try {
      await browser.close();
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  };
  return { version: `Firefox ${(await browser.version()).split('/')[1]}`, open, close };
}

const LAUNCH = { chromium: launchChromium, firefox: launchFirefox, webkit: launchWebKit };

/**
 * Launch one engine by name. engine.open(url, opts) opens a tab in a fresh context (its own
 * storage) and waits for the page's ready flag (unless ready: false). opts:
 *   init      a self-contained function run in the page before any of its scripts (e.g. one
 *             that takes Worker away, to force the main-thread fallback)
 *   ready     wait for data-ready="1" (default true); timeout (ms, default 30 s); viewport
 */
export async function launchEngine(name) {
  if (!LAUNCH[name]) throw new Error(`unknown engine '${name}' (${ENGINE_NAMES.join(', ')})`);
  checkBundle();
  const t0 = Date.now();
  const raw = await LAUNCH[name]();
  const scale = TIME_SCALE[name];
  const engine = {
    name,
    version: raw.version,
    launchMs: Date.now() - t0,
    /** Its time limits are the suite's times this (TIME_SCALE). */
    timeScale: scale,
    /** The page over http and from file:// for this engine (null: the suite's own server). */
    url: raw.url ?? null,
    fileUrl: raw.fileUrl ?? null,
    close: raw.close,
    async open(url, { ready = true, timeout = 30_000, ...opts } = {}) {
      const { page, log, close, flushLog } = await raw.open(url, opts);
      const tab = makeTab(page, log, { close, flushLog, scale });
      if (ready) await tab.waitReady(timeout);
      return tab;
    },
  };
  return engine;
}

/**
 * What a test does with a page, the same in every engine. Every time limit (waitFor, waitReady,
 * waitChecksDone) is multiplied by the engine's TIME_SCALE.
 */
function makeTab(page, log, { close, flushLog, scale }) {
  const tab = {
    page,
    log,
    close,
    /** Bring tab.log up to date (WebKit's is read from the page; the others' are live). */
    flushLog,
    /** A PNG of the viewport at `path`. */
    screenshot: (path) => page.screenshot({ path }),
    /** Give the file input at `selector` the file at `path`, as a student picking it. */
    setInputFiles: (selector, path) => page.setInputFiles(selector, path),
    /** page.evaluate(fn, arg): the same call in playwright-core and puppeteer-core. */
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    /** window.mhaPage.figures() (or one key), exactly (browser.mjs figures()). */
    figures: (key) => figures(page, key),
    /** Poll fn(arg) in the page until it returns something truthy; returns that. */
    async waitFor(fn, arg, { timeout = 30_000, what = 'the page' } = {}) {
      const deadline = Date.now() + timeout * scale;
      for (;;) {
        const got = await page.evaluate(fn, arg);
        if (got) return got;
        if (Date.now() > deadline) {
          throw new Error(`timed out after ${timeout * scale} ms waiting for ${what}`);
        }
        await new Promise((ok) => setTimeout(ok, 50));
      }
    },
    /** The page's CSP violations so far (see recordCspViolations). */
    cspViolations: () => page.evaluate(() => window.__mhaCsp ?? ['(not recorded)']),
    /** data-ready="1"; on timeout, say what the page logged. */
    async waitReady(timeout = 30_000) {
      const what =
        'data-ready="1" ' +
        `(page errors: ${JSON.stringify(log.errors)}; console errors: ${JSON.stringify(consoleErrors(log))})`;
      await tab.waitFor(() => document.documentElement.dataset.ready === '1', null, {
        timeout,
        what,
      });
    },
    /**
     * Every view built (window.mhaPage.build(): what opening each would do), its figures drawn
     * (data-figures="1") and every gradient check done (data-done="1").
     */
    async waitChecksDone(timeout = 90_000) {
      await page.evaluate(() => window.mhaPage.build());
      await tab.waitFor(
        (ids) =>
          document.documentElement.dataset.figures === '1' &&
          ids.every((id) => document.getElementById(id)?.dataset.done === '1'),
        CHECK_PANELS,
        { timeout, what: `every figure drawn and the checks of ${CHECK_PANELS.join(', ')} done` },
      );
    },
  };
  return tab;
}

/** The page's full gradient checks: each panel gets data-done="1" when its check is complete. */
export const CHECK_PANELS = ['l4-gradcheck', 'l5-gradcheck', 'pg-gradcheck'];

/**
 * The hook for tests that must hold in every engine: registers before/after hooks that launch
 * one browser of each engine (in parallel) and serve web/ once for the test file, and returns
 *   engines.url, engines.fileUrl     the page over http (ends with '/') and from file:// (each
 *                                    engine's own are e.url and e.fileUrl)
 *   engines.test(title, body, opts)  one node:test test per engine, named '<engine>: <title>',
 *                                    running body(t, e) with e = { name, version, launchMs,
 *                                    url, fileUrl, open(url, opts) } (launchEngine's open)
 *   engines.get(name)                that session, for tests that compare the engines
 * Tests run in registration order, so a test may read what earlier ones stored.
 */
export function useEngines(names = ENGINE_NAMES) {
  const sessions = new Map();
  const engines = {
    url: '',
    fileUrl,
    server: null,
    get: (name) => sessions.get(name),
    test(title, body, opts = {}) {
      for (const name of names) {
        test(`${name}: ${title}`, opts, (t) => {
          const e = sessions.get(name);
          if (!e) throw new Error(`${name} did not start (see the before hook's error)`);
          return body(t, e);
        });
      }
    },
  };
  before(async () => {
    ({ server: engines.server, url: engines.url } = await servePage());
    const launched = await Promise.allSettled(names.map((n) => launchEngine(n)));
    launched.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        const e = r.value;
        sessions.set(
          names[i],
          Object.assign(e, { url: e.url ?? engines.url, fileUrl: e.fileUrl ?? fileUrl }),
        );
      }
    });
    const failed = launched.filter((r) => r.status === 'rejected');
    if (failed.length) throw failed[0].reason;
  });
  after(async () => {
    await Promise.allSettled([...sessions.values()].map((e) => e.close()));
    engines.server?.close();
  });
  return engines;
}
