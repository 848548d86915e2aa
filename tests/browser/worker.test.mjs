// The compute worker in both engines (Chromium and firefox-esr, engines.mjs): the page starts it
// from a Blob URL over http and from file:// (window.mhaPage.compute.kind === 'worker'), every
// gradient check finishes in it with the Node API's report, bit for bit; with ?workers=0, and with
// no Worker at all, the page falls back to main-thread slices and shows the very same figures;
// and a playground setting changed while its full check runs stops that check in the worker: no
// slice of it starts once the worker has read the cancel (the worker's own count).

import assert from 'node:assert/strict';
import { assertSame, consoleErrors } from './browser.mjs';
import { ENGINE_NAMES, useEngines } from './engines.mjs';
import * as X from './expected.mjs';

const engines = useEngines();

/** figures() of each engine's loads: seen[engine][how]. */
const seen = Object.fromEntries(ENGINE_NAMES.map((n) => [n, {}]));

let node;
const nodeChecks = () => (node ??= { l4: X.lesson4Gradcheck(), mse: X.sentenceGradcheck({}) });

/** Every row of a figures() check report equals layer.gradcheck's (checked, maxAbs, maxRel). */
function assertSameReport(rows, report, name) {
  assert.ok(Array.isArray(rows), `${name}: no report (${rows})`);
  assert.deepEqual(
    rows.map((r) => r.tensor),
    report.map((r) => r.tensor),
    `${name}: tensors`,
  );
  report.forEach((e, i) => {
    assert.equal(rows[i].checked, e.checked, `${name} ${e.tensor}: checked`);
    for (const k of ['maxAbs', 'maxRel', 'meanRel', 'normRel']) {
      assertSame(rows[i][k], e[k], `${name} ${e.tensor}: ${k}`);
    }
  });
}

/** Numbers of two figures() values that differ (Object.is), with their paths; and the count. */
function diffBits(a, b, path = 'figures()', out = { numbers: 0, diffs: [] }) {
  if (typeof a === 'number' || typeof b === 'number') {
    out.numbers++;
    if (!Object.is(a, b)) out.diffs.push(`${path}: ${a} vs ${b}`);
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      diffBits(a[k], b[k], `${path}.${k}`, out);
    }
  } else if (a !== b) {
    out.diffs.push(`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  }
  return out;
}

/**
 * Open url, wait for every figure and check, check the logs; returns { f (figures()), compute
 * (window.mhaPage.compute), ms }.
 */
async function load(e, url, opts) {
  const t0 = Date.now();
  const tab = await e.open(url, { timeout: 60_000, ...opts });
  try {
    await tab.waitChecksDone(120_000);
    const ms = Date.now() - t0;
    const f = await tab.figures();
    const compute = await tab.evaluate(() => window.mhaPage.compute);
    assert.deepEqual(consoleErrors(tab.log), [], 'console errors');
    assert.deepEqual(tab.log.errors, [], 'uncaught exceptions');
    assert.deepEqual(await tab.cspViolations(), [], 'CSP violations');
    return { f, compute, ms };
  } finally {
    await tab.close();
  }
}

function assertChecksLikeNode(f) {
  const x = nodeChecks();
  assertSameReport(f.lesson4.gradcheck, x.l4, 'lesson 4');
  assertSameReport(f.lesson5.gradcheck, x.mse, 'lesson 5');
  assertSameReport(f.playground.gradcheck, x.mse, 'playground');
}

engines.test(
  'over http: the checks run in the worker, reports equal the Node API',
  async (t, e) => {
    const r = await load(e, e.url);
    assert.equal(r.compute.kind, 'worker', `compute: ${JSON.stringify(r.compute)}`);
    assert.ok(r.compute.size >= 1 && r.compute.size <= 4, `size ${r.compute.size}`);
    assertChecksLikeNode(r.f);
    // the playground's first full check has lesson 5's inputs: one run for both
    assert.equal(r.compute.reused, 1, 'checks reused');
    seen[e.name].http = r.f;
    t.diagnostic(
      `${e.version}: ${r.compute.size} worker(s); every check done ${r.ms} ms after open; ${r.compute.reused} check reused`,
    );
  },
);

engines.test('from file://: a Blob-URL worker too, the same figures', async (t, e) => {
  const r = await load(e, e.fileUrl);
  assert.equal(r.compute.kind, 'worker', `compute: ${JSON.stringify(r.compute)}`);
  const d = diffBits(r.f, seen[e.name].http);
  assert.deepEqual(d.diffs.slice(0, 5), [], `${d.diffs.length} differences from http`);
  t.diagnostic(`${e.version}: all ${d.numbers} numbers identical to the http load's`);
});

