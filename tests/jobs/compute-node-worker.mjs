// compute-node-worker.mjs - the page's compute worker (web/jobs/worker-main.js) in Node: as a
// worker thread this file serves it over parentPort; imported on the main thread it gives
// nodeSpawner(), the spawner createCompute takes instead of the browser's Blob-URL workers.
// Used by tests/jobs/compute.test.mjs and tests/bench/bench.mjs. Not a test by itself.

import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { serveCompute } from '../../web/jobs/worker-main.js';

if (!isMainThread && parentPort) {
  serveCompute({
    post: (msg, transfer) => parentPort.postMessage(msg, transfer),
    listen: (f) => parentPort.on('message', f),
  });
}

/**
 * Worker threads running this file: { spawn(), dispose() } for createCompute({ spawner }).
 * spawned: every endpoint made, for tests that want to look at (or break) one.
 */
export function nodeSpawner({ script = new URL(import.meta.url) } = {}) {
  const spawned = [];
  return {
    spawned,
    spawn() {
      const w = new Worker(script);
      const endpoint = {
        worker: w,
        post: (msg, transfer) => w.postMessage(msg, transfer),
        listen(onMessage, onError) {
          w.on('message', onMessage);
          w.on('error', onError);
        },
        terminate: () => w.terminate(),
      };
      spawned.push(endpoint);
      return endpoint;
    },
    dispose() {},
  };
}
