// compute.js - the page's compute engine (DOM-free): gradient checks, training runs, forward
// passes and lesson 4's numbers (the computing of its view's build), run in a small pool of
// workers (each with its own instance of the same module) or, where workers cannot start, on the
// main thread in the Scheduler's slices. Same API, same bits (same module, same order of
// operations; tests/jobs/compute.test.mjs).
//
//   const compute = createCompute({ mha, scheduler, workers: 'auto', wasm });
//   compute.start();                          // the workers started now (else: at the first job)
//   const job = compute.gradcheck({ C, heads, W, X, opts, priority, group, onProgress });
//   compute.train({ C, heads, model: sentenceSpec(...), T, steps, lr, ... })  // a large model:
//                                             // drawn where the job runs, never copied over
//   compute.lesson4({ data: null })          // lesson 4's values (course demo's arrays: null)
//   job.promise.then(report => ..., err => err.cancelled || show(err));
//   compute.cancelGroup('playground');        // a settings change: the old jobs stop at once
//   job.sharedWith                            // a check with the inputs of an earlier one: its
//                                             // label (the report is that run's), else null;
//                                             // reuse: false runs it anyway (benchmarks)

import { epochNow, progressCount, startTask } from './tasks.js';
import { WorkerPool, blobSpawner } from './compute-pool.js';
import { blankRow, checkPlan, splitRows } from './gradcheck-rows.js';
import { checkChunk } from './gradcheck.js';
import { weightNames } from '../model/tensors.js';
import { COURSE } from '../model/defaults.js';

const MAX_WORKERS = 4;
const SPLIT_MIN_ENTRIES = 2000; // smaller checks run whole, on one worker
const CANCELS_KEPT = 50; // cancellation records kept for info()

/**
 * Workers for a `workers` setting: 0 (the main thread), a number, or 'auto': one per core but
 * one (the page's own thread), at least 1 and at most MAX_WORKERS.
 */
export function poolSize(workers, cores) {
  if (workers === 'auto' || workers === undefined) {
    const n = Number.isInteger(cores) && cores > 0 ? cores : 2;
    return Math.max(1, Math.min(n - 1, MAX_WORKERS));
  }
  const n = Number(workers);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 2 * MAX_WORKERS) : 0;
}

/** Time left from the rate so far: elapsed * (total - done) / done (null before any progress). */
export function etaMs(elapsedMs, done, total) {
  if (!(done > 0) || !Number.isFinite(total)) return null;
  return Math.max(0, (elapsedMs * (total - done)) / done);
}

/** Progress of a job: the value with etaMs (checks: entries; training runs: steps). */
function progress(job, value, elapsedMs) {
  if (job.settled || !job.onProgress) return;
  const done = value.step ?? value.done;
  const total = value.step === undefined ? value.total : job.args.steps;
  job.onProgress({ ...value, etaMs: etaMs(elapsedMs, done, total) });
}

function cancelledError(job) {
  const err = new Error(`${job.name || job.kind} cancelled`);
  err.cancelled = true;
  return err;
}

function errorOf(msg) {
  const err = new Error(msg.message);
  if (msg.losses) err.losses = msg.losses;
  if (msg.att) err.att = msg.att;
  return err;
}

/**
 * Entries per step of a check in a worker: four of the main thread's chunks (about one 2 ms slice
 * at course size; fewer steps cost less bookkeeping), as they are when one entry is already slow.
 */
function workerChunk({ C, opts = {} }) {
  const c = checkChunk(opts.B ?? 1, opts.T, C);
  return c < 8 ? c : Math.min(4 * c, 128);
}

/**
 * A sentence model to draw in the worker (sentenceSpec): its C and heads are the job's, its
 * tokens a list of 1 or more strings. The rest (seed, rng, pe, causal) sentenceModel checks.
 */
