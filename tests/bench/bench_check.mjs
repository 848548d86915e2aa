// bench_check.mjs - the notebook check against mistakes nobody tuned it to (issue 35): the
// mutants of tests/bench/check_mutants.py (source edits of a plain NumPy notebook of lessons
// 3-5, at random sizes and seeds, causal and not) and the unmutated notebook at random sizes,
// each file read with readNpz and checked with checkNotebook as the page checks a student's .npz.
// Prints, over the mutants:
//
//   first differing step found   the check's first flagged row is the first saved array that
//                                differs from the unmutated notebook's (check_mutants.py's
//                                `first`, at float64's rounding through the layer)
//   cause named                  that row has a diagnosis naming a cause (not one that only says
//                                what it measured: step-differs, attention-invariant, measured;
//                                nor follows-from, which points to the student's earlier arrays)
//   wrong cause                  a cause named at a row that is not that first differing one
//   check threw                  checkNotebook threw for the file
//
// and over the clean runs, false alarms: any row flagged (differs, or a shape refused). Then the
// figures by operator, and a few of each kind of miss. Not a test: it exits 0 whatever the check
// says, 1 only when the harness itself fails.
//
//   npm run bench:check                       500 mutants, 20 sizes x {causal, not}
//   BENCH_CHECK_MUTANTS=40 BENCH_CHECK_CLEAN=5 npm run bench:check     (CI's sample)
//   BENCH_CHECK_SHOWN=50 npm run bench:check    more examples of each kind of miss (default 5)

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMHA } from '../../web/mha.js';
import { readNpz } from '../../web/io/npz.js';
import { checkNotebook } from '../../web/check/check.js';
import { PYTHON, repoRoot } from '../helpers.mjs';

// diagnoses that name no cause (as tests/tools/unseen-table.mjs reads them), and follows-from:
// the row's difference comes from the student's earlier arrays (it points upstream)
const UNKNOWN = new Set(['step-differs', 'attention-invariant', 'measured', 'follows-from']);
const FLAGGED = new Set(['differs', 'shape']);
// how many examples of each kind of miss are printed
const SHOWN = countFromEnv('BENCH_CHECK_SHOWN', 5);

function countFromEnv(name, fallback) {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`bench_check: ${name} must be an integer >= 0, got ${process.env[name]}`);
    process.exit(2);
  }
  return v;
}

/** What the check said of one file: { flagged (row name or null), named, id, message }. */
function verdictOf(checked) {
  const row = checked.rows.find((r) => FLAGGED.has(r.status));
  const d = row?.diagnosis ?? null;
  const named = !!d && !UNKNOWN.has(d.id) && d.measured !== true;
  return { flagged: row?.name ?? null, named, id: d?.id ?? null, message: d?.message ?? '' };
}

function judge(entry, said) {
  if (said.error) return { error: true };
  const found = said.flagged === entry.first;
  return { found, named: found && said.named, wrong: said.named && !found };
}

const pct = (n, d) => (d ? `${((100 * n) / d).toFixed(1)} %` : '—');

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows.map((r) => r.map((c, i) => String(c).padEnd(widths[i])).join('  ')).join('\n');
}

