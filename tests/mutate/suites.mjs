// The test suites a mutant must get past (tests/mutate/README.md): the Node suites (each file in
// its own process) and the native C tests. Shared by stryker.config.mjs (JS mutants) and
// tests/mutate/c-mutants.mjs (C mutants).
//
// Every Node test file under tests/ is one, but those in LEFT_OUT (slow, and they test something
// else); tests/mutate/suites.test.mjs checks that a new test file is in one list or the other.
// The first ones are listed roughly fastest first (a run stops at the first failing file); the
// rest follow in the order of their folders.

import { testFiles } from '../tiers.mjs';

/** Test files no mutant has to get past, and why. */
export const LEFT_OUT = Object.freeze({
  'tests/browser/': 'real browsers: 15 s of Chromium and more per file',
  'tests/bench/': 'benchmarks, not tests',
  'tests/check/mutants.test.mjs': "bench:check's generator (tests/bench/: not in the sandbox)",
  'tests/check/edit-cases.test.mjs': 'its notebooks come from tests/bench/ (not in the sandbox)',
  'tests/check/own-notebooks.test.mjs':
    'runs the notebooks of tests/notebooks/ (not in the sandbox)',
  'tests/bundler/': 'npm pack, then a Vite build of the packed tarball',
  'tests/package.test.mjs': 'npm pack + install',
  'tests/readme.test.mjs': "the README's examples and the commands of .ci/setup",
  'tests/types.test.mjs': 'tsc over the type declarations',
  'tests/tiers.test.mjs': 'the test tiers: it starts browser test files (the sandbox has none)',
  // (Stryker's sandbox has no tests/browser or tests/bench for it to look at)
  'tests/mutate/': "the mutation setup's own tests (npm test runs them)",
});

/** Node test files, relative to the repository root. */
export const NODE_SUITES = [
  'tests/reference.test.mjs',
  'tests/training.test.mjs',
  'tests/backward.test.mjs',
  'tests/rng.test.mjs',
  'tests/course.test.mjs',
  'tests/arrays.test.mjs',
  'tests/messages.test.mjs',
  'tests/api.test.mjs',
  'tests/badinput-matrix.test.mjs',
  'tests/abi.test.mjs',
  'tests/errors.test.mjs',
  'tests/model/text.test.mjs',
  'tests/model/settings.test.mjs',
  'tests/model/reductions.test.mjs',
  'tests/model/lessons.test.mjs',
  'tests/jobs/jobs.test.mjs',
  'tests/simd.test.mjs',
  'tests/gradcheck.test.mjs',
  'tests/memory.test.mjs',
  'tests/tensor-table.test.mjs',
  'tests/gradcheck-normrel.test.mjs',
  'tests/check/compare.test.mjs',
  'tests/check/pipeline.test.mjs',
  'tests/check/catalogue.test.mjs',
  'tests/check/formats.test.mjs',
  'tests/check/hostile.test.mjs',
  'tests/check/analyses.test.mjs',
  'tests/check/check.test.mjs',
  'tests/check/layouts-edges.test.mjs',
  'tests/check/layouts.test.mjs',
  'tests/check/training.test.mjs',
];

/** Every *.test.mjs under tests/ (paths from the repository root), in folder order. */
export const nodeTestFiles = () => testFiles();

/** Whether LEFT_OUT names this file (or its folder). */
export const leftOut = (path) =>
  Object.keys(LEFT_OUT).some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));

// every other test file, after the listed ones
for (const path of nodeTestFiles()) {
  if (!leftOut(path) && !NODE_SUITES.includes(path)) NODE_SUITES.push(path);
}

/**
 * The Node suites for mutants of web/*.js: all but tests/simd.test.mjs, which compares the SIMD
 * and scalar wasm builds through the same web/mha.js, so a JS mutant changes both sides alike.
 */
export const JS_SUITES = NODE_SUITES.filter((f) => f !== 'tests/simd.test.mjs');

/**
 * Native C tests (make targets and their command lines), fastest first. `only` limits a test to
 * mutants of the listed files: test_npmath calls nothing but c/npmath.c's functions, so a mutant
 * elsewhere cannot change its result (and it takes 10 s).
 */
export const C_SUITES = [
  { target: 'build/san/test_mha', args: [] },
  { target: 'build/san/test_rng', args: ['build/reference'] },
  { target: 'build/san/test_npmath', args: [], only: ['c/npmath.c'] },
];
