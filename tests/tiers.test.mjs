// The test tiers (tests/tiers.mjs) and their runner (tests/run.mjs): every test file is in
// exactly one of npm test and npm run test:browser; the NumPy tier is the Node files that read
// NumPy's numbers (checked against files whose dependence is known by reading them); the kernels
// each CPU runs; a missing browser gives one line naming its package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';
import { coretypes, missingBrowsers, readsNumpy, testFiles, TIERS } from './tiers.mjs';

/** Every *.test.mjs under tests/, by a walk of its own. */
function walk(dir) {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return walk(`${dir}/${e.name}`);
    return e.name.endsWith('.test.mjs') ? [`${dir}/${e.name}`] : [];
  });
}

test('every test file is in exactly one of the node and browser tiers; numpy is in node', () => {
  const all = walk('tests').sort();
  assert.deepEqual([...testFiles()].sort(), all);
  const node = TIERS.node.files();
  const browser = TIERS.browser.files();
  assert.deepEqual([...node, ...browser].sort(), all);
  assert.equal(node.filter((f) => browser.includes(f)).length, 0);
  for (const f of browser) assert.match(f, /^tests\/(browser|bundler)\//);
  const numpy = TIERS.numpy.files();
  for (const f of numpy) assert.ok(node.includes(f), `${f}: numpy but not node`);
  assert.ok(numpy.length >= 20 && numpy.length < node.length, `${numpy.length} of ${node.length}`);
});

test("the numpy tier: files known to read NumPy's numbers are in, the others out", () => {
  const numpy = new Set(TIERS.numpy.files());
  // each read here: fixtures through students.mjs, python3 through ipynb-run.mjs, fixtures
  // through referenceDir / loadFixture, Python run by the test itself
  for (const f of [
    'tests/check/check.test.mjs',
    'tests/model/ipynb.test.mjs',
    'tests/reference.test.mjs',
    'tests/rng.test.mjs',
    'tests/model/scripts.test.mjs',
    'tests/model/lesson3-why.test.mjs',
  ]) {
    assert.ok(numpy.has(f), `${f} reads NumPy's numbers`);
  }
  // the engine against itself, hand-derived cases or plain-JS references only
  for (const f of [
    'tests/abi.test.mjs',
    'tests/check/compare.test.mjs',
    'tests/check/pipeline.test.mjs',
    'tests/messages.test.mjs',
    'tests/simd.test.mjs',
    'tests/tiers.test.mjs',
    'tests/mutate/suites.test.mjs',
  ]) {
    assert.ok(!numpy.has(f), `${f} reads no NumPy numbers`);
  }
  assert.equal(readsNumpy('tests/check/students.mjs'), true);
});

test('the OpenBLAS kernels a CPU runs, by its flags; the others named as left out', () => {
  const runs = (flags) =>
    coretypes(new Set(flags))
      .filter((c) => c.runs)
      .map((c) => c.core);
  assert.deepEqual(runs([]), []);
  assert.deepEqual(runs(['pni']), ['Prescott']);
  assert.deepEqual(runs(['pni', 'avx2', 'fma']), ['Prescott', 'Haswell']);
  // AVX-512 F alone is not enough for OpenBLAS's SkylakeX kernel
  assert.deepEqual(runs(['pni', 'avx2', 'fma', 'avx512f']), ['Prescott', 'Haswell']);
  assert.deepEqual(runs(['pni', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512dq', 'avx512vl']), [
    'Prescott',
    'Haswell',
    'SkylakeX',
  ]);
  for (const c of coretypes(new Set())) assert.ok(c.needs.length > 3, c.core);
});

test('a missing browser: one line naming the package, from the runner and from a test file', () => {
  // (without NODE_TEST_CONTEXT: a node --test started from a test is a runner of its own)
  const { NODE_TEST_CONTEXT, ...env } = process.env;
  void NODE_TEST_CONTEXT;
  const gone = { ...env, MHA_FIREFOX: '/nonexistent/firefox-esr' };
  const saved = process.env.MHA_FIREFOX;
  process.env.MHA_FIREFOX = gone.MHA_FIREFOX;
  try {
    assert.equal(missingBrowsers(['Chromium']), null);
    assert.equal(
      missingBrowsers(['Chromium', 'Firefox']),
      'Firefox not installed (no /nonexistent/firefox-esr): apt-get install firefox-esr ' +
        '(or bash .ci/setup, which installs all that the tests need)',
    );
  } finally {
    if (saved === undefined) delete process.env.MHA_FIREFOX;
    else process.env.MHA_FIREFOX = saved;
  }
  // the runner: before anything runs (no make, no browser), exit 1 and that one line
  const run = spawnSync(process.execPath, ['tests/run.mjs', 'browser'], {
    cwd: repoRoot,
    env: gone,
    encoding: 'utf8',
  });
  assert.equal(run.status, 1);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /^npm run test:browser: Firefox not installed \(no \/nonexistent/);
  assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
  // a test file of the engines run alone: its process ends with the one line
  const file = spawnSync(
    process.execPath,
    ['--test', '--test-reporter=tap', 'tests/browser/worker.test.mjs'],
    { cwd: repoRoot, env: gone, encoding: 'utf8', timeout: 60_000 },
  );
  assert.notEqual(file.status, 0);
  const said = file.stdout.split('\n').filter((l) => /not installed/.test(l));
  assert.equal(said.length, 1, file.stdout);
  assert.match(said[0], /Firefox not installed .*apt-get install firefox-esr/);
  assert.doesNotMatch(file.stdout, /timed out|Timeout/);
});
