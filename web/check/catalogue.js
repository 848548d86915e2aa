// catalogue.js - every diagnosis of the notebook check, one record each: names and teaching text;
// it implements nothing.
//
//   { id, tensors, message,            the id, the results it is blamed on first, what it says
//     edits?: [{ sites, kinds, where }],  a known mistake: the edits of the course's program
//                                      (edits.js finds them) that are this mistake
//     analyses?: [fn], phase? }        an analysis (analyses/): a relation proven on the arrays
//
// The search over edits of the course's program finds what reproduces a student's array;
// recordOf(hit) says which record, if any, names it (its text, and the course's line for the
// step: rightLine). Analyses run in the order of the records: phase 'early' before the edits
// are searched (a mask's fill must never be blamed on the causal switch), the others after. The
// table of diagnoses in docs/notebook-check.md is these records (tests/readme.test.mjs compares
// them).
//
// Adding a diagnosis: one record here (the edit that is the mistake, or an analysis in
// analyses/), and one student notebook that makes the mistake in
// tests/reference/notebook_students.py.

import { courseLine } from './steps.js';
import {
  attentionAnalyses,
  attentionFacts,
  backwardUnmaskedAnalysis,
  dropoutAnalysis,
  epsilonAnalysis,
  hiddenAttentionAnalysis,
  unshiftedSumAnalysis,
  unusedMaskAnalysis,
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
import {
  headShareAnalysis,
  headSliceAnalysis,
  headSlotAnalysis,
  tokenSplitAnalysis,
  batchFlattenedAnalysis,
} from './analyses/heads.js';
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
  projectionInputAnalysis,
  sharedGradientAnalysis,
  tokenSumAnalysis,
} from './analyses/relations.js';

// A record names the edits of the course's program (edits.js) that are its mistake: { sites,
// kinds, where? } takes an edit found at one of `sites` whose kind (a pair's: 'pair') is one of
// `kinds` and, with `where`, whose trees say so (the subtree changed: edit.before, edit.after).
const named = (sites, kinds, where = () => true) => ({ sites, kinds, where });
const isName = (t, re) => t?.op === 'name' && re.test(t.name);
const isNum = (t, key) => t?.op === 'num' && String(t.key) === key;
// a transpose of name n (n.T or n.transpose(...))
const transposeOf = (t, re) => t?.op === 'transpose' && isName(t.a, re);
// a pair's two edits, or the edit alone
const partsOf = (e) => (e.pair ? [e.first, e.second] : [e]);
const SCALED = ['scores', 'dQ', 'dK'];

