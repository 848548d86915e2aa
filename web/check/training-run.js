// training-run.js - lesson 5 driven by a student's own run (issue 19, item 2): the learning rate
// and the number of steps of the run a notebook saved, read when saved (lr, steps, the page's
// lrs), else found from the run's `losses` (the loss before each step) and/or the weights after
// it (Wq_after …), else the page's; and the student's losses, to show beside the page's.
//
//   const run = studentRun(mha, arrays, model, { maxLr: 10, maxSteps: 100, lr: 0.1, steps: 10 });
//   run.lrs        // the learning rate of each of the run's steps (length run.steps)
//   run.lrText     // "lr 0.05 found from your losses"
//
// DOM-free. Every number found is proven by a replay in the engine (web/mha.js): the lr found from
// the losses takes the initial loss to losses[1]; the lr and steps found from Wq_after give the
// weights after the run within compare.js's tolerance. Reuses training.js's readers and fits.

import { agrees } from './compare.js';
import { dot } from './ops.js';
import { shapeText } from './names.js';
import { WEIGHTS, engineRun, fitLr, lossAt, stepped, toArray, trainingKeys } from './training.js';

const num = (x) => String(Number(Number(x).toPrecision(6)));
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

// "0.1", "an array of shape (2,)", "not an array": what a saved scalar holds, for a sentence
function describe(a) {
  if (!a) return 'not an array';
  return a.data.length === 1 ? String(a.data[0]) : `an array of shape ${shapeText(a.shape)}`;
}

// The saved lr (or the page's lrs) if usable: { lrs, from: 'file' } or null (a message says why)
function savedLr(ctx) {
  const { keys, arrays, messages, limits } = ctx;
  if (keys.lr) {
    const a = toArray(arrays[keys.lr]);
    const v = a && a.data.length === 1 ? a.data[0] : NaN;
    if (v > 0 && v <= limits.maxLr) return { lrs: [v], from: 'file', key: keys.lr };
    const why = v > limits.maxLr ? `over the page's limit, ${limits.maxLr}` : 'not a learning rate';
    messages.push(
      `Your ${keys.lr} is ${describe(a)}: ${why} (one number greater than 0 and at most ${limits.maxLr}), so it is not used.`,
    );
  }
  if (keys.lrs) {
    const a = toArray(arrays[keys.lrs]);
    const ok = (x) => x > 0 && x <= limits.maxLr;
    if (a && a.shape.length === 1 && a.data.length >= 1 && a.data.every(ok)) {
      return { lrs: [...a.data], from: 'file', key: keys.lrs, schedule: true };
    }
    messages.push(
      `Your ${keys.lrs} is ${describe(a)}: expected a 1-D array of learning rates, each greater than 0 and at most ${limits.maxLr}, so it is not used.`,
    );
  }
  return null;
}

// The saved steps if a whole number from 1 to the limit (over it: the limit), else null
function savedSteps(ctx) {
  const { keys, arrays, messages, limits } = ctx;
  if (!keys.steps) return null;
  const a = toArray(arrays[keys.steps]);
  const v = a && a.data.length === 1 ? a.data[0] : NaN;
  if (!Number.isInteger(v) || v < 1) {
    messages.push(
      `Your ${keys.steps} is ${describe(a)}: the number of steps is a whole number of at least 1, so it is not used.`,
    );
    return null;
  }
  if (v > limits.maxSteps) {
    messages.push(
      `Your ${keys.steps} is ${v}: lesson 5 runs at most ${limits.maxSteps} steps (the page's limit), so it runs your first ${limits.maxSteps}.`,
    );
    return { S: limits.maxSteps, full: v };
  }
  return { S: v, full: v };
}

// The saved losses as a 1-D array of finite numbers, or null (a message says why)
function savedLosses(ctx) {
  const { keys, arrays, messages } = ctx;
  if (!keys.losses) return null;
  const a = toArray(arrays[keys.losses]);
  if (a && a.shape.length === 1 && a.data.length >= 1 && a.data.every(Number.isFinite)) {
    return a.data;
  }
  const what = a ? `${describe(a)}${a.data.every(Number.isFinite) ? '' : ' with NaN or ∞'}` : '';
  messages.push(
    `Your ${keys.losses} is ${what || 'not an array'}: expected a 1-D array of finite losses, one per step (losses = np.array(losses)), so it is not used.`,
  );
  return null;
}

