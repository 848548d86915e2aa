// Reading a file is a search too (issue 35, item 2): notebooks saved as public NumPy attention
// code saves them (tests/check/readings.py, run here with NumPy: each layer computed in its
// author's own layout) read as the course's layer. Gradients under their authors' spellings,
// per-head weight lists under any index pattern with their output projection (one Wo saved as
// WO_0, or per-head slices composed as the heads use them, proven by Y), X saved features first,
// one head's scores and att without a head axis, and what a file lacks said instead of guessed.
// Expected weights come from NumPy's own rearrangement (the manifest), transposes from plain
// loops here; every assertion fails on the code before these readings.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';
import { adaptLayout, headKeyOf, readingNote } from '../../web/check/layouts.js';
import { acceptedShapes, courseName, matchNames } from '../../web/check/names.js';
import { PYTHON, repoRoot } from '../helpers.mjs';

const mha = await loadMHA();
const dir = mkdtempSync(join(tmpdir(), 'mha-readings-'));
after(() => rmSync(dir, { recursive: true, force: true }));
execFileSync(PYTHON, [join(repoRoot, 'tests', 'check', 'readings.py'), dir]);
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const runOf = (name) => manifest.find((r) => r.name === name);
const load = (name) => readNpz(readFileSync(join(dir, `${name}.npz`)));

const without = (arrays, ...keys) =>
  Object.fromEntries(Object.entries(arrays).filter(([k]) => !keys.includes(k)));

// status of every row by name
const statuses = (report) => Object.fromEntries(report.rows.map((r) => [r.name, r.status]));

// Every row is a match or missing, and the saved results (by course name) are matches.
function assertMatches(report, names, label) {
  const status = statuses(report);
  for (const r of report.rows) {
    assert.ok(['match', 'missing'].includes(r.status), `${label}: ${r.name} ${r.status}`);
  }
  for (const name of names) assert.equal(status[name], 'match', `${label}: ${name}`);
}

// The adapted weights are NumPy's course weights, entry for entry.
function assertCourseWeights(adapted, run) {
  for (const [name, want] of Object.entries(run.course)) {
    const got = adapted.arrays[name];
    assert.ok(got, `${run.name}: ${name} read`);
    assert.deepEqual(got.shape, want.shape, `${run.name}: ${name} shape`);
    assert.deepEqual(got.data, Float64Array.from(want.data), `${run.name}: ${name} exactly`);
  }
}

// (…, a, b) -> (…, b, a) by loops
function swapLast({ data, shape }) {
  const [a, b] = shape.slice(-2);
  const out = new Float64Array(data.length);
  for (let n = 0; n < data.length / (a * b); n++) {
    for (let i = 0; i < a; i++) {
      for (let j = 0; j < b; j++) out[n * a * b + j * a + i] = data[n * a * b + i * b + j];
    }
  }
  return { data: out, shape: [...shape.slice(0, -2), b, a], dtype: '<f8' };
}

// ------------------------------------------------------------------------------------------------
// 1. gradients under their authors' spellings

test("courseName: gradients spelled d, grad, _grad, _grads, dL_d read as the course's", () => {
  const cases = {
    W_q_grads: 'dWq',
    grad_Wq: 'dWq',
    dW_q: 'dWq',
    Wq_grad: 'dWq',
    grad_W_o: 'dWo',
    Wv_gradient: 'dWv',
    dL_dWk: 'dWk',
    d_input: 'dX',
    grad_input: 'dX',
    grad_x: 'dX',
    x_grad: 'dX',
    dx: 'dX',
    dL_dX: 'dX',
    dLoss_dY: 'dY',
    grad_out: 'dY',
    output_grad: 'dY',
    attn_grad: 'datt',
    grad_scores: 'dscores',
    Q_grad: 'dQ',
    grad_head_out: 'dheadout',
    d_concat: 'dconcat',
    gWo: 'dWo', // a leading g (round 9's gWo, g_concat, gS)
    g_concat: 'dconcat',
    gS: 'dscores',
    S: 'scores', // the lessons' own letters
    A: 'att',
    inputs: 'X',
    // an autograd's gradient beside its array
    'x.grad': 'dX',
    'out.grad': 'dY',
    'grad.attn': 'datt',
    'Wq.grad': 'dWq',
    // the heads joined
    cat: 'concat',
    attn_scores: 'scores',
    attention_pattern: 'att',
    query_vectors: 'Q',
    dE_dY: 'dY',
    dE_dTokens: 'dX',
    tokens: 'X',
    merged_heads: 'concat',
  };
  for (const [key, want] of Object.entries(cases)) assert.equal(courseName(key), want, key);
  // no gradient in the course (loss, target), a gradient's gradient, a mark alone, a lesson-1
  // head, a mark inside the name: not read
  for (const key of ['loss_grad', 'dloss', 'd_target', 'grad_dWq', 'dWq_grads', 'grad', 'd']) {
    assert.equal(courseName(key), null, key);
  }
  for (const key of ['loss.grad', 'dX.grad', 'grad.target', 'query.grad', 'gamma', 'gt']) {
    assert.equal(courseName(key), null, key);
  }
  for (const key of ['grads', 'dL', 'Wq1_grad', 'W_grad_q', 'dropout', 'delta', 'gradient', 'g']) {
    assert.equal(courseName(key), null, key);
  }
  // the course's spelling wins over a gradient spelling of the same name, said
  const a = (x) => ({ data: Float64Array.of(x), shape: [1] });
  const { found, notes } = matchNames({ grad_Wq: a(1), dWq: a(2) });
  assert.equal(found.dWq.key, 'dWq');
  assert.deepEqual(notes, ['grad_Wq and dWq both name dWq: dWq was used']);
});

