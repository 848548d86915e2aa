// The test suites a mutant must get past (tests/mutate/README.md): the Node suites (each file in
// its own process) and the native C tests. Shared by stryker.config.mjs (JS mutants) and
// tests/mutate/c-mutants.mjs (C mutants).
//
// Left out, because they are slow and test something else: tests/browser (15 s of Chromium),
// tests/bench, tests/package.test.mjs (npm pack + install), tests/readme.test.mjs (the README's
// examples), tests/types.test.mjs (tsc). Files are listed roughly fastest first: a run stops at the
// first failing file.

import { readdirSync } from 'node:fs';

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
  'tests/check/search.test.mjs',
  'tests/check/catalogue.test.mjs',
  'tests/check/formats.test.mjs',
  'tests/check/hostile.test.mjs',
  'tests/check/analyses.test.mjs',
  'tests/check/check.test.mjs',
  'tests/check/layouts-edges.test.mjs',
  'tests/check/layouts.test.mjs',
  'tests/check/training.test.mjs',
];
// every test file of tests/model/ (the DOM-free page code), the listed ones first
for (const f of readdirSync(new URL('../model/', import.meta.url)).sort()) {
  const path = `tests/model/${f}`;
  if (f.endsWith('.test.mjs') && !NODE_SUITES.includes(path)) NODE_SUITES.push(path);
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
