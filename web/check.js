// check.js - the notebook check's public facade (DOM-free): read a student's NumPy arrays
// (.npy; .npz, skipping the members that cannot be used; printed text), write .npy/.npz files,
// and check a notebook's arrays step by step against the engine (checkNotebook). Its modules
// live in web/check/.
export { readNpy, writeNpy } from './io/npy.js';
export { loadNpz, readNpz, writeNpz } from './io/npz.js';
export { parseNumpyText } from './io/text.js';
export { checkNotebook } from './check/check.js';