for (const name of ['grads-suffix', 'grad-prefix', 'grad-suffix', 'd-prefix']) {
  test(`${name}: each gradient read under its author's name; every row matches`, () => {
    const run = runOf(name);
    const report = checkNotebook(mha, load(name), { heads: run.heads });
    assertMatches(report, Object.keys(run.spelled), name);
    // every result saved: nothing missing, nothing ignored
    assert.deepEqual(
      report.rows.filter((r) => r.status !== 'match').map((r) => r.name),
      [],
    );
    assert.deepEqual(report.ignored, []);
    for (const [course, spelled] of Object.entries(run.spelled)) {
      assert.ok(report.notes.includes(`${spelled} read as ${course}`), `${name}: ${spelled}`);
    }
  });
}

// ------------------------------------------------------------------------------------------------
// 2. per-head weight lists under any index pattern, with Wo

test('headKeyOf: one number beside a weight name, a head mark or none; others are no head', () => {
  const cases = {
    WQ_0_h: ['Wq', 0],
    Wq_h1: ['Wq', 1],
    W_q_head_2: ['Wq', 2],
    head_0_Wk: ['Wk', 0],
    h1_Wv: ['Wv', 1],
    'heads.0.W_o': ['Wo', 0],
    'Wo[3]': ['Wo', 3],
    WO_0: ['Wo', 0],
    dWO_2_h: ['dWo', 2],
    W_q_grads_1: ['dWq', 1],
    grad_Wk_0: ['dWk', 0],
    q_proj_0: ['Wq', 0],
    'blocks.0.Wq_1': ['Wq', 1], // the module path is not the key's
  };
  for (const [key, [name, index]] of Object.entries(cases)) {
    assert.deepEqual(headKeyOf(key), { name, index }, key);
  }
  for (const key of ['layer_0_Wq_1', 'block0_Wq', 'l1_Wq1', 'a_Wq_0', 'Wq_0x', 'Wq', 'q1']) {
    assert.equal(headKeyOf(key), null, key);
  }
});

const JOINED = (w, part, where) =>
  `${w}_0_h … ${w}_2_h are 3 per-head ${part} matrices: joined into one (6, 6) ` +
  `W${w[1].toLowerCase()}, head i in ${where} i·2…(i+1)·2`;
const QKV_JOINED = ['WQ', 'WK', 'WV'].map((w) => JOINED(w, '(6, 2)', 'columns'));

const PER_HEAD = {
  // one (C, C) output projection saved as WO_0: it is Wo (never "no Wo … Wo = I")
  'per-head-wo-single': { notes: [...QKV_JOINED, 'WO_0 read as Wo'], match: ['att', 'concat'] },
  // (hs, C) slices: Y = Σ o_i @ Wo_i, joined in rows, as the heads compose
  'per-head-wo-rows': {
    notes: [...QKV_JOINED, JOINED('WO', '(2, 6)', 'rows')],
    match: ['att', 'concat'],
  },
  // (C, hs) slices of per-head nn.Linear(hs, C): Y = Σ o_i @ Wo_i.T, dWo per head with them
  'per-head-wo-linear': {
    notes: [
      ...QKV_JOINED,
      JOINED('WO', '(6, 2)', 'columns'),
      'dWO_0_h … dWO_2_h are 3 per-head (6, 2) matrices: joined into one (6, 6) dWo, head i in ' +
        'columns i·2…(i+1)·2',
      "WO_0_h … WO_2_h are (6, 2) = (C, hs) slices of Wo: head i's output meets its slice only " +
        'as headout_i @ Wo_i.T, so Wo = np.vstack([Wo_i.T …]) (and dWo with it) (your Y, ' +
        'recomputed with it, matches)',
    ],
    match: ['att', 'concat', 'dWo'],
  },
  // the same without Y (nothing to prove it by): composed all the same
  'per-head-wo-linear-no-y': {
    notes: [
      ...QKV_JOINED,
      JOINED('WO', '(6, 2)', 'columns'),
      "WO_0_h … WO_2_h are (6, 2) = (C, hs) slices of Wo: head i's output meets its slice only " +
        'as headout_i @ Wo_i.T, so Wo = np.vstack([Wo_i.T …])',
    ],
    match: [],
  },
  // everything (out, in): the heads' (hs, C) nn.Linear weights and an nn.Linear(C, C) Wo saved
  // in row blocks; Y keeps the (out, in) reading of Wo against the slices' composition
  'per-head-wo-out-in-rows': {
    notes: [
      ...['WQ', 'WK', 'WV', 'WO'].map((w) => JOINED(w, '(2, 6)', 'rows')),
      "your weights are stored (out, in) and used as X @ W.T (PyTorch's nn.Linear): " +
        'transposed all four and their gradients',
    ],
    match: ['att', 'concat'],
  },
  // the heads' weights (C, hs) used as X @ W, Wo an nn.Linear weight saved in row blocks: only
  // Y says Wo is their transpose
  'per-head-wo-linear-blocks': {
    notes: [
      ...QKV_JOINED,
      JOINED('WO', '(2, 6)', 'rows'),
      'WO_0_h … WO_2_h: your Y is reproduced only with Wo transposed from the way per-head ' +
        'slices compose: Wo transposed',
    ],
    match: ['att', 'concat'],
  },
};

