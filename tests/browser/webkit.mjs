// webkit.mjs - WebKit, Safari's engine, for the browser suite (engines.mjs): Debian's WebKitGTK
// MiniBrowser driven by WebKitWebDriver (WebDriver classic) through selenium-webdriver, on a
// private Xvfb display. Neither Playwright (it drives only its own patched WebKit builds) nor
// Puppeteer (Chromium and Firefox only) drives a stock WebKitGTK; selenium-webdriver is the W3C
// WebDriver client the WebDriver project itself publishes.
//
// WebDriver classic has no console log, no page-error events, no request log and no init
// scripts, so this engine brings its own:
//   - the page's HTML gets one extra first script, mha-probe.js, which records console messages,
//     uncaught errors and rejections, dialogs and CSP violations in the page (window.__mhaLog,
//     window.__mhaCsp) and then runs the tab's init function; over http it is served by this
//     engine's own server of web/ (which also logs every request), from file:// it sits in a
//     temporary copy of web/ (index.html and the probe written there, every other file a
//     symbolic link to web/'s);
//   - each evaluate() brings the page's new log entries back into tab.log.
// WebKitWebDriver holds one session with one window: this engine has one tab open at a time.
//
// The binaries are Debian's (bash .ci/setup webkit: webkit2gtk-driver, xvfb). MHA_WEBKIT_DRIVER,
// MHA_MINIBROWSER and MHA_XVFB override them. Without one, launching FAILS saying which.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Builder, By } from 'selenium-webdriver';
import { freePort } from '../helpers.mjs';
import { serve } from '../serve.mjs';
import { webDir } from './browser.mjs';

export const WEBKIT_DRIVER = process.env.MHA_WEBKIT_DRIVER || '/usr/bin/WebKitWebDriver';
export const XVFB = process.env.MHA_XVFB || '/usr/bin/Xvfb';
const PROBE = 'mha-probe.js';

/** The MiniBrowser Debian's WebKitGTK installs (dpkg -L libwebkit2gtk-4.1-0), or null. */
export function findMiniBrowser() {
  if (process.env.MHA_MINIBROWSER) return process.env.MHA_MINIBROWSER;
  try {
    const files = execFileSync('dpkg', ['-L', 'libwebkit2gtk-4.1-0'], { encoding: 'utf8' });
    return files.split('\n').find((f) => f.endsWith('/MiniBrowser')) ?? null;
  } catch {
    return null;
  }
}

/** Throws, saying what to install, unless the driver, the MiniBrowser and Xvfb are all here. */
function checkBinaries() {
  const miniBrowser = findMiniBrowser();
  const missing = [
    [WEBKIT_DRIVER, 'WebKitWebDriver', 'webkit2gtk-driver'],
    [miniBrowser, 'the MiniBrowser of libwebkit2gtk-4.1-0', 'webkit2gtk-driver'],
    [XVFB, 'Xvfb', 'xvfb'],
  ].filter(([path]) => !path || !existsSync(path));
  if (missing.length) {
    throw new Error(
      `WebKit: ${missing.map(([p, what]) => `${what} not found${p ? ` at ${p}` : ''}`).join('; ')}: ` +
        `the browser suite needs Debian's ${[...new Set(missing.map((m) => m[2]))].join(' and ')} ` +
        '(apt-get install, or bash .ci/setup); nothing is downloaded here.',
    );
  }
  return miniBrowser;
}

/**
 * Runs first in every page (mha-probe.js): records what WebDriver classic cannot report, in the
 * shapes engines.mjs's logs use. The tab's init function follows it in the same file.
 */
