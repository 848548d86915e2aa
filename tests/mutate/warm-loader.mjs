// Resolve hook of a warm worker (tests/mutate/warm-worker.mjs): `node:test`, imported by a test
// file, becomes tests/mutate/warm-test-shim.mjs.
const SHIM = new URL('./warm-test-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  if ((specifier === 'node:test' || specifier === 'test') && context.parentURL !== SHIM) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
