// scheduler.js - long computations (gradient checks, training runs, drawing figures) in time
// slices that yield to the event loop between them, so rendering and input go on.

/** Yield to the event loop (MessageChannel where available: no 4 ms clamp of nested timeouts). */
export function yieldToEventLoop() {
  if (typeof MessageChannel === 'function') {
    return new Promise((resolve) => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => {
        ch.port1.close();
        resolve();
      };
      ch.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Resolves in a task after the next frame is painted (the frame's layout and paint done): a turn
 * for it; after 100 ms where no frame comes (a page in a background tab gets none).
 */
export function afterFrame() {
  if (typeof requestAnimationFrame !== 'function') return yieldToEventLoop();
  return Promise.race([
    new Promise((resolve) => requestAnimationFrame(() => yieldToEventLoop().then(resolve))),
    new Promise((resolve) => setTimeout(resolve, 100)),
  ]);
}

/**
 * Runs jobs in time slices of ~sliceMs, yielding to the event loop between slices. A job is an
 * iterator: `start()` returns { iterator, cleanup? }; each value it yields is a progress report;
 * the last one is passed to onDone. Higher priority first, then the order of submission;
 * job.busyMs adds up the time spent in the job's own slices. cancel() stops a job at once (its
 * cleanup runs: a gradient check's own layer is freed), so a check can restart cleanly.
 *
 *   const job = scheduler.submit({ start, priority, onProgress, onDone, onError });
 *   job.cancel();
 */
export class Scheduler {
  constructor({ sliceMs = 12 } = {}) {
    this.sliceMs = sliceMs;
    this.jobs = [];
    this.running = false;
    this.serial = 0;
    this.idleWaiters = [];
  }

  submit({ start, priority = 0, onProgress, onDone, onError, name = '', sliceMs }) {
    const job = {
      id: ++this.serial,
      name,
      priority,
      cancelled: false,
      finished: false,
      sliceMs: sliceMs ?? this.sliceMs,
      busyMs: 0,
      start,
      onProgress,
      onDone,
      onError,
      iterator: null,
      cleanup: null,
      last: undefined,
    };
    job.cancel = () => this.#end(job, true);
    this.jobs.push(job);
    this.#pump();
    return job;
  }

  /** Resolves when no job is left. */
  idle() {
    if (!this.jobs.length && !this.running) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  #end(job, cancelled) {
    if (job.finished) return;
    job.finished = true;
    job.cancelled = cancelled;
    this.jobs = this.jobs.filter((j) => j !== job);
    if (job.cleanup) {
      try {
        job.cleanup();
      } catch {
        /* already released */
      }
    }
    job.cleanup = null;
    job.iterator = null;
  }

  async #pump() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.jobs.length) {
        await yieldToEventLoop();
        const job = this.#next();
        if (job) this.#slice(job);
      }
    } finally {
      this.running = false;
      const w = this.idleWaiters.splice(0);
      for (const f of w) f();
    }
  }

  /** One slice of a job: steps until it is done, cancelled or out of time; then its callbacks. */
  #slice(job) {
    const t0 = Date.now();
    try {
      if (!job.iterator) {
        const s = job.start();
        job.iterator = s.iterator;
        job.cleanup = s.cleanup ?? null;
      }
      let r;
      do {
        r = job.iterator.next();
        if (!r.done) job.last = r.value;
      } while (!r.done && !job.finished && Date.now() - t0 < job.sliceMs);
      job.busyMs += Date.now() - t0; // time spent in this job's own slices
      if (job.finished) return; // cancelled from inside a callback
      if (r.done) {
        this.#end(job, false);
        job.onDone?.(job.last);
      } else {
        job.onProgress?.(job.last);
      }
    } catch (err) {
      this.#end(job, false);
      if (job.onError) job.onError(err);
      else console.error(err);
    }
  }

  #next() {
    let best = null;
    for (const j of this.jobs) if (!best || j.priority > best.priority) best = j;
    return best;
  }
}
