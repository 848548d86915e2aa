// The SIMD build (web/mha.wasm, -msimd128) and the portable scalar build (build/mha-scalar.wasm)
// give identical bits: the f64x2 kernels do, lane by lane, exactly the roundings of the scalar
// loops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA as loadFrom } from '../web/mha.js';
import { repoRoot } from './helpers.mjs';

const scalarPath = join(repoRoot, 'build', 'mha-scalar.wasm');
const simdBytes = readFileSync(join(repoRoot, 'web', 'mha.wasm'));

test('web/mha.wasm uses SIMD and build/mha-scalar.wasm does not', () => {
  assert.ok(existsSync(scalarPath), `${scalarPath} is missing: run make wasm`);
  // opcode prefix 0xfd introduces SIMD instructions; f64x2.mul is 0xfd 0xf2 0x01
  const has = (bytes) => Buffer.from(bytes).includes(Buffer.from([0xfd, 0xf2, 0x01]));
  assert.ok(has(simdBytes), 'web/mha.wasm contains f64x2.mul');
  assert.ok(!has(readFileSync(scalarPath)), 'the scalar build contains no f64x2.mul');
});

test(`SIMD and scalar builds agree bit for bit on every tensor, forward, backward, training, gradient check`, async (t) => {
  const simd = await loadFrom(simdBytes);
  const scalar = await loadFrom(readFileSync(scalarPath));
  // odd sizes exercise the edge tiles; T > 128 crosses a K block and a column block, C = 160 a
  // column block of the projections
  const cases = [
    [64, 4, 2, 6, false],
    [48, 6, 1, 33, true],
    [30, 5, 3, 7, false],
    [12, 3, 2, 1, true],
    [96, 8, 1, 300, false],
    [20, 4, 1, 257, true],
    [160, 5, 1, 9, false],
  ];
  let compared = 0;
  for (const [C, heads, B, T, causal] of cases) {
    const run = (m) => {
      const layer = m.createLayer({ C, heads, seed: 42 });
      const X = m.standardNormal(B * T * C, { seed: 7 });
      const G = m.standardNormal(B * T * C, { seed: 8 });
      layer.forward(X, { B, T, causal });
      layer.backward(G);
      const out = Object.fromEntries(m.tensorNames.map((n) => [n, layer.tensor(n).data]));
      out.losses = layer.train(X, G, { B, T, causal, steps: 3, lr: 0.05 });
      out.weights = layer.params.slice();
      if (B * T * C <= 2000) {
        out.check = layer
          .gradcheck(X, { B, T, causal, samples: 16 })
          .flatMap((r) => [r.maxAbs, r.maxRel, r.analytic, r.numeric]);
      }
      layer.free();
      return out;
    };
    const a = run(simd),
      b = run(scalar);
    for (const key of Object.keys(a)) {
      const x = a[key],
        y = b[key];
      assert.equal(x.length, y.length, `${key} length`);
      for (let i = 0; i < x.length; i++) {
        if (!Object.is(x[i], y[i])) {
          assert.fail(`C=${C} h=${heads} B=${B} T=${T}: ${key}[${i}] ${x[i]} vs ${y[i]}`);
        }
      }
      compared += x.length;
    }
  }
  t.diagnostic(`${cases.length} shapes, ${compared} values compared: identical`);
});
