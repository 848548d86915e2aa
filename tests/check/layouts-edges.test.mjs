// adaptLayout (web/check/layouts.js) at its edges, on layers small enough to check by hand
// (C = 4, T = 3, 2 heads of hs = 2): every name an author gives a weight, fused matrix or bias;
// inputs that are not a layer; per-head lists that do not make one; fused matrices, biases and
// results in each shape; the heads a file shows; and which recomputation decides (out, in).
// Expected values come from plain loops here, never from layouts.js's own index maps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adaptLayout, layoutRole } from '../../web/check/layouts.js';

const arr = (shape, data, extra = {}) => ({ data: Float64Array.from(data), shape, ...extra });
const size = (shape) => shape.reduce((a, b) => a * b, 1);
// distinct, irregular values (no two entries equal, no symmetry a transpose could keep)
const noise = (n, seed) =>
  Array.from({ length: n }, (_, i) => Math.sin(seed * 12.9898 + i * 7.233));
const rand = (shape, seed) => arr(shape, noise(size(shape), seed));

// rows (n, k) @ W (k, m), or @ W.T when W is (m, k), by loops
function times(rows, n, W, k, m, transposed = false) {
  const out = new Float64Array(n * m);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let i = 0; i < k; i++) s += rows[r * k + i] * (transposed ? W[j * k + i] : W[i * m + j]);
      out[r * m + j] = s;
    }
  }
  return out;
}
const transpose = (W, r, c) =>
  Float64Array.from({ length: r * c }, (_, i) => W[(i % r) * c + Math.floor(i / r)]);
// (B·T, C) -> (B, h, T, hs) by loops
function split(data, B, T, C, h) {
  const hs = C / h;
  const out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) {
        const head = Math.floor(c / hs);
        out[((b * h + head) * T + t) * hs + (c % hs)] = data[(b * T + t) * C + c];
      }
    }
  }
  return out;
}

test('layoutRole: names of weights, fused matrices, biases, and names it does not read', () => {
  const weight = (name, grad = false) => ({ kind: 'weight', name, grad });
  const cases = {
    Wq: weight('Wq'),
    w_k: weight('Wk'),
    WV: weight('Wv'),
    wo: weight('Wo'),
    q_proj: weight('Wq'),
    'attn.k_proj.weight': weight('Wk'),
    v_proj_weight: weight('Wv'),
    c_proj: weight('Wo'),
    'c_proj.weight': weight('Wo'),
    'h.0.attn.c_proj.w': weight('Wo'),
    out_proj: weight('Wo'),
    'out_proj.weight': weight('Wo'),
    o_proj: weight('Wo'),
    'o_proj.weight': weight('Wo'),
    proj: weight('Wo'),
    w_proj: weight('Wo'),
    W_out: weight('Wo'),
    qkv: { kind: 'fused', grad: false },
    in_b: { kind: 'fusedBias', grad: false },
    'qkv.weight': { kind: 'fused', grad: false },
    c_attn: { kind: 'fused', grad: false },
    'c_attn.w': { kind: 'fused', grad: false },
    in_proj: { kind: 'fused', grad: false },
    b_qkv: { kind: 'fusedBias', grad: false },
    bias_qkv: { kind: 'fusedBias', grad: false },
    'qkv.bias': { kind: 'fusedBias', grad: false },
    // the last part ends in "bias" but is not "bias": it alone is the name
    'attn.qkv_bias': { kind: 'fusedBias', grad: false },
    'c_attn.bias': { kind: 'fusedBias', grad: false },
    'c_attn.b': { kind: 'fusedBias', grad: false },
    'in_proj.bias': { kind: 'fusedBias', grad: false },
    bq: { kind: 'bias', name: 'bq', grad: false },
    bias_k: { kind: 'bias', name: 'bk', grad: false },
    'k_proj.bias': { kind: 'bias', name: 'bk', grad: false },
    'v_proj.bias': { kind: 'bias', name: 'bv', grad: false },
    o_bias: { kind: 'bias', name: 'bo', grad: false },
    'out_proj.bias': { kind: 'bias', name: 'bo', grad: false },
    'c_proj.b': { kind: 'bias', name: 'bo', grad: false },
    'proj.bias': { kind: 'bias', name: 'bo', grad: false },
    b_proj: { kind: 'bias', name: 'bo', grad: false },
    grad_Wq: weight('dWq', true),
    Wv_grad: weight('dWv', true),
    'q_proj.weight.grad': weight('dWq', true),
    d_out_proj: weight('dWo', true),
    d_qkv: { kind: 'fused', grad: true },
    // a module's parameter by its path's words: the module named by one projection word
    'linear_wq.weights': weight('Wq', false),
    'query_weights.W': weight('Wq', false),
    'value_proj.kernel': weight('Wv', false),
    'concat_weights.W': weight('Wo', false),
    'linear_wk.weights.grad': weight('dWk', true),
    'grad.keys_linear.weight': weight('dWk', true),
    'linear_wo.bias': { kind: 'bias', name: 'bo', grad: false },
    'concat_weights.b': { kind: 'bias', name: 'bo', grad: false },
    'attn.weight': { kind: 'fused', grad: false },
    'linear_wo.bias.grad': null,
    'mask.w': null,
    'q_k.weight': null,
    // a d or grad only at the ends: inside a name it is part of it
    Wo_d: null,
    W_grad_q: null,
    grad_bq: null,
    Wqq: null,
    X: null,
  };
  for (const [key, want] of Object.entries(cases)) assert.deepEqual(layoutRole(key), want, key);
});

