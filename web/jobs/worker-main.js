// worker-main.js - the compute worker (DOM-free): its own instance of the module, loaded from the
// bytes the page sends, running jobs (tasks.js) one slice at a time, highest priority first. A
// slice is one step of a job's iterator (a chunk of check entries, one training step, a forward
// pass), or several while they take under SLICE_MS. The worker yields to its event loop between
// slices, so a cancel message is seen before the next slice: a cancelled job runs no further one
// (its report, sent at the pump's next turn, counts the slices that started after it was read).
// `make bundle` builds this file into the string globalThis.MHA_WORKER_SOURCE, which the page
// starts as a Blob-URL worker (compute.js); Node runs it through node:worker_threads
// (tests/jobs/compute-node-worker.mjs).
//
// Messages in:  { type: 'init', wasm }              the module's bytes
//               { type: 'job', id, kind, args, priority }
//               { type: 'cancel', id, sentAt }      sentAt: epochNow() when the page sent it
// Messages out: { type: 'ready', version } | { type: 'failed', message }
//               { type: 'progress', id, value, busyMs, elapsedMs, slices }
//               { type: 'done', id, value, busyMs, slices }
//               { type: 'error', id, message, losses, att }
//               { type: 'cancelled', id, slices, done, total, slicesAfterPost,
//                 slicesAfterReceipt, receiptMs }

import { loadMHA } from '../mha.js';
import { epochNow, progressCount, startTask, transferables } from './tasks.js';

const SLICE_MS = 2; // a slice takes more steps while under this: fewer yields (each ~20-70 µs)
const PROGRESS_EVERY_MS = 30; // progress messages at most this often per job (and the first one)
const STARTS_KEPT = 8; // the start times of a job's last slices, for the cancel statistics

function finish(state, port, job) {
  remove(state, job);
  if (job.last && job.last !== job.posted) report(port, job, performance.now()); // the final count
  let value;
  try {
    value = job.task.result();
  } finally {
    job.task.cleanup();
  }
  const msg = { type: 'done', id: job.id, value, busyMs: job.busyMs, slices: job.slices };
  port.post(msg, transferables(value));
}

function fail(state, port, job, err) {
  remove(state, job);
  try {
    job.task?.cleanup();
  } catch {
    /* already released */
  }
  const message = err?.message ?? String(err);
  port.post({ type: 'error', id: job.id, message, losses: err?.losses, att: err?.att });
}

function report(port, job, now) {
  job.lastPost = now;
  job.posted = job.last;
  port.post({
    type: 'progress',
    id: job.id,
    value: job.last,
    busyMs: job.busyMs,
    elapsedMs: now - job.startedAt,
    slices: job.slices,
  });
}

/**
 * A promise that resolves after the event loop has handled the messages waiting (the page's
 * among them). Browsers: one MessageChannel, reused (no 4 ms clamp, no new channel per call).
 * Node: setImmediate (a reused channel there would be drained before the port to the page).
 */
function eventLoopYield() {
  if (typeof setImmediate === 'function') return () => new Promise((r) => setImmediate(r));
  if (typeof MessageChannel !== 'function') return () => new Promise((r) => setTimeout(r, 0));
  const channel = new MessageChannel();
  const waiting = [];
  channel.port1.onmessage = () => waiting.shift()?.();
  return () =>
    new Promise((resolve) => {
      waiting.push(resolve);
      channel.port2.postMessage(0);
    });
}

/** One slice of a job: steps of its iterator; then done, error or (now and then) progress. */
function slice(state, port, job) {
  const t0 = performance.now();
  job.starts.push(epochNow());
  if (job.starts.length > STARTS_KEPT) job.starts.shift();
  try {
    if (!job.task) {
      job.startedAt = t0;
      job.task = startTask(state.mha, job.kind, job.args);
    }
    let r;
    do {
      r = job.task.iterator.next();
      if (!r.done) job.last = r.value;
    } while (!r.done && performance.now() - t0 < SLICE_MS);
    job.slices += 1;
    job.busyMs += performance.now() - t0;
    if (r.done) {
      finish(state, port, job);
      return;
    }
    const now = performance.now();
    if (job.slices === 1 || now - job.lastPost >= PROGRESS_EVERY_MS) report(port, job, now);
  } catch (err) {
    fail(state, port, job, err);
  }
}

