// The JS API's behaviour around the numbers (web/mha.js): where the module can be loaded from,
// results that are copies, live views of the weights and gradients, plain arrays accepted like
// Float64Arrays, forwardFrom for each restart point, first calls on a fresh module, the
// gradient check's bookkeeping, and memory that does not grow over repeated calls.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadMHA as loadFrom } from '../web/mha.js';
import { loadMHA, loadFixture, repoRoot, f64, bitEqual, maxRelErr } from './helpers.mjs';

const mha = await loadMHA();
const wasmPath = join(repoRoot, 'web', 'mha.wasm');
const C = 16,
  H = 4,
  B = 2,
  T = 3,
  n = B * T * C;
const X = mha.standardNormal(n, { seed: 1 });
const G = mha.standardNormal(n, { seed: 2 });
const newLayer = () => mha.createLayer({ C, heads: H, seed: 3 });

/** Y of a course-size forward through module m: the same bits whatever the module came from. */
function probeY(m) {
  const l = m.createLayer({ C, heads: H, seed: 3 });
  const { Y } = l.forward(X, { B, T });
  l.free();
  return Y;
}

test(`loadMHA: default path, a path, a file URL, an ArrayBuffer, a Uint8Array, a Buffer`, async () => {
  const bytes = readFileSync(wasmPath);
  const ref = probeY(mha);
  const sources = [
    undefined,
    wasmPath,
    pathToFileURL(wasmPath),
    bytes,
    new Uint8Array(bytes),
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
  ];
  for (const s of sources) {
    const m = await loadFrom(s);
    assert.ok(bitEqual(probeY(m), ref));
    assert.equal(m.version, mha.version);
  }
  await assert.rejects(loadFrom(join(repoRoot, 'web', 'no-such.wasm')), /ENOENT/);
  assert.match(mha.version, /^\d+\.\d+\.\d+$/);
});

test('results are copies: later calls do not change what an earlier call returned', () => {
  const Wh = mha.standardNormal(C * 8, { seed: 4 });
  const opts = { B, T, C, headSize: 8, Wq: Wh, Wk: Wh, Wv: Wh };
  const a = mha.singleHead(X, opts);
  const keep = { att: a.att.slice(), out: a.out.slice() };
  const m = mha.mseLoss(X, G);
  const dY = m.dY.slice();
  const s = mha.splitHeads(X, { B, T, C, heads: H });
  const s0 = s.slice();
  const r = mha.rng(5);
  const z = r.standardNormal(4);
  const z0 = z.slice();
  // the same calls again on other data overwrite the scratch memory
  mha.singleHead(G, opts);
  mha.mseLoss(G, X);
  mha.splitHeads(G, { B, T, C, heads: H });
  r.standardNormal(4);
  r.free();
  assert.ok(bitEqual(a.att, keep.att) && bitEqual(a.out, keep.out), 'singleHead results');
  assert.ok(bitEqual(m.dY, dY), 'mseLoss dY');
  assert.ok(bitEqual(s, s0), 'splitHeads');
  assert.ok(bitEqual(z, z0), 'rng draws');
  // layer results too
  const l = newLayer();
  const f = l.forward(X, { B, T });
  const Y0 = f.Y.slice();
  const t = l.tensor('Q');
  const Q0 = t.data.slice();
  t.data[0] = 99;
  assert.ok(bitEqual(l.tensor('Q').data, Q0), 'tensor() data is a copy');
  l.forward(G, { B, T });
  assert.ok(bitEqual(f.Y, Y0), 'forward Y');
  l.free();
});

test('weights, grads, params, gradBuffer: live views of the right length; headSize', () => {
  const l = newLayer();
  assert.deepEqual([l.C, l.heads, l.headSize], [C, H, C / H]);
  const cc = C * C;
  assert.equal(l.params.length, 4 * cc);
  assert.equal(l.gradBuffer.length, 4 * cc);
  const w = l.weights,
    g = l.grads;
  ['Wq', 'Wk', 'Wv', 'Wo'].forEach((k, i) => {
    assert.equal(w[k].length, cc);
    assert.ok(bitEqual(w[k], l.params.subarray(i * cc, (i + 1) * cc)), k);
    assert.ok(bitEqual(l.tensor(k).data, w[k]), `tensor(${k})`);
  });
  l.forward(X, { B, T });
  l.backward(G);
  ['Wq', 'Wk', 'Wv', 'Wo'].forEach((k, i) => {
    assert.ok(bitEqual(g[k], l.gradBuffer.subarray(i * cc, (i + 1) * cc)), `d${k}`);
    assert.ok(bitEqual(l.tensor(`d${k}`).data, l.grads[k]), `tensor(d${k})`);
  });
  // a write through a view is the layer's weight
  w.Wo[5] = 0.25;
  assert.equal(l.params[3 * cc + 5], 0.25);
  assert.equal(l.tensor('Wo').data[5], 0.25);
  l.setTensor('Wk', new Float64Array(cc).fill(0.5));
  assert.ok(l.weights.Wk.every((v) => v === 0.5));
  l.free();
});

