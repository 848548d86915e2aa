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
import { MISTAKES } from '../../web/check/catalogue.js';
import { findEdits } from '../../web/check/edits.js';
import { Pipeline } from '../../web/check/pipeline.js';
import { PROGRAM_NODES } from '../../web/check/program.js';
import { PYTHON, repoRoot } from '../helpers.mjs';

const mha = await loadMHA();

// The notebooks of `cases` (edit_cases.py, in a directory of their own): each read as the page
// reads a dropped file, by name -> its arrays; the directory removed after fn
function withNotebooks(cases, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'mha-edit-cases-'));
  try {
    const script = join(repoRoot, 'tests', 'check', 'edit_cases.py');
    execFileSync(PYTHON, [script, dir], { input: JSON.stringify(cases) });
    fn((name) => readNpz(readFileSync(join(dir, `${name}.npz`))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// One mistake each, by hand: the line of the notebook replaced, the row it must be found at and
// the diagnosis it must get (`then`: later rows' diagnoses; `thenSays`: their messages).
const CASES = [
  {
    name: 'softmax-sum-over-queries',
    find: 'att = e / e.sum(axis=-1, keepdims=True)',
    replace: 'att = e / e.sum(axis=-2, keepdims=True)',
    row: 'att',
    // an edit the catalogue names: the softmax normalised over the queries
    id: 'softmax-wrong-axis',
    says: /^You computed att = e \/ e\.sum\(axis=-2, keepdims=True\); the course uses att = softmax\(scores, axis=-1\)\.$/,
  },
  {
    // dropout on the attention weights, the kept ones scaled by 1/(1 - p): a fixed pattern of
    // one weight in 7 dropped stands for the random one
    name: 'attention-dropout',
    find: '    att = e / e.sum(axis=-1, keepdims=True)',
    replace:
      '    att = e / e.sum(axis=-1, keepdims=True)\n' +
      '    att = att * (np.arange(att.size).reshape(att.shape) % 7 != 3) / 0.875',
    row: 'att',
    id: 'attention-dropout',
    says: /the kept ones scaled by 1\.14286 = 1\/\(1 - p\) for p = 0\.125/,
    then: { headout: 'follows-from' },
  },
  {
    // the same zeros in every block are a mask's, not dropout's: the weights above the
    // diagonal zeroed after the softmax, checked without the causal mask
    name: 'mask-after-softmax-is-not-dropout',
    find: '    att = e / e.sum(axis=-1, keepdims=True)',
    replace:
      '    att = e / e.sum(axis=-1, keepdims=True)\n    att = att * np.tril(np.ones((T, T)))',
    row: 'att',
    id: 'softmax-not-normalised',
    never: ['attention-dropout'],
  },
  {
    // the array saved as scores is the softmax's output (att not saved)
    name: 'scores-holding-att',
    find: '    att = e / e.sum(axis=-1, keepdims=True)',
    replace: '    att = e / e.sum(axis=-1, keepdims=True)\n    scores = att',
    drop: ['att'],
    row: 'scores',
    id: 'overwritten',
    says: /^Your scores are the course's att, which is computed from it/,
    // (later rows read the course's scores, not the file's: every other row matches)
    only: ['scores'],
  },
  {
    // the softmax backward multiplies datt in place: the file's datt holds datt * att
    name: 'datt-multiplied-in-place',
    find: '    dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: [
      '    g = datt',
      '    g *= att',
      '    dscores = g - att * g.sum(axis=-1, keepdims=True)',
    ].join('\n'),
    row: 'datt',
    id: 'overwritten',
    says: /^Your datt holds datt \* att, a part of the line that computes dscores/,
    only: ['datt'],
  },
  {
    // the softmax shifts the scores in place: the file's scores hold scores minus each row's max
    name: 'scores-shifted-in-place',
    find: 'e = np.exp(scores - scores.max(axis=-1, keepdims=True))',
    replace: 'scores -= scores.max(axis=-1, keepdims=True); e = np.exp(scores)',
    causal: true,
    row: 'scores',
    id: 'overwritten',
    says: /^Your scores holds the softmax's own first step, scores -= scores\.max\(axis=-1, keepdims=True\)/,
  },
  {
    // the softmax backward's row sum taken as a mean
    name: 'dscores-row-mean',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = att * (datt - (datt * att).mean(axis=-1, keepdims=True))',
    row: 'dscores',
    id: 'edit-reduction',
    says: /\(datt \* att\)\.mean\(axis=-1, keepdims=True\) where the course has \(datt \* att\)\.sum\(axis=-1, keepdims=True\)/,
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
  {
    name: 'in-the-students-names',
    find: 'att = e / e.sum(axis=-1, keepdims=True)',
    replace: 'att = e / e.sum(axis=-2, keepdims=True)',
    rename: { att: 'attn', scores: 'attn_logits' },
    row: 'att',
    id: 'softmax-wrong-axis',
    says: /^You computed attn = e \/ e\.sum\(axis=-2, keepdims=True\); the course uses attn = softmax\(attn_logits, axis=-1\)\.$/,
  },
  {
    name: 'two-changes-in-scores',
    find: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    replace: 'scores = Q @ K / hs',
    row: 'scores',
    id: 'edit-pair',
    says: /two changes, K where the course has K\.transpose\(0, 1, 3, 2\), and hs where the course has np\.sqrt\(hs\): scores = Q @ K \/ hs;/,
  },
  {
    name: 'two-changes-in-dscores',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = 2 * att * (datt - (datt * att).sum(axis=-2, keepdims=True))',
    row: 'dscores',
    id: 'edit-pair',
    says: /sum\(axis=-2, keepdims=True\) where the course has .*sum\(axis=-1, keepdims=True\), and dscores multiplied by 2/,
  },
  {
    name: 'x-changed-after-the-projections',
    find: '    V = (X @ Wv).reshape(B, T, h, hs).transpose(0, 2, 1, 3)\n',
    replace: '    V = (X @ Wv).reshape(B, T, h, hs).transpose(0, 2, 1, 3)\n    X[0, 1, :] = 0.0\n',
    row: 'Q',
    id: 'input-changed',
    says: /differs from your X in 8 of 64 entries \(X\[0, 1, 0\] .* in it, 0 in your file;/,
  },
  {
    name: 'dv-from-q',
    find: 'dV = att.transpose(0, 1, 3, 2) @ dheadout',
    replace: 'dV = att.transpose(0, 1, 3, 2) @ Q',
    row: 'dV',
    id: 'edit-operand',
  },
  {
    name: 'v-at-att',
    find: 'headout = att @ V',
    replace: 'headout = V @ att',
    row: 'headout',
    id: 'edit-operands-swapped',
  },
  {
    name: 'att-transposed',
    find: 'headout = att @ V',
    replace: 'headout = att.transpose(0, 1, 3, 2) @ V',
    row: 'headout',
    id: 'edit-transpose-added',
  },
  {
    name: 'k-not-transposed',
    find: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    replace: 'scores = Q @ K / np.sqrt(hs)',
    row: 'scores',
    id: 'edit-transpose-dropped',
  },
  {
    name: 'rowsum-without-keepdims-not-saved',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = att * (datt - (datt * att).sum(axis=-1))',
    sizes: { B: 1, T: 4, C: 4, heads: 1 },
    drop: ['dscores'],
    row: 'dQ',
    id: 'edit-keepdims',
  },
  {
    name: 'dk-over-t',
    find: 'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs)',
    replace: 'dK = dscores.transpose(0, 1, 3, 2) @ Q / T',
    sizes: { T: 3 },
    row: 'dK',
    id: 'edit-constant',
    says: /T where the course has np\.sqrt\(hs\)/,
  },
  {
    name: 'no-exponential',
    find: 'e = np.exp(scores - scores.max(axis=-1, keepdims=True))',
    replace: 'e = scores - scores.max(axis=-1, keepdims=True)',
    row: 'att',
    id: 'edit-exp-dropped',
  },
  {
    // an int mask used as an index: whole query rows set to -inf (NaN rows in att), named at
    // scores; att is never blamed on a missing mask: the student masks in the scores step
    name: 'int-mask-as-index',
    find: '        scores = np.where(mask, -np.inf, scores)',
    replace: '        scores[:, :, mask.astype(int)] = -np.inf',
    causal: true,
    row: 'scores',
    id: 'mask-fill',
    says: /-inf at every key of query rows 0 and 1 \(in every head\) and not masked anywhere else/,
    never: ['causal-mismatch', 'edit-mask'],
  },
  {
    // a causal mask built by a loop over the keys that stops one short: the last key is never
    // hidden; read from the zeros of the student's att and proven by recomputing att with it
    name: 'mask-loop-stops-one-short',
    find: '        mask = np.triu(np.ones((T, T), dtype=bool), k=1)',
    replace:
      '        mask = np.zeros((T, T), dtype=bool)\n' +
      '        for i in range(T):\n' +
      '            for j in range(i + 1, T - 1):\n' +
      '                mask[i, j] = True',
    causal: true,
    row: 'att',
    id: 'mask-fill',
    says: /the mask is one of your own: it leaves visible key \d+ from queries 0, 1, .*never masks the last key/,
  },
  {
    // a finite-difference check after the backward that moves each weight entry by +eps and
    // -2·eps and never puts it back: the saved weights are below the ones used (by 2e-5: the
    // notebook's train() runs the layer once more on the same arrays before its first update)
    name: 'weights-left-shifted-by-a-gradient-check',
    find: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n',
    replace:
      '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n' +
      '    for W in (Wq, Wk, Wv, Wo):\n' +
      '        W -= 1e-5\n',
    row: 'Q',
    id: 'weight-changed',
    says: /every entry of your saved Wq is 2e-5 below the one used: Q = X @ \(Wq \+ 2e-5\)/,
    then: { K: 'follows-from', Y: 'follows-from', dconcat: 'follows-from', dX: 'follows-from' },
  },
  {
    // one entry of Wv changed in place after the forward (twice: the layer runs again in
    // train()): V is the step with the weight as used
    name: 'one-weight-entry-changed-after-use',
    find: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n',
    replace: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n    Wv[1, 2] += 0.25\n',
    row: 'V',
    id: 'weight-changed',
    says: /your saved Wv differs from the one used in 1 of 64 entries \(Wv\[1, 2\] 0\.5 above the one used\)/,
  },
  {
    // lesson 4's dY drawn again in a later cell, after the backward used it: the dY solved from
    // dconcat (with Wo) gives dWo too, and is not the saved one
    name: 'dy-drawn-again-after-the-backward',
    find: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n',
    replace: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T\n    dY = np.cos(dY)\n',
    drop: ['target', 'loss'],
    row: 'dWo',
    id: 'upstream-changed',
    says: /Your dWo was computed from another dY than the one you saved: the dY0 that gives your dconcat/,
    then: { dconcat: 'follows-from', dX: 'follows-from' },
  },
  {
    // a softmax written in place over the scores: the file's scores are att's numbers
    name: 'softmax-in-place',
    find: [
      '    e = np.exp(scores - scores.max(axis=-1, keepdims=True))',
      '    att = e / e.sum(axis=-1, keepdims=True)',
    ],
    replace: [
      '    scores -= scores.max(axis=-1, keepdims=True)\n    np.exp(scores, out=scores)',
      '    scores /= scores.sum(axis=-1, keepdims=True)\n    att = scores',
    ],
    row: 'scores',
    id: 'overwritten',
    says: /Your scores holds exactly the numbers of your att, which is computed from it/,
  },
  {
    // a loop over the heads that stops one early: the last head of the scores stays zeros
    name: 'heads-loop-one-short',
    find: '    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    replace: [
      '    scores = np.zeros((B, h, T, T))',
      '    for i in range(h - 1):',
      '        scores[:, i] = Q[:, i] @ K[:, i].transpose(0, 2, 1) / np.sqrt(hs)',
    ].join('\n'),
    row: 'scores',
    id: 'head-missing',
    says: /match the course's in head 0; head 1 is all zeros: never computed/,
  },
  {
    // the loss's square left out (a power of 1): a scalar no factor names
    name: 'loss-without-its-square',
    find: '    loss = np.mean((Y - target) ** 2)',
    replace: '    loss = np.mean((Y - target) ** 1)',
    row: 'loss',
    id: 'edit-power',
    says: /Y - target where the course has \(Y - target\) \*\* 2/,
  },
  {
    // dX computed into an integer array: every value cut toward zero
    name: 'dx-as-integers',
    find: '    dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T',
    replace: '    dX = (dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T).astype(int)',
    row: 'dX',
    id: 'integer-array',
    says: /Your dX is an array of whole numbers \(int64\)/,
  },
  {
    // the square of the mean error, not the mean of the squared errors
    name: 'loss-square-of-the-mean',
    find: '    loss = np.mean((Y - target) ** 2)',
    replace: '    loss = np.mean(Y - target) ** 2',
    row: 'loss',
    id: 'edit-power',
    says: /np\.mean\(Y - target\) \*\* 2 where the course has np\.mean\(\(Y - target\) \*\* 2\)/,
  },
  {
    name: 'loss-to-the-fourth',
    find: '    loss = np.mean((Y - target) ** 2)',
    replace: '    loss = np.mean((Y - target) ** 4)',
    row: 'loss',
    id: 'edit-power',
  },
  {
    // Wo stepped inside the backward above the line that reads it; the file saves lr, so the
    // step is an edit of the layer: Wo - lr * dWo where the course reads Wo
    name: 'dconcat-from-the-stepped-wo',
    find: '    dconcat = dY @ Wo.T',
    replace: '    Wo = Wo - 0.5 * dWo\n    dconcat = dY @ Wo.T',
    keep: ['lr'],
    row: 'dconcat',
    id: 'edit-stepped',
    says: /dconcat = dY @ \(Wo - lr \* dWo\)\.T; the course: dconcat = dY @ Wo\.T/,
  },
  {
    // K.T on the 4-D heads reverses every axis; it runs only where B = h = T = hs
    name: 'k-dot-T-on-four-axes',
    find: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    replace: 'scores = Q @ K.T / np.sqrt(hs)',
    sizes: { B: 2, T: 2, C: 4, heads: 2, seed: 3 },
    row: 'scores',
    id: 'edit-transpose-axes',
    says: /K\.transpose\(3, 2, 1, 0\) where the course has K\.transpose\(0, 1, 3, 2\)/,
  },
  {
    // the transpose made by a reshape to its shape, and the scale multiplied: a pair of edits
    name: 'k-reshaped-for-its-transpose-scale-multiplied',
    find: 'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs)',
    replace: 'scores = Q @ K.reshape(B, h, hs, T) * np.sqrt(hs)',
    sizes: { B: 2, T: 5, C: 12, heads: 3, seed: 4 },
    row: 'scores',
    id: 'edit-pair',
    says: /scores multiplied by np\.sqrt\(hs\) where the course divides by it, and K\.reshape\(B, h, hs, T\) where the course has K\.transpose\(0, 1, 3, 2\)/,
  },
  {
    // the mask hides the diagonal too, filled with -1e9 (query 0 sees no key: its row of att
    // spreads 1/T over every key); att is the softmax of the saved scores, said so
    name: 'diagonal-masked-with-a-large-fill',
    find: ['np.ones((T, T), dtype=bool), k=1)', 'scores = np.where(mask, -np.inf, scores)'],
    replace: ['np.ones((T, T), dtype=bool), k=0)', 'scores = np.where(mask, -1e9, scores)'],
    causal: true,
    row: 'scores',
    id: 'mask-fill',
    says: /hides the diagonal too/,
    then: { att: 'mask-fill' },
    thenSays: { att: /hides every key of query 0, whose row then spreads equal weights 1\/4/ },
  },
  { name: 'clean', find: '', replace: '', row: null, causal: true },
];

const TRAINING = ['losses', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after', 'lr', 'steps'];
// the layer's results (check_mutants.py's RESULTS): left out where only the loop is looked at
const RESULTS = ['Q', 'K', 'V', 'scores', 'att', 'headout', 'concat', 'Y', 'loss', 'dY', 'dWo'];
RESULTS.push('dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK', 'dWq', 'dWk', 'dWv', 'dX');

test('one hand-written mistake per notebook: named as an edit at its first differing row', () => {
  const sizes = (c) => ({ B: 2, T: 4, C: 8, heads: 2, causal: !!c.causal, seed: 11, ...c.sizes });
  const cases = CASES.map((c) => ({
    name: c.name,
    find: c.find,
    replace: c.replace,
    sizes: sizes(c),
    drop: [...TRAINING.filter((n) => !c.keep?.includes(n)), ...(c.drop ?? [])],
    rename: c.rename ?? {},
  }));
  withNotebooks(cases, (load) => {
    for (const c of CASES) {
      const arrays = load(c.name);
      const report = checkNotebook(mha, arrays, { heads: sizes(c).heads, causal: !!c.causal });
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
      if (c.only) {
        const names = flagged.map((r) => r.name);
        assert.deepEqual(names, c.only, `${c.name}: flagged`);
      }
      assert.equal(flagged[0].diagnosis?.id, c.id, `${c.name}: ${flagged[0].diagnosis?.message}`);
      if (c.says) assert.match(flagged[0].diagnosis.message, c.says, c.name);
      for (const [name, id] of Object.entries(c.then ?? {})) {
        const r = flagged.find((x) => x.name === name);
        assert.equal(r?.diagnosis?.id, id, `${c.name}: ${name} ${r?.diagnosis?.message}`);
      }
      for (const [name, says] of Object.entries(c.thenSays ?? {})) {
        assert.match(flagged.find((x) => x.name === name)?.diagnosis?.message ?? '', says, c.name);
      }
      for (const r of flagged) {
        assert.ok(!c.never?.includes(r.diagnosis?.id), `${c.name}: ${r.name} ${r.diagnosis?.id}`);
      }
    }
  });
});

// Mistakes in lesson 5's loop (the notebook's `train`), lr and steps saved: named at losses, the
// first array the loop records, the weights after it following from it; and a mistake in the
// layer that the loop, replayed with it, carries into every training array.
// the loop's update with the previous step's gradients (G), none at the first step
const UPDATE_WITH_PREVIOUS = [
  '        if step:',
  ...['q', 'k', 'v', 'o'].map((w) => `            W${w} = W${w} - lr * G["dW${w}"]`),
  '        G = g',
  '        continue\n',
].join('\n');
const LOOP_CASES = [
  {
    // a run that diverges (losses[6] is 4e9 × losses[0]): named from its losses before it
    name: 'diverging-run-wv-without-its-gradient',
    find: 'Wv = Wv - lr * g["dWv"]',
    replace: 'Wv = Wv - lr',
    sizes: { B: 1, T: 4, C: 32, heads: 4, causal: true, seed: 977800019 },
    // (past 10⁹ the replay's rounding differs from NumPy's by the BLAS kernel: on some it agrees
    // to the end, on others not; the losses from step 7 on are moved by 10⁻⁶ so that every
    // kernel gives a run the replay cannot follow after it diverges)
    diverged: 7,
    id: 'loop-gradient-dropped',
    says: /it reproduces your losses\[0:6\] \(your run diverges: losses\[6\] is /,
    follows:
      /^follows from losses: the same loop diverges as your run does; your W[qkvo]_after, after it, is not compared\.$/,
  },
  {
    name: 'wq-never-updated',
    find: 'Wq = Wq - lr * g["dWq"]',
    replace: 'Wq = Wq',
    id: 'loop-not-updated',
    says: /Wq is never updated/,
  },
  {
    name: 'wk-with-dwv',
    find: 'Wk = Wk - lr * g["dWk"]',
    replace: 'Wk = Wk - lr * g["dWv"]',
    id: 'loop-other-gradient',
    says: /Wk is updated with dWv/,
  },
  {
    name: 'gradients-never-reset',
    find: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    replace:
      '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n' +
      '        acc = {k: g[k] + (acc[k] if step else 0) for k in ("dWq", "dWk", "dWv", "dWo")}\n' +
      '        g = dict(g, **acc)\n',
    id: 'loop-gradients-accumulated',
    says: /never reset: each step uses the sum of every step’s gradients so far/,
  },
  {
    // a check pass's backward before the loop, at the same weights, left in the sum
    name: 'gradients-never-reset-after-a-check-pass',
    find: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    replace:
      '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n' +
      '        acc = {k: g[k] * (2 if step == 0 else 1) + (acc[k] if step else 0)\n' +
      '               for k in ("dWq", "dWk", "dWv", "dWo")}\n' +
      '        g = dict(g, **acc)\n',
    id: 'loop-gradients-accumulated',
    says: /already held the gradients of a backward run before the loop/,
  },
  {
    // the weights' gradients through one helper that reshapes without the transpose
    // (inp.reshape(C, -1) @ g.reshape(-1, C)), only the run saved: one edit of the layer's
    // program made in four lines, found by replaying the loop with it (at B·T ≠ C: at B·T = C
    // X.reshape(C, -1) holds X.reshape(-1, C)'s numbers)
    name: 'weight-gradients-through-a-reshaping-helper',
    sizes: { B: 2, T: 3, C: 4, heads: 2, causal: false, seed: 5 },
    find: [
      'dWo = concat.reshape(-1, C).T @ dY.reshape(-1, C)',
      'dWq = X.reshape(-1, C).T @ dQm.reshape(-1, C)',
      'dWk = X.reshape(-1, C).T @ dKm.reshape(-1, C)',
      'dWv = X.reshape(-1, C).T @ dVm.reshape(-1, C)',
    ],
    replace: [
      'dWo = concat.reshape(C, -1) @ dY.reshape(-1, C)',
      'dWq = X.reshape(C, -1) @ dQm.reshape(-1, C)',
      'dWk = X.reshape(C, -1) @ dKm.reshape(-1, C)',
      'dWv = X.reshape(C, -1) @ dVm.reshape(-1, C)',
    ],
    drop: RESULTS,
    id: 'loop-layer-edit',
    says: /the same change in the lines of dWo, dWq, dWk and dWv \(one helper they share\) at every step: dWo = concat\.reshape\(C, -1\) @ dY\.reshape\(-1, C\)/,
  },
  {
    // the softmax backward summed over the queries, in a training run saved alone
    name: 'training-softmax-backward-over-the-queries',
    find: 'dscores = att * (datt - (datt * att).sum(axis=-1, keepdims=True))',
    replace: 'dscores = att * (datt - (datt * att).sum(axis=-2, keepdims=True))',
    drop: RESULTS,
    id: 'loop-layer-edit',
    says: /a change in the line of dscores at every step: dscores = att \* \(datt - \(datt \* att\)\.sum\(axis=-2, keepdims=True\)\)/,
  },
  {
    // the loss recorded as the norm of the error, not squared; the gradient the course's
    name: 'loss-recorded-as-a-norm',
    find: 'losses.append(g["loss"])',
    replace: 'losses.append(np.linalg.norm(g["Y"] - target) / g["Y"].size)',
    drop: RESULTS,
    id: 'loop-loss-form',
    says: /the loss is the norm of the error divided by its size, not squared/,
  },
  {
    name: 'ascent',
    find: 'Wo = Wo - lr * g["dWo"]',
    replace: 'Wo = Wo + lr * g["dWo"]',
    id: 'loop-sign',
    says: /for Wo: the sign of the step is flipped/,
  },
  {
    name: 'wk-from-the-updated-wq',
    find: 'Wk = Wk - lr * g["dWk"]',
    replace: 'Wk = Wq - lr * g["dWk"]',
    id: 'loop-other-weight',
  },
  {
    name: 'wv-without-its-gradient',
    find: 'Wv = Wv - lr * g["dWv"]',
    replace: 'Wv = Wv - lr',
    id: 'loop-gradient-dropped',
    sizes: { B: 1, T: 2, C: 4, heads: 2, causal: false, seed: 5 },
  },
  {
    name: 'wo-rounded-to-float32',
    find: 'Wo = Wo - lr * g["dWo"]',
    replace: 'Wo = (Wo - lr * g["dWo"]).astype(np.float32)',
    id: 'loop-float32',
  },
  {
    name: 'lr-squared-for-wq',
    find: 'Wq = Wq - lr * g["dWq"]',
    replace: 'Wq = Wq - lr * lr * g["dWq"]',
    id: 'loop-lr',
    // (at lr = 0.5, lr² is lr / 2: both named, one step)
    says: /for Wq: the step is half the course’s: W = W - lr \* dW \/ 2; or, the same step at lr = 0\.5: the step is lr \* lr \* dW \(lr squared: 0\.25\)/,
  },
  {
    name: 'the-loss-against-x',
    find: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    replace: '        g = layer(X, Wq, Wk, Wv, Wo, X, h, causal)\n',
    id: 'loop-target',
  },
  {
    name: 'the-layer-run-once',
    find: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    replace:
      '        g = g0 if step else layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n        g0 = g\n',
    id: 'loop-gradients-stale',
  },
  {
    name: 'update-before-the-backward',
    find: '        Wq = Wq - lr * g["dWq"]\n        Wk = Wk - lr * g["dWk"]\n',
    replace: UPDATE_WITH_PREVIOUS,
    id: 'loop-update-first',
  },
  {
    // the update between the forward and the backward (in place, with the previous step's
    // gradients): the backward's dconcat = dY @ Wo.T reads the Wo just updated
    name: 'update-between-the-forward-and-the-backward',
    find: [
      'def layer(X, Wq, Wk, Wv, Wo, target, h, causal):\n',
      '    dconcat = dY @ Wo.T',
      '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
      '        Wq = Wq - lr * g["dWq"]\n        Wk = Wk - lr * g["dWk"]\n',
    ],
    replace: [
      'STEP = [0]\n\n\ndef layer(X, Wq, Wk, Wv, Wo, target, h, causal):\n',
      '    dconcat = dY @ (Wo - STEP[0]).T',
      '        STEP[0] = lr * G["dWo"] if step else 0\n' +
        '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
      UPDATE_WITH_PREVIOUS,
    ],
    id: 'loop-update-first',
    drop: RESULTS,
    says: /between its forward and its backward.*dconcat = dY @ Wo\.T reads the updated Wo/,
  },
  {
    // two changes: a layer's own mistake in every step (dWk from dV) and one step fewer
    name: 'layer-edit-and-one-step-fewer',
    find: ['    dKm = dK.transpose', '    for step in range(steps):'],
    replace: ['    dKm = dV.transpose', '    for step in range(steps - 1):'],
    id: 'loop-layer-edit',
    drop: RESULTS,
    says: /and the loop runs one step fewer than steps\. Replayed from your initial weights for 9 steps/,
  },
  {
    name: 'loss-after-the-update',
    find: ['        losses.append(g["loss"])\n', '        Wo = Wo - lr * g["dWo"]\n'],
    replace: [
      '',
      '        Wo = Wo - lr * g["dWo"]\n' +
        '        losses.append(layer(X, Wq, Wk, Wv, Wo, target, h, causal)["loss"])\n',
    ],
    id: 'loop-loss-after-update',
  },
  {
    name: 'losses-never-appended',
    find: '        losses.append(g["loss"])\n',
    replace: '',
    id: 'loop-losses-not-recorded',
    first: 'losses',
    status: 'shape',
  },
  {
    name: 'one-step-fewer',
    find: '    for step in range(steps):',
    replace: '    for step in range(steps - 1):',
    id: 'loop-steps',
    drop: ['losses'],
    first: 'Wq_after',
  },
  {
    // a size of the layer as the step's factor (a gradient summed over the tokens, say): named
    name: 'wv-step-times-T',
    find: '        Wv = Wv - lr * g["dWv"]',
    replace: '        Wv = Wv - lr * g["dWv"] * X.shape[1]',
    sizes: { B: 1, T: 3, C: 8, heads: 2, causal: false, seed: 7 },
    id: 'loop-lr',
    says: /for Wv: the step is 3 × lr \* dW \(3 = B·T = T\)/,
  },
  {
    // losses kept (one entry fewer than steps): the weights after steps - 1 steps are not the
    // weights after `steps`, though they are after as many steps as losses has entries
    name: 'one-step-fewer-losses-saved',
    find: '    for step in range(steps):',
    replace: '    for step in range(steps - 1):',
    id: 'loop-steps',
    first: 'losses',
    status: 'shape',
    says: /has 9 entries, the course's first 9 losses, while your steps is 10: your loop ran 9 steps \(one step fewer\)/,
  },
  {
    // the loop updates the very arrays the notebook saves as the initial weights (in place)
    name: 'weights-updated-in-place',
    find: ['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - lr * g["dW${w}"]`),
    replace: ['q', 'k', 'v', 'o'].map((w) => `W${w} -= lr * g["dW${w}"]`),
    drop: RESULTS,
    id: 'loop-weights-aliased',
    says: /equal your Wq_after, Wk_after, Wv_after and Wo_after, every entry exactly, while your losses change/,
    follows: /^follows from losses: the same arrays\.$/,
  },
  {
    // the weights and the gradients zipped in two orders: each weight stepped with another's
    name: 'gradients-zipped-in-another-order',
    find: ['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - lr * g["dW${w}"]`),
    replace: ['q', 'k', 'v', 'o'].map(
      (w, i) => `W${w} = W${w} - lr * g["dW${['o', 'v', 'q', 'k'][i]}"]`,
    ),
    id: 'loop-gradients-permuted',
    says: /Wq with dWo, Wk with dWv, Wv with dWq and Wo with dWk/,
  },
  {
    // one gradient array for the four weights (dict.fromkeys): each stepped with their sum
    name: 'gradients-in-one-shared-array',
    find: ['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - lr * g["dW${w}"]`),
    replace: ['q', 'k', 'v', 'o'].map(
      (w) => `W${w} = W${w} - lr * (g["dWq"] + g["dWk"] + g["dWv"] + g["dWo"])`,
    ),
    id: 'loop-shared-gradient',
    says: /every weight is stepped with the sum of the four gradients/,
  },
  {
    // the backward fed a dY kept from before the loop: the loop's layer takes it as an argument
    name: 'backward-fed-the-first-dY',
    find: [
      'def layer(X, Wq, Wk, Wv, Wo, target, h, causal):',
      '    dY = 2 * (Y - target) / Y.size',
      '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    ],
    replace: [
      'def layer(X, Wq, Wk, Wv, Wo, target, h, causal, dY0=None):',
      '    dY = 2 * (Y - target) / Y.size if dY0 is None else dY0',
      '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal, g0["dY"] if step else None)\n' +
        '        g0 = g if not step else g0\n',
    ],
    id: 'loop-dy-stale',
    drop: RESULTS,
    sizes: { B: 2, T: 4, C: 8, heads: 2, causal: true, seed: 11 },
    says: /every step’s backward is fed the first step’s dY/,
  },
  {
    // the loop's forward without the mask the layer was checked with
    name: 'loop-forgets-the-mask',
    find: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, causal)\n',
    replace: '        g = layer(X, Wq, Wk, Wv, Wo, target, h, False)\n',
    id: 'loop-mask',
    drop: RESULTS,
    sizes: { B: 2, T: 4, C: 8, heads: 2, causal: true, seed: 12 },
    says: /the loop’s forward runs without the causal mask/,
  },
  {
    // the error scaled in place to dY before the loss reads it: each loss (2 / Y.size)² × the
    // course's, the steps right
    name: 'loss-of-the-scaled-error',
    find: ['    loss = np.mean((Y - target) ** 2)\n    dY = 2 * (Y - target) / Y.size'],
    replace: [
      '    err = Y - target\n    err *= 2 / err.size\n    dY = err\n    loss = np.mean(err ** 2)',
    ],
    id: 'factor',
    drop: RESULTS,
    says: /\(2 \/ Y\.size\)²/,
  },
  {
    // the step takes a learning rate of its own (a default argument), not the lr saved
    name: 'a-learning-rate-of-its-own',
    find: ['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - lr * g["dW${w}"]`),
    replace: ['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - 0.01 * g["dW${w}"]`),
    id: 'loop-lr',
    says: /the step’s learning rate is 0\.01, not your lr = 0\.5: W = W - 0\.01 \* dW/,
  },
  {
    // the learning rate decays after each update (lr *= 0.9): the losses agree at steps 0 and 1,
    // then γ is fitted from losses[2] and proven by the whole run
    name: 'learning-rate-decays',
    find: '        Wo = Wo - lr * g["dWo"]\n',
    replace: '        Wo = Wo - lr * g["dWo"]\n        lr *= 0.9\n',
    id: 'loop-lr-schedule',
    drop: RESULTS,
    says: /the learning rate decays after every step \(lr \*= 0\.9\): step k takes lr × 0\.9\^k/,
  },
  {
    // a step schedule: the learning rate halved every 3 steps
    name: 'learning-rate-halved-every-3-steps',
    find: '        Wo = Wo - lr * g["dWo"]\n',
    replace:
      '        Wo = Wo - lr * g["dWo"]\n        if step % 3 == 2:\n            lr = lr / 2\n',
    id: 'loop-lr-schedule',
    drop: RESULTS,
    says: /the learning rate is multiplied by 0\.5 every 3 steps/,
  },
  {
    // momentum: a velocity per gradient kept across steps (losses 0 and 1 agree, β fitted from
    // losses[2] and proven by the whole run)
    name: 'momentum',
    find: ['    losses = []\n', '        losses.append(g["loss"])\n'],
    replace: [
      '    losses = []\n    v = dict.fromkeys(["dWq", "dWk", "dWv", "dWo"], 0)\n',
      '        losses.append(g["loss"])\n' +
        '        for n in v: v[n] = 0.9 * v[n] + g[n]; g[n] = v[n]\n',
    ],
    id: 'loop-momentum',
    drop: RESULTS,
    says: /momentum, a velocity kept per weight across steps: v = 0\.9 \* v \+ dW; W = W - lr \* v/,
  },
  {
    // Adam with its usual constants and the bias correction, at the notebook's lr
    name: 'adam',
    find: ['    losses = []\n', '        losses.append(g["loss"])\n'],
    replace: [
      '    losses = []\n    m = dict.fromkeys(["dWq", "dWk", "dWv", "dWo"], 0); s = dict(m)\n',
      '        losses.append(g["loss"])\n' +
        '        for n in m:\n' +
        '            m[n] = 0.9 * m[n] + 0.1 * g[n]; s[n] = 0.999 * s[n] + 0.001 * g[n] ** 2\n' +
        '            g[n] = m[n] / (1 - 0.9 ** (step + 1))' +
        ' / (np.sqrt(s[n] / (1 - 0.999 ** (step + 1))) + 1e-8)\n',
    ],
    id: 'loop-adam',
    drop: RESULTS,
    says: /Adam’s \(β1 = 0\.9, β2 = 0\.999, ε = 1e-8, with the bias correction\)/,
  },
  {
    // two changes of the loop: its own learning rate, and one step fewer (9 losses, steps 10)
    name: 'own-learning-rate-one-step-fewer',
    find: [
      '    for step in range(steps):',
      ...['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - lr * g["dW${w}"]`),
    ],
    replace: [
      '    for step in range(steps - 1):',
      ...['q', 'k', 'v', 'o'].map((w) => `W${w} = W${w} - 0.01 * g["dW${w}"]`),
    ],
    id: 'loop-steps',
    says: /these changes: the loop runs one step fewer than steps; and the step’s learning rate is 0\.01, not your lr = 0\.5/,
  },
  {
    // Wo stepped inside the backward, above the line that reads it (lr 0.5, the loop's)
    name: 'wo-updated-inside-the-backward',
    find: '    dconcat = dY @ Wo.T',
    replace: '    Wo = Wo - 0.5 * dWo\n    dconcat = dY @ Wo.T',
    drop: RESULTS,
    id: 'loop-update-in-backward',
    says: /Wo is updated inside the backward before dconcat = dY @ Wo\.T reads it/,
  },
  {
    name: 'layer-mistake-in-training',
    find: 'att = e / e.sum(axis=-1, keepdims=True)',
    replace: 'att = e / e.sum(axis=-2, keepdims=True)',
    layer: 'att',
  },
];

// A loss of another convention, half the mean of the squares with its own gradient: the course's
// training read so (every training row a match, said), and a mistake of the loop beside it named
// as the edit of that loop. Only the training arrays are saved (the single step's loss and dY
// are the check's other rows).
test('the loss as half the mean of the squares: a reading of the loop, with an edit or not', () => {
  const half = [
    ['    loss = np.mean((Y - target) ** 2)', '    loss = 0.5 * np.mean((Y - target) ** 2)'],
    ['    dY = 2 * (Y - target) / Y.size', '    dY = (Y - target) / Y.size'],
  ];
  const sizes = { B: 2, T: 4, C: 8, heads: 2, causal: true, seed: 11 };
  const drop = [...RESULTS, 'dconcat', 'dheadout', 'dV', 'datt', 'dscores', 'dQ', 'dK'];
  const more = ['dWq', 'dWk', 'dWv', 'dX'];
  const cases = [
    { name: 'half-mse', find: half.map(([a]) => a), replace: half.map(([, b]) => b) },
    {
      name: 'half-mse-wk-with-dwq',
      find: [...half.map(([a]) => a), 'Wk = Wk - lr * g["dWk"]'],
      replace: [...half.map(([, b]) => b), 'Wk = Wk - lr * g["dWq"]'],
    },
  ].map((c) => ({ ...c, sizes, drop: [...drop, ...more] }));
  withNotebooks(cases, (load) => {
    const right = checkNotebook(mha, load('half-mse'), { heads: 2, causal: true }).rows;
    const training = right.filter((r) => r.name === 'losses' || r.name.endsWith('_after'));
    assert.equal(training.length, 5);
    for (const r of training) {
      assert.equal(r.status, 'match', `${r.name}: ${r.diagnosis?.message}`);
      assert.match(r.note, /read with your loss, half the mean of the squares/, r.name);
    }
    const wrong = checkNotebook(mha, load('half-mse-wk-with-dwq'), { heads: 2, causal: true });
    const flagged = wrong.rows.filter((r) => r.status === 'differs');
    assert.equal(flagged[0]?.name, 'losses');
    assert.equal(flagged[0].diagnosis.id, 'loop-other-gradient', flagged[0].diagnosis.message);
    assert.match(flagged[0].diagnosis.message, /Wk is updated with dWq.*read with your loss, half/);
    assert.doesNotMatch(flagged[0].diagnosis.message, /differ from step 0/);
  });
});

test('one hand-written mistake in the training loop: named at losses, the rest following', () => {
  const sizes = { B: 2, T: 4, C: 8, heads: 2, causal: false, seed: 5 };
  const cases = LOOP_CASES.map((c) => ({ sizes, drop: [], ...c }));
  withNotebooks(cases, (load) => {
    for (const c of LOOP_CASES) {
      const arrays = load(c.name);
      if (c.diverged) {
        const { losses } = arrays;
        arrays.losses = {
          ...losses,
          data: losses.data.map((x, k) => (k >= c.diverged ? x * (1 + 1e-6) : x)),
        };
      }
      const heads = c.sizes?.heads ?? 2;
      const rows = checkNotebook(mha, arrays, { heads, causal: !!c.sizes?.causal }).rows;
      const flagged = rows.filter((r) => r.status === 'differs' || r.status === 'shape');
      const training = rows.filter((r) => r.name === 'losses' || r.name.endsWith('_after'));
      assert.deepEqual(
        training.map((r) => r.name),
        ['losses', 'Wq_after', 'Wk_after', 'Wv_after', 'Wo_after'].filter(
          (n) => !c.drop?.includes(n),
        ),
      );
      if (c.layer) {
        assert.equal(flagged[0].name, c.layer, c.name);
        for (const r of training) {
          assert.equal(r.status, 'differs', `${c.name}: ${r.name}`);
          assert.equal(r.diagnosis.id, 'follows-from', `${c.name}: ${r.diagnosis.message}`);
          assert.match(r.diagnosis.message, /^follows from att: the course's training loop/);
        }
        continue;
      }
      const first = c.first ?? 'losses';
      assert.equal(flagged[0]?.name, first, `${c.name}: the first flagged row`);
      assert.equal(flagged[0].status, c.status ?? 'differs', c.name);
      assert.equal(flagged[0].diagnosis.id, c.id, `${c.name}: ${flagged[0].diagnosis.message}`);
      if (c.says) assert.match(flagged[0].diagnosis.message, c.says, c.name);
      const follows = c.follows ?? new RegExp(`^follows from ${first}: the same loop reproduces`);
      for (const r of flagged.slice(1)) {
        assert.ok(r.name.endsWith('_after'), `${c.name}: ${r.name} differs`);
        if (c.status !== 'shape') assert.match(r.diagnosis.message, follows, c.name);
      }
    }
  });
});

// Edits the check's older analyses name first at the row (a merge without its transpose, a
// residual, a factor …): the search alone, on the student's arrays before the row, must find
// them too. Each: the line replaced, the row searched, the kind of the edit found first.
const SEARCH_CASES = [
  {
    name: 'split-by-reshape',
    find: 'dheadout = dconcat.reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
    replace: 'dheadout = dconcat.reshape(B, h, T, hs)',
    row: 'dheadout',
    kind: 'reshape-without-transpose',
  },
  {
    name: 'dx-without-the-k-path',
    find: 'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T',
    replace: 'dX = dQm @ Wq.T + dVm @ Wv.T',
    row: 'dX',
    kind: 'term-dropped',
  },
  {
    name: 'a-residual',
    find: 'Y = concat @ Wo',
    replace: 'Y = concat @ Wo + X',
    row: 'Y',
    kind: 'term-added',
  },
  {
    name: 'headout-over-h',
    find: 'headout = att @ V',
    replace: 'headout = att @ V / h',
    row: 'headout',
    kind: 'factor',
  },
  {
    name: 'mask-filled-with-zero',
    find: '        scores = np.where(mask, -np.inf, scores)',
    replace: '        scores = np.where(mask, 0, scores)',
    row: 'att',
    kind: 'mask',
    causal: true,
  },
  {
    // the scale multiplied where the course divides (the factor analysis names it first)
    name: 'scale-multiplied',
    find: 'dQ = dscores @ K / np.sqrt(hs)',
    replace: 'dQ = dscores @ K * np.sqrt(hs)',
    row: 'dQ',
    kind: 'inverted',
  },
];

// the course's results in order, and the check's sizes
const ORDER = PROGRAM_NODES.filter((n) => !/^d?[QKV]m$/.test(n));

test('the edit search alone finds the edits older analyses name first', () => {
  const sizes = (c) => ({ B: 2, T: 4, C: 8, heads: 2, causal: !!c.causal, seed: 11 });
  const cases = SEARCH_CASES.map((c) => ({ ...c, sizes: sizes(c), drop: [] }));
  withNotebooks(cases, (load) => {
    for (const c of SEARCH_CASES) {
      const a = load(c.name);
      const { B, T, C, heads } = sizes(c);
      const s = { B, T, C, heads, hs: C / heads, N: B * T, n: B * T * C, causal: !!c.causal };
      const inputs = ['X', 'Wq', 'Wk', 'Wv', 'Wo', 'target'].map((k) => [k, a[k].data]);
      const pipe = new Pipeline({ ...s, loss: 'mse' }, Object.fromEntries(inputs));
      // the student's results before the row, as the check gives them to the pipeline
      for (const n of ORDER.slice(0, ORDER.indexOf(c.row))) if (a[n]) pipe.provide(n, a[n].data);
      const hits = findEdits(pipe, c.row, a[c.row].data, { dtype: '<f8' });
      assert.equal(hits[0]?.edit.kind, c.kind, `${c.name}: ${hits.map((h) => h.edit.kind)}`);
    }
  });
});

test('every edit the catalogue names is made by a case of this file', () => {
  const named = new Set([
    ...CASES.map((c) => c.id),
    ...LOOP_CASES.map((c) => c.id),
    ...SEARCH_CASES.map((c) => `edit-${c.kind}`),
  ]);
  const edits = MISTAKES.filter((m) => /^edit of the /.test(m.kind)).map((m) => m.id);
  assert.deepEqual(
    edits.filter((id) => !named.has(id)),
    [],
  );
  assert.ok(edits.length >= 30, `${edits.length}`);
});

test('initial weights under their own names beside the trained layer: the run starts there', () => {
  const sizes = { B: 2, T: 4, C: 8, heads: 2, causal: false, seed: 5 };
  const W = ['Wq', 'Wk', 'Wv', 'Wo'];
  // the page's layer line run after training: the layer's weights are the trained ones
  const rename = Object.fromEntries(W.flatMap((w) => [[w, `${w}_init`]]));
  const cases = [{ name: 'initial-weights-apart', find: '', replace: '', sizes, drop: RESULTS }];
  withNotebooks([{ ...cases[0], rename }], (load) => {
    const arrays = load('initial-weights-apart');
    for (const w of W) {
      arrays[w] = arrays[`${w}_after`];
      delete arrays[`${w}_after`];
    }
    const report = checkNotebook(mha, arrays, { heads: 2 });
    const training = report.rows.filter((r) => r.name === 'losses' || r.name.endsWith('_after'));
    assert.deepEqual(
      training.map((r) => `${r.name} ${r.status}`),
      ['losses match', 'Wq_after match', 'Wk_after match', 'Wv_after match', 'Wo_after match'],
    );
    assert.ok(
      report.notes.some((n) =>
        /^Wq_init read as the initial weights .* your Wq as the weights after it/.test(n),
      ),
      report.notes.join('\n'),
    );
    assert.ok(!report.ignored?.includes('Wq_init'), 'Wq_init is read');
    // the same file read the other way (Wq_init left out): the run from the trained weights is
    // not the file's losses, and the rows say so
    const apart = { ...arrays };
    delete apart.Wq_init;
    const other = checkNotebook(mha, apart, { heads: 2 });
    assert.equal(other.rows.find((r) => r.name === 'losses').status, 'differs');
  });
});

test('a training file of (out, in) weights with biases it trains: read by its first loss', () => {
  const sizes = { B: 2, T: 4, C: 8, heads: 2, causal: false, seed: 5 };
  const cases = [{ name: 'torch-run', find: '', replace: '', sizes, drop: RESULTS }];
  withNotebooks(cases, (load) => {
    const a = load('torch-run');
    const C = 8;
    const t = (m) => ({
      ...m,
      data: m.data.map((_, i) => m.data[(i % C) * C + Math.floor(i / C)]),
    });
    const zeros = { data: new Float64Array(C), shape: [C] };
    const file = { x: a.X, target: a.target, lr: a.lr, steps: a.steps, losses: a.losses };
    for (const [w, p] of [
      ['Wq', 'q'],
      ['Wk', 'k'],
      ['Wv', 'v'],
      ['Wo', 'out'],
    ]) {
      file[`${p}_proj.weight`] = t(a[w]); // (out, in): PyTorch's state_dict
      file[`${p}_proj.bias`] = zeros;
      // the run trained the biases: they moved off zero
      file[`${p}_proj.bias_after`] = { data: zeros.data.map((_, i) => 1e-3 * (i + 1)), shape: [C] };
    }
    const report = checkNotebook(mha, file, { heads: 2 });
    const losses = report.rows.find((r) => r.name === 'losses');
    assert.equal(losses?.status, 'match', losses?.diagnosis?.message);
    assert.ok(
      report.notes.some((n) => /stored \(out, in\)/.test(n)),
      report.notes.join('\n'),
    );
    assert.ok(
      report.notes.some((n) =>
        /show your run trains biases.*only the loss at your initial/.test(n),
      ),
      report.notes.join('\n'),
    );
    // read as they are, the same weights give another first loss: the (out, in) reading is the
    // one the losses prove
    const asIs = checkNotebook(mha, file, { heads: 2, weights: 'in-out' });
    assert.equal(asIs.rows.find((r) => r.name === 'losses')?.status, 'differs');
  });
});

test('the layer saved after training, its initial weights not saved: a note, no losses row', () => {
  const sizes = { B: 2, T: 4, C: 8, heads: 2, causal: false, seed: 5 };
  const cases = [{ name: 'trained-layer', find: '', replace: '', sizes, drop: RESULTS }];
  withNotebooks(cases, (load) => {
    const a = load('trained-layer');
    const file = { X: a.X, target: a.target, lr: a.lr, steps: a.steps, losses: a.losses };
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) file[w] = a[`${w}_after`];
    const report = checkNotebook(mha, file, { heads: 2 });
    assert.equal(
      report.rows.find((r) => r.name === 'losses'),
      undefined,
    );
    assert.ok(
      report.notes.some((n) =>
        /^losses not checked: the loss at your Wq, .* below every loss/.test(n),
      ),
      report.notes.join('\n'),
    );
    assert.ok(!report.notes.some((n) => /^lr = .* found from your losses/.test(n)));
    // the same run with its initial weights as Wq_init …: checked from them, every row a match
    const init = { ...file };
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) init[`${w}_init`] = a[w];
    const rows = checkNotebook(mha, init, { heads: 2 }).rows.filter((r) => r.name === 'losses');
    assert.deepEqual(
      rows.map((r) => r.status),
      ['match'],
    );
    // the initial weights alone, under Wq_init …: read as the layer's
    const only = { ...file };
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
      only[`${w}_init`] = a[w];
      only[`${w}_trained`] = a[`${w}_after`];
      delete only[w];
    }
    const alone = checkNotebook(mha, only, { heads: 2 });
    assert.ok(
      alone.notes.includes("Wq_init read as Wq: your file's weights are the run's initial ones"),
    );
    assert.deepEqual(
      alone.rows.filter((r) => r.status !== 'missing').map((r) => `${r.name} ${r.status}`),
      ['losses match', 'Wq_after match', 'Wk_after match', 'Wv_after match', 'Wo_after match'],
    );
  });
});
