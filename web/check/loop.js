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

import { agrees, comparedRow } from './compare.js';
import { editVariant, likeGroups, programEdits, searchable } from './edits.js';
import { dot } from './ops.js';
import { Pipeline } from './pipeline.js';
import { PROGRAM_NODES, likeness, printLine } from './program.js';
import { project } from './steps.js';

const WEIGHTS = Object.freeze(['Wq', 'Wk', 'Wv', 'Wo']);

// the layer's loss and gradients at weights W (the check's causes switched on); with
// edit.inBackward, Wo is updated inside the backward, before dconcat = dY @ Wo.T reads it
// edit.causal: the loop's forward with the other mask; edit.dyStale: the backward fed the dY of
// the run's first step (run.dY0, kept there)
function lossAndGrads(ctx, W, edit, run = {}) {
  const target = ctx.inputs[edit?.target ?? 'target'];
  const s = edit?.causal === undefined ? ctx.s : { ...ctx.s, causal: edit.causal };
  const pipe = new Pipeline(s, { X: ctx.inputs.X, target, ...W });
  for (const [site, choice] of ctx.sites) pipe.adopt(site, choice);
  if (edit?.dyStale && run.dY0) {
    pipe.adopt('dY', { variant: { id: edit.id, fn: () => run.dY0 } });
  } else if (edit?.dyStale) {
    run.dY0 = pipe.value('dY');
  }
  // (the step taken before dconcat reads Wo: this step's dWo, or the previous step's when the
  // update comes between the forward and the backward)
  const dWo = edit?.inBackward === 'previous' ? run.last?.dWo : edit?.inBackward && 'now';
  if (dWo && !ctx.sites.has('dconcat')) {
    const stepped = update(W.Wo, dWo === 'now' ? pipe.value('dWo') : dWo, ctx.lr);
    const fn = (p) => project(p.dY, stepped, ctx.s, true);
    pipe.adopt('dconcat', { variant: { id: edit.id, fn } });
  }
  const g = Object.fromEntries(WEIGHTS.map((w) => [`d${w}`, pipe.value(`d${w}`)]));
  return { loss: pipe.value('loss')[0], g };
}

const update = (W, G, c) => W.map((x, i) => x - c * G[i]);

// W_{k+1} for weight w by its rule { c (the factor on lr), base (the weight stepped), grad (whose
// gradient; 'none': the gradient left out, W - lr), f32 (the result rounded to float32) }
function updated(ctx, W, G, w, rule = { c: 1 }, done = {}) {
  // the lines run in the course's order: a weight updated before this one is read updated
  const base = done[rule.base] ?? W[rule.base ?? w];
  const grad =
    rule.grad === 'sum' && G
      ? WEIGHTS.map((v) => G[`d${v}`]).reduce((a, g) => a.map((x, i) => x + g[i]))
      : G?.[`d${rule.grad ?? w}`];
  let out;
  if (rule.c === 0 || (!grad && rule.grad !== 'none')) out = Float64Array.from(base);
  else if (rule.grad === 'none') out = base.map((x) => x - rule.c * ctx.lr);
  else out = update(base, grad, rule.c * ctx.lr);
  return rule.f32 ? out.map(Math.fround) : out;
}
const addInto = (acc, g) => (acc ? acc.map((x, i) => x + g[i]) : Float64Array.from(g));
// the backward calls whose gradients the first step's sum holds: its own and those run before
// the loop
const runsBefore = (edit) => 1 + (edit?.prior ?? 0);
// the gradients summed so far with this step's, `runs` times (a backward run before the loop at
// the same weights is in the sum too)
const accumulated = (acc, g, runs) =>
  Object.fromEntries(
    WEIGHTS.map((w) => {
      const gw = runs === 1 ? g[`d${w}`] : g[`d${w}`].map((x) => runs * x);
      return [`d${w}`, addInto(acc?.[`d${w}`], gw)];
    }),
  );

// the loss step k records: its own, after the update (lossAfter), the first's (lossStale), times
// a size (lossScale)
function recorded(ctx, edit, { loss, next, first }) {
  let out = edit?.lossAfter ? lossAndGrads(ctx, next, edit).loss : loss;
  if (ctx.lossScale) out *= ctx.lossScale;
  if (edit?.lossStale && first !== undefined) out = first;
  if (edit?.lossForm) out = edit.lossForm(out);
  return edit?.lossScale ? out * edit.lossScale : out;
}

// the context of step k: its learning rate by the edit's schedule
const scheduled = (ctx, edit, k) =>
  edit?.schedule ? { ...ctx, lr: ctx.lr * edit.schedule(k) } : ctx;

// The direction an optimizer steps along at step k from the gradients G, its arrays kept in
// `memory` across steps: momentum (v = β·v + dW, v = β·v + (1 - β)·dW, or Nesterov's dW + β·v)
// or Adam (its two moments, with or without the bias correction)
function optimized(opt, memory, G, k) {
  const out = {};
  for (const w of WEIGHTS) {
    const g = G[`d${w}`];
    if (!g) continue;
    const m = (memory[w] ??= { v: new Float64Array(g.length), s: new Float64Array(g.length) });
    if (opt.kind === 'adam') {
      const [b1, b2, eps] = opt.betas;
      const c1 = opt.corrected ? 1 - b1 ** (k + 1) : 1;
      const c2 = opt.corrected ? 1 - b2 ** (k + 1) : 1;
      out[`d${w}`] = g.map((x, i) => {
        m.v[i] = b1 * m.v[i] + (1 - b1) * x;
        m.s[i] = b2 * m.s[i] + (1 - b2) * x * x;
        return m.v[i] / c1 / (Math.sqrt(m.s[i] / c2) + eps);
      });
      continue;
    }
    const gain = opt.form === 'ema' ? 1 - opt.beta : 1;
    for (let i = 0; i < g.length; i++) m.v[i] = opt.beta * m.v[i] + gain * g[i];
    out[`d${w}`] =
      opt.form === 'nesterov' ? g.map((x, i) => x + opt.beta * m.v[i]) : Float64Array.from(m.v);
  }
  return out;
}

