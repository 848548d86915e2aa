// adaptLayout (web/check/layouts.js) on notebooks in other authors' layouts, written in NumPy
// (tests/reference/notebook_layouts.py -> build/reference/notebook-layouts/): per-head weight
// stacks and lists, GPT-2's fused c_attn, PyTorch's in_proj_weight and (out, in) weights, a layer
// without Wo, a heads setting other than the file's, results stacked heads first. Each file,
// adapted, gives the course's weights exactly as NumPy rearranged them, says each adaptation in a
// note, and then runs through checkNotebook: the bias-free layouts match on every row they have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA, referenceDir } from '../helpers.mjs';
import { assertSentences, loadManifest, loadStudent } from './students.mjs';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';
import { adaptLayout, layoutRole } from '../../web/check/layouts.js';

const mha = await loadMHA();
const dir = join(referenceDir(), 'notebook-layouts');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const runOf = (name) => manifest.find((r) => r.name === name);
const load = (name) => readNpz(readFileSync(join(dir, `${name}.npz`)));

const OUT_IN =
  "your weights are stored (out, in) and used as X @ W.T (PyTorch's nn.Linear): " +
  'transposed all four and their gradients';
const BIAS =
  "the course's layer has none: the check compares your arrays with the course's layer and " +
  'names any difference a bias makes';
const NO_WO =
  'no Wo in your file: your layer has no output projection, so Wo = I (the identity) is used: ' +
  'Y = concat';

const COLS8 = 'head i in columns i·8…(i+1)·8';
const ROWS8 = 'head i in rows i·8…(i+1)·8';
const FIRST_HS = 'is saved heads first, (h, B, T, hs): transposed to';
const FIRST_TT = 'is saved heads first, (h, B, T, T): transposed to';
const COURSE_HS = '(B, h, T, hs) as the course has it';
const COURSE_TT = '(B, h, T, T) as the course has it';

