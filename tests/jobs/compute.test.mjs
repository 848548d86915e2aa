// The compute engine (web/jobs/compute.js) in Node: its workers run web/jobs/worker-main.js in
// node:worker_threads (tests/jobs/compute-node-worker.mjs), exactly as the page runs it in a
// Blob-URL worker. Checked here: results bit-identical to the Node API (layer.gradcheck,
// layer.train, layer.forward) on the main-thread fallback and on 1, 2 and 4 workers (a check split
// by tensor gives identical rows), progress with an estimate of the time left, priorities,
// cancellation (no slice once the worker reads it), cancelGroup, idle, the fallback when
// workers cannot start, and clear errors for bad input.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { courseData } from '../../web/model/course.js';
import { layerWith } from '../../web/model/layers.js';
import { lesson4Values } from '../../web/model/lesson4.js';
import { sentenceModel, sentenceSpec } from '../../web/model/sentence-model.js';
import { tokenize, DEFAULT_SENTENCE } from '../../web/model/tokens.js';
import { divergedMessage } from '../../web/model/training.js';
import { Scheduler } from '../../web/jobs/scheduler.js';
import { SteppedTrainer, Trainer } from '../../web/jobs/trainer.js';
import { createCompute, poolSize, etaMs } from '../../web/jobs/compute.js';
import { checkPlan, splitRows } from '../../web/jobs/gradcheck-rows.js';
import { nodeSpawner } from './compute-node-worker.mjs';
import { repoRoot } from '../helpers.mjs';

const wasm = readFileSync(join(repoRoot, 'web', 'mha.wasm'));
const mha = await loadMHA(wasm);
const course = courseData(mha); // lesson 4: X (2, 6, 64), W, dY
const HEADS = 4;
const l4 = { C: course.C, heads: HEADS, W: course.W, X: course.X };
const l4opts = { B: course.B, T: course.T, G: course.dY };
const model = sentenceModel(mha, { tokens: tokenize(DEFAULT_SENTENCE), C: 64, heads: 4 });

/** A compute engine of n workers (0: the main thread); terminated after the test. */
function engine(t, workers, more = {}) {
  const compute = createCompute({
    mha,
    scheduler: new Scheduler({ sliceMs: 12 }),
    workers,
    wasm,
    spawner: nodeSpawner(),
    ...more,
  });
  t.after(() => compute.terminate());
  return compute;
}

/** Two gradient-check reports are the same: keys in the same order, numbers by Object.is. */
function assertSameReport(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: rows`);
  expected.forEach((e, i) => {
    const a = actual[i];
    assert.deepEqual(Object.keys(a), Object.keys(e), `${what} ${e.tensor}: fields`);
    for (const k of Object.keys(e)) {
      if (typeof e[k] === 'number') assert.ok(Object.is(a[k], e[k]), `${what} ${e.tensor}.${k}`);
      else assert.deepEqual(a[k], e[k], `${what} ${e.tensor}.${k}`);
    }
  });
}

function assertSameArray(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) {
      assert.fail(`${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
    }
  }
}

const reference = (() => {
  let r = null;
  return () => (r ??= layerWith(mha, l4.C, HEADS, l4.W).gradcheck(l4.X, l4opts));
})();

test('poolSize: auto is cores - 1 within 1..4; 0 is the main thread', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 8, 64].map((n) => poolSize('auto', n)),
    [1, 1, 2, 3, 4, 4],
  );
  assert.equal(poolSize('auto', undefined), 1);
  assert.deepEqual(
    [0, '0', 1, 2, '3', -1, 'x'].map((w) => poolSize(w, 8)),
    [0, 0, 1, 2, 3, 0, 0],
  );
  assert.equal(etaMs(1000, 0, 10), null);
  assert.equal(etaMs(1000, 5, 10), 1000);
  assert.equal(etaMs(1000, 10, 10), 0);
});

