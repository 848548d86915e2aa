// loop.js - lesson 5's training loop unrolled over its steps, as the notebook check replays it: at
// step k the layer's forward and backward at the weights W_k (the graph of steps.js, with the
// causes the check found in the student's layer switched on), losses[k] = the loss, then
// W_{k+1} = W_k - lr * dW_k; and the single edits of the loop a student's code may differ by
// (a weight not updated or updated with another's gradient or from another weight, the sign,
// another factor on lr, gradients never reset, the update before the backward, the loss recorded
// after the step, one step more or fewer). `losses`, `W_after`, `lr` and `steps` are observations
// of it: an edit is named only when the whole run it gives reproduces every one the file saved.
//
//   unroll(ctx, edit)        { losses, W } the run with this edit (null: the course's loop)
//   searchLoop(ctx)          { edit: null (the course's loop, with the layer's causes) | edit,
//                              message } for the first that reproduces the observations, or null
//
// ctx: { s (sizes, loss 'mse'), inputs: { X, target, Wq … Wo } (flat arrays), sites: Map(node ->
// choice) the layer's causes, lr, steps, observed: [{ name, data, opts }] }.

import { agrees } from './compare.js';
import { Pipeline } from './pipeline.js';

const WEIGHTS = Object.freeze(['Wq', 'Wk', 'Wv', 'Wo']);

// the layer's loss and gradients at weights W (the check's causes switched on)
function lossAndGrads(ctx, W, edit) {
  const target = ctx.inputs[edit?.target ?? 'target'];
  const pipe = new Pipeline(ctx.s, { X: ctx.inputs.X, target, ...W });
  for (const [site, choice] of ctx.sites) pipe.adopt(site, choice);
  const g = Object.fromEntries(WEIGHTS.map((w) => [`d${w}`, pipe.value(`d${w}`)]));
  return { loss: pipe.value('loss')[0], g };
}

const update = (W, G, c) => W.map((x, i) => x - c * G[i]);

// W_{k+1} for weight w by its rule { c (the factor on lr), base (the weight stepped), grad (whose
// gradient; 'none': the gradient left out, W - lr), f32 (the result rounded to float32) }
function updated(ctx, W, G, w, rule = { c: 1 }, done = {}) {
  // the lines run in the course's order: a weight updated before this one is read updated
  const base = done[rule.base] ?? W[rule.base ?? w];
  const grad = G?.[`d${rule.grad ?? w}`];
  let out;
  if (rule.c === 0 || (!grad && rule.grad !== 'none')) out = Float64Array.from(base);
  else if (rule.grad === 'none') out = base.map((x) => x - rule.c * ctx.lr);
  else out = update(base, grad, rule.c * ctx.lr);
  return rule.f32 ? out.map(Math.fround) : out;
}
const addInto = (acc, g) => (acc ? acc.map((x, i) => x + g[i]) : Float64Array.from(g));

/**
 * The run of the loop with one edit (null: the course's): { losses (the loss of each step, as
 * the loop records it), W (the weights after it) }.
 */
export function unroll(ctx, edit = null) {
  const steps = ctx.steps + (edit?.steps ?? 0);
  let W = Object.fromEntries(WEIGHTS.map((w) => [w, ctx.inputs[w]]));
  const losses = new Float64Array(Math.max(steps, 0));
  let acc = null; // the gradients summed over the steps (never reset)
  let last = null; // the previous step's gradients (the update before the backward)
  let first = null; // the first step's gradients (never recomputed)
  for (let k = 0; k < steps; k++) {
    const { loss, g } = lossAndGrads(ctx, W, edit);
    acc = Object.fromEntries(WEIGHTS.map((w) => [`d${w}`, addInto(acc?.[`d${w}`], g[`d${w}`])]));
    first ??= g;
    const G = { step: g, accumulated: acc, previous: last, first }[edit?.gradients ?? 'step'];
    last = g;
    const next = {};
    for (const w of WEIGHTS) next[w] = updated(ctx, W, G, w, edit?.rules?.[w] ?? edit?.all, next);
    losses[k] = edit?.lossAfter ? lossAndGrads(ctx, next, edit).loss : loss;
    if (edit?.lossStale) losses[k] = losses[0];
    W = next;
    if (!Number.isFinite(loss)) break;
  }
  return { losses, W };
}

const num = (x) => String(Number(x.toPrecision(6)));

