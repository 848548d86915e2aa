// run.mjs - runs a test tier (tests/tiers.mjs) with node --test, then prints one summary line.
//
//   node tests/run.mjs node          npm test: the Node tests, no browser
//   node tests/run.mjs browser       npm run test:browser: the browser suites
//   node tests/run.mjs numpy         the Node tests that read NumPy's numbers
//   node tests/run.mjs coretypes     the 'numpy' tier again under each OpenBLAS kernel of this CPU
//                                    (Prescott, Haswell, SkylakeX where it has AVX-512), each with
//                                    build/reference made afresh under that kernel
//   node tests/run.mjs TIER --list   the tier's files, one a line
//
// Before a tier it brings web/mha.wasm, the bundle and the NumPy scripts' sources.js up to date
// (make wasm bundle; build/reference is made by the first test that needs it). The browser tier
// first checks that its browsers are installed: one line names the missing package, nothing
// runs. Node's own reporter goes to the terminal (spec on a terminal, TAP otherwise); a TAP copy
// goes to build/test-results/TIER.tap, and the summary (files, tests, passed, failed, seconds) to
// build/test-results/TIER.json, which tests/bench/bench_tests.mjs reads. The exit code is node
// --test's. Files run two at a time (these 2 cores), the browser tier's one at a time (its page
// timings are measured on an otherwise idle machine).

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { coretypes, missingBrowsers, TIERS } from './tiers.mjs';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const CONCURRENCY = { node: 2, numpy: 2, browser: 1 };
const resultsDir = join(repoRoot, 'build', 'test-results');

function fail(line) {
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

/** Runs one tier; returns its summary { tier, files, tests, passed, failed, seconds, code }. */
function runTier(tier, env = process.env, label = tier) {
  const files = TIERS[tier].files();
  mkdirSync(resultsDir, { recursive: true });
  const tap = join(resultsDir, `${label}.tap`);
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${CONCURRENCY[tier]}`,
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...files,
    ],
    { cwd: repoRoot, env, stdio: 'inherit' },
  );
  const seconds = (Date.now() - t0) / 1000;
  const text = readFileSync(tap, 'utf8');
  const count = (key) => Number(text.match(new RegExp(`^# ${key} (\\d+)$`, 'm'))?.[1] ?? NaN);
  const summary = {
    tier: label,
    command: TIERS[tier].command,
    files: files.length,
    tests: count('tests'),
    passed: count('pass'),
    failed: count('fail'),
    seconds: Math.round(seconds * 10) / 10,
    code: r.status ?? 1,
  };
  writeFileSync(join(resultsDir, `${label}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  console.log(
    `${label}: ${summary.files} files, ${summary.tests} tests, ${summary.passed} passed, ` +
      `${summary.failed} failed, ${summary.seconds} s (${summary.command})`,
  );
  return summary;
}

/** Fails unless NumPy's BLAS is OpenBLAS and OPENBLAS_CORETYPE=core takes effect. */
function assertKernel(core) {
  const python = process.env.PYTHON ?? '/usr/bin/python3';
  const out = spawnSync(python, ['-c', 'import numpy as np; a = np.ones((64, 64)); a @ a'], {
    env: { ...process.env, OPENBLAS_VERBOSE: '2', OPENBLAS_CORETYPE: core },
    encoding: 'utf8',
  });
  const said = `${out.stdout}${out.stderr}`.match(/Core: (\w+)/)?.[1];
  if (said !== core) {
    fail(
      `coretypes: NumPy (${python}) did not run OpenBLAS's ${core} kernel ` +
        `(${said ? `it said Core: ${said}` : 'no OpenBLAS in use'}): apt-get install ` +
        'libopenblas0-pthread (or bash .ci/setup)',
    );
  }
}

function runCoretypes() {
  const results = [];
  for (const { core, runs, needs } of coretypes()) {
    if (!runs) {
      console.log(`coretypes: ${core} left out: this CPU lacks ${needs}`);
      continue;
    }
    assertKernel(core);
    console.log(`coretypes: OPENBLAS_CORETYPE=${core}, build/reference made afresh`);
    rmSync(join(repoRoot, 'build', 'reference'), { recursive: true, force: true });
    results.push(runTier('numpy', { ...process.env, OPENBLAS_CORETYPE: core }, `numpy-${core}`));
  }
  const failed = results.filter((r) => r.code !== 0);
  console.log(
    `coretypes: ${results.map((r) => `${r.tier.slice(6)} ${r.code === 0 ? 'passed' : 'FAILED'}`).join(', ')}`,
  );
  return failed.length ? 1 : 0;
}

function main([tier, flag]) {
  if (tier !== 'coretypes' && !TIERS[tier]) {
    fail(`usage: node tests/run.mjs ${[...Object.keys(TIERS), 'coretypes'].join('|')} [--list]`);
  }
  if (flag === '--list') {
    console.log(TIERS[tier].files().join('\n'));
    return 0;
  }
  if (tier === 'browser') {
    const missing = missingBrowsers();
    if (missing) fail(`npm run test:browser: ${missing}`);
  }
  execFileSync('make', ['--no-print-directory', 'wasm', 'bundle'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  return tier === 'coretypes' ? runCoretypes() : runTier(tier).code;
}

// (run only as a command: importing this module runs nothing)
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exit(main(process.argv.slice(2)));
}
