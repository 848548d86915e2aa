// compute-pool.js - the compute workers (DOM-free): `size` workers, each running worker-main.js
// with its own instance of the module, fed with parts of jobs (a whole job, or some rows of a
// gradient check). The pool knows nothing of what a part computes: it picks the least loaded
// worker, passes messages on, and reports when a worker cannot start or dies (then every part
// it still holds is handed back, to run on the main thread instead).

const READY_MS = 15000; // a worker that has not loaded the module by then counts as failed

/**
 * A worker started from a Blob URL of `source` (the bundle's worker script): { spawn(),
 * dispose() }, or null where this browser has no Worker or Blob URLs.
 */
export function blobSpawner(source) {
  if (!source || typeof Worker !== 'function' || typeof Blob !== 'function') return null;
  if (typeof URL?.createObjectURL !== 'function') return null;
  let url = null;
  return {
    spawn() {
      url ??= URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
      const w = new Worker(url);
      return {
        post: (msg, transfer) => w.postMessage(msg, transfer ?? []),
        listen(onMessage, onError) {
          w.addEventListener('message', (e) => onMessage(e.data));
          w.addEventListener('error', (e) => {
            e.preventDefault(); // reported through onError, not as an uncaught error
            onError(new Error(e.message || 'the compute worker could not start'));
          });
          w.addEventListener('messageerror', () => onError(new Error('unreadable message')));
        },
        terminate: () => w.terminate(),
      };
    },
    dispose() {
      if (url) URL.revokeObjectURL(url);
      url = null;
    },
  };
}

/**
 * The pool. spawner: { spawn() -> { post(msg, transfer), listen(onMessage, onError),
 * terminate() }, dispose() }; wasm: the module's bytes, sent to each worker; onBroken(parts,
 * reason): a worker failed, the pool is closed and these parts (their handlers) did not finish.
 *
 *   const id = pool.submit({ kind, args, priority }, { progress, done, error, cancelled });
 *   pool.cancel(id, sentAt);
 */
export class WorkerPool {
  #spawner;
  #workers = [];
  #parts = new Map(); // id -> { id, worker, handlers, cancelled }
  #serial = 0;
  #timer = null;
  #onBroken;
  broken = false;
  reason = '';

  constructor({ spawner, size, wasm, onBroken }) {
    this.#spawner = spawner;
    this.#onBroken = onBroken;
    try {
      for (let i = 0; i < size; i++) this.#start(wasm);
    } catch (err) {
      this.#break(`the compute worker could not start: ${err.message}`);
      return;
    }
    this.#timer = setTimeout(() => this.#break('the compute worker did not start'), READY_MS);
  }

  #start(wasm) {
    const endpoint = this.#spawner.spawn();
    const worker = { endpoint, ready: false, load: 0 };
    this.#workers.push(worker);
    endpoint.listen(
      (msg) => this.#receive(worker, msg),
      (err) => this.#break(`the compute worker failed: ${err.message}`),
    );
    endpoint.post({ type: 'init', wasm });
  }

  get size() {
    return this.#workers.length;
  }

  #receive(worker, msg) {
    if (msg.type === 'ready') {
      worker.ready = true;
      if (this.#workers.every((w) => w.ready)) {
        clearTimeout(this.#timer);
        this.#spawner.dispose?.();
      }
      return;
    }
    if (msg.type === 'failed') {
      this.#break(`the compute worker could not load the module: ${msg.message}`);
      return;
    }
    const part = this.#parts.get(msg.id);
    if (!part) return;
    if (msg.type !== 'progress') {
      this.#parts.delete(msg.id);
      worker.load -= 1;
    }
    const handler = part.handlers[msg.type];
    if (msg.type === 'cancelled' || !part.cancelled) handler?.(msg);
  }

  /** Run a part on the least loaded worker; returns its id (for cancel). */
  submit({ kind, args, priority = 0 }, handlers) {
    if (this.broken) throw new Error('the compute workers are closed');
    const worker = this.#workers.reduce((best, w) => (w.load < best.load ? w : best));
    const id = ++this.#serial;
    this.#parts.set(id, { id, worker, handlers, cancelled: false });
    worker.load += 1;
    worker.endpoint.post({ type: 'job', id, kind, args, priority });
    return id;
  }

  /** Stop a part: its worker drops it before its next slice; no handler but `cancelled` runs. */
  cancel(id, sentAt) {
    const part = this.#parts.get(id);
    if (!part || part.cancelled) return;
    part.cancelled = true;
    part.worker.endpoint.post({ type: 'cancel', id, sentAt });
  }

  #break(reason) {
    if (this.broken) return;
    this.broken = true;
    this.reason = reason;
    clearTimeout(this.#timer);
    this.terminate();
    const parts = [...this.#parts.values()].filter((p) => !p.cancelled);
    this.#parts.clear();
    this.#onBroken?.(parts, reason);
  }

  terminate() {
    this.broken = true;
    clearTimeout(this.#timer);
    for (const w of this.#workers) w.endpoint.terminate();
    this.#spawner.dispose?.();
  }
}