const RECORDS = [
  {
    id: 'weights-transposed',
    tensors: ['Q', 'K', 'V', 'Y'],
    message:
      'You computed X @ W.T; the course uses Q = X @ Wq (W is (C, C) with the inputs on its ' +
      'rows), and Y = concat @ Wo.',
    edits: [
      named(['Qm', 'Km', 'Vm', 'Y'], ['transpose-added'], (e) => isName(e.before, /^W[qkvo]$/)),
    ],
  },
  {
    id: 'missing-scale',
    tensors: ['scores', 'dQ', 'dK'],
    message:
      'No 1/√hs: the course uses scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs), and ' +
      'dQ = dscores @ K / np.sqrt(hs), dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs).',
    edits: [
      named(
        SCALED,
        ['term-dropped'],
        (e) => e.before.op === 'div' && isNum(e.before.b, 'sqrt(hs)'),
      ),
      named(SCALED, ['constant'], (e) => isNum(e.before, 'sqrt(hs)') && isNum(e.after, '1')),
    ],
  },
  {
    id: 'scale-sqrt-C',
    tensors: ['scores', 'dQ', 'dK'],
    message:
      'You divided by np.sqrt(C); the course divides by the square root of the head size: ' +
      'scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(hs) with hs = C // h.',
    edits: [
      named(SCALED, ['constant'], (e) => isNum(e.before, 'sqrt(hs)') && isNum(e.after, 'sqrt(C)')),
    ],
  },
  {
    id: 'softmax-wrong-axis',
    tensors: ['att'],
    message:
      "Your softmax normalises over the queries (axis=-2); each query's weights over the keys " +
      'sum to 1: att = softmax(scores, axis=-1).',
    // the sum over the queries, with the max over them or left out (a shift in each column)
    edits: [
      named(['att'], ['pair', 'axis'], (e) => {
        const parts = partsOf(e);
        const sumOverQueries = parts.some(
          (p) => p.kind === 'axis' && p.before.fn === 'sum' && [-2, 2].includes(p.after.axis),
        );
        return sumOverQueries && parts.every((p) => ['axis', 'term-dropped'].includes(p.kind));
      }),
    ],
  },
  {
    id: 'causal-mismatch',
    tensors: ['scores', 'att'],
    message:
      'The causal mask does not match the check: causal means att = softmax(np.where(mask, ' +
      '-np.inf, scores), axis=-1) with mask = np.triu(np.ones((T, T), bool), k=1); otherwise ' +
      "att = softmax(scores, axis=-1). Set the check's causal option to what your notebook does.",
    // the mask added (the check is not causal) or taken away (it is)
    edits: [
      named(
        ['scores', 'att'],
        ['mask'],
        (e) => e.added || (e.before.op === 'mask' && e.after.op !== 'mask'),
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
    edits: [named(['Q', 'K', 'V', 'dheadout'], ['reshape-without-transpose'])],
  },
  {
    id: 'merge-without-transpose',
    tensors: ['headout', 'concat', 'dQ', 'dK', 'dV'],
    message:
      'x.reshape(B, T, C) of a (B, h, T, hs) array mixes tokens and heads; merge_heads is ' +
      'x.transpose(0, 2, 1, 3).reshape(B, T, C).',
    right: 'merge_heads(x) = x.transpose(0, 2, 1, 3).reshape(B, T, C)',
    edits: [
      named(
        ['concat', 'dQm', 'dKm', 'dVm'],
        ['transpose-dropped'],
        (e) => e.before.op === 'transpose' && String(e.before.perm) === '0,2,1,3',
      ),
    ],
  },
  {
    id: 'mse-loss-sum',
    tensors: ['loss'],
    message: 'The loss is the mean: loss = np.mean((Y - target) ** 2).',
    edits: [named(['loss'], ['reduction'], (e) => e.before.fn === 'mean' && e.after.fn === 'sum')],
  },
  {
    id: 'mse-grad-factor',
    tensors: ['dY'],
    message:
      'Your dY is a constant multiple of the gradient of the mean: ' +
      'dY = 2 * (Y - target) / Y.size.',
    // named by the factor analysis (a missing 2 and a batch mean are one number at B = 2, and a
    // factor found after dY is weighed against the later arrays); the edit, for the gallery
    edits: [
      named(['dY'], ['term-dropped'], (e) => e.before.op === 'div' && isNum(e.before.b, 'Y.size')),
    ],
    searched: false,
  },
  {
    id: 'dw-transposed',
    tensors: ['dWo', 'dWq', 'dWk', 'dWv'],
    message:
      "A weight's gradient is inputᵀ @ output gradient: dWo = concat.reshape(-1, C).T @ " +
      'dY.reshape(-1, C); you computed its transpose (dY.reshape(-1, C).T @ concat...).',
    edits: [
      // the whole product transposed: (concat.reshape(-1, C).T @ dY.reshape(-1, C)).T
      named(
        ['dWo', 'dWq', 'dWk', 'dWv'],
        ['transpose-added'],
        (e) => e.before.op === 'matmul' && e.after.op === 'transpose' && e.after.a === e.before,
      ),
    ],
  },
  {
    id: 'backward-w-not-transposed',
    tensors: ['dconcat', 'dX'],
    message:
      'The gradient goes back through the transposed weight: dconcat = dY @ Wo.T and ' +
      'dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T; you used W without .T.',
    edits: [
      named(['dconcat', 'dX'], ['transpose-dropped'], (e) => transposeOf(e.before, /^W[qkvo]$/)),
    ],
  },
  {
    id: 'dv-not-transposed',
    tensors: ['dV'],
    message: 'dV = att.transpose(0, 1, 3, 2) @ dheadout; you computed att @ dheadout.',
    edits: [named(['dV'], ['transpose-dropped'], (e) => transposeOf(e.before, /^att$/))],
  },
  {
    id: 'dscores-missing-rowsum',
    tensors: ['dscores'],
    message:
      "The softmax backward subtracts each row's sum: " +
      'dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True)).',
    edits: [
      named(
        ['dscores'],
        ['term-dropped'],
        (e) => e.before.op === 'sub' && isName(e.after, /^datt$/),
      ),
    ],
  },
  {
    id: 'dq-transposed',
    tensors: ['dQ'],
    message: 'dQ = dscores @ K / np.sqrt(hs); you computed dscores.transpose(0, 1, 3, 2) @ K.',
    edits: [named(['dQ'], ['transpose-added'], (e) => isName(e.before, /^dscores$/))],
  },
  {
    id: 'dk-transposed',
    tensors: ['dK'],
    message:
      'dK = dscores.transpose(0, 1, 3, 2) @ Q / np.sqrt(hs) (scores = Q Kᵀ, so K takes ' +
      'dscores transposed); you computed dscores @ Q.',
    edits: [named(['dK'], ['transpose-dropped'], (e) => transposeOf(e.before, /^dscores$/))],
  },
  {
    id: 'dx-missing-paths',
    tensors: ['dX'],
    message:
      'X feeds Q, K and V, so dX sums three paths: dX = dQm @ Wq.T + dKm @ Wk.T + dVm @ Wv.T ' +
      '(dQm = merge_heads(dQ), ...).',
    edits: [
      named(['dX'], ['term-dropped', 'pair'], (e) =>
        partsOf(e).every((p) => p.kind === 'term-dropped' && p.before.op === 'add'),
      ),
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
    id: 'mask-not-used',
    tensors: ['att'],
    phase: 'early',
    message:
      'Your att is the softmax of the scores before the mask, while your scores hold the mask: ' +
      'the masked array made and the softmax handed the unmasked one.',
    analyses: [unusedMaskAnalysis],
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
    id: 'backward-unmasked',
    tensors: ['dV', 'dscores'],
    message:
      'Your dV or dscores is computed from an att without the causal mask: the backward ' +
      "recomputes the softmax from the scores before the mask instead of using the forward's att.",
    analyses: [backwardUnmaskedAnalysis],
  },
  {
    id: 'head-slot',
    tensors: [],
    message:
      "Your heads are each the course's head of another index, or zeros: a loop over the heads " +
      'that writes to the wrong index (a loop variable reused inside the loop).',
    analyses: [headSlotAnalysis],
  },
  {
    id: 'attention-dropout',
    tensors: ['att'],
    message:
      "Your att is dropout on the course's weights: some set to 0, the rest kept as they are or " +
      'scaled by 1/(1 - p); random at every call, for training only (the course has none).',
    analyses: [dropoutAnalysis],
  },
  {
    id: 'softmax-epsilon',
    tensors: ['att'],
    message:
      "Your att adds a small constant to the softmax's denominator (e / (e.sum(...) + eps)), a " +
      'guard against dividing by zero the max already gives: its rows sum to just under 1.',
    analyses: [epsilonAnalysis],
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
    id: 'shared-gradient',
    tensors: ['dWq', 'dWk', 'dWv', 'dWo'],
    message:
      "Your weight's gradient is the sum of several weights' gradients: one array shared by " +
      'them (dict.fromkeys(names, np.zeros(...))), each backward line adding into it.',
    analyses: [sharedGradientAnalysis],
  },
  {
    id: 'input-gradient',
    tensors: ['dQ', 'dK', 'dV'],
    message:
      "Your dQ, dK or dV is the gradient at the projection's input (dQm @ Wq.T, a path of " +
      'dX), as a layer returns it for its query, key and value inputs, not at Q, K or V.',
    analyses: [projectionInputAnalysis],
  },
  {
    id: 'token-sums',
    tensors: ['dWq', 'dWk', 'dWv', 'dWo'],
    message:
      "Your weight's gradient is the product of sums over the tokens: an einsum whose two " +
      "token axes have letters of their own ('bti,bsj->ij') where the course pairs each " +
      "token's rows ('bti,btj->ij').",
    analyses: [tokenSumAnalysis],
  },
  {
    id: 'head-slice',
    tensors: ['scores', 'headout', 'concat'],
    message:
      'Your heads read the wrong columns of the merged Q, K or V: a loop over the heads that ' +
      'slices V[:, :, i:i + hs] where head i is the columns i * hs:(i + 1) * hs (which columns ' +
      'each head read).',
    analyses: [headSliceAnalysis],
  },
  {
    id: 'token-split',
    tensors: ['concat', 'Y'],
    message:
      'Your heads are cut from the tokens, not the columns: np.hsplit(x, h) on a (B, T, C) ' +
      'array splits axis 1, so each head is a block of T / h tokens with all C columns, and ' +
      'np.hstack joins the blocks back along the tokens.',
    analyses: [tokenSplitAnalysis],
  },
  {
    id: 'batch-flattened',
    tensors: ['concat', 'Y'],
    message:
      'Your layer runs on the whole batch as one sequence (X.reshape(B * T, C)): the items ' +
      "attend to each other's tokens, where attention runs within each sequence.",
    analyses: [batchFlattenedAnalysis],
  },
  {
    id: 'head-share',
    tensors: ['Y', 'dX'],
    message:
      "Your Y or dX holds some heads' shares only: a loop over the heads that assigns " +
      '(dX = …) where it should add (dX += …), so only the last head is left, or that skips ' +
      'heads.',
    analyses: [headShareAnalysis],
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
    id: 'weight-changed',
    kind: 'edit of the program',
    tensors: ['Q', 'K', 'V', 'Y'],
    message:
      'A weight was changed after the forward used it: your Q (K, V, Y) is exactly the step with ' +
      'the saved weight moved by one constant over every entry (a finite-difference check that ' +
      'never puts the entries back) or in a few entries.',
  },
  {
    id: 'loop-loss-form',
    kind: 'edit of the loop',
    tensors: ['losses'],
    message:
      'The losses are recorded as another function of the error than the mean of its squares ' +
      '(its norm, not squared; the root of the mean square), while the gradient is the mean ' +
      'square’s: the training is the course’s, the numbers it records are not its loss.',
  },
  {
    id: 'loop-layer-edit',
    kind: 'edit of the loop',
    tensors: ['losses'],
    message:
      'The training run is the course’s loop with an edit of the layer’s own program in every ' +
      'step (a step of the backward, or one change made in several steps through a helper they ' +
      'share): replayed from the initial weights, it reproduces the saved losses and weights.',
  },
  {
    id: 'upstream-changed',
    kind: 'edit of the program',
    tensors: ['dWo', 'dconcat'],
    message:
      'dY was changed after the backward used it: the dY0 solved from your dconcat (with Wo) ' +
      'gives your dWo too, and it is not your saved dY.',
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

/**
 * The record that names a hit of the edit search (edits.js: its parts [{ site, edit }]), every
 * part one of the record's edits; null when none does. `searched`: only the records the check
 * names by the search (not those an analysis names first).
 */
export function recordOf(hit, { searched = false } = {}) {
  const parts = hit.parts ?? [{ site: hit.site, edit: hit.edit }];
  return (
    MISTAKES.find(
      (m) =>
        m.edits &&
        !(searched && m.searched === false) &&
        parts.every(({ site, edit }) => namesEdit(m, site, edit)),
    ) ?? null
  );
}

/** Whether the record names this edit at site (one of its edits takes it). */
export const namesEdit = (record, site, edit) =>
  (record.edits ?? []).some(
    (n) =>
      n.sites.includes(site) && n.kinds.includes(edit.pair ? 'pair' : edit.kind) && n.where(edit),
  );

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
