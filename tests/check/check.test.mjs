// checkNotebook (web/check/check.js) on students' notebooks written in NumPy
// (tests/reference/notebook_students.py): correct ones match everywhere they have data, each
// known mistake is blamed on the first differing result with its id and everything after it
// "follows from" it, a second mistake further down is found too; tolerances by precision (float64,
// float32, printed text), causal scores, wrong shapes, bad input; and the JS pipeline of
// mistakes.js against the engine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadMHA, maxRelErr, PYTHON, referenceDir, repoRoot } from '../helpers.mjs';
import { mistakesTable } from '../tools/mistakes-table.mjs';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  approvedSentences,
  assertSentences,
  loadManifest,
  loadSidecar,
  loadStudent,
  studentsDir,
} from './students.mjs';
import { parseNumpyText } from '../../web/io/text.js';
import { checkNotebook, engineSteps } from '../../web/check/check.js';
import { MISTAKES, recordOf } from '../../web/check/catalogue.js';
import { Pipeline, simulate } from '../../web/check/pipeline.js';
import { editVariant, namedEdit } from '../../web/check/edits.js';
import { STEPS, tensorPlan } from '../../web/check/steps.js';
import { compareArrays, toleranceFor } from '../../web/check/compare.js';
import {
  acceptedShapes,
  BACKWARD_NAMES,
  FORWARD_NAMES,
  HEAD_COLUMN_NAMES,
  INPUT_NAMES,
  courseName,
  matchNames,
  resultNames,
  savezLine,
  shapeText,
} from '../../web/check/names.js';
import * as ops from '../../web/check/ops.js';

const mha = await loadMHA();
const manifest = loadManifest();
const byName = Object.fromEntries(manifest.map((r) => [r.name, r]));

const check = (run, arrays = loadStudent(run.name), opts = {}) =>
  checkNotebook(mha, arrays, { heads: run.heads, causal: run.causal, ...opts });
const rowOf = (report, name) => report.rows.find((r) => r.name === name);
const without = (arrays, name) => {
  const rest = { ...arrays };
  delete rest[name];
  return rest;
};
const copy = (a, data = a.data) => ({ ...a, data: Float64Array.from(data), shape: [...a.shape] });

// ------------------------------------------------------------------------------------------------
// the students' notebooks

test('the .npz files read by readNpz hold the arrays of their JSON sidecars, bit for bit', () => {
  for (const { name } of manifest) {
    const npz = loadStudent(name);
    const side = loadSidecar(name);
    assert.deepEqual(Object.keys(npz), Object.keys(side), name);
    for (const [key, a] of Object.entries(side)) {
      assert.deepEqual(npz[key].shape, a.shape, `${name} ${key}`);
      assert.equal(npz[key].dtype, a.dtype, `${name} ${key}`);
      // (NaN compared as NaN: NumPy's and JS's NaN payloads may differ)
      assert.ok(
        npz[key].data.every((x, i) => Object.is(x, a.data[i])),
        `${name} ${key}`,
      );
    }
  }
});

test('the manifest has correct runs, and a run for every mistake id of MISTAKES', () => {
  assert.ok(manifest.filter((r) => r.blame.length === 0).length >= 6);
  const blamed = new Set(manifest.flatMap((r) => r.blame.map(([, id]) => id)));
  // the training step's diagnoses: the lesson-5 notebooks of notebook_training.py
  const training = JSON.parse(
    readFileSync(join(referenceDir(), 'notebook-training', 'manifest.json'), 'utf8'),
  );
  for (const run of training) {
    for (const [, id] of Object.values(run.rows)) if (id) blamed.add(id);
  }
  for (const { id, kind } of MISTAKES) {
    // the edits of the program and the loop: tests/check/edit-cases.test.mjs makes each
    if (id === 'follows-from' || /^edit of the /.test(kind)) continue;
    assert.ok(blamed.has(id), `no notebook makes the mistake ${id}`);
  }
  for (const id of blamed) {
    assert.ok(
      MISTAKES.some((m) => m.id === id),
      `${id} not in MISTAKES`,
    );
  }
});

for (const run of manifest.filter((r) => r.blame.length === 0)) {
  test(`correct notebook ${run.name}: match wherever it has data, missing elsewhere`, () => {
    const report = check(run);
    assert.deepEqual(
      report.rows.map((r) => r.name),
      resultNames(run.loss),
    );
    assert.equal(report.loss, run.loss);
    assert.equal(report.causal, run.causal);
    assert.deepEqual(report.ignored, []);
    for (const row of report.rows) {
      const saved = run.saved.includes(row.name) && (row.name !== 'dY' || run.loss === 'mse');
      assert.equal(row.status, saved ? 'match' : 'missing', `${row.name}: ${row.tolerance.text}`);
      assert.equal(row.diagnosis, null);
      if (saved) {
        assert.ok(row.maxAbs <= row.tolerance.abs, row.name);
        assert.equal(row.first, null);
        assert.ok(row.compared > 0);
        assert.equal(row.expected.length, row.yours.length);
        const label = run.dtype === 'f4' ? 'float32' : 'float64';
        assert.ok(row.tolerance.text.startsWith(label), row.tolerance.text);
      }
    }
  });
}

/** Every row of a report with a diagnosis, as the sentences file writes it. */
const sentencesOf = (report) =>
  Object.fromEntries(
    report.rows
      .filter((r) => r.diagnosis)
      .map((r) => [r.name, `${r.diagnosis.id}: ${r.diagnosis.message}`]),
  );

test('tests/sentences/students.json has exactly the mistake notebooks of the manifest', () => {
  const blamed = manifest.filter((r) => r.blame.length).map((r) => r.name);
  const approved = Object.keys(approvedSentences('students'));
  if (approved.length) assert.deepEqual(approved.sort(), blamed.sort());
});

const table = [];

for (const run of manifest.filter((r) => r.blame.length > 0)) {
  test(`mistake ${run.name}: blamed on ${run.blame.map((b) => b.join(' ')).join(', ')}`, () => {
    const report = check(run);
    const differing = report.rows.filter((r) => r.status === 'differs');
    assert.equal(differing[0]?.name, run.blame[0][0], 'the first differing result');
    for (const row of report.rows) {
      assert.notEqual(row.status, 'shape', row.name);
      const blame = run.blame.find(([name]) => name === row.name);
      if (row.status !== 'differs') {
        assert.equal(blame, undefined, `${row.name} should differ`);
        assert.equal(row.diagnosis, null);
        continue;
      }
      assert.ok(row.first, `${row.name}: first differing entry`);
      const id = blame ? blame[1] : 'follows-from';
      assert.equal(row.diagnosis.id, id, `${row.name}: ${row.diagnosis.message}`);
      if (blame) table.push(`${run.name}: ${row.name} -> ${id}: ${row.diagnosis.message}`);
      if (id === 'follows-from') assert.match(row.diagnosis.message, /^follows from \S/);
    }
    // every diagnosis, "follows from" too, word for word as approved
    assertSentences('students', run.name, sentencesOf(report));
  });
}

test('the diagnoses of the mistake notebooks (id -> result blamed -> message)', () => {
  assert.ok(table.length >= manifest.filter((r) => r.blame.length).length);
  console.log(`\n${table.join('\n')}`);
});