test('splitRows: every tensor in exactly one part, parts balanced by entries', () => {
  const plan = checkPlan(mha, { B: 2, T: 6, C: 64, heads: 4 });
  for (const n of [1, 2, 3, 4, 20]) {
    const parts = splitRows(plan.positions, n);
    const rows = parts.flatMap((p) => p.rows).sort((a, b) => a - b);
    assert.deepEqual(
      rows,
      plan.names.map((_, w) => w),
      `${n} parts`,
    );
    const total = plan.positions.reduce((a, b) => a + b, 0);
    assert.equal(
      parts.reduce((a, p) => a + p.entries, 0),
      total,
    );
    assert.ok(parts.length <= Math.min(n, plan.names.length));
    // no part is heavier than an even share plus the largest tensor
    const share = total / parts.length + Math.max(...plan.positions);
    for (const p of parts) assert.ok(p.entries <= share, `${n} parts: ${p.entries} > ${share}`);
  }
});

test("lesson 4's full check on 0, 1, 2, 4 workers: layer.gradcheck's bits", async (t) => {
  const expected = reference();
  for (const workers of [0, 1, 2, 4]) {
    const compute = engine(t, workers);
    assert.equal(compute.kind, workers ? 'worker' : 'main-thread');
    assert.equal(compute.size, workers);
    const seen = [];
    const t0 = performance.now();
    const job = compute.gradcheck({ ...l4, opts: l4opts, onProgress: (p) => seen.push(p) });
    const report = await job.promise;
    const ms = performance.now() - t0;
    assertSameReport(report, expected, `${workers} workers`);
    assert.ok(seen.length > 1, `${workers} workers: ${seen.length} progress reports`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].done >= seen[i - 1].done);
    const last = seen.at(-1);
    assert.equal(last.total, 21568);
    assert.equal(last.report.length, expected.length, 'progress carries every row');
    assert.ok(
      seen.some((p) => Number.isFinite(p.etaMs) && p.etaMs > 0),
      'an estimate',
    );
    assert.ok(job.busyMs > 0, `busyMs ${job.busyMs}`);
    t.diagnostic(
      `${workers} worker(s) (${compute.kind}): ${ms.toFixed(0)} ms, busy ${job.busyMs.toFixed(0)} ms, ${seen.length} progress reports, 12 rows identical`,
    );
    compute.terminate();
  }
});

test('checks of other kinds (MSE, causal, sampled, seeded G): layer.gradcheck', async (t) => {
  const compute = engine(t, 3);
  const four = engine(t, 4);
  const cases = [
    { what: 'MSE', opts: { B: 1, T: model.T, loss: 'mse', target: model.target } },
    {
      what: 'causal MSE',
      opts: { B: 1, T: model.T, causal: true, loss: 'mse', target: model.target },
    },
    { what: 'sampled', opts: { B: 1, T: model.T, loss: 'mse', target: model.target, samples: 32 } },
    { what: 'seeded G', opts: { B: 1, T: model.T, seed: 3 } },
  ];
  for (const { what, opts } of cases) {
    const args = { C: 64, heads: 4, W: model.W, X: model.X, opts };
    const expected = layerWith(mha, 64, 4, model.W).gradcheck(model.X, opts);
    const report = await compute.gradcheck(args).promise;
    assertSameReport(report, expected, what);
    // split by tensor over 3 and 4 workers (a sampled check is small: it runs whole)
    const split = await four.gradcheck({ ...args }).promise;
    assertSameReport(split, expected, `${what} (4 workers)`);
  }
});

test('training: every loss, the weights and att after equal layer.train / Trainer', async (t) => {
  const steps = 12;
  const expected = layerWith(mha, 64, 4, model.W).train(model.X, model.target, {
    B: 1,
    T: model.T,
    steps: steps + 1,
    lr: 0.1,
  });
  const trainer = new Trainer(mha, model);
  for (let k = 0; k < steps; k++) trainer.step(0.1);
  for (const workers of [0, 1]) {
    const compute = engine(t, workers);
    const seen = [];
    const args = { C: 64, heads: 4, W: model.W, X: model.X, target: model.target, T: model.T };
    const r = await compute.train({ ...args, steps, lr: 0.1, onStep: (p) => seen.push(p) }).promise;
    assertSameArray(r.losses, Array.from(expected), `${workers} workers: losses`);
    for (const k of Object.keys(model.W)) {
      assertSameArray(r.W[k], trainer.layer.weights[k], `${workers} workers: ${k} after`);
    }
    assertSameArray(r.att, trainer.att, `${workers} workers: att after`);
    assertSameArray(r.Y, trainer.Y, `${workers} workers: Y after`);
    assert.ok(seen.length >= 1, 'onStep');
    for (const p of seen) {
      assertSameArray(p.losses, Array.from(expected).slice(0, p.step + 1), `step ${p.step}`);
      assert.equal(p.loss, p.losses.at(-1));
    }
    t.diagnostic(
      `${workers} workers: ${seen.length} onStep calls, last etaMs ${seen.at(-1).etaMs}`,
    );
  }
  trainer.free();
});

