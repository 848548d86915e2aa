// training.js - lesson 5's training rows in a notebook check (issue 18, item 3): the weights after
// a step or the run (Wq_after … Wo_after) against W - lr * dW, and the printed `losses` against
// the engine's run from the student's initial weights, each with what it measured (the first
// step that differs, a factor on the losses, entries not finite). The causes are the loop's
// search to find (loop.js: the course's training loop unrolled and its edits), as the layer's
// are the edit search's; a W_after that is one step with the student's own dW follows from it.
//
//   const { rows, notes, used, lr } = checkTraining(mha, readNpz(bytes), { heads: 4 });
//
// DOM-free. The expected numbers come from the engine (web/mha.js): dW of a layer with the
// student's initial weights (forward on X, mseLoss against target, backward), and layer.train for
// the losses; lr saved, else found from a W_after or from the losses (said in a note). Arrays are
// flat, row-major: X (B, T, C), W (C, C), losses (n,).

import { agrees, comparedRow, toleranceFor, uncomparedRow } from './compare.js';
import { AFTER_MARKS, INIT_MARKS, matchNames, shapeText } from './names.js';
import { dot } from './ops.js';

/** The four weights, in the course's order. */
export const WEIGHTS = Object.freeze(['Wq', 'Wk', 'Wv', 'Wo']);
const SAVE_LR = "save it: np.savez('mha_check.npz', ..., lr=lr)";

// ------------------------------------------------------------------------------------------------
// names: the course's spelling, any case, underscores ignored (as names.js reads the others)

const keyOf = (name) => String(name).toLowerCase().replaceAll('_', '');
// Wq_after, Wq_new, Wq_next, Wq_updated, Wq_trained, Wq_final; lesson 1's Wq1 and Wq2 are two
// heads, never a step
const AFTER = AFTER_MARKS.join('|');
const AFTER_KEY = new RegExp(`^w([qkvo])(${AFTER})$`);
const OTHER_KEYS = Object.freeze({
  lr: ['lr', 'learningrate', 'eta', 'alpha'],
  lrs: ['lrs'], // the page's lesson-5 download: the learning rate of each step
  steps: ['steps', 'nsteps', 'numsteps', 'numiter', 'numiters', 'niter', 'iters', 'iterations'],
  losses: ['losses', 'losshistory', 'losscurve', 'history'],
});

// Wq_init, Wq_initial, Wq_start, Wq_before, init_Wq, initial_Wq: the weights before training
const INIT = INIT_MARKS.join('|');
const INIT_KEY = new RegExp(`^(?:w([qkvo])(?:${INIT})|(?:init|initial)w([qkvo]))$`);

// The file's keys of a run's initial weights, by the course's name: { Wq: 'Wq_init', … }: the one
// reading both uses below share (before the layout, as the layer's; after it, as the run's start)
export function initialKeys(arrays) {
  const inits = {};
  for (const key of Object.keys(arrays)) {
    const m = INIT_KEY.exec(keyOf(key));
    if (m) inits[`W${m[1] ?? m[2]}`] ??= key;
  }
  return inits;
}

/**
 * The arrays lesson 5's training is checked from. A file with the initial weights under names of
 * their own (Wq_init …) beside the layer's weights saved after the loop (the page's layer line run
 * after training) starts the run from the initial ones, and the layer's are the weights after it
 * (unless the file names those too). { arrays, used (the initial weights' keys), notes }
 */
export function initialWeights(arrays) {
  const inits = initialKeys(arrays);
  const { found } = matchNames(arrays);
  const weights = WEIGHTS.filter((w) => inits[w] && found[w]);
  if (!weights.length) return { arrays, used: [], notes: [] };
  const { keys } = trainingKeys(arrays);
  const out = { ...arrays };
  const notes = [];
  for (const w of weights) {
    const [init, key] = [inits[w], found[w].key];
    out[key] = arrays[init];
    delete out[init];
    const after = !keys[`${w}_after`];
    if (after) out[`${w}_after`] = arrays[key];
    const trained = after ? `, and your ${key} as the weights after it` : '';
    notes.push(`${init} read as the initial weights of the training run${trained}`);
  }
  return { arrays: out, used: weights.map((w) => inits[w]), notes };
}

/**
 * A file with a training run's initial weights (Wq_init …) and no weights under the course's
 * names (the layer's are saved as Wq_trained …): the initial weights are the layer's.
 * weightKeys(arrays) -> the course's weights the file holds in some form. { arrays, notes }
 */
export function initialAsWeights(arrays, weightKeys) {
  const held = weightKeys(arrays);
  const out = { ...arrays };
  const notes = [];
  for (const [w, key] of Object.entries(initialKeys(arrays))) {
    if (held.has(w) || out[w]) continue;
    out[w] = arrays[key];
    delete out[key];
    notes.push(`${key} read as ${w}: your file's weights are the run's initial ones`);
  }
  return { arrays: notes.length ? out : arrays, notes };
}

/** The training name ('Wq_after', 'lr', 'lrs', 'steps', 'losses') of a file's key, or null. */
function trainingName(key) {
  const k = keyOf(key);
  const m = AFTER_KEY.exec(k);
  if (m) return `W${m[1]}_after`;
  return Object.keys(OTHER_KEYS).find((n) => OTHER_KEYS[n].includes(k)) ?? null;
}

/**
 * The training arrays of a file by name: { keys: { Wq_after: 'Wq_new', lr: 'eta', … }, notes };
 * the course's spelling wins a tie.
 */