for (const [name, expect] of Object.entries(PER_HEAD)) {
  test(`${name}: the per-head keys and the output projection read as the course's layer`, () => {
    const run = runOf(name);
    const file = load(name);
    const a = adaptLayout(file, { heads: run.heads });
    assertCourseWeights(a, run);
    assert.deepEqual(a.notes, expect.notes);
    assert.deepEqual(a.reading.missing, []);
    const report = checkNotebook(mha, file, { heads: run.heads });
    const saved = 'Y' in file ? ['Y', 'loss', ...expect.match] : expect.match;
    assertMatches(report, saved, name);
    assert.ok(!report.notes.some((n) => n.startsWith('no Wo')), name);
    assert.equal(report.sizes.heads, 3);
  });
}

test('a lone per-head Wo slice is said and never replaced by the identity; a file Wo wins', () => {
  const name = 'per-head-wo-rows';
  const file = without(load(name), 'WO_1_h', 'WO_2_h');
  const a = adaptLayout(file, { heads: 3 });
  assert.ok(!('Wo' in a.arrays));
  assert.ok(
    a.notes.includes(
      "WO_0_h (2, 6) is one head's slice of Wo (C = 6 from X) and your file has no other " +
        "head's: Wo cannot be built from it; left as it is",
    ),
  );
  assert.ok(!a.notes.some((n) => n.startsWith('no Wo')));
  assert.deepEqual(a.reading.missing, ['Wo']);
  // the file's own Wo is used; its per-head keys are not
  const course = runOf(name).course.Wo;
  const Wo = { data: Float64Array.from(course.data), shape: course.shape, dtype: '<f8' };
  const b = adaptLayout({ ...load(name), Wo }, { heads: 3 });
  assert.equal(b.arrays.Wo, Wo);
  assert.ok('WO_0_h' in b.arrays);
});

// ------------------------------------------------------------------------------------------------
// 3. X saved features first

const FEATURES_FIRST = {
  'features-first': {
    notes: [
      'X is (6, 5) and your Wq, Wk, Wv give C = 6: X is saved features first, (C, T); read as ' +
        'X.T, (5, 6)',
      'target, Y, dY, dX are saved features first as X is: read transposed too, (T, C) = (5, 6)',
    ],
    convention: 'in-out',
    match: ['Y', 'loss', 'dY', 'dX'],
  },
  'features-first-batch': {
    notes: [
      'X is (2, 6, 5) and your Wq, Wk, Wv give C = 6: X is saved features first, (B, C, T); ' +
        'read as X.transpose(0, 2, 1), (2, 5, 6)',
      'target, Y, dY, dX are saved features first as X is: read transposed too, (B, T, C) = ' +
        '(2, 5, 6)',
    ],
    convention: 'in-out',
    match: ['Y', 'loss', 'dY', 'dX'],
  },
  // Q = Wq @ X: the weights used (out, in), found from Q once X and Q are read transposed
  'features-first-out-in': {
    notes: [
      'X is (6, 5) and your Wq, Wk, Wv give C = 6: X is saved features first, (C, T); read as ' +
        'X.T, (5, 6)',
      'target, Y, dY, dX, Q are saved features first as X is: read transposed too, (T, C) = ' +
        '(5, 6)',
      "your weights are stored (out, in) and used as X @ W.T (PyTorch's nn.Linear): " +
        'transposed all four and their gradients',
    ],
    convention: 'out-in',
    match: ['Q', 'Y', 'loss', 'dY', 'dX'],
  },
};