test('what is not a layer is returned untouched: no X, X not (B, T, C), X not an array', () => {
  const W = rand([4, 4], 1);
  const inputs = [
    { Wq: W },
    { X: { data: noise(8, 2), shape: [2, 4] }, x: W }, // X is X; x is a second name for it
    { X: arr([2, 0, 4], []) },
    { X: arr([0, 4], []) },
    { X: arr([2, 2, 2, 2], noise(16, 3)) },
    { X: { data: noise(6, 4), shape: [2, 2] } }, // 6 entries for 4
    { X: { data: noise(4, 4), shape: [2, 2.5] } },
    { X: { data: noise(4, 4), shape: [-2, -2] } },
    { X: { data: ['a', 'b', 'c', 'd'], shape: [2, 2] } },
    { X: { data: noise(4, 4) } },
    { X: 'X' },
    { X: arr([0, 3, 4], []) },
    { X: arr([1, 3, 0], []) },
    { null: rand([1, 3, 5], 5) }, // no X: an unnamed array, not of the weights' C = 4
    { X: Object.assign(() => 0, rand([1, 3, 4], 5)) },
    { X: { data: noise(5, 4), shape: [2, 2.5] } }, // 5 entries, but 2.5 is no size
  ];
  for (const arrays of inputs.slice(2)) {
    const a = adaptLayout({ ...arrays, Wq_0: rand([4, 2], 5), Wq_1: rand([4, 2], 6) }, {});
    assert.deepEqual([a.notes, a.used, a.convention], [[], [], null], JSON.stringify(arrays.X));
    assert.ok(!('Wq' in a.arrays));
  }
  // T = 1 and C = 1 are layers
  const t1 = adaptLayout(
    { X: rand([1, 1, 4], 7), Wq_0: rand([4, 2], 5), Wq_1: rand([4, 2], 6) },
    {},
  );
  assert.deepEqual(t1.arrays.Wq.shape, [4, 4]);
  const c1 = adaptLayout({ X: rand([2, 3, 1], 7), Wv: rand([1, 1, 1], 8) }, {});
  assert.deepEqual(c1.notes, ['Wv is (1, 1, 1): read as one (1, 1) Wv']);
  // X found under its course name only when the file has one
  const b = adaptLayout(inputs[1], { heads: 2 });
  assert.deepEqual([b.notes, b.used], [[], []]);
  assert.equal(b.arrays.x, W);
  for (const weird of ['arrays', undefined, 0]) {
    const r = adaptLayout(weird, { heads: 2 });
    assert.equal(r.arrays, weird);
    assert.deepEqual([r.notes, r.used, r.heads], [[], [], 2]);
  }
});