export function trainingKeys(arrays) {
  const keys = {};
  const notes = [];
  const rank = (key) => (key === trainingName(key) ? 0 : 1);
  for (const key of Object.keys(arrays).sort((a, b) => rank(a) - rank(b))) {
    const name = trainingName(key);
    if (name == null) continue;
    if (keys[name]) {
      notes.push(`${key} and ${keys[name]} both name ${name}: ${keys[name]} was used`);
    } else {
      keys[name] = key;
      if (key !== name) notes.push(`${key} read as ${name}`);
    }
  }
  return { keys, notes };
}

// ------------------------------------------------------------------------------------------------
// arrays

const sameShape = (a, b) => a.length === b.length && a.every((d, i) => d === b[i]);
const allFinite = (d) => d.every(Number.isFinite);

/** { ...a, data: Float64Array, shape } from a readNpy-style array, or null when it is not one. */
export function toArray(a) {
  const shape = a?.shape;
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) return null;
  const size = shape.reduce((x, y) => x * y, 1);
  if (typeof a.data?.length !== 'number' || a.data.length !== size) return null;
  try {
    return { ...a, data: Float64Array.from(a.data, Number), shape: [...shape] };
  } catch {
    return null;
  }
}

// The tolerance options of compare.js for a student's array
const optsOf = (a) => ({ dtype: a.dtype, resolution: a.resolution, printedDtype: a.printedDtype });

// The sizes from X (B, T, C) or (T, C) and the options, or null when unusable
function readSizes(X, heads, causal) {
  if (!X || (X.shape.length !== 3 && X.shape.length !== 2) || !allFinite(X.data)) return null;
  const [B, T, C] = X.shape.length === 3 ? X.shape : [1, ...X.shape];
  const ok = B >= 1 && T >= 1 && C >= 1 && Number.isInteger(heads) && heads >= 1;
  if (!ok || C % heads !== 0 || typeof causal !== 'boolean') return null;
  return { B, T, C, heads, causal, n: B * T * C };
}

// X, the four weights (C, C), the student's own dWq … if given, target's entry; null when X or a
// weight is missing or unusable (checkNotebook says why)
function readInputs(arrays, heads, causal) {
  const { found } = matchNames(arrays);
  const X = toArray(found.X?.array);
  const s = readSizes(X, heads, causal);
  if (!s) return null;
  const W0 = {};
  const dW = {};
  const square = (a) => a && sameShape(a.shape, [s.C, s.C]) && allFinite(a.data);
  for (const w of WEIGHTS) {
    const a = toArray(found[w]?.array);
    if (!square(a)) return null;
    W0[w] = a.data;
    const d = toArray(found[`d${w}`]?.array);
    if (square(d)) dW[w] = d.data;
  }
  const name = Object.fromEntries(Object.entries(found).map(([k, v]) => [k, v.key]));
  // a loss computed from float32 arrays has float32's precision, whatever it is saved as
  const f32 = ['X', ...WEIGHTS].some((n) => /f4/.test(found[n]?.array?.dtype ?? ''));
  return { s, X: X.data, W0, dW, name, targetEntry: found.target ?? null, target: null, f32 };
}

// target's data (the shape of X), or { why } the training step cannot be checked without it
function readTarget(inp) {
  const { B, T, C } = inp.s;
  const entry = inp.targetEntry;
  if (!entry) {
    return { why: 'save target: lesson 5 trains on the MSE loss np.mean((Y - target) ** 2)' };
  }
  const a = toArray(entry.array);
  if (!a || a.data.length !== B * T * C) {
    const shape = a ? `shape ${shapeText(a.shape)}` : 'no array';
    return { why: `your ${entry.key} has ${shape}; expected (B, T, C) = (${B}, ${T}, ${C})` };
  }
  if (!allFinite(a.data)) return { why: `your ${entry.key} has entries that are not finite` };
  return { data: a.data };
}

// "0.1", "an array of shape (2,)", "not an array": what a saved scalar holds, for a sentence
function describe(a) {
  if (!a) return 'not an array';
  return a.data.length === 1 ? String(a.data[0]) : `an array of shape ${shapeText(a.shape)}`;
}

// ------------------------------------------------------------------------------------------------
// numbers in sentences

const num = (x) => String(Number(x.toPrecision(6)));

// Two numbers with enough digits to tell them apart: ['0.6101', '0.6102']
function pair(a, b) {
  for (let p = 4; p <= 17; p++) {
    const x = String(Number(a.toPrecision(p)));
    const y = String(Number(b.toPrecision(p)));
    if (x !== y || p === 17) return [x, y];
  }
  return [String(a), String(b)];
}

// "Wq, Wk and Wv"
const and = (xs) => (xs.length > 1 ? `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}` : xs[0]);

const maxAbsOf = (d) => d.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

// ------------------------------------------------------------------------------------------------
// the engine

const forwardOpts = (inp) => ({ B: inp.s.B, T: inp.s.T, causal: inp.s.causal });
const copyWeights = (views) =>
  Object.fromEntries(WEIGHTS.map((w) => [w, Float64Array.from(views[w])]));

// fn(layer) with a fresh engine layer holding weights W, freed after
function withLayer(mha, inp, W, fn) {
  const layer = mha.createLayer({ C: inp.s.C, heads: inp.s.heads });
  try {
    for (const w of WEIGHTS) layer.weights[w].set(W[w]);
    return fn(layer);
  } finally {
    layer.free();
  }
}

/**
 * The MSE loss at weights W and, with `grads`, dWq … dWo: { loss, g }. inp: { s: { C, heads, B,
 * T, causal }, X, target }.
 */