for (const [name, expect] of Object.entries(FEATURES_FIRST)) {
  test(`${name}: X (C, T) read as X.T with its other arrays, no throw, every row matches`, () => {
    const run = runOf(name);
    const file = load(name);
    const a = adaptLayout(file, { heads: run.heads });
    assert.deepEqual(a.notes, expect.notes);
    assert.equal(a.convention, expect.convention);
    assertCourseWeights(a, run);
    for (const k of ['X', 'dY']) {
      const want = swapLast(file[k]);
      assert.deepEqual([a.arrays[k].data, a.arrays[k].shape], [want.data, want.shape], k);
    }
    const report = checkNotebook(mha, file, { heads: run.heads });
    assertMatches(report, expect.match, name);
    assert.deepEqual(report.sizes, {
      B: file.X.shape.length === 3 ? 2 : 1,
      T: 5,
      C: 6,
      heads: 3,
      hs: 2,
    });
  });
}

test('features first only when X fits no other way: the weights must all say so', () => {
  const f = load('features-first');
  const { X, Wq, Wk, Wv } = f;
  const keep = (arrays) => adaptLayout(arrays, { heads: 3 });
  // Wq, Wk, Wv not all there, or Wo showing T as C: X left as it is, nothing said
  for (const arrays of [
    { X, Wq, Wk },
    { X, Wq, Wk, Wv, Wo: { data: new Float64Array(25), shape: [5, 5] } },
  ]) {
    const a = keep(arrays);
    assert.equal(a.arrays.X, X, Object.keys(arrays).join());
    assert.deepEqual(a.notes, []);
  }
  // X (T, C) as the course has it: untouched; per-head lists and a fused matrix say C too
  assert.deepEqual(keep({ X: swapLast(X), Wq, Wk, Wv, Wo: f.Wo }).notes, []);
  const qkv = { data: new Float64Array(6 * 18), shape: [6, 18] };
  assert.match(keep({ X, c_attn: qkv }).notes[0], /^X is \(6, 5\) and your Wq, Wk, Wv give C = 6/);
  const heads = Object.fromEntries(
    ['Wq', 'Wk', 'Wv'].flatMap((w) =>
      [0, 1, 2].map((i) => [`${w}_${i}`, { data: new Float64Array(12), shape: [6, 2] }]),
    ),
  );
  assert.match(keep({ X, ...heads }).notes[0], /^X is \(6, 5\) .* read as X\.T, \(5, 6\)$/);
});

test('a dY or target saved (C, T) beside X (T, C): read transposed, no throw', () => {
  const run = runOf('single-head-one-item');
  const file = load(run.name);
  const target = swapLast(file.target);
  const a = adaptLayout({ ...file, target }, { heads: 1 });
  assert.deepEqual(a.notes, [
    'target is (6, 4) = (C, T) while X is (T, C) = (4, 6): read as target.T',
  ]);
  assert.deepEqual(a.arrays.target.data, file.target.data);
  const report = checkNotebook(mha, { ...file, target }, { heads: 1 });
  assertMatches(report, ['Y', 'scores', 'att', 'datt', 'dscores'], run.name);
});

// ------------------------------------------------------------------------------------------------
// 4. one head: scores and att without a head axis

test('one head: scores, att, datt, dscores (B, T, T), and (T, T) with B = 1, are compared', () => {
  for (const name of ['single-head', 'single-head-one-item']) {
    const report = checkNotebook(mha, load(name), { heads: 1 });
    assertMatches(report, ['scores', 'att', 'Y', 'datt', 'dscores'], name);
  }
  // accepted with one head only: with two, (B, T, T) is no head's layout
  const s = { B: 2, T: 4, C: 6 };
  const shapes = (heads, B = 2) =>
    acceptedShapes('att', { ...s, B, heads }).map((f) => f.shape.join(','));
  assert.deepEqual(shapes(1), ['2,1,4,4', '2,4,4']);
  assert.deepEqual(shapes(1, 1), ['1,1,4,4', '1,4,4', '4,4']);
  assert.deepEqual(shapes(2), ['2,2,4,4']);
  // (with h = 2 set, the check reads the file as one head: the test below)
});

// ------------------------------------------------------------------------------------------------
// 5. what a file lacks: said, not guessed

