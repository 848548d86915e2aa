// Three notebooks written for issue 35 by someone who had not read the notebook check
// (tests/notebooks/own/: each a student's own style, its mistakes in its docstring), run by
// NumPy and checked as the page checks a dropped file. What the check must say: the first
// differing row of each mistake with its cause, every other differing row following from one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';
import { PYTHON, repoRoot } from '../helpers.mjs';

const mha = await loadMHA();

const NOTEBOOKS = [
  {
    file: 'notebook_1.py',
    heads: 3,
    causal: false,
    causes: { att: 'edit-axis', dK: 'dk-transposed' }, // softmax's max over the queries; dK
  },
  {
    file: 'notebook_2.py',
    heads: 4,
    causal: true,
    causes: { att: 'softmax-not-normalised', dX: 'backward-w-not-transposed' }, // mask after
  },
  {
    file: 'notebook_3.py',
    heads: 2,
    causal: false,
    causes: { dWo: 'dw-transposed', losses: 'loop-gradients-stale' }, // gradients read once
  },
];

test('three notebooks nobody tuned the check to: each mistake named, the rest follows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-own-notebooks-'));
  try {
    for (const nb of NOTEBOOKS) {
      const out = join(dir, `${nb.file}.npz`);
      execFileSync(PYTHON, [join(repoRoot, 'tests', 'notebooks', 'own', nb.file), out]);
      const report = checkNotebook(mha, readNpz(readFileSync(out)), nb);
      const differing = report.rows.filter((r) => r.status !== 'match');
      const named = Object.fromEntries(
        differing
          .filter((r) => r.diagnosis?.id !== 'follows-from')
          .map((r) => [r.name, r.diagnosis?.id]),
      );
      assert.deepEqual(named, nb.causes, nb.file);
      for (const r of differing) assert.equal(r.status, 'differs', `${nb.file}: ${r.name}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