// the gradients step k takes: the edit's choice of them (its own, summed, the previous, the
// first), through its optimizer when it has one
function stepGradients(edit, choices, memory, k) {
  const G = choices[edit?.gradients ?? 'step'];
  return edit?.optimizer ? optimized(edit.optimizer, memory, G, k) : G;
}

/**
 * The run of the loop with one edit (null: the course's): { losses (the loss of each step, as
 * the loop records it), W (the weights after it), W1 (the weights after its first step) }; with
 * `limit`, only its first `limit` steps.
 */
export function unroll(ctx, edit = null, limit = Infinity) {
  const steps = Math.min(ctx.steps + (edit?.steps ?? 0), limit);
  let W = Object.fromEntries(WEIGHTS.map((w) => [w, ctx.inputs[w]]));
  let W1 = null;
  const losses = new Float64Array(Math.max(steps, 0));
  let acc = null; // the gradients summed over the steps (never reset)
  let last = null; // the previous step's gradients (the update before the backward)
  let first = null; // the first step's gradients (never recomputed)
  const state = {}; // what an edit keeps from one step to the next (the first step's dY)
  const memory = {}; // an optimizer's arrays kept across steps (velocities, moments)
  for (let k = 0; k < steps; k++) {
    const at = scheduled(ctx, edit, k);
    const { loss, g } = lossAndGrads(at, W, edit, state);
    acc = accumulated(acc, g, k === 0 ? runsBefore(edit) : 1);
    first ??= g;
    const G = stepGradients(edit, { step: g, accumulated: acc, previous: last, first }, memory, k);
    last = g;
    state.last = g;
    const next = {};
    for (const w of WEIGHTS) next[w] = updated(at, W, G, w, edit?.rules?.[w] ?? edit?.all, next);
    losses[k] = recorded(ctx, edit, { loss, next, first: k ? losses[0] : undefined });
    W = next;
    W1 ??= next;
    if (!Number.isFinite(loss)) break;
  }
  return { losses, W, W1: W1 ?? W };
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
  'loop-gradients-permuted':
    'each weight updated with another’s gradient: weights and gradients paired in two orders',
  'loop-dy-stale': 'the backward at every step fed the first step’s dY',
  'loop-shared-gradient':
    'one gradient array shared by the four weights: each stepped with the sum',
  'loop-mask': 'the loop’s forward with the other causal mask than the layer’s',
  'loop-update-first': 'the update before the backward, with the previous step’s gradients',
  'loop-update-in-backward': 'Wo updated inside the backward, before dconcat = dY @ Wo.T reads it',
  'loop-target': 'the loss against X instead of target inside the loop',
  'loop-loss-after-update': 'the loss recorded after the step’s update',
  'loop-steps': 'one step more or fewer than steps',
  'loop-lr-schedule':
    'the learning rate changed during the run: lr × γ at every step (lr *= γ), every n steps, ' +
    'or lr / (1 + d·k); γ or d fitted from the first loss that departs',
  'loop-losses-not-recorded': 'losses saved empty: the loop never recorded a loss',
  'loop-momentum':
    'the step uses momentum, a velocity per weight kept across steps (v = β·v + dW; its ' +
    'average form v = β·v + (1 - β)·dW; or Nesterov’s dW + β·v): β fitted from the first loss ' +
    'that departs',
  'loop-adam':
    'the step is Adam’s (β1 = 0.9, β2 = 0.999, ε = 1e-8, with or without the bias ' +
    'correction), not plain gradient descent',
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
const factorsOf = (lr, s = null) =>
  coinciding(
    [
      [-1, 'the sign of the step is flipped: W = W + lr * dW (gradient ascent)', 'sign'],
      [2, 'the step is twice the course’s: W = W - 2 * lr * dW', 'lr'],
      [0.5, 'the step is half the course’s: W = W - lr * dW / 2', 'lr'],
      [lr, `the step is lr * lr * dW (lr squared: ${num(lr * lr)})`, 'lr'],
      [1 / lr, 'the step leaves lr out: W = W - dW', 'lr'],
      ...sizeSteps(s),
    ],
    lr,
  );
// factors of one value (at lr = 0.5, lr² is lr/2 and no lr is 2·lr): one entry that names each
function coinciding(list, lr) {
  const out = [];
  for (const [c, text, kind] of list) {
    const same = out.find(([d]) => Math.abs(d - c) <= 1e-12 * Math.abs(c));
    if (!same) out.push([c, text, kind]);
    else same[1] += `; or, the same step at lr = ${num(lr)}: ${text}`;
  }
  return out;
}
const sizeSteps = (s) =>
  [...new Set(sizeFactors(s).map(([k]) => k))]
    .filter((k) => k > 2)
    .map((k) => {
      const names = sizeFactors(s)
        .filter(([q]) => q === k)
        .map(([, name]) => name);
      return [k, `the step is ${k} × lr * dW (${k} = ${names.join(' = ')})`, 'lr'];
    });
const sizeFactors = (s) =>
  s
    ? [
        [s.B * s.T * s.C, 'Y.size'],
        [s.B * s.T, 'B·T'],
        [s.T * s.C, 'T·C'],
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
  ...[1, 2].map((prior) => ({
    id: 'loop-gradients-accumulated',
    gradients: 'accumulated',
    prior,
    text:
      'the gradients are never reset, and they already held the gradients of ' +
      `${prior === 1 ? 'a backward' : `${prior} backward calls`} run before the loop at the ` +
      'same weights (a check pass): each step uses the sum of all of them so far',
    line: 'the gradients computed afresh at each step (zero_grad before the backward)',
  })),
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
    id: 'loop-update-first',
    gradients: 'previous',
    inBackward: 'previous',
    text:
      'each step updates the weights between its forward and its backward, with the previous ' +
      'step’s gradients (none at the first step), so the backward’s dconcat = dY @ Wo.T reads ' +
      'the updated Wo',
    line: 'forward, loss, backward, then W -= lr * dW, in that order',
  },
  {
    id: 'loop-update-in-backward',
    inBackward: true,
    text:
      'Wo is updated inside the backward before dconcat = dY @ Wo.T reads it (Wo -= lr * dWo ' +
      'above that line): dconcat, and with it dWq, dWk and dWv, use the new Wo',
    line: 'dconcat = dY @ Wo.T with the Wo of the forward; the update after the whole backward',
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
  {
    id: 'loop-shared-gradient',
    all: { c: 1, grad: 'sum' },
    text:
      'every weight is stepped with the sum of the four gradients: one array shared by them ' +
      '(dict.fromkeys(names, np.zeros((C, C))) gives every name the same array), each ' +
      'backward line adding into it',
    line: 'one gradient array per weight: {n: np.zeros((C, C)) for n in names}',
  },
  {
    id: 'loop-dy-stale',
    dyStale: true,
    text:
      'every step’s backward is fed the first step’s dY, computed once before the loop (a dY ' +
      'left from an earlier cell passed to backward, while the step computes its own)',
    line: 'dY = 2 * (Y - target) / Y.size at each step, passed to backward',
  },
  ...[-1, 1].map((steps) => ({
    id: 'loop-steps',
    steps,
    text: `the loop runs one step ${steps < 0 ? 'fewer' : 'more'} than steps`,
    line: 'for step in range(steps)',
  })),
]);

