// The page in the three engines students use: Debian's Chromium (playwright-core), Debian's
// firefox-esr (puppeteer-core over WebDriver BiDi) and Debian's WebKitGTK, Safari's engine
// (selenium-webdriver over WebKitWebDriver), one browser of each for this file (engines.mjs). In
// each engine the page loads over http and from file:// with no console error, no uncaught
// exception, no CSP violation and no request that leaves the page (own origin, file:, data:, blob:
// only), runs every gradient check to completion in its worker, and shows figures equal to the
// Node API's (expected.mjs) and to the other engines', every number bit for bit; a student's
// notebook (a NumPy .npz with a known mistake) goes in through the file input and gets the Node
// API's statuses and diagnosis, and so does a training run whose learning rate decays (named
// from its losses by the loop's search); and a screenshot of each engine at 1280 px goes to
// test-results/browser/engine-<name>-1280.png.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { checkNotebook } from '../../web/check.js';
import { studentsDir } from '../check/students.mjs';
import { PYTHON } from '../helpers.mjs';
import { readNpz } from '../../web/io/npz.js';
import { assertSame, assertSameArray, consoleErrors, repoRoot, resultPath } from './browser.mjs';
import { CHECK_PANELS, ENGINE_NAMES, useEngines } from './engines.mjs';
import * as X from './expected.mjs';

const engines = useEngines();

/** figures() of each engine's loads once every check is done: seen[engine][http|file]. */
const seen = Object.fromEntries(ENGINE_NAMES.map((n) => [n, {}]));

/** Open `url`, wait for every figure and check, assert the logs are clean; returns figures(). */
async function cleanLoad(t, e, url, ownRequest, how) {
  const t0 = Date.now();
  const tab = await e.open(url);
  const ready = Date.now() - t0;
  try {
    await tab.waitChecksDone();
    const done = Date.now() - t0;
    const f = await tab.figures();
    const page = await tab.evaluate(() => ({
      ready: performance.getEntriesByName('mha:ready')[0]?.startTime ?? null,
      resources: performance.getEntriesByType('resource').map((r) => r.name),
    }));
    assert.deepEqual(consoleErrors(tab.log), [], 'console errors');
    assert.deepEqual(tab.log.errors, [], 'uncaught exceptions (pageerror)');
    assert.deepEqual(tab.log.dialogs, [], 'dialogs');
    assert.deepEqual(await tab.cspViolations(), [], 'Content-Security-Policy violations');
    const requests = [...tab.log.requests, ...page.resources];
    assert.deepEqual(
      requests.filter((r) => !ownRequest(r)),
      [],
      "requests outside the page's own origin",
    );
    // Firefox reports no file: loads through WebDriver BiDi (a request to the network it would)
    if (how === 'http') assert.ok(requests.length >= 3, `only ${requests.length} requests seen`);
    assert.equal(typeof page.ready, 'number', 'performance.mark("mha:ready") missing');
    const compute = await tab.evaluate(() => window.mhaPage.compute);
    assert.equal(compute.kind, 'worker', `the checks ran without the worker: ${compute.reason}`);
    t.diagnostic(
      `${e.version}, ${how}: navigation -> mha:ready ${page.ready.toFixed(0)} ms; open -> ready ` +
        `${ready} ms, -> every figure and check done ${done} ms; ${tab.log.requests.length} ` +
        `requests reported (${tab.log.requests.map(shortUrl).join(' ')}), ` +
        `${tab.log.console.length} console messages`,
    );
    if (how === 'http') await probeLogs(tab);
    return f;
  } finally {
    await tab.close();
  }
}

const shortUrl = (r) =>
  r.startsWith('data:') ? `${r.slice(0, 16)}...` : new URL(r).pathname.split('/').pop() || '/';

/**
 * The logs would have caught it: a console error, an uncaught exception and a CSP violation (an
 * inline <style>) made on purpose each arrive.
 */
