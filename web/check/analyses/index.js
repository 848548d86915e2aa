// analyses/ - what the notebook check says about a differing array that no known mistake of the
// catalogue reproduces: the relation between the student's array and the course's one (a factor,
// a bias, another array added, a reordering, a reduction, a wrong operand, a broken invariant of
// attention, NaN or inf), each proven by recomputing from the student's own arrays within the
// row's tolerance, never guessed. What cannot be proven is said as measured facts.
//
//   const ctx = analysisContext({ pipe, node, name, yours, opts, biases, courseLine });
//   firstFound(analyses, ctx)   the first finding of a list of analyses (catalogue.js lists them,
//                               each under its diagnosis, in two phases: before the known
//                               mistakes are searched and after)
//   measuredFacts(ctx)          the last word: what was measured, no cause
//
// A result is { id, message, factor?, same?, site?, variant?, adopt? }: `site` and `variant` (or
// `adopt`, a Map site -> { variant } for several) when the cause sits
// in a step the student did not save (the check then uses it for the later steps too).

import { agrees, precisionOf, toleranceFor } from '../compare.js';
import { matmul, splitHeads } from '../ops.js';
import { layoutOf } from './layout.js';
import { sameNumbers } from './permute.js';

/** Relative slack of a saved precision for the invariants of att (rows summing to 1 …). */
const INVARIANT_TOL = { f8: 1e-9, text: 1e-9, f4: 1e-5, f2: 1e-3 };

const INPUTS = ['X', 'target', 'dY'];

/** B·T·C above which the analyses try no step the student did not save (2^17 entries). */
export const LARGE = 2 ** 17;

/**
 * The context every analysis reads: the student's array `yours` at graph node `node` (row
 * `name`), the course's step recomputed from the student's own arrays (`local`), and ways to
 * recompute with a change. `opts`: the row's comparison options; `biases`: { bq, … } the file
 * holds; `saved`: every result the student saved (node -> data), later ones too; `matched`:
 * the nodes of those that match the course's; `courseLine`: the course's line for the step.
 */
export function analysisContext(args) {
  const { pipe, node, name, yours, opts, biases = {}, saved = new Map(), courseLine } = args;
  const { matched = new Set(), lineOf = null } = args;
  const local = pipe.step(node);
  const precision = precisionOf(opts.dtype);
  const ctx = {
    pipe,
    node,
    name,
    yours,
    local,
    opts,
    courseLine,
    s: pipe.s,
    precision,
    hidden: pipe.hiddenAncestors(node),
    // above this size the causes at steps not saved are not searched (each try recomputes
    // whole arrays in JS on the page's thread): said in the measured facts
    large: pipe.s.n > LARGE,
    dtypeTol: INVARIANT_TOL[precision] ?? 1e-9,
    tolAbs: toleranceFor(local, opts).abs,
    reproduces: (mine) => mine.length === yours.length && agrees(yours, mine, opts),
    pipeValue: (n) => pipe.value(n),
    givenValue: (n) => (pipe.given.has(n) && !pipe.inputs.has(n) ? pipe.given.get(n) : null),
    savedValue: (n) => saved.get(n) ?? null,
    matched: (n) => matched.has(n),
    lineOf,
    bias: (b) => biases[b] ?? null,
    tryAt: (site, key, fn) => pipe.step(node, new Map([[site, { variant: { id: key, fn } }]])),
  };
  ctx.laterEvidence = (sites, k) => laterEvidence(ctx, sites, k);
  ctx.unmaskedScores = () => unmaskedScores(pipe);
  ctx.sameLayout = () => sameLayout(pipe, node, yours.length);
  ctx.weightGradShares = () => weightGradShares(pipe, node);
  return ctx;
}

