// web/model/numpy-scripts.js and web/model/labels.js: every "Copy as NumPy" script is run with
// python3 + NumPy and the numbers it prints (plus a JSON dump of its arrays, appended here) are
// compared with what the page's model computes for the same settings; pyStr / pyNum are checked
// through Python's own parser; the axis labels against hand-derived arrays.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  pyStr,
  pyNum,
  xSnippet,
  lesson1Script,
  lesson2Script,
  lesson3Script,
  lesson4Script,
  trainingScript,
  layerObjectScript,
} from '../../web/model/numpy-scripts.js';
import {
  positionLabels,
  batchTokenLabels,
  headColumnLabels,
  columnLabels,
} from '../../web/model/labels.js';
import { DEFAULT_SENTENCE, tokenize } from '../../web/model/tokens.js';
import { buildInput } from '../../web/model/input.js';
import { lesson1 } from '../../web/model/lesson1.js';
import { lesson2 } from '../../web/model/lesson2.js';
import { lesson3 } from '../../web/model/lesson3.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { sentenceModel } from '../../web/model/sentence-model.js';
import { drawScaled } from '../../web/model/input.js';
import { layerWith } from '../../web/model/layers.js';
import { Trainer } from '../../web/jobs/trainer.js';
import { backwardOrder } from '../../web/model/gradcheck-report.js';
import { loadMHA } from '../helpers.mjs';
import { LAYER_SAVE_LINE } from '../../web/model/custom-arrays.js';
import { courseName } from '../../web/check/names.js';
import { readNpz, checkNotebook } from '../../web/check.js';

const mha = await loadMHA();
const TOL = 1e-12;

