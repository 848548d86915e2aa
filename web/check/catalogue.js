// catalogue.js - every diagnosis of the notebook check, one record each:
//
//   { id, tensors, message,            the id, the results it is blamed on first, what it says
//     variants?(s) -> [variant],       a known mistake: the student's lines, as mistaken steps
//     analyses?: [fn], phase? }        an analysis (analyses/): a relation proven on the arrays
//
// A variant is { site, fn(p, param), what(param), params?, own?, maskedFill? }: the step `site`
// computed the student's way (`what` is their line; `params`: values to try, 'fit': a constant
// found by least squares; `own`: only when site is the result being checked). Analyses run in
// the order of the records: phase 'early' before the known mistakes are searched (a mask's fill
// must never be blamed on the causal switch), the others after. The table of diagnoses in
// docs/notebook-check.md is these records (tests/readme.test.mjs compares them).
//
// Adding a diagnosis: one record here (a variant, or an analysis in analyses/), and one student
// notebook that makes the mistake in tests/reference/notebook_students.py.

import * as ops from './ops.js';
import { dxPaths, maskIf, perHead, project, qkT, weightGrad, courseLine } from './steps.js';
import { meanings } from './analyses/factor.js';
import {
  attentionAnalyses,
  attentionFacts,
  hiddenAttentionAnalysis,
  unshiftedSumAnalysis,
} from './analyses/attention.js';
import { nonFiniteAnalysis } from './analyses/nonfinite.js';
import {
  diagonalSoftmaxAnalysis,
  dxPathAnalysis,
  hiddenDiagonalAnalysis,
  rowsumKeepdimsAnalysis,
  wrongOperandAnalysis,
} from './analyses/operand.js';
import { permutationAnalysis } from './analyses/permute.js';
import { EDIT_KINDS } from './edits.js';
import { LOOP_KINDS } from './loop.js';
import {
  integerAnalysis,
  maskedRowsAnalysis,
  missingHeadAnalysis,
  overwrittenAnalysis,
} from './analyses/state.js';
import {
  addedAnalysis,
  batchSubsetAnalysis,
  biasAnalysis,
  factorAnalysis,
  headMeanAnalysis,
  hiddenFactorAnalysis,
} from './analyses/relations.js';

const v = (site, fn, what, extra = {}) => ({ site, fn, what: () => what, ...extra });
const dsT = 'dscores.transpose(0, 1, 3, 2)';
const QKV = ['Q', 'K', 'V'];
const lower = (x) => x.toLowerCase();

// dQ and dK with a divisor d and dscores transposed or not
const dq = (p, s, t, d) =>
  ops.divide(perHead(p.dscores, p.K, s, { m: s.T, k: s.T, n: s.hs, transA: t }), d);
const dk = (p, s, t, d) =>
  ops.divide(perHead(p.dscores, p.Q, s, { m: s.T, k: s.T, n: s.hs, transA: t }), d);

// The line a student wrote for the factors of dY with a usual cause, as they would write it.
const DY_LINES = Object.freeze({
  'Y.size': 'dY = 2 * (Y - target), no division by Y.size (the gradient of the sum, not the mean)',
  '1/2': 'dY = (Y - target) / Y.size, no factor 2 (the square’s derivative)',
});

/**
 * dY scaled by c as a line of a notebook: the line itself when c has a usual cause (c = Y.size:
 * "dY = 2 * (Y - target), no division by Y.size (…)"), else "dY = 1.7 * 2 * (Y - target) / Y.size"
 * with what c equals when it names a quantity.
 */
function scaledDyText(c, s) {
  const hits = meanings(c, 'dY', s).filter((r) => !r.generic);
  const known = hits.find((r) => DY_LINES[r.expr]);
  if (known) return DY_LINES[known.expr];
  const num = Number(c.toPrecision(6));
  const line = `dY = ${num} * 2 * (Y - target) / Y.size`;
  return hits.length ? `${line} (${num} = ${hits[0].expr}: ${hits[0].why})` : line;
}