async function probeLogs(tab) {
  await tab.evaluate(() => {
    console.error('mha-probe console');
    setTimeout(() => {
      throw new Error('mha-probe throw');
    });
    const style = document.createElement('style'); // style-src 'self': an inline one is blocked
    style.textContent = 'body { outline: 0; }';
    document.head.append(style);
    style.remove();
  });
  const probed = () =>
    consoleErrors(tab.log).some((m) => m.includes('mha-probe console')) &&
    tab.log.errors.some((m) => m.includes('mha-probe throw'));
  for (let i = 0; i < 100 && !probed(); i++) {
    await new Promise((ok) => setTimeout(ok, 20));
    await tab.flushLog();
  }
  assert.ok(probed(), `a probe went unseen: ${JSON.stringify(tab.log)}`);
  const csp = await tab.waitFor(() => window.__mhaCsp.length && window.__mhaCsp, null, {
    timeout: 2000,
    what: 'the probe CSP violation (inline <style>)',
  });
  assert.match(csp.join(), /style-src/, 'the probe CSP violation');
}

const ownHttp = (url) => (r) => r.startsWith(url) || /^(data|blob):/.test(r);
const ownFile = (r) => /^(file|data|blob):/.test(r);

engines.test(
  'over http: every check done; no console error, page error or CSP violation; only own requests',
  async (t, e) => {
    seen[e.name].http = await cleanLoad(t, e, e.url, ownHttp(e.url), 'http');
  },
);

engines.test(
  'from file://: the same, only file:/data:/blob: requests, and the same figures as over http',
  async (t, e) => {
    seen[e.name].file = await cleanLoad(t, e, e.fileUrl, ownFile, 'file');
    assert.ok(seen[e.name].http, 'the http load ran');
    const diff = compareBits(seen[e.name].file, seen[e.name].http);
    assert.deepEqual(diff.diffs.slice(0, 5), [], `${diff.diffs.length} differences`);
    t.diagnostic(`${diff.numbers} numbers identical over http and from file://`);
  },
);

engines.test("figures equal the Node API's, gradient-check reports too", (t, e) => {
  const f = seen[e.name].http;
  assert.ok(f, 'the http load ran');
  assertLikeNode(f, t);
});

test('Chromium, Firefox and WebKit show the same figures, every number bit for bit', (t) => {
  const [first, ...others] = ENGINE_NAMES;
  for (const name of ENGINE_NAMES) assert.ok(seen[name].http, `${name} loaded the page`);
  for (const name of others) {
    const diff = compareBits(seen[name].http, seen[first].http);
    assert.deepEqual(
      diff.diffs.slice(0, 5),
      [],
      `${name} against ${first}: ${diff.diffs.length} of ${diff.numbers} numbers differ`,
    );
    assert.ok(diff.numbers > 20_000, `only ${diff.numbers} numbers in figures()`);
  }
  const json = JSON.stringify(seen[first].http);
  t.diagnostic(
    `${ENGINE_NAMES.map((n) => engines.get(n).version).join(', ')}: all ` +
      `${countNumbers(seen[first].http).toLocaleString('en')} ` +
      `numbers of window.mhaPage.figures() (${json.length.toLocaleString('en')} bytes of JSON) ` +
      `identical (every check done; launch ${ENGINE_NAMES.map((n) => `${n} ${engines.get(n).launchMs} ms`).join(', ')})`,
  );
});

/** A student's notebook of tests/reference/notebook_students.py: one known mistake (dconcat). */
const STUDENT = 'backward-w-not-transposed';

/** What the page's check shows for each row (window.mhaPage.check().rows), by Node's API. */
function nodeCheckRows(arrays, options) {
  const result = checkNotebook(X.mha, arrays, options);
  return result.rows.map((r) => ({
    name: r.name,
    status: r.status,
    diagnosis: r.diagnosis?.id ?? null,
  }));
}