// a factor on lr fitted from a W_after: [c, text, kind] as factorsOf gives them
function fittedFactor(c, lr) {
  const step = num(Math.abs(c) * lr);
  if (c > 0) {
    return [
      c,
      `the step’s learning rate is ${step}, not your lr = ${num(lr)}: W = W - ${step} * dW`,
      'lr',
    ];
  }
  const text = `the sign of the step is flipped and its learning rate is ${step}: W = W + ${step} * dW (gradient ascent)`;
  return [c, text, 'sign'];
}

// The factors on lr each saved W_after shows for its first step: c = <W - W_after, dW> /
// (lr <dW, dW>) with the course's gradients at the initial weights (a guess, proven by the run)
function fittedFactors(ctx) {
  const { g } = lossAndGrads(ctx, Object.fromEntries(WEIGHTS.map((w) => [w, ctx.inputs[w]])));
  const out = [];
  for (const o of ctx.observed.filter((x) => x.name !== 'losses')) {
    const w = o.name.replace('_after', '');
    const d = g[`d${w}`];
    const gg = dot(d, d);
    const c = dot(update(ctx.inputs[w], o.data, 1), d) / (ctx.lr * gg);
    if (Number.isFinite(c) && c !== 0 && Math.abs(c - 1) > 1e-6) out.push(c);
  }
  return [...new Set(out.map((c) => Number(c.toPrecision(12))))];
}

// every order of the gradients that moves at least two weights' (one weight's alone is a
// WEIGHT_EDITS edit): [{ Wq: 'Wo', … }]
function gradientOrders() {
  const orders = (xs) =>
    xs.length <= 1
      ? [xs]
      : xs.flatMap((x, i) => orders([...xs.slice(0, i), ...xs.slice(i + 1)]).map((o) => [x, ...o]));
  return orders(WEIGHTS)
    .filter((o) => o.filter((v, i) => v !== WEIGHTS[i]).length >= 2)
    .map((o) => Object.fromEntries(WEIGHTS.map((w, i) => [w, o[i]])));
}

// each weight of an order updated with its gradient: "Wq with dWo, Wo with dWq"
function permutedEdit(order) {
  const moved = WEIGHTS.filter((w) => order[w] !== w);
  const rules = Object.fromEntries(WEIGHTS.map((w) => [w, { c: 1, grad: order[w] }]));
  return {
    id: 'loop-gradients-permuted',
    rules,
    text:
      `each of ${listText(moved)} is updated with another weight’s gradient: ` +
      `${listText(moved.map((w) => `${w} with d${order[w]}`))} (the weights and the gradients ` +
      'paired in two different orders, as a zip over two lists or dicts each filled in its ' +
      'own order)',
    line: 'W = W - lr * dW, each weight with its own gradient',
  };
}

// The learning rate's schedules the first departing loss shows (losses[m] differs, the earlier
// ones agree): the step m - 1 taken with c × lr, c fitted, then read as lr *= γ after every
// step or every m - 1 steps, lr / (1 + d·k), or lr *= γ before each update (m = 1). Each is
// a guess the whole run proves: [{ id, schedule(k) -> the factor on lr at step k, text, line }]
function scheduleEdits(ctx, course) {
  const { o, m } = departure(ctx, course);
  if (!(m >= 1)) return [];
  const c = fittedStep(ctx, m - 1, o.data[m]);
  if (!(c > 0) || Math.abs(c - 1) < 1e-9) return [];
  const g = num(c);
  const id = 'loop-lr-schedule';
  const line = 'W = W - lr * dW with the same lr at every step';
  if (m === 1) {
    const text = `the learning rate is multiplied by ${g} before each update (lr *= ${g} at the top of the loop): step k takes lr × ${g}^(k+1)`;
    return [{ id, schedule: (k) => c ** (k + 1), text, line }];
  }
  const n = m - 1; // (the steps taken at lr before it changed)
  const every =
    n === 1
      ? `the learning rate decays after every step (lr *= ${g}): step k takes lr × ${g}^k`
      : `the learning rate is multiplied by ${g} every ${n} steps: step k takes lr × ${g}^(k // ${n})`;
  const d = 1 / c - 1;
  const out = [{ id, schedule: (k) => c ** Math.floor(k / n), text: every, line }];
  if (n === 1) {
    const text = `the learning rate decays as lr / (1 + ${num(d)} * k) at step k`;
    out.push({ id, schedule: (k) => 1 / (1 + d * k), text, line });
  }
  return out;
}

// the saved losses and the first of them that departs from the course's run: { o, m } (m
// undefined when none does, or when there are no losses to compare)
function departure(ctx, course) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  if (!o || o.data.length < 2 || !course.losses.length) return {};
  const m = [...o.data].findIndex(
    (x, k) => !agrees(Float64Array.of(x), Float64Array.of(course.losses[k] ?? NaN), o.opts),
  );
  return m < 0 ? {} : { o, m };
}