/** Runs `script` (plus `extra` Python lines) with python3; returns stdout. */
function runPython(script, extra = '') {
  return execFileSync('/usr/bin/python3', ['-'], {
    input: `${script}\n${extra}\n`,
    encoding: 'utf8',
    env: { ...process.env, PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 64 << 20,
  });
}

/** Python that prints one line `JSON {...}` with the given name -> expression pairs. */
function dump(pairs) {
  const body = Object.entries(pairs)
    .map(([k, expr]) => `${JSON.stringify(k)}: ${expr}`)
    .join(', ');
  return `import json as _json\nprint("JSON", _json.dumps({${body}}))`;
}

function parseDump(out) {
  const line = out.split('\n').find((l) => l.startsWith('JSON '));
  assert.ok(line, `no JSON line in:\n${out}`);
  return JSON.parse(line.slice(5));
}

/** The float printed after `label =` (Python repr). */
function printed(out, label) {
  const m = out.match(new RegExp(`^${label} = (\\S+)`, 'm'));
  assert.ok(m, `no "${label} =" in:\n${out}`);
  return Number(m[1]);
}

/** The interval a number printed with %.Ne stands for: { lo, hi } (± half its last digit). */
function printedInterval(text) {
  const m = text.match(/^(\d)\.(\d+)e([+-]\d+)$/);
  assert.ok(m, `not a %e number: ${text}`);
  const half = 0.5 * 10 ** (Number(m[3]) - m[2].length);
  return { lo: Number(text) - half, hi: Number(text) + half };
}

const flat = (a) => (Array.isArray(a) ? a.flat(Infinity) : Array.from(a));

/** Normwise: max |a - b| <= tol * max(max |b|, floor). */
function assertClose(a, b, what, tol = TOL, floor = 0) {
  const x = flat(a);
  const y = flat(b);
  assert.equal(x.length, y.length, `${what}: length`);
  let diff = 0;
  let scale = floor;
  for (let i = 0; i < x.length; i++) {
    assert.ok(Number.isFinite(x[i]) && Number.isFinite(y[i]), `${what}[${i}] not finite`);
    diff = Math.max(diff, Math.abs(x[i] - y[i]));
    scale = Math.max(scale, Math.abs(y[i]));
  }
  assert.ok(diff <= tol * scale, `${what}: max diff ${diff} vs scale ${scale}`);
}

const maxAbsOf = (a) => Array.from(a).reduce((m, v) => Math.max(m, Math.abs(v)), 0);
const normOf = (a) => Math.sqrt(Array.from(a).reduce((s, v) => s + v * v, 0));

const SENTENCE = 'The cat saw the "Cat" — naïve? 🙂 it\'s\ta\\b';
const TOKENS = tokenize(SENTENCE);

test('pyStr: Python parses every literal back to the very same string', () => {
  assert.equal(pyStr('abc'), '"abc"');
  assert.equal(pyStr('a"b'), '"a\\"b"');
  assert.equal(pyStr('a\\b'), '"a\\\\b"');
  assert.equal(pyStr("it's"), '"it\'s"');
  assert.equal(pyStr('a\nb\tc'), '"a\\nb\\tc"');
  assert.equal(pyStr('\u0001'), '"\\u0001"');
  assert.equal(pyStr('naïve 🙂'), '"naïve 🙂"');
  assert.equal(pyStr(42), '"42"');
  assert.equal(pyStr(null), '"null"');
  const cases = [
    '',
    'plain',
    'quote " and \' both',
    'back\\slash \\n not a newline',
    'line\nbreak\r\n\ttab\f\b',
    '\u0000\u001f\u007f',
    'naïve Ünter ß',
    '🙂👍🏽 emoji',
    '\u2028\u2029 separators',
    '\ud800 lone surrogate',
    '{x} %s f"{y}"',
    SENTENCE,
  ];
  const out = runPython(`import json\nprint(json.dumps([${cases.map(pyStr).join(', ')}]))`).trim();
  assert.deepEqual(JSON.parse(out), cases);
});

test('pyNum: Python literals for finite values round-trip bit for bit; NaN and ±inf', () => {
  assert.equal(pyNum(NaN), 'float("nan")');
  assert.equal(pyNum(Infinity), 'float("inf")');
  assert.equal(pyNum(-Infinity), '-float("inf")');
  assert.equal(pyNum(0.1), '0.1');
  assert.equal(pyNum(1e-300), '1e-300');
  assert.equal(pyNum(1e21), '1e+21');
  assert.equal(pyNum(-2.5e-7), '-2.5e-7');
  const xs = [
    0,
    1,
    -1,
    0.1,
    0.05,
    1e-300,
    5e-324,
    1e21,
    1e-7,
    -2.5e-7,
    1 / 3,
    1.7976931348623157e308,
  ];
  const out = runPython(
    `import struct\nfor v in [${xs.map(pyNum).join(', ')}]:\n` +
      `    print(struct.pack(">d", float(v)).hex())`,
  )
    .trim()
    .split('\n');
  const hex = (x) =>
    Buffer.from(new Float64Array([x]).buffer)
      .reverse()
      .toString('hex');
  assert.deepEqual(out, xs.map(hex));
  const special = runPython(
    `import math\nv = [${[NaN, Infinity, -Infinity].map(pyNum).join(', ')}]\n` +
      `print(math.isnan(v[0]), v[1] == math.inf, v[2] == -math.inf)`,
  ).trim();
  assert.equal(special, 'True True True');
});

test('pyNum(-0) keeps the sign of zero', () => {
  assert.equal(pyNum(-0), '-0.0');
  const out = execFileSync(
    '/usr/bin/python3',
    ['-c', `import math; print(math.copysign(1, ${pyNum(-0)}))`],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(out.trim(), '-1.0');
});

test('labels: positions, batch-token rows, head columns and plain columns', () => {
  assert.deepEqual(positionLabels(0), []);
  assert.deepEqual(positionLabels(3), ['t0', 't1', 't2']);
  assert.deepEqual(batchTokenLabels(2, 3), ['b0 t0', 'b0 t1', 'b0 t2', 'b1 t0', 'b1 t1', 'b1 t2']);
  assert.deepEqual(batchTokenLabels(1, 1), ['b0 t0']);
  assert.deepEqual(batchTokenLabels(0, 4), []);
  assert.deepEqual(headColumnLabels(6, 2), ['h0:0', 'h0:1', 'h1:2', 'h1:3', 'h2:4', 'h2:5']);
  assert.deepEqual(headColumnLabels(4, 4), ['h0:0', 'h0:1', 'h0:2', 'h0:3']);
  assert.deepEqual(headColumnLabels(3, 1), ['h0:0', 'h1:1', 'h2:2']);
  const h64 = headColumnLabels(64, 16);
  assert.equal(h64.length, 64);
  assert.deepEqual([h64[15], h64[16], h64[63]], ['h0:15', 'h1:16', 'h3:63']);
  assert.deepEqual(columnLabels(3), ['0', '1', '2']);
  assert.deepEqual(columnLabels(3, 5), ['5', '6', '7']);
  assert.deepEqual(columnLabels(0, 9), []);
});

test('xSnippet: tokens, rows and X equal buildInput for default_rng / legacy, PE off / on', () => {
  for (const [rng, pe] of [
    ['default_rng', false],
    ['legacy', false],
    ['default_rng', true],
  ]) {
    const C = 8;
    const seed = 5;
    const out = runPython(
      xSnippet({ sentence: SENTENCE, tokens: TOKENS, C, seed, rng, pe }),
      dump({ tokens: 'tokens', ids: 'ids', X: 'X.tolist()', shape: 'list(X.shape)' }),
    );
    const r = mha.rng(seed, rng);
    const ref = buildInput(r, TOKENS, C, { pe });
    r.free();
    const d = parseDump(out);
    assert.deepEqual(d.tokens, TOKENS);
    assert.deepEqual(d.ids, ref.ids);
    assert.deepEqual(d.shape, [1, TOKENS.length, C]);
    // PE uses sin, cos and **: not correctly rounded, so ~1e-16 relative rather than bits
    assertClose(d.X, ref.X, `X (${rng}, pe ${pe})`, pe ? 1e-14 : 0);
  }
});

test('lesson1Script prints the maxGap, argmaxes and attention of lesson1()', () => {
  const C = 16;
  const hs = 4;
  const seed = 3;
  const out = runPython(
    lesson1Script({ sentence: SENTENCE, tokens: TOKENS, C, hs, seed }),
    dump({ A1: 'A1.tolist()', A2: 'A2.tolist()', rows: 'rows' }),
  );
  const r = lesson1(mha, { tokens: TOKENS, C, hs, seed });
  const d = parseDump(out);
  assertClose(d.A1, r.A1, 'A1');
  assertClose(d.A2, r.A2, 'A2');
  const gap = printed(out, 'maxGap');
  assert.ok(Math.abs(gap - r.maxGap) <= TOL * r.maxGap, `maxGap ${gap} vs ${r.maxGap}`);
  // the argmaxes: a row whose two largest weights are equal to the last bits (repeated tokens
  // give exact ties) is decided by rounding, which differs between BLAS kernels: there either
  // index of the top is right; every other row must agree exactly
  const argmax = (label) => JSON.parse(out.match(new RegExp(`^argmax ${label}: (.*)$`, 'm'))[1]);
  const tops1 = tops(d.A1);
  const tops2 = tops(d.A2);
  const sameTop = (got, want, top, what) =>
    top.forEach((ties, i) => {
      assert.ok(ties.includes(got[i]) && ties.includes(want[i]), `${what} row ${i}: ${ties}`);
    });
  sameTop(argmax('A'), Array.from(r.argmax1), tops1, 'argmax A');
  sameTop(argmax('B'), Array.from(r.argmax2), tops2, 'argmax B');
  const decided = tops1.map((t, i) => t.length === 1 && tops2[i].length === 1);
  const nDecided = decided.filter(Boolean).length;
  assert.ok(nDecided >= 4, `${nDecided} of ${decided.length} rows decided`);
  const differs = (rows) => decided.map((ok, i) => ok && rows.includes(i));
  assert.deepEqual(differs(d.rows), differs(Array.from(r.argmaxDiffRows)));
});

/** Per row of A (a list of rows), the indices within 1e-12 (relative) of the row's maximum. */
function tops(A) {
  return A.map((row) => {
    const m = Math.max(...row);
    return row.flatMap((x, j) => (x >= m - 1e-12 * Math.abs(m) ? [j] : []));
  });
}

test('lesson2Script prints the two proofs of lesson2() and the same q', () => {
  const out = runPython(lesson2Script(), dump({ q: 'q.tolist()', heads: 'heads.tolist()' }));
  const r = lesson2(mha);
  const d = parseDump(out);
  assertClose(d.q, r.q, 'q');
  assertClose(d.heads, r.Qheads, 'heads');
  assert.match(
    out,
    /x \(1, 6, 64\) -> q \(1, 6, 64\) -> q4 \(1, 6, 4, 16\) -> heads \(1, 4, 6, 16\)/,
  );
  assert.ok(printed(out, 'headMaxDiff') < 1e-14 && r.headMaxDiff < 1e-14);
  assert.equal(printed(out, 'roundTrip'), 0);
  assert.equal(r.roundTrip, 0);
});

test('lesson3Script (causal off / on): shapes, att, Y and the Wo deltas of lesson3()', () => {
  for (const causal of [false, true]) {
    const out = runPython(
      lesson3Script({ causal }),
      dump({ att: 'c["att"].tolist()', Y: 'c["Y"].tolist()' }),
    );
    const r = lesson3(mha, { causal });
    const d = parseDump(out);
    assertClose(d.att, r.att, `att (causal ${causal})`);
    assertClose(d.Y, r.tensors.Y.data, `Y (causal ${causal})`);
    for (const name of ['X', 'Q', 'att', 'concat', 'Y']) {
      const m = out.match(new RegExp(`^${name} +\\(([\\d, ]+)\\)$`, 'm'));
      assert.ok(m, `${name} shape line`);
      assert.deepEqual(m[1].split(', ').map(Number), Array.from(r.tensors[name].shape), name);
    }
    assert.ok(printed(out, 'rowSumMaxErr') < 1e-14 && r.rowSumMaxErr < 1e-14);
    for (const label of ['blockDiagDelta', 'fullDelta']) {
      const got = JSON.parse(out.match(new RegExp(`^${label} = (.*)$`, 'm'))[1]);
      assertClose(got, r[label], label);
    }
    const bd = JSON.parse(out.match(/^blockDiagDelta = (.*)$/m)[1]);
    assert.ok(bd[0] > 0 && bd.slice(1).every((v) => v === 0), `block-diagonal: ${bd}`);
  }
});

test('lesson4Script (check off): the loss and every gradient max|g| and norm of lesson4()', () => {
  const script = lesson4Script();
  assert.ok(script.includes('\nFULL_CHECK = True\n'));
  const out = runPython(script.replace('\nFULL_CHECK = True\n', '\nFULL_CHECK = False\n'));
  const r = lesson4(mha);
  const loss = printed(out, 'L = sum\\(dY \\* Y\\)');
  assert.ok(Math.abs(loss - r.loss) <= TOL * Math.abs(r.loss), `L ${loss} vs ${r.loss}`);
  for (const name of r.order) {
    const re = new RegExp(`^${name} +\\(([\\d, ]+)\\) +max\\|g\\| = (\\S+) +norm = (\\S+)$`, 'm');
    const m = out.match(re);
    assert.ok(m, `no line for ${name} in:\n${out}`);
    const g = r.grads[name];
    assert.deepEqual(m[1].split(', ').map(Number), Array.from(g.shape), `${name} shape`);
    assertClose([Number(m[2]), Number(m[3])], [maxAbsOf(g.data), normOf(g.data)], name);
  }
});

test('trainingScript: losses after each step and the final attention equal the Trainer', () => {
  const settings = [
    { C: 16, heads: 4, seed: 7, rng: 'default_rng', pe: false, causal: false },
    { C: 12, heads: 3, seed: 1, rng: 'legacy', pe: true, causal: true },
  ];
  const lrs = [0.5, 0.25, 1, 0.05];
  for (const s of settings) {
    const script = trainingScript({
      title: 'test',
      sentence: SENTENCE,
      tokens: TOKENS,
      ...s,
      lrs,
      check: false,
    });
    const out = runPython(
      script,
      dump({ att: 'att.tolist()', losses: '[float(L) for L in losses]' }),
    );
    const model = sentenceModel(mha, { tokens: TOKENS, ...s });
    const trainer = new Trainer(mha, model);
    try {
      for (const lr of lrs) trainer.step(lr);
      const d = parseDump(out);
      assert.equal(d.losses.length, lrs.length + 1);
      const stepLosses = [...out.matchAll(/^step +(\d+) +loss = (\S+)$/gm)].map((m) =>
        Number(m[2]),
      );
      assert.deepEqual(stepLosses, d.losses);
      assert.ok(d.losses.at(-1) < d.losses[0], 'training lowers the loss');
      const what = JSON.stringify(s);
      // PE's sin / cos may differ in the last bit between NumPy and the engine
      for (let k = 0; k <= lrs.length; k++) {
        assertClose([d.losses[k]], [trainer.losses[k]], `${what} loss ${k}`, s.pe ? 1e-11 : TOL);
      }
      assertClose(d.att, trainer.att, `${what} att`, s.pe ? 1e-11 : TOL);
    } finally {
      trainer.free();
    }
  }
});

test('trainingScript with the gradient check: every tensor passes, no FAIL', () => {
  const tokens = tokenize('a b a');
  // with lrs [0.1], layer.grads after the script are the initial weights' gradients, the ones
  // the check compares: the smallest |entry| of each says where cs231n's 1e-8 floor can act
  const out = runPython(
    trainingScript({
      title: 'check',
      sentence: 'a b a',
      tokens,
      C: 4,
      heads: 2,
      seed: 2,
      lrs: [0.1],
      printAtt: false,
    }),
    dump({ smallest: '{k: float(np.abs(v).min()) for k, v in layer.grads.items()}' }),
  );
  const { smallest } = parseDump(out);
  let boundedBelow = 0;
  const rows = [...out.matchAll(/^(\w+) +\(.*\) +(\S+) +(\S+) +(\S+) +(\S+) +(pass|FAIL)$/gm)];
  // lesson 4's backward order, each row named by its gradient: the page's check tables' rows
  assert.deepEqual(
    rows.map((m) => m[1]),
    backwardOrder(mha).map((o) => o.gradient),
  );
  assert.deepEqual(
    rows.map((m) => m[1]),
    ['dWo', 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX'],
  );
  assert.match(out, /max rel err +cs231n rel +norm rel err$/m);
  for (const m of rows) {
    assert.equal(m[6], 'pass', `${m[1]}: rel err ${m[3]}`);
    // the norm-wise error is never above the per-entry maximum (and here far below it)
    assert.ok(Number(m[5]) >= 0 && Number(m[5]) <= Number(m[3]), `${m[1]}: ${m[5]} vs ${m[3]}`);
    // cs231n's form divides by max(|a| + |n|, 1e-8) >= max(|a|, |n|): never above the per-entry
    // error. At least half of it where |a| + |n| >= 1e-8 at the entry that sets the maximum: sure
    // when every |a| is >= 1e-8 (below that the floor decides). Where the analytic and numeric
    // values agree to 8 digits it is half of it to 8 digits, so the printed 3 digits of each
    // decide: the bounds are asserted on the intervals the printed numbers stand for.
    const [rel, sum] = [printedInterval(m[3]), printedInterval(m[4])];
    assert.ok(sum.lo <= rel.hi, `${m[1]}: cs231n ${m[4]} vs ${m[3]}`);
    assert.ok(Number.isFinite(smallest[m[1]]), `${m[1]}: no gradient in layer.grads`);
    if (smallest[m[1]] >= 1e-8) {
      boundedBelow++;
      assert.ok(sum.hi >= rel.lo / 2, `${m[1]}: cs231n ${m[4]} vs ${m[3]}`);
    }
  }
  // most gradients have no entry near the floor: the lower bound is exercised
  assert.ok(boundedBelow >= rows.length / 2, `${boundedBelow} of ${rows.length} bounded below`);
  assert.doesNotMatch(out, /head 0 attention/);
  assert.match(out, /^step +1 +loss = /m);
});

test("layerObjectScript (lesson 5's listing): the class runs, its losses are layer.train's", () => {
  const script = layerObjectScript({ lr: 0.1, runSteps: 10 });
  assert.match(script, /^class MultiHeadAttention:$/m);
  // the course's constructor: sizes and a seed, the weights drawn inside
  assert.match(script, /^ {4}def __init__\(self, C, h, seed=0, causal=False\):$/m);
  assert.match(script, /^layer = MultiHeadAttention\(C, h, seed=rng, causal=False\)/m);
  for (const m of ['def forward(self, X):', 'def backward(self, dY):', 'def step(self, lr):']) {
    assert.ok(script.includes(m), m);
  }
  const out = runPython(script);
  // the listing's data: lesson 5's, the sentence's X, the layer's weights and the target
  const model = sentenceModel(mha, { tokens: tokenize(DEFAULT_SENTENCE) });
  const layer = layerWith(mha, model.C, model.heads, model.W);
  const losses = layer.train(model.X, model.target, { B: 1, T: model.T, steps: 12, lr: 0.1 });
  layer.free();
  const got = [
    printed(out, 'loss after 0 steps'),
    printed(out, 'loss after 1 step'),
    printed(out, 'loss after 11 steps'),
  ];
  assertClose(got, [losses[0], losses[1], losses[11]], 'losses');
  assert.ok(got[2] < got[1] && got[1] < got[0], `the loss goes down: ${got}`);
});

test('MultiHeadAttention(C, h, seed): Wq, Wk, Wv, Wo from default_rng(seed), in that order', () => {
  // the class of every script: on its own generator (an int seed), or continuing a stream
  const C = 8;
  const out = runPython(
    `${layerObjectScript()}\nown = MultiHeadAttention(C=${C}, h=2, seed=5)\n` +
      `r = np.random.default_rng(5)\nskip = r.standard_normal(3)\n` +
      `cont = MultiHeadAttention(C=${C}, h=4, seed=r)\n`,
    dump({
      own: '[own.W[k].tolist() for k in ("Wq", "Wk", "Wv", "Wo")]',
      cont: '[cont.W[k].tolist() for k in ("Wq", "Wk", "Wv", "Wo")]',
      keys: 'list(own.W)',
    }),
  );
  const d = parseDump(out);
  assert.deepEqual(d.keys, ['Wq', 'Wk', 'Wv', 'Wo']);
  for (const [key, skip] of [
    ['own', 0],
    ['cont', 3],
  ]) {
    const rng = mha.rng(5, 'default_rng');
    try {
      if (skip) rng.standardNormal(skip);
      const want = [0, 1, 2, 3].map(() => drawScaled(rng, C * C, C));
      d[key].forEach((W, i) => assertClose(W, want[i], `${key} weight ${i}`, 0));
    } finally {
      rng.free();
    }
  }
  const bad = runPython(
    `${layerObjectScript()}\ntry:\n    MultiHeadAttention(C=10, h=4)\nexcept AssertionError as e:\n` +
      `    print("refused:", e)\n`,
  );
  assert.match(bad, /^refused: h = 4 heads must divide C = 10$/m);
});

test('no script builds the layer from given weights any more', () => {
  const tokens = tokenize('a b');
  const scripts = [
    lesson4Script(),
    layerObjectScript(),
    trainingScript({ title: 't', sentence: 'a b', tokens, rng: 'legacy' }),
  ];
  for (const script of scripts) {
    assert.doesNotMatch(script, /MultiHeadAttention\(Wq/);
    assert.match(script, /MultiHeadAttention\(C, h, seed=/);
  }
});

test("lesson 3's script: only its forward, the course's multi_head_attention_forward", () => {
  // lesson 3 teaches the forward pass; the class (backward, step) is lessons 4 and 5's
  for (const causal of [false, true]) {
    const script = lesson3Script({ causal });
    assert.match(
      script,
      /^def multi_head_attention_forward\(X, Wq, Wk, Wv, Wo, h, causal=False\):$/m,
    );
    assert.match(script, /^Y, c = multi_head_attention_forward\(X, Wq, Wk, Wv, Wo, h, causal=/m);
    for (const later of [/class MultiHeadAttention/, /def backward/, /def step/, /grads/]) {
      assert.doesNotMatch(script, later);
    }
  }
  // the class of lessons 4 and 5 calls the same function: one forward in every script
  assert.match(lesson4Script(), /= multi_head_attention_forward\(X, W\["Wq"\]/);
});

test("the check's save line for lesson 5's class: runs after the class, every key is read", () => {
  // after a step the layer's cache and grads belong to the old weights; the line runs a forward
  // and backward first, so what it saves belongs together whenever it is run
  const dir = mkdtempSync(join(tmpdir(), 'mha-layer-save-'));
  try {
    const script = `${layerObjectScript({ lr: 0.1, runSteps: 2 })}\nstep(layer, lr)\n${LAYER_SAVE_LINE}\n`;
    execFileSync('/usr/bin/python3', ['-'], { input: script, cwd: dir, encoding: 'utf8' });
    const arrays = readNpz(new Uint8Array(readFileSync(join(dir, 'mha_check.npz'))));
    const keys = Object.keys(arrays);
    const unread = keys.filter((k) => courseName(k) !== k);
    assert.deepEqual(unread, [], `names the check does not read as they are: ${unread}`);
    for (const k of ['X', 'Wq', 'Wo', 'target', 'Q', 'att', 'concat', 'Y', 'dWo', 'dQ', 'dX']) {
      assert.ok(keys.includes(k), `${k} saved`);
    }
    const report = checkNotebook(mha, arrays, { heads: 4 });
    const notMatching = report.rows.filter((r) => r.status !== 'match').map((r) => r.name);
    assert.deepEqual(
      notMatching,
      ['loss', 'dY'],
      'every result saved matches (loss, dY: not saved)',
    );
    assert.deepEqual(report.ignored, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
