// web/jobs/, the page's background work: the Scheduler (priorities, time slices, progress,
// completion, errors, cancellation, idle), yieldToEventLoop, gradcheckJob, and the gradient-check
// bookkeeping (checkChunk, gradcheckSize, pendingReport, summarize, reportRows, errorContrast).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gradcheckJob, checkChunk } from '../../web/jobs/gradcheck.js';
import { Scheduler, yieldToEventLoop } from '../../web/jobs/scheduler.js';
import {
  gradcheckSize,
  pendingReport,
  summarize,
  reportRows,
  errorContrast,
  errorContrastText,
} from '../../web/model/gradcheck-report.js';
import { loadMHA } from '../helpers.mjs';

const mha = await loadMHA();

/** A job's start(): an iterator over `values`; `log` records what happens. */
function counting(values, log, name, { spinMs = 0 } = {}) {
  return () => {
    log.push(`${name} start`);
    function* gen() {
      for (const v of values) {
        const t0 = Date.now();
        while (Date.now() - t0 < spinMs) {
          /* busy */
        }
        yield v;
      }
    }
    return { iterator: gen(), cleanup: () => log.push(`${name} cleanup`) };
  };
}

function submitLogged(s, log, name, values, opts = {}) {
  return s.submit({
    name,
    start: counting(values, log, name, opts),
    onProgress: (v) => log.push(`${name} progress ${v}`),
    onDone: (v) => log.push(`${name} done ${v}`),
    onError: (e) => log.push(`${name} error ${e.message}`),
    ...opts,
  });
}

test(`yieldToEventLoop resolves, with MessageChannel and with the setTimeout fallback`, async () => {
  assert.equal(await yieldToEventLoop(), undefined);
  const saved = globalThis.MessageChannel;
  globalThis.MessageChannel = undefined;
  try {
    let later = false;
    setTimeout(() => {
      later = true;
    }, 0);
    await yieldToEventLoop();
    await yieldToEventLoop();
    assert.ok(later, 'the fallback yields to timers');
  } finally {
    globalThis.MessageChannel = saved;
  }
});

test(`Scheduler: higher priority first, then submission order; one slice runs a job to its end`, async () => {
  assert.equal(new Scheduler().sliceMs, 12);
  // slices long enough that no job is cut, even on a loaded machine
  const s = new Scheduler({ sliceMs: 1e9 });
  const log = [];
  const a = submitLogged(s, log, 'a', [1, 2]);
  const b = submitLogged(s, log, 'b', [1], { priority: 5 });
  const c = submitLogged(s, log, 'c', [7]);
  assert.equal(s.running, true, 'submit starts the pump at once');
  assert.equal(s.submit({ start: counting([], [], 'quiet') }).name, '', 'no name: empty');
  assert.deepEqual([a.id, b.id, c.id], [1, 2, 3]);
  assert.deepEqual([a.name, a.priority, b.priority, a.sliceMs], ['a', 0, 5, 1e9]);
  assert.ok(!a.finished && !a.cancelled);
  await s.idle();
  assert.deepEqual(log, [
    'b start',
    'b cleanup',
    'b done 1',
    'a start',
    'a cleanup',
    'a done 2',
    'c start',
    'c cleanup',
    'c done 7',
  ]);
  assert.ok(a.finished && !a.cancelled && a.busyMs >= 0);
  assert.equal(s.jobs.length, 0);
  assert.equal(s.running, false);
  await s.idle(); // nothing left: resolves at once
});

test('Scheduler: sliceMs 0 gives one value per slice, reported by onProgress', async () => {
  const s = new Scheduler({ sliceMs: 0 });
  const log = [];
  submitLogged(s, log, 'x', [1, 2, 3]);
  submitLogged(s, log, 'y', ['u', 'v'], { priority: 1, sliceMs: 1e9 }); // its own slice length
  await s.idle();
  assert.deepEqual(log, [
    'y start',
    'y cleanup',
    'y done v',
    'x start',
    'x progress 1',
    'x progress 2',
    'x progress 3',
    'x cleanup',
    'x done 3',
  ]);
});

test('Scheduler: busyMs adds up the time spent in the job', async () => {
  const s = new Scheduler({ sliceMs: 0 });
  const t0 = Date.now();
  const job = submitLogged(s, [], 'slow', [1, 2, 3], { spinMs: 5 });
  await s.idle();
  assert.ok(job.busyMs >= 15 && job.busyMs <= Date.now() - t0, `busyMs ${job.busyMs}`);
});

