// outside-table.mjs - the notebook check on a corpus of notebooks written outside the project
// (issue 35's measure): one line per file, then the counts. A corpus is a directory of .npz files
// and a manifest, a JSON list of { file (the notebook's script or .npz name), heads, causal,
// mistakes (students' corpora: the mistakes in words; [] for a correct notebook),
// correct_for_course (real implementations' corpora: true, or what differs), first_differing }.
// Each file is checked as the page checks a dropped file (readNpz, checkNotebook with the
// manifest's heads and causal flag). Per file:
//
//   correct notebook   "all match", or FLAGGED and the rows (a false alarm)
//   mistaken notebook  named (the first row flagged has a cause: not "no known mistake", not a
//                      measured fact), UNNAMED (flagged, no cause) or NOT FOUND (nothing flagged)
//   NOT CHECKED        X or a weight missing: the report says what was read as what and what
//                      is missing (no error; on the page, the check's status)
//   THREW              checkNotebook threw
//
// and the roots (the flagged rows that do not follow from another) with their ids. Whether a
// named cause is the right one is read by a person from the messages (node build/outside.mjs
// style: run checkNotebook and print them). Not a test: the exit code is 0 (a report).
//
//   node tests/tools/outside-table.mjs DIR MANIFEST

import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';

const UNNAMED = new Set(['step-differs', 'attention-invariant', 'measured']);
const named = (row) => row && !UNNAMED.has(row.diagnosis?.id) && !row.diagnosis?.measured;

const mha = await loadMHA();
const [dir, manifestPath] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
const counts = { files: 0, threw: 0, correct: 0, falseAlarms: 0, mistaken: 0, found: 0, named: 0 };

for (const m of manifest) {
  const base = m.file.replace(/\.(py|npz)$/, '');
  const path = join(dir, `${base}.npz`);
  if (!existsSync(path)) continue;
  counts.files++;
  let report;
  try {
    report = checkNotebook(mha, readNpz(readFileSync(path)), { heads: m.heads, causal: m.causal });
  } catch (e) {
    counts.threw++;
    console.log(`${base} | THREW | ${e.message}`);
    continue;
  }
  if (!report.sizes) {
    counts.notChecked = (counts.notChecked ?? 0) + 1;
    console.log(`${base} | NOT CHECKED | ${report.notes.at(-1)}`);
    continue;
  }
  const flagged = report.rows.filter((r) => r.status === 'differs' || r.status === 'shape');
  const roots = flagged.filter((r) => r.diagnosis?.id !== 'follows-from');
  const ids = roots.map((r) => `${r.name}:${r.diagnosis?.id ?? r.status}`).join(' ');
  const mistaken = m.mistakes ? m.mistakes.length > 0 : m.correct_for_course !== true;
  if (!mistaken) {
    counts.correct++;
    if (flagged.length) counts.falseAlarms++;
    console.log(`${base} | correct | ${flagged.length ? `FLAGGED ${ids}` : 'all match'}`);
    continue;
  }
  counts.mistaken++;
  if (flagged.length) counts.found++;
  if (named(roots[0])) counts.named++;
  let verdict = flagged.length ? 'UNNAMED' : 'NOT FOUND';
  if (named(roots[0])) verdict = 'named';
  console.log(`${base} | first ${m.first_differing ?? '?'} | ${verdict} | ${ids}`);
}
console.log(JSON.stringify(counts));