// a root of f by the secant method from a and b, kept in (lo, hi], stopped at the rounding of
// `size` (two equal residuals there would divide by zero): the root, or NaN
function secant(f, start, [lo, hi], size) {
  let [a, b] = start;
  let [fa, fb] = [f(a), f(b)];
  const close = (x) => Math.abs(x) <= 1e-13 * Math.abs(size);
  for (let i = 0; i < 40 && Number.isFinite(fb) && !close(fb) && fb !== fa; i++) {
    const c = b - (fb * (b - a)) / (fb - fa);
    if (!Number.isFinite(c) || c <= lo || c > hi) return NaN;
    [a, fa, b, fb] = [b, fb, c, f(c)];
    if (Math.abs(b - a) < 1e-15 * Math.abs(b)) break;
  }
  return Number.isFinite(fb) ? b : NaN;
}

// the factor c on lr at step j that takes the course's run to the loss `loss` at step j + 1 (the
// steps before j the course's): a secant search from c = 1, or NaN
function fittedStep(ctx, j, loss) {
  const { W } = unroll(ctx, null, j);
  const { g } = lossAndGrads(ctx, W);
  const at = (c) => {
    const next = Object.fromEntries(WEIGHTS.map((w) => [w, update(W[w], g[`d${w}`], c * ctx.lr)]));
    return lossAndGrads(ctx, next).loss * (ctx.lossScale ?? 1) - loss;
  };
  return secant(at, [1, 0.9], [0, 4], loss);
}

// momentum's forms: [form, the first step that can depart (Nesterov's and the average's change
// the first step, the plain velocity's the second), its text, its line]
const MOMENTUM_FORMS = [
  ['plain', 2, (b) => `v = ${b} * v + dW; W = W - lr * v`],
  ['ema', 1, (b) => `v = ${b} * v + (1 - ${b}) * dW; W = W - lr * v`],
  ['nesterov', 1, (b) => `v = ${b} * v + dW; W = W - lr * (dW + ${b} * v) (Nesterov’s)`],
];
const MOMENTUM_BETAS = [0.9, 0.99, 0.5];
const ADAM_BETAS = [0.9, 0.999, 1e-8];

// Another optimizer than the course's plain step: momentum, β fitted from the first departing
// loss (or the common values when no losses are saved), or Adam with its usual constants:
// [{ id, optimizer, text, line }], each a guess the whole run proves
function optimizerEdits(ctx, course) {
  const { o, m } = departure(ctx, course);
  const line = 'W = W - lr * dW (plain gradient descent, no state kept across steps)';
  const out = [];
  for (const [form, from, formula] of MOMENTUM_FORMS) {
    const edit = (beta) => ({ optimizer: { kind: 'momentum', form, beta } });
    let betas = MOMENTUM_BETAS;
    if (o) {
      const at = (b) => tryUnroll(ctx, edit(b), m + 1)?.losses[m] - o.data[m];
      betas = m >= from ? [secant(at, [0.9, 0.8], [0, 1 - 1e-9], o.data[m])] : [];
    }
    for (const beta of betas.filter((b) => b > 0)) {
      const text = `the update uses momentum, a velocity kept per weight across steps: ${formula(num(beta))}`;
      out.push({ id: 'loop-momentum', ...edit(beta), text, line });
    }
  }
  for (const corrected of [true, false]) {
    const optimizer = { kind: 'adam', betas: ADAM_BETAS, corrected };
    const text = `the update is Adam’s (β1 = 0.9, β2 = 0.999, ε = 1e-8, ${corrected ? 'with' : 'without'} the bias correction), not the course’s plain step`;
    out.push({ id: 'loop-adam', optimizer, text, line });
  }
  return out;
}

// the loop's forward with the mask the layer (as checked) does not have
const maskEdit = (s) => ({
  id: 'loop-mask',
  causal: !s.causal,
  text: s.causal
    ? 'the loop’s forward runs without the causal mask (forward(X) where the layer was ' +
      'checked with causal=True)'
    : 'the loop’s forward runs with a causal mask the layer was checked without',
  line: 'the same forward, with the same mask, in the loop as in the check',
});

/** The single edits of the loop, in the order they are tried: [{ id, ..., text, line }]. */
export function loopEdits(lr, s = null, fitted = []) {
  const out = [];
  for (const [id, rule, text, others] of WEIGHT_EDITS) {
    for (const w of WEIGHTS) {
      for (const v of others ? WEIGHTS.filter((x) => x !== w) : [null]) {
        out.push({ id, rules: { [w]: rule(w, v) }, text: text(w, v), line: courseLine(w) });
      }
    }
  }
  const known = factorsOf(lr, s);
  const fresh = fitted.filter((f) => !known.some(([k]) => Math.abs(f / k - 1) < 1e-9));
  for (const [c, text, kind] of [...known, ...fresh.map((f) => fittedFactor(f, lr))]) {
    out.push({ id: `loop-${kind}`, all: { c }, text, line: 'W = W - lr * dW' });
    for (const w of WEIGHTS) {
      const line = courseLine(w);
      out.push({ id: `loop-${kind}`, rules: { [w]: { c } }, text: `for ${w}: ${text}`, line });
    }
  }
  const whole = [...gradientOrders().map(permutedEdit), ...(s ? [maskEdit(s)] : [])];
  return [...out, ...LOOP_EDITS, ...whole];
}

// whether a run reproduces an observation: losses, or a W_after read as the weights after the
// run (at 'last') or after its first step (at 'first': lesson 5's one step beside the losses)
function reproducesOne(run, { name, data, opts }, at) {
  const W = at === 'first' ? run.W1 : run.W;
  const mine = name === 'losses' ? run.losses : W[name.replace('_after', '')];
  return mine && mine.length === data.length && agrees(data, mine, opts);
}
const reproduces = (ctx, run, at) => ctx.observed.every((o) => reproducesOne(run, o, at));