test('Scheduler: errors go to onError (or console.error); the other jobs go on', async () => {
  const s = new Scheduler({ sliceMs: 1e9 });
  const log = [];
  const boom = new Error('boom');
  s.submit({
    name: 'bad',
    start: () => ({
      iterator: (function* gen() {
        yield 1;
        throw boom;
      })(),
      cleanup: () => log.push('bad cleanup'),
    }),
    onError: (e) => log.push(`bad error ${e === boom}`),
    onDone: () => log.push('bad done'),
  });
  s.submit({
    start: () => {
      throw new Error('no start');
    },
    onError: (e) => log.push(`start error ${e.message}`),
  });
  const badJob = s.jobs[0];
  const seen = [];
  const saved = console.error;
  console.error = (e) => seen.push(e.message);
  try {
    s.submit({
      start: () => ({
        iterator: (function* gen() {
          yield 1;
          throw new Error('unhandled');
        })(),
      }),
    });
    submitLogged(s, log, 'ok', [1]);
    await s.idle();
  } finally {
    console.error = saved;
  }
  assert.deepEqual(log, [
    'bad cleanup',
    'bad error true',
    'start error no start',
    'ok start',
    'ok cleanup',
    'ok done 1',
  ]);
  assert.deepEqual(seen, ['unhandled']);
  assert.ok(badJob.finished && !badJob.cancelled, 'a failed job is finished, not cancelled');
});

test(`Scheduler: cancel() stops a job at once, runs its cleanup once, and never calls onDone`, async () => {
  const s = new Scheduler({ sliceMs: 0 });
  const log = [];
  const job = s.submit({
    start: counting([1, 2, 3, 4], log, 'j'),
    onProgress: (v) => {
      log.push(`progress ${v}`);
      if (v === 2) job.cancel();
    },
    onDone: () => log.push('done'),
  });
  const never = submitLogged(s, log, 'n', [1]);
  never.cancel(); // before it started: no start, no cleanup
  never.cancel(); // twice is harmless
  await s.idle();
  assert.deepEqual(log, ['j start', 'progress 1', 'progress 2', 'j cleanup']);
  assert.ok(job.finished && job.cancelled);
  assert.ok(never.finished && never.cancelled);
  job.cancel();
  assert.equal(log.length, 4, 'a second cancel does nothing');
  // a cleanup that throws (already released) is ignored
  const s2 = new Scheduler();
  const j2 = s2.submit({
    start: () => ({
      iterator: [1, 2][Symbol.iterator](),
      cleanup: () => {
        throw new Error('already freed');
      },
    }),
    onDone: () => log.push('j2 done'),
  });
  await s2.idle();
  assert.ok(j2.finished && !j2.cancelled);
  assert.equal(log.at(-1), 'j2 done');
  j2.cancel();
  assert.ok(!j2.cancelled, 'cancelling a finished job changes nothing');
  // a job without onProgress or onDone runs without errors
  const s3 = new Scheduler({ sliceMs: 0 });
  const errors = [];
  s3.submit({ start: counting([1, 2], [], 'bare'), onError: (e) => errors.push(e) });
  await s3.idle();
  assert.deepEqual(errors, []);
});

test('Scheduler: a job that cancels itself inside its slice stops there', async () => {
  const s = new Scheduler({ sliceMs: 1e9 });
  const log = [];
  const self = {};
  const start = () => ({
    iterator: (function* gen() {
      yield 1;
      self.job.cancel();
      yield 2;
      log.push('resumed');
    })(),
  });
  self.job = s.submit({ start, onDone: () => log.push('done'), onProgress: () => log.push('p') });
  await s.idle();
  assert.deepEqual(log, []);
  assert.ok(self.job.cancelled);
});