async function main() {
  const mutants = countFromEnv('BENCH_CHECK_MUTANTS', 500);
  const clean = countFromEnv('BENCH_CHECK_CLEAN', 20);
  const seed = countFromEnv('BENCH_CHECK_SEED', 35);
  const dir = mkdtempSync(join(tmpdir(), 'mha-check-mutants-'));
  try {
    const script = join(repoRoot, 'tests', 'bench', 'check_mutants.py');
    const args = [dir, '--mutants', mutants, '--clean', clean, '--seed', seed].map(String);
    execFileSync(PYTHON, [script, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    const mha = await loadMHA();
    const results = manifest.map((entry) => {
      let said;
      try {
        const arrays = readNpz(readFileSync(join(dir, entry.file)));
        said = verdictOf(checkNotebook(mha, arrays, { heads: entry.heads, causal: entry.causal }));
      } catch (err) {
        said = { error: err.message };
      }
      return { entry, said, ...judge(entry, said) };
    });
    report(results, { mutants, clean, seed });
    timeBySize(mha);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(results, { seed }) {
  const muts = results.filter((r) => r.entry.kind === 'mutant');
  const cleans = results.filter((r) => r.entry.kind === 'clean');
  const count = (xs, k) => xs.filter((r) => r[k]).length;
  const alarms = cleans.filter((r) => r.said.error || r.said.flagged);
  console.log(
    `bench_check: ${muts.length} mutants whose arrays differ, ${cleans.length} clean runs ` +
      `(seed ${seed})\n`,
  );
  const rows = [['', 'count', 'share', 'goal']];
  rows.push([
    'first differing step found',
    count(muts, 'found'),
    pct(count(muts, 'found'), muts.length),
    '100 %',
  ]);
  rows.push([
    'cause named',
    count(muts, 'named'),
    pct(count(muts, 'named'), muts.length),
    '≥ 85 %',
  ]);
  rows.push(['wrong cause', count(muts, 'wrong'), pct(count(muts, 'wrong'), muts.length), '0']);
  rows.push([
    'check threw (mutants)',
    count(muts, 'error'),
    pct(count(muts, 'error'), muts.length),
    '0',
  ]);
  rows.push(['false alarms (clean runs)', alarms.length, pct(alarms.length, cleans.length), '0']);
  console.log(table(rows));
  const ops = [...new Set(muts.map((r) => r.entry.operator))].sort();
  const byOp = [['operator', 'mutants', 'found', 'named', 'wrong', 'threw']];
  for (const op of ops) {
    const xs = muts.filter((r) => r.entry.operator === op);
    byOp.push([
      op,
      xs.length,
      count(xs, 'found'),
      count(xs, 'named'),
      count(xs, 'wrong'),
      count(xs, 'error'),
    ]);
  }
  console.log(`\nby operator\n${table(byOp)}`);
  const show = (title, xs) => {
    if (!xs.length) return;
    console.log(`\n${title} (${xs.length}; the first ${Math.min(SHOWN, xs.length)}):`);
    for (const r of xs.slice(0, SHOWN)) {
      const e = r.entry;
      const s = e.sizes;
      const size = `B=${s.B} T=${s.T} C=${s.C} h=${s.heads}${e.causal ? ' causal' : ''}`;
      const said = r.said.error
        ? `threw: ${r.said.error}`
        : `${r.said.flagged ?? 'nothing flagged'} ${r.said.id ?? ''} ${r.said.message.slice(0, 160)}`;
      console.log(
        `  ${e.file} [${e.operator}] ${size}: ${e.before ?? ''} -> ${e.line ?? ''}; ` +
          `first differs: ${e.first}; the check: ${said}`,
      );
    }
  };
  show(
    'first differing step missed',
    muts.filter((r) => !r.error && !r.found),
  );
  show(
    'found, no cause named',
    muts.filter((r) => r.found && !r.named),
  );
  show(
    'wrong cause',
    muts.filter((r) => r.wrong),
  );
  show(
    'the check threw',
    muts.filter((r) => r.error),
  );
  show('false alarms', alarms);
}

// The check's time on one file by size (it runs on the page's thread): X, the four weights and
// a Y 1.5 times the layer's (a mistake no single edit explains at Y alone: the search runs where
// the size allows it), the median of 3 runs each. BENCH_CHECK_SIZES=0 leaves it out.
const SIZES = [
  [2, 6, 64, 4],
  [1, 16, 128, 4],
  [1, 32, 256, 8],
  [1, 64, 768, 12],
];
function timeBySize(mha) {
  if (process.env.BENCH_CHECK_SIZES === '0') return;
  const rows = SIZES.map(([B, T, C, heads]) => {
    const rng = mha.rng(7, 'default_rng');
    const X = rng.standardNormal(B * T * C);
    const W = ['Wq', 'Wk', 'Wv', 'Wo'].map(() =>
      rng.standardNormal(C * C).map((v) => v / Math.sqrt(C)),
    );
    rng.free();
    const layer = mha.createLayer({ C, heads });
    W.forEach((w, i) => layer.weights[['Wq', 'Wk', 'Wv', 'Wo'][i]].set(w));
    const { Y } = layer.forward(X, { B, T });
    layer.free();
    const arrays = {
      X: { data: X, shape: [B, T, C] },
      Y: { data: Y.map((v) => 1.5 * v), shape: [B, T, C] },
    };
    ['Wq', 'Wk', 'Wv', 'Wo'].forEach((k, i) => (arrays[k] = { data: W[i], shape: [C, C] }));
    const times = [0, 1, 2].map(() => {
      const t0 = performance.now();
      checkNotebook(mha, arrays, { heads });
      return performance.now() - t0;
    });
    const ms = times.sort((a, b) => a - b)[1];
    return [`B ${B}, T ${T}, C ${C}, h ${heads}`, `${Math.round(ms)} ms`];
  });
  console.log(
    `\nthe check's time on one file (Y 1.5 × the layer's), median of 3\n${table([['size', 'time'], ...rows])}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