// A lesson-5 training run whose learning rate decays (lr *= 0.9 after each update), saved as a
// student saves it (X, target, the initial weights, lr, steps, losses, W_after): its γ is
// fitted from the losses by a secant search whose residuals reach the loss's rounding (Chromium
// once divided by their zero difference there and named nothing).
const DECAY_PY = String.raw`
import sys
import numpy as np
rng = np.random.default_rng(11)
B, T, C, h = 2, 5, 12, 3
hs = C // h
X = rng.standard_normal((B, T, C))
target = rng.standard_normal((B, T, C))
W0 = {k: rng.standard_normal((C, C)) * 0.3 for k in ("Wq", "Wk", "Wv", "Wo")}

def split(x): return x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)
def merge(x): return x.transpose(0, 2, 1, 3).reshape(B, T, C)

def loss_and_grads(W):
    Q, K, V = split(X @ W["Wq"]), split(X @ W["Wk"]), split(X @ W["Wv"])
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    e = np.exp(s - s.max(-1, keepdims=True)); a = e / e.sum(-1, keepdims=True)
    cat = merge(a @ V); Y = cat @ W["Wo"]
    dY = 2 * (Y - target) / Y.size
    g = {"Wo": cat.reshape(-1, C).T @ dY.reshape(-1, C)}
    dho = split(dY @ W["Wo"].T)
    da = dho @ V.transpose(0, 1, 3, 2)
    ds = a * (da - (da * a).sum(-1, keepdims=True))
    for n, d in (("Wq", ds @ K / np.sqrt(hs)), ("Wk", ds.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)),
                 ("Wv", a.transpose(0, 1, 3, 2) @ dho)):
        g[n] = X.reshape(-1, C).T @ merge(d).reshape(-1, C)
    return np.mean((Y - target) ** 2), g

W = dict(W0)
lr0 = lr = 0.5
losses = []
for step in range(8):
    loss, g = loss_and_grads(W)
    losses.append(loss)
    W = {k: W[k] - lr * g[k] for k in W}
    lr *= 0.9
np.savez(sys.argv[1], X=X, target=target, lr=lr0, steps=8, losses=np.array(losses),
         **W0, **{k + "_after": v for k, v in W.items()})
`;

/** The decaying run's .npz, written once (in test-results/browser/) by python3 + NumPy. */
const decayFile = (() => {
  let path = null;
  return () => {
    if (!path) {
      path = resultPath('notebook-lr-decays.npz');
      execFileSync(PYTHON, ['-c', DECAY_PY, path]);
    }
    return path;
  };
})();

/**
 * Drop `file` on the check's file input in engine e: the rows must be Node's (statuses and
 * diagnosis ids, Node's checkNotebook given `options`: the page's heads field holds 4 when the
 * shapes say nothing) and `named(rows)` must hold; the logs clean. Says which rows did not match.
 */
async function dropLikeNode(t, e, file, named, options = {}) {
  const tab = await e.open(`${e.url}#notebook-check`); // (a link to the check's view)
  try {
    await tab.setInputFiles('#nb-file', file);
    const rows = await tab.waitFor(() => window.mhaPage.check().rows, null, {
      what: 'the check of the dropped file',
    });
    const expected = nodeCheckRows(readNpz(readFileSync(file)), options);
    assert.deepEqual(rows, expected);
    const wrong = expected.filter((r) => r.status !== 'match' && r.status !== 'missing');
    assert.ok(named(wrong), `the diagnosis: ${JSON.stringify(wrong)}`);
    await tab.flushLog();
    assert.deepEqual(consoleErrors(tab.log), [], 'console errors');
    assert.deepEqual(tab.log.errors, [], 'uncaught exceptions');
    const shown = wrong.map(
      (r) => `${r.name} ${r.status}${r.diagnosis ? ` (${r.diagnosis})` : ''}`,
    );
    t.diagnostic(`${e.version}: ${rows.length} rows as Node's; not matching: ${shown.join(', ')}`);
  } finally {
    await tab.close();
  }
}