/** The kinds of edit of the loop, each with what it changes (the catalogue's records). */
export const LOOP_KINDS = Object.freeze({
  'loop-not-updated': 'a weight never updated',
  'loop-other-gradient': 'a weight updated with another weight’s gradient',
  'loop-other-weight': 'a weight updated from another weight',
  'loop-gradient-dropped': 'a weight updated without its gradient (W - lr)',
  'loop-float32': 'a weight’s update rounded to float32',
  'loop-sign': 'the step’s sign flipped: gradient ascent',
  'loop-lr':
    'another step size: lr squared, no lr, twice or half lr, or lr times a size of the layer',
  'loop-gradients-accumulated': 'gradients never reset: each step uses their sum so far',
  'loop-gradients-stale': 'gradients read once, before the loop: every step uses the first’s',
  'loop-update-first': 'the update before the backward, with the previous step’s gradients',
  'loop-target': 'the loss against X instead of target inside the loop',
  'loop-loss-after-update': 'the loss recorded after the step’s update',
  'loop-steps': 'one step more or fewer than steps',
  'loop-losses-not-recorded': 'losses saved empty: the loop never recorded a loss',
});

const courseLine = (w) => `${w} = ${w} - lr * d${w}`;

// The edits of one weight's update, by kind: [id, rule(w, v), text(w, v), with another weight v]
const WEIGHT_EDITS = [
  [
    'loop-not-updated',
    () => ({ c: 0 }),
    (w) => `${w} is never updated (${courseLine(w)} is missing or has no effect)`,
  ],
  [
    'loop-other-gradient',
    (w, v) => ({ c: 1, grad: v }),
    (w, v) => `${w} is updated with d${v}: ${w} = ${w} - lr * d${v}`,
    true,
  ],
  [
    'loop-other-weight',
    (w, v) => ({ c: 1, base: v }),
    (w, v) => `${w} is updated from ${v}: ${w} = ${v} - lr * d${w}`,
    true,
  ],
  [
    'loop-gradient-dropped',
    () => ({ c: 1, grad: 'none' }),
    (w) => `${w} is updated without its gradient: ${w} = ${w} - lr`,
  ],
  [
    'loop-float32',
    () => ({ c: 1, f32: true }),
    (w) => `${w}'s update is rounded to float32: ${w} = (${w} - lr * d${w}).astype(np.float32)`,
  ],
];

// another factor on lr, for every weight or one: [c, text, kind]; with the layer's sizes s, a
// size of it too (a gradient summed where the course averages: k × lr with k = Y.size, B·T …)
const factorsOf = (lr, s = null) => [
  [-1, 'the sign of the step is flipped: W = W + lr * dW (gradient ascent)', 'sign'],
  [lr, `the step is lr * lr * dW (lr squared: ${num(lr * lr)})`, 'lr'],
  [1 / lr, 'the step leaves lr out: W = W - dW', 'lr'],
  [2, 'the step is twice the course’s: W = W - 2 * lr * dW', 'lr'],
  [0.5, 'the step is half the course’s: W = W - lr * dW / 2', 'lr'],
  ...[...new Set(sizeFactors(s).map(([k]) => k))]
    .filter((k) => k > 2)
    .map((k) => {
      const names = sizeFactors(s)
        .filter(([q]) => q === k)
        .map(([, name]) => name);
      return [k, `the step is ${k} × lr * dW (${k} = ${names.join(' = ')})`, 'lr'];
    }),
];
const sizeFactors = (s) =>
  s
    ? [
        [s.B * s.T * s.C, 'Y.size'],
        [s.B * s.T, 'B·T'],
        [s.C, 'C'],
        [s.T, 'T'],
        [s.B, 'B'],
        [s.heads, 'h'],
      ]
    : [];

// the edits of the loop as a whole
const LOOP_EDITS = Object.freeze([
  {
    id: 'loop-gradients-accumulated',
    gradients: 'accumulated',
    text: 'the gradients are never reset: each step uses the sum of every step’s gradients so far',
    line: 'the gradients computed afresh at each step (zero_grad before the backward)',
  },
  {
    id: 'loop-gradients-stale',
    gradients: 'first',
    text:
      'every step uses the first step’s gradients: they are read once, before the loop (a ' +
      'list of the gradient arrays made once, while backward makes new ones)',
    line: 'the gradients read after each step’s backward',
  },
  {
    id: 'loop-gradients-stale',
    gradients: 'first',
    lossStale: true,
    text:
      'every step reuses the first step’s results, its loss and its gradients: the layer is ' +
      'run once, before or at the first step, and not again',
    line: 'the layer’s forward and backward run again at each step, at the new weights',
  },
  {
    id: 'loop-update-first',
    gradients: 'previous',
    text: 'each step updates the weights with the previous step’s gradients, before its backward',
    line: 'forward, loss, backward, then W -= lr * dW, in that order',
  },
  {
    id: 'loop-target',
    target: 'X',
    text: 'the loop’s loss compares Y with X instead of target: loss = np.mean((Y - X) ** 2)',
    line: 'loss = np.mean((Y - target) ** 2) inside the loop',
  },
  {
    id: 'loop-loss-after-update',
    lossAfter: true,
    text: 'each loss is recorded after the step’s update: losses[k] is the loss at W_{k+1}',
    line: 'losses.append(loss) before the update: losses[k] is the loss at W_k',
  },
  ...[-1, 1].map((steps) => ({
    id: 'loop-steps',
    steps,
    text: `the loop runs one step ${steps < 0 ? 'fewer' : 'more'} than steps`,
    line: 'for step in range(steps)',
  })),
]);