function checkModelSpec(fn, { C, heads, model }) {
  if (!model || typeof model !== 'object') throw new Error(`${fn}: model must be a sentenceSpec`);
  const { tokens } = model;
  if (!Array.isArray(tokens) || !tokens.length || tokens.some((t) => typeof t !== 'string')) {
    throw new Error(`${fn}: model.tokens must be a list of 1 or more strings`);
  }
  if (model.C !== C || model.heads !== heads) {
    throw new Error(
      `${fn}: model is C = ${model.C}, heads = ${model.heads}; the job says ${C} and ${heads}`,
    );
  }
}

/**
 * The layer a job runs on: C and heads as a layer takes them, and every weight (C, C), or a
 * sentence model (`model`) whose weights the engine draws itself.
 */
function checkLayerArgs(mha, kind, { C, heads, W, model }) {
  const fn = `compute.${kind}`;
  if (!Number.isInteger(C) || !Number.isInteger(heads) || C < 1 || heads < 1) {
    throw new Error(`${fn}: C and heads must be integers >= 1, got ${C} and ${heads}`);
  }
  if (C % heads !== 0) throw new Error(`${fn}: C (${C}) must be divisible by heads (${heads})`);
  if (model !== undefined) {
    checkModelSpec(fn, { C, heads, model });
    return;
  }
  for (const k of weightNames(mha)) {
    const w = W?.[k];
    if (!(ArrayBuffer.isView(w) || Array.isArray(w)) || w.length !== C * C) {
      throw new Error(`${fn}: W.${k} must hold C*C = ${C * C} numbers, got ${w?.length ?? w}`);
    }
  }
}

/** Lesson 4's arrays for compute.lesson4: null (the course demo's), or { X, W, dY, B, T, C }. */
function checkLessonData(mha, data) {
  if (data === null) return;
  const { X, W, dY, B, T, C } = data ?? {};
  const sizes = [B, T, C];
  if (!sizes.every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error(`compute.lesson4: B, T and C must be integers >= 1, got ${sizes.join(', ')}`);
  }
  for (const [name, a, n] of [
    ['X', X, B * T * C],
    ['dY', dY, B * T * C],
  ]) {
    if (!ArrayBuffer.isView(a) || a.length !== n) {
      throw new Error(`compute.lesson4: ${name} must hold B*T*C = ${n} numbers`);
    }
  }
  checkLayerArgs(mha, 'lesson4', { C, heads: data.heads ?? COURSE.heads, W });
}

// --------------------------------------------------------------------------------------------
// one run per check: a gradient check asked for again with the same inputs while it runs, or
// after it finished (small checks: the last few are remembered), gets that run's report instead
// of a run of its own. On the page, the playground's first full check is lesson 5's: the same
// sentence, weights and target. The callers' jobs subscribe to the run; the run is cancelled only
// when every subscriber has cancelled.

const SHARED_KEPT = 4; // finished checks remembered
const SHARED_MAX_NUMBERS = 1 << 19; // inputs over 4 MiB of doubles: never shared

