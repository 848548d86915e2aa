// The gradient check's conventions: the two-point central difference a notebook writes beside the
// five-point one, the relative error in cs231n's form beside the per-entry and norm-wise ones, the
// pass lines that follow them, and one entry's error against ε (lesson 4's figure).
// References: NumPy's own forward and finite differences (python3, on the same arrays passed
// exactly as float64 hex), and the forms recomputed entry by entry in JS.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { PYTHON, hexBits, loadMHA } from './helpers.mjs';
import { courseData } from '../web/model/course.js';
import { lesson4 } from '../web/model/lesson4.js';
import { layerWith } from '../web/model/layers.js';
import {
  DEFAULT_CONVENTION,
  ERROR_FORMS,
  L4_LINES,
  L5_LINES,
  MEASURED_ERRORS,
  PASS_MARGIN,
  STENCILS,
  conventionThreshold,
  passLineReason,
  passLinesText,
} from '../web/model/gradcheck-report.js';
import { sentenceModel } from '../web/model/sentence-model.js';
import { tokenize } from '../web/model/tokens.js';
import { COURSE } from '../web/model/defaults.js';
import { SWEEP_EPS, entryLabel, epsilonSweep, sweepTensors } from '../web/model/epsilon-sweep.js';
import { parseEps } from '../web/components/gradcheck-convention.js';

const mha = await loadMHA();

/** NumPy's numeric gradients of L = sum(dY * Y) at entries [[name, flat index, eps, points]]. */
function numpyDifferences(data, entries) {
  const { X, W, dY, B, T, C, heads } = data;
  const hex = (a) => Array.from(a, (x) => hexBits(x).slice(2)).join('');
  const arr = (a, shape) =>
    `np.frombuffer(bytes.fromhex("${hex(a)}"), dtype=">f8").astype(np.float64).reshape(${shape})`;
  const script = `import json, numpy as np
B, T, C, h = ${B}, ${T}, ${C}, ${heads}
hs = C // h
P = {"X": ${arr(X, '(B, T, C)')}, "Wq": ${arr(W.Wq, '(C, C)')}, "Wk": ${arr(W.Wk, '(C, C)')},
     "Wv": ${arr(W.Wv, '(C, C)')}, "Wo": ${arr(W.Wo, '(C, C)')}}
dY = ${arr(dY, '(B, T, C)')}
def split(x):
    return x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)
def loss():
    X = P["X"]
    Q, K, V = split(X @ P["Wq"]), split(X @ P["Wk"]), split(X @ P["Wv"])
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)
    a = np.exp(s - s.max(axis=-1, keepdims=True))
    a = a / a.sum(axis=-1, keepdims=True)
    Y = (a @ V).transpose(0, 2, 1, 3).reshape(B, T, C) @ P["Wo"]
    return np.sum(dY * Y)
def at(name, i, x):
    flat = P[name].reshape(-1)
    old = flat[i]
    flat[i] = x
    L = loss()
    flat[i] = old
    return L
out = []
for name, i, e, points in ${JSON.stringify(entries)}:
    x = P[name].reshape(-1)[i]
    d1 = at(name, i, x + e) - at(name, i, x - e)
    if points == 2:
        out.append(d1 / (2 * e))
    else:
        d2 = at(name, i, x + 2 * e) - at(name, i, x - 2 * e)
        out.append((8 * d1 - d2) / (12 * e))
print(json.dumps(out))
`;
  return JSON.parse(execFileSync(PYTHON, ['-'], { input: script, encoding: 'utf8' }));
}

test("layer.numericGradient: two- and five-point differences agree with NumPy's own", (t) => {
  const r = lesson4(mha, { data: courseData(mha) });
  const entries = [];
  for (const [name, i] of [
    ['Wq', 0],
    ['Wv', 1000],
    ['Wo', 4095],
    ['X', 77],
  ]) {
    for (const e of [1e-2, 1e-5]) entries.push([name, i, e, 2]);
    entries.push([name, i, 1e-3, 5]);
  }
  const numpy = numpyDifferences(r, entries);
  const layer = layerWith(mha, r.C, r.heads, r.W);
  try {
    entries.forEach(([name, index, eps, points], k) => {
      const stencil = points === 2 ? 'two-point' : 'five-point';
      const opts = { B: r.B, T: r.T, G: r.dY, tensor: name, index, eps: [eps], stencil };
      const { analytic, numeric } = layer.numericGradient(r.X, opts);
      // the two losses differ in their rounding only (~1e-15 of |L| = 17), divided by 2ε
      const tol = (4e-15 * 17) / eps;
      const what = `${name}[${index}] ${stencil} ε = ${eps}`;
      assert.ok(Math.abs(numeric[0] - numpy[k]) <= tol, `${what}: ${numeric[0]} vs ${numpy[k]}`);
      // the analytic entry is lesson 4's gradient
      const grad = r.grads[`d${name}`].data[index];
      assert.equal(analytic, grad, `${what}: analytic`);
    });
  } finally {
    layer.free();
  }
  t.diagnostic(`${entries.length} differences within rounding of NumPy's`);
});