// What each file must give: its notes (exact text or a pattern), the file keys adaptLayout
// consumed, and the check's rows that match (every other row missing) or differ (biases).
const EXPECT = {
  'per-head-stack': {
    notes: ['Wq', 'Wk', 'Wv', 'Wo', 'dWo', 'dWq', 'dWk', 'dWv'].map((w) =>
      /o$/.test(w)
        ? `${w} is a stack of 3 per-head (8, 24) matrices: joined into one (24, 24), ${ROWS8}`
        : `${w} is a stack of 3 per-head (24, 8) matrices: joined into one (24, 24), ${COLS8}`,
    ),
    used: ['Wq', 'Wk', 'Wv', 'Wo', 'dWo', 'dWq', 'dWk', 'dWv'],
    match: [
      ...['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y', 'loss', 'dY', 'dWo'],
      ...['dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX'],
    ],
  },
  'per-head-list-f32': {
    notes: [
      `Wq_0 … Wq_3 are 4 per-head (32, 8) matrices: joined into one (32, 32) Wq, ${COLS8}`,
      `Wk_0 … Wk_3 are 4 per-head (32, 8) matrices: joined into one (32, 32) Wk, ${COLS8}`,
      `Wv_0 … Wv_3 are 4 per-head (32, 8) matrices: joined into one (32, 32) Wv, ${COLS8}`,
      `Wo_0 … Wo_3 are 4 per-head (8, 32) matrices: joined into one (32, 32) Wo, ${ROWS8}`,
      'your Q is (4, 7, 8): 4 heads, not 2 as set; checked with 4',
    ],
    used: ['q', 'k', 'v', 'o'].flatMap((x) => [0, 1, 2, 3].map((i) => `W${x}_${i}`)),
    match: ['Q', 'K', 'V', 'att', 'Y'],
  },
  'gpt2-c-attn': {
    notes: [
      'c_proj read as Wo',
      'c_attn (24, 72) holds Wq, Wk, Wv side by side, used as X @ W: ' +
        'split into its three column blocks of 24',
      'qkv (6, 72) holds Q, K, V side by side: split into the three, each (6, 24)',
      `your layer has biases (bq, bk, bv, bo); ${BIAS}`,
    ],
    used: ['c_attn', 'c_attn_bias', 'c_proj', 'c_proj_bias', 'qkv'],
    differ: ['Q', 'K', 'V', 'Y'],
  },
  'pytorch-in-proj': {
    notes: [
      'out_proj_weight read as Wo',
      'out_proj_weight_grad read as dWo',
      /^in_proj_weight \(96, 32\) holds Wq, Wk, Wv one above the other, stored \(out, in\) and used as X @ W\.T .*: split into its three row blocks of 32$/,
      /^in_proj_weight_grad \(96, 32\) holds dWq, dWk, dWv one above the other, .*row blocks of 32$/,
      OUT_IN,
      `your layer has biases (bq, bk, bv, bo); ${BIAS}`,
    ],
    used: [
      ...['in_proj_weight', 'in_proj_bias', 'out_proj_weight', 'out_proj_bias'],
      ...['in_proj_weight_grad', 'out_proj_weight_grad'],
    ],
    differ: ['Y'],
  },
  'pytorch-linear-out-in': {
    notes: [OUT_IN.replace("(PyTorch's", "(as you chose: PyTorch's")],
    used: ['Wq', 'Wk', 'Wv', 'Wo', 'dWq', 'dWk', 'dWv', 'dWo'],
    match: ['Q', 'K', 'V', 'att', 'Y', 'loss', 'dWo', 'dWq', 'dWk', 'dWv', 'dX'],
  },
  'hf-proj-out-in-f32': {
    notes: [
      'q_proj.weight read as Wq',
      'k_proj.weight read as Wk',
      'v_proj.weight read as Wv',
      'o_proj.weight read as Wo',
      OUT_IN,
    ],
    used: ['q_proj.weight', 'k_proj.weight', 'v_proj.weight', 'o_proj.weight'],
    match: ['Y'],
  },
  'no-wo': {
    notes: [NO_WO],
    used: [],
    match: [
      ...['Q', 'K', 'V', 'scores', 'att', 'headout', 'Y', 'loss', 'dY', 'dheadout', 'dV'],
      ...['datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX'],
    ],
  },
  'heads-differ': {
    notes: ['your Q is (2, 4, 6, 12): 4 heads, not 2 as set; checked with 4'],
    used: [],
    match: [
      ...['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y', 'dWo', 'dV', 'dQ', 'dK'],
      ...['dWq', 'dWk', 'dWv'],
    ],
  },
  'heads-first-causal': {
    notes: [
      ...['Q', 'K', 'V'].map((n) => `${n} (4, 3, 5, 6) ${FIRST_HS} (3, 4, 5, 6), ${COURSE_HS}`),
      `scores (4, 3, 5, 5) ${FIRST_TT} (3, 4, 5, 5), ${COURSE_TT}`,
      `attn (4, 3, 5, 5) ${FIRST_TT} att (3, 4, 5, 5), ${COURSE_TT}`,
      `headout (4, 3, 5, 6) ${FIRST_HS} (3, 4, 5, 6), ${COURSE_HS}`,
    ],
    used: ['Q', 'K', 'V', 'scores', 'attn', 'headout'],
    match: ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y'],
  },
};

function assertNotes(notes, expected, label) {
  assert.equal(notes.length, expected.length, `${label}: ${JSON.stringify(notes, null, 1)}`);
  expected.forEach((e, i) => {
    if (e instanceof RegExp) assert.match(notes[i], e, `${label}: note ${i}`);
    else assert.equal(notes[i], e, `${label}: note ${i}`);
  });
}

test('the fixtures cover every layout of issue 18 (each file as its author saves it)', () => {
  assert.deepEqual(manifest.map((r) => r.name).sort(), Object.keys(EXPECT).sort());
  assert.deepEqual(runOf('per-head-stack').saved.Wq, [3, 24, 8]);
  assert.deepEqual(runOf('per-head-list-f32').saved.X, [7, 32]);
  assert.deepEqual(runOf('pytorch-in-proj').saved.in_proj_weight, [96, 32]);
  assert.deepEqual(runOf('heads-first-causal').saved.attn, [4, 3, 5, 5]);
  assert.ok(!('Wo' in runOf('no-wo').saved));
});