engines.test(
  "a notebook's .npz through the file input: the Node API's statuses and diagnosis",
  (t, e) =>
    dropLikeNode(t, e, join(studentsDir(), `${STUDENT}.npz`), (wrong) =>
      wrong.some((r) => r.name === 'dconcat' && r.diagnosis === STUDENT),
    ),
);

engines.test(
  'a training run whose learning rate decays: named from its losses, as in Node',
  (t, e) =>
    dropLikeNode(
      t,
      e,
      decayFile(),
      (wrong) => wrong.some((r) => r.name === 'losses' && r.diagnosis === 'loop-lr-schedule'),
      { heads: 4, causal: false },
    ),
);

engines.test('a screenshot at 1280 px, every check done', async (t, e) => {
  const tab = await e.open(e.url);
  try {
    await tab.waitChecksDone();
    const path = resultPath(`engine-${e.name}-1280.png`);
    await tab.screenshot(path);
    const png = readFileSync(path);
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG', 'a PNG file');
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    // a device pixel ratio above 1 gives a multiple of the viewport
    assert.equal(width % 1280, 0, `width ${width}`);
    assert.equal(height / width, 900 / 1280, `height ${height} for width ${width}`);
    t.diagnostic(`${e.version}: ${relative(repoRoot, path)} (${width}x${height})`);
  } finally {
    await tab.close();
  }
});

/** How many numbers a figures() value holds. */
function countNumbers(v) {
  if (typeof v === 'number') return 1;
  if (!v || typeof v !== 'object') return 0;
  return Object.values(v).reduce((n, x) => n + countNumbers(x), 0);
}

// ------------------------------------------------------------------------------------------------

/**
 * Walk two figures() values side by side: counts the numbers, lists every path where they differ
 * (numbers by Object.is, so -0 and 0 differ; other values by ===; missing keys too).
 */