test('two independent mistakes: the later one is found by the local check of its step', () => {
  const report = check(byName['two-mistakes']);
  assert.equal(rowOf(report, 'att').diagnosis.id, 'softmax-wrong-axis');
  assert.equal(rowOf(report, 'dK').diagnosis.id, 'dk-transposed');
  // between them: each recomputed from the student's own arrays
  assert.match(
    rowOf(report, 'dscores').diagnosis.message,
    /^follows from att: dscores, recomputed from your own att, datt/,
  );
  // dX comes from both: the later difference is named first
  assert.match(rowOf(report, 'dX').diagnosis.message, /^follows from dK and att/);
});

test('a mistake upstream of the first saved result is found there (only Y and dX saved)', () => {
  const report = check(byName['weights-transposed-only-Y']);
  const Y = rowOf(report, 'Y');
  assert.equal(Y.diagnosis.id, 'weights-transposed');
  assert.match(Y.diagnosis.message, /X @ Wq\.T/);
  assert.match(Y.diagnosis.message, /Q is not in your file/);
  assert.equal(rowOf(report, 'Q').status, 'missing');
  assert.match(rowOf(report, 'dX').diagnosis.message, /^follows from Y/);
});

test('mse-grad-factor names the factor: Y.size, or the missing 2 (dY not saved)', () => {
  const sum = rowOf(check(byName['mse-grad-factor']), 'dY');
  assert.match(
    sum.diagnosis.message,
    /^Your dY is 120 × the course's \(k = Y\.size\): no division by Y\.size/,
  );
  const half = rowOf(check(byName['mse-grad-factor-hidden']), 'dWo');
  assert.match(
    half.diagnosis.message,
    /0\.5 × the course's \(k = 1\/2\): the factor 2 of the square is missing/,
  );
});

test('a cause is named only if it reproduces the array: a near miss gets what was measured', () => {
  const run = byName['softmax-wrong-axis'];
  const arrays = loadStudent(run.name);
  const att = copy(arrays.att);
  att.data[7] += 1e-6; // the wrong-axis softmax plus a small change: no candidate reproduces it
  const { diagnosis } = rowOf(check(run, { ...arrays, att }), 'att');
  // no cause: the broken invariant, measured on the student's rows
  assert.equal(diagnosis.id, 'softmax-not-normalised');
  assert.doesNotMatch(diagnosis.message, /axis=-2/);
  const rows = 2 * 3 * 5;
  let bad = 0;
  for (let r = 0; r < rows; r++) {
    const sum = att.data.slice(r * 5, r * 5 + 5).reduce((a, b) => a + b, 0);
    if (Math.abs(sum - 1) > 1e-8) bad++;
  }
  assert.ok(bad > 0);
  assert.match(
    diagnosis.message,
    new RegExp(`^Your att breaks .*: ${bad} of ${rows} rows do not sum to 1`),
  );
  assert.match(diagnosis.message, /att = softmax\(scores, axis=-1\)/);
});

// ------------------------------------------------------------------------------------------------
// tolerances

test('causal scores: -inf, -1e9 or the unmasked score above the diagonal all match', () => {
  const run = byName['correct-course-causal-subset'];
  const arrays = loadStudent(run.name);
  const T = arrays.scores.shape[3];
  const above = (i) => i % T > Math.floor(i / T) % T;
  for (const fill of [-Infinity, -1e9, null]) {
    const scores = copy(arrays.scores);
    if (fill !== null) scores.data.forEach((_, i) => above(i) && (scores.data[i] = fill));
    const row = rowOf(check(run, { ...arrays, scores }), 'scores');
    assert.equal(row.status, 'match', String(fill));
    const count = (2 * 4 * T * (T - 1)) / 2;
    assert.equal(row.compared, scores.data.length - count);
    assert.match(row.note, new RegExp(`the ${count} entries above the diagonal are masked`));
  }
  // a non-finite entry on or below the diagonal is a difference, and `first` points at it
  const scores = copy(arrays.scores);
  scores.data[T + 1] = NaN; // [0, 0, 1, 1]
  const row = rowOf(check(run, { ...arrays, scores }), 'scores');
  assert.equal(row.status, 'differs');
  assert.deepEqual(row.first.index, [0, 0, 1, 1]);
  assert.ok(Number.isNaN(row.first.yours));
  assert.equal(row.maxAbs, Infinity);
});

test('non-causal scores masked by the student differ, first at the first masked entry', () => {
  const report = check(byName['causal-mismatch-scores']);
  const row = rowOf(report, 'scores');
  assert.deepEqual(row.first.index, [0, 0, 0, 1]);
  assert.equal(row.first.yours, -Infinity);
  assert.equal(row.note, null);
});

test("float64 results computed from float32 inputs: float32's tolerance, said", () => {
  const run = byName['correct-f32-dot-merged'];
  const arrays = loadStudent(run.name);
  assert.equal(arrays.X.dtype, '<f4');
  // the student's float32 results cast to float64 before saving (or computed from float32 X)
  const up = Object.fromEntries(
    Object.entries(arrays).map(([k, a]) => [
      k,
      ['X', 'Wq', 'Wk', 'Wv', 'Wo'].includes(k) ? a : { ...a, dtype: '<f8' },
    ]),
  );
  const Y = rowOf(check(run, up), 'Y');
  assert.equal(Y.status, 'match');
  assert.ok(Y.maxAbs > 1e-9, "float32's rounding, beyond float64's tolerance");
  assert.match(Y.tolerance.text, /^float32: 1e-5/);
  assert.match(Y.note, /yours is float64, computed from X, Wq, Wk, Wv, Wo saved as float32/);
  // the inputs float64 too: float64's tolerance, and the rounding differs
  const all64 = Object.fromEntries(Object.entries(up).map(([k, a]) => [k, { ...a, dtype: '<f8' }]));
  assert.equal(rowOf(check(run, all64), 'Y').status, 'differs');
});

test('float32 results: 1e-5 × max|expected|; the same change in float64 differs', () => {
  const run = byName['correct-f32-dot-merged'];
  const arrays = loadStudent(run.name);
  const Y = rowOf(check(run, arrays), 'Y');
  assert.match(Y.tolerance.text, /^float32: 1e-5 × max\|expected\| = /);
  assert.ok(Y.maxAbs > 1e-9, 'float32 rounding is visible'); // yet within tolerance
  const scale = Y.tolerance.abs / 1e-5;
  for (const [delta, status] of [
    [0.5e-5, 'match'],
    [2e-5, 'differs'],
  ]) {
    const y = copy(arrays.Y);
    y.data[3] += delta * scale;
    assert.equal(rowOf(check(run, { ...arrays, Y: y }), 'Y').status, status, String(delta));
  }
  const f64 = byName['correct-f64-mse'];
  const a64 = loadStudent(f64.name);
  const y = copy(a64.Y);
  y.data[3] += 1e-9 * Math.max(...y.data.map(Math.abs));
  const row = rowOf(check(f64, { ...a64, Y: y }), 'Y');
  assert.equal(row.status, 'differs');
  assert.match(row.tolerance.text, /^float64: 1e-10 × max\|expected\| = /);
  assert.deepEqual(row.first.index, [0, 0, 3]);
  assert.equal(row.diagnosis.id, 'step-differs');
});

