// The generator behind `npm run bench:check` (tests/bench/check_mutants.py): its files are what it
// says they are. The ground truth of each mutant (`first`, the first saved array that differs
// from the unmutated notebook's) is recomputed here by another implementation, the engine: the
// layer's forward, MSE loss and backward from the mutant's own inputs; the clean runs equal the
// engine's arrays throughout; the same seed gives the same files.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { layerWith } from '../../web/model/layers.js';
import { LESSON4_ORDER, PYTHON, repoRoot } from '../helpers.mjs';

const SCRIPT = join(repoRoot, 'tests', 'bench', 'check_mutants.py');
// the notebook's saved results, in its order (the forward, the loss, the backward)
const RESULTS = ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y', 'loss', 'dY'].concat(
  LESSON4_ORDER,
);
const TRAINING = ['losses', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after'];
const OPERATORS = new Set([
  'swap-name',
  'insert-transpose',
  'drop-transpose',
  'reduction-axis',
  'keepdims-dropped',
  'constant',
  'term-dropped',
  'statements-swapped',
  'statement-dropped',
  'float32',
]);

function generate(dir, { mutants, clean, seed }) {
  const args = [dir, '--mutants', mutants, '--clean', clean, '--seed', seed].map(String);
  execFileSync(PYTHON, [SCRIPT, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
}

/** The engine's results from a file's inputs (X, W, target), by the notebook's names. */
function engineResults(mha, arrays, { B, T, C, heads, causal }) {
  const W = Object.fromEntries(['Wq', 'Wk', 'Wv', 'Wo'].map((k) => [k, arrays[k].data]));
  const layer = layerWith(mha, C, heads, W);
  try {
    const { Y } = layer.forward(arrays.X.data, { B, T, causal });
    const { loss, dY } = mha.mseLoss(Y, arrays.target.data);
    layer.zeroGrad();
    layer.backward(dY);
    const out = { loss: Float64Array.of(loss), dY };
    for (const k of RESULTS) out[k] ??= layer.tensor(k).data;
    // the engine keeps the scores before the mask; the notebook's have -inf above the diagonal
    if (causal) {
      out.scores = out.scores.map((x, i) => (i % T > Math.floor(i / T) % T ? -Infinity : x));
    }
    return out;
  } finally {
    layer.free();
  }
}

/** As check_mutants.py's `differs`: the shape, or beyond 1e-10 of the array's largest entry. */
function differs(a, shape, b) {
  if (a.shape.reduce((x, y) => x * y, 1) !== b.length) return true;
  if (a.data.some((x, i) => (Number.isFinite(x) ? !Number.isFinite(b[i]) : !Object.is(x, b[i])))) {
    return true;
  }
  const scale = Math.max(1e-300, ...b.filter(Number.isFinite).map(Math.abs));
  return a.data.some((x, i) => Number.isFinite(x) && Math.abs(x - b[i]) > 1e-10 * scale);
}

test('mutants differ first where check_mutants.py says; clean runs equal the engine', async () => {
  const mha = await loadMHA();
  const dir = mkdtempSync(join(tmpdir(), 'mha-mutants-test-'));
  try {
    const manifest = generate(dir, { mutants: 30, clean: 2, seed: 7 });
    const muts = manifest.filter((m) => m.kind === 'mutant');
    const cleans = manifest.filter((m) => m.kind === 'clean');
    assert.equal(muts.length, 30);
    assert.deepEqual(
      cleans.map((c) => c.causal),
      [false, true, false, true],
    );
    let checked = 0;
    for (const m of manifest) {
      const arrays = readNpz(readFileSync(join(dir, m.file)));
      const { B, T, C, heads } = m.sizes;
      assert.deepEqual(arrays.X.shape, [B, T, C], `${m.file}: X`);
      const engine = engineResults(mha, arrays, { B, T, C, heads, causal: m.causal });
      const firstByEngine = RESULTS.find((k) => differs(arrays[k], null, engine[k])) ?? null;
      if (m.kind === 'clean') {
        assert.equal(firstByEngine, null, `${m.file}: a clean run differs from the engine`);
        assert.equal(m.first, null);
        continue;
      }
      assert.ok(OPERATORS.has(m.operator), `${m.file}: operator ${m.operator}`);
      assert.notEqual(m.line, m.before, `${m.file}: the edited line`);
      assert.ok([...RESULTS, ...TRAINING].includes(m.first), `${m.file}: first ${m.first}`);
      // where the forward or backward differs, the engine finds the same first array; a mutant
      // of the training loop alone leaves them all equal to the engine's
      if (RESULTS.includes(m.first)) {
        assert.equal(firstByEngine, m.first, `${m.file} [${m.operator}] ${m.line}`);
        checked += 1;
      } else {
        assert.equal(firstByEngine, null, `${m.file} [${m.operator}] ${m.line}`);
      }
    }
    assert.ok(checked >= 10, `only ${checked} mutants' first array recomputed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check_mutants.py: the same seed gives the same mutants and files', () => {
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'mha-mutants-seed-')));
  try {
    const [a, b] = dirs.map((d) => generate(d, { mutants: 8, clean: 1, seed: 3 }));
    assert.deepEqual(a, b);
    for (const m of a) {
      const bytes = dirs.map((d) => readFileSync(join(d, m.file)));
      assert.ok(bytes[0].equals(bytes[1]), `${m.file} differs between two runs`);
    }
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
});