// the run of an edit, or null when it cannot be made (a step that overflows, …)
function tryUnroll(ctx, edit, limit) {
  try {
    return unroll(ctx, edit, limit);
  } catch {
    return null;
  }
}

// "Wq and Wv", "Wq, Wk and Wv"
const listText = (items) =>
  items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)}` : items[0];

// One edit of several weights' updates at once ("Wq is never updated and Wk is updated with
// dWq"), found a weight at a time: each saved W_after's own rule, given the others' so far,
// until none changes; named only when the whole run it gives reproduces every observation.
function searchRules(ctx, at) {
  const afters = ctx.observed.filter((o) => o.name !== 'losses');
  if (!afters.length) return null;
  const fitted = fittedFactors(ctx);
  const single = [...loopEdits(ctx.lr, ctx.s, fitted), ...pairedEdits(ctx, fitted)].filter(
    (e) => e.rules,
  );
  const chosen = new Map(); // weight -> its single edit
  const rulesWith = (w, e) => {
    const rules = Object.fromEntries([...chosen].map(([v, c]) => [v, c.rules[v]]));
    if (e) rules[w] = e.rules[w];
    else delete rules[w];
    return rules;
  };
  const limit = at === 'first' ? 1 : Infinity;
  for (let pass = 0; pass < 3; pass++) {
    let changed = false;
    for (const o of afters) {
      const w = o.name.replace('_after', '');
      const fits = (e) => {
        const run = tryUnroll(ctx, { rules: rulesWith(w, e) }, limit);
        return run !== null && reproducesOne(run, o, at);
      };
      if (fits(chosen.get(w) ?? null)) continue;
      const found = [null, ...single.filter((e) => e.rules[w])].find(fits);
      if (found === undefined) return null;
      if (found) chosen.set(w, found);
      else chosen.delete(w);
      changed = true;
    }
    if (!changed) break;
  }
  if (!chosen.size) return null;
  const edits = WEIGHTS.filter((w) => chosen.has(w)).map((w) => chosen.get(w));
  const edit = {
    id: edits[0].id,
    rules: Object.fromEntries(edits.map((e) => Object.entries(e.rules)[0])),
    text: rulesText(edits),
    line: edits.length === 1 ? edits[0].line : 'W = W - lr * dW for each of Wq, Wk, Wv and Wo',
  };
  const run = tryUnroll(ctx, edit);
  return run && reproduces(ctx, run, at) ? edit : null;
}

// One weight updated with another's gradient and another step size at once (a pair of edits of
// its line): "Wk is updated with dWq at 2 × lr: Wk = Wk - 2 * lr * dWq"
function pairedEdits(ctx, fitted) {
  const factors = [-1, 2, 0.5, ...fitted].filter((c) => Math.abs(c - 1) > 1e-9);
  const out = [];
  for (const w of WEIGHTS) {
    for (const v of WEIGHTS.filter((x) => x !== w)) {
      for (const c of factors) {
        const k = num(Math.abs(c));
        const step = Math.abs(c) === 1 ? 'lr' : `${k} * lr`;
        const text = `${w} is updated with d${v} at ${c < 0 ? '-' : ''}${k} × lr: ${w} = ${w} ${c < 0 ? '+' : '-'} ${step} * d${v}`;
        const id = 'loop-other-gradient';
        out.push({ id, rules: { [w]: { c, grad: v } }, text, line: courseLine(w) });
      }
    }
  }
  return out;
}

// "Wq and Wv are never updated and Wk is updated with dWq: Wk = Wk - lr * dWq"
function rulesText(edits) {
  const frozen = edits.filter((e) => e.id === 'loop-not-updated');
  const names = frozen.map((e) => Object.keys(e.rules)[0]);
  const parts = names.length
    ? [`${listText(names)} ${names.length > 1 ? 'are' : 'is'} never updated`]
    : [];
  for (const e of edits) if (e.id !== 'loop-not-updated') parts.push(e.text);
  return listText(parts);
}

// The losses recorded as k × the course's loss, k a size of the layer: [{ id, lossScale, text,
// line }] (the sum of the squares where the course takes their mean, or a mean over some axes)
function lossScaleEdits(ctx, course) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  const k = o && course.losses.length ? o.data[0] / course.losses[0] : NaN;
  if (!Number.isFinite(k) || k === 0) return [];
  const { B, T, C } = ctx.s;
  const line = 'loss = np.mean((Y - target) ** 2)';
  const divides = 'the loss divides the sum of the squares by';
  const sizes = [
    [B * T * C, 'Y.size', 'mse-loss-sum', 'the loss is the sum of the squares, not their mean'],
    [B * T, 'B·T', 'factor', `${divides} C only (a mean over the features)`],
    [C, 'C', 'factor', `${divides} B·T only (a mean over the tokens)`],
    [T * C, 'T·C', 'factor', `${divides} B only (the mean over the batch of each item's sum)`],
    [
      (2 / (B * T * C)) ** 2,
      '(2 / Y.size)²',
      'factor',
      'the loss is the mean of the squares of dY = 2 * (Y - target) / Y.size: the error was ' +
        'scaled in place (err *= 2 / err.size) before the loss read it',
    ],
  ];
  return sizes
    .filter(([q]) => q !== 1 && Math.abs(k / q - 1) < 1e-3)
    .map(([q, size, id, text]) => ({
      id,
      lossScale: q,
      text: `${text}: each loss is ${num(q)} (= ${size}) × the course's`,
      line,
    }));
}

