// layer.gradcheck / layer.gradcheckSteps: the analytic backward pass against float64 central
// differences (five-point stencil, eps = 1e-3) at the course's size, plus the contract of the
// check itself (sampled mode, chunked progress, weights untouched, the reported analytic value is
// the gradient buffer's, and a corrupted gradient is caught).
//
// A full course-size check (21,568 entries, four loss evaluations each) takes 4-8 s in wasm, so
// this file runs it exactly twice: dot loss, and dot loss with the causal mask. Everything else
// is sampled or uses a small layer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, loadFixture, f64, bitEqual, maxRelErr, fmt } from './helpers.mjs';

const mha = await loadMHA();
const fx = loadFixture('course');
const fxc = loadFixture('course_causal');
const { C, h: H, B, T, seed, rng, scale } = fx;
const n = B * T * C;
const X = f64(fx.inputs.X);
const newLayer = () => mha.createLayer({ C, heads: H, seed, rng, scale });

// The gradient a row's `analytic` must come from: the buffer for weights, the tensor d<name> for
// the input X and the intermediates.
const gradOf = {
  Wq: 'dWq',
  Wk: 'dWk',
  Wv: 'dWv',
  Wo: 'dWo',
  X: 'dX',
  Q: 'dQ',
  K: 'dK',
  V: 'dV',
  scores: 'dscores',
  att: 'datt',
  headout: 'dheadout',
  concat: 'dconcat',
};

function table(t, title, rep) {
  t.diagnostic(title);
  for (const r of rep) {
    t.diagnostic(
      `  ${r.tensor.padEnd(8)} (${r.shape.join(',')}) checked ${String(r.checked).padStart(4)}/${String(r.size).padEnd(4)}` +
        ` maxRel ${fmt(r.maxRel)}  meanRel ${fmt(r.meanRel)}  maxAbs ${fmt(r.maxAbs)}  worst @${r.worst}`,
    );
  }
}

// Bounds on each row of a full dot-loss check. maxAbs is what the finite-difference noise really
// bounds (rounding in L ~ |L| * 1e-16, divided by eps = 1e-3; measured <= 1.5e-11 here), so it is
// gated at 1e-10 everywhere. maxRel is elementwise, so it is largest on the smallest gradient
// entries: without the mask every tensor measured <= 2.3e-8 (gate 1e-7). With the causal mask one
// entry of dQ is tiny (8.1e-6, where max|dQ| = 1.8), and its relative error is 3.1e-7 with
// |analytic - numeric| = 4e-12; that it is noise, not a wrong gradient, was checked by varying
// eps (noise ~ 1/eps): eps 3e-3 -> 2.0e-8, 1e-3 -> 3.1e-7, 3e-4 -> 1.4e-6, and the analytic value
// agrees with NumPy's dQ to 4e-18 (asserted below for every row's worst entry). Hence the causal
// gate is 1e-6.
const MAX_ABS = 1e-10;

function checkFullReport(rep, bound) {
  assert.deepEqual(
    rep.map((r) => r.tensor),
    mha.checkNames,
  );
  assert.deepEqual(mha.checkNames, Object.keys(gradOf));
  for (const r of rep) {
    const size = r.shape.reduce((a, b) => a * b, 1);
    assert.equal(r.size, size, `${r.tensor}: size`);
    assert.equal(r.checked, size, `${r.tensor}: checked ${r.checked} of ${size}`);
    assert.ok(
      Number.isFinite(r.maxRel) && r.maxRel <= bound,
      `${r.tensor}: maxRel ${r.maxRel} > ${bound}`,
    );
    assert.ok(r.maxAbs <= MAX_ABS, `${r.tensor}: maxAbs ${r.maxAbs} > ${MAX_ABS}`);
    assert.ok(
      r.worst >= 0 && r.worst < size && Number.isInteger(r.worst),
      `${r.tensor}: worst ${r.worst}`,
    );
    assert.ok(r.meanRel <= r.maxRel);
  }
  // The inputs have the expected sizes (C*C weights, B*T*C for X).
  assert.deepEqual(
    rep.slice(0, 5).map((r) => r.size),
    [C * C, C * C, C * C, C * C, n],
  );
}

