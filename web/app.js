// app.js - entry of the companion page (bundled into app.bundle.js by `make bundle`).
import { loadMHA } from './mha.js';

// The bundle carries the wasm as base64 (works from file:// too); unbundled, fetch mha.wasm.
function wasmSource() {
  const b64 = globalThis.MHA_WASM_BASE64;
  if (!b64) return undefined;
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

async function main() {

  
  const status = document.getElementById('status');
  function row(table, cells) {
    const tr = document.createElement('tr');
    for (const c of cells) { const td = document.createElement('td'); td.textContent = c; tr.append(td); }
    document.querySelector(`#${table} tbody`).append(tr);
  }
  try {
    const mha = await loadMHA(wasmSource());
    const layer = mha.createLayer({ C: 64, heads: 4, seed: 42, rng: 'default_rng', scale: 0.125 });
    const X = mha.standardNormal(2 * 6 * 64, { seed: 7 });
    layer.forward(X, { B: 2, T: 6 });
    layer.backward(mha.standardNormal(2 * 6 * 64, { seed: 8 }));
    for (const name of mha.tensorNames) row('shapes', [name, `(${layer.tensor(name).shape.join(', ')})`]);
    setTimeout(() => {
      const t0 = performance.now();
      for (const r of layer.gradcheck(X, { B: 2, T: 6, seed: 8 })) {
        row('gradcheck', [r.tensor, `(${r.shape.join(', ')})`, r.checked, r.maxAbs.toExponential(2), r.maxRel.toExponential(2)]);
      }
      status.textContent = `done in ${(performance.now() - t0).toFixed(0)} ms`;
    }, 0);
  } catch (err) {
    status.textContent = err.message;
    status.className = 'error';
  }
  
}

main();