export function lossAt(mha, inp, W, grads = false) {
  return withLayer(mha, inp, W, (layer) => {
    const { Y } = layer.forward(inp.X, forwardOpts(inp));
    const { loss, dY } = mha.mseLoss(Y, inp.target);
    if (!grads) return { loss, g: null };
    layer.zeroGrad();
    layer.backward(dY);
    return { loss, g: copyWeights(layer.grads) };
  });
}

/** W - c·g, entry by entry. */
export const stepped = (W, g, c) => W.map((v, i) => v - c * g[i]);

// The learning rate of step k of a schedule (a step after the last one: its last rate; none: 0,
// for a final loss that no step follows)
const lrAt = (lrs, k) => (lrs.length ? lrs[Math.min(k, lrs.length - 1)] : 0);

/**
 * `steps` steps of layer.train from the initial weights with the learning rates lrs: { losses (the
 * loss before each step; NaN after the loss stopped being finite), weights (after the steps) }.
 * ctx: { mha, inp: { s, X, target, W0 }, runs: Map (the runs so far, by lrs and steps) }.
 */
export function engineRun(ctx, lrs, steps) {
  const key = `${lrs.join(',')}|${steps}`;
  if (ctx.runs.has(key)) return ctx.runs.get(key);
  const { inp } = ctx;
  const run = withLayer(ctx.mha, inp, inp.W0, (layer) => {
    const losses = new Float64Array(steps).fill(NaN);
    const constant = lrs.every((x) => x === lrs[0]);
    const train = (k, n) =>
      layer.train(inp.X, inp.target, { ...forwardOpts(inp), steps: n, lr: lrAt(lrs, k) });
    try {
      if (constant) losses.set(train(0, steps));
      for (let k = 0; !constant && k < steps; k++) losses[k] = train(k, 1)[0];
    } catch (e) {
      if (!e.losses) throw e;
      if (constant) losses.set(e.losses);
    }
    return { losses, weights: copyWeights(layer.weights) };
  });
  ctx.runs.set(key, run);
  return run;
}

// ------------------------------------------------------------------------------------------------
// the learning rate: saved (lr or lrs), else found from the weights, else from the losses

// { lrs, P (the steps the *_after weights are after), value, source } from lr or lrs, or null
function savedLr(ctx) {
  const { keys, arrays, notes } = ctx;
  if (keys.lr) {
    const a = toArray(arrays[keys.lr]);
    const v = a && a.data.length === 1 ? a.data[0] : NaN;
    if (v > 0 && Number.isFinite(v)) return { lrs: [v], P: 1, value: v, source: 'saved' };
    notes.push(
      `Your ${keys.lr} is ${describe(a)}: a learning rate is one positive finite number, ` +
        'so it is not used (lr is found from your other arrays instead).',
    );
  }
  if (keys.lrs) {
    const a = toArray(arrays[keys.lrs]);
    if (a && a.shape.length === 1 && a.data.every((x) => x > 0 && Number.isFinite(x))) {
      const lrs = [...a.data];
      return { lrs, P: lrs.length, value: lrs[0] ?? NaN, source: 'saved', schedule: true };
    }
    notes.push(
      `Your ${keys.lrs} is ${describe(a)}: expected a 1-D array of positive finite learning ` +
        'rates, one per step, so it is not used.',
    );
  }
  return null;
}

// lr from the first weight whose step is nonzero: lr = <W - W_after, dW> / <dW, dW> when W_after
// is one step from W; else, with steps saved, the lr whose run of steps gives W_after (a correct
// run saved after its 10 steps); else from the losses when saved; else the one-step estimate
function lrFromWeights(ctx) {
  const { W0 } = ctx.inp;
  for (const w of WEIGHTS) {
    const A = afterArray(ctx, w);
    const g = ctx.grad.g[w];
    const gg = dot(g, g);
    if (!A || !allFinite(A.data) || !(gg > 0)) continue;
    const lr = dot(stepped(W0[w], A.data, 1), g) / gg;
    if (!(lr !== 0 && Number.isFinite(lr))) continue;
    if (agrees(A.data, stepped(W0[w], g, lr), optsOf(A))) return lrFound(ctx, w, lr, '');
    const S = ctx.steps;
    const run = S > 1 ? runLr(ctx, w, A, lr, S) : null;
    if (run !== null) return lrFound(ctx, w, run, ` after your ${S} steps`);
    return lrFromLosses(ctx) ?? lrFound(ctx, w, lr, '');
  }
  return null;
}

// the lr found from weight w's W_after, said in a note
function lrFound(ctx, w, lr, after) {
  const { name } = ctx.inp;
  const A0 = ctx.keys[`${w}_after`];
  let text = `lr = ${num(Math.abs(lr))} found from your ${name[w]} and ${A0}${after} (not saved)`;
  if (lr < 0) text += `: your step moved ${name[w]} along +d${w} (lr = ${num(lr)})`;
  ctx.notes.push(`${text}.`);
  const value = Math.abs(lr);
  return { lrs: [value], P: 1, value, source: 'weights', from: w };
}

