// Memory: the module's cap (1 GiB), requests beyond it, and leaks over many create/forward/free
// cycles.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA } from './helpers.mjs';

const GiB = 2 ** 30;
const mha = await loadMHA();
const memoryBytes = () => mha.exports.memory.buffer.byteLength;

function course() {
  const layer = mha.createLayer({ C: 64, heads: 4, seed: 42, scale: 0.125 });
  const X = mha.standardNormal(2 * 6 * 64, { seed: 7 });
  return { layer, X, Y: layer.forward(X, { B: 2, T: 6 }).Y };
}

test(`a request beyond the 1 GiB cap is an Error, never a trap, and the layer keeps working`, (t) => {
  const { layer, X, Y } = course();
  // T = 4096 with 4 heads needs 4 * (1*4*4096*4096) doubles of attention alone: 2 GiB > the cap.
  const T = 4096;
  const big = new Float64Array(T * 64);
  // the JS API refuses it up front, naming B and T ...
  assert.throws(
    () => layer.forward(big, { B: 1, T }),
    /layer\.forward: B = 1, T = 4096 is too large/,
  );
  // ... and the C library, asked directly, fails the allocation cleanly: MHA_ENOMEM, no trap
  const ex = mha.exports;
  const out = ex.malloc(4);
  assert.equal(ex.mha_create(64, 4, out), 0);
  const raw = new Int32Array(ex.memory.buffer, out, 1)[0];
  const px = ex.malloc(T * 64 * 8);
  assert.ok(px, 'malloc of the input');
  assert.equal(ex.mha_forward(raw, px, 1, T, 0, 0), -5 /* MHA_ENOMEM */);
  ex.mha_free(raw);
  ex.free(px);
  ex.free(out);
  t.diagnostic(
    `after the failed request: wasm memory ${(memoryBytes() / 2 ** 20).toFixed(0)} MiB (cap 1024 MiB)`,
  );
  assert.ok(memoryBytes() <= GiB, 'memory stays within the cap');
  // nothing already computed is lost: the cache still holds the course forward ...
  assert.deepEqual(layer.tensor('Y').data, Y);
  // ... and a new forward gives the same bits
  assert.deepEqual(layer.forward(X, { B: 2, T: 6 }).Y, Y);
  // a byte count that overflows 32 bits is refused before any allocation
  assert.throws(() => layer.forward(new Float64Array(64 * 65536), { B: 1, T: 65536 }), /too large/);
  assert.equal(
    mha.exports.mha_forward(0, 0, 1, 65536, 0, 0),
    -1 /* MHA_ENULL comes first for a NULL layer */,
  );
  assert.deepEqual(layer.forward(X, { B: 2, T: 6 }).Y, Y);
  layer.free();
});

test('just under the cap works: memory grows on demand and the result is right', (t) => {
  // C = 64, 4 heads, T = 1024: cache 16*BTC + 4*BhTT doubles = 16*65536 + 4*4194304 -> ~136 MiB
  const layer = mha.createLayer({ C: 64, heads: 4, seed: 1 });
  const X = mha.standardNormal(1024 * 64, { seed: 2 });
  const { attention } = layer.forward(X, { B: 1, T: 1024, causal: true });
  let worst = 0;
  for (let r = 0; r < 4 * 1024; r++) {
    let s = 0;
    for (let j = 0; j < 1024; j++) s += attention[r * 1024 + j];
    worst = Math.max(worst, Math.abs(s - 1));
  }
  assert.ok(worst < 1e-12, `attention rows sum to 1 (worst ${worst})`);
  t.diagnostic(
    `T=1024 forward: wasm memory ${(memoryBytes() / 2 ** 20).toFixed(0)} MiB; row sums within ${worst.toExponential(1)}`,
  );
  layer.free();
});

test('100,000 create/forward/free cycles leave the heap flat', (t) => {
  const X = mha.standardNormal(1 * 4 * 8, { seed: 3 });
  const cycle = () => {
    const layer = mha.createLayer({ C: 8, heads: 2, seed: 5 });
    layer.forward(X, { B: 1, T: 4 });
    layer.free();
    const r = mha.rng(9);
    r.standardNormal(4);
    r.free();
  };
  for (let i = 0; i < 1000; i++) cycle(); // warm up: scratch and allocator reach steady state
  const before = memoryBytes();
  // A probe allocation lands at the same address when nothing has leaked in between.
  const probe = () => {
    const p = mha.exports.malloc(4096);
    mha.exports.free(p);
    return p;
  };
  const p0 = probe();
  for (let i = 0; i < 100000; i++) cycle();
  const after = memoryBytes();
  const p1 = probe();
  t.diagnostic(`wasm memory ${before} -> ${after} bytes; probe allocation ${p0} -> ${p1}`);
  assert.equal(after, before, 'memory did not grow');
  assert.equal(p1, p0, 'the allocator hands out the same block: nothing leaked');
});