test('plain arrays and other typed arrays give the same bits as Float64Arrays', () => {
  const plain = Array.from(X),
    f32 = Float32Array.from(X),
    asF64 = Float64Array.from(f32);
  const a = newLayer(),
    b = newLayer();
  assert.ok(bitEqual(a.forward(plain, { B, T }).Y, b.forward(X, { B, T }).Y));
  assert.ok(bitEqual(a.backward(Array.from(G)).dX, b.backward(G).dX));
  assert.ok(bitEqual(a.forward(f32, { B, T }).Y, b.forward(asF64, { B, T }).Y));
  const la = a.train(plain, Array.from(G), { B, T, steps: 2, lr: 0.05 });
  const lb = b.train(X, G, { B, T, steps: 2, lr: 0.05 });
  assert.ok(bitEqual(la, lb) && bitEqual(a.params, b.params));
  const ra = a.gradcheck(plain, { B, T, G: Array.from(G), samples: 3 });
  const rb = b.gradcheck(X, { B, T, G, samples: 3 });
  assert.deepEqual(ra, rb);
  a.setTensor('Wq', Array.from(b.weights.Wq));
  assert.ok(bitEqual(a.weights.Wq, b.weights.Wq));
  const heads = { B, T, C, heads: H };
  assert.ok(bitEqual(mha.splitHeads(plain, heads), mha.splitHeads(X, heads)));
  assert.ok(bitEqual(mha.mergeHeads(plain, heads), mha.mergeHeads(X, heads)));
  assert.deepEqual(mha.mseLoss(plain, Array.from(G)), mha.mseLoss(X, G));
  const W = mha.standardNormal(C * 4, { seed: 9 });
  const o = { B, T, C, headSize: 4 };
  assert.deepEqual(
    mha.singleHead(plain, { ...o, Wq: Array.from(W), Wk: W, Wv: Array.from(W) }),
    mha.singleHead(X, { ...o, Wq: W, Wk: W, Wv: W }),
  );
  a.free();
  b.free();
});

test(`forwardFrom each restart point: unedited gives the forward bits; an edit is propagated`, () => {
  const l = newLayer();
  const { Y } = l.forward(X, { B, T });
  const cached = Object.fromEntries(['Q', 'K', 'V', 'att', 'headout'].map((k) => [k, l.tensor(k)]));
  for (const name of ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat']) {
    const r = l.forwardFrom(name);
    assert.ok(bitEqual(r.Y, Y), `forwardFrom(${name}) without an edit`);
    assert.ok(bitEqual(r.attention, cached.att.data), `attention after forwardFrom(${name})`);
  }
  // doubling V, att, headout or concat doubles Y exactly (every product and sum scales by 2)
  const twice = (name) => {
    l.forward(X, { B, T });
    l.setTensor(
      name,
      l.tensor(name).data.map((v) => 2 * v),
    );
    return l.forwardFrom(name).Y;
  };
  for (const name of ['V', 'att', 'headout', 'concat']) {
    assert.ok(
      bitEqual(
        twice(name),
        Y.map((v) => 2 * v),
      ),
      `2 x ${name}`,
    );
  }
  // Q = 0 (or K = 0) makes every score 0: uniform attention 1/T
  for (const name of ['Q', 'K', 'scores']) {
    l.forward(X, { B, T });
    l.setTensor(name, new Float64Array(l.tensor(name).data.length));
    const { attention } = l.forwardFrom(name);
    assert.ok(
      attention.every((a) => a === 1 / T),
      `${name} = 0 gives uniform attention`,
    );
  }
  l.free();
});