test('printed text: each entry within its printed resolution (+ 1e-10 × scale)', () => {
  const run = byName['correct-f64-mse'];
  const arrays = loadStudent(run.name);
  const fixed = (digits, claimed) => ({
    data: arrays.att.data.map((x) => Number(x.toFixed(digits))),
    shape: arrays.att.shape,
    dtype: 'text',
    resolution: new Float64Array(arrays.att.data.length).fill(0.5 * 10 ** -claimed),
  });
  const ok = rowOf(check(run, { ...arrays, att: fixed(6, 6) }), 'att');
  assert.equal(ok.status, 'match');
  assert.match(ok.tolerance.text, /^printed text: half a unit of each entry's last printed digit/);
  assert.ok(ok.maxAbs > 1e-8 && ok.maxAbs <= 0.5e-6 + 1e-9);
  // claiming more digits than were printed: a difference
  assert.equal(rowOf(check(run, { ...arrays, att: fixed(3, 6) }), 'att').status, 'differs');
  // a scalar printed with 4 decimals
  const loss = { data: Float64Array.of(Number(arrays.loss.data[0].toFixed(4))), shape: [] };
  const text = { ...loss, dtype: 'text', resolution: Float64Array.of(0.5e-4) };
  assert.equal(rowOf(check(run, { ...arrays, loss: text }), 'loss').status, 'match');
  assert.equal(rowOf(check(run, { ...arrays, loss }), 'loss').status, 'differs');
  assert.match(rowOf(check(run, arrays), 'loss').tolerance.text, /1e-10 × \|expected\|/);
});

// An array as NumPy prints it with 8 significant digits (scientific notation), as parseNumpyText
// reads it: each entry's resolution is half a unit of its 8th digit.
function printed(a) {
  const data = a.data.map((x) => Number(x.toExponential(7)));
  const resolution = data.map((x) =>
    x === 0 ? 0 : 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(x))) - 7),
  );
  return { data, shape: a.shape, dtype: 'text', resolution };
}

test('printed notebooks: the diagnoses from 8 printed digits (results, then inputs too)', () => {
  for (const name of ['correct-f64-mse', 'softmax-wrong-axis', 'dk-transposed', 'two-mistakes']) {
    const run = byName[name];
    const arrays = loadStudent(name);
    const inputs = ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target'];
    const want = check(run, arrays).rows.map((r) => [r.name, r.status, r.diagnosis?.id]);
    for (const all of [false, true]) {
      const text = Object.fromEntries(
        Object.entries(arrays).map(([k, a]) => [k, all || !inputs.includes(k) ? printed(a) : a]),
      );
      const report = check(run, text);
      const got = report.rows.map((r) => [r.name, r.status, r.diagnosis?.id]);
      assert.deepEqual(got, want, `${name}, inputs printed too: ${all}`);
      const Y = rowOf(report, 'Y');
      assert.match(Y.tolerance.text, /^printed text: half a unit/);
      if (all) assert.match(Y.tolerance.text, /× max\|expected\| for your printed inputs$/);
    }
  }
});

test('compare: maxRel, normRel, an all-zero expected array (absolute floor 1e-300)', () => {
  const e = Float64Array.of(1, -2, 0, 4);
  const y = Float64Array.of(1, -2.5, 0, 3);
  const tol = toleranceFor(e, {});
  assert.equal(tol.abs, 4e-10);
  const c = compareArrays(y, e, tol);
  assert.equal(c.maxAbs, 1);
  assert.equal(c.maxRel, 0.25); // |3 - 4| / 4 (0 vs 0 is skipped)
  const norm = Math.hypot(0.5, 1) / (Math.hypot(1, 2.5, 3) + Math.hypot(1, 2, 4));
  assert.ok(Math.abs(c.normRel - norm) < 1e-15);
  assert.equal(c.firstIndex, 1);
  const zero = new Float64Array(3);
  const zt = toleranceFor(zero, { dtype: '<f8' });
  assert.equal(zt.abs, 1e-300);
  assert.match(zt.text, /all zeros: absolute floor 1e-300/);
  assert.equal(compareArrays(zero, zero, zt).normRel, 0);
  assert.equal(compareArrays(Float64Array.of(0, 1e-200, 0), zero, zt).pass, false);
  assert.match(toleranceFor(Float64Array.of(0), { scalar: true }).text, /expected is 0/);
  assert.match(toleranceFor(e, { dtype: '<f2' }).text, /^float16: 1e-3 × max\|expected\|/);
  assert.match(toleranceFor(e, { dtype: '>f4' }).text, /^float32: 1e-5/);
  assert.match(toleranceFor(e, { dtype: '<i8' }).text, /^<i8 \(as float64\): 1e-10/);
});

// ------------------------------------------------------------------------------------------------
// shapes and names

test('wrong shapes are a row with status shape, never a throw', () => {
  const run = byName['correct-f64-mse'];
  const arrays = loadStudent(run.name);
  const [B, h, T, hs] = arrays.Q.shape;
  const bad = {
    ...arrays,
    Q: { ...arrays.Q, shape: [B, h * T, hs] }, // heads and tokens in one axis
    att: {
      ...arrays.att,
      data: arrays.att.data.slice(0, B * h * T * (T - 1)),
      shape: [B, h, T, T - 1],
    },
    loss: { data: Float64Array.of(1, 2), shape: [2] },
  };
  const report = check(run, bad);
  const Q = rowOf(report, 'Q');
  assert.equal(Q.status, 'shape');
  assert.deepEqual(Q.shape, [B, h * T, hs]);
  assert.deepEqual(Q.expectedShape, [B, h, T, hs]);
  assert.equal(
    Q.note,
    `expected (${B}, ${h}, ${T}, ${hs}) or (${B}, ${T}, ${h * hs}) or (${B}, ${T}, ${h}, ${hs}) ` +
      `or (${B * T}, ${h * hs})`,
  );
  assert.equal(rowOf(report, 'att').status, 'shape');
  assert.equal(rowOf(report, 'loss').status, 'shape');
  assert.equal(rowOf(report, 'loss').note, 'expected () or (1,)');
  // the rest is still checked, from the arrays that have the right shape
  assert.equal(rowOf(report, 'scores').status, 'match');
  assert.equal(rowOf(report, 'dX').status, 'match');
});

test('X (T, C): B = 1, results with or without the leading 1', () => {
  const run = byName['correct-x2d-dot'];
  const arrays = loadStudent(run.name);
  const report = check(run, arrays);
  assert.deepEqual(report.sizes, { B: 1, T: 5, C: 12, heads: 3, hs: 4 });
  assert.ok(report.notes.includes('X is (T, C): B = 1 assumed'));
  const Q = { ...arrays.Q, shape: [1, ...arrays.Q.shape] };
  assert.equal(rowOf(check(run, { ...arrays, Q }), 'Q').status, 'match');
  assert.deepEqual(
    acceptedShapes('Q', { B: 1, T: 5, C: 12, heads: 3 }).map((f) => f.shape),
    [
      [1, 3, 5, 4],
      [3, 5, 4],
      [1, 5, 12],
      [5, 12],
      [1, 5, 3, 4],
      [5, 3, 4],
    ],
  );
  // Q saved as split_heads reshapes it, before the transpose: (B, T, h, hs), the merged data
  const q = rowOf(check(byName['correct-f64-mse']), 'Q');
  const Qm = loadStudent('correct-f64-mse');
  const [B, h, T, hs] = Qm.Q.shape;
  const before = Float64Array.from({ length: Qm.Q.data.length }, (_, i) => {
    // (b, t, head, e) of the reshape is (b, head, t, e) of the split array
    const e = i % hs;
    const head = Math.floor(i / hs) % h;
    const t = Math.floor(i / (hs * h)) % T;
    const b = Math.floor(i / (hs * h * T));
    return Qm.Q.data[((b * h + head) * T + t) * hs + e];
  });
  const reshaped = { ...Qm.Q, data: before, shape: [B, T, h, hs] };
  const row = rowOf(check(byName['correct-f64-mse'], { ...Qm, Q: reshaped }), 'Q');
  assert.equal(q.status, 'match');
  assert.equal(row.status, 'match');
  // Y and target as the backward reshapes them, (B·T, C): the same data, so the same rows
  const flat = (a) => ({ ...a, shape: [a.shape[0] * a.shape[1], a.shape[2]] });
  const asRows = check(byName['correct-f64-mse'], {
    ...Qm,
    Y: flat(Qm.Y),
    target: flat(Qm.target),
  });
  assert.ok(asRows.rows.every((r) => r.status === 'match' || r.status === 'missing'));
  assert.equal(rowOf(asRows, 'Y').status, 'match');
});

