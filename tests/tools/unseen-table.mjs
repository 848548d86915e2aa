// unseen-table.mjs - the notebook check on students' mistakes outside its catalogue (issue 18):
// the UNSEEN notebooks of tests/reference/notebook_students.py, listed in
// build/reference/notebook-students/unseen.json, each checked with checkNotebook as the page
// checks a student's .npz. Prints a Markdown table, one row per notebook:
//
//   mistake | expected first row | first row flagged | diagnosis id | diagnosis message | verdict
//
// The expected first row and id come from unseen.json (`first` is computed by the script with the
// check's tolerance). Verdict, from the diagnosis at the first flagged row:
//   right    the expected id at the expected row (a correct notebook: nothing flagged)
//   unknown  a diagnosis that names no cause: step-differs, or an analysis that only reports what
//            it measured (attention-invariant, id 'measured', or `measured: true` on it)
//   wrong    any other cause named, another row flagged first, nothing flagged for a mistake, or
//            anything flagged in a correct notebook
//   error    checkNotebook threw
// then a summary line with the counts, and the wrong ones again. Not a test: the exit code is 0
// whatever the check says (a report; the failures are the lead's to fix).
//
//   node tests/tools/unseen-table.mjs
//
// The fixtures are made on demand as the tests make them (helpers.referenceDir runs `make
// reference` when tests/reference/*.py is newer than build/reference/.done); unseen.json still
// missing: the script is run into the directory directly.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';
import { PYTHON, repoRoot } from '../helpers.mjs';
import { studentsDir } from '../check/students.mjs';

// The ids that name no cause (analyses/: measuredFacts is step-differs; the broken invariants of
// att alone are attention-invariant)
const UNKNOWN = new Set(['step-differs', 'attention-invariant', 'measured']);

// unseen.json from the students' directory, generated if missing
function loadUnseen() {
  const dir = studentsDir();
  const file = join(dir, 'unseen.json');
  if (!existsSync(file)) {
    const script = join(repoRoot, 'tests', 'reference', 'notebook_students.py');
    execFileSync(PYTHON, [script, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return { dir, runs: JSON.parse(readFileSync(file, 'utf8')) };
}

// A table cell: one line, `|` escaped
const cell = (text) => String(text).replaceAll('\n', ' ').replaceAll('|', '\\|');

const sizeText = ({ B, T, C, h }) => `B=${B} T=${T} C=${C} h=${h}`;

// { flagged, id, message, verdict } for one notebook's report
function judge(run, report) {
  const flaggedRow = report.rows.find((r) => r.status === 'differs' || r.status === 'shape');
  const flagged = flaggedRow ? flaggedRow.name : '—';
  const diagnosis = flaggedRow?.diagnosis ?? null;
  const id = diagnosis?.id ?? (flaggedRow ? `(${flaggedRow.status})` : '—');
  const message = diagnosis?.message ?? flaggedRow?.note ?? '';
  const [want] = run.blame;
  let verdict;
  if (!want) verdict = flaggedRow ? 'wrong' : 'right';
  else if (!flaggedRow || flaggedRow.name !== want[0] || !diagnosis) verdict = 'wrong';
  else if (diagnosis.id === want[1]) verdict = 'right';
  else if (UNKNOWN.has(diagnosis.id) || diagnosis.measured === true) verdict = 'unknown';
  else verdict = 'wrong';
  return { flagged, id, message, verdict };
}

async function main() {
  const mha = await loadMHA();
  const { dir, runs } = loadUnseen();
  const lines = [
    '| mistake | size, dtype | expected first row | first row flagged | diagnosis id | ' +
      'diagnosis message | verdict |',
    '|---|---|---|---|---|---|---|',
  ];
  const counts = { right: 0, unknown: 0, wrong: 0, error: 0 };
  const wrong = [];
  for (const run of runs) {
    let result;
    try {
      const arrays = readNpz(readFileSync(join(dir, `${run.name}.npz`)));
      const report = checkNotebook(mha, arrays, { heads: run.heads, causal: run.causal });
      result = judge(run, report);
    } catch (e) {
      result = { flagged: '—', id: '—', message: `throws: ${e.message}`, verdict: 'error' };
    }
    counts[result.verdict]++;
    const expected = run.blame.length ? `${run.first} (${run.blame[0][1]})` : 'none (correct)';
    const mode = `${sizeText(run.size)}, ${run.dtype}${run.causal ? ', causal' : ''}`;
    if (result.verdict === 'wrong' || result.verdict === 'error') {
      wrong.push(`- ${run.name}: expected ${expected}, got ${result.flagged} ${result.id}`);
    }
    const row = [
      `**${run.name}**: ${run.note}`,
      mode,
      expected,
      result.flagged,
      result.id,
      result.message,
      result.verdict === 'right' ? 'right' : `**${result.verdict}**`,
    ];
    lines.push(`| ${row.map(cell).join(' | ')} |`);
  }
  const correct = runs.filter((r) => r.blame.length === 0).length;
  const errors = counts.error ? `, error ${counts.error}` : '';
  lines.push(
    '',
    `${runs.length} notebooks (${runs.length - correct} mistakes, ${correct} correct): ` +
      `right ${counts.right}, unknown ${counts.unknown}, wrong ${counts.wrong}${errors}`,
  );
  if (wrong.length) lines.push('', 'Wrong:', ...wrong);
  console.log(lines.join('\n'));
}

try {
  await main();
} catch (e) {
  console.log(`unseen-table: ${e.stack ?? e}`);
}
process.exitCode = 0;
