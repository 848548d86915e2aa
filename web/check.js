// check.js - the notebook check's public facade (DOM-free): read a student's NumPy arrays
// (.npy; .npz, skipping the members that cannot be used; printed text), write .npy/.npz files,
// and check a notebook's arrays step by step against the engine (checkNotebook). Its modules
// live in web/check/.
export { readNpy, writeNpy } from './check/npy.js';
export { loadNpz, readNpz, writeNpz } from './check/npz.js';
export { parseNumpyText } from './check/text.js';
export { checkNotebook } from './check/check.js';