// The losses recorded as another function of the error than the mean of its squares, the
// gradient the course's: the norm not squared, the root of the mean square: [{ id, lossForm
// (the course's loss -> the recorded one), text, line }] for those the first loss fits
function lossFormEdits(ctx, course) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  const first = course.losses[0];
  if (!o || !(first > 0)) return [];
  const { n } = ctx.s;
  const line = 'loss = np.mean((Y - target) ** 2)';
  const forms = [
    [
      (L) => Math.sqrt(L * n) / n,
      'the loss is the norm of the error divided by its size, not squared: loss = ' +
        'np.linalg.norm(Y - target) / Y.size (the gradient is the mean square’s)',
    ],
    [
      (L) => Math.sqrt(L),
      'the loss is the root of the mean square, np.sqrt(np.mean((Y - target) ** 2)) (the ' +
        'gradient is the mean square’s)',
    ],
    [
      (L) => Math.sqrt(L * n),
      'the loss is the norm of the error, np.linalg.norm(Y - target), not the mean of its ' +
        'squares (the gradient is the mean square’s)',
    ],
  ];
  return forms
    .filter(([f]) => Math.abs(f(first) / o.data[0] - 1) < 1e-6)
    .map(([lossForm, text]) => ({ id: 'loop-loss-form', lossForm, text, line }));
}

// Losses of another convention than the course's mean of the squares, the gradient taken of that
// loss: not a mistake but a reading (the rows compared with the loop replayed with it, said)
const LOSS_CONVENTIONS = Object.freeze([
  {
    id: 'loss-half-mse',
    scale: 0.5, // on each loss and on each step
    text:
      'read with your loss, half the mean of the squares (loss = 0.5 * np.mean((Y - target) ** ' +
      '2)) with its own gradient dY = (Y - target) / Y.size: each loss and each step half the ' +
      'course’s',
  },
]);

// The loop's context read with each convention the first saved loss shows
function conventionReadings(ctx, course) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  const k = o && course.losses.length ? o.data[0] / course.losses[0] : NaN;
  return LOSS_CONVENTIONS.filter((c) => Math.abs(k / c.scale - 1) < 1e-6).map((convention) => ({
    ...ctx,
    convention,
    lr: ctx.lr * convention.scale,
    lossScale: convention.scale,
  }));
}

// The readings of the saved W_after: the weights after the whole run, else after its first step
const readingsOf = (ctx) =>
  ctx.steps > 1 && ctx.observed.some((o) => o.name !== 'losses') ? ['last', 'first'] : ['last'];

/**
 * The course's loop (with the layer's causes) or the first edit of it whose run reproduces every
 * observation: a single edit, several weights' updates at once, or the losses recorded as a
 * multiple of the loss: { edit (null: the course's loop), at (the W_after read after the 'last'
 * step or the 'first'), message }, or null.
 */
export function searchLoop(ctx) {
  if (!ctx.observed.length || !(ctx.steps >= 1) || !(ctx.lr > 0)) return null;
  const course = unroll(ctx);
  const readings = readingsOf(ctx);
  const proven = (run) => readings.find((at) => run && reproduces(ctx, run, at));
  if (proven(course)) return { edit: null, at: proven(course) };
  // (a loss of another convention, its gradient with it: the course's loop, or an edit of it,
  // read so)
  for (const read of ctx.convention ? [] : conventionReadings(ctx, course)) {
    const found = searchLoop(read);
    if (found) return { ...found, ctx: read };
  }
  const anyAfter = ctx.observed.some((o) => o.name !== 'losses');
  const shown = (ctx.shown ?? []).map((x) => x / ctx.lr);
  // (a factor near 0 is a weight not updated, found as such)
  const fitted = [...shown, ...(anyAfter ? fittedFactors(ctx) : [])].filter(
    (c) => Math.abs(c) > 1e-6,
  );
  // (a step more or fewer shows in the weights after the run, or in losses of another count)
  const counted = ctx.observed.find((o) => o.name === 'losses')?.data.length;
  const stepsShow = anyAfter || (counted !== undefined && counted !== ctx.steps);
  const single = loopEdits(ctx.lr, ctx.s, fitted).filter((e) => stepsShow || !e.steps);
  const recordedAs = [...lossScaleEdits(ctx, course), ...lossFormEdits(ctx, course)];
  const fittedRuns = [...scheduleEdits(ctx, course), ...optimizerEdits(ctx, course)];
  for (const edit of [...recordedAs, ...single, ...fittedRuns]) {
    const at = proven(tryUnroll(ctx, edit));
    if (at) return { edit, at };
  }
  for (const at of readings) {
    const rules = searchRules(ctx, at);
    if (rules) return { edit: rules, at };
  }
  for (const edit of loopPairs(ctx, fitted, stepsShow)) {
    const at = proven(tryUnroll(ctx, edit));
    if (at) return { edit, at };
  }
  return layerSearch(ctx, course, proven) ?? divergedSearch(ctx);
}

// ------------------------------------------------------------------------------------------------
// the layer's own steps, edited inside the loop

// the steps a training run shows an edit of: the forward's when the first loss differs, else
// the backward's that reach the weights' gradients (dY's own edits are the loss's, tried above)
const FORWARD_SITES = PROGRAM_NODES.slice(0, PROGRAM_NODES.indexOf('loss'));
const BACKWARD_SITES = PROGRAM_NODES.slice(PROGRAM_NODES.indexOf('dY') + 1).filter(
  (n) => n !== 'dX',
);
// the most runs the search replays (each a step or two of the layer first), and the most work
// (runs × steps × entries × C: about 2.5 s at the course's size, B = 2, T = 6, C = 64)
const MAX_LAYER_RUNS = 3000;
const MAX_LAYER_WORK = 1e8;

// One change at like places of several steps is one edit of a helper they share: the weights'
// gradients through one function (X or concat its input, dQm … or dY its gradient)
const helperLikeness = (edit) =>
  likeness(edit.kind, edit.before, edit.after)
    .replace(/\b(X|concat)\b/g, 'IN')
    .replace(/\b(dY|dPm)\b/g, 'G');

// The candidate edits of the layer in the loop: each single edit of a step, then one change made
// at every step of a likeness (two or more): [[[site, edit]]]
function layerCandidates(sites, s) {
  const bySite = new Map(sites.map((site) => [site, programEdits(site, s)]));
  const singles = [...bySite].flatMap(([site, edits]) => edits.map((edit) => [[site, edit]]));
  return [...singles, ...likeGroups(bySite, helperLikeness).filter((g) => g.length > 1)];
}