test(`gradcheckJob: a check of its own layer in slices; same report as gradcheck; layer freed`, async () => {
  const C = 8,
    heads = 2,
    B = 1,
    T = 3;
  const X = mha.standardNormal(B * T * C, { seed: 4 });
  const make = () => mha.createLayer({ C, heads, seed: 6 });
  const ref = make().gradcheck(X, { B, T, samples: 10 });
  let made = null;
  const start = gradcheckJob(
    () => {
      made = make();
      return made;
    },
    X,
    { B, T, samples: 10 },
    7,
  );
  const s = new Scheduler({ sliceMs: 0 });
  const progress = [];
  let final = null;
  const job = s.submit({
    start,
    onProgress: (p) => progress.push(p.done),
    onDone: (p) => (final = p),
  });
  await s.idle();
  assert.ok(job.finished && !job.cancelled);
  assert.equal(final.total, 12 * 10);
  assert.equal(final.done, final.total);
  assert.deepEqual(final.report, ref);
  // chunks of 7 over 10 positions per tensor: 7, 10, 17, 20, ...
  assert.deepEqual(progress.slice(0, 4), [7, 10, 17, 20]);
  assert.throws(() => made.weights, /freed/, 'the job frees its layer when it ends');
  // default chunk: checkChunk(B, T, C) (10 at the course size); cleanup frees the layer once
  const X2 = mha.standardNormal(2 * 6 * 64, { seed: 5 });
  const make2 = () => (made = mha.createLayer({ C: 64, heads: 4, seed: 6 }));
  const { iterator, cleanup } = gradcheckJob(make2, X2, { B: 2, T: 6, samples: 0 })();
  assert.equal(iterator.next().value.done, 10);
  cleanup();
  cleanup();
  assert.throws(() => made.weights, /freed/);
  // without B: one sequence
  const X3 = mha.standardNormal(6 * 64, { seed: 5 });
  const third = gradcheckJob(make2, X3, { B: 1, T: 6, samples: 0 })();
  assert.equal(third.iterator.next().value.done, checkChunk(1, 6, 64));
  third.cleanup();
});

test('checkChunk: entries per slice from the cost of a forward, between 1 and 32', () => {
  assert.equal(checkChunk(2, 6, 64), 10); // 16*8*64*64 / (2*6*64*64) = 10.67
  assert.equal(checkChunk(1, 16, 64), 8);
  assert.equal(checkChunk(1, 1, 8), 32);
  assert.equal(checkChunk(1, 64, 128), 1);
  assert.equal(checkChunk(1, 8, 64), 16);
  assert.equal(checkChunk(1, 4, 64), 32);
  assert.equal(checkChunk(1, 3, 64), 32);
});

test('gradcheckSize, pendingReport: the entries and rows of a full check', () => {
  // weights 4 C^2, X Q K V headout concat 6 BTC, scores att 2 BhT^2: 21,568 at the course size
  assert.equal(gradcheckSize(mha, { B: 2, T: 6, C: 64, heads: 4 }), 21568);
  assert.equal(gradcheckSize(mha, { T: 6, C: 64, heads: 4 }), 4 * 4096 + 6 * 384 + 2 * 4 * 36);
  const rows = pendingReport(mha, { B: 2, T: 6, C: 64, heads: 4 });
  assert.deepEqual(
    rows.map((r) => r.tensor),
    mha.checkNames,
  );
  assert.deepEqual(
    rows.map((r) => r.shape),
    [
      [64, 64],
      [64, 64],
      [64, 64],
      [64, 64],
      [2, 6, 64],
      [2, 4, 6, 16],
      [2, 4, 6, 16],
      [2, 4, 6, 16],
      [2, 4, 6, 6],
      [2, 4, 6, 6],
      [2, 4, 6, 16],
      [2, 6, 64],
    ],
  );
  assert.equal(
    rows.reduce((a, r) => a + r.size, 0),
    21568,
  );
  for (const r of rows) {
    assert.deepEqual([r.checked, r.maxAbs, r.maxRel, r.meanRel, r.normRel], [0, 0, 0, 0, 0]);
    assert.equal(
      r.size,
      r.shape.reduce((a, b) => a * b, 1),
    );
  }
  assert.deepEqual(pendingReport(mha, { T: 2, C: 4, heads: 2 })[4].shape, [1, 2, 4]);
  // the shapes are those the real check reports
  const layer = mha.createLayer({ C: 8, heads: 2, seed: 1 });
  const real = layer.gradcheck(mha.standardNormal(2 * 3 * 8, { seed: 2 }), {
    B: 2,
    T: 3,
    samples: 1,
  });
  assert.deepEqual(
    real.map((r) => [r.tensor, r.shape, r.size]),
    pendingReport(mha, { B: 2, T: 3, C: 8, heads: 2 }).map((r) => [r.tensor, r.shape, r.size]),
  );
  layer.free();
});