// The student's saved arrays after `sites` (other than node) against a factor k entering there:
// 'contradicted' when one equals the course's, 'confirmed' when one is k × the course's, else
// 'open'.
function laterEvidence(ctx, sites, k) {
  const { pipe, node } = ctx;
  const later = new Set();
  const stack = [...sites];
  while (stack.length) {
    for (const c of pipe.children.get(stack.pop()) ?? []) {
      if (!later.has(c)) stack.push(c);
      later.add(c);
    }
  }
  let confirmed = false;
  for (const d of later) {
    const y = ctx.savedValue(d);
    const e = pipe.expected?.[d];
    if (d === node || !y || !e || y.length !== e.length) continue;
    const opts = { dtype: ctx.opts.dtype };
    if (agrees(y, e, opts)) return 'contradicted';
    if (
      agrees(
        y,
        e.map((x) => k * x),
        opts,
      )
    ) {
      confirmed = true;
    }
  }
  return confirmed ? 'confirmed' : 'open';
}

// The scores before any mask: the student's where given (on and below the diagonal) and the
// course's step from their Q and K above it.
function unmaskedScores(pipe) {
  const step = pipe.step('scores');
  const given = pipe.given.get('scores');
  if (!given) return step;
  const T = pipe.s.T;
  return step.map((x, i) => (i % T > Math.floor(i / T) % T ? x : given[i]));
}

// The other arrays of the check with node's layout and length: [{ name, data }]; for a split
// node (B, h, T, hs) also the merged (B, T, C) ones, X among them, split into heads as the node is
// (not the merged forms of split ones: Qm, concat… are already there as Q, headout…)
function sameLayout(pipe, node, length) {
  const layout = layoutOf(node);
  const names = [...INPUTS, ...Object.keys(pipe.nodes)];
  const out = [];
  for (const n of new Set(names)) {
    const split = layout === 'split' && layoutOf(n) === 'merged' && !/(m|concat)$/.test(n);
    if (n === node || (layoutOf(n) !== layout && !split)) continue;
    if (!pipe.nodes[n] && !pipe.given.has(n)) continue;
    const value = pipe.value(n);
    const data = split && value ? splitHeads(value, pipe.s) : value;
    if (data && data.length === length) out.push({ name: n.replace(/^(d?[QKV])m$/, '$1'), data });
  }
  return out;
}

// A weight gradient's share of each batch item: aᵀ[b] @ g[b], (C, C) each
function weightGradShares(pipe, node) {
  const { parents } = pipe.nodes[node] ?? {};
  if (!parents || parents.length !== 2) return null;
  const [a, g] = parents.map((p) => pipe.value(p));
  const { B, T, C } = pipe.s;
  const size = T * C;
  const shares = [];
  for (let b = 0; b < B; b++) {
    const ab = a.subarray(b * size, (b + 1) * size);
    const gb = g.subarray(b * size, (b + 1) * size);
    shares.push(matmul(ab, gb, { m: C, k: T, n: C, transA: true }));
  }
  return shares;
}

/** The first finding of these analyses (the catalogue's, analysesOf(phase)), or null. */
export function firstFound(list, ctx) {
  for (const analysis of list) {
    const found = analysis(ctx);
    if (found) return found;
  }
  return null;
}

const fmt = (x) => Number(x.toPrecision(3)).toExponential();

/** What was measured when no cause could be proven: { id: 'step-differs', message }. */
export function measuredFacts(ctx, row) {
  const facts = [];
  if (sameNumbers(ctx.yours, ctx.local, ctx.tolAbs)) {
    facts.push("it holds the course's numbers, in another order (a reshape or transpose?)");
  }
  if (row?.maxAbs != null && Number.isFinite(row.maxAbs)) {
    facts.push(`the largest difference is ${fmt(row.maxAbs)} (norm-wise ${fmt(row.normRel)})`);
  }
  const said = facts.length ? ` Measured: ${facts.join('; ')}.` : '';
  const skipped =
    ctx.large && ctx.hidden.length
      ? ` At this size (B·T·C = ${ctx.s.n}) the steps you did not save were not searched: ` +
        'save them too to have them checked.'
      : '';
  return {
    id: 'step-differs',
    message:
      `No known mistake or relation reproduces your ${ctx.name}: it is not a multiple, a ` +
      `reordering or a sum of the course's array, nor the step with another operand.${said}` +
      `${skipped} The course computes ${ctx.courseLine}.`,
  };
}
