// notebook-students.mjs - the students' notebooks of tests/reference/notebook_students.py
// (build/reference/notebook-students/, made by `make reference`) as checkNotebook's arrays: each
// <run>.npz (np.savez) read with readNpz, as the page reads a student's file. Beside each .npz
// the script writes <run>.json, the same arrays with exact float64 values (non-finite numbers as
// strings): loadSidecar reads it, for a cross-check of the .npz reader.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceDir } from './helpers.mjs';
import { readNpz } from '../web/notebook/npz.js';

const NONFINITE = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** build/reference/notebook-students (generated on demand by helpers.referenceDir). */
export function studentsDir() {
  return join(referenceDir(), 'notebook-students');
}

/** manifest.json: [{ name, heads, causal, loss, dtype, saved, blame: [[result, id]], note }]. */
export function loadManifest() {
  return JSON.parse(readFileSync(join(studentsDir(), 'manifest.json'), 'utf8'));
}

/** One notebook's arrays from its .npz: { name: { data: Float64Array, shape, dtype, ... } }. */
export function loadStudent(name) {
  return readNpz(readFileSync(join(studentsDir(), `${name}.npz`)));
}

/** The same arrays from the JSON sidecar: { name: { data: Float64Array, shape, dtype } }. */
export function loadSidecar(name) {
  const side = JSON.parse(readFileSync(join(studentsDir(), `${name}.json`), 'utf8'));
  const arrays = {};
  for (const [key, a] of Object.entries(side)) {
    const data = Float64Array.from(a.data, (x) => (typeof x === 'string' ? NONFINITE[x] : x));
    arrays[key] = { data, shape: a.shape, dtype: a.dtype };
  }
  return arrays;
}