const RECORDS = [
  {
    id: 'weights-transposed',
    tensors: ['Q', 'K', 'V', 'Y'],
    message:
      'You computed X @ W.T; the course uses Q = X @ Wq (W is (C, C) with the inputs on its ' +
      'rows), and Y = concat @ Wo.',
    variants: (s) => [
      ...QKV.map((x) =>
        v(`${x}m`, (p) => project(p.X, p[`W${lower(x)}`], s, true), `${x} = X @ W${lower(x)}.T`),
      ),
      v('Y', (p) => project(p.concat, p.Wo, s, true), 'Y = concat @ Wo.T'),
    ],
  },
  {
    id: 'missing-scale',
    tensors: ['scores', 'dQ', 'dK'],
    message:
      'No 1/√hs: the course uses scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs), and ' +
      'dQ = dscores @ K / np.sqrt(hs), dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs).',
    variants: (s) => [
      v(
        'scores',
        (p) => qkT(p.Q, p.K, s),
        'scores = Q @ K.transpose(0, 1, 3, 2) with no / np.sqrt(hs)',
      ),
      v('dQ', (p) => dq(p, s, false, 1), 'dQ = dscores @ K with no / np.sqrt(hs)'),
      v('dK', (p) => dk(p, s, true, 1), `dK = ${dsT} @ Q with no / np.sqrt(hs)`),
    ],
  },
  {
    id: 'scale-sqrt-C',
    tensors: ['scores', 'dQ', 'dK'],
    message:
      'You divided by np.sqrt(C); the course divides by the square root of the head size: ' +
      'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs) with hs = C // h.',
    variants: (s) => [
      v(
        'scores',
        (p) => ops.divide(qkT(p.Q, p.K, s), Math.sqrt(s.C)),
        'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(C)',
      ),
      v('dQ', (p) => dq(p, s, false, Math.sqrt(s.C)), 'dQ = dscores @ K / np.sqrt(C)'),
      v('dK', (p) => dk(p, s, true, Math.sqrt(s.C)), `dK = ${dsT} @ Q / np.sqrt(C)`),
    ],
  },
  {
    id: 'softmax-wrong-axis',
    tensors: ['att'],
    message:
      "Your softmax normalises over the queries (axis=-2); each query's weights over the keys " +
      'sum to 1: att = softmax(scores, axis=-1).',
    variants: (s) => [
      v(
        'att',
        (p) => ops.softmaxColumns(maskIf(p.scores, s.causal, s), s.T),
        "att = softmax(scores, axis=-2): each key's column sums to 1",
      ),
    ],
  },
  {
    id: 'causal-mismatch',
    tensors: ['scores', 'att'],
    message:
      'The causal mask does not match the check: causal means att = softmax(np.where(mask, ' +
      '-np.inf, scores), axis=-1) with mask = np.triu(np.ones((T, T), bool), k=1); otherwise ' +
      "att = softmax(scores, axis=-1). Set the check's causal option to what your notebook does.",
    variants: (s) => [
      ...(s.causal ? [] : [maskedScores(s)]),
      v(
        'att',
        (p) => ops.softmaxRows(maskIf(p.scores, !s.causal, s), s.T),
        s.causal
          ? 'att without the causal mask (the check is causal)'
          : 'att with the causal mask (the check is not causal)',
      ),
    ],
  },
  {
    id: 'split-without-transpose',
    tensors: ['Q', 'K', 'V', 'dheadout'],
    message:
      'x.reshape(B, h, T, hs) mixes tokens and heads; split_heads is ' +
      'x.reshape(B, T, h, hs).transpose(0, 2, 1, 3).',
    right: 'split_heads(x) = x.reshape(B, T, h, hs).transpose(0, 2, 1, 3)',
    variants: () => [
      ...QKV.map((x) =>
        v(
          x,
          (p) => ops.reshapeOnly(p[`${x}m`]),
          `${x} = (X @ W${lower(x)}).reshape(B, h, T, hs), no transpose`,
        ),
      ),
      v(
        'dheadout',
        (p) => ops.reshapeOnly(p.dconcat),
        'dheadout = dconcat.reshape(B, h, T, hs), no transpose',
      ),
    ],
  },
  {
    id: 'merge-without-transpose',
    tensors: ['headout', 'concat', 'dQ', 'dK', 'dV'],
    message:
      'x.reshape(B, T, C) of a (B, h, T, hs) array mixes tokens and heads; merge_heads is ' +
      'x.transpose(0, 2, 1, 3).reshape(B, T, C).',
    right: 'merge_heads(x) = x.transpose(0, 2, 1, 3).reshape(B, T, C)',
    variants: () => [
      v(
        'concat',
        (p) => ops.reshapeOnly(p.headout),
        'concat = headout.reshape(B, T, C), no transpose',
      ),
      ...QKV.map((x) =>
        v(
          `d${x}m`,
          (p) => ops.reshapeOnly(p[`d${x}`]),
          `d${x}.reshape(B, T, C) to merge d${x}, no transpose`,
        ),
      ),
    ],
  },
  {
    id: 'mse-loss-sum',
    tensors: ['loss'],
    message: 'The loss is the mean: loss = np.mean((Y - target) ** 2).',
    variants: (s) =>
      s.loss === 'mse'
        ? [
            v(
              'loss',
              (p) => Float64Array.of(ops.dot(ops.sub(p.Y, p.target), ops.sub(p.Y, p.target))),
              'loss = np.sum((Y - target) ** 2)',
            ),
          ]
        : [],
  },
  {
    id: 'mse-grad-factor',
    tensors: ['dY'],
    message:
      'Your dY is a constant multiple of the gradient of the mean: ' +
      'dY = 2 * (Y - target) / Y.size.',
    // found by the factor analysis (a missing 2 and a batch mean are one number at B = 2, and
    // a factor found after dY is weighed against the later arrays); the variant, for a second
    // notebook line with the same factor
    variants: (s) => [
      {
        site: 'dY',
        params: 'fit',
        fn: (p, c) => ops.scale(ops.sub(p.Y, p.target), (2 / s.n) * c),
        what: (c) => scaledDyText(c, s),
      },
    ],
    searched: false,
  },
  {
    id: 'dw-transposed',
    tensors: ['dWo', 'dWq', 'dWk', 'dWv'],
    message:
      "A weight's gradient is inputᵀ @ output gradient: dWo = concat.reshape(-1, C).T @ " +
      'dY.reshape(-1, C); you computed its transpose (dY.reshape(-1, C).T @ concat...).',
    variants: (s) => [
      v(
        'dWo',
        (p) => weightGrad(p.dY, p.concat, s),
        'dWo = dY.reshape(-1, C).T @ concat.reshape(-1, C)',
      ),
      ...QKV.map((x) =>
        v(
          `dW${lower(x)}`,
          (p) => weightGrad(p[`d${x}m`], p.X, s),
          `dW${lower(x)} = d${x}m.reshape(-1, C).T @ X.reshape(-1, C)`,
        ),
      ),
    ],
  },
  {
    id: 'backward-w-not-transposed',
    tensors: ['dconcat', 'dX'],
    message:
      'The gradient goes back through the transposed weight: dconcat = dY @ Wo.T and ' +
      'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T; you used W without .T.',
    variants: (s) => [
      v('dconcat', (p) => project(p.dY, p.Wo, s), 'dconcat = dY @ Wo'),
      v('dX', (p) => dxPaths(p, s, 'QKV', true), 'dX = dQm @ Wq + dKm @ Wk + dVm @ Wv'),
    ],
  },
  {
    id: 'dv-not-transposed',
    tensors: ['dV'],
    message: 'dV = att.transpose(0, 1, 3, 2) @ dheadout; you computed att @ dheadout.',
    variants: (s) => [
      v(
        'dV',
        (p) => perHead(p.att, p.dheadout, s, { m: s.T, k: s.T, n: s.hs }),
        'dV = att @ dheadout',
      ),
    ],
  },
  {
    id: 'dscores-missing-rowsum',
    tensors: ['dscores'],
    message:
      "The softmax backward subtracts each row's sum: " +
      'dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True)).',
    variants: () => [v('dscores', (p) => ops.mul(p.att, p.datt), 'dscores = att * datt')],
  },
  {
    id: 'dq-transposed',
    tensors: ['dQ'],
    message: 'dQ = dscores @ K / np.sqrt(hs); you computed dscores.transpose(0, 1, 3, 2) @ K.',
    variants: (s) => [
      v('dQ', (p) => dq(p, s, true, Math.sqrt(s.hs)), `dQ = ${dsT} @ K / np.sqrt(hs)`),
    ],
  },
  {
    id: 'dk-transposed',
    tensors: ['dK'],
    message:
      'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs) (scores = Q Kᵀ, so K takes ' +
      'dscores transposed); you computed dscores @ Q.',
    variants: (s) => [
      v('dK', (p) => dk(p, s, false, Math.sqrt(s.hs)), 'dK = dscores @ Q / np.sqrt(hs)'),
    ],
  },
  {
    id: 'dx-missing-paths',
    tensors: ['dX'],
    message:
      'X feeds Q, K and V, so dX sums three paths: dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T ' +
      '(dQm = merge_heads(dQ), ...).',
    variants: (s) => [
      {
        site: 'dX',
        params: ['Q', 'QK'],
        fn: (p, paths) => dxPaths(p, s, paths),
        what: (paths) =>
          paths === 'Q'
            ? 'dX = dQm @ Wq.T (the Q path only)'
            : 'dX = dQm @ Wq.T + dKm @ Wk.T (no V path)',
      },
    ],
  },
  // ---- analyses: relations proven on the student's arrays, no catalogued line needed
  {
    id: 'non-finite',
    tensors: [],
    phase: 'early',
    message:
      'NaN or ±inf where the course gets finite numbers from your arrays: the first entry, and ' +
      'what made it (exp overflowing at the largest score, a row with every key masked, 0/0).',
    analyses: [nonFiniteAnalysis],
  },
  {
    id: 'mask-fill',
    tensors: ['scores', 'att'],
    phase: 'early',
    message:
      'Your causal mask fills with 0 or another finite number instead of -np.inf, hides the ' +
      'diagonal too (np.triu(..., k=0)), is one off (k=2), or hides the past (np.tril); never ' +
      'blamed on the causal option.',
    analyses: [attentionAnalyses, maskedRowsAnalysis, hiddenAttentionAnalysis],
  },
  {
    id: 'overwritten',
    tensors: [],
    phase: 'early',
    message:
      'Yours holds exactly the numbers of a later result you saved that the course computes ' +
      'from it (your scores equal your att): overwritten in place after it was used.',
    analyses: [overwrittenAnalysis],
  },
  {
    id: 'integer-array',
    tensors: [],
    phase: 'early',
    message:
      "Yours is an integer array within one per term of the course's: computed into an " +
      'integer array (np.zeros_like of an integer X), every value cut toward zero.',
    analyses: [integerAnalysis],
  },
  {
    id: 'head-missing',
    tensors: [],
    message:
      "Some heads of yours are all zeros where the course's are not, every other head the " +
      "course's: those heads were never computed (a loop over the heads that stops early).",
    analyses: [missingHeadAnalysis],
  },
  {
    id: 'softmax-not-normalised',
    tensors: ['att'],
    message:
      'Your att rows do not each sum to 1: a softmax over the whole array, the heads or the ' +
      'batch, or the mask applied after the softmax (which rows, their sums).',
    analyses: [unshiftedSumAnalysis, attentionFacts],
  },
  {
    id: 'factor',
    tensors: [],
    message:
      "Yours is k × the course's for one constant k, and what k is in this layer (1/√hs, hs, " +
      '√C, 1/B, 2 …); when two causes give the same k at these sizes, both, and what tells ' +
      'them apart.',
    analyses: [factorAnalysis, hiddenFactorAnalysis],
  },
  {
    id: 'bias',
    tensors: ['Q', 'K', 'V', 'Y'],
    message:
      "Yours is the course's plus the same row vector on every token (your bq … when saved): " +
      "a bias; the course's layer has none.",
    analyses: [biasAnalysis],
  },
  {
    id: 'permuted',
    tensors: [],
    message:
      "Yours holds the course's numbers in another order: two axes swapped, the heads or the " +
      'tokens reordered (the order shown), or (h, hs) mixed in a reshape.',
    analyses: [permutationAnalysis],
  },
  {
    id: 'reduction',
    tensors: [],
    message:
      'A sum where the course keeps things apart: the heads averaged, or a weight gradient ' +
      'summed over some batch items only (which ones).',
    analyses: [headMeanAnalysis, batchSubsetAnalysis],
  },
  {
    id: 'softmax-diagonal-only',
    tensors: ['dscores'],
    message:
      'dscores = att * (1 - att) * datt: the diagonal of the softmax’s Jacobian only; the ' +
      'course subtracts each row’s sum.',
    analyses: [diagonalSoftmaxAnalysis, hiddenDiagonalAnalysis],
  },
  {
    id: 'wrong-operand',
    tensors: [],
    message:
      'The step with another of your arrays in one place (K from Wq, V from Wk …), dX with a ' +
      'path missing, doubled or of the wrong sign, or a row sum taken without keepdims=True.',
    analyses: [dxPathAnalysis, rowsumKeepdimsAnalysis, wrongOperandAnalysis],
  },
  {
    id: 'added-array',
    tensors: [],
    message:
      "Yours is the course's plus (a multiple of) another array of the check: Y + X is a " +
      'residual inside the layer.',
    analyses: [addedAnalysis],
  },
  // (the training step's mistakes, lesson 5: the loop's edits below, LOOP_KINDS, found by
  // loop.js's search alone)
  {
    id: 'follows-from',
    tensors: [],
    message:
      'follows from <name>: this step, recomputed from your own <inputs>, matches your array.',
  },
  {
    id: 'step-differs',
    tensors: [],
    message:
      'No known mistake or relation reproduces your array; the message says what was ' +
      "measured and shows the course's line for the step.",
  },
];

