// The course's program as the notebook check's edit search uses it (web/check/program.js,
// ndarray.js): the operations against hand-derived cases, the program against NumPy running its
// printed lines, its edits. (Notebooks with one hand-written mistake each: edit-cases.test.mjs.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as nd from '../../web/check/ndarray.js';
import {
  PROGRAM_NODES,
  editsOf,
  printLine,
  program,
  reads,
  run,
  shapeOf,
} from '../../web/check/program.js';
import { searchable } from '../../web/check/edits.js';
import { PYTHON } from '../helpers.mjs';

const t = (values, shape) => nd.tensor(Float64Array.from(values), shape);
const list = (x) => Array.from(x.data);

test('ndarray: broadcasting, @ with batch axes, transpose, reshape, reductions by hand', () => {
  const a = t([1, 2, 3, 4, 5, 6], [2, 3]);
  assert.deepEqual(list(nd.binary('add', a, t([10, 20, 30], [3]))), [11, 22, 33, 14, 25, 36]);
  assert.deepEqual(list(nd.binary('mul', a, t([2, 3], [2, 1]))), [2, 4, 6, 12, 15, 18]);
  assert.deepEqual(list(nd.binary('div', a, nd.scalar(2))), [0.5, 1, 1.5, 2, 2.5, 3]);
  assert.throws(() => nd.binary('add', a, t([1, 2], [2])), nd.ShapeError);
  // (2, 3) @ (3, 2), and a (2, 2, 2) batch against one (2, 2) matrix
  const b = t([1, 0, 0, 1, 1, 1], [3, 2]);
  assert.deepEqual(list(nd.matmul(a, b)), [4, 5, 10, 11]);
  const batch = nd.matmul(t([1, 2, 3, 4, 5, 6, 7, 8], [2, 2, 2]), t([0, 1, 1, 0], [2, 2]));
  assert.deepEqual(batch.shape, [2, 2, 2]);
  assert.deepEqual(list(batch), [2, 1, 4, 3, 6, 5, 8, 7]);
  assert.throws(() => nd.matmul(a, a), nd.ShapeError);
  assert.deepEqual(list(nd.transpose(a)), [1, 4, 2, 5, 3, 6]);
  const x = t([0, 1, 2, 3, 4, 5, 6, 7], [2, 2, 2]);
  assert.deepEqual(list(nd.transpose(x, [1, 0, 2])), [0, 1, 4, 5, 2, 3, 6, 7]);
  assert.deepEqual(nd.reshape(a, [-1, 2]).shape, [3, 2]);
  assert.throws(() => nd.reshape(a, [4, -1]), nd.ShapeError);
  assert.deepEqual(list(nd.reduce('sum', a, -1, true)), [6, 15]);
  assert.deepEqual(nd.reduce('sum', a, -1, true).shape, [2, 1]);
  assert.deepEqual(list(nd.reduce('sum', a, 0)), [5, 7, 9]);
  assert.deepEqual(list(nd.reduce('max', a, 1)), [3, 6]);
  assert.deepEqual(list(nd.reduce('mean', a)), [3.5]);
  assert.deepEqual(nd.reduce('sum', a, null, true).shape, [1, 1]);
  assert.throws(() => nd.reduce('sum', a, 2), nd.ShapeError);
  const m = nd.causalWhere(t([1, 2, 3, 4], [2, 2]));
  assert.deepEqual(list(m), [1, -Infinity, 3, 4]);
  assert.deepEqual(list(nd.causalWhere(t([1, 2, 3, 4], [2, 2]), { k: 0 })), [
    -Infinity,
    -Infinity,
    3,
    -Infinity,
  ]);
  assert.deepEqual(list(nd.causalWhere(t([1, 2, 3, 4], [2, 2]), { lower: true, k: -1 })), [
    1,
    2,
    -Infinity,
    4,
  ]);
});

// sizes and random inputs of a small layer
function small({ causal = false, loss = 'mse' } = {}) {
  const s = { B: 2, T: 3, C: 4, heads: 2, hs: 2, causal, loss, N: 6, n: 24 };
  let seed = 1;
  const rand = (n) =>
    Float64Array.from({ length: n }, () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5);
  const inputs = { X: rand(24), Wq: rand(16), Wk: rand(16), Wv: rand(16), Wo: rand(16) };
  inputs[loss === 'mse' ? 'target' : 'dY'] = rand(24);
  return { s, inputs };
}