test('names: case, underscores and aliases; unknown names ignored; duplicates noted', () => {
  const run = byName['correct-f64-mse'];
  const a = loadStudent(run.name);
  const arrays = {
    x: a.X,
    W_q: a.Wq,
    WK: a.Wk,
    wv: a.Wv,
    Wo: a.Wo,
    targets: a.target,
    attn: a.att,
    att: a.att,
    out: a.Y,
    head_out: a.headout,
    foo: a.Y,
  };
  const report = check(run, arrays);
  assert.equal(rowOf(report, 'att').status, 'match');
  assert.equal(rowOf(report, 'Y').status, 'match');
  assert.equal(rowOf(report, 'headout').status, 'match');
  assert.deepEqual(report.ignored, ['attn', 'foo']);
  assert.ok(report.notes.includes('attn and att both name att: att was used'));
  assert.ok(report.notes.includes('out read as Y'));
  assert.deepEqual(report.inputs.Wq, { shape: [12, 12], key: 'W_q' });
  assert.equal(courseName('Attention'), 'att');
  assert.equal(courseName('d_X'), 'dX');
  assert.equal(courseName('dout'), 'dY');
  assert.equal(courseName('heads'), null);
  assert.equal(courseName('dQm'), 'dQ');
  // whose (B, T, C) form holds the heads side by side: the split-or-merged results, concat, dconcat
  assert.deepEqual(HEAD_COLUMN_NAMES, [
    ...['Q', 'K', 'V', 'headout', 'dheadout', 'dV', 'dQ', 'dK', 'concat', 'dconcat'],
  ]);
  const sizes = { B: 2, T: 5, C: 12, heads: 3 };
  const dQm = { data: ops.mergeHeads(a.dQ.data, sizes), shape: [2, 5, 12] };
  const merged = check(run, { ...without(a, 'dQ'), dQm });
  assert.equal(rowOf(merged, 'dQ').status, 'match');
  assert.deepEqual(rowOf(merged, 'dQ').expectedShape, [2, 5, 12]);
  assert.deepEqual(matchNames({ Q: a.Q, q: a.Q }).ignored, ['q']);
  assert.deepEqual(matchNames({ q: a.Q, Q: a.Q }).ignored, ['q']); // lesson 2's q = X @ Wq
  assert.equal(savezLine(['X', 'Wq', 'Y']), "np.savez('mha_check.npz', X=X, Wq=Wq, Y=Y)");
  assert.match(
    savezLine(),
    /^np\.savez\('mha_check\.npz', X=X, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo, dY=dY, target=target, Q=Q, .* dX=dX\)$/,
  );
});

test('losses: dY given with target is a result; no loss: forward rows only', () => {
  const run = byName['mse-grad-factor'];
  const report = check(run);
  assert.equal(report.loss, 'mse');
  assert.ok(report.notes.some((n) => n.startsWith('dY is checked as a result')));
  assert.ok('target' in report.inputs && !('dY' in report.inputs));
  const arrays = loadStudent('correct-f64-mse');
  delete arrays.target;
  delete arrays.dY;
  const fwd = check(byName['correct-f64-mse'], arrays);
  assert.equal(fwd.loss, null);
  assert.deepEqual(
    fwd.rows.map((r) => r.name),
    resultNames(null),
  );
  assert.ok(fwd.notes.some((n) => /^dWo, dconcat, .* not checked/.test(n)));
});

// ------------------------------------------------------------------------------------------------
// bad input

test('bad input throws one clear Error', () => {
  const run = byName['correct-f64-mse'];
  const a = loadStudent(run.name);
  const C = 12;
  const withX = (X) => ({ ...a, X });
  const nanAt = (arr, i, v) => {
    const b = copy(arr);
    b.data[i] = v;
    return b;
  };
  // X or a weight missing: not an error (the report says what is missing: below)
  for (const name of ['X', 'Wq']) {
    const r = checkNotebook(mha, without(a, name), { heads: 3 });
    assert.deepEqual([r.rows, r.missing], [[], [name]]);
    assert.match(r.notes.at(-1), new RegExp(`^Not checked: .*missing: ${name} `));
  }
  // matrices none of whose names is read: a layer in words of its own, said as not checked
  const unread = checkNotebook(mha, { foo: a.X, bar: a.Wq }, { heads: 3 });
  assert.match(unread.notes.at(-1), /^Not checked: nothing of your layer was read; missing: X/);
  // an array read as dY by another name, of another shape: left out, said; an exact dY throws
  const odd = { data: new Float64Array(a.X.data.length), shape: [2, 3, 5, 4] };
  const grad = checkNotebook(
    mha,
    { ...without(without(a, 'dY'), 'target'), 'out.grad': odd },
    { heads: 3 },
  );
  assert.ok(grad.notes.includes('out.grad (2, 3, 5, 4) not read as dY: dY is shaped like X'));
  // two names of Y: the course's own name in another case (y) is used over another word for
  // it (o, here a (B, h, T, hs) array, none of Y's shapes: a reading that leaves it out)
  assert.ok(a.Y, 'the notebook saves Y');
  const yy = {
    ...without(a, 'Y'),
    y: copy(
      a.Y,
      a.Y.data.map((x) => x + 1),
    ),
    o: odd,
  };
  const two = checkNotebook(mha, yy, { heads: 3 });
  assert.ok(
    two.notes.some((n) => /^y and o both name Y: y was used/.test(n)),
    two.notes.join('\n'),
  );
  assert.equal(two.rows.find((r) => r.name === 'Y').status, 'differs');
  // nothing of a layer at all: the one error says what to save
  assert.throws(
    () => checkNotebook(mha, { foo: a.X }, { heads: 3 }),
    /X is missing: save X and the four weights/,
  );
  const cases = [
    [null, /arrays must be an object/],
    [{ ...a, X: undefined }, /X is not an array/],
    [
      withX({ data: a.X.data, shape: [a.X.data.length] }),
      /X has shape \(120,\); expected \(B, T, C\) or \(T, C\)/,
    ],
    [
      { ...a, Wk: { data: new Float64Array(C * 6), shape: [C, 6] } },
      /Wk has shape \(12, 6\); expected \(C, C\) = \(12, 12\)/,
    ],
    [withX(nanAt(a.X, 5, NaN)), /X has a non-finite entry \(NaN\) at flat index 5/],
    [{ ...a, Wq: nanAt(a.Wq, 0, Infinity) }, /Wq has a non-finite entry \(Infinity\)/],
    [{ ...a, target: nanAt(a.target, 1, NaN) }, /target has a non-finite entry/],
    [
      { ...a, Y: { data: new Float64Array(3), shape: [2, 2] } },
      /Y has 3 values for shape \(2, 2\) \(4\)/,
    ],
  ];
  for (const [arrays, message] of cases) {
    assert.throws(() => checkNotebook(mha, arrays, { heads: 3 }), message, String(message));
  }
  for (const heads of [0, '3', 2.5]) {
    assert.throws(() => checkNotebook(mha, a, { heads }), /heads must be a whole number >= 1/);
  }
  // a setting the file's split arrays contradict (or none): theirs, said in a note
  for (const heads of [5, undefined]) {
    const report = checkNotebook(mha, a, { heads });
    assert.equal(report.sizes.heads, 3);
    assert.ok(report.rows.every((r) => r.status === 'match' || r.status === 'missing'));
    if (heads) {
      assert.ok(
        report.notes.some((n) => /3 heads, not 5 as set/.test(n)),
        report.notes,
      );
    }
  }
  // with nothing split in the file, a heads that does not divide C is the caller's mistake
  const merged = Object.fromEntries(Object.entries(a).filter(([, v]) => v.shape.length !== 4));
  assert.throws(
    () => checkNotebook(mha, merged, { heads: 5 }),
    /heads must be a whole number >= 1 that divides C = 12/,
  );
  assert.throws(
    () => checkNotebook(mha, a, { heads: 3, causal: 'yes' }),
    /causal must be true or false/,
  );
});

