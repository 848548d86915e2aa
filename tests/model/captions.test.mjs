// Every figure caption of lessons 4 and 5 written as NumPy runs, in Debian's python3 + NumPy, on
// the lesson's arrays and gives the tensor the page shows (to 1e-12 relative, normwise: NumPy's
// BLAS sums in another order than the page's C). Two namespaces:
//   - the lesson's .npz (lesson-arrays.js, written by writeNpz, read by np.load): every input of a
//     caption is then the page's own array, bit for bit, and the helpers split_heads /
//     merge_heads and B, T, C, h, hs are the lesson's Copy-as-NumPy script's;
//   - the lesson's Copy-as-NumPy script run as is (no gradient check), its layer's cache, weights
//     and gradients under their names: the captions use the script's names.
// Lesson 4's map titles (dV[0, 0], dX[1], ...) are NumPy too: each indexes the full gradient.
// Lessons 1-3: lesson1Captions, lesson2Captions, lesson3Captions (maps, tables, figure labels,
// the step view) in the lesson's script and on its .npz, each against the page's value.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lesson4, lesson4Captions, gradientView } from '../../web/model/lesson4.js';
import { attentionCaptions } from '../../web/model/training.js';
import {
  lesson1Arrays,
  lesson2Arrays,
  lesson3Arrays,
  lesson4Arrays,
  lesson5Arrays,
} from '../../web/model/lesson-arrays.js';
import {
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  trainingScript,
} from '../../web/model/numpy-scripts.js';
import { lesson1, lesson1Captions } from '../../web/model/lesson1.js';
import { lesson2, lesson2Captions } from '../../web/model/lesson2.js';
import { lesson3, lesson3Captions, lesson3Step } from '../../web/model/lesson3.js';
import { courseData } from '../../web/model/course.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { block2d, meanOverHeads, slice2d } from '../../web/model/arrays.js';
import { writeNpz } from '../../web/check.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { PYTHON, loadMHA } from '../helpers.mjs';

const mha = await loadMHA();
const TOL = 1e-12;

