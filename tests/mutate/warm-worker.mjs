// A warm worker of tests/mutate/node-test-runner.mjs: `node warm-worker.mjs FILE` (with an IPC
// channel) imports one test file once, with no mutant switched on, and then runs the top-level
// tests it is asked for, each request with its own mutant, until it is told to stop or killed.
// A mutant that the file's module-level code reaches (a "static" mutant) gets a worker of its
// own, started with the mutant switched on (__STRYKER_ACTIVE_MUTANT__) and used once.
//
// Messages: from the worker { ready: true, names } or { ready: false, reason } once, then per
// request { failed: [names], message, hitLimit } ; to the worker { mutant, names, hitLimit }.

import { register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const HIT_LIMIT_MESSAGE = 'Stryker: Hit count limit reached';
const ns = (globalThis.__stryker__ ??= {});
// a worker for one static mutant: switched on before the modules load (and never off)
const STATIC_MUTANT = process.env.__STRYKER_ACTIVE_MUTANT__;
if (STATIC_MUTANT) {
  ns.activeMutant = STATIC_MUTANT;
  ns.hitLimit = process.env.STRYKER_HIT_LIMIT ? Number(process.env.STRYKER_HIT_LIMIT) : undefined;
  ns.hitCount = ns.hitLimit === undefined ? undefined : 0;
}
// the tests' own output is not read (their pipes are closed): keep it from piling up
for (const k of ['log', 'info', 'warn', 'error', 'debug']) console[k] = () => {};

register('./warm-loader.mjs', import.meta.url);
const shim = await import('./warm-test-shim.mjs');

async function load(file) {
  await import(pathToFileURL(resolve(file)).href);
  for (const fn of shim.registered.before) await fn();
  return shim.registered.unsupported;
}

// The named tests in the order given (the likeliest to fail first), stopping at the first failure
async function runRequest({ mutant, names, hitLimit }) {
  const byName = new Map(shim.registered.tests.map((t) => [t.name, t]));
  if (!STATIC_MUTANT) {
    ns.activeMutant = mutant;
    ns.hitLimit = hitLimit;
    ns.hitCount = hitLimit === undefined ? undefined : 0;
  }
  try {
    for (const name of names) {
      const t = byName.get(name);
      if (!t) continue;
      try {
        await shim.runTest(t);
      } catch (e) {
        const message = String(e?.stack ?? e).slice(0, 1500);
        return { failed: [t.name], message, hitLimit: message.includes(HIT_LIMIT_MESSAGE) };
      }
    }
    return { failed: [], message: '', hitLimit: false };
  } finally {
    if (!STATIC_MUTANT) {
      ns.activeMutant = undefined;
      ns.hitLimit = undefined;
      ns.hitCount = undefined;
    }
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