function compareBits(a, b, path = 'figures()', out = { numbers: 0, diffs: [] }) {
  if (typeof a === 'number' || typeof b === 'number') {
    out.numbers++;
    if (!Object.is(a, b)) out.diffs.push(`${path}: ${a} vs ${b}`);
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    if (Array.isArray(a) !== Array.isArray(b)) out.diffs.push(`${path}: array vs object`);
    for (const k of keys) compareBits(a[k], b[k], `${path}.${k}`, out);
  } else if (a !== b) {
    out.diffs.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  return out;
}

/** Node's figures (expected.mjs), computed once for both engines. */
let node;
function nodeFigures() {
  node ??= {
    l1: X.lesson1(),
    l2: X.lesson2(),
    l3: X.lesson3({ causal: false }),
    l4: X.lesson4(),
    sentence: X.sentenceForward(X.DEFAULT_SETTINGS),
    losses: X.sentenceLosses(X.DEFAULT_SETTINGS, X.DEFAULT_SETTINGS.steps + 2),
    check4: X.lesson4Gradcheck(),
    check5: X.sentenceGradcheck({}),
  };
  return node;
}

/** Every figure of figures.test.mjs against Node's, in one pass (the rules of that file). */
function assertLikeNode(f, t) {
  const x = nodeFigures();
  assert.deepEqual(f.lesson1.tokens, x.l1.tokens, 'lesson 1 tokens');
  for (const k of ['A1', 'A2']) assertSameArray(f.lesson1[k], x.l1[k], `lesson 1 ${k}`);
  assertSame(f.lesson1.maxGap, x.l1.maxGap, 'lesson 1 maxGap');
  assert.deepEqual(f.lesson1.argmaxDiffRows, x.l1.argmaxDiffRows, 'lesson 1 argmaxDiffRows');
  assert.deepEqual(f.lesson2.shapes, x.l2.shapes, 'lesson 2 shapes');
  for (const k of ['headMaxDiff', 'roundTrip']) assertSame(f.lesson2[k], x.l2[k], `lesson 2 ${k}`);
  assert.deepEqual(f.lesson3.shapes, x.l3.shapes, 'lesson 3 shapes');
  for (const k of ['att', 'blockDiagDelta', 'fullDelta']) {
    assertSameArray(f.lesson3[k], x.l3[k], `lesson 3 ${k}`);
  }
  assertSame(f.lesson3.rowSumMaxErr, x.l3.rowSumMaxErr, 'lesson 3 rowSumMaxErr');
  assert.deepEqual(Object.keys(f.lesson4.grads).sort(), X.GRADS.slice().sort(), 'lesson 4 grads');
  for (const g of X.GRADS) assertSameArray(f.lesson4.grads[g], x.l4.grads[g], `lesson 4 ${g}`);
  assert.deepEqual(f.lesson5.tokens, x.sentence.tokens, 'lesson 5 tokens');
  assertSameArray(f.lesson5.att, x.sentence.att, 'lesson 5 att');
  assertLossPrefix(f.lesson5.losses, f.lesson5.step, 'lesson 5');
  assert.deepEqual(f.playground.tokens, x.sentence.tokens, 'playground tokens');
  assert.equal(f.playground.C, X.DEFAULT_SETTINGS.C, 'playground C');
  assert.equal(f.playground.heads, X.DEFAULT_SETTINGS.heads, 'playground heads');
  for (const k of ['att', 'Y']) assertSameArray(f.playground[k], x.sentence[k], `playground ${k}`);
  assertLossPrefix(f.playground.losses, X.DEFAULT_SETTINGS.steps, 'playground');
  assert.ok(!f.playground.sampled, `the playground checks a sample: ${f.playground.sampled}`);
  // the tables' first convention, two points at ε = 1e-5: lines 1e-5 (lesson 4) and 1e-3 (MSE)
  assertSameReport(f.lesson4.gradcheck, x.check4, 'lesson 4', 1e-5);
  assertSameReport(f.lesson5.gradcheck, x.check5, 'lesson 5', 1e-3);
  assertSameReport(f.playground.gradcheck, x.check5, 'playground', 1e-3);
  t.diagnostic(
    `identical to Node: lessons 1-5 and the playground, ${x.check4.length} + 2 x ${x.check5.length} ` +
      `gradient-check rows (${CHECK_PANELS.join(', ')})`,
  );
}

/** After `steps` steps the page shows `steps` or `steps + 1` losses: a prefix of layer.train's. */
function assertLossPrefix(losses, steps, name) {
  assert.ok(
    [steps, steps + 1].includes(losses.length),
    `${name}: ${losses.length} losses after ${steps} steps`,
  );
  assert.ok(losses.length <= node.losses.length, `${name}: ${losses.length} losses`);
  assertSameArray(losses, node.losses.slice(0, losses.length), `${name} losses`);
}

/** figures() gradient-check rows against layer.gradcheck's report, exactly. */
function assertSameReport(rows, report, name, threshold) {
  assert.ok(Array.isArray(rows), `${name}: gradcheck rows missing (${rows})`);
  assert.deepEqual(
    rows.map((r) => r.tensor),
    report.map((r) => r.tensor),
    `${name}: tensors`,
  );
  for (const [i, e] of report.entries()) {
    assert.equal(rows[i].checked, e.checked, `${name} ${e.tensor}: checked`);
    assertSame(rows[i].maxAbs, e.maxAbs, `${name} ${e.tensor}: maxAbs`);
    assertSame(rows[i].maxRel, e.maxRel, `${name} ${e.tensor}: maxRel`);
    assert.ok(rows[i].maxRel <= threshold, `${name} ${e.tensor}: maxRel ${rows[i].maxRel}`);
  }
}