// Runs the full check once; several tests below examine the same run.
function fullRun(causal) {
  const layer = newLayer();
  const G = f64((causal ? fxc : fx).inputs.G);
  const before = layer.params.slice();
  const t0 = performance.now();
  const rep = layer.gradcheck(X, { B, T, causal, G });
  const ms = performance.now() - t0;
  return { layer, G, before, rep, ms, causal };
}

function afterwards(t, run) {
  const { layer, G, before, rep, causal } = run;
  const ref = causal ? fxc : fx;
  // The weights are exactly as before.
  assert.ok(bitEqual(layer.params, before), 'gradcheck changed the weights');
  // The gradient buffer holds the analytic gradient of this loss: NumPy's dW for dY = G.
  let e = 0;
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
    e = Math.max(e, maxRelErr(layer.grads[w], f64(ref.backward_dot[`d${w}`])));
  }
  assert.ok(e <= 1e-12, `gradient buffer vs NumPy: ${e}`);
  // The cache holds the unperturbed forward and backward: same bits as a fresh layer's.
  const fresh = newLayer();
  const Y = fresh.forward(X, { B, T, causal }).Y;
  const { dX } = fresh.backward(G);
  assert.ok(bitEqual(layer.tensor('Y').data, Y), 'cached Y is not the unperturbed forward');
  assert.ok(bitEqual(layer.tensor('dX').data, dX), 'cached dX is not the unperturbed backward');
  for (const name of ['Q', 'scores', 'att', 'concat']) {
    assert.ok(
      bitEqual(layer.tensor(name).data, fresh.tensor(name).data),
      `cached ${name} was left perturbed`,
    );
  }
  // row.analytic is the gradient value at `worst`.
  for (const r of rep) {
    const g = gradOf[r.tensor];
    const data = g.startsWith('dW') ? layer.grads[g.slice(1)] : layer.tensor(g).data;
    assert.ok(
      Object.is(r.analytic, data[r.worst]),
      `${r.tensor}: analytic ${r.analytic} != ${g}[${r.worst}] = ${data[r.worst]}`,
    );
    assert.ok(Math.abs(r.analytic - r.numeric) <= r.maxAbs);
    // ... and it agrees with NumPy's independent backward at that entry (normwise 1e-12).
    const np = f64(ref.backward_dot[g]);
    const top = np.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    assert.ok(
      Math.abs(r.analytic - np[r.worst]) <= 1e-12 * top,
      `${r.tensor}: analytic ${r.analytic} vs NumPy ${g}[${r.worst}] = ${np[r.worst]}`,
    );
  }
  t.diagnostic(
    `weights bit-identical; grads vs NumPy ${fmt(e)}; cache = unperturbed forward/backward; analytic == ${Object.values(gradOf).join('/')}[worst]`,
  );
  fresh.free();
}

let dotRun, causalRun;

test(`full gradcheck at course size, dot loss: every entry of the 5 inputs and 7 intermediates, maxRel <= 1e-7, maxAbs <= 1e-10`, (t) => {
  dotRun = fullRun(false);
  table(t, `dot loss, G = fixture course G, eps 1e-3, ${fmt(dotRun.ms / 1000)} s:`, dotRun.rep);
  checkFullReport(dotRun.rep, 1e-7);
});

test(`after the dot-loss check: weights bit-identical, gradient buffer/cache hold the unperturbed pass, analytic == grad[worst]`, (t) => {
  dotRun ??= fullRun(false);
  afterwards(t, dotRun);
  dotRun.layer.free();
});

test(`full gradcheck at course size with causal: true, maxRel <= 1e-6 (see MAX_ABS for why not 1e-7)`, (t) => {
  causalRun = fullRun(true);
  table(
    t,
    `dot loss, causal, G = fixture course_causal G, ${fmt(causalRun.ms / 1000)} s:`,
    causalRun.rep,
  );
  checkFullReport(causalRun.rep, 1e-6);
});

