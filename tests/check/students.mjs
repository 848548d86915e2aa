// students.mjs - the students' notebooks of tests/reference/notebook_students.py
// (build/reference/notebook-students/, made by `make reference`) as checkNotebook's arrays: each
// <run>.npz (np.savez) read with readNpz, as the page reads a student's file. Beside each .npz
// the script writes <run>.json, the same arrays with exact float64 values (non-finite numbers as
// strings): loadSidecar reads it, for a cross-check of the .npz reader.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceDir, repoRoot } from '../helpers.mjs';
import { readNpz } from '../../web/io/npz.js';

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

// The sentences the check says, as read and approved by a person: tests/sentences/<set>.json,
// { notebook: what it says }. After a deliberate change of wording,
// `UPDATE_SENTENCES=1 node --test tests/notebook-*.test.mjs` rewrites the files; read their diff
// before committing them.
const UPDATE_SENTENCES = Boolean(process.env.UPDATE_SENTENCES);

/** The approved sentences of one set ({} while they are being rewritten). */
export function approvedSentences(set) {
  const path = join(repoRoot, 'tests', 'sentences', `${set}.json`);
  return UPDATE_SENTENCES ? {} : JSON.parse(readFileSync(path, 'utf8'));
}

/** Asserts that `said` is the approved text of notebook `name` (or records it, when updating). */
export function assertSentences(set, name, said) {
  const path = join(repoRoot, 'tests', 'sentences', `${set}.json`);
  if (!UPDATE_SENTENCES) {
    assert.deepEqual(said, JSON.parse(readFileSync(path, 'utf8'))[name], `${set}: ${name}`);
    return;
  }
  const all = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
  all[name] = said;
  writeFileSync(path, `${JSON.stringify(all, null, 2)}\n`);
}
