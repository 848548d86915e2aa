// check-mistakes.mjs - the notebook check on every student notebook of
// tests/reference/notebook_students.py: prints "run: result blamed -> id: message" for each
// diagnosis that is not follows-from, and the time of each check. Not a test (see
// tests/check/check.test.mjs); for the lead's notes and for reading the messages.
//
//   node tests/tools/check-mistakes.mjs [--all]     (--all: every differing row)
//
// The bracket shows each result row: = match, x differs, s shape, . missing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { checkNotebook } from '../../web/check/check.js';
import { loadStudent, studentsDir } from '../check/students.mjs';

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

// --time: the check's time on notebooks made here by the JS pipeline (no NumPy needed), at the
// course's size and at T = 128, C = 768: every result given, correct and with X @ Wq.T; only Y
// and dX given with X @ Wq.T (the search through the steps not saved); only Y given and matching
// no known mistake (every candidate tried). Wall time and this process's CPU time (the machine
// may be shared) of three checks each.
if (process.argv.includes('--time')) {
  const { Pipeline } = await import('../../web/check/pipeline.js');
  const { recordOf } = await import('../../web/check/catalogue.js');
  const { editVariant, namedEdit } = await import('../../web/check/edits.js');
  const { acceptedShapes, resultNames } = await import('../../web/check/names.js');
  for (const [B, T, C, heads] of [
    [2, 6, 64, 4],
    [2, 128, 768, 12],
  ]) {
    const s = { B, T, C, heads, hs: C / heads, N: B * T, n: B * T * C, causal: true, loss: 'mse' };
    const rng = mha.rng(5);
    const inputs = { X: rng.standardNormal(B * T * C) };
    for (const w of ['Wq', 'Wk', 'Wv', 'Wo']) {
      inputs[w] = rng.standardNormal(C * C).map((x) => x / Math.sqrt(C));
    }
    inputs.target = rng.standardNormal(B * T * C);
    rng.free();
    const notebook = (mistake) => {
      const pipe = new Pipeline(s, inputs);
      if (mistake) {
        const named = (edit) => recordOf({ site: 'Qm', edit })?.id === 'weights-transposed';
        pipe.adopt('Qm', { variant: editVariant(namedEdit('Qm', s, named), 'Qm', s) });
      }
      const arrays = {};
      for (const [k, data] of Object.entries(inputs)) {
        arrays[k] = { data, shape: k === 'X' || k === 'target' ? [B, T, C] : [C, C] };
      }
      for (const name of resultNames('mse')) {
        const { shape, node } = acceptedShapes(name, s)[0];
        arrays[name] = { data: pipe.value(node), shape };
      }
      return arrays;
    };
    const only = (arrays, names) =>
      Object.fromEntries(Object.entries(arrays).filter(([k]) => k in inputs || names.includes(k)));
    const right = notebook(false);
    const wrong = notebook(true);
    const odd = only(right, ['Y']);
    odd.Y = { ...odd.Y, data: odd.Y.data.map((y, i) => (i === 0 ? y + 1 : y)) };
    const cases = {
      'correct, all results': right,
      'X @ Wq.T, all results': wrong,
      'X @ Wq.T, only Y and dX': only(wrong, ['Y', 'dX']),
      'no known mistake, only Y': odd,
    };
    for (const [label, arrays] of Object.entries(cases)) {
      const times = [];
      let report;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        report = checkNotebook(mha, arrays, { heads, causal: true });
        const cpu = process.cpuUsage(c0);
        times.push(
          `${(performance.now() - t0).toFixed(0)} (cpu ${((cpu.user + cpu.system) / 1000).toFixed(0)})`,
        );
      }
      const blamed = report.rows.find((r) => r.diagnosis && r.diagnosis.id !== 'follows-from');
      const what = blamed ? `${blamed.name} -> ${blamed.diagnosis.id}` : 'all match';
      const ms = times.join(', ');
      console.log(`B=${B} T=${T} C=${C} h=${heads}: ${label}: ${ms} ms (${what})`);
    }
  }
}