// scores masked above the diagonal (the fill read from the student's array) though the check
// is not causal
function maskedScores(s) {
  return {
    site: 'scores',
    own: true,
    maskedFill: true,
    fn: (p, fill) => ops.causalMask(ops.divide(qkT(p.Q, p.K, s), Math.sqrt(s.hs)), s.T, fill),
    what: (fill) =>
      `scores masked above the diagonal (to ${fill === -Infinity ? '-np.inf' : fill}) ` +
      'though the check is not causal',
  };
}

// The edits of the course's program and of its training loop the search names (edits.js,
// loop.js, state.js): a name and what it says each; the search implements them
const EDIT_RECORDS = [
  ...Object.entries(EDIT_KINDS).map(([kind, what]) => ({
    id: `edit-${kind}`,
    kind: 'edit of the program',
    tensors: [],
    message:
      `An edit of the course's lines reproduces yours: ${what}; the row quotes your line, ` +
      "in your names, beside the course's.",
  })),
  {
    id: 'input-changed',
    kind: 'edit of the program',
    tensors: ['Q', 'K', 'V'],
    message:
      'X was changed after the projections used it: your Q (K, V) is exactly X0 @ W for an X0 ' +
      'that differs from your saved X in a few entries, or that gives every projection.',
  },
  {
    id: 'loop-weights-aliased',
    kind: 'edit of the loop',
    tensors: ['losses'],
    message:
      'Your initial weights equal your weights after the loop, every entry exactly, while ' +
      'your losses change: the loop updated in place the arrays you saved as the initial ones.',
  },
  ...Object.entries(LOOP_KINDS).map(([id, what]) => ({
    id,
    kind: 'edit of the loop',
    tensors: ['losses'],
    message:
      `Lesson 5's loop, replayed from your initial weights with one edit, reproduces every ` +
      `training array you saved: ${what}.`,
  })),
];