for (const run of manifest) {
  const expect = EXPECT[run.name];

  test(`${run.name}: adaptLayout gives the course's weights, heads, convention and notes`, () => {
    const arrays = load(run.name);
    const a = adaptLayout(arrays, { heads: run.heads_option, weights: run.weights_option });
    assert.equal(a.heads, run.heads);
    assert.equal(a.convention, run.convention);
    for (const [name, want] of Object.entries(run.course)) {
      const got = a.arrays[name];
      assert.ok(got, `${name} adapted`);
      assert.deepEqual(got.shape, want.shape, `${name}: shape`);
      assert.deepEqual(got.data, Float64Array.from(want.data), `${name}: exactly NumPy's`);
    }
    assert.deepEqual(Object.keys(a.biases).sort(), Object.keys(run.biases).sort());
    for (const [name, want] of Object.entries(run.biases)) {
      assert.deepEqual(a.biases[name], Float64Array.from(want.data), name);
    }
    assertNotes(a.notes, expect.notes, run.name);
    assertSentences('layouts', run.name, a.notes); // word for word, as approved
    assert.deepEqual(a.used, expect.used);
    // a used key is gone or holds the rewritten array; every other key is untouched
    for (const key of a.used) assert.notEqual(a.arrays[key], arrays[key], key);
    for (const key of Object.keys(arrays).filter((k) => !a.used.includes(k))) {
      assert.equal(a.arrays[key], arrays[key], key);
    }
  });

  test(`${run.name}: checkNotebook runs on the adapted arrays`, () => {
    const a = adaptLayout(load(run.name), { heads: run.heads_option, weights: run.weights_option });
    const report = checkNotebook(mha, a.arrays, { heads: a.heads, causal: run.causal });
    assert.equal(report.sizes.heads, run.heads);
    assert.deepEqual(report.ignored, run.name === 'pytorch-in-proj' ? ['in_proj_bias_grad'] : []);
    const status = Object.fromEntries(report.rows.map((r) => [r.name, r.status]));
    if (expect.match) {
      const matched = report.rows.filter((r) => r.status === 'match').map((r) => r.name);
      assert.deepEqual(matched.sort(), [...expect.match].sort());
      for (const r of report.rows) assert.ok(['match', 'missing'].includes(r.status), r.name);
    }
    for (const name of expect.differ ?? []) assert.equal(status[name], 'differs', name);
  });
}

test('checkNotebook adapts layouts itself: the rows of the adapted arrays, the notes', () => {
  for (const [name, heads] of [
    ['per-head-stack', 3],
    ['gpt2-c-attn', 4],
  ]) {
    const file = load(name);
    const adapted = adaptLayout(file, { heads });
    const direct = checkNotebook(mha, file, { heads });
    const via = checkNotebook(mha, adapted.arrays, { heads: adapted.heads });
    // (the adapted arrays alone have lost the file's biases: a row the bias explains is named
    // there, and read with the file's biases, a match, when checkNotebook reads them itself)
    const read = (r, i) =>
      r.status === 'match' && via.rows[i].diagnosis?.id === 'bias' ? 'differs' : r.status;
    assert.deepEqual(
      direct.rows.map((r, i) => [r.name, read(r, i)]),
      via.rows.map((r) => [r.name, r.status]),
      name,
    );
    for (const note of adapted.notes) assert.ok(direct.notes.includes(note), note);
    assert.ok(
      direct.rows.some((r) => r.status !== 'missing'),
      name,
    );
  }
});

test('the float32 files keep their dtype (and so float32 tolerances)', () => {
  const a = adaptLayout(load('per-head-list-f32'), { heads: 2 });
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) assert.equal(a.arrays[w].dtype, '<f4', w);
  const b = adaptLayout(load('hf-proj-out-in-f32'), { heads: 4 });
  assert.equal(b.arrays.Wq.dtype, '<f4');
});

// ------------------------------------------------------------------------------------------------
// small hand-made files

const arr = (shape, data, extra = {}) => ({ data: Float64Array.from(data), shape, ...extra });
const iota = (n, from = 0) => Array.from({ length: n }, (_, i) => from + i);