function remove(state, job) {
  state.jobs = state.jobs.filter((j) => j !== job);
}

/** The next job: the highest priority, then the earliest submitted; a cancelled one never. */
function next(jobs) {
  let best = null;
  for (const j of jobs) if (!j.cancelledAt && (!best || j.priority > best.priority)) best = j;
  return best;
}

async function pump(state, port) {
  if (state.pumping) return;
  state.pumping = true;
  try {
    await state.loading;
    while (state.jobs.length) {
      await state.yield(); // messages (cancel, new jobs) are handled here
      for (const j of state.jobs.filter((x) => x.cancelledAt)) dropCancelled(state, port, j);
      const job = next(state.jobs);
      if (!job) continue;
      if (state.mha) slice(state, port, job);
      else fail(state, port, job, new Error('the compute worker could not load the module'));
    }
  } finally {
    state.pumping = false;
  }
}

/**
 * Stop a job: marked when the cancel is read, so that it runs no further slice (next skips it);
 * dropped, and reported, at the pump's next turn.
 */
function cancel(state, { id, sentAt }) {
  const job = state.jobs.find((j) => j.id === id);
  if (job && !job.cancelledAt) Object.assign(job, { cancelledAt: epochNow(), sentAt });
}

/**
 * A cancelled job's end: its memory freed and its report: how far it got, how many of its slices
 * started after the page sent the cancel (slicesAfterPost: 0, or more when the message took
 * longer than a slice to arrive) and after the worker read it (slicesAfterReceipt: 0), and how
 * long the message took (receiptMs).
 */
function dropCancelled(state, port, job) {
  remove(state, job);
  try {
    job.task?.cleanup();
  } catch {
    /* already released */
  }
  const { done, total } = progressCount(job.last);
  const { id, sentAt, cancelledAt, starts } = job;
  port.post({
    type: 'cancelled',
    id,
    slices: job.slices,
    done,
    total,
    slicesAfterPost: sentAt ? starts.filter((t) => t > sentAt).length : null,
    slicesAfterReceipt: starts.filter((t) => t > cancelledAt).length,
    receiptMs: sentAt ? cancelledAt - sentAt : null,
  });
}

function receive(state, port, msg) {
  if (msg.type === 'init') {
    state.loading = loadMHA(msg.wasm).then(
      (mha) => {
        state.mha = mha;
        port.post({ type: 'ready', version: mha.version });
      },
      (err) => port.post({ type: 'failed', message: err.message }),
    );
  } else if (msg.type === 'job') {
    const { id, kind, args, priority = 0 } = msg;
    state.jobs.push({ id, kind, args, priority, task: null, last: null, starts: [] });
    Object.assign(state.jobs.at(-1), { slices: 0, busyMs: 0, startedAt: 0, lastPost: 0 });
    Object.assign(state.jobs.at(-1), { cancelledAt: 0, sentAt: 0 });
    pump(state, port);
  } else if (msg.type === 'cancel') {
    cancel(state, msg);
  }
}

/**
 * Serve the page over a message port: port.post(message, transfer) sends, port.listen(f) calls
 * f(message) for every message received.
 */
export function serveCompute(port) {
  const state = { mha: null, loading: null, jobs: [], pumping: false, yield: eventLoopYield() };
  port.listen((msg) => receive(state, port, msg));
  return state;
}

// In a browser's dedicated worker (the bundle's worker source), serve the page at once.
const scope = globalThis.WorkerGlobalScope;
if (typeof scope === 'function' && globalThis instanceof scope) {
  serveCompute({
    post: (msg, transfer) => globalThis.postMessage(msg, transfer ?? []),
    listen: (f) => globalThis.addEventListener('message', (e) => f(e.data)),
  });
}