// ------------------------------------------------------------------------------------------------
// the JS pipeline (mistakes.js, ops.js) against the engine

function engineTensors(X, W, s, dYorTarget) {
  const layer = mha.createLayer({ C: s.C, heads: s.heads });
  try {
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) layer.weights[k].set(W[k]);
    const { Y } = layer.forward(X, { B: s.B, T: s.T, causal: s.causal });
    const mse = s.loss === 'mse' ? mha.mseLoss(Y, dYorTarget) : null;
    layer.backward(mse ? mse.dY : dYorTarget);
    const out = Object.fromEntries(mha.tensorNames.map((n) => [n, layer.tensor(n).data]));
    if (mse) out.loss = Float64Array.of(mse.loss);
    return out;
  } finally {
    layer.free();
  }
}

for (const [causal, loss] of [
  [false, 'mse'],
  [true, 'dot'],
]) {
  test(`JS pipeline with no mistake = the engine to 1e-12 (course size, causal ${causal}, ${loss})`, () => {
    const [B, T, C, heads] = [2, 6, 64, 4];
    const s = { B, T, C, heads, hs: C / heads, N: B * T, n: B * T * C, causal, loss };
    const rng = mha.rng(11);
    const X = rng.standardNormal(B * T * C);
    const W = Object.fromEntries(
      ['Wq', 'Wk', 'Wv', 'Wo'].map((k) => [k, ops.scale(rng.standardNormal(C * C), 0.125)]),
    );
    const extra = rng.standardNormal(B * T * C);
    rng.free();
    const inputs = { X, ...W, [loss === 'mse' ? 'target' : 'dY']: extra };
    const js = simulate(s, inputs);
    const wasm = engineTensors(X, W, s, extra);
    const names = Object.keys(js).filter((n) => n in wasm && !/^[QKV]m$/.test(n));
    assert.ok(names.length >= 23, names.join(' '));
    for (const n of names) {
      assert.ok(maxRelErr(js[n], wasm[n]) <= 1e-12, `${n}: ${maxRelErr(js[n], wasm[n])}`);
    }
    assert.ok(maxRelErr(js.Qm, ops.mergeHeads(wasm.Q, s)) <= 1e-12);
    const L = loss === 'mse' ? wasm.loss[0] : ops.dot(extra, wasm.Y);
    assert.ok(Math.abs(js.loss[0] - L) <= 1e-12 * Math.abs(L));
  });
}

test('ops: split/merge heads as the engine, softmax over either axis, batched transposes', () => {
  const sizes = { B: 2, T: 3, C: 8, heads: 2 };
  const x = mha.standardNormal(2 * 3 * 8, { seed: 3 });
  assert.deepEqual(ops.splitHeads(x, sizes), mha.splitHeads(x, sizes));
  assert.deepEqual(ops.mergeHeads(ops.splitHeads(x, sizes), sizes), x);
  const z = x.slice(0, 18); // (2, 3, 3)
  const rows = ops.rowsum(ops.softmaxRows(z, 3), 3);
  rows.forEach((r) => assert.ok(Math.abs(r - 1) < 1e-15));
  const cols = ops.rowsum(ops.transposeBlocks(ops.softmaxColumns(z, 3), 3), 3);
  cols.forEach((r) => assert.ok(Math.abs(r - 1) < 1e-15));
  const masked = ops.softmaxRows(ops.causalMask(z, 3), 3);
  assert.deepEqual([masked[1], masked[2], masked[5]], [0, 0, 0]);
  // a (2, 3) @ (3, 4) as NN, as (3, 2)^T @ (3, 4) (TN) and as (2, 3) @ (4, 3)^T (NT)
  const a = Float64Array.of(1, 2, 3, 4, 5, 6);
  const b = Float64Array.from({ length: 12 }, (_, i) => i - 5);
  const nn = ops.matmul(a, b, { m: 2, k: 3, n: 4 });
  const aT = Float64Array.of(1, 4, 2, 5, 3, 6);
  const bt = new Float64Array(12);
  for (let i = 0; i < 3; i++) for (let j = 0; j < 4; j++) bt[j * 3 + i] = b[i * 4 + j];
  assert.deepEqual(ops.matmul(aT, b, { m: 2, k: 3, n: 4, transA: true }), nn);
  assert.deepEqual(ops.matmul(a, bt, { m: 2, k: 3, n: 4, transB: true }), nn);
  assert.deepEqual(Array.from(nn.slice(0, 4)), [2, 8, 14, 20]);
  assert.throws(() => ops.matmul(a, b, { m: 2, k: 3, n: 4, transA: true, transB: true }));
});

test('candidates only where the student has no array: given results stop the search', () => {
  const s = { B: 1, T: 2, C: 4, heads: 2, hs: 2, N: 2, n: 8, causal: false, loss: 'dot' };
  const inputs = Object.fromEntries(
    ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'dY'].map((k, i) => [
      k,
      mha.standardNormal(k === 'X' || k === 'dY' ? 8 : 16, { seed: i }),
    ]),
  );
  const pipe = new Pipeline(s, inputs);
  assert.deepEqual(pipe.hiddenAncestors('scores'), ['Q', 'K', 'Qm', 'Km']);
  pipe.provide('Q', pipe.value('Q'));
  assert.deepEqual(pipe.hiddenAncestors('scores'), ['K', 'Km']);
  assert.deepEqual(pipe.frontier('scores'), ['Q', 'X', 'Wk']);
  // the mistakes whose edits are of dX's step
  const atDx = MISTAKES.filter((m) =>
    namedEdit('dX', s, (edit) => recordOf({ site: 'dX', edit }) === m),
  );
  assert.deepEqual(
    atDx.map((m) => m.id),
    ['backward-w-not-transposed', 'dx-missing-paths'],
  );
});

// A small layer's inputs from one seed, as arrays for checkNotebook and as data for Pipeline.
function smallLayer({ B, T, C, heads, causal, loss }, seed = 21) {
  const s = { B, T, C, heads, hs: C / heads, N: B * T, n: B * T * C, causal, loss };
  const rng = mha.rng(seed);
  const data = { X: rng.standardNormal(B * T * C) };
  for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) data[w] = ops.scale(rng.standardNormal(C * C), 0.3);
  data[loss === 'mse' ? 'target' : 'dY'] = rng.standardNormal(B * T * C);
  rng.free();
  return { s, data };
}