test('per-head keys Wq0… and Wq_h1… (from 1) are joined head by head, resolution too', () => {
  // C = 4, 2 heads of hs = 2: Wq head i is (4, 2); head 0 holds 0…7, head 1 holds 10…17
  const X = arr([1, 3, 4], iota(12));
  const res = (d) => ({ dtype: 'text', resolution: Float64Array.from(d, (v) => v / 1000) });
  const head0 = iota(8);
  const head1 = iota(8, 10);
  const a = adaptLayout(
    { X, Wq0: arr([4, 2], head0, res(head0)), Wq1: arr([4, 2], head1, res(head1)) },
    { heads: 2 },
  );
  // np.hstack([[0,1],[2,3],[4,5],[6,7]], [[10,11],…]) row by row
  assert.deepEqual([...a.arrays.Wq.data], [0, 1, 10, 11, 2, 3, 12, 13, 4, 5, 14, 15, 6, 7, 16, 17]);
  assert.deepEqual(
    [...a.arrays.Wq.resolution],
    [0, 1, 10, 11, 2, 3, 12, 13, 4, 5, 14, 15, 6, 7, 16, 17].map((v) => v / 1000),
  );
  assert.equal(a.arrays.Wq.dtype, 'text');
  assert.deepEqual(a.used, ['Wq0', 'Wq1']);
  const b = adaptLayout({ X, Wk_h1: arr([2, 4], head0), Wk_h2: arr([2, 4], head1) }, { heads: 2 });
  // (hs, C) per head: one above the other (np.vstack)
  assert.deepEqual([...b.arrays.Wk.data], [...head0, ...head1]);
  assert.match(
    b.notes[0],
    /^Wk_h1 … Wk_h2 are 2 per-head \(2, 4\) matrices: .* rows i·2…\(i\+1\)·2$/,
  );
});