test('reading: which arrays the layer was read from, what is missing or not (C, C)', () => {
  const run = runOf('per-head-wo-rows');
  const file = without(load(run.name), 'WO_1_h', 'WO_2_h');
  const a = adaptLayout(file, { heads: 3 });
  assert.deepEqual(a.reading.read.Wq, ['WQ_0_h', 'WQ_1_h', 'WQ_2_h']);
  assert.equal(
    readingNote(a.reading),
    'your layer as read: X, Wq from WQ_0_h … WQ_2_h, Wk from WK_0_h … WK_2_h, Wv from WV_0_h … ' +
      'WV_2_h; missing: Wo (the check needs X and the four weights)',
  );
  // a full layer: nothing to say; Wo = I said as such
  assert.equal(readingNote(adaptLayout(load(run.name), { heads: 3 }).reading), null);
  const { Wq, Wk, Wv } = load('features-first');
  const X = swapLast(load('features-first').X);
  const noWo = adaptLayout({ X, Wq, Wk, Wv }, { heads: 3 });
  assert.deepEqual(noWo.reading.read.Wo, []);
  assert.equal(readingNote(noWo.reading), null);
  // a weight of another shape, no X at all
  const bad = { data: new Float64Array(12), shape: [6, 2] };
  const c = adaptLayout({ X, Wq, q_proj: Wq, Wk: bad }, { heads: 3 });
  assert.equal(
    readingNote(c.reading),
    'your layer as read: X, Wq; missing: Wv, Wo; not (C, C): Wk (6, 2) (the check needs X and ' +
      'the four weights)',
  );
  assert.equal(
    readingNote(adaptLayout({ Wq }, {}).reading),
    'your layer as read: Wq; missing: X, Wk, Wv, Wo (the check needs X and the four weights)',
  );
  assert.equal(
    readingNote(adaptLayout(null, {}).reading),
    'nothing of your layer was read; missing: X, Wq, Wk, Wv, Wo (the check needs X and the ' +
      'four weights)',
  );
});

// A layer with biases whose Q, K, V were never saved: the biases applied in the steps before the
// first saved result reproduce it (proven by recomputing), named once, in the file's own keys;
// later rows follow. Without the biases in the file, the same arrays are not explained by them.
test('biases applied in the forward though Q, K, V are not saved: a reading, said per row', () => {
  // the file's biases explain every row: each compared with the layer with them, a match
  const y = checkNotebook(mha, load('biased-y-only'), { heads: 3 });
  const Y = y.rows.find((r) => r.name === 'Y');
  assert.equal(Y.status, 'match');
  assert.equal(Y.diagnosis, null);
  assert.match(
    Y.note,
    /read with your biases \(Q = X @ Wq \+ b_q; K = X @ Wk \+ b_k; V = X @ Wv \+ b_v;/,
  );
  assert.match(Y.note, /Y = concat @ Wo \+ b_o\); the course's layer has none/);
  const loss = y.rows.find((r) => r.name === 'loss');
  assert.equal(loss.status, 'match');
  assert.match(loss.note, /compared with your layer with its biases \(b_q, b_k, b_v, b_o\)/);
  // attention saved, bo not used: bq, bk at att; bv (through att @ V) at Y
  const a = checkNotebook(mha, load('biased-att'), { heads: 3 });
  const att = a.rows.find((r) => r.name === 'att');
  assert.equal(att.status, 'match');
  assert.match(att.note, /read with your biases \(Q = X @ Wq \+ b_q; K = X @ Wk \+ b_k\)/);
  const aY = a.rows.find((r) => r.name === 'Y');
  assert.equal(aY.status, 'match');
  assert.match(aY.note, /read with your biases \(V = X @ Wv \+ b_v\)/);
  // q and k saved, the maps as score: that row named for what it holds, the rest read with the
  // biases (with Q and K not saved, the biases are not adopted before that row: not named)
  const sa = checkNotebook(mha, load('biased-score-att'), { heads: 3 });
  const flagged = sa.rows.filter((r) => r.status === 'differs');
  assert.deepEqual(
    flagged.map((r) => [r.name, r.diagnosis.id]),
    [['scores', 'overwritten']],
  );
  assert.match(
    sa.rows.find((r) => r.name === 'Y').note,
    /read with your biases \(V = X @ Wv \+ b_v\)/,
  );
  // a bias at Y beside a mistake shown alone by a later row (dWo: the merge without its
  // transpose): Y, diagnosed again with it, says so
  const mb = checkNotebook(mha, load('biased-merge-bug'), { heads: 2 });
  const dWo = mb.rows.find((r) => r.name === 'dWo');
  assert.equal(dWo.diagnosis.id, 'merge-without-transpose', dWo.diagnosis.message);
  const mY = mb.rows.find((r) => r.name === 'Y');
  assert.equal(mY.diagnosis.id, 'bias', mY.diagnosis.message);
  assert.match(mY.diagnosis.message, /This is with the mistake your dWo shows in concat/);
  // a mistake beside the biases: no reading, the bias named as before
  const wrong = load('biased-y-only');
  wrong.out = { ...wrong.out, data: wrong.out.data.map((x, i) => (i === 0 ? x + 1 : x)) };
  const w = checkNotebook(mha, wrong, { heads: 3 });
  assert.equal(w.rows.find((r) => r.name === 'Y').status, 'differs');
  // the same arrays without the biases: no bias is named
  const bare = without(load('biased-y-only'), 'b_q', 'b_k', 'b_v', 'b_o');
  const none = checkNotebook(mha, bare, { heads: 3 });
  assert.notEqual(none.rows.find((r) => r.name === 'Y').diagnosis?.id, 'bias');
});

// Course-named weights stored (out, in) beside biases: the course's convention first, so the
// transpose with the file's biases is the forward's mistake, named at the first row (att, whose
// Q and K are not saved); read (out, in) by the student's choice, every row matches.
test('course-named (out, in) weights with biases: the transpose and biases named as one', () => {
  const file = load('biased-out-in');
  const r = checkNotebook(mha, file, { heads: 3 });
  const att = r.rows.find((row) => row.name === 'att');
  assert.equal(att.status, 'differs');
  assert.equal(att.diagnosis.id, 'weights-transposed', att.diagnosis.message);
  assert.match(att.diagnosis.message, /^You computed Q = X @ W_q\.T \+ b_q; K = X @ W_k\.T \+ b_k/);
  assert.equal(r.weights.offered, 'out-in');
  const read = checkNotebook(mha, file, { heads: 3, weights: 'out-in' });
  assertMatches(read, ['att', 'Y', 'loss'], 'biased-out-in read (out, in)');
});

// One head's maps without the head axis, checked with h = 2 set: the reading of one head is used
// when it explains more of the file, and said; a 2-head layer's maps averaged over its heads (no
// head's) are not read so.
test('a (B, T, T) att with h set to 2: read as one head when that explains more, said', () => {
  const file = load('single-head');
  const r = checkNotebook(mha, file, { heads: 2 });
  assert.equal(r.sizes.heads, 1);
  assertMatches(r, ['scores', 'att', 'Y', 'datt', 'dscores'], 'single-head at h = 2');
  assert.match(r.notes[0], /^your scores, att, datt, dscores have no head axis, .*as one head/);
  // a 2-head layer (the engine's) with its attention averaged over the heads, (B, T, T)
  const { X, Wq, Wk, Wv, Wo } = file;
  const [B, T, C] = X.shape.length === 3 ? X.shape : [1, ...X.shape];
  const layer = mha.createLayer({ C, heads: 2 });
  for (const [k, w] of Object.entries({ Wq, Wk, Wv, Wo })) layer.weights[k].set(w.data);
  const { Y, attention } = layer.forward(Float64Array.from(X.data), { B, T });
  layer.free();
  const mean = new Float64Array(B * T * T);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < 2; h++) {
      for (let i = 0; i < T * T; i++) mean[b * T * T + i] += attention[(b * 2 + h) * T * T + i] / 2;
    }
  }
  const att = { data: mean, shape: [B, T, T] };
  const y = { data: Float64Array.from(Y), shape: [B, T, C] };
  const two = checkNotebook(mha, { X, Wq, Wk, Wv, Wo, att, Y: y }, { heads: 2 });
  assert.equal(two.sizes.heads, 2, 'averaged maps: not one head');
  assert.deepEqual(statuses(two), { ...statuses(two), att: 'shape', Y: 'match' });
});