// The lr whose S steps of the course's run give weight w's W_after (A), by secant steps on its
// projection on dW from the one-step estimate lr0; null unless that run reproduces A
function runLr(ctx, w, A, lr0, S) {
  const { W0 } = ctx.inp;
  const g = ctx.grad.g[w];
  const target = dot(stepped(W0[w], A.data, 1), g);
  const f = (lr) => dot(stepped(W0[w], engineRun(ctx, [lr], S).weights[w], 1), g) - target;
  let [a, b] = [lr0, lr0 / S];
  let [fa, fb] = [f(a), f(b)];
  for (let i = 0; i < 40 && fb !== 0 && fb !== fa && Math.abs(b - a) > 1e-15 * Math.abs(b); i++) {
    const c = b - (fb * (b - a)) / (fb - fa);
    if (!Number.isFinite(c)) return null;
    [a, fa, b, fb] = [b, fb, c, f(c)];
  }
  const run = engineRun(ctx, [b], S).weights[w];
  return Number.isFinite(b) && agrees(A.data, run, optsOf(A)) ? b : null;
}

/**
 * The lr whose first step takes the loss to L1: the root of loss(W0 - lr·dW) = L1 nearest the
 * linear estimate (L0 - L1) / |dW|², by secant steps; null if they find none. ctx: engineRun's,
 * with grad: lossAt(…, W0, true).
 */
export function fitLr(ctx, L1) {
  const { grad, inp } = ctx;
  const gg = WEIGHTS.reduce((sum, w) => sum + dot(grad.g[w], grad.g[w]), 0);
  if (!(gg > 0) || !Number.isFinite(L1)) return null;
  const W = (lr) => Object.fromEntries(WEIGHTS.map((w) => [w, stepped(inp.W0[w], grad.g[w], lr)]));
  const f = (lr) => lossAt(ctx.mha, inp, W(lr)).loss - L1;
  let a = (grad.loss - L1) / gg;
  let fa = f(a);
  let b = a === 0 ? 1e-6 : a * 1.001;
  let fb = f(b);
  for (let i = 0; i < 100 && fb !== 0 && fb !== fa && Math.abs(b - a) > 1e-16 * Math.abs(b); i++) {
    const c = b - (fb * (b - a)) / (fb - fa);
    if (!Number.isFinite(c)) return null;
    [a, fa, b, fb] = [b, fb, c, f(c)];
  }
  return Number.isFinite(b) && Math.abs(fb) <= 1e-8 * Math.abs(L1) ? b : null;
}

// lr from losses[0] and losses[1] (losses[0] may be a multiple of the course's loss)
function lrFromLosses(ctx) {
  const yours = ctx.losses?.data;
  if (!yours || yours.length < 2 || !(yours[0] !== 0)) return null;
  const lr = fitLr(ctx, (yours[1] * ctx.grad.loss) / yours[0]);
  if (!(lr !== 0 && lr !== null)) return null;
  const key = ctx.keys.losses;
  let text = `lr = ${num(Math.abs(lr))} found from your ${key} (not saved): the learning rate whose first step from your initial weights gives your ${key}[1]`;
  if (lr < 0) text += `, going up (lr = ${num(lr)})`;
  ctx.notes.push(`${text}.`);
  const value = Math.abs(lr);
  return { lrs: [value], P: 1, value, source: 'losses' };
}

// The learning rates the student's run shows when it differs from the saved lr (the loop's
// search tries each as another step size): from losses[1], and from a W_after after the run
function shownLrs(ctx, rows) {
  if (ctx.lr?.source !== 'saved' || !rows.some((r) => r.status === 'differs')) return [];
  const out = [];
  const yours = ctx.losses?.data;
  if (yours && yours.length >= 2 && yours[0] !== 0) {
    out.push(fitLr(ctx, (yours[1] * ctx.grad.loss) / yours[0]));
  }
  const w = WEIGHTS.find((v) => afterArray(ctx, v));
  if (w && ctx.steps > 1) {
    const A = afterArray(ctx, w);
    const g = ctx.grad.g[w];
    const lr0 = dot(stepped(ctx.inp.W0[w], A.data, 1), g) / dot(g, g);
    if (Number.isFinite(lr0) && lr0 !== 0) out.push(runLr(ctx, w, A, lr0, ctx.steps));
  }
  return out.filter((x) => x !== null && Number.isFinite(x) && x !== ctx.lr.value);
}

// The saved initial weights equal the weights after the run, bit for bit, while the losses
// change: the training updated the arrays the file saved as the initial ones in place (a proof:
// weights never updated give a constant loss). The first differing row names it.
function aliasedWeights(ctx, rows) {
  const afters = WEIGHTS.filter((w) => afterArray(ctx, w));
  const L = ctx.losses?.data;
  if (!afters.length || !L || L.length < 2 || L.every((x) => x === L[0])) return;
  if (!afters.every((w) => afterArray(ctx, w).data.every((x, i) => x === ctx.inp.W0[w][i]))) {
    return;
  }
  const first = rows.find((r) => r.status === 'differs');
  if (!first) return;
  const { name } = ctx.inp;
  const initial = afters.map((w) => name[w]);
  const after = afters.map((w) => ctx.keys[`${w}_after`]);
  const copies = afters.map((w) => `${name[w]}0 = ${name[w]}.copy()`).join('; ');
  first.diagnosis = {
    id: 'loop-weights-aliased',
    message:
      `Your ${and(initial)} equal your ${and(after)}, every entry exactly, while your ${ctx.keys.losses} ` +
      `change from ${num(L[0])} to ${num(L.at(-1))}: the arrays saved as your initial weights ` +
      'are the weights after training. The update W -= lr * dW changed them in place (the ' +
      'layer holds the same arrays as your variables), so np.savez saw the trained ones. Save ' +
      `copies before the loop: ${copies}.`,
  };
  for (const r of rows) {
    if (r !== first && r.status === 'differs') {
      r.diagnosis = { id: 'follows-from', message: `follows from ${first.name}: the same arrays.` };
    }
  }
  ctx.aliased = true;
}

