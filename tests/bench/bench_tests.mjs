// bench_tests.mjs - how long each test tier takes here (a benchmark: it prints, asserts nothing).
//
//   npm run bench:tests                 npm test (build/reference kept, then made afresh) and
//                                       npm run test:browser
//   npm run bench:tests -- --all        also the coretype runs and make test (lint, C tests,
//                                       fuzz-ci, every tier, the mutation smoke run: ~30 min)
//   npm run bench:tests -- --node       npm test only
//
// Each command runs once, its output in build/test-results/bench-*.log; the table gives the wall
// time, the files and tests of the tier (tests/run.mjs's summary), the machine's cores and load.
// The target of docs/testing.md#tiers: npm test within 4 minutes on 2 cores.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const results = join(root, 'build', 'test-results');
const args = new Set(process.argv.slice(2));

/** Runs `cmd` in the repository root, its output to a log; { seconds, code, log }. */
function timed(name, cmd, cmdArgs, { fresh = false } = {}) {
  if (fresh) rmSync(join(root, 'build', 'reference'), { recursive: true, force: true });
  mkdirSync(results, { recursive: true });
  const log = join(results, `bench-${name}.log`);
  const out = openSync(log, 'w');
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: ['ignore', out, out] });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { seconds, code: r.status ?? 1, log };
}

/** The summary tests/run.mjs wrote for `tier` (null when it did not run). */
function summary(tier) {
  const f = join(results, `${tier}.json`);
  return existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null;
}

const node = process.execPath;
const runs = [
  { name: 'npm test', tier: 'node', cmd: [node, ['tests/run.mjs', 'node']] },
  {
    name: 'npm test, build/reference made afresh',
    tier: 'node',
    cmd: [node, ['tests/run.mjs', 'node']],
    fresh: true,
  },
];
if (!args.has('--node')) {
  runs.push({
    name: 'npm run test:browser',
    tier: 'browser',
    cmd: [node, ['tests/run.mjs', 'browser']],
  });
}
if (args.has('--all')) {
  runs.push(
    { name: 'npm run test:coretypes', tier: null, cmd: [node, ['tests/run.mjs', 'coretypes']] },
    { name: 'make test', tier: null, cmd: ['make', ['--no-print-directory', 'test']] },
  );
}

console.log(
  `${availableParallelism()} cores, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at the start`,
);
const rows = [];
for (const run of runs) {
  const [cmd, cmdArgs] = run.cmd;
  const t = timed(run.name.replace(/\W+/g, '-'), cmd, cmdArgs, { fresh: run.fresh });
  const s = run.tier ? summary(run.tier) : null;
  rows.push({
    command: run.name,
    seconds: t.seconds.toFixed(1),
    files: s?.files ?? '',
    tests: s?.tests ?? '',
    failed: s ? s.failed : '',
    exit: t.code,
  });
  console.log(`${run.name}: ${t.seconds.toFixed(1)} s, exit ${t.code} (log: ${t.log})`);
}
console.table(rows);