test("SteppedTrainer: steps in order, as a Trainer's; reset drops steps in flight", async (t) => {
  for (const workers of [0, 1]) {
    const compute = engine(t, workers);
    const st = new SteppedTrainer(mha, compute, model);
    const ref = new Trainer(mha, model);
    const lrs = [0.1, 0.5, 0.05, 0.2];
    // asked for at once: they run one after another, each from the weights the last one left
    const losses = await Promise.all(lrs.map((lr) => st.step(lr)));
    for (const lr of lrs) ref.step(lr);
    assertSameArray(losses, ref.losses.slice(1), `${workers}: the steps' losses`);
    assertSameArray(st.losses, ref.losses, `${workers}: losses`);
    assert.deepEqual(st.lrs, lrs);
    assert.equal(st.steps, 4);
    for (const k of Object.keys(model.W)) {
      assertSameArray(st.weights[k], ref.layer.weights[k], `${workers}: ${k}`);
    }
    assertSameArray(st.att, ref.att, `${workers}: att`);
    assertSameArray(st.Y, ref.Y, `${workers}: Y`);
    const late = [st.step(0.1), st.step(0.1)];
    st.reset();
    for (const p of late) {
      const err = await p.then(
        () => assert.fail('taken after reset'),
        (e) => e,
      );
      assert.equal(err.cancelled, true);
    }
    assert.equal(st.steps, 0);
    assertSameArray(st.losses, ref.losses.slice(0, 1), `${workers}: after reset`);
    st.free();
    ref.free();
  }
});

test('training that diverges: the Trainer message, with the losses so far', async (t) => {
  for (const workers of [0, 1]) {
    const compute = engine(t, workers);
    const args = { C: 64, heads: 4, W: model.W, X: model.X, target: model.target, T: model.T };
    const err = await compute.train({ ...args, steps: 40, lr: 1e6 }).promise.then(
      () => assert.fail('no error'),
      (e) => e,
    );
    assert.equal(err.cancelled, undefined);
    const bad = err.losses.at(-1);
    assert.ok(!Number.isFinite(bad), `the last loss is ${bad}`);
    assert.equal(err.message, divergedMessage(bad));
    assert.ok(err.losses.slice(0, -1).every(Number.isFinite));
  }
});

test('forward: Y, attention and named tensors equal layer.forward', async (t) => {
  const layer = layerWith(mha, 64, 4, course.W);
  const e = layer.forward(course.X, { B: 2, T: 6, causal: true });
  const scores = layer.tensor('scores').data;
  layer.free();
  for (const workers of [0, 2]) {
    const compute = engine(t, workers);
    const r = await compute.forward({
      C: 64,
      heads: 4,
      W: course.W,
      X: course.X,
      B: 2,
      T: 6,
      causal: true,
      tensors: ['scores'],
    }).promise;
    assertSameArray(r.Y, e.Y, 'Y');
    assertSameArray(r.attention, e.attention, 'attention');
    assertSameArray(r.scores, scores, 'scores');
  }
});