// ------------------------------------------------------------------------------------------------
// W_after: one step from the initial weights

// The student's W_after as an array of shape (C, C), or null
function afterArray(ctx, w) {
  const a = toArray(ctx.arrays[ctx.keys[`${w}_after`]]);
  const { C } = ctx.inp.s;
  return a && sameShape(a.shape, [C, C]) ? a : null;
}

// The numbers of steps the W_after may be after, besides one: steps when saved, else n, n - 1
function stepCounts(ctx) {
  const n = ctx.losses?.data.length;
  // (steps saved: the weights after that many steps, none other)
  const counts = ctx.steps != null ? [ctx.steps] : [n, n == null ? null : n - 1];
  return [...new Set(counts)].filter((S) => Number.isInteger(S) && S >= 2);
}

// "your Wq_after has 3 entries that are not finite, the first nan at [0, 5]"
function notFinite(ctx, w, a) {
  const i = a.data.findIndex((x) => !Number.isFinite(x));
  if (i < 0) return null;
  const count = a.data.filter((x) => !Number.isFinite(x)).length;
  const { C } = ctx.inp.s;
  const where = `[${Math.floor(i / C)}, ${i % C}]`;
  const A = ctx.keys[`${w}_after`];
  const message = `Your ${A} has ${count} ${count === 1 ? 'entry' : 'entries'} that ${count === 1 ? 'is' : 'are'} not finite, the first ${a.data[i]} at ${where}; the course's ${ctx.inp.name[w]} - lr * d${w} is finite everywhere.`;
  return { id: 'non-finite', message };
}

// What was measured when no cause reproduces a differing W_after
function afterFacts(ctx, w, row, what) {
  const A = ctx.keys[`${w}_after`];
  const change = maxAbsOf(stepped(ctx.inp.W0[w], row.expected, 1));
  const message = `Your ${A} differs from ${what} by up to ${num(row.maxAbs)}, while the course's step changes ${ctx.inp.name[w]} by up to ${num(change)}.`;
  return { id: 'step-differs', message, facts: message };
}

// The row of one W_after
function afterRow(ctx, w) {
  const name = `${w}_after`;
  const key = ctx.keys[name];
  const { C } = ctx.inp.s;
  const a = afterArray(ctx, w);
  if (!a) {
    const raw = toArray(ctx.arrays[key]);
    const note = raw
      ? `expected (C, C) = (${C}, ${C}) like ${ctx.inp.name[w]}`
      : `${key} is not an array: expected { data, shape } as readNpy returns`;
    return uncomparedRow(name, 'shape', { shape: raw?.shape ?? null, expectedShape: [C, C], note });
  }
  if (!ctx.lr) return null;
  const { P, lrs } = ctx.lr;
  const W0 = ctx.inp.W0[w];
  const expected = P === 1 ? stepped(W0, ctx.grad.g[w], lrs[0]) : engineRun(ctx, lrs, P).weights[w];
  const note =
    P === 1
      ? smallStepNote(ctx, w, a, expected)
      : `compared with the weights after your ${P} steps (${ctx.keys.lrs})`;
  const row = comparedRow(name, a, expected, { note });
  if (row.status === 'match') return row;
  return explainAfter(ctx, w, a, row);
}

// A differing W_after: what it follows from (the student's own dW), the weights after the whole
// run when they match, or the measured facts (a cause in the loop is loop.js's to find)
function explainAfter(ctx, w, a, row) {
  const bad = notFinite(ctx, w, a);
  if (bad) return { ...row, diagnosis: bad };
  const { P, lrs } = ctx.lr;
  if (P > 1) {
    return { ...row, diagnosis: afterFacts(ctx, w, row, `the weights after your ${P} steps`) };
  }
  const own = ownGradient(ctx, w, a);
  if (own) return { ...row, diagnosis: own };
  for (const S of stepCounts(ctx)) {
    const after = engineRun(ctx, lrs, S).weights[w];
    if (agrees(a.data, after, optsOf(a))) {
      const note = `compared with the weights after all ${S} steps: your ${ctx.keys[`${w}_after`]} is not the weights after one step`;
      return comparedRow(row.name, a, after, { note });
    }
  }
  const what = `${ctx.inp.name[w]} - lr * d${w} (lr = ${num(lrs[0])})`;
  return { ...row, diagnosis: afterFacts(ctx, w, row, what) };
}

// A W_after that is one step with the student's own (differing) dW: it follows from dW
function ownGradient(ctx, w, a) {
  const { W0, dW, name } = ctx.inp;
  if (!dW[w] || !agrees(a.data, stepped(W0[w], dW[w], ctx.lr.value), optsOf(a))) return null;
  const message = `follows from d${w}: ${ctx.keys[`${w}_after`]}, recomputed from your own ${name[w]}, ${name[`d${w}`]} and lr, matches your array.`;
  return { id: 'follows-from', message };
}

// When the step is below the row's tolerance, W_after cannot tell whether it was taken
function smallStepNote(ctx, w, a, expected) {
  const tol = toleranceFor(expected, optsOf(a));
  const step = maxAbsOf(stepped(ctx.inp.W0[w], expected, 1));
  if (step > tol.abs) return null;
  return `the step changes ${ctx.inp.name[w]} by at most ${num(step)}, not more than the tolerance (${num(tol.abs)}): ${ctx.keys[`${w}_after`]} cannot show whether the step was taken`;
}

// ------------------------------------------------------------------------------------------------
// losses: the engine's run from the initial weights, step by step