// The course's step of each edit's site and the edited one, in the course's words
function layerEditText(parts) {
  const lines = parts.map(([, edit]) => printLine(edit.statements[edit.index]));
  const course = parts.map(([, edit]) => printLine(edit.original));
  const sites = listText(parts.map(([site]) => site));
  const where =
    parts.length > 1
      ? `the same change in the lines of ${sites} (one helper they share)`
      : `a change in the line of ${sites}`;
  return {
    text: `the layer runs with ${where} at every step: ${lines.join('; ')}`,
    line: course.join('; '),
  };
}

/**
 * An edit of the layer's own program inside the loop (edits.js, at the steps the first loss
 * points to): every candidate's first steps replayed against the saved losses, the whole run of
 * those that agree against every observation. { edit, at } or null.
 */
function layerSearch(ctx, course, proven) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  if (!o || o.data.length < 2 || !searchable(ctx.s)) return null;
  const first = { ...o, data: o.data.subarray(0, 1) };
  const forward = !reproducesOne({ losses: course.losses.subarray(0, 1) }, first, 'last');
  const sites = (forward ? FORWARD_SITES : BACKWARD_SITES).filter((n) => !ctx.sites.has(n));
  const limit = forward ? 1 : 2;
  const screen = { ...o, data: o.data.subarray(0, limit) };
  // (losses one more or fewer than steps: the loop's count edited with the layer)
  const stepEdit = LOOP_EDITS.find((e) => e.steps && e.steps === o.data.length - ctx.steps);
  let runs = 0;
  for (const parts of layerCandidates(sites, ctx.s)) {
    if (++runs > MAX_LAYER_RUNS || runs * limit * ctx.s.n * ctx.s.C > MAX_LAYER_WORK) return null;
    const extra = parts.map(([site, edit]) => [
      site,
      { variant: editVariant(edit, site, ctx.s), param: `loop:${site}:${runs}` },
    ]);
    const edited = { ...ctx, sites: new Map([...ctx.sites, ...extra]) };
    const start = tryUnroll(edited, null, limit);
    if (!start || !reproducesOne(start, screen, 'last')) continue;
    const at = proven(tryUnroll(edited, stepEdit ?? null));
    if (!at) continue;
    const id = 'loop-layer-edit';
    const { text, line } = layerEditText(parts);
    const edit = stepEdit
      ? { id, text: `${text}; and ${stepEdit.text}`, line, sites: extra, steps: stepEdit.steps }
      : { id, text, line, sites: extra };
    return { edit, at, ctx: edited };
  }
  return null;
}

// A run that diverges (a loss past 1e6 × the first, or not finite, at step k >= 3): searched
// again on its losses before step k alone, the rest and the weights after the run left out
// (their rounding grows with them): the found edit with diverged = k, or null
function divergedSearch(ctx) {
  const o = ctx.observed.find((x) => x.name === 'losses');
  if (!o || ctx.diverged) return null;
  const limit = 1e6 * Math.abs(o.data[0]);
  const k = [...o.data].findIndex((x) => !Number.isFinite(x) || Math.abs(x) > limit);
  if (k < 3) return null;
  const observed = [{ ...o, data: o.data.subarray(0, k) }];
  const found = searchLoop({ ...ctx, steps: k, observed, diverged: k });
  return found?.edit ? { ...found, diverged: k } : null;
}

// Two edits of the loop where one does not suffice: an edit of the loop as a whole (gradients
// never reset, the update first …) with another step size for every weight
function loopPairs(ctx, fitted, stepsShow) {
  const known = factorsOf(ctx.lr, ctx.s);
  const fresh = fitted.filter((c) => !known.some(([k]) => Math.abs(c / k - 1) < 1e-9));
  const factors = [...known, ...fresh.map((c) => fittedFactor(c, ctx.lr))];
  return LOOP_EDITS.filter((e) => stepsShow || !e.steps).flatMap((e) =>
    factors.map(([c, text]) => ({
      ...e,
      all: { c },
      text: `${e.text}; and ${text}`,
      line: `${e.line}; W = W - lr * dW`,
      pair: true,
    })),
  );
}

// ------------------------------------------------------------------------------------------------
// the training rows

// what a search that found nothing tried, said on the first differing row
const RULED_OUT =
  'No change of the training loop tried reproduces your saved training arrays: a weight not ' +
  'updated, updated with another’s gradient or from another weight, the step’s sign or size ' +
  '(lr², no lr, 2·lr, lr/2, a size of the layer × lr), gradients never reset or read once, the ' +
  'update before the backward, the loss after the update, a step more or fewer, or several ' +
  'weights’ updates changed at once, or a learning rate that changes during the run.';

// "losses, Wq_after, Wk_after", or with W_after read after the first step "losses, and Wq_after
// and Wk_after as the weights after its first step" (rows: the compared rows, keyOf their keys)
function savedText(rows, keyOf, at) {
  const losses = rows.filter((r) => r.name === 'losses').map(keyOf);
  const afters = rows.filter((r) => r.name !== 'losses').map(keyOf);
  if (at !== 'first' || !afters.length) return rows.map(keyOf).join(', ');
  const list = `${listText(afters)} as the weights after its first step`;
  return losses.length ? `${losses.join(', ')}, and ${list}` : list;
}