// The weights after the run the file has, each (C, C) and finite: [{ w, key, a }]
function savedAfters(ctx) {
  const { C } = ctx.inp.s;
  const out = [];
  for (const w of WEIGHTS) {
    const key = ctx.keys[`${w}_after`];
    if (!key) continue;
    const a = toArray(ctx.arrays[key]);
    const ok = a && a.data.length === C * C && a.data.every(Number.isFinite);
    if (ok) out.push({ w, key, a });
    else {
      ctx.messages.push(
        `Your ${key} is ${describe(a)}: expected the (${C}, ${C}) weights after the run, all finite, so it is not used.`,
      );
    }
  }
  return out;
}

// Whether every W_after equals the weights after S steps at the learning rates lrs
function aftersMatch(ctx, afters, lrs, S) {
  const { weights } = engineRun(ctx, lrs, S);
  return afters.every(({ w, a }) => agrees(a.data, weights[w], { dtype: a.dtype }));
}

// h(lr) = Σ <W_S(lr) - A, A - W0>: zero at the lr whose S steps give the W_after A
function afterResidual(ctx, afters, S) {
  return (lr) => {
    const { weights } = engineRun(ctx, [lr], S);
    return afters.reduce((sum, { w, a }) => {
      const W0 = ctx.inp.W0[w];
      return sum + dot(stepped(weights[w], a.data, 1), stepped(a.data, W0, 1));
    }, 0);
  };
}

/**
 * The lr whose S steps from the initial weights give the W_after: for one step exactly, lr =
 * <W0 - A, dW> / <dW, dW>; for several, the root of afterResidual by secant steps from S
 * constant-gradient steps. null when none reproduces them.
 */
function lrFromAfters(ctx, afters, S) {
  const { g } = ctx.grad;
  const gg = afters.reduce((s, { w }) => s + dot(g[w], g[w]), 0);
  const moved = afters.reduce((s, { w, a }) => s + dot(stepped(ctx.inp.W0[w], a.data, 1), g[w]), 0);
  let b = moved / (S * gg);
  if (!(b > 0) || !Number.isFinite(b)) return null;
  if (S > 1) {
    const h = afterResidual(ctx, afters, S);
    let a = b * 0.99;
    let [fa, fb] = [h(a), h(b)];
    for (let i = 0; i < 60 && fb !== 0 && fb !== fa && Math.abs(b - a) > 1e-16 * b; i++) {
      const c = b - (fb * (b - a)) / (fb - fa);
      if (!(c > 0) || !Number.isFinite(c)) return null;
      [a, fa, b, fb] = [b, fb, c, h(c)];
    }
  }
  return aftersMatch(ctx, afters, [b], S) ? b : null;
}

// The steps losses of length n stand for: n (the loss before each step, as the course's loop
// appends it) or n - 1 (the loss after the last step appended), told apart by the W_after when
// the file has them: { S, final (the last loss is the one after the last step) }
function stepsFromLosses(ctx, n, lrs, afters) {
  if (!lrs || !afters.length || n < 2 || aftersMatch(ctx, afters, lrs, n)) {
    return { S: n, final: false };
  }
  if (aftersMatch(ctx, afters, lrs, n - 1)) return { S: n - 1, final: true };
  return { S: n, final: false };
}

// The lr whose first step takes the loss at the initial weights to losses[1], when losses[0] is
// that loss: { lrs, from: 'losses' } or null (a message says why)
function lossesLr(ctx, losses) {
  const key = ctx.keys.losses;
  const L0 = ctx.grad.loss;
  if (Math.abs(losses[0] - L0) > 1e-8 * Math.abs(L0)) {
    ctx.messages.push(
      `Your ${key}[0] is ${losses[0]}, but the loss at your initial weights is ${L0}: your ${key} are not a run from these arrays, so no learning rate is found from them.`,
    );
    return null;
  }
  const lr = fitLr(ctx, losses[1]);
  if (lr !== null && lr > 0 && lr <= ctx.limits.maxLr) return { lrs: [lr], from: 'losses', key };
  const got = lr === null ? 'none' : `lr = ${num(lr)}`;
  ctx.messages.push(
    `No learning rate from 0 to ${ctx.limits.maxLr} takes the loss at your initial weights to your ${key}[1] (found: ${got}), so none is found from your ${key}.`,
  );
  return null;
}