// losses as a 1-D array with at least one entry, or an uncompared row saying what to save
function readLosses(ctx) {
  const key = ctx.keys.losses;
  const a = toArray(ctx.arrays[key]);
  if (a && a.shape.length === 1 && a.shape[0] >= 1) return { array: a };
  const expectedShape = [ctx.steps ?? 10];
  const note = a
    ? `expected a 1-D array (n,) of the loss at each step, e.g. losses = np.array(losses); your ${key} has shape ${shapeText(a.shape)}`
    : `${key} is not an array: expected { data, shape } as readNpy returns`;
  const row = uncomparedRow('losses', 'shape', { shape: a?.shape ?? null, expectedShape, note });
  if (a && a.data.length === 0) {
    // an empty list saved: the loop never appended to it
    row.diagnosis = {
      id: 'loop-losses-not-recorded',
      message: `Your ${key} is empty: the loop never recorded a loss. The course appends the loss of each step before its update: losses.append(loss).`,
    };
  }
  return { row };
}

// steps if saved as one whole number >= 0, else null (with a note when it is not one)
function readSteps(ctx) {
  const key = ctx.keys.steps;
  if (!key) return null;
  const a = toArray(ctx.arrays[key]);
  const v = a && a.data.length === 1 ? a.data[0] : NaN;
  if (Number.isInteger(v) && v >= 0) return v;
  ctx.notes.push(
    `Your ${key} is ${describe(a)}: expected one whole number of steps, so it is not used.`,
  );
  return null;
}

// The convention of the comparison, and steps (or len(lrs)) against len(losses)
function lossesNotes(ctx, n) {
  const key = ctx.keys.losses;
  let text =
    `${key}[k] is compared with the course's loss after k steps of W -= lr * dW from your initial weights, k = 0 … ${n - 1} ` +
    "(the engine's layer.train returns the loss before each step: losses[0] is the loss at " +
    'your initial weights)';
  const lrsKey = ctx.lr?.schedule && ctx.keys.lrs;
  const S = lrsKey ? ctx.lr.P : ctx.steps;
  const what = lrsKey ? `your ${lrsKey} has ${S} entries` : `your ${ctx.keys.steps} is ${S}`;
  if (S != null && n === S + 1) {
    text += `; ${what} and your ${key} ${n}: the last is the loss after the last step`;
  } else if (S != null && n !== S) {
    const said = `${what[0].toUpperCase()}${what.slice(1)}`;
    ctx.notes.push(
      `${said}, but your ${key} has ${n} entries (neither that nor one more): all ${n} are checked.`,
    );
  }
  ctx.notes.push(`${text}.`);
}

// "Your losses match for steps 0–3; at step 4 yours is 0.61, the course's 0.58."
function firstStepText(key, yours, expected, f) {
  const [y, e] = pair(yours[f], expected[f]);
  if (f === 0) {
    return `Your ${key} differ from step 0, the loss at your initial weights: yours is ${y}, the course's ${e}.`;
  }
  const range = f === 1 ? 'at step 0' : `for steps 0–${f - 1}`;
  return `Your ${key} match ${range}; at step ${f} yours is ${y}, the course's ${e}.`;
}

// The losses row (null when it cannot be computed: a note says why)
function lossesRow(ctx) {
  if (ctx.lossesRow) return ctx.lossesRow;
  const a = ctx.losses;
  const n = a.data.length;
  if (!ctx.lr && n >= 2) {
    ctx.notes.push(
      `${ctx.keys.losses} not checked: lr is not saved and no learning rate takes your initial weights' loss to your ${ctx.keys.losses}[1]; ${SAVE_LR}.`,
    );
    return null;
  }
  lossesNotes(ctx, n);
  const lrs = ctx.lr ? ctx.lr.lrs : [];
  const expected = engineRun(ctx, lrs, n).losses;
  const row = comparedRow('losses', a, expected, {});
  const ran = ranOtherSteps(ctx, row, n);
  if (ran) return ran;
  if (row.status === 'match') return row;
  if (savedAfterTraining(ctx, a, expected)) return null;
  return { ...row, diagnosis: lossesFacts(ctx, a, row) };
}

// The file's weights are the trained ones, not the run's start (the page's layer line run after
// the loop, the initial weights not saved): no weights after the run beside them, the losses go
// down, the loss at the file's weights is below every loss recorded, and the losses are no
// multiple of the course's. Said in a note; nothing to replay.
function savedAfterTraining(ctx, a, expected) {
  const L0 = expected[0];
  const ys = Array.from(a.data);
  if (WEIGHTS.some((w) => ctx.keys[`${w}_after`])) return false;
  const down = ys.length >= 2 && ys.every(Number.isFinite) && ys.at(-1) < ys[0];
  if (!down || !(L0 < Math.min(...ys) * (1 - 1e-6))) return false;
  const ratios = ys.map((y, k) => y / expected[k]);
  if (ratios.every((r) => Math.abs(r / ratios[0] - 1) < 1e-6)) return false;
  const names = WEIGHTS.map((w) => ctx.inp.name[w] ?? w);
  // (what was read from the losses as a run from these weights is not so: the lr, the steps)
  const stale = (n) => /^lr = .* found from your /.test(n) || n.includes('] is compared with');
  for (let i = ctx.notes.length - 1; i >= 0; i--) if (stale(ctx.notes[i])) ctx.notes.splice(i, 1);
  ctx.notes.push(
    `${ctx.keys.losses} not checked: the loss at your ${and(names)} is ${num(L0)}, below every ` +
      `loss you recorded (the last ${num(ys.at(-1))}), so these are the weights after your ` +
      'training, not where it started (the layer saved after the loop). Save the initial ' +
      'weights too (np.savez(..., Wq_init=Wq0, ...)) and the run is checked from them.',
  );
  return true;
}