/** Runs `program` in python3; returns the JSON object printed on its last line. */
function python(program) {
  const out = execFileSync(PYTHON, ['-'], {
    input: program,
    encoding: 'utf8',
    env: { ...process.env, PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
  const line = out.trim().split('\n').at(-1);
  return JSON.parse(line);
}

// Python that evaluates each { key: code } and prints { key: [shape, flat values, shapeOf] }, with
// `shapes` ({ key: '(B, h, T, hs)' }) evaluated in the same namespace.
function evaluate(exprs, shapes = {}) {
  const items = Object.entries(exprs).map(([k, c]) => [k, c, shapes[k] ?? null]);
  return `
import json as _json
_out = {}
for _key, _code, _shape in _json.loads(${JSON.stringify(JSON.stringify(items))}):
    _v = np.asarray(eval(_code))
    _out[_key] = [list(_v.shape), [float(x) for x in _v.reshape(-1)],
                  list(eval(_shape)) if _shape else None]
print(_json.dumps(_out))
`;
}

/** Normwise: max |a - b| <= tol * max |b|. */
function assertClose(got, want, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    assert.ok(Number.isFinite(got[i]), `${what}[${i}]: ${got[i]}`);
    diff = Math.max(diff, Math.abs(got[i] - want[i]));
    scale = Math.max(scale, Math.abs(want[i]));
  }
  assert.ok(scale > 0, `${what}: all zero`);
  assert.ok(diff <= TOL * scale, `${what}: max diff ${diff} vs scale ${scale}`);
  return diff / scale;
}

/** np.load of `arrays` (lesson-arrays.js form) into the namespace, after `prelude`. */
function withNpz(arrays, run) {
  const dir = mkdtempSync(join(tmpdir(), 'mha-captions-'));
  try {
    const path = join(dir, 'lesson.npz');
    writeFileSync(path, writeNpz(arrays));
    return run(`globals().update(dict(np.load(${JSON.stringify(path)})))\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The script without its gradient check (the captions need its functions and arrays only). */
function noCheck(script) {
  assert.ok(script.includes('\nFULL_CHECK = True\n'), 'the script has FULL_CHECK = True');
  return script.replace('\nFULL_CHECK = True\n', '\nFULL_CHECK = False\n');
}

test('lesson4Captions: one per gradient, in mha.gradOrder, no `.T` on a 4-D array', () => {
  const caps = lesson4Captions(mha);
  assert.deepEqual(
    caps.map((c) => c.name),
    mha.gradOrder,
  );
  for (const c of caps) {
    assert.ok(c.code && c.shape, c.name);
    // the captions that did not run: att.T, V.T, dscores.T, merge(...), X.T, √
    assert.doesNotMatch(c.code, /\b(att|V|dscores|Q|K|X|dQ|dK|dV)\.T\b|\bmerge\(|√/, c.code);
  }
});

test('lesson 4: every caption, on the lesson .npz, gives the page gradient', (t) => {
  const r = lesson4(mha);
  const caps = lesson4Captions(mha);
  const exprs = Object.fromEntries(caps.map((c) => [c.name, c.code]));
  const shapes = Object.fromEntries(caps.map((c) => [c.name, c.shape]));
  // the titles: each map shows gradient[b] or gradient[b, h]; here at b = 1, h = 3
  const views = {};
  for (const c of caps) {
    const v = gradientView(r.grads[c.name], 1, 3);
    if (v.where) exprs[`${c.name}${v.where}`] = `${c.name}${v.where}`;
    views[`${c.name}${v.where}`] = v;
  }
  const got = withNpz(lesson4Arrays(mha, courseData(mha)), (load) =>
    python(`${noCheck(lesson4Script())}\n${load}${evaluate(exprs, shapes)}`),
  );
  const worst = [];
  for (const c of caps) {
    const g = r.grads[c.name];
    const [shape, data, symbolic] = got[c.name];
    assert.deepEqual(shape, Array.from(g.shape), `${c.name}: shape`);
    assert.deepEqual(symbolic, Array.from(g.shape), `${c.name}: ${c.shape}`);
    worst.push(`${c.name} ${assertClose(data, g.data, c.code).toExponential(1)}`);
  }
  for (const [key, v] of Object.entries(views)) {
    if (!(key in got)) continue;
    assert.deepEqual(got[key][0], [v.rows, v.cols], `${key}: shape`);
    assertClose(got[key][1], v.data, key);
  }
  t.diagnostic(`relative difference, normwise: ${worst.join(', ')}`);
});

test("lesson 4: every caption, in the script's own namespace, gives the page gradient", () => {
  const r = lesson4(mha);
  const caps = lesson4Captions(mha);
  const exprs = Object.fromEntries(caps.map((c) => [c.name, c.code]));
  // the names the script's layer keeps: its cache (X, Q, K, V, att, concat, ...), weights, grads
  const names =
    'globals().update(layer.cache)\nglobals().update(layer.W)\nglobals().update(layer.grads)\n';
  const got = python(`${noCheck(lesson4Script())}\n${names}${evaluate(exprs)}`);
  for (const c of caps) assertClose(got[c.name][1], r.grads[c.name].data, `${c.name} = ${c.code}`);
});

test('lesson 5: the attention captions, on the lesson .npz, before and after steps', () => {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42, rng: 'default_rng' });
  const trainer = new Trainer(mha, model);
  try {
    const caps = attentionCaptions(model.heads);
    assert.deepEqual(
      caps.map((c) => c.code),
      ['att[0, 0]', 'att[0, 1]', 'att[0, 2]', 'att[0, 3]', 'att[0].mean(axis=0)'],
    );
    // the page's figure data (lesson5.js attentionMaps): head i, then the mean over heads
    const T = model.T;
    const shown = (att, i) =>
      i < model.heads ? slice2d(att, i, T, T) : meanOverHeads(att, 0, model.heads, T);
    for (const steps of [0, 2]) {
      for (let k = 0; k < steps; k++) trainer.step(0.1);
      const arrays = lesson5Arrays(mha, model, {
        weights: trainer.layer.weights,
        att: trainer.att,
        losses: trainer.losses,
        lrs: trainer.lrs,
      });
      const exprs = Object.fromEntries(caps.map((c) => [c.name, c.code]));
      const shapes = Object.fromEntries(caps.map((c) => [c.name, c.shape]));
      // after steps the maps show the attention at the weights now: the file's att_after
      const bind = steps ? 'att = att_after\n' : '';
      const got = withNpz(arrays, (load) =>
        python(`import numpy as np\nT = ${T}\n${load}${bind}${evaluate(exprs, shapes)}`),
      );
      caps.forEach((c, i) => {
        assert.deepEqual(got[c.name][0], [T, T], `${c.name}: shape`);
        assert.deepEqual(got[c.name][2], [T, T], `${c.name}: ${c.shape}`);
        assertClose(got[c.name][1], shown(trainer.att, i), `${steps} steps, ${c.code}`);
      });
    }
  } finally {
    trainer.free();
  }
});

test("lesson 5: the attention captions name the Copy-as-NumPy script's att", () => {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const script = trainingScript({
    title: 'captions',
    sentence: DEFAULT_SENTENCE,
    tokens,
    lrs: [0.1, 0.1],
    check: false,
  });
  const model = sentenceModel(mha, { tokens, C: 64, heads: 4, seed: 42, rng: 'default_rng' });
  const trainer = new Trainer(mha, model);
  try {
    trainer.step(0.1);
    trainer.step(0.1);
    const caps = attentionCaptions(model.heads);
    const exprs = Object.fromEntries(caps.map((c) => [c.name, c.code]));
    const got = python(`${script}\n${evaluate(exprs)}`);
    const T = model.T;
    caps.forEach((c, i) => {
      const want =
        i < model.heads ? slice2d(trainer.att, i, T, T) : meanOverHeads(trainer.att, 0, 4, T);
      assertClose(got[c.name][1], want, c.code);
    });
  } finally {
    trainer.free();
  }
});

// ---- lessons 1-3: the same, for lesson1Captions, lesson2Captions, lesson3Captions ----

/**
 * Runs `caps` (keyed by their index) after `program` and compares each with want[i] ({ data,
 * shape, zero }): to TOL relative, or, where the page's value is 0 (a proof), to TOL times
 * `zero` absolute. The symbolic shape of each caption must be the value's shape too.
 */
function checkCaptions(caps, program, want) {
  const exprs = Object.fromEntries(caps.map((c, i) => [i, c.code]));
  const shapes = Object.fromEntries(caps.map((c, i) => [i, c.shape]));
  const got = python(`${program}\n${evaluate(exprs, shapes)}`);
  caps.forEach((c, i) => {
    const w = want[i];
    const what = `${c.name} = ${c.code}`;
    assert.ok(w, `${what}: the test knows its page value`);
    const [shape, data, symbolic] = got[i];
    assert.deepEqual(shape, w.shape, `${what}: shape`);
    assert.deepEqual(symbolic, w.shape, `${what}: ${c.shape}`);
    if (w.zero === undefined) {
      assertClose(data, Array.from(w.data), what);
      return;
    }
    assert.equal(data.length, w.data.length, `${what}: length`);
    data.forEach((v, k) => {
      assert.ok(Math.abs(v - w.data[k]) <= TOL * w.zero, `${what}[${k}]: ${v} vs ${w.data[k]}`);
    });
  });
}

const tensor = (data, shape) => ({ data, shape: [...shape] });

test('lesson 1: every caption, in the script and on the lesson .npz, gives the page value', () => {
  const tokens = tokenize(DEFAULT_SENTENCE);
  const r = lesson1(mha, { tokens });
  const caps = lesson1Captions();
  const T = r.T;
  const byName = {
    A1: tensor(r.A1, [T, T]),
    A2: tensor(r.A2, [T, T]),
    diff: tensor(r.diff, [T, T]),
    max_gap: tensor([r.maxGap], []),
  };
  const want = caps.map((c) => byName[c.name]);
  const script = lesson1Script({ sentence: DEFAULT_SENTENCE, tokens });
  checkCaptions(caps, script, want);
  withNpz(lesson1Arrays(mha, { tokens }), (load) =>
    checkCaptions(caps, `${script}\n${load}`, want),
  );
});

test('lesson 2: every caption, in the script and on the lesson .npz, gives the page value', () => {
  const r = lesson2(mha);
  const { T, C, heads, hs } = r;
  const caps = lesson2Captions(r);
  const head = (i) => tensor(block2d(r.Qheads, i, T, hs), [T, hs]);
  const proof = (data, shape) => ({ ...tensor(data, shape), zero: r.qMaxAbs });
  const byName = {
    x: tensor(r.x, [1, T, C]),
    q: tensor(r.q, [1, T, C]),
    q4: tensor(r.q, [1, T, heads, hs]),
    heads: tensor(r.Qheads, [1, heads, T, hs]),
    merged: tensor(r.q, [1, T, C]),
    shapeX: tensor(r.shapes.x, [3]),
    shapeQ4: tensor(r.shapes.q4, [4]),
    shapeHeads: tensor(r.shapes.heads, [4]),
    head_max_diff: proof([r.headMaxDiff], []),
    per_head: proof(r.perHead, [heads]),
    round_trip: proof([r.roundTrip], []),
  };
  for (let i = 0; i < heads; i++) {
    byName[`head ${i}`] = head(i);
    byName[`columns ${i}`] = head(i); // the proof: head i is these columns of q
  }
  const want = caps.map((c) => byName[c.name]);
  assert.equal(caps.filter((c) => c.kind === 'stage').length, 5);
  checkCaptions(caps, lesson2Script(), want);
  // the .npz names the input X (the notebook check's name) and the split Q: here x and heads
  withNpz(lesson2Arrays(r), (load) =>
    checkCaptions(caps, `${lesson2Script()}\n${load}x = X\nheads = Q\n`, want),
  );
});

/** Lesson 3's page values, by caption, for result r (step view at batch item b, head h). */
function lesson3Want(r, caps, b, h) {
  const { B, T, C, heads, hs } = r;
  const t = r.tensors;
  const s = lesson3Step(r, b, h);
  const merged = mha.mergeHeads(t.Q.data, { B, T, C, heads }); // X @ Wq
  const head0 = [];
  for (let bi = 0; bi < B; bi++) head0.push(...block2d(t.headout.data, bi * heads, T, hs));
  const stages = [
    tensor(t.X?.data ?? courseData(mha).X, [B, T, C]),
    tensor(merged, [B, T, C]),
    tensor(merged, [B, T, heads, hs]),
    ...['Q', 'scores', 'att', 'headout', 'concat', 'Y'].map((k) => tensor(t[k].data, t[k].shape)),
  ];
  const maps = [];
  for (let bi = 0; bi < B; bi++) {
    for (let i = 0; i < heads; i++) maps.push(tensor(slice2d(r.att, bi * heads + i, T, T), [T, T]));
    maps.push(tensor(meanOverHeads(r.att, bi, heads, T), [T, T]));
  }
  const steps = [
    tensor(s.QK, [T, T]),
    tensor(s.scores, [T, T]),
    tensor(s.att, [T, T]),
    tensor(s.headout, [T, hs]),
  ];
  const want = [...stages, ...maps, ...steps, tensor(head0, [B, T, hs])];
  assert.equal(want.length, caps.length, 'a page value for every caption');
  return want;
}

for (const causal of [false, true]) {
  test(`lesson 3 (causal ${causal}): every caption, in the script and on the .npz`, () => {
    const r = lesson3(mha, { causal });
    const [b, h] = [1, 2];
    const caps = lesson3Captions({ ...r, b, h });
    const want = lesson3Want(r, caps, b, h);
    // the stage table is these captions, with the page's shapes
    assert.deepEqual(
      r.stages.map((st) => st.shape),
      want.slice(0, 9).map((w) => w.shape),
    );
    const names = 'globals().update(c)\n'; // (the forward's intermediates, by name)
    const script = `${lesson3Script({ causal })}\n${names}`;
    checkCaptions(caps, script, want);
    withNpz(lesson3Arrays(mha, courseData(mha), { causal }), (load) =>
      checkCaptions(caps, `${script}${load}`, want),
    );
  });
}
