// notebook.js - the notebook check's public facade (DOM-free): read a student's NumPy arrays
// (.npy; .npz, skipping the members that cannot be used; printed text), write .npy/.npz files,
// and check a notebook's arrays step by step against the engine (checkNotebook). Its modules
// live in web/notebook/.
export { readNpy, writeNpy } from './notebook/npy.js';
export { loadNpz, readNpz, writeNpz } from './notebook/npz.js';
export { parseNumpyText } from './notebook/text.js';
export { checkNotebook } from './notebook/check.js';