// What a differing losses row measures: its first differing step, and a factor when yours are
// k × the course's at every step ({ id, message, facts: the first step's text alone })
function lossesFacts(ctx, a, row) {
  const key = ctx.keys.losses;
  const f = row.first.index[0];
  const facts = firstStepText(key, a.data, row.expected, f);
  const k = f === 0 ? a.data[0] / row.expected[0] : NaN;
  const scaled = Number.isFinite(k) && k !== 0 ? a.data.map((x) => x / k) : null;
  if (scaled && agrees(scaled, row.expected, optsOf(a))) {
    const message = `${facts} Your ${key} are ${num(k)} × the course's at every step.`;
    return { id: 'factor', message, facts };
  }
  return { id: 'step-differs', message: facts, facts };
}

// losses that are the course's first n while the saved steps (not a schedule) says another
// count, neither steps nor steps + 1: the loop ran n steps (range(steps - 1) …): a row of the
// wrong length, named; else null
function ranOtherSteps(ctx, row, n) {
  const S = ctx.lr?.schedule ? null : ctx.steps;
  if (S == null || n === S || n === S + 1 || row.status !== 'match') return null;
  const key = ctx.keys.losses;
  const stepsKey = ctx.keys.steps;
  const ran = n === S - 1 ? ' (one step fewer)' : '';
  const message =
    `Your ${key} has ${n} entries, the course's first ${n} losses, while your ${stepsKey} is ${S}: ` +
    `your loop ran ${n} steps${ran}. The course's loop, for step in range(${stepsKey}), runs ` +
    `${S} and records the loss of each: ${key} has ${S} entries.`;
  const shape = uncomparedRow('losses', 'shape', { shape: [n], expectedShape: [S] });
  return { ...shape, diagnosis: { id: 'loop-steps', message } };
}

// ------------------------------------------------------------------------------------------------

// Every row, in order: losses, then Wq_after … Wo_after (the losses' row made last: it may use
// what the weights' rows found)
// The file's parameters besides the four weights its run trained: keys `<bias>_after` (b_q_after,
// q_proj.bias_after, Q_b_after …) and `<positional table>_after` (pe_after) whose numbers differ
// from the ones before (zeros when the file dropped them): their keys
const EXTRA_AFTER = new RegExp(`^(.*(?:bias|^b_?[qkvo]|_b)|pe|pos\\w*)_?(?:${AFTER})$`, 'i');
function trainedBiases(arrays) {
  return Object.keys(arrays).filter((key) => {
    const m = EXTRA_AFTER.exec(key);
    const after = m && toArray(arrays[key]);
    const rank = /bias|^b_?[qkvo]|_b$/i.test(m?.[1] ?? '') ? 1 : 2;
    if (!after || after.shape.length !== rank) return false;
    const before = toArray(arrays[m[1]]);
    return after.data.some((x, i) => x !== (before?.data[i] ?? 0));
  });
}

// A run that trains biases too: only the loss at the initial weights is the course's
function untrainedOnly(ctx) {
  const biases = trainedBiases(ctx.arrays);
  if (!biases.length) return;
  ctx.notes.push(
    `your ${and(biases)} ${biases.length > 1 ? 'show' : 'shows'} your run trains ` +
      `${biases.some((k) => /^(pe|pos)/i.test(k)) ? 'parameters' : 'biases'}, which ` +
      "lesson 5's layer does not have: only the loss at your initial weights is checked " +
      `(${ctx.keys.losses ?? 'losses'}[0]), not the steps after it or the weights after them`,
  );
  ctx.usedBiases = biases;
  ctx.steps = 1; // (the first loss alone: the run as far as the course's loop follows it)
  for (const w of WEIGHTS) delete ctx.keys[`${w}_after`];
  if (ctx.losses) {
    ctx.losses = { ...ctx.losses, data: ctx.losses.data.subarray(0, 1), shape: [1] };
  }
}

function trainingRows(ctx) {
  ctx.grad = lossAt(ctx.mha, ctx.inp, ctx.inp.W0, true);
  ctx.steps = readSteps(ctx);
  if (ctx.keys.losses) {
    const read = readLosses(ctx);
    ctx.losses = read.array ?? null;
    if (ctx.losses && ctx.inp.f32) ctx.losses = { ...ctx.losses, dtype: '<f4' };
    ctx.lossesRow = read.row ?? null;
  }
  untrainedOnly(ctx);
  ctx.lr = savedLr(ctx) ?? lrFromWeights(ctx) ?? lrFromLosses(ctx);
  const frozen = ctx.lr ? null : frozenRows(ctx);
  if (frozen) return frozen;
  const afters = WEIGHTS.filter((w) => ctx.keys[`${w}_after`]);
  const rows = afters.map((w) => afterRow(ctx, w));
  const unchecked = afters.filter((w, i) => rows[i] === null);
  if (unchecked.length) ctx.notes.push(noLrNote(ctx, unchecked));
  // the loss of a step is recorded before its update: losses first
  if (ctx.keys.losses) rows.unshift(lossesRow(ctx));
  return rows.filter(Boolean);
}

