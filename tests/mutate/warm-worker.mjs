// A warm worker of tests/mutate/node-test-runner.mjs: `node warm-worker.mjs FILE` (with an IPC
// channel) imports one test file once, with no mutant switched on, and then runs the top-level
// tests it is asked for, each request with its own mutant, until it is told to stop or killed.
// Only mutants that the file's module-level code does not reach ("runtime" mutants) come here:
// the others need a fresh process (the runner's cold path).
//
// Messages: from the worker { ready: true, names } or { ready: false, reason } once, then per
// request { failed: [names], message, hitLimit } ; to the worker { mutant, names, hitLimit }.

import { register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const HIT_LIMIT_MESSAGE = 'Stryker: Hit count limit reached';
const ns = (globalThis.__stryker__ ??= {});
// the tests' own output is not read (their pipes are closed): keep it from piling up
for (const k of ['log', 'info', 'warn', 'error', 'debug']) console[k] = () => {};

register('./warm-loader.mjs', import.meta.url);
const shim = await import('./warm-test-shim.mjs');

async function load(file) {
  await import(pathToFileURL(resolve(file)).href);
  for (const fn of shim.registered.before) await fn();
  return shim.registered.unsupported;
}

async function runRequest({ mutant, names, hitLimit }) {
  const wanted = new Set(names);
  ns.activeMutant = mutant;
  ns.hitLimit = hitLimit;
  ns.hitCount = hitLimit === undefined ? undefined : 0;
  try {
    for (const t of shim.registered.tests) {
      if (!wanted.has(t.name)) continue;
      try {
        await shim.runTest(t);
      } catch (e) {
        const message = String(e?.stack ?? e).slice(0, 1500);
        return { failed: [t.name], message, hitLimit: message.includes(HIT_LIMIT_MESSAGE) };
      }
    }
    return { failed: [], message: '', hitLimit: false };
  } finally {
    ns.activeMutant = undefined;
    ns.hitLimit = undefined;
    ns.hitCount = undefined;
  }
}

let unfit;
try {
  unfit = await load(process.argv[2]);
} catch (e) {
  unfit = `import failed: ${String(e?.stack ?? e).slice(0, 500)}`;
}
if (unfit) {
  process.send({ ready: false, reason: unfit }, () => process.exit(0));
} else {
  process.on('message', async (request) => {
    if (request.stop) process.exit(0);
    process.send(await runRequest(request));
  });
  process.send({ ready: true, names: shim.registered.tests.map((t) => t.name) });
}