engines.test('?workers=0 forces the main-thread fallback: the same figures', async (t, e) => {
  const r = await load(e, `${e.url}?workers=0`);
  assert.equal(r.compute.kind, 'main-thread');
  assert.equal(r.compute.size, 0);
  assertChecksLikeNode(r.f);
  const d = diffBits(r.f, seen[e.name].http);
  assert.deepEqual(d.diffs.slice(0, 5), [], `${d.diffs.length} differences from the worker's`);
  t.diagnostic(`${e.version}: all ${d.numbers} numbers identical to the worker's; ${r.ms} ms`);
});

engines.test('no Worker in this browser: the fallback, the same figures', async (t, e) => {
  const init = () => {
    window.Worker = undefined;
  };
  const r = await load(e, e.url, { init });
  assert.equal(r.compute.kind, 'main-thread', JSON.stringify(r.compute));
  const d = diffBits(r.f, seen[e.name].http);
  assert.deepEqual(d.diffs.slice(0, 5), [], `${d.diffs.length} differences from the worker's`);
  t.diagnostic(`${e.version}: ${r.compute.reason}`);
});

/**
 * In the page: as soon as the playground's full check has made progress (its first report),
 * change the seed to 7; resolves to the entries it showed then. Watched from inside the page
 * (every 2 ms), so a fast engine's check cannot finish in the round trip of a driver's poll.
 */
function changeSeedWhenRunning(timeoutMs) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const watch = () => {
      const panel = document.getElementById('pg-gradcheck');
      const bar = panel?.querySelector('progress');
      const running = panel?.dataset.kind === 'full' && panel.dataset.state === 'running';
      if (running && bar.value > 0) {
        const seed = document.getElementById('pg-seed');
        seed.value = '7';
        seed.dispatchEvent(new Event('change', { bubbles: true }));
        resolve(bar.value);
      } else if (performance.now() - t0 > timeoutMs) {
        reject(new Error("the playground's full check never ran"));
      } else {
        setTimeout(watch, 2);
      }
    };
    watch();
  });
}

/**
 * The worker's reports of the first cancelled playground check: one per part that was still to
 * finish (a check split over several workers is cancelled part by part).
 */
function cancelledParts() {
  const recs = window.mhaPage.compute.cancelled.filter((c) => c.name === 'pg-gradcheck');
  return recs.filter((c) => c.id === recs[0]?.id);
}

engines.test(
  'a setting changed while the full check runs stops it: no slice once read, on 1 and 2 workers',
  async (t, e) => {
    // seed 5: the playground's check is its own (at the defaults it shares lesson 5's run);
    // ?workers=N: the same pool in every engine (by default it follows the machine's cores)
    const report = X.sentenceGradcheck({ seed: 5 });
    const total = report.reduce((a, r) => a + r.size, 0);
    const nodeRows = report.length;
    for (const workers of [1, 2]) {
      const tab = await e.open(`${e.url}?seed=5&workers=${workers}`, { timeout: 60_000 });
      try {
        const seenDone = await tab.evaluate(changeSeedWhenRunning, 90_000 * e.timeScale);
        await tab.waitFor(() => window.mhaPage.compute.cancelled.length, null, {
          what: "the worker's report of the cancelled check",
        });
        // the new setting's check runs to its end: by then every part has said it stopped
        await tab.waitFor(() => window.mhaPage.settings().seed === 7, null, { what: 'seed 7' });
        await tab.waitChecksDone(120_000);
        const parts = await tab.evaluate(cancelledParts);
        assert.ok(parts.length >= 1 && parts.length <= workers, `${parts.length} reports`);
        // parts of the whole check: one of all 12 rows, or parts that share them out (a part
        // that finished just before the cancel sends no report)
        const all = [...Array(nodeRows).keys()];
        const rows = parts.flatMap((r) => r.part ?? all).sort((a, b) => a - b);
        assert.ok(
          rows.every((r, i) => all.includes(r) && r !== rows[i - 1]),
          `rows ${rows}`,
        );
        if (workers === 1) assert.equal(parts[0].total, total, 'the full check was cancelled');
        for (const rec of parts) {
          assert.equal(rec.engine, 'worker');
          // a part that had not started yet: no slice, no entry, no total
          const started = rec.total !== null;
          assert.ok(started || (rec.slices === 0 && rec.done === 0), JSON.stringify(rec));
          assert.ok(!started || rec.done < rec.total, `stopped early: ${rec.done} of ${rec.total}`);
          // no slice once the worker has read the cancel (those that start while the message
          // travels depend on the machine's load: said below)
          assert.equal(rec.slicesAfterReceipt, 0, 'slices after the cancel was read');
        }
        const doneAll = parts.reduce((a, r) => a + r.done, 0);
        assert.ok(doneAll < total, `it stopped early: ${doneAll} of ${total}`);
        await tab.flushLog();
        assert.deepEqual(consoleErrors(tab.log), [], 'console errors');
        const said = parts.map(
          (r) =>
            `${r.done} of ${r.total ?? '(not started)'} after ${r.slices} slices, ${r.slicesAfterPost} of them after the cancel was sent (it arrived ${r.receiptMs?.toFixed(2)} ms later), ${r.slicesAfterReceipt} after it was read`,
        );
        t.diagnostic(
          `${e.version}, ${workers} worker(s): ${seenDone} of ${total} entries shown when the seed changed; the worker(s) stopped the old check at ${said.join('; ')}`,
        );
      } finally {
        await tab.close();
      }
    }
  },
);