// No lr to be found because no step changed anything: every saved W_after equals its initial
// weight exactly and the losses (when saved) are one number at every step, while the course's
// gradients at the initial weights are not zero (any lr > 0 changes the weights). Proven without
// lr: the rows differ and the first names it (loop-not-updated); null when that is not so.
function frozenRows(ctx) {
  const afters = WEIGHTS.filter((w) => afterArray(ctx, w));
  const L = ctx.losses?.data;
  const constant = L && L.length >= 2 && L.every((x) => x === L[0]);
  if (!constant && afters.length < 2) return null;
  if (L && !constant) return null;
  const same = (w) => afterArray(ctx, w).data.every((x, i) => x === ctx.inp.W0[w][i]);
  if (!afters.every(same)) return null;
  const moved = afters.length ? afters : WEIGHTS;
  if (!moved.every((w) => dot(ctx.grad.g[w], ctx.grad.g[w]) > 0)) return null;
  const { name } = ctx.inp;
  const facts = [
    constant ? `your ${ctx.keys.losses} are ${num(L[0])} at every step` : null,
    afters.length
      ? `your ${and(afters.map((w) => ctx.keys[`${w}_after`]))} equal your ` +
        `${and(afters.map((w) => name[w]))}, every entry exactly`
      : null,
  ].filter(Boolean);
  const message =
    `${facts.join(' and ')}: no step changed the weights, though the course's step W = W - ` +
    'lr * dW changes them for any lr > 0 (the gradients at your initial weights are not ' +
    'zero). The update never reached the weights: W = W - lr * dW inside for W in params ' +
    'only rebinds the loop variable (write W -= lr * dW, or params[i] = …), or the step is ' +
    'left out.';
  const rows = [];
  const row = (rowName, shape) =>
    uncomparedRow(rowName, 'differs', { shape, expectedShape: shape, note: null });
  if (constant) rows.push(row('losses', ctx.losses.shape));
  for (const w of afters) rows.push(row(`${w}_after`, afterArray(ctx, w).shape));
  const [first, ...rest] = rows;
  first.diagnosis = {
    id: 'loop-not-updated',
    message: `${message[0].toUpperCase()}${message.slice(1)}`,
  };
  for (const r of rest) {
    r.diagnosis = { id: 'follows-from', message: `follows from ${first.name}: the same run.` };
  }
  return rows;
}

// Why the W_after are not checked when lr is neither saved nor found
function noLrNote(ctx, afters) {
  const list = afters.map((w) => ctx.keys[`${w}_after`]).join(', ');
  const same = afters.every((w) => {
    const a = afterArray(ctx, w);
    return a && agrees(a.data, ctx.inp.W0[w], optsOf(a));
  });
  const why = same
    ? `your ${list} ${afters.length > 1 ? 'equal your initial weights' : `equals your ${ctx.inp.name[afters[0]]}`}: no step changed them`
    : 'none of your weights after the step is finite and different from your initial one';
  return `${list} not checked: lr is not saved and cannot be found (${why}); ${SAVE_LR}.`;
}

/**
 * Check lesson 5's training step in a student's arrays: the weights after a step (Wq_after …
 * Wo_after; also *_new, *_next, *_updated) against W - lr * dW, and `losses` (also loss_history,
 * loss_curve, history) against the engine's run from the student's initial weights, lr (lr,
 * learning_rate, eta, alpha or the page's lrs; found from the arrays when not saved) and target.
 * arrays: { [fileName]: { data, shape, dtype?, resolution? } } as checkNotebook gets them;
 * options: { heads, causal = false }. Never throws for bad arrays: a row or a note says what is
 * wrong; without X or a usable weight (checkNotebook's own error) it returns no rows.
 * Returns { rows (compare.js's rows: name 'Wq_after' … 'losses', status, diagnosis { id, message }
 * or null, …), notes (sentences), used (the file keys it read), lr ({ value, source: 'saved' |
 * 'weights' | 'losses', lrs } or null) }.
 */
export function checkTraining(mha, arrays, { heads, causal = false } = {}) {
  const none = { rows: [], notes: [], used: [], lr: null };
  if (arrays == null || typeof arrays !== 'object') return none;
  const { keys, notes } = trainingKeys(arrays);
  if (!Object.keys(keys).length) return none;
  const inp = readInputs(arrays, heads, causal);
  if (!inp) return none;
  const used = Object.values(keys);
  const checked = Object.values(keys).filter((k) => /after|losses/.test(trainingName(k)));
  if (!checked.length) {
    notes.push(
      `${used.join(', ')} read, but there is nothing of the training step to check: save the weights after one step (Wq_after=…, Wk_after=…, Wv_after=…, Wo_after=…) or the losses.`,
    );
    return { rows: [], notes, used, lr: null };
  }
  const target = readTarget(inp);
  if (!target.data) {
    notes.push(`${checked.join(', ')} not checked: ${target.why}.`);
    return { rows: [], notes, used, lr: null };
  }
  inp.target = target.data;
  const ctx = { mha, arrays, keys, inp, notes, runs: new Map() };
  try {
    const rows = trainingRows(ctx);
    const lr = ctx.lr && { value: ctx.lr.value, source: ctx.lr.source, lrs: [...ctx.lr.lrs] };
    aliasedWeights(ctx, rows);
    const read = [...used, ...(ctx.usedBiases ?? [])];
    // (steps: the run as far as it is checked, when only its first loss is)
    // (f32: inputs in float32, whose precision every loss recorded from them has)
    const out = { rows, notes, used: read, lr, shown: shownLrs(ctx, rows) };
    if (ctx.inp.f32) out.f32 = true;
    return ctx.usedBiases ? { ...out, steps: ctx.steps } : out;
  } catch (e) {
    notes.push(`The training step could not be checked: the engine failed (${e.message}).`);
    return { rows: [], notes, used, lr: null };
  }
}
