// tensors.js - the layer's tensors as the module reports them (mha.tensors, from the C table
// MHA_TENSORS): the page keeps no list of tensor names of its own (DOM-free).

const FORWARD_KINDS = new Set(['input', 'intermediate', 'output']);

/** The weights, in the module's order: Wq, Wk, Wv, Wo (also the course's order of draws). */
export function weightNames(mha) {
  return mha.tensors.filter((t) => t.kind === 'param').map((t) => t.name);
}

/** The forward pass's tensors in order: the input X, every intermediate, the output Y. */
export function forwardNames(mha) {
  return mha.tensors.filter((t) => FORWARD_KINDS.has(t.kind)).map((t) => t.name);
}