function probe() {
  const log = { console: [], errors: [], dialogs: [] };
  window.__mhaLog = log;
  window.__mhaCsp = [];
  const show = (a) => {
    if (a instanceof Error) return a.stack || String(a);
    if (typeof a === 'string') return a;
    try {
      return JSON.stringify(a) ?? String(a);
    } catch {
      return String(a);
    }
  };
  for (const type of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = console[type].bind(console);
    console[type] = (...args) => {
      const kind = type === 'warn' ? 'warning' : type;
      log.console.push({ type: kind, text: args.map(show).join(' '), location: {} });
      original(...args);
    };
  }
  // the message and where it came from (WebKit's stack lines name no message)
  const error = (message, err) =>
    log.errors.push(err?.stack ? `${message}\n${err.stack}` : message);
  window.addEventListener('error', (e) => error(e.message, e.error));
  window.addEventListener('unhandledrejection', (e) => error(show(e.reason), e.reason));
  for (const type of ['alert', 'confirm', 'prompt']) {
    window[type] = (message) => {
      log.dialogs.push(`${type}: ${message}`);
      return type === 'confirm' ? false : null;
    };
  }
  window.addEventListener('securitypolicyviolation', (e) =>
    window.__mhaCsp.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`),
  );
}

/** The probe file for a tab: probe(), then its init function (if any). */
const probeSource = (init) =>
  [probe, init]
    .filter(Boolean)
    .map((f) => `(${f.toString()})();`)
    .join('\n');

/** index.html with the probe as the first script of <head>. */
function withProbe(html) {
  const text = html.toString('utf8');
  if (!text.includes('<head>')) throw new Error('webkit: index.html has no <head> for the probe');
  return text.replace('<head>', `<head>\n<script src="${PROBE}"></script>`);
}

/** Xvfb on a display it picks itself (-displayfd): { proc, display }. */
function startXvfb() {
  const proc = spawn(
    XVFB,
    ['-displayfd', '3', '-screen', '0', '1920x1200x24', '-nolisten', 'tcp'],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    },
  );
  let errText = '';
  proc.stderr.on('data', (d) => (errText += d));
  return new Promise((ok, fail) => {
    let out = '';
    proc.stdio[3].on('data', (d) => {
      out += d;
      if (out.includes('\n')) ok({ proc, display: `:${out.trim()}` });
    });
    proc.once('error', fail);
    proc.once('exit', (code) => fail(new Error(`Xvfb exited (${code}): ${errText.slice(-400)}`)));
  });
}

/** WebKitWebDriver on a free port of this display; resolves once /status answers. */
async function startDriver(display) {
  const port = await freePort();
  const proc = spawn(WEBKIT_DRIVER, [`--port=${port}`], {
    env: { ...process.env, DISPLAY: display },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errText = '';
  proc.stderr.on('data', (d) => (errText += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`WebKitWebDriver exited (${proc.exitCode}): ${errText.slice(-400)}`);
    }
    try {
      if ((await fetch(`${url}/status`)).ok) return { proc, url };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not answer on ${url}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The script evaluate() runs (WebDriver's execute async script): the function's source, called
 * with the argument, awaited; its value comes back with the page's new log entries.
 */
const EVALUATE = (fn) => `
const [arg, done] = arguments;
const take = () => {
  const l = window.__mhaLog;
  return l ? { console: l.console.splice(0), errors: l.errors.splice(0), dialogs: l.dialogs.splice(0) } : null;
};
Promise.resolve()
  .then(() => (${fn.toString()})(arg))
  .then(
    (value) => done({ ok: true, undef: value === undefined, value: value ?? null, log: take() }),
    (err) => done({ ok: false, error: String((err && err.stack) || err), log: take() }),
  );`;

/**
 * Launch WebKit: Xvfb, WebKitWebDriver, one MiniBrowser session, a server of web/ with the
 * probe. Returns { version, url, fileUrl, open(url, opts), close() } for engines.mjs;
 * open() resolves to { page, log, close } with page.evaluate(fn, arg), page.screenshot({ path })
 * and page.setInputFiles(selector, path).
 */
export async function launchWebKit() {
  const miniBrowser = checkBinaries();
  const procs = [];
  const state = { init: null, requests: null, open: false };
  const dir = mkdtempSync(join(tmpdir(), 'mha-webkit-'));
  let driver = null;
  let server = null;
  const close = async () => {
    try {
      await driver?.quit();
    } finally {
      server?.close();
      for (const p of procs.reverse()) p.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    // file://: a copy of web/ with the probe (links to every file but index.html)
    for (const f of readdirSync(webDir)) {
      if (f !== 'index.html') symlinkSync(join(webDir, f), join(dir, f));
    }
    writeFileSync(join(dir, 'index.html'), withProbe(readFileSync(join(webDir, 'index.html'))));
    writeFileSync(join(dir, PROBE), probeSource(null));
    // http: web/ with the probe, every request logged
    let base = '';
    ({ server, url: base } = await serve(webDir, 0, {
      onRequest: (path) => state.requests?.push(new URL(path, base).href),
      rewrite: (path, body) => {
        if (path === `/${PROBE}`) return probeSource(state.init);
        return path === '/index.html' && body ? withProbe(body) : body;
      },
    }));
    const xvfb = await startXvfb();
    procs.push(xvfb.proc);
    const wd = await startDriver(xvfb.display);
    procs.push(wd.proc);
    driver = await new Builder()
      .usingServer(wd.url)
      .withCapabilities({
        browserName: 'MiniBrowser',
        'webkitgtk:browserOptions': { binary: miniBrowser, args: ['--automation'] },
      })
      .build();
    await driver.manage().setTimeouts({ script: 600_000, pageLoad: 120_000 });
    const caps = await driver.getCapabilities();
    const version = `WebKitGTK ${caps.get('browserVersion')} (MiniBrowser)`;
    const open = (url, opts) => openTab(driver, state, dir, url, opts);
    return {
      version,
      url: base,
      fileUrl: pathToFileURL(join(dir, 'index.html')).href,
      open,
      close,
    };
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}

/**
 * Set the page's viewport: the window is larger than the page's client area by its frame, and
 * without a window manager a resize lands a little after setRect returns, so this measures,
 * corrects the window by the difference and measures again until the client area is the size
 * asked for (or says what it got).
 */
async function setViewport(driver, { width, height }) {
  let rect = { width, height };
  let got = [0, 0];
  for (let attempt = 0; attempt < 20; attempt++) {
    await driver.manage().window().setRect(rect);
    await new Promise((ok) => setTimeout(ok, attempt ? 100 : 0));
    got = await driver.executeScript('return [innerWidth, innerHeight]');
    if (got[0] === width && got[1] === height) return;
    const now = await driver.manage().window().getRect();
    rect = { width: now.width + width - got[0], height: now.height + height - got[1] };
  }
  throw new Error(`webkit: the viewport stays ${got.join('x')}, asked for ${width}x${height}`);
}

/** One tab: the window of the session, navigated to url with this tab's init in the probe. */
async function openTab(driver, state, dir, url, { init, viewport = { width: 1280, height: 900 } }) {
  if (state.open) {
    throw new Error('webkit: one tab at a time (WebKitWebDriver holds one window): close the last');
  }
  state.open = true;
  state.init = init ?? null;
  writeFileSync(join(dir, PROBE), probeSource(init ?? null));
  const log = { console: [], errors: [], requests: [], dialogs: [] };
  state.requests = log.requests;
  const merge = (got) => {
    if (!got) return;
    for (const k of ['console', 'errors', 'dialogs']) log[k].push(...got[k]);
  };
  const page = {
    async evaluate(fn, arg = null) {
      const r = await driver.executeAsyncScript(EVALUATE(fn), arg);
      merge(r.log);
      if (!r.ok) throw new Error(`webkit: evaluate failed in the page: ${r.error}`);
      return r.undef ? undefined : r.value;
    },
    async screenshot({ path }) {
      // a resize can land late (no window manager): the viewport is measured again first
      await setViewport(driver, viewport);
      writeFileSync(path, Buffer.from(await driver.takeScreenshot(), 'base64'));
    },
    async setInputFiles(selector, path) {
      await driver.findElement(By.css(selector)).sendKeys(path);
    },
  };
  await setViewport(driver, viewport);
  await driver.get(url);
  const closeTab = async () => {
    try {
      await driver.get('about:blank');
    } finally {
      state.requests = null;
      state.open = false;
    }
  };
  return { page, log, close: closeTab, flushLog: () => page.evaluate(() => null) };
}
