// web/model/checkpoints.js and the checkpoint lines of the Copy-as-NumPy scripts: every lesson's
// checkpoint values equal what the lesson's figures show (recomputed here through the JS API, as
// tests/browser/expected.mjs does, not through web/model/); each script, run in Debian's NumPy,
// prints the same labels in the same order, the drawn values bit for bit and the computed ones
// to 1e-12 relative (NumPy's BLAS sums in another order: the last digit or two differ); and
// pythonRepr writes every float as Python's repr does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  CHECKPOINT_LESSONS,
  checkpointLabels,
  checkpointLine,
  checkpoints,
  pythonRepr,
  pythonValues,
} from '../../web/model/checkpoints.js';
import {
  checkpointPrints,
  pyNum,
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  trainingScript,
} from '../../web/model/numpy-scripts.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { Trainer } from '../../web/jobs/trainer.js';
import * as E from '../browser/expected.mjs';
import { PYTHON } from '../helpers.mjs';
import { AGREEMENT } from '../../web/model/agreement.js';

const { mha } = E;
const TOKENS = tokenize(DEFAULT_SENTENCE);
const REL = 1e-12; // computed values: NumPy's BLAS sums in another order

function runPython(script) {
  return execFileSync(PYTHON, ['-'], {
    input: script,
    encoding: 'utf8',
    env: { ...process.env, PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The checkpoint lines a script printed, in order: [{ label, text, values }]. */
function printedCheckpoints(out, labels) {
  const lines = out.split('\n');
  return labels.map((label) => {
    const re = new RegExp(`^${escapeRe(label)} = (.*)$`);
    const hits = lines.filter((l) => re.test(l));
    assert.equal(hits.length, 1, `"${label} =" printed ${hits.length} times in:\n${out}`);
    const text = hits[0].match(re)[1];
    return { label, line: hits[0], index: lines.indexOf(hits[0]), values: JSON.parse(text) };
  });
}

const asList = (v) => (Array.isArray(v) ? v : [v]);

/** Values equal bit for bit (exact) or to REL relative per entry (lastDigits). */
function assertAgree(got, want, kind, what) {
  const g = asList(got);
  const w = asList(want);
  assert.equal(Array.isArray(got), Array.isArray(want), `${what}: a list vs a number`);
  assert.equal(g.length, w.length, `${what}: ${g.length} values, expected ${w.length}`);
  for (let i = 0; i < w.length; i++) {
    if (kind === 'exact') {
      assert.ok(Object.is(g[i], w[i]), `${what}[${i}]: ${g[i]} vs ${w[i]} (a draw: exact)`);
    } else {
      const tol = REL * Math.max(Math.abs(g[i]), Math.abs(w[i]));
      assert.ok(Math.abs(g[i] - w[i]) <= tol, `${what}[${i}]: ${g[i]} vs ${w[i]}`);
    }
  }
}

/** The lesson's script printed its checkpoints: same labels, same order, values that agree. */
function assertScriptPrints(t, lesson, out, list) {
  assert.deepEqual(
    list.map((c) => c.label),
    checkpointLabels(lesson),
  );
  const got = printedCheckpoints(out, checkpointLabels(lesson));
  for (let i = 1; i < got.length; i++) assert.ok(got[i].index > got[i - 1].index, 'order');
  let worst = 0;
  list.forEach((c, i) => {
    assertAgree(got[i].values, c.values, c.kind, `${lesson} ${c.label}`);
    // where the numbers are the same, the page's line is the script's line, character for
    // character (pythonRepr): a draw always
    const same = asList(got[i].values).every((v, j) => Object.is(v, asList(c.values)[j]));
    if (same) assert.equal(checkpointLine(c), got[i].line, `${lesson}: the line of ${c.label}`);
    if (c.kind === 'exact') assert.ok(same, `${c.label}: a draw differs`);
    asList(c.values).forEach((v, j) => {
      const g = asList(got[i].values)[j];
      if (v !== g) worst = Math.max(worst, Math.abs(v - g) / Math.abs(v));
    });
  });
  t.diagnostic(`${lesson}: ${list.length} checkpoints, largest relative difference ${worst}`);
}

const slice = (a, off, n) => Array.from(a).slice(off, off + n);

/** The course demo's forward (and backward) through the API: every tensor by name. */
function courseTensors({ causal = false, backward = false } = {}) {
  const { X, W, dY, B, T, C, heads } = E.courseStream();
  const layer = mha.createLayer({ C, heads, seed: 0 });
  ['Wq', 'Wk', 'Wv', 'Wo'].forEach((n, i) => layer.weights[n].set(W[i]));
  const { Y } = layer.forward(X, { B, T, causal });
  if (backward) layer.backward(dY);
  const get = (n) => layer.tensor(n).data;
  const t = { X, Y, dY, Q: get('Q'), K: get('K'), scores: get('scores'), headout: get('headout') };
  if (backward) Object.assign(t, { dWo: get('dWo'), dX: get('dX') });
  layer.free();
  return { ...t, B, T, C, heads, hs: C / heads };
}

/** NumPy's a.std(): the population standard deviation, mean first. */
function std(a) {
  const m = a.reduce((s, v) => s + v, 0) / a.length;
  return Math.sqrt(a.reduce((s, v) => s + (v - m) ** 2, 0) / a.length);
}

/** A model result per lesson (the default views). */
const SAMPLE = {
  lesson1: () => lesson1(mha, { tokens: TOKENS }),
  lesson2: () => lesson2(mha),
  lesson3: () => lesson3(mha, {}),
  lesson4: () => lesson4(mha),
  lesson5: () => ({ Y: [1, 2, 3, 4, 5], losses: [0.5] }),
};

test('pythonRepr writes every float as Python repr() does', () => {
  const xs = [
    0,
    -0,
    1,
    -1,
    0.1,
    1.5,
    100,
    1e15,
    1e16,
    1.2345e16,
    123456789012345680,
    1e21,
    1e22,
    1e-4,
    1.5e-4,
    9.99e-5,
    1e-5,
    1.5e-7,
    -2.5e-7,
    5e-324,
    1.7976931348623157e308,
    1 / 3,
    -2 / 3,
    0.09011510495957445,
    16.990834216033655,
    123.456,
    0.000123,
    NaN,
    Infinity,
    -Infinity,
  ];
  const lits = xs.map(pyNum); // round-trips every double (tests/model/scripts.test.mjs)
  const out = runPython(`for v in [${lits.join(', ')}]:\n    print(repr(float(v)))\n`);
  assert.deepEqual(xs.map(pythonRepr), out.trim().split('\n'));
  assert.equal(pythonValues([1, -0.5]), '[1.0, -0.5]');
  assert.equal(pythonValues(2), '2.0');
  assert.throws(() => checkpointLabels('lesson9'), /no lesson "lesson9"/);
});

test('checkpointPrints: one print per label, from the same list', () => {
  for (const lesson of CHECKPOINT_LESSONS) {
    // each kind is one of agreement.js's; only the draws (X, x) are bit-identical
    for (const label of checkpointLabels(lesson)) {
      const kind = checkpoints(lesson, SAMPLE[lesson]()).find((c) => c.label === label).kind;
      assert.ok(Object.hasOwn(AGREEMENT, kind), `${label}: ${kind}`);
      assert.equal(kind === 'exact', /^[xX]\[/.test(label), `${label}: ${kind}`);
    }
    const lines = checkpointPrints(lesson)
      .split('\n')
      .filter((l) => l.startsWith('print('));
    assert.deepEqual(
      lines,
      checkpointLabels(lesson).map(
        (l) => `print(${JSON.stringify(`${l} =`)}, np.asarray(${l}).tolist())`,
      ),
    );
  }
});

test('lesson 1: checkpoints equal the figures; the script prints them', (t) => {
  const r = lesson1(mha, { tokens: TOKENS });
  const e = E.lesson1(DEFAULT_SENTENCE);
  const list = checkpoints('lesson1', r);
  assert.deepEqual(
    list.map((c) => c.values),
    [slice(e.A1, 0, 4), slice(e.A2, 0, 4), e.maxGap],
  );
  const out = runPython(lesson1Script({ sentence: DEFAULT_SENTENCE, tokens: TOKENS }));
  assertScriptPrints(t, 'lesson1', out, list);
  // a sentence of 2 tokens: A1[0, :4] has 2 entries, in the box and in NumPy
  const short = tokenize('Bay lanterns');
  const list2 = checkpoints('lesson1', lesson1(mha, { tokens: short }));
  assert.equal(list2[0].values.length, 2);
  assertScriptPrints(
    t,
    'lesson1',
    runPython(lesson1Script({ sentence: 'Bay lanterns', tokens: short })),
    list2,
  );
});

test('lesson 2: x exact, q and heads[0, 1] equal the small projection of head 1', (t) => {
  const r = lesson2(mha);
  const rng = mha.rng(42, 'default_rng');
  const x = rng.standardNormal(6 * 64);
  const Wq = Float64Array.from(rng.standardNormal(64 * 64), (z) => z / 8);
  rng.free();
  // x @ Wq[:, 16:32], row 0, first 4 columns; head 1 of q is exactly these (the proof)
  const proj = [0, 1, 2, 3].map((d) => {
    let s = 0;
    for (let k = 0; k < 64; k++) s += x[k] * Wq[k * 64 + 16 + d];
    return s;
  });
  const q0 = [0, 1, 2, 3].map((d) => {
    let s = 0;
    for (let k = 0; k < 64; k++) s += x[k] * Wq[k * 64 + d];
    return s;
  });
  const list = checkpoints('lesson2', r);
  const [cx, cq, cheads, cproj] = list.map((c) => c.values);
  assert.deepEqual(cx, slice(x, 0, 4));
  assert.deepEqual(cq, q0);
  assert.deepEqual(cheads, proj, 'heads[0, 1, 0, :4] is the small projection, bit for bit');
  assert.deepEqual(cproj, proj);
  assert.deepEqual(
    list.map((c) => c.kind),
    ['exact', 'lastDigits', 'lastDigits', 'lastDigits'],
  );
  assertScriptPrints(t, 'lesson2', runPython(lesson2Script()), list);
});

test('lesson 3 (causal off / on): X, the spread of Q Kᵀ and scores, headout and Y', (t) => {
  for (const causal of [false, true]) {
    const r = lesson3(mha, { causal });
    const e = courseTensors({ causal });
    const QK = Array.from(e.scores, (s) => s * Math.sqrt(e.hs));
    const list = checkpoints('lesson3', r);
    const v = list.map((c) => c.values);
    assert.deepEqual(v[0], slice(e.X, 0, 4));
    // Q Kᵀ recomputed here from Q and K: the same products, summed in the same order
    assertAgree(v[1], std(QK), 'lastDigits', 'std of Q Kᵀ');
    assert.equal(v[2], std(Array.from(e.scores)), 'std of the scores');
    assert.ok(v[1] > 3.5 && v[1] < 4.5 && v[2] > 0.85 && v[2] < 1.15, `spreads ${v[1]}, ${v[2]}`);
    assert.deepEqual(v[3], slice(e.headout, e.T * e.hs, 4));
    assert.deepEqual(v[4], slice(e.Y, 0, 4));
    assert.equal(r.scoreSpread.before, v[1]);
    assertScriptPrints(t, 'lesson3', runPython(lesson3Script({ causal })), list);
  }
});

test('lesson 4: the loss, dWo[0, :4] and dX[0, 0, :4]', (t) => {
  const r = lesson4(mha);
  const e = courseTensors({ backward: true });
  const list = checkpoints('lesson4', r);
  let L = 0;
  for (let i = 0; i < e.Y.length; i++) L += e.dY[i] * e.Y[i];
  assert.deepEqual(
    list.map((c) => c.values),
    [L, slice(e.dWo, 0, 4), slice(e.dX, 0, 4)],
  );
  const script = lesson4Script();
  assert.ok(script.includes('\nFULL_CHECK = True\n'));
  const out = runPython(script.replace('\nFULL_CHECK = True\n', '\nFULL_CHECK = False\n'));
  assertScriptPrints(t, 'lesson4', out, list);
});

test('lesson 5: Y and the loss at the initial weights, whatever the steps taken', (t) => {
  const model = sentenceModel(mha, { tokens: TOKENS, C: 64, heads: 4, seed: 42 });
  const trainer = new Trainer(mha, model);
  try {
    const list = checkpoints('lesson5', trainer);
    const e = E.sentenceForward({});
    const losses = E.sentenceLosses({}, 1);
    assert.deepEqual(
      list.map((c) => c.values),
      [slice(e.Y, 0, 4), losses[0]],
    );
    for (const lrs of [[], [0.1, 0.05]]) {
      const script = trainingScript({
        title: 'lesson 5',
        sentence: DEFAULT_SENTENCE,
        tokens: TOKENS,
        lrs,
        check: false,
        checkpoints: 'lesson5',
      });
      assertScriptPrints(t, 'lesson5', runPython(script), list);
    }
    // the playground's script (no checkpoints option) prints none
    const pg = trainingScript({ title: 'pg', sentence: 'a b', tokens: ['a', 'b'], check: false });
    assert.doesNotMatch(pg, /Checkpoint/);
  } finally {
    trainer.free();
  }
});