test('two points at ε = 1e-2 show the ε² truncation the five-point stencil removes', () => {
  const r = lesson4(mha, { data: courseData(mha) });
  const layer = layerWith(mha, r.C, r.heads, r.W);
  try {
    const opts = { B: r.B, T: r.T, G: r.dY, tensor: 'Wq', index: 0, eps: [1e-2, 1e-3] };
    const two = layer.numericGradient(r.X, { ...opts, stencil: 'two-point' });
    const five = layer.numericGradient(r.X, { ...opts, stencil: 'five-point' });
    const err = (n) => Math.abs(n - two.analytic);
    // ε² scaling: ten times smaller ε, about a hundred times smaller error
    const ratio = err(two.numeric[0]) / err(two.numeric[1]);
    assert.ok(ratio > 80 && ratio < 120, `two-point error ratio ${ratio}`);
    assert.ok(err(five.numeric[0]) < err(two.numeric[0]) / 1000, 'five-point far closer at 1e-2');
  } finally {
    layer.free();
  }
});

test('every relative error of a report row is its entries’ forms recomputed by hand', () => {
  const C = 4;
  const heads = 2;
  const [B, T] = [1, 3];
  const X = mha.standardNormal(B * T * C, { seed: 5 });
  const G = mha.standardNormal(B * T * C, { seed: 6 });
  const layer = mha.createLayer({ C, heads, seed: 7 });
  try {
    const report = layer.gradcheck(X, { B, T, G, stencil: 'two-point', eps: 1e-5 });
    for (const row of report) {
      let [rel, sum, ssd, ssa, ssn] = [0, 0, 0, 0, 0];
      for (let i = 0; i < row.size; i++) {
        const opts = { B, T, G, stencil: 'two-point', tensor: row.tensor, index: i, eps: 1e-5 };
        const { analytic: a, numeric } = layer.numericGradient(X, opts);
        const n = numeric[0];
        const d = Math.abs(a - n);
        rel = Math.max(rel, d / Math.max(Math.abs(a), Math.abs(n), 1e-12));
        sum = Math.max(sum, d / Math.max(Math.abs(a) + Math.abs(n), 1e-8));
        [ssd, ssa, ssn] = [ssd + d * d, ssa + a * a, ssn + n * n];
      }
      const norm = Math.sqrt(ssd) / Math.max(Math.sqrt(ssa) + Math.sqrt(ssn), 1e-12);
      assert.equal(row.maxRel, rel, `${row.tensor} maxRel`);
      assert.equal(row.maxRelSum, sum, `${row.tensor} maxRelSum`);
      assert.ok(Math.abs(row.normRel - norm) <= 1e-12 * norm, `${row.tensor} normRel`);
      assert.ok(row.maxRelSum <= row.maxRel && row.maxRelSum >= row.maxRel / 2 - 1e-15);
    }
  } finally {
    layer.free();
  }
});

test('the check takes a stencil by name; anything else is a clear error', () => {
  const layer = mha.createLayer({ C: 4, heads: 2, seed: 1 });
  const X = new Float64Array(12).fill(0.5);
  try {
    assert.throws(() => layer.gradcheck(X, { B: 1, T: 3, stencil: 'three-point' }), /stencil/);
    assert.throws(
      () => layer.numericGradient(X, { B: 1, T: 3, tensor: 'Wq', eps: [1e-3, 0] }),
      /eps must be > 0/,
    );
    assert.throws(
      () => layer.numericGradient(X, { B: 1, T: 3, tensor: 'dWq', eps: 1e-3 }),
      /tensor must be one of Wq/,
    );
    assert.throws(
      () => layer.numericGradient(X, { B: 1, T: 3, tensor: 'Wq', index: 16, eps: 1e-3 }),
      /index 16 is past Wq's 16 entries/,
    );
    // the default stays the five-point stencil: the report of no stencil is the five-point one
    const a = layer.gradcheck(X, { B: 1, T: 3 });
    const b = layer.gradcheck(X, { B: 1, T: 3, stencil: 'five-point' });
    assert.deepEqual(a, b);
    const c = layer.gradcheck(X, { B: 1, T: 3, stencil: 'two-point' });
    assert.notDeepEqual(a, c);
  } finally {
    layer.free();
  }
});