test('the engine runs the same steps as the JS pipeline, for every candidate up to dX', () => {
  const { s, data } = smallLayer({ B: 2, T: 4, C: 8, heads: 2, causal: true, loss: 'mse' });
  const layer = mha.createLayer({ C: s.C, heads: s.heads });
  try {
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) layer.weights[w].set(data[w]);
    layer.forward(data.X, { B: s.B, T: s.T, causal: s.causal });
    const js = new Pipeline(s, data);
    const fast = new Pipeline(s, data);
    fast.useEngine(engineSteps(layer), tensorPlan(mha));
    let n = 0;
    // every catalogued mistake's edit at node and at the steps before it
    const named = (site) =>
      MISTAKES.map((m) => [m, namedEdit(site, s, (e) => recordOf({ site, edit: e }) === m)]);
    for (const node of ['Y', 'dX', 'dWq']) {
      for (const site of [node, ...js.hiddenAncestors(node)]) {
        for (const [m, edit] of named(site).filter(([, e]) => e)) {
          const extra = new Map([[site, { variant: editVariant(edit, site, s), param: m.id }]]);
          const a = js.step(node, extra);
          const b = fast.step(node, extra);
          assert.ok(maxRelErr(b, a) <= 1e-12, `${node} with ${m.id} at ${site}`);
          n++;
        }
      }
      assert.ok(maxRelErr(fast.step(node), js.step(node)) <= 1e-12, node);
    }
    assert.ok(n > 20, `${n} edits`);
  } finally {
    layer.free();
  }
});

test('T = 1 (causal: nothing above the diagonal), one head, X (T, C)', () => {
  for (const [T, heads] of [
    [1, 2],
    [3, 1],
  ]) {
    const { s, data } = smallLayer({ B: 1, T, C: 4, heads, causal: true, loss: 'dot' });
    const values = simulate(s, data);
    const arrays = { X: { data: data.X, shape: [T, 4] }, dY: { data: data.dY, shape: [T, 4] } };
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) arrays[w] = { data: data[w], shape: [4, 4] };
    for (const name of resultNames('dot')) {
      const form = acceptedShapes(name, s).at(name === 'loss' ? 0 : -1);
      arrays[name] = { data: values[form.node], shape: form.shape };
    }
    const report = checkNotebook(mha, arrays, { heads, causal: true });
    assert.deepEqual(
      report.rows.filter((r) => r.status !== 'match').map((r) => r.name),
      [],
    );
    const note = rowOf(report, 'scores').note;
    if (T === 1) assert.equal(note, null);
    else assert.match(note, /^causal: the 3 entries above the diagonal are masked/);
  }
});

test('printed float32 results: repr (dtype=float32) float32 tolerance, print() float64', () => {
  // NumPy prints a float32 student's Y; the text is pasted instead of the saved array
  const run = loadManifest().find((r) => r.name === 'correct-f32-dot-merged');
  const file = join(studentsDir(), `${run.name}.npz`);
  const script = `import numpy as np\nd = np.load(${JSON.stringify(file)})\nnp.set_printoptions(threshold=np.inf)\nprint(repr(d['Y']))\nprint('@@')\nprint(d['Y'])`;
  const out = spawnSync(PYTHON, ['-c', script], { encoding: 'utf8', maxBuffer: 1 << 24 });
  assert.equal(out.status, 0, out.stderr);
  const [reprText, printText] = out.stdout.split('@@\n');
  assert.match(reprText, /dtype=float32\)\s*$/);
  const arrays = loadStudent(run.name);
  const withText = (text) => ({ ...arrays, Y: parseNumpyText(text) });
  const rowY = (text) =>
    checkNotebook(mha, withText(text), { heads: run.heads, causal: run.causal }).rows.find(
      (r) => r.name === 'Y',
    );
  const fromRepr = rowY(reprText);
  assert.equal(fromRepr.status, 'match', fromRepr.tolerance.text);
  assert.match(fromRepr.tolerance.text, /^printed float32 text: .* \+ 1e-5 × max\|expected\|/);
  // print() does not say the dtype: 8 printed digits are held to float64's rule, which a float32
  // computation does not meet (its error is ~1e-7 relative)
  const fromPrint = rowY(printText);
  assert.equal(parseNumpyText(printText).printedDtype, null);
  assert.equal(fromPrint.status, 'differs', fromPrint.tolerance.text);
  assert.match(fromPrint.tolerance.text, /^printed text: /);
});

test('the notebook’s names are the engine’s: forward tensors and lesson 4’s gradient order', () => {
  // web/check/names.js writes the course's names out (they are the file format a student
  // saves); they must stay the C tensor table's names, in its order
  const forward = mha.tensors.filter((t) => t.kind === 'intermediate' || t.kind === 'output');
  assert.deepEqual(
    [...FORWARD_NAMES],
    forward.map((t) => t.name),
  );
  assert.deepEqual([...BACKWARD_NAMES], mha.gradOrder);
  const inputs = mha.tensors.filter((t) => t.kind === 'param' || t.kind === 'input');
  assert.deepEqual(
    inputs.map((t) => t.name).sort(),
    INPUT_NAMES.filter((n) => n !== 'dY' && n !== 'target').sort(),
  );
});

test("the check's graph comes from the engine's tensor table: a step per tensor, the order", () => {
  const engine = mha.tensors.filter((t) => t.kind !== 'param' && t.kind !== 'input');
  const names = new Set(STEPS.map((r) => r.name));
  // every tensor the engine computes has the course's line here, and nothing else does but the
  // check's own nodes: Q, K, V before split_heads and the loss
  for (const t of engine) assert.ok(names.has(t.name), `no step for the engine's ${t.name}`);
  const own = [...names].filter((n) => !mha.tensors.some((t) => t.name === n));
  assert.deepEqual(own.sort(), ['Km', 'Qm', 'Vm', 'loss']);
  const plan = tensorPlan(mha);
  assert.deepEqual(
    plan.forward,
    engine.filter((t) => t.kind !== 'gradient').map((t) => t.name),
  );
  assert.deepEqual(plan.results, mha.gradOrder);
  // the forward restarts: each result of the chain from the tensors its stage reads, and the
  // restart argument is a tensor forwardFrom accepts
  assert.deepEqual(Object.keys(plan.restart), ['scores', 'att', 'headout', 'concat', 'Y']);
  for (const { from } of Object.values(plan.restart)) {
    assert.notEqual(mha.tensors.find((t) => t.name === from).stage, null, from);
  }
  assert.deepEqual(plan.restart.scores.set.sort(), ['K', 'Q', 'V']);
  assert.deepEqual(plan.restart.att.set.sort(), ['V', 'scores']);
  assert.deepEqual(plan.backwardReads.sort(), ['K', 'Q', 'V', 'att', 'concat']);
});

test("the diagnoses table of docs/notebook-check.md: the catalogue's id, kind, message", () => {
  const doc = readFileSync(join(repoRoot, 'docs', 'notebook-check.md'), 'utf8');
  assert.ok(doc.includes(`\n${mistakesTable()}\n`), 'run node tests/tools/mistakes-table.mjs');
  // every record is a known mistake (the edits it names), an analysis, a training step or a link
  for (const m of MISTAKES) {
    const kinds = [m.edits && 'edits', m.analyses && 'analyses', m.kind].filter(Boolean);
    assert.ok(kinds.length <= 1, m.id);
    assert.ok(m.message.length > 40, m.id);
    if (m.analyses) {
      assert.ok(
        m.analyses.every((a) => typeof a === 'function'),
        m.id,
      );
    }
  }
  assert.equal(new Set(MISTAKES.map((m) => m.id)).size, MISTAKES.length);
});

