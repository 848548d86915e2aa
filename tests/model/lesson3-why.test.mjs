// Issue 19, lesson 3: every row of ΔY (after headout[:, 0] += 1) equals the sum of Wo's rows
// 0 … hs−1, with the full and the block-diagonal Wo, against NumPy (python3, the course data of
// tests/reference/page_reference.py) and a hand example; Y's column blocks named by their columns.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { columnBlockLabels, deltaRowCheck, lesson3 } from '../../web/model/lesson3.js';
import { PYTHON, loadMHA, repoRoot } from '../helpers.mjs';

const mha = await loadMHA();

// NumPy on the course data (seed 42, B = 2, T = 6, C = 64, h = 4), independently of web/model
const NUMPY = `
import json, sys
sys.path.insert(0, ${JSON.stringify(join(repoRoot, 'tests', 'reference'))})
import numpy as np
from page_reference import course_data, block_diagonal
from mha_reference import mha_forward, merge_heads
X, W, dY = course_data()
h = 4
hs = 64 // h
Y, cache = mha_forward(X, W, h, False)
headout = cache["headout"].copy()
headout[:, 0] += 1.0
concat = merge_heads(headout)
Wbd = block_diagonal(W["Wo"], h)
full = (concat @ W["Wo"] - Y).reshape(-1, 64)
bd = (concat @ Wbd - cache["concat"] @ Wbd).reshape(-1, 64)
out = {
    "fullSum": W["Wo"][:hs].sum(axis=0).tolist(),
    "bdSum": Wbd[:hs].sum(axis=0).tolist(),
    "fullRowsMax": float(np.abs(full - W["Wo"][:hs].sum(axis=0)).max()),
    "bdRowsMax": float(np.abs(bd - Wbd[:hs].sum(axis=0)).max()),
}
print(json.dumps(out))
`;
const np = JSON.parse(
  execFileSync(PYTHON, ['-'], { input: NUMPY, encoding: 'utf8', env: { ...process.env } }),
);

const near = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);

test('lesson 3: every row of ΔY is Wo[:hs].sum(axis=0) (full and block-diagonal Wo)', (t) => {
  for (const causal of [false, true]) {
    const r = lesson3(mha, { causal });
    const { B, T, C, hs } = r;
    assert.equal(hs, 16);
    for (const [dY, rows, sum] of [
      [r.fullDeltaY, r.fullRows, np.fullSum],
      [r.bdDeltaY, r.bdRows, np.bdSum],
    ]) {
      for (let c = 0; c < C; c++) near(rows.headSum[c], sum[c], 1e-15, `Wo[:hs].sum(0)[${c}]`);
      // the statement itself: all B·T rows equal, each the column sums of Wo's first hs rows
      for (let row = 0; row < B * T; row++) {
        for (let c = 0; c < C; c++) near(dY[row * C + c], sum[c], 1e-14, `ΔY[${row}, ${c}]`);
      }
      assert.ok(rows.rowSpread <= 1e-14 && rows.maxDiff <= 1e-14, JSON.stringify(rows));
    }
    // block-diagonal: head 0's rows of Wo are 0 outside columns 0 … hs−1, and so is ΔY
    for (let c = hs; c < C; c++) assert.equal(r.bdRows.headSum[c], 0);
    t.diagnostic(
      `causal ${causal}: max |ΔY row − Wo[:16].sum(0)| ${r.fullRows.maxDiff} (full), ` +
        `${r.bdRows.maxDiff} (block-diagonal); NumPy ${np.fullRowsMax}, ${np.bdRowsMax}`,
    );
  }
});

test('deltaRowCheck on a hand example; columnBlockLabels', () => {
  // B = 1, T = 2, C = 4, hs = 2: Wo rows 0 and 1 sum to [4, 6, 8, 10]
  const Wo = Float64Array.from({ length: 16 }, (_, i) => i);
  const dY = Float64Array.from([4, 6, 8, 10, 4, 6, 8, 10.5]);
  const r = deltaRowCheck(dY, Wo, { B: 1, T: 2, C: 4, hs: 2 });
  assert.deepEqual([...r.headSum], [4, 6, 8, 10]);
  assert.deepEqual([r.rowSpread, r.maxDiff], [0.5, 0.5]);
  assert.deepEqual(columnBlockLabels(64, 4), [
    'columns 0–15',
    'columns 16–31',
    'columns 32–47',
    'columns 48–63',
  ]);
  assert.deepEqual(columnBlockLabels(6, 3), ['columns 0–1', 'columns 2–3', 'columns 4–5']);
});