/** Bit for bit the same numbers (Object.is per entry), or both absent. */
function sameNumbers(a, b) {
  if (a == null || b == null) return a == null && b == null;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/**
 * What decides a check's report, defaults filled in: { scalars (a string), arrays (a copy of
 * every input array, in a fixed order) }; null when the inputs are too large to share.
 */
function checkKey(mha, { C, heads, W, X, model, opts = {} }) {
  const mse = opts.loss === 'mse';
  if (model) {
    if (!mse || opts.target !== undefined) return null; // the model's own target only
    const spec = JSON.stringify([
      model,
      opts.B ?? 1,
      !!opts.causal,
      opts.eps ?? null,
      opts.stencil ?? 'five-point',
    ]);
    return { scalars: `model ${spec}/${opts.samples ?? 0}`, arrays: [] };
  }
  const aux = mse ? opts.target : opts.G;
  const seed = mse || opts.G !== undefined ? null : (opts.seed ?? 0);
  const eps = opts.eps ?? mha.constants.MHA_GRADCHECK_EPS;
  const stencil = opts.stencil ?? 'five-point';
  const scalars = JSON.stringify([
    C,
    heads,
    opts.B ?? 1,
    opts.T,
    !!opts.causal,
    mse,
    seed,
    eps,
    stencil,
  ]);
  const arrays = [...weightNames(mha).map((k) => W?.[k]), X, aux];
  const numbers = arrays.reduce((n, a) => n + (a?.length ?? 0), 0);
  const bad = arrays.some((a) => a != null && !ArrayBuffer.isView(a) && !Array.isArray(a));
  if (bad || numbers > SHARED_MAX_NUMBERS) return null;
  return {
    scalars: `${scalars}/${opts.samples ?? 0}`,
    arrays: arrays.map((a) => (a == null ? null : Float64Array.from(a))),
  };
}

function sameKey(a, b) {
  return a.scalars === b.scalars && a.arrays.every((x, i) => sameNumbers(x, b.arrays[i]));
}

/** The run's last progress to a subscriber (its own onProgress; etaMs already in). */
function tell(job, value) {
  if (!job.settled && value) job.onProgress?.(value);
}

// --------------------------------------------------------------------------------------------
// the engine: every job, run and record of it is held here, in private fields

class Compute {
  #mha;
  #scheduler;
  #pool = null;
  #startPool = null; // starts the pool: at the first job (or info()), not before
  #reason; // why the main thread, when no pool was started
  #live = new Set(); // jobs not settled yet
  #serial = 0;
  #cancellations = [];
  #idleWaiters = [];
  #runs = []; // shared checks: running, or finished and remembered
  #reused = 0;

  constructor({ mha, scheduler, workers = 'auto', wasm, source, spawner } = {}) {
    this.#mha = mha;
    this.#scheduler = scheduler;
    const cores = typeof navigator === 'object' ? navigator.hardwareConcurrency : undefined;
    const size = poolSize(workers, cores);
    const spawn = spawner ?? blobSpawner(source ?? globalThis.MHA_WORKER_SOURCE);
    if (size === 0) this.#reason = 'workers = 0';
    else if (!wasm) this.#reason = 'no module bytes to send (an unbundled page)';
    else if (!spawn) this.#reason = 'no worker script, or no Worker and Blob URLs in this browser';
    if (size > 0 && spawn && wasm) {
      const onBroken = (parts) => this.#rerouteToMain(parts);
      this.#startPool = () => new WorkerPool({ spawner: spawn, size, wasm, onBroken });
    }
  }

  /** Whether jobs go to the workers (the pool started the first time this is asked). */
  #workers() {
    if (this.#startPool) {
      this.#pool = this.#startPool();
      this.#startPool = null;
    }
    return !!this.#pool && !this.#pool.broken;
  }

  /** Start the workers now (each loads the module), not at the first job. */
  start() {
    this.#workers();
  }

  get kind() {
    return this.#workers() ? 'worker' : 'main-thread';
  }
  get size() {
    return this.#workers() ? this.#pool.size : 0;
  }

  gradcheck({ priority = 1, group, name, label, sliceMs, onProgress, reuse = true, ...args }) {
    const o = { priority, group, name, label, sliceMs, onProgress };
    return reuse ? this.#sharedGradcheck(args, o) : this.#submit('gradcheck', args, o);
  }
  train({ priority = 6, group, name, sliceMs, onStep, ...args }) {
    return this.#submit('train', args, { priority, group, name, sliceMs, onProgress: onStep });
  }
  forward({ priority = 8, group, name, ...args }) {
    return this.#submit('forward', args, { priority, group, name });
  }
  lesson4({ priority = 9, group, name, data = null }) {
    return this.#submit('lesson4', { data }, { priority, group, name });
  }
  cancelGroup(group) {
    for (const job of [...this.#live]) if (job.group === group) this.#cancelJob(job);
  }
  idle() {
    if (!this.#live.size) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
  terminate() {
    for (const job of [...this.#live]) this.#cancelJob(job);
    this.#startPool = null;
    this.#pool?.terminate();
  }
  /**
   * { kind, size, reason (why the main thread), cancelled: the last cancellations, reused: how
   * many checks got the report of an identical one instead of running }
   */
  info() {
    const on = this.#workers();
    const reason = on ? '' : this.#pool?.reason || this.#reason;
    const kind = on ? 'worker' : 'main-thread';
    const cancelled = [...this.#cancellations];
    return { kind, size: on ? this.#pool.size : 0, reason, cancelled, reused: this.#reused };
  }

  // ------------------------------------------------------------------------------------------
  // a job's life: submitted, then exactly one of done, failed or cancelled

  /** A job as the caller holds it: settled exactly once (done, failed or cancelled). */
  #newJob(kind, args, opts) {
    const job = {
      id: ++this.#serial,
      kind,
      args,
      name: opts.name ?? '',
      label: opts.label ?? '',
      group: opts.group ?? null,
      priority: opts.priority,
      sliceMs: opts.sliceMs,
      onProgress: opts.onProgress,
      settled: false,
      busyMs: 0,
      sharedWith: null,
      handle: null,
    };
    job.promise = new Promise((resolve, reject) => Object.assign(job, { resolve, reject }));
    job.promise.catch(() => {}); // a caller may drop a cancelled job's promise
    job.cancel = () => this.#cancelJob(job);
    this.#live.add(job);
    return job;
  }

  #submit(kind, args, opts) {
    const job = this.#newJob(kind, args, opts);
    try {
      if (kind === 'lesson4') checkLessonData(this.#mha, args.data);
      else checkLayerArgs(this.#mha, kind, args);
      if (this.#workers()) this.#runPool(job);
      else this.#runMain(job);
    } catch (err) {
      this.#settle(job, 'failed', err);
    }
    return job;
  }

  #settle(job, how, value) {
    if (job.settled) return false;
    job.settled = true;
    this.#live.delete(job);
    if (how === 'done') job.resolve(value);
    else job.reject(value);
    // after the callbacks' own follow-up jobs (a microtask later) have been submitted
    setTimeout(() => this.#checkIdle(), 0);
    return true;
  }

  #checkIdle() {
    if (this.#live.size) return;
    for (const f of this.#idleWaiters.splice(0)) f();
  }

  #cancelJob(job) {
    if (!this.#settle(job, 'cancelled', cancelledError(job))) return;
    job.handle?.cancel(epochNow());
  }

  #recordCancel(job, stats) {
    const group = job.ownerGroup ?? job.group; // a shared run: its first subscriber's group
    this.#cancellations.push({ id: job.id, name: job.name, group, kind: job.kind, ...stats });
    if (this.#cancellations.length > CANCELS_KEPT) this.#cancellations.shift();
  }

  // ------------------------------------------------------------------------------------------
  // the main thread: the job's task on the page's Scheduler

  #runMain(job) {
    let task = null;
    let t0 = 0;
    const sj = this.#scheduler.submit({
      name: job.name,
      priority: job.priority,
      sliceMs: job.sliceMs,
      start: () => {
        t0 = performance.now();
        task = startTask(this.#mha, job.kind, job.args);
        return task;
      },
      onProgress: (v) => progress(job, v, performance.now() - t0),
      onDone: () => {
        if (sj.last) progress(job, sj.last, performance.now() - t0); // the final count too
        job.busyMs = sj.busyMs;
        this.#settle(job, 'done', task.result());
      },
      onError: (err) => this.#settle(job, 'failed', err),
    });
    job.handle = {
      cancel: () => {
        sj.cancel(); // the Scheduler drops it at once: no further slice
        this.#recordCancel(job, {
          engine: 'main-thread',
          ...progressCount(sj.last),
          slicesAfterPost: 0,
          slicesAfterReceipt: 0,
          receiptMs: 0,
        });
      },
    };
  }

  // ------------------------------------------------------------------------------------------
  // the workers: a job as one part, or a gradient check as several (split by tensor)

  /** The parts of a job: [{ args, rows }]; a large check on several workers, split by tensor. */
  #partsOf(job) {
    if (job.kind !== 'gradcheck') return [{ args: job.args }];
    const whole = { args: { ...job.args, chunk: workerChunk(job.args) } };
    if (this.#pool.size < 2) return [whole];
    const { C, heads, opts = {} } = job.args;
    const plan = checkPlan(this.#mha, { B: opts.B, T: opts.T, C, heads }, opts.samples ?? 0);
    const total = plan.positions.reduce((a, b) => a + b, 0);
    if (total < SPLIT_MIN_ENTRIES) return [whole];
    job.plan = plan;
    return splitRows(plan.positions, this.#pool.size).map(({ rows, entries }) => ({
      rows,
      entries,
      args: { ...whole.args, rows },
    }));
  }

  /** The report of a split check: every row from its part's latest value, blank before. */
  #mergedReport(job, parts) {
    const rows = new Map();
    for (const p of parts) for (const [w, row] of p.value?.rows ?? []) rows.set(w, row);
    return job.plan.names.map((_, w) => rows.get(w) ?? blankRow(this.#mha, job.plan, w));
  }

  #partProgress(job, parts) {
    if (!job.plan) return parts[0].value;
    const done = parts.reduce((a, p) => a + (p.value?.done ?? 0), 0);
    const total = parts.reduce((a, p) => a + (p.value?.total ?? 0), 0);
    return { done, total, report: this.#mergedReport(job, parts) };
  }

  #runPool(job) {
    const parts = this.#partsOf(job).map((p) => ({
      ...p,
      id: 0,
      value: null,
      busy: 0,
      elapsed: 0,
    }));
    let left = parts.length;
    const handlers = (part) => ({
      progress: (msg) => {
        Object.assign(part, { value: msg.value, busy: msg.busyMs, elapsed: msg.elapsedMs });
        const elapsed = Math.max(...parts.map((p) => p.elapsed));
        progress(job, this.#partProgress(job, parts), elapsed);
      },
      done: (msg) => {
        const n = part.entries;
        part.value = job.plan ? { done: n, total: n, rows: msg.value } : msg.value;
        part.busy = msg.busyMs;
        job.busyMs = parts.reduce((a, p) => a + p.busy, 0);
        left -= 1;
        if (left === 0) {
          this.#settle(job, 'done', job.plan ? this.#mergedReport(job, parts) : msg.value);
        }
      },
      error: (msg) => {
        if (this.#settle(job, 'failed', errorOf(msg))) job.handle.cancel(epochNow());
      },
      cancelled: (msg) => {
        const { slices, done, total, slicesAfterPost, slicesAfterReceipt, receiptMs } = msg;
        const stats = { engine: 'worker', part: part.rows ?? null, slices, done, total };
        this.#recordCancel(job, stats);
        Object.assign(this.#cancellations.at(-1), {
          slicesAfterPost,
          slicesAfterReceipt,
          receiptMs,
        });
      },
    });
    for (const part of parts) {
      part.handlers = handlers(part);
      part.id = this.#pool.submit(
        { kind: job.kind, args: part.args, priority: job.priority },
        part.handlers,
      );
    }
    job.parts = parts;
    job.handle = { cancel: (sentAt) => parts.forEach((p) => this.#pool.cancel(p.id, sentAt)) };
  }

  /** The pool failed: its unfinished jobs start again on the main thread. */
  #rerouteToMain(parts) {
    const ids = new Set(parts.map((p) => p.id));
    const jobs = [...this.#live].filter((j) => j.parts?.some((x) => ids.has(x.id)));
    for (const job of jobs) {
      job.plan = null;
      job.parts = null;
      this.#runMain(job);
    }
  }

  // ------------------------------------------------------------------------------------------
  // shared checks: one run per check (see checkKey above)

  #forget(run) {
    const i = this.#runs.indexOf(run);
    if (i >= 0) this.#runs.splice(i, 1);
  }

  #finishRun(run, report) {
    run.report = report;
    run.busyMs = run.job.busyMs;
    if (run.subs.size && !run.subs.has(run.first)) {
      // the caller that started it left: the earliest one still there gets it as its own
      run.first = [...run.subs][0];
      run.first.sharedWith = null;
      const label = run.first.label || run.first.name;
      for (const job of run.subs) if (job !== run.first) job.sharedWith = label;
    }
    for (const job of run.subs) {
      tell(job, run.last);
      job.busyMs = job === run.first ? run.busyMs : 0;
      this.#settle(job, 'done', job === run.first ? report : structuredClone(report));
    }
    run.subs.clear();
    const kept = this.#runs.filter((r) => r.report);
    if (kept.length > SHARED_KEPT) this.#forget(kept[0]);
  }

  #failRun(run, err) {
    this.#forget(run);
    if (err.cancelled) return; // every subscriber had cancelled already
    for (const job of run.subs) this.#settle(job, 'failed', err);
    run.subs.clear();
  }

  #startRun(args, opts, key) {
    const run = { key, args, subs: new Set(), first: null, last: null, report: null, busyMs: 0 };
    const onProgress = (v) => {
      run.last = v;
      for (const job of run.subs) tell(job, v);
    };
    const o = { ...opts, group: null, onProgress };
    run.job = this.#submit('gradcheck', args, o);
    run.job.ownerGroup = opts.group ?? null;
    run.job.promise.then(
      (report) => this.#finishRun(run, report),
      (err) => this.#failRun(run, err),
    );
    this.#runs.push(run);
    return run;
  }

  /** A subscriber leaves; the run stops when none is left (and it has not finished). */
  #unsubscribe(run, job) {
    run.subs.delete(job);
    if (run.subs.size || run.report || run.job.settled) return;
    this.#forget(run);
    this.#cancelJob(run.job);
  }

  #sharedGradcheck(args, opts) {
    let key = null;
    try {
      checkLayerArgs(this.#mha, 'gradcheck', args);
      key = checkKey(this.#mha, args);
    } catch {
      key = null; // submit() says what is wrong
    }
    if (!key) return this.#submit('gradcheck', args, opts);
    const found = this.#runs.find((r) => sameKey(r.key, key));
    const run = found ?? this.#startRun(args, opts, key);
    const job = this.#newJob('gradcheck', args, opts);
    job.handle = { cancel: () => this.#unsubscribe(run, job) };
    if (found) {
      job.sharedWith = run.first?.label || run.first?.name || run.job.name;
      this.#reused += 1;
    } else {
      run.first = job;
    }
    if (run.report) {
      tell(job, run.last);
      this.#settle(job, 'done', structuredClone(run.report));
    } else {
      run.subs.add(job);
      tell(job, run.last);
    }
    return job;
  }
}

/**
 * The compute engine. mha: the page's module (the fallback runs on it); scheduler: the page's
 * Scheduler; workers: 'auto' | 0 | n; wasm: the module's bytes (sent to each worker); source:
 * the worker's script (default globalThis.MHA_WORKER_SOURCE, from the bundle); spawner: {
 * spawn(), dispose() } instead of Blob-URL workers (Node's worker_threads in the tests).
 * Without workers (workers = 0, no source, no Worker, or a worker that fails to start) it runs
 * everything on the main thread and says so in kind.
 */
export function createCompute(options) {
  return new Compute(options);
}
