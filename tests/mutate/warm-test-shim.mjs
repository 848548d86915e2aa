// Stands in for `node:test` inside a warm worker (tests/mutate/warm-worker.mjs): `test()` only
// records each top-level test, so that the worker can run any of them again and again, each time
// with another mutant switched on. What the suites use is here: test(name, [options], fn), the
// context's name, diagnostic() and after(), and subtests (t.test), run at once; before/after
// hooks at the top level. Anything else makes the file unfit for a warm worker (`unsupported`).

export const registered = { tests: [], before: [], after: [], unsupported: null };

function unsupported(what) {
  registered.unsupported ??= what;
}

function split(args) {
  const fn = args.find((a) => typeof a === 'function');
  const options = args.find((a) => a && typeof a === 'object') ?? {};
  return { name: typeof args[0] === 'string' ? args[0] : (fn?.name ?? ''), options, fn };
}

export function test(...args) {
  const t = split(args);
  if (t.options.skip || t.options.todo || t.options.only || t.options.concurrency) {
    unsupported(`test options of ${t.name}`);
  }
  registered.tests.push(t);
}
export const it = test;
export const before = (fn) => registered.before.push(fn);
export const after = (fn) => registered.after.push(fn);
export const beforeEach = () => unsupported('beforeEach');
export const afterEach = () => unsupported('afterEach');
export const describe = () => unsupported('describe');
export const suite = describe;
export const mock = new Proxy({}, { get: () => unsupported('mock') });

/** Runs one recorded test (and its subtests) to the end; throws what the test throws. */
export async function runTest(t) {
  const cleanups = [];
  const context = {
    name: t.name,
    diagnostic() {},
    after: (fn) => cleanups.push(fn),
    async test(...args) {
      const sub = split(args);
      await runTest(sub);
    },
  };
  try {
    await t.fn(context);
  } finally {
    for (const fn of cleanups) await fn();
  }
}

export default test;