// The steps of the run: saved, len(lrs), from the losses, else null; clamped to the limit
function runSteps(ctx, found) {
  const { saved, lr, losses, afters } = found;
  const max = ctx.limits.maxSteps;
  if (saved) return { S: saved.S, full: saved.full, from: 'file' };
  if (lr?.schedule) return { S: Math.min(lr.lrs.length, max), from: 'file' };
  if (!losses) return null;
  const { S, final } = stepsFromLosses(ctx, losses.length, lr?.lrs ?? null, afters);
  if (S <= max) return { S, from: final ? 'losses+after' : 'losses' };
  ctx.messages.push(
    `Your ${ctx.keys.losses} have ${losses.length} entries: lesson 5 runs at most ${max} steps (the page's limit), so it runs your first ${max}.`,
  );
  return { S: max, from: 'losses' };
}

// Checks of what the run found against the rest of the file: losses' length, the W_after
function crossChecks(ctx, found, run) {
  const { saved, losses, afters, lr } = found;
  const key = ctx.keys.losses;
  if (saved && losses && losses.length !== saved.full && losses.length !== saved.full + 1) {
    ctx.messages.push(
      `Your ${key} have ${losses.length} entries, but your ${ctx.keys.steps} is ${saved.full}: expected ${saved.full} (the loss before each step) or ${saved.full + 1} (and the loss after the last step). They are shown beside the page's for the steps both have.`,
    );
  }
  // (the W_after of a run longer than the page's limit are after steps the page does not take;
  // no lr found at all: afterNote said already that no lr gives them)
  if (!afters.length || !lr || lr.from === 'weights' || (saved && saved.full > run.S)) return;
  if (aftersMatch(ctx, afters, run.lrs, run.S)) return;
  const names = afters.map((x) => x.key).join(', ');
  ctx.messages.push(
    `Your ${names} ${afters.length > 1 ? 'are' : 'is'} not the weights after ${plural(run.S, 'step', 'steps')} at lr ${num(run.lrs[0])} from your initial weights: your file's run is not the one lesson 5 replays (another lr or number of steps, or weights saved at another point).`,
  );
}

// "lr 0.05 from your file", "lr 0.05 found from your losses", "lr 0.1, the page's: …"
function lrText(ctx, lr, page) {
  const v = num(lr.lrs[0]);
  if (lr.from === 'file' && lr.schedule) {
    return `lr ${v} … ${num(lr.lrs.at(-1))} from your file (your ${lr.key}: one per step)`;
  }
  if (lr.from === 'file') return `lr ${v} from your file${lr.key === 'lr' ? '' : ` (${lr.key})`}`;
  if (lr.from !== 'page') return `lr ${v} found from your ${lr.key}`;
  const any =
    ctx.keys.lr || ctx.keys.lrs || ctx.keys.losses || WEIGHTS.some((w) => ctx.keys[`${w}_after`]);
  return any
    ? `lr ${num(page)}, the page's: no learning rate could be read or found in your file (see below)`
    : `lr ${num(page)}, the page's: your file has no lr, losses or Wq_after`;
}

// "10 steps from your file", "25 steps from your losses (…)", "10 steps, the page's: …"
function stepsText(ctx, { S, from }, afterKey) {
  const n = plural(S, 'step', 'steps');
  const key = ctx.keys.losses;
  if (from === 'file') return `${n} from your file`;
  if (from === 'losses') {
    return `${n} from your ${key} (one loss before each step, as the course's loop appends them)`;
  }
  if (from === 'losses+after') {
    return `${n} from your ${key} and ${afterKey} (your last loss is the one after the last step)`;
  }
  if (from === 'weights') return `${n}, as your ${afterKey} shows`;
  return `${n}, the page's: your file has no steps or losses`;
}