/** A check's worst error per stencil and form, measured here: { [stencil]: { [form]: worst } }. */
function measuredWorst(layer, X, opts) {
  const out = {};
  for (const [stencil, { eps }] of Object.entries(STENCILS)) {
    const report = layer.gradcheck(X, { ...opts, stencil, eps });
    out[stencil] = {};
    for (const [form, f] of Object.entries(ERROR_FORMS)) {
      out[stencil][form] = Math.max(...report.map((row) => row[f.field]));
    }
  }
  return out;
}

/** Lessons 4 and 5 on the page's own arrays: their lines and their worst errors, measured. */
function checksMeasured() {
  const r = lesson4(mha, { data: courseData(mha) });
  const m = sentenceModel(mha, {
    tokens: tokenize(COURSE.sentence),
    C: COURSE.C,
    heads: COURSE.heads,
    seed: COURSE.seed,
    rng: COURSE.rng,
  });
  const measure = (C, heads, W, X, opts) => {
    const layer = layerWith(mha, C, heads, W);
    try {
      return measuredWorst(layer, X, opts);
    } finally {
      layer.free();
    }
  };
  return {
    lesson4: {
      lines: L4_LINES,
      worst: measure(r.C, r.heads, r.W, r.X, { B: r.B, T: r.T, G: r.dY }),
    },
    lesson5: {
      lines: L5_LINES,
      worst: measure(m.C, m.heads, m.W, m.X, { B: 1, T: m.T, loss: 'mse', target: m.target }),
    },
  };
}

test('every pass line: 10 times the worst error measured (here and in NumPy), up to 10^k', () => {
  assert.equal(PASS_MARGIN, 10);
  for (const [check, { lines, worst }] of Object.entries(checksMeasured())) {
    for (const [stencil, forms] of Object.entries(worst)) {
      for (const [form, here] of Object.entries(forms)) {
        const what = `${check} ${stencil} ${form}`;
        const m = MEASURED_ERRORS[check][stencil][form];
        // the table's page figure is today's, to its three digits
        assert.equal(here.toPrecision(3), m.page.toPrecision(3), `${what}: page ${here}`);
        // the rule, worked out here: the least power of ten at least 10 × the worst seen
        const worstSeen = Math.max(here, m.numpy);
        let expected = 1e-16;
        while (expected < 10 * worstSeen) expected *= 10;
        const line = conventionThreshold(lines, { stencil, form });
        assert.equal(line.toExponential(0), expected.toExponential(0), what);
        assert.ok(here * 10 <= line && m.numpy * 10 <= line, `${what}: margin`);
        assert.ok(line < 100 * worstSeen, `${what}: ${line} is more than 100 × ${worstSeen}`);
      }
    }
  }
  assert.throws(() => conventionThreshold(L4_LINES, { stencil: 'x', form: 'entry' }), /unknown/);
  assert.deepEqual(DEFAULT_CONVENTION, { stencil: 'two-point', eps: 1e-5, form: 'entry' });
  assert.equal(STENCILS['two-point'].eps, 1e-5);
  assert.equal(STENCILS['five-point'].eps, 1e-3);
  assert.deepEqual(
    Object.values(ERROR_FORMS).map((f) => f.field),
    ['maxRel', 'maxRelSum', 'normRel'],
  );
});

test("the pass lines' words: every line, and the measured figures they come from", () => {
  const fmt = (x) => x.toExponential(0);
  for (const [check, lines] of [
    ['lesson4', L4_LINES],
    ['lesson5', L5_LINES],
  ]) {
    const at = (stencil, form) => fmt(lines[stencil][form]);
    const pair = (form) => `${at('two-point', form)} with two points and ${at('five-point', form)}`;
    const text = passLinesText(lines, fmt);
    assert.equal(
      text,
      `per entry ${pair('entry')} with five; in cs231n’s form ${pair('sum')} with five; ` +
        `norm-wise ${pair('norm')} with five`,
    );
    const m = MEASURED_ERRORS[check]['two-point'];
    const reason = passLineReason(check, (x) => x.toPrecision(3));
    assert.match(reason, /^Each line is 10 times the largest error measured/);
    for (const form of ['entry', 'norm']) {
      assert.ok(reason.includes(m[form].page.toPrecision(3)), `${check} ${form}: page figure`);
      assert.ok(reason.includes(m[form].numpy.toPrecision(3)), `${check} ${form}: NumPy figure`);
      assert.ok(reason.includes(`so ${lines['two-point'][form].toPrecision(3)}`), check);
    }
  }
});