test("lesson4: its view's numbers from the engine equal lesson4Values, bit for bit", async (t) => {
  // the course demo's arrays drawn where the job runs (data: null), and a notebook's arrays
  // (another seed, 2 heads) sent to it
  const other = { ...courseData(mha, { seed: 3, B: 1, T: 5, C: 32 }), heads: 2 };
  const same = (a, e, what) => {
    assert.deepEqual(Object.keys(a), Object.keys(e), `${what}: fields`);
    for (const k of ['B', 'T', 'C', 'heads', 'hs', 'params']) assert.equal(a[k], e[k], k);
    assert.deepEqual(a.order, e.order, `${what}: order`);
    for (const k of ['X', 'dY', 'Y']) assertSameArray(a[k], e[k], `${what} ${k}`);
    for (const k of Object.keys(e.W)) assertSameArray(a.W[k], e.W[k], `${what} W.${k}`);
    for (const group of ['grads', 'pathInputs']) {
      for (const [k, v] of Object.entries(e[group])) {
        assert.deepEqual(a[group][k].shape, v.shape, `${what} ${k}: shape`);
        assertSameArray(a[group][k].data, v.data, `${what} ${group}.${k}`);
      }
    }
  };
  const course4 = lesson4Values(mha);
  const other4 = lesson4Values(mha, { data: other });
  for (const workers of [0, 1]) {
    const compute = engine(t, workers);
    same(await compute.lesson4({ data: null }).promise, course4, `${workers} workers, course`);
    same(await compute.lesson4({ data: other }).promise, other4, `${workers} workers, seed 3`);
    const bad = compute.lesson4({ data: { ...other, dY: new Float64Array(7) } });
    await assert.rejects(bad.promise, /compute.lesson4: dY must hold B\*T\*C = 160 numbers/);
  }
});

test("a sentence model drawn where the job runs (model: spec): its arrays' bits", async (t) => {
  // seed 7 and causal: a model no other test draws; C = 32, h = 2 keeps it quick
  const s = { tokens: tokenize(DEFAULT_SENTENCE), C: 32, heads: 2, seed: 7, causal: true };
  const spec = sentenceSpec(s);
  const m = sentenceModel(mha, s);
  const arrays = { C: 32, heads: 2, W: m.W, X: m.X };
  const mse = { B: 1, T: m.T, causal: true, loss: 'mse' };
  const steps = { B: 1, T: m.T, causal: true, steps: 3, lr: 0.1 };
  for (const workers of [1, 0]) {
    const compute = engine(t, workers);
    const viaSpec = await Promise.all([
      compute.forward({ C: 32, heads: 2, model: spec, B: 1, T: m.T, causal: true }).promise,
      compute.gradcheck({ C: 32, heads: 2, model: spec, opts: mse }).promise,
      compute.train({ C: 32, heads: 2, model: spec, ...steps }).promise,
    ]);
    const viaArrays = await Promise.all([
      compute.forward({ ...arrays, B: 1, T: m.T, causal: true, target: m.target }).promise,
      compute.gradcheck({ ...arrays, opts: { ...mse, target: m.target } }).promise,
      compute.train({ ...arrays, target: m.target, ...steps }).promise,
    ]);
    const [f, g, tr] = viaSpec;
    const [f0, g0, tr0] = viaArrays;
    assertSameArray(f.Y, f0.Y, `${compute.kind}: Y`);
    assertSameArray(f.attention, f0.attention, `${compute.kind}: attention`);
    assert.ok(Object.is(f.loss, mha.mseLoss(f0.Y, m.target).loss), 'the loss at the weights');
    assertSameReport(g, g0, `${compute.kind}: the check`);
    assertSameReport(
      g,
      layerWith(mha, 32, 2, m.W).gradcheck(m.X, { ...mse, target: m.target }),
      'layer.gradcheck',
    );
    assertSameArray(tr.losses, tr0.losses, `${compute.kind}: losses`);
    assertSameArray(tr.W.Wq, tr0.W.Wq, `${compute.kind}: Wq after`);
  }
  // a spec that does not fit the job: a clear error
  const compute = engine(t, 0);
  const bad = [
    [{ ...spec, C: 64 }, /model is C = 64, heads = 2; the job says 32 and 2/],
    [{ ...spec, tokens: [] }, /model.tokens must be a list of 1 or more strings/],
    [null, /model must be a sentenceSpec/],
  ];
  for (const [spec2, re] of bad) {
    const job = compute.forward({ C: 32, heads: 2, model: spec2, B: 1, T: m.T });
    await assert.rejects(job.promise, re);
  }
});