// The lr found from the W_after (found.lr, when one reproduces them) after the run's steps (or
// one step when the file does not say): the steps, { S: 1, from: 'weights' } when they were one
function weightsLr(ctx, found, steps) {
  const S = steps?.full ?? steps?.S ?? 1;
  const v = lrFromAfters(ctx, found.afters, S);
  if (v === null) {
    ctx.messages.push(afterNote(found.afters, S));
    return steps;
  }
  found.lr = { lrs: [v], from: 'weights', key: found.afters[0].key };
  return steps ?? { S: 1, from: 'weights' };
}

// The run: { lrs (one per step), lr, steps, lrFrom, stepsFrom, lrText, stepsText, yours }
function findRun(ctx) {
  const page = ctx.limits;
  const found = {
    saved: savedSteps(ctx),
    losses: savedLosses(ctx),
    afters: savedAfters(ctx),
  };
  found.lr = savedLr(ctx);
  ctx.grad = lossAt(ctx.mha, ctx.inp, ctx.inp.W0, true);
  if (!found.lr && found.losses?.length >= 2) found.lr = lossesLr(ctx, found.losses);
  let steps = runSteps(ctx, found);
  if (!found.lr && found.afters.length) steps = weightsLr(ctx, found, steps);
  const lr = found.lr ?? { lrs: [page.lr], from: 'page' };
  steps ??= { S: page.steps, from: 'page' };
  const lrs = Array.from({ length: steps.S }, (_, k) => lr.lrs[Math.min(k, lr.lrs.length - 1)]);
  const run = { S: steps.S, lrs };
  crossChecks(ctx, found, run);
  return {
    lrs,
    lr: lrs[0],
    steps: steps.S,
    lrFrom: lr.from,
    stepsFrom: steps.from,
    lrText: lrText(ctx, lr, page.lr),
    stepsText: stepsText(ctx, steps, found.afters[0]?.key),
    yours: found.losses ? { key: ctx.keys.losses, losses: [...found.losses] } : null,
  };
}

// Why no lr is found from the W_after
function afterNote(afters, S) {
  const names = afters.map((x) => x.key).join(', ');
  return `No learning rate makes ${plural(S, 'step', 'steps')} of W -= lr * dW from your initial weights give your ${names}, so none is found from ${afters.length > 1 ? 'them' : 'it'}.`;
}

/**
 * Lesson 5's run from a student's file: the learning rate and the number of steps of the run it
 * saved (lr, learning_rate, eta, alpha, the page's lrs, steps, n_steps, num_steps: see
 * training.js's names), else found from its losses (the loss before each step; losses[0] must be
 * the loss at the initial weights, and the lr is the one whose first step gives losses[1]) and/or
 * its Wq_after … (the weights after the run: lr fitted so that the run reproduces them), else the
 * page's. arrays: { [fileName]: { data, shape, dtype } }; model: { C, heads, T, X (T·C), W,
 * target (T·C), causal }; limits: { maxLr, maxSteps, lr, steps } (lr, steps: the page's). Never
 * throws for bad arrays. Returns { lrs (each step's, length steps), lr, steps, lrFrom ('file' |
 * 'losses' | 'weights' | 'page'), stepsFrom ('file' | 'losses' | 'losses+after' | 'weights' |
 * 'page'), lrText ("lr 0.05 from your file"), stepsText, yours: { key, losses } | null, messages
 * (what was not used, and why), notes (names read as another) }.
 */
export function studentRun(mha, arrays, model, limits) {
  const { keys, notes } = trainingKeys(arrays ?? {});
  const { T, C, heads, causal = false } = model;
  const inp = {
    s: { B: 1, T, C, heads, causal, n: T * C },
    X: model.X,
    target: model.target,
    W0: model.W,
  };
  const ctx = { mha, arrays: arrays ?? {}, keys, inp, limits, runs: new Map(), messages: [] };
  try {
    return { ...findRun(ctx), messages: ctx.messages, notes };
  } catch (e) {
    ctx.messages.push(`Your run could not be read: the engine failed (${e.message}).`);
    const lrs = Array.from({ length: limits.steps }, () => limits.lr);
    const page = { lrs, lr: limits.lr, steps: limits.steps, lrFrom: 'page', stepsFrom: 'page' };
    const lr = `lr ${num(limits.lr)}, the page's`;
    const steps = `${plural(limits.steps, 'step', 'steps')}, the page's`;
    return { ...page, lrText: lr, stepsText: steps, yours: null, messages: ctx.messages, notes };
  }
}
