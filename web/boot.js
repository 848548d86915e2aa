// boot.js - the first module the page's bundle runs (app.js imports it first): it starts the
// wasm module's compilation before the other modules' top-level code runs, so that compilation
// (off the main thread) overlaps their setup instead of following it.
import { loadMHA } from './mha.js';

performance.mark('mha:boot');

// The bundle carries the wasm as base64 (works from file:// too); unbundled, fetch mha.wasm.
function wasmSource() {
  const b64 = globalThis.MHA_WASM_BASE64;
  if (!b64) return undefined;
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(b64);
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** The module's bytes (undefined unbundled); also sent to the compute workers. */
export const wasmBytes = wasmSource();
/** The engine, loading since the bundle's first statements (app.js's main reports a failure). */
export const mhaPromise = loadMHA(wasmBytes);
mhaPromise.catch(() => {});