/** A sentence of n distinct tokens (w0 w1 ...): at C = 128 its forward pass runs in the worker. */
const wordsOf = (n, prefix = 'w') => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');

/** The playground shows Node's figures for settings s: tokens, att, Y and the losses so far. */
function playgroundLikeNode(p, s) {
  const e = X.sentenceForward(s);
  const losses = X.sentenceLosses(s, s.steps + 1);
  const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
  return (
    p?.C === s.C &&
    same(p.tokens, e.tokens) &&
    same(p.att, e.att) &&
    same(p.Y, e.Y) &&
    p.losses.length === s.steps + 1 &&
    same(p.losses, losses)
  );
}

/** Init script: every text the training status line shows, in order (window.__trainLines). */
function recordTraining() {
  // every text the progress line takes, as it is set: a mutation observer's callback runs after
  // each task that changed the page (a timer's poll could miss a line set between two polls)
  window.__trainLines = [];
  const record = () => {
    const text = document.querySelector('#pg-train-progress .note')?.textContent;
    if (text && text !== window.__trainLines.at(-1)) window.__trainLines.push(text);
  };
  new MutationObserver(record).observe(document, {
    childList: true,
    subtree: true,
    characterData: true,
  });
}

engines.test('a large view: its forward pass and training in the worker, as Node', async (t, e) => {
  for (const workers of ['', '&workers=0']) {
    const s = { ...X.DEFAULT_SETTINGS, sentence: wordsOf(64), C: 128, heads: 8, steps: 3 };
    const q = new URLSearchParams({ s: s.sentence, C: '128', h: '8', steps: '3' });
    const tab = await e.open(`${e.url}?${q}${workers}`, { timeout: 60_000, init: recordTraining });
    try {
      const kind = (await tab.evaluate(() => window.mhaPage.compute)).kind;
      assert.equal(kind, workers ? 'main-thread' : 'worker');
      const ok = () => tab.figures('playground').then((p) => playgroundLikeNode(p, s));
      for (let i = 0; !(await ok()); i++) {
        assert.ok(i < 600, `the playground never showed Node's figures (${kind})`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // an edit of the sentence: the new view comes back from the compute engine
      const s2 = { ...s, sentence: wordsOf(64, 'v') };
      await tab.evaluate((text) => {
        const input = document.getElementById('pg-sentence');
        input.value = text;
        input.dispatchEvent(new Event('change', { bubbles: true }));
      }, s2.sentence);
      const ok2 = () => tab.figures('playground').then((p) => playgroundLikeNode(p, s2));
      for (let i = 0; !(await ok2()); i++) {
        assert.ok(i < 600, `the edited view never showed Node's figures (${kind})`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // the training run's progress: its status lines, from 'Training …' to 'Trained …'
      await tab.waitFor(
        () => document.getElementById('pg-train-progress')?.dataset.state === 'done',
        null,
        { what: 'the training run to finish' },
      );
      const lines = await tab.evaluate(() => window.__trainLines);
      const where = kind === 'worker' ? 'in a background worker' : 'in small slices on this page';
      assert.equal(lines.at(-1), `Trained ${where}.`, lines.join(' | '));
      const running = lines.filter((l) => l.startsWith('Training '));
      assert.ok(running.length, `a line while it ran: ${lines.join(' | ')}`);
      for (const l of running) {
        const m = /^Training (.+): (\d) of 3 steps taken\.( About (a second|\d+ s) left\.)?$/.exec(
          l,
        );
        assert.ok(m && m[1] === where, `running line: ${l}`);
        const between = m && m[2] !== '0' && m[2] !== '3';
        assert.equal(!!m[3], between, `an estimate between the first step and the last: ${l}`);
      }
      assert.deepEqual(consoleErrors(tab.log), [], 'console errors');
      assert.deepEqual(tab.log.errors, [], 'uncaught exceptions');
      t.diagnostic(
        `${e.version}, ${kind}: T = 64, C = 128, h = 8: att, Y, 4 losses as Node's; training lines: ${lines.join(' | ')}`,
      );
    } finally {
      await tab.close();
    }
  }
});