test('courseName: every alias a notebook writes, in any case and with underscores', () => {
  const aliases = {
    attn: 'att',
    attention: 'att',
    attn_weights: 'att',
    att_weights: 'att',
    out: 'Y',
    Output: 'Y',
    score: 'scores',
    heads_out: 'headout',
    dattn: 'datt',
    d_attention: 'datt',
    dscore: 'dscores',
    dout: 'dY',
    d_output: 'dY',
    dheads_out: 'dheadout',
    dQm: 'dQ',
    dKm: 'dK',
    dVm: 'dV',
    targets: 'target',
    Y_target: 'target',
    y_true: 'target',
    X: 'X',
    dY: 'dY',
  };
  for (const [alias, name] of Object.entries(aliases)) assert.equal(courseName(alias), name, alias);
  for (const other of ['heads', 'Wq_after', 'losses', 'dQmm', 'xdY']) {
    assert.equal(courseName(other), null, other);
  }
});

test('acceptedShapes: every form of each kind of result, with and without a leading B = 1', () => {
  const sizes = { B: 2, T: 5, C: 12, heads: 3 };
  const forms = (name, s = sizes) =>
    acceptedShapes(name, s).map((f) => `${shapeText(f.shape)} ${f.node} ${f.form}`);
  assert.deepEqual(forms('dK'), [
    '(2, 3, 5, 4) dK split',
    '(2, 5, 12) dKm merged',
    '(2, 5, 3, 4) dKm merged',
    '(10, 12) dKm merged',
  ]);
  assert.deepEqual(forms('headout', { ...sizes, B: 1 }), [
    '(1, 3, 5, 4) headout split',
    '(3, 5, 4) headout split',
    '(1, 5, 12) concat merged',
    '(5, 12) concat merged',
    '(1, 5, 3, 4) concat merged',
    '(5, 3, 4) concat merged',
  ]);
  assert.deepEqual(forms('dscores'), ['(2, 3, 5, 5) dscores plain']);
  assert.deepEqual(forms('att', { ...sizes, B: 1 }), [
    '(1, 3, 5, 5) att plain',
    '(3, 5, 5) att plain',
  ]);
  assert.deepEqual(forms('dWv'), ['(12, 12) dWv plain']);
  assert.deepEqual(forms('Wo'), ['(12, 12) Wo plain']);
  assert.deepEqual(forms('dX'), ['(2, 5, 12) dX plain', '(10, 12) dX plain']);
  assert.deepEqual(forms('concat', { ...sizes, B: 1 }), [
    '(1, 5, 12) concat plain',
    '(5, 12) concat plain',
  ]);
  assert.deepEqual(forms('loss', { ...sizes, B: 1 }), ['() loss scalar', '(1,) loss scalar']);
});

test('matchNames: the course’s spelling, then case, then aliases; the rest in file order', () => {
  const a = (x) => ({ data: Float64Array.of(x), shape: [1] });
  const { found, ignored, notes } = matchNames({
    foo: a(1),
    q: a(2),
    Q: a(3),
    attn: a(4),
    bar: a(5),
  });
  assert.deepEqual(Object.keys(found).sort(), ['Q', 'att']);
  assert.equal(found.Q.key, 'Q');
  assert.equal(found.Q.array.data[0], 3);
  assert.equal(found.att.key, 'attn');
  assert.deepEqual(ignored, ['foo', 'q', 'bar']);
  assert.deepEqual(notes, ['q and Q both name Q: Q was used', 'attn read as att']);
  assert.deepEqual(matchNames({ X: a(1) }).notes, []);
});

test('bad input, word for word: malformed arrays, empty sizes, weights, heads, causal', () => {
  const a = loadStudent('correct-f64-mse');
  const fails = (arrays, opts = { heads: 3 }) => {
    try {
      checkNotebook(mha, arrays, opts);
    } catch (e) {
      return e.message;
    }
    return 'no error';
  };
  const notArray = (name) =>
    `checkNotebook: ${name} is not an array: expected { data, shape } as readNpy returns`;
  for (const X of [
    { data: a.X.data, shape: [2, -5, -12] },
    { data: a.X.data, shape: [2, 5.5, 12] },
    { data: null, shape: [2, 5, 12] },
    { data: {}, shape: [2, 5, 12] },
    { data: a.X.data, shape: '2, 5, 12' },
    'X',
  ]) {
    assert.equal(fails({ ...a, X }), notArray('X'), JSON.stringify(X.shape));
  }
  // a plain list of numbers is read like a Float64Array
  const listX = { data: Array.from(a.X.data), shape: [2, 5, 12] };
  assert.equal(checkNotebook(mha, { ...a, X: listX }, { heads: 3 }).rows[0].status, 'match');
  for (const shape of [
    [0, 5, 12],
    [2, 0, 12],
    [2, 5, 0],
  ]) {
    assert.equal(
      fails({ ...a, X: { data: new Float64Array(0), shape } }),
      `checkNotebook: X has shape (${shape.join(', ')}): every size must be at least 1`,
    );
  }
  const wrongW = (shape) => ({
    ...a,
    Wv: { data: new Float64Array(shape[0] * (shape[1] ?? 1)), shape },
  });
  assert.equal(
    fails(wrongW([144])),
    'checkNotebook: Wv has shape (144,); expected (C, C) = (12, 12) with C = 12 from X (your ' +
      'layer as read: X, Wq, Wk, Wo; not (C, C): Wv (144,) (the check needs X and the four ' +
      'weights))',
  );
  assert.equal(fails(wrongW([6, 24])).split(';')[0], 'checkNotebook: Wv has shape (6, 24)');
  assert.equal(fails(wrongW([12, 6])).split(';')[0], 'checkNotebook: Wv has shape (12, 6)');
  assert.equal(
    fails(a, { heads: 3, causal: 1 }),
    'checkNotebook: causal must be true or false, got 1',
  );
  const merged = Object.fromEntries(Object.entries(a).filter(([, v]) => v.shape.length !== 4));
  assert.equal(
    fails(merged, { heads: 5 }),
    'checkNotebook: heads must be a whole number >= 1 that divides C = 12, got 5',
  );
  assert.equal(
    fails(a, { heads: NaN }),
    'checkNotebook: heads must be a whole number >= 1, got NaN',
  );
  // a file that holds a layer without one of X and the weights: no error, no rows, and what
  // was read as what and what is missing (the page says it as its status)
  assert.equal(fails(without(a, 'Wk')), 'no error');
  const lacking = checkNotebook(mha, without(a, 'Wk'), { heads: 3 });
  assert.deepEqual([lacking.rows, lacking.sizes, lacking.missing], [[], null, ['Wk']]);
  assert.equal(
    lacking.notes.at(-1),
    'Not checked: your layer as read: X, Wq, Wv, Wo; missing: Wk (the check needs X and the ' +
      "four weights); save them, e.g. np.savez('mha_check.npz', X=X, Wq=Wq, Wk=Wk, Wv=Wv, " +
      'Wo=Wo, ...)',
  );
  // a target of another shape: left out, said, the backward not checked (never thrown)
  for (const shape of [[12], [1, 12]]) {
    const other = { ...a, target: { data: new Float64Array(12), shape } };
    delete other.dY;
    const read = checkNotebook(mha, other, { heads: 3 });
    assert.equal(read.loss, null);
    assert.ok(
      read.notes.includes(
        `target has shape (${shape.join(', ')}${shape.length === 1 ? ',' : ''}); expected ` +
          '(2, 5, 12) like X and Y (or (10, 12), reshaped to (B·T, C)): not read as the ' +
          'target of the loss',
      ),
      read.notes.join('\n'),
    );
  }
  assert.equal(
    fails({ ...a, Wk: { ...a.Wk, data: a.Wk.data.map((x, i) => (i === 3 ? -Infinity : x)) } }),
    'checkNotebook: Wk has a non-finite entry (-Infinity) at flat index 3: the check needs ' +
      'finite inputs',
  );
  // target reshaped to (B·T, C) is read
  const rows = { ...a, target: { ...a.target, shape: [10, 12] } };
  assert.equal(checkNotebook(mha, rows, { heads: 3 }).loss, 'mse');
});