test(`after the causal check: weights bit-identical, gradient buffer/cache hold the unperturbed pass, analytic == grad[worst]`, (t) => {
  causalRun ??= fullRun(true);
  afterwards(t, causalRun);
  causalRun.layer.free();
});

test('MSE loss at course size (samples 768: X and every intermediate in full)', (t) => {
  // With samples = 768, X, Q, K, V, headout, concat (768 entries each) and scores, att (288) are
  // checked entry by entry; the weights at 768 evenly spread entries of 4096.
  //
  // The bound is looser than for the dot loss, honestly so: dL/dY = 2 (Y - target) / 768 makes
  // every gradient ~1/768 of the dot loss's while the finite-difference noise stays at the
  // level of rounding in L (maxAbs ~2e-13 here), so entries with a small gradient get a larger
  // relative error. Measured when this test was written: the full (samples 0) MSE check gave
  // maxRel 4.0e-6 (at Q), 1.8e-6 (Wv), the rest <= 4e-7; maxAbs <= 2.3e-13 everywhere. Hence
  // maxRel <= 1e-5, and the absolute error, which is what the noise really bounds, <= 1e-12.
  const layer = newLayer();
  const target = f64(fx.inputs.target);
  const t0 = performance.now();
  const rep = layer.gradcheck(X, { B, T, loss: 'mse', target, samples: 768 });
  table(
    t,
    `MSE loss vs fixture target, samples 768, ${fmt((performance.now() - t0) / 1000)} s:`,
    rep,
  );
  for (const r of rep) {
    assert.equal(r.checked, Math.min(768, r.size), `${r.tensor}: checked`);
    assert.ok(r.maxRel <= 1e-5, `${r.tensor}: maxRel ${r.maxRel}`);
    assert.ok(r.maxAbs <= 1e-12, `${r.tensor}: maxAbs ${r.maxAbs}`);
  }
  // The gradient buffer holds the MSE gradient: NumPy's dY for MSE, pushed through a backward.
  const ref = newLayer();
  ref.forward(X, { B, T });
  const { dY } = mha.mseLoss(ref.tensor('Y').data, target);
  assert.ok(maxRelErr(dY, f64(fx.mse.dY)) <= 1e-12);
  ref.backward(dY);
  assert.ok(
    bitEqual(layer.gradBuffer, ref.gradBuffer),
    'gradient buffer after an MSE gradcheck != backward(mse dY)',
  );
  layer.free();
  ref.free();
});

test('sampled mode: samples 50 checks exactly 50 entries per tensor', (t) => {
  const layer = newLayer();
  const G = f64(fx.inputs.G);
  const rep = layer.gradcheck(X, { B, T, G, samples: 50 });
  for (const r of rep) {
    assert.equal(r.checked, 50, `${r.tensor}: checked ${r.checked}`);
    assert.ok(r.maxRel <= 1e-7, `${r.tensor}: maxRel ${r.maxRel}`);
  }
  t.diagnostic(
    `samples 50: checked ${rep.map((r) => r.checked).join('/')}; max maxRel ${fmt(Math.max(...rep.map((r) => r.maxRel)))}`,
  );
  // More samples than entries: every entry once (a small layer, where sizes are 16 ... 256).
  const small = mha.createLayer({ C: 16, heads: 4, seed: 1 });
  const xs = mha.standardNormal(2 * 2 * 16, { seed: 2 });
  const reps = small.gradcheck(xs, { B: 2, T: 2, samples: 1000 });
  for (const r of reps) assert.equal(r.checked, r.size, `${r.tensor}: samples > size`);
  t.diagnostic(
    `small layer, samples 1000: checked = size for sizes ${reps.map((r) => r.size).join('/')}`,
  );
  small.free();
  layer.free();
});

