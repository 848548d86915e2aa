// layers.js - layers with given weights (DOM-free): a layer of one's own (layerWith), or one
// borrowed from a small pool for a single computation (borrowLayer / returnLayer).

/** Copy Wq, Wk, Wv, Wo (each (C, C)) into the layer's weights. */
function setWeights(layer, W) {
  const v = layer.weights;
  v.Wq.set(W.Wq);
  v.Wk.set(W.Wk);
  v.Wv.set(W.Wv);
  v.Wo.set(W.Wo);
}

/** A layer with the given weights (the layer's own init is overwritten); the caller frees it. */
export function layerWith(mha, C, heads, W) {
  const layer = mha.createLayer({ C, heads, seed: 0 });
  setWeights(layer, W);
  return layer;
}

// Short-lived layers (one computation, then gone) are borrowed from a small pool: createLayer
// draws 4*C*C initial weights (16,384 normals at C = 64) that are overwritten at once, and the
// first render alone would make seven such layers. A borrowed layer gets all four weights set;
// forward rewrites its whole cache; gradients are zeroed before a backward (lesson 4), so what
// a previous borrower left behind never shows.
const layerPools = new WeakMap(); // mha -> Map('C/heads' -> [layers])
const POOL_MAX = 3;

/** A layer of width C with `heads` heads and weights W (Wq, Wk, Wv, Wo; all four required). */
export function borrowLayer(mha, C, heads, W) {
  const free = layerPools.get(mha)?.get(`${C}/${heads}`);
  const layer = free?.length ? free.pop() : mha.createLayer({ C, heads, seed: 0 });
  setWeights(layer, W);
  return layer;
}

/** Give a borrowed layer back (it must not be used afterwards). */
export function returnLayer(mha, layer) {
  let pools = layerPools.get(mha);
  if (!pools) {
    pools = new Map();
    layerPools.set(mha, pools);
  }
  const key = `${layer.C}/${layer.heads}`;
  const free = pools.get(key) ?? [];
  pools.set(key, free);
  if (free.includes(layer)) return; // returned twice: it is pooled already, and still alive
  if (free.length < POOL_MAX) free.push(layer);
  else layer.free();
}

/** f(layer) on a borrowed layer with weights W, given back afterwards (also when f throws). */
export function withLayer(mha, C, heads, W, f) {
  const layer = borrowLayer(mha, C, heads, W);
  try {
    return f(layer);
  } finally {
    returnLayer(mha, layer);
  }
}
