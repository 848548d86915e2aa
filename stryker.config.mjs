// StrykerJS: mutation testing of web/'s DOM-free modules against the Node suites. Run through
// `npm run mutate` (tests/mutate/mutate.mjs: this, then the C mutants of c-mutants.json);
// `npx stryker run` runs this part alone (Node >= 22). CI runs `npm run mutate -- --smoke`.
import { JS_SUITES } from './tests/mutate/suites.mjs';

/** The modules whose mutants are tested: the engine and the DOM-free layers (model, jobs). */
export const MUTATE = [
  'web/mha.js',
  'web/check.js',
  'web/check/**/*.js',
  'web/io/**/*.js',
  'web/model/**/*.js',
  '!web/model/scripts/sources.js', // generated: the text of the .py files
  'web/jobs/**/*.js',
];

export default {
  mutate: MUTATE,
  // tests/mutate/node-test-runner.mjs: each test file in its own Node process, coverage per test
  plugins: ['./tests/mutate/node-test-runner.mjs'],
  testRunner: 'node-test',
  nodeTest: { testFiles: JS_SUITES },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // a loaded machine must not turn a slow test file into a "timeout" (which counts as killed)
  timeoutFactor: 3,
  timeoutMS: 20000,
  // the dry run of every suite (about 2.5 min alone; more on a loaded machine) may take its time
  dryRunTimeoutMinutes: 15,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'build/mutation/stryker.json' },
  htmlReporter: { fileName: 'build/mutation/stryker.html' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: 'build/stryker-tmp',
  // no TypeScript checker runs: leave the sandbox's files as they are (by default Stryker puts
  // `// @ts-nocheck` on top of each, and the test that web/model/scripts/sources.js is what the
  // .py files give would then fail in the dry run)
  disableTypeChecks: false,
  // every result kept: the next run tests only the mutants whose code or tests changed
  // (npm run mutate -- --force starts again)
  incremental: true,
  incrementalFile: 'build/mutation/incremental.json',
  // the sandbox needs the wasm builds and the NumPy fixtures, nothing else from build/
  ignorePatterns: [
    '/build/*',
    '!/build/reference',
    '!/build/mha-scalar.wasm',
    '/tests/browser',
    // (but the figures' expected values, which tests/model/checkpoints.test.mjs reads)
    '!/tests/browser/expected.mjs',
    '/tests/bench',
    '/tests/fuzz',
    '/test-results',
  ],
  thresholds: { high: 90, low: 80 },
};
