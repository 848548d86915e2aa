// notebook-students.mjs - the students' notebooks of tests/reference/notebook_students.py
// (build/reference/notebook-students/, made by `make reference`) as checkNotebook's arrays.
// Until readNpz (web/notebook/npz.js) is on main, they are read from the JSON sidecar written
// beside each .npz (the same arrays, float64 values exact, non-finite numbers as strings).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceDir } from './helpers.mjs';

const NONFINITE = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** build/reference/notebook-students (generated on demand by helpers.referenceDir). */
export function studentsDir() {
  return join(referenceDir(), 'notebook-students');
}

/** manifest.json: [{ name, heads, causal, loss, dtype, saved, blame: [[result, id]], note }]. */
export function loadManifest() {
  return JSON.parse(readFileSync(join(studentsDir(), 'manifest.json'), 'utf8'));
}

/** One notebook's arrays { name: { data: Float64Array, shape, dtype } }. */
export function loadStudent(name) {
  const side = JSON.parse(readFileSync(join(studentsDir(), `${name}.json`), 'utf8'));
  const arrays = {};
  for (const [key, a] of Object.entries(side)) {
    const data = Float64Array.from(a.data, (x) => (typeof x === 'string' ? NONFINITE[x] : x));
    arrays[key] = { data, shape: a.shape, dtype: a.dtype };
  }
  return arrays;
}