test('per-head lists: sorted by number, joined only when they make a layer, gradients too', () => {
  const X = rand([1, 3, 4], 1);
  const h0 = rand([4, 2], 2);
  const h1 = rand([4, 2], 3);
  // written in the file's order 1, 0: joined in the heads' order
  const a = adaptLayout({ X, Wq_1: h1, Wq_0: h0 }, { heads: 2 });
  const want = new Float64Array(16);
  for (let r = 0; r < 4; r++) {
    for (let j = 0; j < 2; j++) {
      want[r * 4 + j] = h0.data[r * 2 + j];
      want[r * 4 + 2 + j] = h1.data[r * 2 + j];
    }
  }
  assert.deepEqual(a.arrays.Wq.data, want);
  assert.deepEqual(a.notes, [
    'Wq_0 … Wq_1 are 2 per-head (4, 2) matrices: joined into one (4, 4) Wq, ' +
      'head i in columns i·2…(i+1)·2',
  ]);
  assert.deepEqual(a.used, ['Wq_1', 'Wq_0']);
  assert.ok(!('resolution' in a.arrays.Wq));
  // a printed resolution on one head only: the joined weight has none
  const printed = { ...h0, resolution: new Float64Array(8).fill(1e-4) };
  const half = adaptLayout({ X, Wq_0: printed, Wq_1: h1 }, { heads: 2 });
  assert.deepEqual(half.arrays.Wq.data, want);
  assert.ok(!('resolution' in half.arrays.Wq));
  // one head alone is not a list (said: Wo cannot be built, and not taken as I); Wq in the file
  // wins over its heads
  const one = adaptLayout({ X, Wo_0: rand([2, 4], 4) }, { heads: 2 });
  assert.deepEqual(
    [one.notes, Object.keys(one.arrays)],
    [
      [
        "Wo_0 (2, 4) is one head's slice of Wo (C = 4 from X) and your file has no other " +
          "head's: Wo cannot be built from it; left as it is",
      ],
      ['X', 'Wo_0'],
    ],
  );
  const W = rand([4, 4], 5);
  const both = adaptLayout({ X, Wq: W, Wq_0: h0, Wq_1: h1 }, { heads: 2 });
  assert.deepEqual(both.notes, []);
  assert.equal(both.arrays.Wq, W);
  // heads of different shapes, or (4, 2) heads for C = 5: not joined, said
  const X5 = rand([1, 3, 5], 6);
  const odd = adaptLayout({ X: X5, Wk_0: rand([4, 2], 7), Wk_1: rand([4, 2], 8) }, {});
  assert.match(
    odd.notes[0],
    /^Wk_0 … Wk_1 are not Wk's heads .* with C = 5 from X: left as they are$/,
  );
  const empty = adaptLayout({ X, Wk_0: arr([4, 0], []), Wk_1: arr([4, 0], []) }, {});
  assert.match(empty.notes[0], /^Wk_0 … Wk_1 are not Wk's heads/);
  const ten = adaptLayout({ X, Wk_10: rand([4, 2], 7), Wk_11: rand([4, 2], 8) }, {});
  assert.match(ten.notes[0], /^Wk_10 … Wk_11 are not Wk's heads numbered from 0 or 1/);
  for (const [k0, k1] of [
    ['a_Wq_0', 'a_Wq_1'],
    ['Wq_0x', 'Wq_1x'],
  ]) {
    const r = adaptLayout({ X, [k0]: h0, [k1]: h1 }, {});
    assert.deepEqual([r.notes, r.used], [[], []], k0);
  }
  const mixed = adaptLayout({ X, Wk_0: rand([4, 2], 7), Wk_1: rand([2, 4], 8) }, {});
  assert.match(mixed.notes[0], /^Wk_0 … Wk_1 are not Wk's heads/);
  // gradients per head are joined and say nothing of the number of heads
  const g = adaptLayout({ X, dWv_0: h0, dWv_1: h1 }, { heads: 4 });
  assert.deepEqual(g.arrays.dWv.data, want);
  assert.equal(g.heads, 4);
  assert.equal(g.notes.length, 1);
  // a stack of one: read as the weight, no heads said
  const s = adaptLayout({ X, Wv: rand([1, 4, 4], 9) }, { heads: 2 });
  assert.deepEqual(s.notes, ['Wv is (1, 4, 4): read as one (4, 4) Wv']);
  assert.deepEqual(s.arrays.Wv.shape, [4, 4]);
  assert.equal(s.heads, 2);
  // a stack under its own name is joined into itself; its heads are the file's heads
  const t = adaptLayout({ X, Wk: arr([2, 4, 2], [...h0.data, ...h1.data]) }, { heads: 1 });
  assert.deepEqual(t.arrays.Wk.data, want);
  assert.deepEqual(t.notes, [
    'Wk is a stack of 2 per-head (4, 2) matrices: joined into one (4, 4), ' +
      'head i in columns i·2…(i+1)·2',
    'your Wk is a stack of 2 per-head (4, 2) matrices: 2 heads, not 1 as set; checked with 2',
  ]);
  assert.equal(t.heads, 2);
});

test('two arrays for one weight: the course spelling, then its other cases, then aliases', () => {
  const X = rand([1, 3, 4], 1);
  const [A, B] = [rand([4, 4], 2), rand([4, 4], 3)];
  const a = adaptLayout({ q_proj: A, X, Wq: B }, { heads: 2 });
  assert.equal(a.arrays.Wq, B);
  assert.equal(a.arrays.q_proj, A);
  assert.deepEqual(a.notes, ['q_proj not used as Wq: your file has Wq']);
  const b = adaptLayout({ q_proj: A, X, wq: B }, { heads: 2 });
  assert.deepEqual(b.notes, ['q_proj not used as Wq: your file has wq']);
  assert.equal(b.arrays.wq, B);
  // both spelled as the course reads them: names.js notes the second, not this
  const c = adaptLayout({ wq: A, X, Wq: B }, { heads: 2 });
  assert.deepEqual([c.notes, c.used], [[], []]);
  // a course name of the wrong shape is the check's to report; an alias's is said here
  const d = adaptLayout({ X, Wq: rand([3, 5], 4), k_proj: rand([3, 5], 5) }, { heads: 2 });
  assert.deepEqual(d.notes, [
    'k_proj has shape (3, 5): Wk is (C, C) = (4, 4) with C = 4 from X; left as it is',
  ]);
  // a stack under another name: joined into Wq; (2, 4, 3) and (2, 3, 4) make no (4, 4)
  const stack = adaptLayout({ X, q_proj: rand([2, 4, 2], 8) }, { heads: 2 });
  assert.match(
    stack.notes[0],
    /^q_proj is a stack of 2 per-head \(4, 2\) matrices: joined into one \(4, 4\) Wq, /,
  );
  for (const shape of [
    [2, 4, 3],
    [2, 3, 4],
  ]) {
    const r = adaptLayout({ X, q_proj: rand(shape, 9) }, { heads: 2 });
    assert.deepEqual(r.notes, [
      `q_proj has shape (${shape.join(', ')}): Wq is (C, C) = (4, 4) with C = 4 from X; left as it is`,
    ]);
  }
  // wq before Wq in the file: Wq is the weight (it decides the convention, wq does not)
  const Wq = rand([4, 4], 10);
  const Q = arr([1, 3, 4], times(X.data, 3, Wq.data, 4, 4));
  const g = adaptLayout({ wq: A, Wq, X, Q }, { heads: 2 });
  assert.equal(g.convention, 'in-out');
  // one axis of C entries is not (C, C)
  const f = adaptLayout({ X, k_proj: rand([4], 6) }, { heads: 2 });
  assert.deepEqual(f.notes, [
    'k_proj has shape (4,): Wk is (C, C) = (4, 4) with C = 4 from X; left as it is',
  ]);
  // an alias that is not an array is left for the check
  const e = adaptLayout({ X, v_proj: 'weights' }, { heads: 2 });
  assert.deepEqual([e.notes, e.arrays.v_proj], [[], 'weights']);
});

test('fused: (3C, C) rows are (out, in), (C, 3C) columns X @ W, results (B, T, 3C)', () => {
  const C = 4;
  const X = rand([2, 3, C], 1);
  const W = [2, 3, 4].map((s) => rand([C, C], s));
  // (3C, C): Wq.T, Wk.T, Wv.T one above the other, as PyTorch's in_proj_weight
  const rows = arr(
    [3 * C, C],
    W.flatMap((w) => [...transpose(w.data, C, C)]),
  );
  const a = adaptLayout({ X, in_proj_weight: rows, out_proj: W[0] }, { heads: 2 });
  assert.equal(a.convention, 'out-in');
  for (const [i, name] of ['Wq', 'Wk', 'Wv'].entries()) {
    assert.deepEqual(a.arrays[name].data, W[i].data, name);
    assert.deepEqual(a.arrays[name].shape, [C, C], name);
  }
  const stacked = adaptLayout(
    {
      X,
      Wqkv: arr(
        [3, C, C],
        W.flatMap((w) => [...w.data]),
      ),
    },
    {},
  );
  for (const [i, name] of ['Wq', 'Wk', 'Wv'].entries()) {
    assert.deepEqual(stacked.arrays[name], W[i], name);
  }
  const none = adaptLayout({ X, qkv: 'none', c_attn: null }, {});
  assert.deepEqual([none.notes, none.arrays.qkv], [[], 'none']);
  assert.deepEqual(a.arrays.Wo.data, transpose(W[0].data, C, C));
  assert.deepEqual(a.notes, [
    'out_proj read as Wo',
    'in_proj_weight (12, 4) holds Wq, Wk, Wv one above the other, stored (out, in) and used ' +
      "as X @ W.T as PyTorch's in_proj_weight: split into its three row blocks of 4",
    "your weights are stored (out, in) and used as X @ W.T (PyTorch's nn.Linear): " +
      'transposed all four and their gradients',
  ]);
  // the fused result Q | K | V of (2, 3, 12): three (2, 3, 4), the weights kept unknown
  const qkv = rand([2, 3, 3 * C], 5);
  const b = adaptLayout({ X, qkv }, { heads: 2 });
  for (const [i, name] of ['Q', 'K', 'V'].entries()) {
    const want = new Float64Array(24);
    for (let r = 0; r < 6; r++) {
      for (let j = 0; j < C; j++) want[r * C + j] = qkv.data[r * 12 + i * C + j];
    }
    assert.deepEqual(b.arrays[name].data, want, name);
    assert.deepEqual(b.arrays[name].shape, [2, 3, 4], name);
  }
  assert.deepEqual(b.notes, [
    'qkv (2, 3, 12) holds Q, K, V side by side: split into the three, each (2, 3, 4)',
  ]);
  assert.ok(!('Wq' in b.arrays) && !('Wo' in b.arrays));
  // its gradient in columns: no "used as" (a gradient is not used)
  const cols = arr([C, 3 * C], noise(48, 6));
  const g = adaptLayout({ X, d_c_attn: cols }, { heads: 2 });
  assert.deepEqual(g.notes, [
    'd_c_attn (4, 12) holds dWq, dWk, dWv side by side: split into its three column blocks of 4',
  ]);
  const gr = adaptLayout({ X, grad_in_proj: rows }, { heads: 2 });
  assert.match(
    gr.notes[0],
    /^grad_in_proj \(12, 4\) holds dWq, dWk, dWv one above the other, stored \(out, in\) as PyTorch's/,
  );
  // a fused result next to Q: not used
  const c = adaptLayout({ X, Q: rand([2, 3, 4], 7), qkv }, { heads: 2 });
  assert.deepEqual(c.notes, ['qkv not used: your file has Q too']);
});

test('biases: fused ones split, a zero part dropped, a second one or a wrong length said', () => {
  const X = rand([1, 3, 4], 1);
  const fused = arr([12], [1, 2, 3, 4, 0, 0, 0, 0, 9, 10, 11, 12]);
  const a = adaptLayout({ X, b_qkv: fused }, { heads: 2 });
  assert.deepEqual(a.biases, {
    bq: Float64Array.of(1, 2, 3, 4),
    bv: Float64Array.of(9, 10, 11, 12),
  });
  assert.deepEqual(a.notes, [
    "your bk (in b_qkv) is all zeros: dropped (the course's layer has no bias)",
    "your layer has biases (bq, bv); the course's layer has none: the check compares your " +
      "arrays with the course's layer and names any difference a bias makes",
  ]);
  const b = adaptLayout(
    { X, bq: arr([4], [5, 6, 7, 8]), b_qkv: fused, bias_qkv: arr([9], noise(9, 2)) },
    {},
  );
  assert.deepEqual(b.biases, { bq: Float64Array.of(5, 6, 7, 8) });
  assert.deepEqual(
    b.notes[0],
    'b_qkv (12,) not read as a bias: your file has bq already; left as it is',
  );
  const short = adaptLayout({ X, bias_qkv: arr([9], noise(9, 2)) }, {});
  assert.deepEqual(short.notes, [
    'bias_qkv (9,) not read as a bias: a fused bias has 12 entries with C = 4 from X; ' +
      'left as it is',
  ]);
  assert.equal(b.arrays.b_qkv, fused);
  const c = adaptLayout({ X, bq: arr([4], [1, 2, 3, 4]), q_bias: arr([4], [1, 1, 1, 1]) }, {});
  assert.deepEqual(
    c.notes[0],
    'q_bias (4,) not read as a bias: your file has bq already; left as it is',
  );
  // a bias that is not an array is left for the check
  const d = adaptLayout({ X, bq: 'none' }, {});
  assert.deepEqual([d.notes, d.biases], [[], {}]);
});

// Each [key, shape] alone beside X: no heads read, no note, the array left as it is
function assertNoHeads(X, heads, cases) {
  for (const [key, shape] of cases) {
    const a = adaptLayout({ X, [key]: rand(shape, 3) }, { heads });
    assert.deepEqual(
      [a.heads, a.notes, a.arrays[key].shape],
      [heads, [], shape],
      `${key} ${shape}`,
    );
  }
}

test('results give the number of heads: split, without B = 1, heads first; (B, h, …) kept', () => {
  const X = rand([1, 3, 4], 1);
  for (const [key, shape, h] of [
    ['K', [1, 2, 3, 2], 2],
    ['V', [2, 3, 2], 2],
    ['headout', [4, 3, 1], 4],
    ['dheadout', [1, 4, 3, 1], 4],
    ['dV', [1, 2, 3, 2], 2],
    ['dQ', [2, 3, 2], 2],
    ['dK', [4, 3, 1], 4],
    ['scores', [1, 2, 3, 3], 2],
    ['att', [4, 3, 3], 4],
    ['datt', [1, 2, 3, 3], 2],
    ['dscores', [2, 3, 3], 2],
  ]) {
    const a = adaptLayout({ X, [key]: rand(shape, 2) }, { heads: 1 });
    assert.equal(a.heads, h, key);
    assert.deepEqual(a.notes, [
      `your ${key} is (${shape.join(', ')}): ${h} heads, not 1 as set; checked with ${h}`,
    ]);
  }
  // neither T nor a divisor of C: no heads read
  assertNoHeads(X, 1, [
    ['K', [1, 2, 4, 2]],
    ['K', [1, 3, 3, 2]],
    ['K', [2, 2, 3, 2]],
    ['att', [1, 3, 3, 3]],
    ['att', [1, 2, 3, 4]],
    ['att', [1, 2, 4, 3]],
    ['att', [1, 3, 3]],
    ['K', [1, 3, 2]],
    ['Y', [1, 2, 3, 2]],
  ]);
  const one = adaptLayout({ X, K: rand([1, 1, 3, 4], 2) }, { heads: 2 });
  assert.deepEqual(one.notes, ['your K is (1, 1, 3, 4): 1 head, not 2 as set; checked with 1']);
  for (const [x, K] of [
    [X, rand([1, 3, 4], 2)],
    [rand([2, 3, 4], 3), rand([2, 3, 2], 2)],
  ]) {
    assert.deepEqual(adaptLayout({ X: x, K }, { heads: 1 }).notes, [], String(K.shape));
  }
  // the setting is not a number of heads: said without "as set"
  const bad = adaptLayout({ X, K: rand([1, 2, 3, 2], 2) }, { heads: 'two' });
  assert.deepEqual(bad.notes, ['your K is (1, 2, 3, 2): 2 heads; checked with 2']);
  const zero = adaptLayout({ X, K: rand([1, 2, 3, 2], 2) }, { heads: 0 });
  assert.deepEqual(zero.notes, ['your K is (1, 2, 3, 2): 2 heads; checked with 2']);
  // heads first (h, B, T, …) at B = 2, h = 4: transposed entry by entry
  const X2 = rand([2, 3, 4], 4);
  const att = rand([4, 2, 3, 3], 5); // (h, B, T, T)
  const b = adaptLayout({ X: X2, att }, { heads: 2 });
  const want = new Float64Array(72);
  for (let h = 0; h < 4; h++) {
    for (let bb = 0; bb < 2; bb++) {
      for (let i = 0; i < 9; i++) want[(bb * 4 + h) * 9 + i] = att.data[(h * 2 + bb) * 9 + i];
    }
  }
  assert.deepEqual(b.arrays.att.data, want);
  assert.deepEqual(b.arrays.att.shape, [2, 4, 3, 3]);
  assert.equal(b.heads, 4);
  assert.deepEqual(b.notes, [
    'att (4, 2, 3, 3) is saved heads first, (h, B, T, T): transposed to (2, 4, 3, 3), ' +
      '(B, h, T, T) as the course has it',
    'your att is (4, 2, 3, 3): 4 heads, not 2 as set; checked with 4',
  ]);
  // (h, B, T, T) with a wrong T or a head count not dividing C, and (h, B, T, hs) not making C
  assertNoHeads(X2, 2, [
    ['att', [4, 2, 2, 3]],
    ['att', [3, 2, 3, 3]],
    ['att', [4, 2, 3, 2]],
    ['K', [4, 2, 3, 2]],
    ['K', [4, 1, 3, 1]],
  ]);
});

test('a file without Wo gets the identity only when Wq, Wk, Wv are all there and no Wo is', () => {
  const X = rand([1, 3, 4], 1);
  const W = (s) => rand([4, 4], s);
  const a = adaptLayout({ X, Wq: W(2), Wk: W(3), Wv: W(4) }, { heads: 2 });
  const I = new Float64Array(16);
  for (let i = 0; i < 4; i++) I[i * 5] = 1;
  assert.deepEqual(a.arrays.Wo, { data: I, shape: [4, 4], dtype: '<f8' });
  for (const arrays of [
    { X, Wq: W(2), Wk: W(3) },
    { X, Wq: W(2), Wk: W(3), Wv: W(4), c_proj: rand([3, 3], 5) },
    { X, Wq: W(2), Wk: W(3), Wv: W(4), Wo: 'none' },
  ]) {
    const b = adaptLayout(arrays, { heads: 2 });
    assert.ok(!b.notes.some((n) => n.startsWith('no Wo')), Object.keys(arrays).join());
  }
});

test('(out, in) is decided by Q, K, V in any saved form, or by Y; never by one alone', () => {
  const [B, T, C, h] = [1, 3, 4, 2];
  const X = rand([B, T, C], 1);
  const W = [2, 3, 4, 5].map((s) => rand([C, C], s));
  const proj = (i, t) => times(X.data, B * T, W[i].data, C, C, t);
  for (const t of [false, true]) {
    const want = t ? 'out-in' : 'in-out';
    const forms = {
      merged: (d) => arr([B, T, C], d),
      'no batch': (d) => arr([T, C], d),
      split: (d) => arr([B, h, T, C / h], split(d, B, T, C, h)),
      'split, no batch': (d) => arr([h, T, C / h], split(d, B, T, C, h)),
    };
    for (const [form, make] of Object.entries(forms)) {
      for (const [i, name] of ['Q', 'K', 'V'].entries()) {
        const torch = { 'q_proj.weight': W[0], 'k_proj.weight': W[1], 'v_proj.weight': W[2] };
        const a = adaptLayout(
          { X, ...torch, 'o_proj.weight': W[3], [name]: make(proj(i, t)) },
          { heads: h },
        );
        assert.equal(a.convention, want, `${name} ${form} ${want}`);
        // under the course's names the course's reading is used, the other offered
        const c = adaptLayout(
          { X, Wq: W[0], Wk: W[1], Wv: W[2], Wo: W[3], [name]: make(proj(i, t)) },
          { heads: h },
        );
        const offered = [c.convention, c.offered];
        assert.deepEqual(offered, [want === 'out-in' ? 'in-out' : want, t ? 'out-in' : null]);
      }
    }
    // printed Q (a resolution per entry) decides too
    const Q = arr([B, T, C], proj(0, t), {
      dtype: 'text',
      resolution: new Float64Array(12).fill(5e-9),
    });
    assert.equal(adaptLayout({ X, Wq: W[0], Q }, { heads: h }).convention, want);
  }
  // Q from X @ Wq and K from X @ Wk.T: a mistake, not a convention
  const mixed = {
    X,
    Wq: W[0],
    Wk: W[1],
    Q: arr([B, T, C], proj(0, false)),
    K: arr([B, T, C], proj(1, true)),
  };
  assert.equal(adaptLayout(mixed, { heads: h }).convention, null);
  // a Q of neither form ((B, T, h, hs), or another B): nothing decided
  const Qs = arr([B, h, T, C / h], split(proj(0, true), B, T, C, h));
  assert.equal(
    adaptLayout({ X, Wq: W[0], Q: arr([B, T, h, 2], proj(0, true)) }, { heads: h }).convention,
    null,
  );
  assert.equal(adaptLayout({ X, Wq: W[0], Q: rand([2, 3, 4], 9) }, { heads: h }).convention, null);
  // Y split is not a Y
  assert.equal(
    adaptLayout({ X, Wq: W[0], Wk: W[1], Wv: W[2], Wo: W[3], Y: Qs }, { heads: h }).convention,
    null,
  );
  // Y alone decides only with all four weights
  const Y = arr([B, T, C], noise(12, 8));
  assert.equal(adaptLayout({ X, Wq: W[0], Wk: W[1], Wv: W[2], Y }, { heads: h }).convention, null);
});

test('in_b (3, h, hs): the three input projections’ biases, read as bq, bk, bv', () => {
  const X = rand([1, 3, 4], 1);
  const W = Object.fromEntries(['Wq', 'Wk', 'Wv', 'Wo'].map((w, i) => [w, rand([4, 4], i + 2)]));
  const inB = rand([3, 2, 2], 9);
  const out = adaptLayout({ X, ...W, in_b: inB }, { heads: 2 });
  for (const [i, b] of ['bq', 'bk', 'bv'].entries()) {
    assert.deepEqual([...out.biases[b]], [...inB.data.slice(i * 4, i * 4 + 4)], b);
  }
  assert.ok(out.used.includes('in_b'));
});

// X under a name of its own (h, hidden …) is the one array no name reads with the weights' C
// columns; with two such arrays, or none, nothing is read as X.
test("an unnamed input: read as X only when it is the one array of the weights' width", () => {
  const W = { Wq: rand([4, 4], 1), Wk: rand([4, 4], 2), Wv: rand([4, 4], 3), Wo: rand([4, 4], 4) };
  const one = adaptLayout({ ...W, h: rand([3, 4], 5), loss: arr([], [1]) }, {});
  assert.ok(one.arrays.X && !('h' in one.arrays));
  assert.match(one.notes[0], /^h \(3, 4\) read as X: your file's one array of C = 4 columns/);
  const two = adaptLayout({ ...W, h: rand([3, 4], 5), emb: rand([3, 4], 6) }, {});
  assert.deepEqual(two.reading.missing, ['X']);
  const other = adaptLayout({ ...W, h: rand([3, 5], 5) }, {});
  assert.deepEqual(other.reading.missing, ['X']);
});

test('round 7 readings: a stack under heads_, X beside trained weights, module paths', () => {
  // heads_Wq (h, C, hs): a stack read as Wq; Wo_after is a training weight, never X
  const stack = (seed) => rand([3, 6, 2], seed);
  const W = { heads_Wq: stack(1), heads_Wk: stack(2), heads_Wv: stack(3), Wo: rand([6, 6], 4) };
  const read = adaptLayout({ ...W, seq: rand([2, 6], 5), Wo_after: rand([6, 6], 6) }, {});
  assert.deepEqual(read.reading.missing, []);
  assert.ok(read.notes.some((n) => /^seq \(2, 6\) read as X/.test(n)));
  assert.ok(read.notes.some((n) => /^heads_Wq is a stack of 3 per-head \(6, 2\)/.test(n)));
  assert.equal(layoutRole('heads_Wq')?.name, 'Wq');
  assert.equal(layoutRole('headsWq_after'), null);
  // a module's own gradient of its weights
  assert.deepEqual(layoutRole('Q_linear.dweights'), { kind: 'weight', name: 'dWq', grad: true });
});

test('round 8 readings: per-head modules by path, qkv_proj as a fused projection', () => {
  assert.deepEqual(layoutRole('qkv_proj_weight'), { kind: 'fused', grad: false });
  assert.equal(layoutRole('qkv_proj_bias')?.kind, 'fusedBias');
  // heads.i.lin_Q.W (C, hs): head i's query map, joined into Wq; its .grad into dWq
  const C = 6;
  const head = (seed) => rand([C, 3], seed);
  const arrays = { X: rand([2, C], 9), 'lin.W': rand([C, C], 10) };
  for (const [i, x] of [0, 1].flatMap((n) => ['Q', 'K', 'V'].map((w) => [n, w]))) {
    arrays[`heads.${i}.lin_${x}.W`] = head(10 * i + x.charCodeAt(0));
  }
  const read = adaptLayout(arrays, { heads: 2 });
  assert.deepEqual(read.reading.missing, []);
  assert.ok(
    read.notes.some((n) => /heads\.0\.lin_Q\.W/.test(n)),
    read.notes.join('\n'),
  );
});