test('checkNotebook: the training rows and notes join the report; forward only says why', () => {
  const a = loadStudent('correct-f64-mse');
  // a step W - 0.1 · dW saved for Wq: a row of its own, lr found and said
  const Wq_after = { ...a.Wq, data: a.Wq.data.map((w, i) => w - 0.1 * a.dWq.data[i]) };
  const report = checkNotebook(mha, { ...a, Wq_after }, { heads: 3 });
  const row = report.rows.find((r) => r.name === 'Wq_after');
  assert.equal(row.status, 'match');
  assert.deepEqual(report.ignored, []);
  assert.ok(report.notes.some((n) => n.startsWith('lr = 0.1 found from your Wq and Wq_after')));
  // an unknown key is ignored; a training key is not
  assert.deepEqual(checkNotebook(mha, { ...a, Wq_after, foo: a.X }, { heads: 3 }).ignored, ['foo']);
  // no target, no dY: the backward results saved are named in a note
  const forward = without(without(a, 'target'), 'dY');
  assert.ok(
    checkNotebook(mha, forward, { heads: 3 }).notes.includes(
      'dWo, dconcat, dheadout, dV, datt, dscores, dQ, dK, dWq, dWk, dWv, dX not checked: save ' +
        'dY (loss = np.sum(dY * Y)) or target (the MSE loss) to check the backward',
    ),
  );
  const none = Object.fromEntries(['X', 'Wq', 'Wk', 'Wv', 'Wo', 'Y'].map((k) => [k, a[k]]));
  const forwardOnly = checkNotebook(mha, none, { heads: 3 });
  assert.deepEqual(forwardOnly.notes, []);
  // a result not saved: its row says the shape the check expects
  const q = forwardOnly.rows.find((r) => r.name === 'Q');
  assert.deepEqual([q.status, q.expectedShape], ['missing', [2, 3, 5, 4]]);
  // causal scores: the B·h·T(T-1)/2 = 2·3·5·4/2 = 60 masked entries are not compared, said
  const causal = checkNotebook(mha, { ...none, scores: a.scores }, { heads: 3, causal: true });
  assert.equal(
    causal.rows.find((r) => r.name === 'scores').note,
    'causal: the 60 entries above the diagonal are masked and not compared (yours may hold ' +
      '-inf, a large negative number or the unmasked score)',
  );
  // dY beside target is a result: said
  assert.ok(
    checkNotebook(mha, a, { heads: 3 }).notes.includes(
      'dY is checked as a result: 2 * (Y - target) / Y.size',
    ),
  );
});

test('engineSteps: sets the tensors and runs a step once per set of arrays', () => {
  const calls = [];
  const layer = {
    setTensor: (name) => calls.push(`set ${name}`),
    forwardFrom: (from) => calls.push(`forward ${from}`),
    zeroGrad: () => calls.push('zero'),
    backward: () => calls.push('backward'),
    tensor: (node) => ({ data: `${node} data` }),
  };
  const steps = engineSteps(layer);
  const Q = new Float64Array(1);
  const K = new Float64Array(1);
  assert.equal(steps.forward('scores', { Q, K }, 'att'), 'att data');
  assert.equal(steps.forward('scores', { Q, K }, 'Y'), 'Y data'); // the cache holds it: no run
  steps.forward('scores', { Q, K: new Float64Array(1) }, 'Y'); // another K: run again
  steps.forward('att', { Q, K }, 'Y'); // another start: run again
  const dY = new Float64Array(1);
  assert.equal(steps.backward({ att: Q }, dY, 'dQ'), 'dQ data');
  steps.backward({ att: Q }, dY, 'dK');
  steps.backward({ att: Q }, new Float64Array(1), 'dK');
  assert.deepEqual(calls, [
    'set Q',
    'set K',
    'forward scores',
    'set Q',
    'set K',
    'forward scores',
    'set Q',
    'set K',
    'forward att',
    'set att',
    'zero',
    'backward',
    'set att',
    'zero',
    'backward',
  ]);
});

test('round 7 names: a module’s inputs and outputs, a cache’s mark, a split projection', () => {
  const cases = {
    'Q_linear.inputs': 'X',
    'O_linear.inputs': 'concat',
    'K_linear.outputs': 'K',
    'out_proj.outputs': 'Y',
    'O_linear.dinputs': 'dconcat',
    'value_proj.doutputs': 'dV',
    input_cache: 'X',
    concat_cache: 'concat',
    Q_split_cache: 'Q',
    'softmax.outputs': null, // (no projection's module)
    'Q_linear.weights': null, // (a weight: layouts.js reads it)
  };
  for (const [key, name] of Object.entries(cases)) assert.equal(courseName(key), name, key);
});

test('round 9 names: a layer saved as S, A, gWo, gX is read whole', () => {
  // a layer saved in those names is read whole: every row compared, the same verdicts
  const a = loadStudent('correct-f64-mse');
  const renamed = { ...without(a, 'scores', 'att', 'dWo', 'dX'), S: a.scores, A: a.att };
  Object.assign(renamed, { gWo: a.dWo, gX: a.dX });
  const report = checkNotebook(mha, renamed, { heads: 3 });
  for (const n of ['scores', 'att', 'dWo', 'dX']) assert.equal(rowOf(report, n).status, 'match', n);
});

test('another array under a result’s name: an alias of another shape is left out, said', () => {
  const a = loadStudent('correct-f64-mse'); // B = 2, T = 5, C = 12, h = 3
  // Y holding the heads' outputs (the author's name for headout), out the layer's output
  const heads = copy(a.headout);
  const named = { ...without(a, 'Y'), Y: heads, out: copy(a.Y) };
  const report = checkNotebook(mha, named, { heads: 3 });
  assert.equal(rowOf(report, 'Y').status, 'match');
  assert.ok(report.notes.some((n) => /^Y and out both name Y: out was used/.test(n)));
  // the course's own name keeps its array when its shape is the result's
  const both = { ...a, out: copy(a.headout) };
  assert.equal(rowOf(checkNotebook(mha, both, { heads: 3 }), 'Y').status, 'match');
  // an alias whose shape is none of the result's: left out with a note, no row of another shape
  const alias = { ...without(a, 'Y'), attention_output: copy(a.headout) };
  const left = checkNotebook(mha, alias, { heads: 3 });
  assert.equal(rowOf(left, 'Y').status, 'missing');
  assert.ok(
    left.notes.includes("attention_output (2, 3, 5, 4) not read as Y: none of Y's shapes"),
    left.notes.join('\n'),
  );
});
