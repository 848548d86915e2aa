// Preloaded (node --import) into every test process that tests/mutate/node-test-runner.mjs starts:
// sets up Stryker's namespace before any instrumented module runs, marks which top-level test is
// running (so the instrumented code records coverage per test), and writes what it collected
// when the process exits.
//
//   __STRYKER_ACTIVE_MUTANT__   the id of the mutant to switch on (absent: none, the dry run)
//   STRYKER_HIT_LIMIT           stop a mutant that loops: the instrumented code throws after that
//                               many hits of the active mutant
//   STRYKER_TEST_FILE           the test file (the prefix of the test ids, "FILE#test name")
//   STRYKER_REPORT_FILE         where to write { coverage: { static, perTest }, tests: [ids] }

import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach } from 'node:test';

const ns = (globalThis.__stryker__ ??= {});
const env = process.env;
if (env.__STRYKER_ACTIVE_MUTANT__) ns.activeMutant = env.__STRYKER_ACTIVE_MUTANT__;
if (env.STRYKER_HIT_LIMIT) {
  ns.hitLimit = Number(env.STRYKER_HIT_LIMIT);
  ns.hitCount = 0;
}

// A top-level test and its subtests count as one test; module code outside any test is static.
const tests = [];
let current = null;
beforeEach((t) => {
  if (current !== null) return; // a subtest of the running test
  current = t;
  ns.currentTestId = `${env.STRYKER_TEST_FILE}#${t.name}`;
  tests.push(ns.currentTestId);
});
afterEach((t) => {
  if (t !== current) return;
  current = null;
  ns.currentTestId = undefined;
});

if (env.STRYKER_REPORT_FILE) {
  process.on('exit', () => {
    const coverage = ns.mutantCoverage ?? { static: {}, perTest: {} };
    writeFileSync(env.STRYKER_REPORT_FILE, JSON.stringify({ coverage, tests }));
  });
}