/** The single edits of the loop, in the order they are tried: [{ id, ..., text, line }]. */
export function loopEdits(lr, s = null) {
  const out = [];
  for (const [id, rule, text, others] of WEIGHT_EDITS) {
    for (const w of WEIGHTS) {
      for (const v of others ? WEIGHTS.filter((x) => x !== w) : [null]) {
        out.push({ id, rules: { [w]: rule(w, v) }, text: text(w, v), line: courseLine(w) });
      }
    }
  }
  for (const [c, text, kind] of factorsOf(lr, s)) {
    out.push({ id: `loop-${kind}`, all: { c }, text, line: 'W = W - lr * dW' });
    for (const w of WEIGHTS) {
      const line = courseLine(w);
      out.push({ id: `loop-${kind}`, rules: { [w]: { c } }, text: `for ${w}: ${text}`, line });
    }
  }
  return [...out, ...LOOP_EDITS];
}

// whether a run reproduces every observation the file saved (losses, W_after)
function reproduces(ctx, run) {
  return ctx.observed.every(({ name, data, opts }) => {
    const mine = name === 'losses' ? run.losses : run.W[name.replace('_after', '')];
    return mine && mine.length === data.length && agrees(data, mine, opts);
  });
}

/**
 * The course's loop (with the layer's causes) or the first single edit of it whose run
 * reproduces every observation: { edit (null: the course's loop), message }, or null.
 */
export function searchLoop(ctx) {
  if (!ctx.observed.length || !(ctx.steps >= 1) || !(ctx.lr > 0)) return null;
  if (reproduces(ctx, unroll(ctx))) return { edit: null };
  for (const edit of loopEdits(ctx.lr, ctx.s)) {
    if (edit.steps && !ctx.observed.some((o) => o.name !== 'losses')) continue;
    let run;
    try {
      run = unroll(ctx, edit);
    } catch {
      continue;
    }
    if (reproduces(ctx, run)) return { edit };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------
// the training rows

// the saved number of steps (one whole number >= 1), else null
function savedSteps(arrays, key) {
  const d = key ? arrays[key]?.data : null;
  const v = d && d.length === 1 ? Number(d[0]) : NaN;
  return Number.isInteger(v) && v >= 1 ? v : null;
}

/**
 * The training rows of checkTraining explained by the loop unrolled (changes training.rows in
 * place): when the course's loop with the layer's causes (`causes`, the row that named the first:
 * `root`) or one edit of the loop reproduces every saved observation, the first differing row
 * says so and the others follow from it. keys: the file's training keys (training.js's
 * trainingKeys), inputs: checkNotebook's (X, the weights, target).
 */
export function explainLoop(training, { arrays, keys, sizes, inputs, causes, root }) {
  const rows = training.rows;
  const differing = rows.filter((r) => r.status === 'differs');
  const lr = training.lr;
  if (!differing.length || !lr || lr.lrs.some((x) => x !== lr.value)) return;
  if (sizes.loss !== 'mse' || !inputs.target) return;
  const compared = rows.filter((r) => r.yours && (r.status === 'match' || r.status === 'differs'));
  const observed = compared.map((r) => {
    const { dtype, resolution, printedDtype } = arrays[keys[r.name]] ?? {};
    return { name: r.name, data: r.yours, opts: { dtype, resolution, printedDtype } };
  });
  const losses = compared.find((r) => r.name === 'losses');
  const steps = savedSteps(arrays, keys.steps) ?? losses?.yours.length ?? 1;
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const ctx = { s: sizes, inputs: data, sites: causes, lr: lr.value, steps, observed };
  const found = searchLoop(ctx);
  if (!found || (!found.edit && !root)) return;
  const keyOf = (r) => keys[r.name] ?? r.name;
  const savedList = compared.map(keyOf).join(', ');
  const [first, ...rest] = differing;
  const withLayer = root && causes.size ? ` with your ${root}'s mistake` : '';
  const replay = `replayed from your initial weights for ${steps} steps (lr = ${num(lr.value)})`;
  if (!found.edit) {
    for (const r of differing) {
      r.diagnosis = {
        id: 'follows-from',
        message: `follows from ${root}: the course's training loop, ${replay}${withLayer}, reproduces your ${keyOf(r)}.`,
      };
    }
    return;
  }
  const { edit } = found;
  first.diagnosis = {
    id: edit.id,
    message: `Your ${keyOf(first)} is what the course's training loop gives with one change: ${edit.text}. ${replay[0].toUpperCase()}${replay.slice(1)}${withLayer}, it reproduces your ${savedList}. The course: ${edit.line}.`,
  };
  for (const r of rest) {
    r.diagnosis = {
      id: 'follows-from',
      message: `follows from ${first.name}: the same loop reproduces your ${keyOf(r)}.`,
    };
  }
}