test('a forward submitted during a long check runs first (priority, between slices)', async (t) => {
  for (const workers of [1, 0]) {
    const compute = engine(t, workers);
    let checkDone = false;
    let started;
    const running = new Promise((resolve) => (started = resolve));
    const check = compute.gradcheck({ ...l4, opts: l4opts, priority: 1, onProgress: started });
    check.promise.then(
      () => (checkDone = true),
      () => {},
    );
    await running;
    const t0 = performance.now();
    const r = await compute.forward({ C: 64, heads: 4, W: course.W, X: course.X, B: 2, T: 6 })
      .promise;
    const ms = performance.now() - t0;
    assert.equal(r.Y.length, 768);
    assert.equal(checkDone, false, `${workers}: the forward waited for the whole check`);
    check.cancel();
    t.diagnostic(`${compute.kind}: a forward during the check came back in ${ms.toFixed(1)} ms`);
  }
});

test('cancellation bites: no slice once the worker reads it; the next job runs', async (t) => {
  for (const workers of [1, 2, 0]) {
    const compute = engine(t, workers);
    let cancelAt = null;
    const job = compute.gradcheck({
      ...l4,
      opts: l4opts,
      group: 'old',
      name: 'old-check',
      onProgress: (p) => {
        if (cancelAt === null && p.done > 500) {
          cancelAt = p.done;
          compute.cancelGroup('old');
        }
      },
    });
    const other = compute.gradcheck({ ...l4, opts: { ...l4opts, samples: 8 }, group: 'keep' });
    const err = await job.promise.then(
      () => assert.fail('finished'),
      (e) => e,
    );
    assert.equal(err.cancelled, true);
    assertSameReport(
      await other.promise,
      layerWith(mha, 64, 4, l4.W).gradcheck(l4.X, { ...l4opts, samples: 8 }),
      'the other group',
    );
    // the worker's own count of how far the cancelled job got
    let rec;
    for (
      let i = 0;
      i < 200 && !(rec = compute.info().cancelled.find((c) => c.group === 'old'));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(rec, 'a cancellation record');
    const parts = compute.info().cancelled.filter((c) => c.group === 'old');
    const done = parts.reduce((a, c) => a + c.done, 0);
    assert.ok(done < 21568, `stopped early: ${done} of 21568 entries`);
    // (the slices that start while the message travels depend on the machine's load: said)
    for (const c of parts) assert.equal(c.slicesAfterReceipt, 0, 'slices after it was read');
    t.diagnostic(
      `${compute.kind} ${compute.size}: cancelled at ${cancelAt} entries seen; the ${parts.length} part(s) stopped at ${parts.map((c) => `${c.done}/${c.total}`).join(', ')}; slices after the cancel was sent: ${parts.map((c) => c.slicesAfterPost)}, after it was read: ${parts.map((c) => c.slicesAfterReceipt)}; the message took ${parts.map((c) => c.receiptMs?.toFixed(2))} ms`,
    );
    await compute.idle();
  }
});

test('identical checks run once: the same report; any other input runs its own', async (t) => {
  for (const workers of [1, 0]) {
    const compute = engine(t, workers);
    const opts = { B: 1, T: model.T, loss: 'mse', target: model.target };
    const args = { C: 64, heads: 4, W: model.W, X: model.X };
    const expected = layerWith(mha, 64, 4, model.W).gradcheck(model.X, opts);
    const seen = { a: 0, b: 0 };
    // the playground's way of asking: causal: false and samples: 0 spelled out, copies of arrays
    const copy = { Wq: [...model.W.Wq], Wk: model.W.Wk.slice(), Wv: model.W.Wv, Wo: model.W.Wo };
    const a = compute.gradcheck({ ...args, opts, label: 'A', onProgress: () => seen.a++ });
    const b = compute.gradcheck({
      ...args,
      W: copy,
      opts: { ...opts, causal: false, samples: 0 },
      label: 'B',
      onProgress: () => seen.b++,
    });
    // one entry of X one ulp away: a run of its own
    const X2 = Float64Array.from(model.X);
    X2[7] = X2[7] * (1 + Number.EPSILON);
    assert.notEqual(X2[7], model.X[7]);
    const c = compute.gradcheck({ ...args, X: X2, opts });
    const [ra, rb, rc] = await Promise.all([a.promise, b.promise, c.promise]);
    assertSameReport(ra, expected, `${compute.kind}: the first`);
    assertSameReport(rb, expected, `${compute.kind}: the second`);
    assert.notEqual(ra, rb, 'each caller gets its own copy of the report');
    assertSameReport(rc, layerWith(mha, 64, 4, model.W).gradcheck(X2, opts), 'X one ulp away');
    assert.equal(a.sharedWith, null);
    assert.equal(b.sharedWith, 'A');
    assert.equal(c.sharedWith, null);
    assert.ok(seen.b > 0, "the second hears the run's progress");
    assert.ok(a.busyMs > 0 && b.busyMs === 0, `busy ${a.busyMs}, ${b.busyMs}`);
    // finished and small: remembered; asked again, it settles without a run
    const again = compute.gradcheck({ ...args, opts, label: 'again' });
    assertSameReport(await again.promise, expected, 'remembered');
    assert.equal(again.sharedWith, 'A');
    assert.equal(compute.info().reused, 2);
    // reuse: false runs it anyway (the benchmark's rounds)
    const fresh = compute.gradcheck({ ...args, opts, reuse: false });
    assertSameReport(await fresh.promise, expected, 'reuse: false');
    assert.equal(fresh.sharedWith, null);
    assert.ok(fresh.busyMs > 0, `its own slices: ${fresh.busyMs} ms`);
    assert.equal(compute.info().reused, 2);
    await compute.idle();
  }
});

test('a shared check stops only when every caller has cancelled it', async (t) => {
  const compute = engine(t, 1);
  const opts = l4opts;
  const first = compute.gradcheck({ ...l4, opts, group: 'g1', name: 'first' });
  let cancelled = false;
  const second = compute.gradcheck({
    ...l4,
    opts,
    group: 'g2',
    onProgress: (p) => {
      if (!cancelled && p.done > 300) {
        cancelled = true;
        compute.cancelGroup('g1'); // the first leaves: the second still wants the run
      }
    },
  });
  const err = await first.promise.then(
    () => assert.fail('the first should be cancelled'),
    (e) => e,
  );
  assert.equal(err.cancelled, true);
  const report = await second.promise;
  assertSameReport(report, layerWith(mha, 64, 4, l4.W).gradcheck(l4.X, opts), 'the second');
  assert.deepEqual(compute.info().cancelled, [], 'the run itself was not cancelled');
  // the one that started it left: the second's report is its own, not "shared with" the first
  assert.equal(second.sharedWith, null);
  assert.ok(second.busyMs > 0, `the run's slices: ${second.busyMs} ms`);
  // now both leave a new run (another eps: not the finished one): it stops, one cancellation
  // record with the first caller's group and name
  const opts3 = { ...l4opts, eps: 3e-6 };
  let left = false;
  const x = compute.gradcheck({
    ...l4,
    opts: opts3,
    group: 'g3',
    name: 'x',
    onProgress: (p) => {
      if (!left && p.done > 300) {
        left = true;
        compute.cancelGroup('g3');
        compute.cancelGroup('g4');
      }
    },
  });
  const y = compute.gradcheck({ ...l4, opts: opts3, group: 'g4' });
  for (const j of [x, y]) assert.equal((await j.promise.catch((e) => e)).cancelled, true);
  let rec;
  for (let i = 0; i < 200 && !(rec = compute.info().cancelled[0]); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(rec, 'the run was cancelled');
  assert.equal(rec.group, 'g3');
  assert.equal(rec.name, 'x');
  assert.ok(rec.done < rec.total, `stopped at ${rec.done} of ${rec.total}`);
  await compute.idle();
});

test('idle: resolves once every job has settled, follow-up jobs included', async (t) => {
  const compute = engine(t, 1);
  await compute.idle(); // nothing submitted: at once
  let second = null;
  const first = compute.gradcheck({ ...l4, opts: { ...l4opts, samples: 4 } });
  first.promise.then(() => {
    second = compute.forward({ C: 64, heads: 4, W: course.W, X: course.X, B: 2, T: 6 });
  });
  await compute.idle();
  assert.ok(second, 'the follow-up job was submitted');
  let settled = false;
  second.promise.then(() => (settled = true));
  await Promise.resolve();
  assert.ok(settled, 'idle waited for the follow-up job');
});

test('fallback: workers = 0, no worker script, a worker that cannot start or load', async (t) => {
  const args = { ...l4, opts: { ...l4opts, samples: 16 } };
  const expected = layerWith(mha, 64, 4, l4.W).gradcheck(l4.X, args.opts);
  const throwing = {
    spawn: () => {
      throw new Error('no workers here');
    },
    dispose() {},
  };
  const crashing = {
    spawn() {
      const w = new Worker('throw new Error("the script failed")', { eval: true });
      return {
        post: (m) => w.postMessage(m),
        listen: (onMessage, onError) => {
          w.on('message', onMessage);
          w.on('error', onError);
        },
        terminate: () => w.terminate(),
      };
    },
    dispose() {},
  };
  const cases = [
    ['workers = 0', { workers: 0 }],
    ['no worker script (unbundled page)', { workers: 2, spawner: undefined, source: '' }],
    ['spawn throws', { workers: 2, spawner: throwing }],
    ['the worker script throws', { workers: 2, spawner: crashing }],
    ['the module bytes are bad', { workers: 1, wasm: new Uint8Array([0, 97, 115, 109, 9]) }],
  ];
  for (const [what, more] of cases) {
    const compute = engine(t, more.workers, more);
    const job = compute.gradcheck(args); // submitted before the failure shows
    assertSameReport(await job.promise, expected, what);
    assert.equal(compute.kind, 'main-thread', what);
    assert.equal(compute.size, 0, what);
    const info = compute.info();
    t.diagnostic(`${what}: ${info.kind} (${info.reason})`);
  }
});

test('start(): the workers start then, each sent the module, not at the first job', async (t) => {
  const spawned = [];
  const counting = nodeSpawner();
  const spawner = {
    spawn() {
      const w = counting.spawn();
      spawned.push([]);
      const sent = spawned.at(-1);
      return { ...w, post: (msg, transfer) => (sent.push(msg.type), w.post(msg, transfer)) };
    },
    dispose: () => counting.dispose?.(),
  };
  const compute = engine(t, 2, { spawner });
  assert.equal(spawned.length, 0, 'no worker before start()');
  compute.start();
  assert.deepEqual(spawned, [['init'], ['init']], 'two workers, each sent the module');
  compute.start(); // (again: nothing more)
  const r = await compute.forward({ C: 64, heads: 4, W: course.W, X: course.X, B: 2, T: 6 })
    .promise;
  assert.equal(r.Y.length, 768);
  assert.equal(spawned.length, 2, 'the first job used them');
  assert.equal(compute.kind, 'worker');
});

test('bad input: a clear error, in the workers and on the main thread', async (t) => {
  for (const workers of [0, 1, 2]) {
    const compute = engine(t, workers);
    const bad = { ...l4, W: { ...l4.W, Wk: new Float64Array(10) }, opts: l4opts };
    const err = await compute.gradcheck(bad).promise.then(
      () => assert.fail('no error'),
      (e) => e,
    );
    assert.equal(
      err.message,
      'compute.gradcheck: W.Wk must hold C*C = 4096 numbers, got 10',
      `${workers} workers`,
    );
    const e2 = await compute
      .train({
        C: 64,
        heads: 3,
        W: model.W,
        X: model.X,
        target: model.target,
        T: 8,
        steps: 1,
        lr: 0.1,
      })
      .promise.then(
        () => assert.fail('no error'),
        (e) => e,
      );
    assert.match(e2.message, /divisible/, `${workers}: ${e2.message}`);
    // the engine still works afterwards
    const ok = await compute.forward({ C: 64, heads: 4, W: course.W, X: course.X, B: 2, T: 6 })
      .promise;
    assert.equal(ok.Y.length, 768);
    t.diagnostic(`${workers} workers: "${err.message}"; "${e2.message}"`);
  }
});