test('what cannot be adapted is left as it is, with a note saying why, and nothing throws', () => {
  const X = arr([2, 3, 4], iota(24));
  const bad = arr([30, 10], iota(300));
  const a = adaptLayout({ X, in_proj_weight: bad }, { heads: 2 });
  assert.equal(a.arrays.in_proj_weight, bad);
  assert.deepEqual(a.notes, [
    'in_proj_weight has shape (30, 10): a fused Wq, Wk, Wv is (C, 3C) = (4, 12) or (3C, C) = ' +
      '(12, 4) with C = 4 from X; left as it is',
  ]);
  assert.deepEqual(a.used, []);
  const gaps = adaptLayout({ X, Wq_0: arr([4, 2], iota(8)), Wq_2: arr([4, 2], iota(8)) }, {});
  assert.match(gaps.notes[0], /^Wq_0 … Wq_2 are not Wq's heads .*left as they are$/);
  const late = adaptLayout({ X, Wq_2: arr([4, 2], iota(8)), Wq_3: arr([4, 2], iota(8)) }, {});
  assert.match(late.notes[0], /^Wq_2 … Wq_3 are not Wq's heads numbered from 0 or 1/);
  assert.ok(!('Wq' in late.arrays));
  const b = adaptLayout({ X, bq: arr([5], iota(5)), c_proj: arr([3, 3], iota(9)) }, { heads: 2 });
  assert.deepEqual(b.notes, [
    'c_proj has shape (3, 3): Wo is (C, C) = (4, 4) with C = 4 from X; left as it is',
    'bq (5,) not read as a bias: a bias has 4 entries with C = 4 from X; left as it is',
  ]);
  for (const weird of [null, 7, {}, { X: 3 }, { X: arr([4], iota(4)) }, { constructor: X }]) {
    const r = adaptLayout(weird, { heads: 2 });
    assert.deepEqual([r.notes, r.used, r.convention, r.heads], [[], [], null, 2]);
  }
  const big = { X, Wq: { data: new BigInt64Array(16), shape: [4, 4] } };
  assert.doesNotThrow(() => adaptLayout(big, { heads: 2 }));
});

test('zero biases are dropped with a note; a layer with them matches like one without', () => {
  const run = runOf('pytorch-linear-out-in');
  const zeros = (n) => arr([n], new Array(n).fill(0));
  const arrays = { ...load(run.name), b_q: zeros(24), out_proj_bias: zeros(24) };
  const a = adaptLayout(arrays, { heads: 3, weights: 'out-in' });
  assert.deepEqual(a.biases, {});
  assert.ok(a.notes.includes("your b_q is all zeros: dropped (the course's layer has no bias)"));
  assert.ok(
    a.notes.includes("your out_proj_bias is all zeros: dropped (the course's layer has no bias)"),
  );
  assert.ok(!a.notes.some((n) => n.startsWith('your layer has biases')));
  assert.ok(!('b_q' in a.arrays));
  const report = checkNotebook(mha, a.arrays, { heads: 3 });
  assert.ok(report.rows.every((r) => r.status !== 'differs' && r.status !== 'shape'));
});

test('weights with nothing to decide from are left as they are; PyTorch names still read', () => {
  const run = runOf('pytorch-linear-out-in');
  const full = load(run.name);
  const bare = Object.fromEntries(['X', 'Wq', 'Wk', 'Wv', 'Wo'].map((k) => [k, full[k]]));
  const a = adaptLayout(bare, { heads: 3 });
  assert.equal(a.convention, null);
  assert.deepEqual(a.notes, []);
  assert.equal(a.arrays.Wq, full.Wq);
  // with only Y (no Q, K, V) the convention is found from the whole forward: under the course's
  // names it is offered (the course's reading first), under PyTorch's it is used
  const b = adaptLayout({ ...bare, Y: full.Y }, { heads: 3 });
  assert.deepEqual([b.convention, b.offered], ['in-out', 'out-in']);
  assert.equal(b.arrays.Wq, full.Wq);
  const torch = { X: full.X, Y: full.Y };
  for (const w of ['q', 'k', 'v']) torch[`${w}_proj.weight`] = full[`W${w}`];
  torch['out_proj.weight'] = full.Wo;
  const c = adaptLayout(torch, { heads: 3 });
  assert.deepEqual([c.convention, c.offered], ['out-in', null]);
  assert.deepEqual(c.arrays.Wq.data, Float64Array.from(run.course.Wq.data));
});

test("the course's names used as X @ W.T: the forward's mistake, (out, in) offered", () => {
  const run = runOf('pytorch-linear-out-in');
  const file = load(run.name);
  const a = adaptLayout(file, { heads: 3 });
  assert.deepEqual([a.convention, a.offered], ['in-out', 'out-in']);
  assert.equal(a.arrays.Wq, file.Wq, 'read as they are');
  assert.ok(
    a.notes.some((n) => n.includes('option "weights stored (out, in)"')),
    a.notes.join('\n'),
  );
  const report = checkNotebook(mha, file, { heads: 3 });
  assert.deepEqual(report.weights, { read: 'in-out', offered: 'out-in' });
  const Q = report.rows.find((r) => r.name === 'Q');
  assert.equal(Q.status, 'differs');
  assert.match(Q.diagnosis.message, /You computed Q = X @ Wq\.T/, Q.diagnosis.message);
  // read (out, in) as the student chose: every array matches
  const chosen = checkNotebook(mha, file, { heads: 3, weights: 'out-in' });
  assert.deepEqual(chosen.weights, { read: 'out-in', offered: null });
  assert.ok(chosen.rows.every((r) => ['match', 'missing'].includes(r.status)));
  // the course's reading forced on PyTorch's names: nothing transposed
  assert.throws(
    () => checkNotebook(mha, file, { heads: 3, weights: 'sideways' }),
    /weights must be/,
  );
});

test('arrays showing different numbers of heads: the option is kept, the conflict said', () => {
  const X = arr([1, 3, 8], iota(24));
  const Q = arr([1, 4, 3, 2], iota(24));
  const att = arr([1, 2, 3, 3], iota(18));
  const a = adaptLayout({ X, Q, att }, { heads: 2 });
  assert.equal(a.heads, 2);
  assert.deepEqual(a.notes, [
    'your arrays show different numbers of heads (Q: 4, att: 2): checked with 2 as set',
  ]);
});

test('a fused matrix next to Wq, Wk, Wv is not used, and said; a (3, C, C) stack is split', () => {
  const run = runOf('heads-differ');
  const f = load(run.name);
  const C = 48;
  const stack = arr([3, C, C], [...f.Wq.data, ...f.Wk.data, ...f.Wv.data]);
  const a = adaptLayout({ ...f, qkv: stack }, { heads: 4 });
  assert.ok(a.notes.includes('qkv not used: your file has Wq, Wk, Wv too'));
  assert.equal(a.arrays.qkv, stack);
  const rest = { X: f.X, Wqkv: stack, W_o: f.Wo, Q: f.Q };
  const b = adaptLayout(rest, { heads: 4 });
  assert.deepEqual(b.arrays.Wk.data, Float64Array.from(run.course.Wk.data));
  assert.equal(b.convention, 'in-out');
  assert.equal(
    b.notes[0],
    'Wqkv (3, 48, 48) holds Wq, Wk, Wv one after the other: split into the three',
  );
});

test('layoutRole reads the names authors give weights, fused matrices, biases, gradients', () => {
  const cases = {
    'attn.c_attn.weight': { kind: 'fused', grad: false },
    'h.0.attn.c_proj.bias': { kind: 'bias', name: 'bo', grad: false },
    'c_attn.weight.grad': { kind: 'fused', grad: true },
    'blocks.0.Wq': { kind: 'weight', name: 'Wq', grad: false },
    c_attn_weight: { kind: 'fused', grad: false },
    dc_attn: { kind: 'fused', grad: true },
    in_proj_weight_grad: { kind: 'fused', grad: true },
    W_qkv: { kind: 'fused', grad: false },
    'out_proj.weight': { kind: 'weight', name: 'Wo', grad: false },
    grad_Wproj: { kind: 'weight', name: 'dWo', grad: true },
    dW_k: { kind: 'weight', name: 'dWk', grad: true },
    bias_q: { kind: 'bias', name: 'bq', grad: false },
    v_bias: { kind: 'bias', name: 'bv', grad: false },
    c_proj_bias: { kind: 'bias', name: 'bo', grad: false },
    in_proj_bias: { kind: 'fusedBias', grad: false },
    dbq: null,
    toString: null,
    attn: null,
  };
  for (const [key, want] of Object.entries(cases)) assert.deepEqual(layoutRole(key), want, key);
});

test('biases count in the recomputation that finds (out, in) weights: from Q, and from Y', () => {
  const run = runOf('pytorch-linear-out-in');
  const f = load(run.name);
  const [, h, T, hs] = f.Q.shape;
  const bq = Float64Array.from(iota(h * hs), (i) => 0.5 - i / 16);
  // Q + bq, saved split: entry (b, head, t, j) gets bq[head·hs + j]
  const Q = arr(
    f.Q.shape,
    f.Q.data.map((v, i) => v + bq[(Math.floor(i / (T * hs)) % h) * hs + (i % hs)]),
  );
  const a = adaptLayout(
    { X: f.X, Wq: f.Wq, Wk: f.Wk, Wv: f.Wv, Wo: f.Wo, Q, bq: arr([24], bq) },
    { heads: 3 },
  );
  assert.equal(a.offered, 'out-in'); // (the course's names: offered, not used)
  assert.deepEqual(a.biases.bq, bq);
  // PyTorch's in_proj_weight saved as a (3, C, C) stack: the shape does not say (out, in), Y does
  const p = load('pytorch-in-proj');
  const Wqkv = arr([3, 32, 32], p.in_proj_weight.data);
  const rest = { X: p.X, Wqkv, in_proj_bias: p.in_proj_bias, out_proj_weight: p.out_proj_weight };
  const b = adaptLayout({ ...rest, out_proj_bias: p.out_proj_bias, out: p.out }, { heads: 4 });
  assert.equal(b.convention, 'out-in');
  assert.deepEqual(b.arrays.Wv.data, Float64Array.from(runOf('pytorch-in-proj').course.Wv.data));
});

test('a second Wo under another name is not used, and said; (C, 3C) alone says X @ W', () => {
  const g = load('gpt2-c-attn');
  const a = adaptLayout({ x: g.x, c_attn: g.c_attn, Wo: g.c_proj, c_proj: g.c_proj }, { heads: 4 });
  assert.equal(a.convention, 'in-out');
  assert.ok(a.notes.includes('c_proj not used as Wo: your file has Wo'), a.notes.join('\n'));
  assert.equal(a.arrays.c_proj, g.c_proj);
  assert.ok(!a.used.includes('c_proj'));
});

test("the course's own notebooks (notebook_students.py) are left exactly as they are", () => {
  let checked = 0;
  for (const run of loadManifest()) {
    const arrays = loadStudent(run.name);
    if (Object.keys(arrays).some((k) => /^b_?[qkvo]$|bias/i.test(k))) continue; // biases: read
    const a = adaptLayout(arrays, { heads: run.heads });
    assert.deepEqual([a.notes, a.used, a.heads], [[], [], run.heads], run.name);
    assert.deepEqual(Object.keys(a.arrays), Object.keys(arrays), run.name);
    for (const k of Object.keys(arrays)) assert.equal(a.arrays[k], arrays[k], `${run.name} ${k}`);
    // Q = X @ Wq.T with K = X @ Wk: a mistake in one place, not PyTorch's convention
    if (run.name === 'weights-transposed') assert.equal(a.convention, null);
    else if (run.name.startsWith('correct-')) assert.equal(a.convention, 'in-out', run.name);
    checked++;
  }
  assert.ok(checked >= 38, `${checked} notebooks`);
});