// "losses[0:4] (your run diverges: losses[4] is 1.44e+03, 1349 × losses[0]; the losses after it
// and the weights after the run are not compared)"
function divergedText(rows, keyOf, k) {
  const row = rows.find((r) => r.name === 'losses');
  const key = keyOf(row);
  const [first, at] = [row.yours[0], row.yours[k]];
  const grew = Number.isFinite(at) ? `${num(at)}, ${num(at / first)} × ${key}[0]` : String(at);
  return (
    `${key}[0:${k}] (your run diverges: ${key}[${k}] is ${grew}; the losses after it and the ` +
    'weights after the run are not compared: their rounding grows with them)'
  );
}

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
  if (!replayable(training, differing, sizes, inputs)) return;
  const compared = rows.filter((r) => r.yours && (r.status === 'match' || r.status === 'differs'));
  const ctx = loopContext(training, compared, { arrays, keys, sizes, inputs, causes });
  const found = searchLoop(ctx);
  if (found === null && differing[0].diagnosis?.facts !== undefined) {
    differing[0].diagnosis.message += ` ${RULED_OUT}`;
  }
  const convention = found?.ctx?.convention;
  if (readAsLayer(found, ctx, { root, causes, differing, arrays, keys })) return;
  if (!found || (!found.edit && !root)) return;
  const keyOf = (r) => keys[r.name] ?? r.name;
  const withLayer = root && causes.size ? ` with your ${root}'s mistake` : '';
  const replay = `${replayText(stepsRun(found, ctx.steps), training.lr.value)}${withLayer}`;
  if (!found.edit) {
    for (const r of differing) {
      r.diagnosis = {
        id: 'follows-from',
        message: `follows from ${root}: the course's training loop, ${replay}, reproduces your ${keyOf(r)}.`,
      };
    }
    return;
  }
  const [first, ...rest] = differing;
  // (the first loss's difference is the convention's, not the edit's)
  if (convention && first.diagnosis?.facts !== undefined) first.diagnosis.facts = undefined;
  const read = convention ? `, ${convention.text}` : '';
  nameEdit(found, { first, rest, keyOf, savedList: listOf(found, compared, keyOf) }, replay + read);
}

// what the found run reproduces: the saved rows, or the losses before a run diverges
const listOf = (found, compared, keyOf) =>
  found.diverged
    ? divergedText(compared, keyOf, found.diverged)
    : savedText(compared, keyOf, found.at);

// The course's loop read with the layer's biases or a loss of another convention reproducing the
// training rows: each compared again with it, said (true), or false
function readAsLayer(found, ctx, { root, causes, differing, arrays, keys }) {
  const convention = found?.ctx?.convention;
  if (!found || found.edit || root || !(causes.size || convention)) return false;
  const note = convention
    ? `compared with the course's loop ${convention.text}`
    : "compared with the course's loop replayed with your layer's biases";
  const { observed } = ctx;
  readWith(unroll(found.ctx ?? ctx), note, found.at, differing, { arrays, keys, observed });
  return true;
}

// the steps the found run takes: up to where it diverges, or steps with the edit's change
const stepsRun = (found, steps) => found.diverged ?? steps + (found.edit?.steps ?? 0);
const replayText = (steps, lr) =>
  `replayed from your initial weights for ${steps} step${steps === 1 ? '' : 's'} (lr = ${num(lr)})`;

// Whether the loop can be replayed for these rows: some differ (and no row named already that
// the saved initial weights are the trained ones), one lr for every step, the MSE loss
function replayable({ lr }, differing, sizes, inputs) {
  if (!differing.length || differing.some((r) => r.diagnosis?.id === 'loop-weights-aliased')) {
    return false;
  }
  if (!lr || lr.lrs.some((x) => x !== lr.value)) return false;
  return sizes.loss === 'mse' && Boolean(inputs.target);
}

// The context of searchLoop for the compared training rows: the saved ones are its observations
function loopContext(training, compared, { arrays, keys, sizes, inputs, causes }) {
  const observed = compared.map((r) => {
    const { dtype, resolution, printedDtype } = arrays[keys[r.name]] ?? {};
    // (a loss computed from float32 inputs has their precision, whatever its dtype)
    const held = training.f32 && r.name === 'losses' ? '<f4' : dtype;
    return { name: r.name, data: r.yours, opts: { dtype: held, resolution, printedDtype } };
  });
  const losses = compared.find((r) => r.name === 'losses');
  const steps = training.steps ?? savedSteps(arrays, keys.steps) ?? losses?.yours.length ?? 1;
  const data = Object.fromEntries(Object.entries(inputs).map(([k, a]) => [k, a.data]));
  const shown = training.shown ?? [];
  return { s: sizes, inputs: data, sites: causes, lr: training.lr.value, steps, observed, shown };
}

// The first differing training row named by the loop's edit, the others following from it
function nameEdit({ edit, at, diverged }, { first, rest, keyOf, savedList }, replay) {
  const after = at === 'first' ? ' as the weights after its first step' : '';
  const facts = first.diagnosis?.facts;
  const they = first.name === 'losses' ? 'They are' : 'It is';
  const lead = facts ? `${facts} ${they}` : `Your ${keyOf(first)} ${they.split(' ')[1]}`;
  const several = edit.pair || (edit.rules && Object.keys(edit.rules).length > 1);
  const changes = several ? 'these changes' : 'one change';
  const Replay = `${replay[0].toUpperCase()}${replay.slice(1)}`;
  first.diagnosis = {
    id: edit.id,
    message: `${lead} what the course's training loop gives with ${changes}: ${edit.text}. ${Replay}, it reproduces your ${savedList}. The course: ${edit.line}.`,
  };
  for (const r of rest) {
    const how = diverged
      ? `the same loop diverges as your run does; your ${keyOf(r)}, after it, is not compared`
      : `the same loop reproduces your ${keyOf(r)}${after}`;
    r.diagnosis = { id: 'follows-from', message: `follows from ${first.name}: ${how}.` };
  }
}

// The training rows read with the layer's biases or a loss of another convention (no differing
// row of the layer left): each compared again with `run`, the loop replayed so, said in its note
function readWith(run, note, at, differing, { arrays, keys, observed }) {
  const W = at === 'first' ? run.W1 : run.W;
  for (const r of differing) {
    const expected = r.name === 'losses' ? run.losses : W[r.name.replace('_after', '')];
    const array = arrays[keys[r.name]];
    if (!array || !expected) continue;
    // (held to the precision the search held it to)
    const { dtype } = observed.find((o) => o.name === r.name)?.opts ?? array;
    const yours = { ...array, dtype, data: r.yours, shape: r.shape };
    const again = comparedRow(r.name, yours, expected, {
      note: [r.note, note].filter(Boolean).join('; '),
    });
    if (again.status === 'match') Object.assign(r, again);
  }
}