// The number of heads as a reading: a 3-head layer saved without any array that shows h, checked
// with h = 4 set (the page's default): every other h is tried on the rows, and the one under which
// every saved result matches is used, said. With an array of another h's layout, none is.
test('h as a reading: the one h under which every saved result matches is used, said', () => {
  const file = load('heads-unset');
  const r = checkNotebook(mha, file, { heads: 4 });
  assert.equal(r.sizes.heads, 3);
  assertMatches(r, ['concat', 'Y', 'loss'], 'heads-unset at h = 4');
  assert.equal(
    r.notes[0],
    "checked with h = 3 heads: with h = 4 (as set) your arrays differ from the course's layer, " +
      'with 3 every one of them matches',
  );
  // a mistake in the file (Y halved): no h explains every row, but with h = 4 none of those
  // depending on h match and with 3 concat and loss do: h = 3 is used, said, Y's factor named
  const half = { ...file, Y: { ...file.Y, data: file.Y.data.map((x) => x / 2) } };
  const halved = checkNotebook(mha, half, { heads: 4 });
  assert.equal(halved.sizes.heads, 3);
  assert.equal(
    halved.notes[0],
    'checked with h = 3 heads: with h = 4 (as set) none of your arrays that depend on the heads ' +
      "match the course's layer, with h = 3, 2 of them do (no other h does as well)",
  );
  const Y = halved.rows.find((row) => row.name === 'Y');
  assert.deepEqual([Y.status, Y.diagnosis.id], ['differs', 'factor']);
  // the right h set: nothing tried, no note
  const three = checkNotebook(mha, file, { heads: 3 });
  assert.ok(!three.notes.some((n) => n.startsWith('checked with h =')));
});