test('without G, the dot loss uses G = default_rng(seed).standard_normal(B*T*C)', () => {
  const a = newLayer(),
    b = newLayer();
  const ra = a.gradcheck(X, { B, T, seed: 3, samples: 5 });
  const rb = b.gradcheck(X, { B, T, G: mha.standardNormal(n, { seed: 3 }), samples: 5 });
  assert.deepEqual(ra, rb);
  const rc = a.gradcheck(X, { B, T, samples: 5 }); // seed defaults to 0
  assert.deepEqual(rc, b.gradcheck(X, { B, T, G: mha.standardNormal(n, { seed: 0 }), samples: 5 }));
  a.free();
  b.free();
});

test(`gradcheckSteps: done increases by <= chunk up to total; the final report equals the one-shot report`, (t) => {
  const layer = newLayer();
  const G = f64(fx.inputs.G);
  const opts = { B, T, G, samples: 50 };
  const oneShot = layer.gradcheck(X, opts);
  const chunk = 37;
  let prev = 0,
    yields = 0,
    last;
  for (const p of layer.gradcheckSteps(X, { ...opts, chunk })) {
    assert.equal(p.total, 12 * 50);
    assert.ok(p.done >= prev && p.done - prev <= chunk, `done ${prev} -> ${p.done}`);
    assert.ok(p.done <= p.total);
    assert.equal(p.report.length, 12);
    prev = p.done;
    last = p;
    yields++;
  }
  assert.equal(last.done, last.total);
  // Per tensor, 50 positions in chunks of 37: 2 yields each, plus the final one.
  assert.equal(yields, 12 * 2 + 1);
  assert.deepEqual(last.report, oneShot);
  t.diagnostic(
    `chunk ${chunk}: ${yields} yields, done ${prev}/${last.total}; final report deep-equal to the one-shot report`,
  );
  layer.free();
});

test('gradcheckSteps is cancelled by a forward in between, with a message that says so', () => {
  const layer = newLayer();
  const gen = layer.gradcheckSteps(X, { B, T, samples: 20, chunk: 10 });
  assert.equal(gen.next().value.done, 10);
  layer.forward(X, { B, T });
  assert.throws(
    () => gen.next(),
    (e) =>
      e instanceof Error && /^layer\.gradcheck: /.test(e.message) && /interrupted/.test(e.message),
  );
  layer.free();
});

test(`mutation check: a corrupted analytic gradient (Wq[4000] += 1e-3) is caught at index 4000`, (t) => {
  // Nothing in the API corrupts the backward pass, but the check compares against the gradient
  // buffer, which is writable: corrupt one entry after prepare and before its slice runs.
  const layer = newLayer();
  const gen = layer.gradcheckSteps(X, { B, T, G: f64(fx.inputs.G), chunk: 512 });
  assert.equal(gen.next().value.done, 512); // Wq entries 0 ... 511 checked
  const g = layer.grads.Wq;
  const good = g[4000];
  g[4000] = good + 1e-3;
  let p;
  do p = gen.next().value;
  while (p.done < C * C);
  const row = p.report[0];
  assert.equal(row.tensor, 'Wq');
  assert.equal(row.checked, C * C);
  assert.equal(row.worst, 4000);
  assert.equal(row.analytic, good + 1e-3);
  assert.ok(Math.abs(row.maxAbs - 1e-3) < 1e-9, `maxAbs ${row.maxAbs}`);
  const rel =
    Math.abs(row.analytic - row.numeric) / Math.max(Math.abs(row.analytic), Math.abs(row.numeric));
  assert.equal(row.maxRel, rel);
  assert.ok(row.maxRel > 1e-4, `maxRel ${row.maxRel} would pass a 1e-7 gate`);
  assert.ok(Math.abs(row.numeric - good) < 1e-9, `numeric ${row.numeric} vs good ${good}`);
  t.diagnostic(
    `corrupted Wq[4000]: reported worst @${row.worst}, maxRel ${fmt(row.maxRel)}, maxAbs ${fmt(row.maxAbs)}; numeric ${row.numeric} vs true ${good}`,
  );
  layer.free();
});
