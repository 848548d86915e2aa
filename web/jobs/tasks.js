// tasks.js - the compute engine's work as iterators (DOM-free): a gradient check (whole, exactly as
// layer.gradcheckSteps runs it, or some of its rows), a training run (Trainer, one step per
// iteration), a forward pass, and lesson 4's numbers (its view's computing). The worker
// (worker-main.js) and the main-thread fallback (compute.js, on the Scheduler) run these very
// iterators, so both give the same bits.
//
//   const task = startTask(mha, 'train', args);   // { iterator, cleanup, result() }
//   for (const progress of task.iterator) ...;     // one slice per next()
//   const value = task.result(); task.cleanup();

import { layerCheck, checkChunk } from './gradcheck.js';
import { checkRowsSteps } from './gradcheck-rows.js';
import { Trainer } from './trainer.js';
import { withLayer } from '../model/layers.js';
import { sentenceModel } from '../model/sentence-model.js';
import { lesson4Values } from '../model/lesson4.js';

/**
 * A gradient check of the layer { C, heads, W } at X with opts (as layer.gradcheckSteps takes
 * them). Whole: progress { done, total, report }, result the report. With `rows` (indices into
 * mha.checkNames): only those rows, progress { done, total, rows: [[w, row], ...] }, result the
 * rows. A slice is `chunk` entries (checkChunk's for the size unless given).
 */
function gradcheckTask(mha, { C, heads, W, X, opts = {}, rows, chunk }) {
  const c = chunk ?? checkChunk(opts.B ?? 1, opts.T, C);
  let last = null;
  const keep = (it) =>
    (function* () {
      for (const p of it) {
        last = p;
        yield p;
      }
    })();
  if (rows) {
    const it = checkRowsSteps(mha, { C, heads, W, X, opts, rows, chunk: c });
    return { iterator: keep(it), cleanup: () => it.return(), result: () => last.rows };
  }
  const { iterator, cleanup } = layerCheck(mha, { C, heads, W }, X, opts, c)();
  return { iterator: keep(iterator), cleanup, result: () => last.report };
}

/**
 * `steps` SGD steps at lr on the MSE loss from weights W (Trainer: zero_grad, backward, step,
 * forward). Progress { step, loss, losses (so far: losses[k] after k steps), att (after them) };
 * result { losses, W (after the steps), att and Y (after) }. A diverged run throws Trainer.step's
 * error, with the losses so far as err.losses and the attention after them as err.att.
 */
function trainTask(mha, { C, heads, W, X, target, B = 1, T, causal = false, steps, lr }) {
  const trainer = new Trainer(mha, { C, heads, W, X, target, B, T, causal });
  let out = null;
  let freed = false;
  const cleanup = () => {
    if (!freed) trainer.free();
    freed = true;
  };
  const iterator = (function* () {
    for (let k = 0; k < steps; k++) {
      try {
        trainer.step(lr);
      } catch (err) {
        err.losses = [...trainer.losses];
        err.att = trainer.att; // after the steps taken
        throw err;
      }
      yield { step: k + 1, loss: trainer.loss, losses: [...trainer.losses], att: trainer.att };
    }
    const weights = trainer.layer.weights;
    const after = {};
    for (const k of Object.keys(weights)) after[k] = weights[k].slice();
    out = { losses: [...trainer.losses], W: after, att: trainer.att, Y: trainer.Y };
  })();
  return { iterator, cleanup, result: () => out };
}

/**
 * One forward pass of the layer { C, heads, W } on X (B, T, C): result { Y, attention } and a
 * copy of every tensor named in `tensors` (e.g. ['scores']); with a target, loss: the MSE of Y
 * (mha.mseLoss). One slice.
 */
function forwardTask(mha, { C, heads, W, X, B = 1, T, causal = false, tensors = [], target }) {
  let out = null;
  const iterator = (function* () {
    out = withLayer(mha, C, heads, W, (layer) => {
      const r = layer.forward(X, { B, T, causal });
      for (const name of tensors) r[name] = layer.tensor(name).data;
      return r;
    });
    if (target) out.loss = mha.mseLoss(out.Y, target).loss;
    yield { done: 1, total: 1 };
  })();
  return { iterator, cleanup: () => {}, result: () => out };
}

/**
 * Lesson 4's numbers (model/lesson4.js lesson4Values) for its arrays `data`, or the course demo's
 * drawn here when data is null: result those values. One slice.
 */
function lesson4Task(mha, { data = null }) {
  let out = null;
  const iterator = (function* () {
    out = lesson4Values(mha, { data: data ?? undefined });
    yield { done: 1, total: 1 };
  })();
  return { iterator, cleanup: () => {}, result: () => out };
}

const TASKS = {
  gradcheck: gradcheckTask,
  train: trainTask,
  forward: forwardTask,
  lesson4: lesson4Task,
};

/**
 * A job's arrays: its own, or, given `model` (sentenceSpec's description), the sentence model's
 * X, W and target as sentenceModel draws them in this thread (the last two are kept), so the
 * weights of a large model never cross between threads. A check's MSE uses the model's target,
 * a forward pass gets the loss.
 */
function withArrays(mha, args) {
  if (!args.model) return args;
  const m = sentenceModel(mha, args.model);
  const out = { ...args, C: m.C, heads: m.heads, W: m.W, X: m.X, target: m.target, T: m.T };
  if (args.opts) out.opts = { ...args.opts, T: m.T, target: args.opts.target ?? m.target };
  return out;
}

/** The iterator of a job of `kind` ('gradcheck', 'train', 'forward', 'lesson4'): see above. */
export function startTask(mha, kind, args) {
  const task = TASKS[kind];
  if (!task) throw new Error(`compute: unknown job kind ${kind}`);
  return task(mha, withArrays(mha, args));
}

/** Milliseconds since the epoch, with the precision of performance.now(), in any thread. */
export function epochNow() {
  return performance.timeOrigin + performance.now();
}

/** { done, total } of a progress value: a check's entries, or a training run's steps so far. */
export function progressCount(value) {
  if (!value) return { done: 0, total: null };
  if (value.step !== undefined) return { done: value.step, total: null };
  return { done: value.done ?? 0, total: value.total ?? null };
}

/** The ArrayBuffers of the typed arrays in a result (at most two levels deep), for transfer. */
export function transferables(value) {
  const found = new Set();
  const visit = (v, depth) => {
    if (ArrayBuffer.isView(v)) found.add(v.buffer);
    else if (v && typeof v === 'object' && depth < 2) {
      for (const x of Object.values(v)) visit(x, depth + 1);
    }
  };
  visit(value, 0);
  return [...found];
}