// ------------------------------------------------------------------------------------------------
// 7. module and attribute names of public NumPy layers (readings.py's names-* runs)

test('module names, containers, positions: each file read as the course layer, all match', () => {
  const runs = manifest.filter((r) => r.name.startsWith('names-'));
  assert.equal(runs.length, 34);
  const said = {
    'names-stacked-lists': [
      /w_q_list is a stack of 2 per-head \(8, 4\) matrices/,
      /mha_vals read as Y/,
    ],
    'names-head-axis-projections': [/q_proj\.weight is a stack of 8 per-head \(2, 4\) matrices/],
    'names-linear-w': [/Q_linear\.w read as Wq/, /Q_linear\.grad_w read as dWq/, /O read as Y/],
    'names-grad-prefix-paths': [/attn\/W_q\/w read as Wq/, /grad\.attn\.W_q\.weight read as dWq/],
    'names-np-suffix': [/x_np read as X/, /result_np read as Y/],
    'names-pred-true-grad-in': [/y_pred read as Y/, /y_true read as target/, /grad_in read as dX/],
    'names-camel-case': [
      /QueryWeights read as Wq/,
      /outputWeight read as Wo/,
      /QueryWeightDerivative read as dWq/,
      /inputEmbedding read as X/,
      /inputDerivative read as dX/,
    ],
    'names-param-grad': [
      /param_0 … param_3 \(saved without names\) read by their order as Wq, Wk, Wv, Wo, and grad_0 … grad_3 as dWq, dWk, dWv, dWo/,
    ],
    'names-two-outputs': [
      /attention_output and output both name Y: output was used, under which more of your arrays match \(\d+, against \d+ with attention_output\); attention_output left out/,
    ],
    'names-self-attention-args': [
      /query, key, value are one array \(self-attention's input, passed as all three\): read as X/,
      /W_Q read as Wq/,
    ],
    'names-input-affix-context': [
      /input_q, input_k, input_v are one array \(self-attention's input, passed as all three\): read as X/,
      /context_combined read as concat/,
    ],
    'names-lone-w': [
      /W read as Wo \(your layer's one \(8, 8\) matrix besides Wq, Wk and Wv\), dW as dWo/,
    ],
    'names-fused-interleaved': [
      /in_proj_weight: its blocks read as q, v, k interleaved with the heads \(ordered by entry, then block, then head\), under which 2 of your arrays match \(against 0 read as q, k, v blocks\)/,
    ],
    'names-state-dict-heads': [
      /heads\.0\.query\.weight … heads\.1\.query\.weight are 2 per-head \(8, 4\) matrices: joined into one \(8, 8\) Wq/,
      /grad\.heads\.0\.key\.weight … grad\.heads\.1\.key\.weight are 2 per-head \(8, 4\) matrices: joined into one \(8, 8\) dWk/,
      /heads\.0\.value\.bias … heads\.1\.value\.bias are 2 per-head biases \(4,\): joined into one \(8,\) bv/,
      /output_projection\.weight read as Wo/,
      /grad\.output_projection\.weight read as dWo/,
      /probs read as att/,
    ],
    'names-checkpoint-h': [
      /h \(2, 4, 8\) read as X: your file's one array of C = 8 columns \(from its weights\) that no name reads/,
      /h0\/attn\/c_attn\/w \(8, 24\) holds Wq, Wk, Wv side by side/,
    ],
    'names-attn-output': [
      /attn \(2, 4, 8\) read as Y: shaped like X, as the layer's output is, where att is \(B, h, T, T\)/,
      /attn\.grad \(2, 4, 8\) read as dY/,
      /attn_pattern read as att/,
      /query_vectors read as Q/,
    ],
    'names-vit-heads': [
      /heads\.0\.query\.weights … heads\.1\.query\.weights are 2 per-head \(4, 8\) matrices: joined into one \(8, 8\) Wq, head i in rows/,
      /linear\.weights read as Wo \(your layer's one \(8, 8\) matrix besides Wq, Wk and Wv\), linear\.dE_dW as dWo/,
      /your linear\.bias is all zeros/,
      /your weights are stored \(out, in\) and used as X @ W\.T/,
      /tokens read as X/,
    ],
    'names-unnamed-wo': [
      /merge_dense_kernel read as Wo \(your layer's one \(8, 8\) matrix besides Wq, Wk and Wv\), grad_merge_dense_kernel as dWo/,
    ],
    'names-sequence-first': [
      /X is \(4, 2, 8\) while your other arrays are \(B, T, …\) with B = 2, T = 4: X is saved sequence first, \(T, B, C\); read as X\.swapaxes\(0, 1\), \(2, 4, 8\); dY, Y, dX too, laid out as X is/,
    ],
    'names-tokens-first': [
      /scores \(4, 2, 4\) is saved tokens first, \(B, T, h, T\): transposed to \(1, 2, 4, 4\)/,
      /att \(4, 2, 4\) is saved tokens first/,
    ],
    'names-value-paths': [
      /query\.weight\.params read as Wq/,
      /out_proj\.w_g read as dWo/,
      /x_g read as dX/,
      /gWq read as dWq/,
      /S read as scores/,
      /A read as att/,
    ],
    'names-packed': [
      /your lengths \[4, 4\] show X holds 2 sequences of 4 tokens one after another: read as \(B, T, C\) = \(2, 4, 8\), with Y/,
    ],
    'names-positional-table': [
      /x read as x \+ pe: your layer adds pe \(4, 8\), a positional table, to its input, under which \d+ of your arrays match \(against 0 with x alone\)/,
    ],
    'names-init-twins': [
      /attn\.q_proj\.weight_init, attn\.k_proj\.weight_init, attn\.v_proj\.weight_init, attn\.o_proj\.weight_init read as your layer's parameters before training, laid out as the trained ones are \(Wq_init, Wk_init, Wv_init, Wo_init\)/,
      /Wq_init read as the initial weights of the training run, and your Wq as the weights after it/,
    ],
    'names-scaled-scores': [
      /scaled_scores and scores both name scores: scaled_scores was read, the reading that explains more of your arrays \(scores, not compared, may be a step before it\)/,
    ],
    'names-normed-input': [
      /Xnorm read as X, the input your attention computes from: your X does not give your other arrays \(it is the input before Xnorm\)/,
    ],
    'names-weights-stacks': [
      /weights_q is a stack of 2 per-head \(8, 4\) matrices: joined into one \(8, 8\) Wq/,
      /weights_o read as Wo/,
    ],
    'names-swapped-maps': [
      /attn read as scores and scores as att, the reading that explains more of your arrays/,
    ],
    'names-proj-suffix': [
      /h_in read as X/,
      /Wq_proj read as Wq/,
      /Wout_proj read as Wo/,
      /dWout_proj read as dWo/,
      /backwards_gradient read as dY/,
    ],
    'names-fused-head-axis': [
      /in_proj\.weight \(8, 6, 4\) holds Wq, Wk, Wv side by side, used as X @ W, each head's 4 columns in turn/,
      /in_proj\.grads\.weight \(8, 6, 4\) holds dWq, dWk, dWv side by side/,
      /out_proj\.grads\.weight is a stack of 2 per-head \(4, 8\) matrices: joined into one \(8, 8\) dWo/,
      /grads_out read as dY/,
    ],
    'names-module-grads': [
      /W_q\.grad_weights read as dWq/,
      /W_o\.grad_weights read as dWo/,
      /dropout_output read as att/,
      /dX \(3, 2, 4, 8\) holds three arrays of X's shape, the paths of dX/,
    ],
    'names-init-prefix': [
      /initial-WQ-0, initial-WQ-1, .*, initial-W read as your layer's parameters before training/,
      /num_iter read as steps/,
    ],
    'names-before-after': [
      /a run's start and end read: attn\.q_proj\.weight_before and attn\.q_proj\.weight_after as attn\.q_proj\.weight_init and attn\.q_proj\.weight/,
    ],
    'names-positional': [
      /arr_0 … arr_3 \(saved without names\) read by their order as Wq, Wk, Wv, Wo, and arr_4 … arr_7 as dWq, dWk, dWv, dWo/,
    ],
  };
  for (const run of runs) {
    const arrays = load(run.name);
    const adapted = adaptLayout(arrays, { heads: run.heads });
    // (a key names.js reads, w_o or Wq, is left under its own name)
    const { found } = matchNames(adapted.arrays);
    const byCourse = Object.fromEntries(Object.entries(found).map(([k, v]) => [k, v.array]));
    // (a fused projection's order of blocks is a reading of the whole check: its rows decide;
    // so is a pair of a run's start and end, read before the layout)
    const whole = ['names-fused-interleaved', 'names-before-after'];
    if (!whole.includes(run.name)) assertCourseWeights({ arrays: byCourse }, run);
    const report = checkNotebook(mha, arrays, { heads: run.heads });
    const results = report.rows.filter((r) => r.status !== 'missing').map((r) => r.name);
    assert.ok(results.includes('Y'), `${run.name}: Y compared`);
    assertMatches(report, results, run.name);
    const notes = [...adapted.notes, ...report.notes].join('\n');
    for (const re of said[run.name]) assert.match(notes, re, run.name);
    // (the run replayed from the initial twins: its losses and weights after it compared)
    if (['names-init-twins', 'names-init-prefix', 'names-before-after'].includes(run.name)) {
      for (const n of ['losses', 'Wq_after', 'Wo_after']) assert.ok(results.includes(n), n);
    }
  }
});
