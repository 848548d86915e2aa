// Issue 19, lesson 4: the matmul rule dA = dC @ Bᵀ, dB = Aᵀ @ dC checked by the lesson's shapes
// (also at a student's sizes), and dX = dQm @ Wqᵀ + dKm @ Wkᵀ + dVm @ Wvᵀ with each term's share,
// against NumPy (python3, the course data of tests/reference/page_reference.py).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { courseData } from '../../web/model/course.js';
import { lesson4 } from '../../web/model/lesson4.js';
import { flatShape, matmulShape, transposedShape } from '../../web/model/backward-rules.js';
import { PYTHON, loadMHA, repoRoot } from '../helpers.mjs';

const mha = await loadMHA();

// NumPy on the course data (seed 42, B = 2, T = 6, C = 64, h = 4), independently of web/model
const NUMPY = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(repoRoot, 'tests', 'reference'))})
import numpy as np
from page_reference import course_data
from mha_reference import mha_forward, mha_backward, merge_heads
X, W, dY = course_data()
Y, cache = mha_forward(X, W, 4, False)
g = mha_backward(dY, cache, W, 4)
dX = g["dX"]
terms = [merge_heads(g[d]) @ W[w].T for d, w in (("dQ", "Wq"), ("dK", "Wk"), ("dV", "Wv"))]
out = {
    "sumMaxDiff": float(np.abs(sum(terms) - dX).max()),
    "norm": float(np.linalg.norm(dX)),
    "termNorms": [float(np.linalg.norm(t)) for t in terms],
    "leftOut": [float(np.linalg.norm(t) / (np.linalg.norm(dX - t) + np.linalg.norm(dX)))
                for t in terms],
}
print(json.dumps(out))
`;
const np = JSON.parse(
  execFileSync(PYTHON, ['-'], { input: NUMPY, encoding: 'utf8', env: { ...process.env } }),
);

const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test('matmulShape, transposedShape, flatShape follow NumPy', () => {
  assert.deepEqual(matmulShape([2, 6, 64], [64, 64]), [2, 6, 64]);
  assert.deepEqual(matmulShape([2, 4, 6, 16], [2, 4, 16, 6]), [2, 4, 6, 6]);
  assert.deepEqual(matmulShape([64, 12], [12, 64]), [64, 64]);
  assert.equal(matmulShape([2, 6, 64], [2, 6, 64]), null);
  assert.equal(matmulShape([2, 4, 6, 6], [3, 4, 6, 16]), null);
  assert.deepEqual(transposedShape([2, 4, 6, 16]), [2, 4, 16, 6]);
  assert.deepEqual(flatShape([2, 6, 64]), [12, 64]);
});

/** The rows of lesson 4's shape check as text: 'dconcat (2, 6, 64) @ (64, 64) -> (2, 6, 64)'. */
const ruleText = (r) =>
  r.rules.flatMap((g) =>
    g.rows.map((x) => `${x.grad} ${[x.left, x.right, x.result, x.of].map((s) => s.join(','))}`),
  );

test('lesson 4: the matmul rule checked by the shapes of the course and of a student', () => {
  const r = lesson4(mha);
  assert.deepEqual(ruleText(r), [
    'dconcat 2,6,64,64,64,2,6,64,2,6,64',
    'dWo 64,12,12,64,64,64,64,64',
    'datt 2,4,6,16,2,4,16,6,2,4,6,6,2,4,6,6',
    'dV 2,4,6,6,2,4,6,16,2,4,6,16,2,4,6,16',
    'dQ 2,4,6,6,2,4,6,16,2,4,6,16,2,4,6,16',
    'dKᵀ 2,4,16,6,2,4,6,6,2,4,16,6,2,4,16,6',
  ]);
  assert.ok(r.rules.every((g) => g.rows.every((x) => x.ok)));
  // a student's arrays: B = 1, T = 3, C = 8, h = 2 (hs = 4)
  const s = lesson4(mha, { data: { ...courseData(mha, { seed: 5, B: 1, T: 3, C: 8 }), heads: 2 } });
  assert.deepEqual(ruleText(s), [
    'dconcat 1,3,8,8,8,1,3,8,1,3,8',
    'dWo 8,3,3,8,8,8,8,8',
    'datt 1,2,3,4,1,2,4,3,1,2,3,3,1,2,3,3',
    'dV 1,2,3,3,1,2,3,4,1,2,3,4,1,2,3,4',
    'dQ 1,2,3,3,1,2,3,4,1,2,3,4,1,2,3,4',
    'dKᵀ 1,2,4,3,1,2,3,3,1,2,4,3,1,2,4,3',
  ]);
  assert.deepEqual(
    s.xPaths.paths.map((p) => [p.shapes.left, p.shapes.right, p.shapes.result, p.shapes.ok]),
    Array(3).fill([[1, 3, 8], [8, 8], [1, 3, 8], true]),
  );
  assert.ok(s.xPaths.sumMaxDiff <= 1e-14, String(s.xPaths.sumMaxDiff));
});

test('lesson 4: dX is the sum of its three paths, each term as NumPy computes it', (t) => {
  const { xPaths: p } = lesson4(mha);
  assert.deepEqual(
    p.paths.map((x) => [x.path, x.weight, x.grad]),
    [
      ['Q', 'Wq', 'dQm'],
      ['K', 'Wk', 'dKm'],
      ['V', 'Wv', 'dVm'],
    ],
  );
  near(p.norm, np.norm, 1e-12 * np.norm, '‖dX‖');
  assert.ok(p.sumMaxDiff <= 1e-14 && np.sumMaxDiff <= 1e-14, `${p.sumMaxDiff} ${np.sumMaxDiff}`);
  p.paths.forEach((x, k) => {
    near(x.norm, np.termNorms[k], 1e-12 * x.norm, `‖term ${x.path}‖`);
    near(x.rel, np.termNorms[k] / np.norm, 1e-12, `share ${x.path}`);
    near(x.leftOut, np.leftOut[k], 1e-12, `left out ${x.path}`);
    // leaving a path out fails the norm-wise pass line (two points) by far
    assert.ok(x.leftOut > 0.1, `${x.path}: ${x.leftOut}`);
  });
  t.diagnostic(
    `max |sum − dX| ${p.sumMaxDiff}; ‖term‖/‖dX‖ ${p.paths.map((x) => x.rel.toFixed(3))}; ` +
      `left out: ${p.paths.map((x) => x.leftOut.toFixed(3))}`,
  );
});