// every node of the program from the inputs, in the course's order: { [name]: tensor }
function runAll(s, inputs) {
  const env = Object.fromEntries(
    Object.entries(inputs).map(([n, d]) => [n, { data: d, shape: shapeOf(n, s) }]),
  );
  for (const node of PROGRAM_NODES) {
    const statements = program(node, s);
    if (node === 'dY' && s.loss === 'dot') continue;
    env[node] = run(statements, env, s);
  }
  return env;
}

test('the program, printed, is what NumPy runs: every node equal to NumPy’s, causal or not', () => {
  for (const causal of [false, true]) {
    const { s, inputs } = small({ causal });
    const mine = runAll(s, inputs);
    const lines = PROGRAM_NODES.flatMap((n) => program(n, s).map((st) => printLine(st)));
    const script = [
      'import json, sys',
      'import numpy as np',
      'v = json.load(sys.stdin)',
      'B, T, C, h, hs = 2, 3, 4, 2, 2',
      'X = np.array(v["X"]).reshape(B, T, C)',
      'target = np.array(v["target"]).reshape(B, T, C)',
      ...['Wq', 'Wk', 'Wv', 'Wo'].map((w) => `${w} = np.array(v["${w}"]).reshape(C, C)`),
      ...lines,
      `names = ${JSON.stringify(PROGRAM_NODES)}`,
      'flat = lambda a: [x if np.isfinite(x) else None for x in np.asarray(a, float).ravel()]',
      'print(json.dumps({n: flat(globals()[n]) for n in names}))',
    ].join('\n');
    const input = JSON.stringify(
      Object.fromEntries(Object.entries(inputs).map(([k, d]) => [k, [...d]])),
    );
    const numpy = JSON.parse(execFileSync(PYTHON, ['-c', script], { input }).toString());
    for (const node of PROGRAM_NODES) {
      const want = numpy[node].map((x) => (x === null ? -Infinity : x));
      assert.equal(mine[node].data.length, want.length, node);
      mine[node].data.forEach((x, i) => {
        const ok = x === want[i] || Math.abs(x - want[i]) <= 1e-12 * (1 + Math.abs(want[i]));
        assert.ok(ok, `${node}[${i}]: ${x} vs NumPy ${want[i]}`);
      });
    }
  }
});

test('the program reads what the check’s graph says; every edit changes the line', () => {
  const { s, inputs } = small({ causal: true });
  const env = runAll(s, inputs);
  const names = ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target', ...PROGRAM_NODES];
  for (const node of PROGRAM_NODES) {
    const statements = program(node, s);
    const course = run(statements, env, s);
    const edits = editsOf(statements, s, env, names.slice(0, names.indexOf(node)));
    assert.ok(edits.length > 0, node);
    for (const e of edits) {
      assert.notEqual(printLine(e.statements[e.index]), printLine(e.original), `${node} ${e.kind}`);
    }
    // an edit that NumPy accepts at these sizes and changes nothing is kept out of nothing: the
    // search compares values, so an edit equal to the course's cannot reproduce a differing array
    assert.ok(course.data.length > 0);
  }
  assert.deepEqual(reads(program('att', s)), ['scores']);
  assert.deepEqual(reads(program('dX', s)).sort(), ['Wk', 'Wq', 'Wv', 'dKm', 'dQm', 'dVm']);
});

test('solveRows: x @ W = y solved row by row (a changed X); a singular W: null', async () => {
  const { solveRows } = await import('../../web/check/state.js');
  // W = [[2, 1], [0, 3]]: x @ W = [2 x0, x0 + 3 x1]
  const W = Float64Array.of(2, 1, 0, 3);
  const Y = Float64Array.of(2, 4, -4, 1);
  assert.deepEqual([...solveRows(Y, W, 2)], [1, 1, -2, 1]);
  assert.equal(solveRows(Y, Float64Array.of(1, 2, 2, 4), 2), null);
});

// One edit costs about one step recomputed in JavaScript: the search runs up to a bound of work
// (B·T·C·C), so a layer of C = 256 is checked in a fraction of a second, without the search.
test("the edit search's bound of work: the course's sizes searched, C = 256, T = 32 not", () => {
  const at = (B, T, C, heads) => searchable({ B, T, C, heads, n: B * T * C });
  assert.equal(at(2, 6, 64, 4), true, "the course's demo");
  assert.equal(at(3, 8, 32, 4), true, "bench:check's largest mutants");
  assert.equal(at(1, 32, 256, 8), false);
  assert.equal(at(1, 64, 768, 12), false, 'GPT-2 size');
});
