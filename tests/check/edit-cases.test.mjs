// The search over edits of the course's program (web/check/edits.js) on notebooks with one
// hand-written mistake each (tests/check/edit_cases.py: a line of the plain NumPy notebook of
// tests/bench/check_mutants.py replaced by the text below), each named at its first differing row.

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

// One mistake each, by hand: the line of the notebook replaced, the row it must be found at and
// the diagnosis it must get.
const CASES = [
  {
    name: 'softmax-sum-over-queries',
    find: 'att = e / e.sum(axis=-1, keepdims=True)',
    replace: 'att = e / e.sum(axis=-2, keepdims=True)',
    row: 'att',
    id: 'edit-axis',
    says: /e\.sum\(axis=-2, keepdims=True\) where the course has e\.sum\(axis=-1, keepdims=True\)/,
  },
  {
    name: 'max-over-batch-causal',
    find: 'e = np.exp(scores - scores.max(axis=-1, keepdims=True))',
    replace: 'e = np.exp(scores - scores.max(axis=0, keepdims=True))',
    causal: true,
    row: 'att',
    id: 'edit-axis',
  },
  {
    name: 'dscores-plus',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = att * (datt + (datt * att).sum(axis=-1, keepdims=True))',
    row: 'dscores',
    id: 'edit-sign',
    says: /datt \+ \(datt \* att\)\.sum\(axis=-1, keepdims=True\) where the course has datt - /,
  },
  {
    name: 'dy-float32',
    find: 'dY = 2 * (Y - target) / Y.size',
    replace: 'dY = (2 * (Y - target) / Y.size).astype(np.float32)',
    row: 'dY',
    id: 'edit-float32',
    says: /float32 \(dtype <f4\) while X and the weights are float64/,
  },
  {
    name: 'dqm-float32-not-saved',
    find: 'dQm = dQ.transpose(0, 2, 1, 3).reshape(B, T, C)',
    replace: 'dQm = dQ.transpose(0, 2, 1, 3).reshape(B, T, C).astype(np.float32)',
    row: 'dWq',
    id: 'edit-float32',
    says: /dQm computed in float32/,
  },
  {
    name: 'dscores-sum-over-queries',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = att * (datt - (datt * att).sum(axis=2, keepdims=True))',
    row: 'dscores',
    id: 'edit-axis',
  },
  { name: 'clean', find: '', replace: '', row: null, causal: true },
];

const TRAINING = ['losses', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after', 'lr', 'steps'];

test('one hand-written mistake per notebook: named as an edit at its first differing row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-edit-cases-'));
  try {
    const sizes = (c) => ({ B: 2, T: 4, C: 8, heads: 2, causal: !!c.causal, seed: 11 });
    const cases = CASES.map((c) => ({
      name: c.name,
      find: c.find,
      replace: c.replace,
      sizes: sizes(c),
      drop: TRAINING,
    }));
    const script = join(repoRoot, 'tests', 'check', 'edit_cases.py');
    execFileSync(PYTHON, [script, dir], { input: JSON.stringify(cases) });
    for (const c of CASES) {
      const arrays = readNpz(readFileSync(join(dir, `${c.name}.npz`)));
      const report = checkNotebook(mha, arrays, { heads: 2, causal: !!c.causal });
      const flagged = report.rows.filter((r) => r.status !== 'match' && r.status !== 'missing');
      if (c.row === null) {
        assert.deepEqual(
          flagged.map((r) => r.name),
          [],
          'the unmutated notebook matches',
        );
        continue;
      }
      assert.equal(flagged[0]?.name, c.row, `${c.name}: the first flagged row`);
      assert.equal(flagged[0].diagnosis?.id, c.id, `${c.name}: ${flagged[0].diagnosis?.message}`);
      if (c.says) assert.match(flagged[0].diagnosis.message, c.says, c.name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
