// notebook-mistakes.mjs - the notebook check on every student notebook of
// tests/reference/notebook_students.py: prints "run: result blamed -> id: message" for each
// diagnosis that is not follows-from, and the time of each check. Not a test (see
// tests/notebook-check.test.mjs); for the lead's notes and for reading the messages.
//
//   node tests/tools/notebook-mistakes.mjs [--all]     (--all: every differing row)
//
// The bracket shows each result row: = match, x differs, s shape, . missing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { checkNotebook } from '../../web/notebook/check.js';
import { loadStudent, studentsDir } from '../notebook-students.mjs';

const all = process.argv.includes('--all');
const mha = await loadMHA();
const dir = studentsDir();
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
for (const run of manifest) {
  const arrays = loadStudent(run.name);
  const t0 = performance.now();
  const report = checkNotebook(mha, arrays, { heads: run.heads, causal: run.causal });
  const ms = (performance.now() - t0).toFixed(1);
  const rows = report.rows.filter((r) => r.diagnosis && (all || r.diagnosis.id !== 'follows-from'));
  const letter = { match: '=', differs: 'x', shape: 's', missing: '.' };
  const statuses = report.rows.map((r) => letter[r.status]).join('');
  console.log(`${run.name} (${ms} ms) [${statuses}]`);
  for (const r of rows) console.log(`  ${r.name} -> ${r.diagnosis.id}: ${r.diagnosis.message}`);
}