test(`first calls on a fresh module (scratch sized by that call) equal NumPy, call after call`, async () => {
  // a scratch block sized too small would let the results spill into the memory after it: the
  // C library's temporaries, the heap's bookkeeping; repeated calls on a fresh heap show it
  const fx = loadFixture('legacy');
  const m = await loadMHA();
  const opts = {
    B: fx.B,
    T: fx.T,
    C: fx.C,
    headSize: fx.hs1,
    Wq: f64(fx.inputs.Wq1),
    Wk: f64(fx.inputs.Wk1),
    Wv: f64(fx.inputs.Wv1),
  };
  for (let k = 0; k < 4; k++) {
    const { att, out } = m.singleHead(f64(fx.inputs.X), opts);
    assert.ok(maxRelErr(att, f64(fx.single_head.att)) <= 1e-12, `call ${k}: att`);
    assert.ok(maxRelErr(out, f64(fx.single_head.out)) <= 1e-12, `call ${k}: out`);
  }
  const m2 = await loadMHA();
  for (let k = 0; k < 4; k++) {
    const { loss, dY } = m2.mseLoss(f64(fx.forward.Y), f64(fx.inputs.target));
    assert.ok(Math.abs(loss - fx.mse.loss) <= 1e-12 * fx.mse.loss, `call ${k}: loss`);
    assert.ok(maxRelErr(dY, f64(fx.mse.dY)) <= 1e-12, `call ${k}: dY`);
  }
});

test('a longer sequence with the same B*T: the attention part of the cache grows too', () => {
  // (B, T) = (2, 6) then (1, 12): B*T*C stays the same, B*h*T*T doubles. Each result must equal a
  // fresh layer's, bit for bit (a cache that kept its old size would overlap scores and att).
  const l = newLayer();
  const X1 = mha.standardNormal(2 * 6 * C, { seed: 11 });
  const X2 = mha.standardNormal(1 * 12 * C, { seed: 12 });
  const G2 = mha.standardNormal(1 * 12 * C, { seed: 13 });
  l.forward(X1, { B: 2, T: 6 });
  l.backward(X1);
  const got = l.forward(X2, { B: 1, T: 12, causal: true });
  const gotDX = l.backward(G2).dX;
  const fresh = newLayer();
  const want = fresh.forward(X2, { B: 1, T: 12, causal: true });
  const wantDX = fresh.backward(G2).dX;
  assert.ok(bitEqual(got.attention, want.attention), 'attention');
  assert.ok(bitEqual(got.Y, want.Y), 'Y');
  assert.ok(bitEqual(gotDX, wantDX), 'dX');
  for (const k of ['scores', 'att', 'datt', 'dscores']) {
    assert.ok(bitEqual(l.tensor(k).data, fresh.tensor(k).data), k);
  }
  l.free();
  fresh.free();
});

test(`gradient check with T = 1: Q and K do not matter, their rows are exactly 0 at entry 0`, () => {
  const l = mha.createLayer({ C: 8, heads: 2, seed: 1 });
  const x = mha.standardNormal(8, { seed: 2 });
  const rep = l.gradcheck(x, { B: 1, T: 1, samples: 0 });
  for (const row of rep.filter((r) => ['Wq', 'Wk', 'Q', 'K', 'scores'].includes(r.tensor))) {
    assert.deepEqual(
      [row.worst, row.maxRel, row.maxAbs, row.analytic, row.numeric, row.meanRel],
      [0, 0, 0, 0, 0, 0],
      row.tensor,
    );
    assert.equal(row.checked, row.size);
  }
  l.free();
});

/** How far wasm memory grows over `times` rounds (after one warm-up round) on a fresh module. */
async function growth(round, times) {
  const m = await loadMHA();
  round(m);
  const before = m.exports.memory.buffer.byteLength;
  for (let i = 0; i < times; i++) round(m);
  return m.exports.memory.buffer.byteLength - before;
}

test('memory stays flat: growing scratch, generators, module functions, layers', async () => {
  // The scratch block grows 40 times (to 19 MB); each growth must free the block before, or the
  // heap grows by their sum (390 MB). Measured from a fresh module, without a warm-up.
  const m = await loadMHA();
  const before = m.exports.memory.buffer.byteLength;
  for (let k = 1; k <= 40; k++) m.mseLoss(new Float64Array(k * 20000), new Float64Array(k * 20000));
  const grew = m.exports.memory.buffer.byteLength - before;
  assert.ok(grew < 100 * 2 ** 20, `40 growths of the scratch block took ${grew} bytes`);
  // 5000 rounds of calls that allocate and free (generators, layers): nothing may stay behind
  const calls = await growth((mm) => {
    mm.standardNormal(8, { seed: 1 });
    mm.standardNormal(8, { seed: 1, rng: 'legacy' });
    const r = mm.rng(3, 'legacy');
    r.random(3);
    r.free();
    const l = mm.createLayer({ C, heads: H, seed: 3 });
    l.forward(X, { B, T });
    l.backward(G);
    l.free();
  }, 5000);
  assert.equal(calls, 0, `5000 rounds of calls grew memory by ${calls} bytes`);
});