test('ε typed by a student: a number in [1e-15, 1], else a message', () => {
  assert.deepEqual(parseEps('1e-5'), { eps: 1e-5 });
  assert.deepEqual(parseEps(' 0.001 '), { eps: 1e-3 });
  assert.deepEqual(parseEps('1'), { eps: 1 });
  assert.deepEqual(parseEps('1e-15'), { eps: 1e-15 });
  assert.match(parseEps('').error, /must be a number such as 1e-5, got “”/);
  assert.match(parseEps('abc').error, /got “abc”/);
  assert.match(parseEps('0').error, /between 1e-15 and 1, got 0/);
  assert.match(parseEps('-1e-5').error, /between/);
  assert.match(parseEps('2').error, /between/);
  assert.match(parseEps('Infinity').error, /must be a number/);
});

test("lesson 4's figure: one entry's error against ε has the V of truncation and rounding", (t) => {
  const r = lesson4(mha, { data: courseData(mha) });
  assert.deepEqual(sweepTensors(mha), ['Wq', 'Wk', 'Wv', 'Wo', 'X']);
  assert.equal(entryLabel('X', 3), 'X[0, 0, 0]');
  assert.equal(SWEEP_EPS.length, 23);
  assert.equal(SWEEP_EPS[0], 0.1);
  assert.ok(Math.abs(SWEEP_EPS[22] / 1e-12 - 1) < 1e-12);
  for (const tensor of sweepTensors(mha)) {
    const s = epsilonSweep(mha, r, tensor);
    const [two, five] = s.series;
    assert.equal(two.stencil, 'two-point');
    assert.equal(five.stencil, 'five-point');
    // L = sum(dY ⊙ Y) is linear in Wv and Wo (Y = att (X Wv) Wo): no truncation, rounding only
    assert.equal(s.linear, tensor === 'Wv' || tensor === 'Wo', `${tensor}: linear`);
    if (s.linear) {
      for (const sr of s.series) assert.ok(sr.errors[0] < 1e-10, `${tensor}: ${sr.errors[0]}`);
      continue;
    }
    // the bottom of the V: near 1e-5 for two points, near 1e-3 for five (within a decade or so)
    assert.ok(two.best.eps >= 1e-6 && two.best.eps <= 1e-4, `${tensor}: two ${two.best.eps}`);
    assert.ok(five.best.eps >= 3e-4 && five.best.eps <= 1e-2, `${tensor}: five ${five.best.eps}`);
    // both arms: truncation at ε = 0.1 and rounding at 1e-12 far above the bottom
    for (const sr of s.series) {
      assert.ok(sr.errors[0] > 100 * sr.best.error, `${tensor} ${sr.stencil}: right arm`);
      assert.ok(sr.errors.at(-1) > 100 * sr.best.error, `${tensor} ${sr.stencil}: left arm`);
    }
    // an error is the per-entry form of that ε's difference
    const layer = layerWith(mha, r.C, r.heads, r.W);
    try {
      const opts = { B: r.B, T: r.T, G: r.dY, tensor, index: 0, eps: [SWEEP_EPS[8]] };
      const n = layer.numericGradient(r.X, { ...opts, stencil: 'two-point' }).numeric[0];
      const a = s.analytic;
      assert.equal(two.errors[8], Math.abs(a - n) / Math.max(Math.abs(a), Math.abs(n), 1e-12));
    } finally {
      layer.free();
    }
    t.diagnostic(
      `${s.label}: two-point lowest ${two.best.error.toExponential(1)} at ε = ${two.best.eps.toExponential(1)}, five-point ${five.best.error.toExponential(1)} at ${five.best.eps.toExponential(1)}`,
    );
  }
  assert.throws(() => epsilonSweep(mha, r, 'Q'), /tensor must be one of Wq, Wk, Wv, Wo, X/);
});
