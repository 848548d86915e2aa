// bad-usage.ts - calls the types must refuse. tests/types.test.mjs runs tsc on this file (with
// the options of tsconfig.json) and asserts that it FAILS, with exactly the error named at the end
// of each marked line and no error anywhere else. It is not part of the `tsc -p tests/types` check.

import { loadMHA } from 'mha-wasm';

const mha = await loadMHA();
const layer = mha.createLayer({ C: 64, heads: 4, seed: 42 });
const X = mha.standardNormal(2 * 6 * 64, { seed: 7 });

layer.forward(X, { B: 2 }); // expect-error TS2741 (T is missing)
mha.createLayer({ C: 64, heads: '4' }); // expect-error TS2322 (heads is a number)
layer.tensor('logits'); // expect-error TS2345 (not a tensor name)
const y: number = layer.forward(X, { B: 2, T: 6 }).Y; // expect-error TS2322 (Y is a Float64Array)
layer.gradcheck(X, { B: 2, T: 6, loss: 'mse' }); // expect-error TS2345 (the mse check needs a target)
mha.rng(42, 'pcg64'); // expect-error TS2345 (rng is 'default_rng' or 'legacy')
layer.train(X, X); // expect-error TS2554 (the options with B and T are required)
const rel = layer.gradcheck(X, { B: 2, T: 6 })[0].maxrel; // expect-error TS2551 (it is maxRel)
layer.forwardFrom('Y'); // expect-error TS2345 (forward cannot restart from Y)

console.log(y, rel);