/** Every diagnosis of the check, one frozen record each (docs/notebook-check.md). */
export const MISTAKES = Object.freeze(
  [...RECORDS, ...EDIT_RECORDS].map((r) =>
    Object.freeze({ ...r, tensors: Object.freeze([...r.tensors]) }),
  ),
);

/** The analyses of a phase ('early' or 'late'), in the catalogue's order. */
export const analysesOf = (phase) =>
  MISTAKES.filter((m) => m.analyses && (m.phase ?? 'late') === phase).flatMap((m) => m.analyses);

/** The known mistakes the search tries (those with variants and not left to an analysis). */
export const SEARCHED = Object.freeze(
  MISTAKES.filter((m) => m.variants && m.searched !== false).map((m) => m.id),
);

/** The mistaken versions of node's step for these sizes, each with its mistake's id. */
export function variants(node, s) {
  return MISTAKES.flatMap((m) =>
    (m.variants?.(s) ?? []).filter((x) => x.site === node).map((x) => ({ ...x, id: m.id })),
  );
}

/** The course's line for the step a mistake of this id at node `site` replaces. */
export function rightLine(id, site, s) {
  const record = MISTAKES.find((m) => m.id === id);
  if (record?.right) return record.right;
  if (id === 'causal-mismatch' && site === 'scores') {
    return `${courseLine('scores', s)}, unmasked (or tick causal if your notebook masks the scores)`;
  }
  if (id === 'causal-mismatch') {
    return s.causal
      ? 'att = softmax(np.where(mask, -np.inf, scores), axis=-1) with mask = ' +
          'np.triu(np.ones((T, T), bool), k=1) (or untick causal if your notebook has no mask)'
      : 'att = softmax(scores, axis=-1) on unmasked scores (or tick causal if your notebook masks)';
  }
  const line = courseLine(site, s);
  return id === 'weights-transposed' ? `${line} (W is (C, C) with the inputs on its rows)` : line;
}