test('summarize and reportRows', () => {
  const report = [
    {
      tensor: 'Wq',
      shape: [2, 2],
      size: 4,
      checked: 4,
      maxAbs: 1e-12,
      maxRel: 3e-8,
      maxRelSum: 1.5e-8,
      meanRel: 1e-9,
      normRel: 2e-12,
      worst: 2,
    },
    {
      tensor: 'X',
      shape: [1, 2, 2],
      size: 4,
      checked: 3,
      maxAbs: 5e-11,
      maxRel: 1e-9,
      maxRelSum: 6e-10,
      meanRel: 2e-10,
      normRel: 4e-12,
      worst: 0,
    },
  ];
  assert.deepEqual(summarize(report, 1e-7), {
    maxRel: 3e-8,
    maxAbs: 5e-11,
    checked: 7,
    pass: true,
  });
  assert.equal(summarize(report, 3e-8).pass, true, 'equal to the threshold passes');
  assert.equal(summarize(report, 2.9e-8).pass, false);
  assert.deepEqual(summarize([], 0), { maxRel: 0, maxAbs: 0, checked: 0, pass: true });
  // the pass line on another form: the largest of that field
  assert.deepEqual(summarize(report, 4e-12, 'normRel'), {
    maxRel: 4e-12,
    maxAbs: 5e-11,
    checked: 7,
    pass: true,
  });
  assert.equal(summarize(report, 3.9e-12, 'normRel').pass, false);
  assert.equal(summarize(report, 1.5e-8, 'maxRelSum').pass, true);
  assert.equal(summarize(report, 1.4e-8, 'maxRelSum').pass, false);
  const rows = reportRows(report);
  assert.deepEqual(rows, [
    {
      tensor: 'Wq',
      shape: [2, 2],
      size: 4,
      checked: 4,
      maxAbs: 1e-12,
      maxRel: 3e-8,
      maxRelSum: 1.5e-8,
      meanRel: 1e-9,
      normRel: 2e-12,
    },
    {
      tensor: 'X',
      shape: [1, 2, 2],
      size: 4,
      checked: 3,
      maxAbs: 5e-11,
      maxRel: 1e-9,
      maxRelSum: 6e-10,
      meanRel: 2e-10,
      normRel: 4e-12,
    },
  ]);
  assert.notEqual(rows[0].shape, report[0].shape, 'shapes are copied');
});

test('errorContrast: the strictest per-entry row (its entry) and the largest norm-wise one', () => {
  const rows = [
    { tensor: 'Wq', checked: 4, maxRel: 1.5e-6, normRel: 5e-12, analytic: -4.1e-8 },
    { tensor: 'Q', checked: 4, maxRel: 1.8e-8, normRel: 1.4e-11, analytic: 0.3 },
    { tensor: 'K', checked: 0, maxRel: 0, normRel: 0, analytic: 0 },
  ];
  assert.deepEqual(errorContrast(rows), {
    strict: { tensor: 'Wq', maxRel: 1.5e-6, entry: 4.1e-8 },
    norm: { tensor: 'Q', normRel: 1.4e-11 },
  });
  assert.equal(errorContrast([]), null);
  assert.equal(errorContrast(null), null);
  assert.equal(errorContrast([rows[2]]), null, 'nothing checked yet');
  const f = (x) => x.toExponential(1);
  const text = errorContrastText(rows, f);
  assert.match(text, /max rel error per entry column, \|a − n\| \/ max\(\|a\|, \|n\|\), is strict/);
  assert.match(text, /here Wq: 1\.5e-6, on an entry of size 4\.1e-8/);
  assert.match(text, /norm-wise column, ‖a − n‖ \/ \(‖a‖ \+ ‖n‖\), weighs every entry by its size/);
  assert.match(text, /what many courses print, and far smaller \(at most 1\.4e-11 here, Q\)\.$/);
  const before = errorContrastText(null, f);
  assert.doesNotMatch(before, /here|\d/, 'no figures before a check has any');
  assert.match(before, /far smaller\.$/);
});

test('errorContrast on a real check: Node figures of lesson 5 (MSE on the sentence)', async (t) => {
  const { sentenceModel } = await import('../../web/model/sentence-model.js');
  const { DEFAULT_SENTENCE, tokenize } = await import('../../web/model/tokens.js');
  const { layerWith } = await import('../../web/model/layers.js');
  const m = sentenceModel(mha, { tokens: tokenize(DEFAULT_SENTENCE), C: 64, heads: 4, seed: 42 });
  const layer = layerWith(mha, 64, 4, m.W);
  const report = layer.gradcheck(m.X, { B: 1, T: m.T, loss: 'mse', target: m.target, samples: 64 });
  layer.free();
  const c = errorContrast(report);
  for (const r of report) {
    assert.ok(r.normRel >= 0 && r.normRel <= r.maxRel, `${r.tensor}: ${r.normRel} vs ${r.maxRel}`);
  }
  assert.ok(c.norm.normRel < c.strict.maxRel / 100, JSON.stringify(c));
  t.diagnostic(`sampled lesson-5 check: ${JSON.stringify(c)}`);
});
