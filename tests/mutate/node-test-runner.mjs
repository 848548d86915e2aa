// A StrykerJS test runner plugin for this repository's Node suites ('node-test' in
// stryker.config.mjs). No runner published for Stryker 10.1.1 fits: the tap runner's newest
// release (10.0.0) requires core 10.0.0 exactly, which npm ci would refuse next to core 10.1.1.
//
// Every test file runs in a fresh `node --import stryker-hook.mjs FILE` process (as `node --test`
// runs each file), so a mutant is active from the first line of every module (static and runtime
// mutants alike) and nothing leaks between runs. A Stryker "test" is one top-level test of a file,
// with the id "FILE#name"; the hook marks which one is running so that the instrumented code
// records coverage per test (module-level code counts for every test of its file).
//   dry run     every file once, unmutated, collecting which mutants each test reaches
//   mutant run  only the tests reaching the mutant (--test-name-pattern), file by file in the
//               configured order, stopping at the first failing file (killed); a run past Stryker's
//               timeout, or a mutant hit more often than the hit limit (an endless loop), is a
//               timeout.
// A test must therefore pass when run alone (tests/mutate/README.md).
//
// Options (stryker.config.mjs): nodeTest.testFiles, the files in the order to try them.
// The plugin object is written out plainly (kind, name, injectableClass, with typed-inject's
// string tokens), so nothing beyond @stryker-mutator/core itself is needed.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOOK = new URL('./stryker-hook.mjs', import.meta.url).href;
const HIT_LIMIT_MESSAGE = 'Stryker: Hit count limit reached';
const TEST_SUCCESS = 0; // TestStatus.Success of @stryker-mutator/api
const TEST_FAILED = 1; // TestStatus.Failed

/** Runs one test file; resolves { code, output, ms, timedOut } (never rejects). */
function runFile(file, args, env, timeoutMs) {
  return new Promise((done) => {
    const t0 = Date.now();
    const child = spawn(
      process.execPath,
      ['--import', HOOK, '--test-reporter=tap', ...args, file],
      {
        env,
        detached: true, // its own process group, so a timeout ends everything it started
      },
    );
    let output = '';
    const keep = (d) => {
      output = (output + d).slice(-20000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, output, ms: Date.now() - t0, timedOut });
    });
  });
}

/** The TAP lines of the first failure (what Stryker shows as the killing test's message). */
function failureOf(output) {
  const at = output.indexOf('not ok');
  return (at >= 0 ? output.slice(at) : output).slice(0, 1500);
}

/** Names of the failed top-level tests in TAP output. */
function failedNames(output) {
  return [...output.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1].replace(/\\#/g, '#'));
}

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

class NodeTestRunner {
  static inject = ['options', 'logger'];

  constructor(options, log) {
    this.files = options.nodeTest?.testFiles ?? [];
    this.log = log;
  }

  capabilities() {
    return { reloadEnvironment: true };
  }

  async init() {
    if (!this.files.length) throw new Error('node-test runner: nodeTest.testFiles is empty');
    const missing = this.files.filter((f) => !existsSync(f));
    if (missing.length) {
      throw new Error(`node-test runner: no such test file ${missing.join(', ')}`);
    }
    this.tmp = mkdtempSync(join(tmpdir(), 'stryker-node-test-'));
  }

  async dispose() {
    if (this.tmp) rmSync(this.tmp, { recursive: true, force: true });
  }

  /** The environment of a test process: ours, without Stryker variables, plus `extra`. */
  #env(extra) {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('STRYKER_')) delete env[k];
    delete env.__STRYKER_ACTIVE_MUTANT__;
    for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = String(v);
    return env;
  }

  async dryRun({ timeout }) {
    const tests = [];
    const perTest = {};
    const reportFile = join(this.tmp, 'report.json');
    const deadline = Date.now() + timeout;
    for (const file of this.files) {
      rmSync(reportFile, { force: true });
      const env = this.#env({ STRYKER_TEST_FILE: file, STRYKER_REPORT_FILE: reportFile });
      const r = await runFile(file, [], env, Math.max(1, deadline - Date.now()));
      if (r.timedOut) return { status: 'timeout', reason: `${file} took too long` };
      if (r.code !== 0 || !existsSync(reportFile)) {
        const failureMessage = failureOf(r.output);
        tests.push({
          id: file,
          name: file,
          status: TEST_FAILED,
          failureMessage,
          timeSpentMs: r.ms,
        });
        continue;
      }
      const report = JSON.parse(readFileSync(reportFile, 'utf8'));
      const ids = report.tests.length ? [...new Set(report.tests)] : [`${file}#`];
      // code that ran outside any test (module level) belongs to every test of the file: it
      // runs whichever of them is selected
      for (const id of ids) {
        perTest[id] = { ...report.coverage.static, ...report.coverage.perTest[id] };
        const timeSpentMs = r.ms / ids.length;
        tests.push({ id, name: id, fileName: file, status: TEST_SUCCESS, timeSpentMs });
      }
      this.log.debug(`dry run: ${file}: ${ids.length} tests, ${r.ms} ms`);
    }
    return { status: 'complete', tests, mutantCoverage: { static: {}, perTest } };
  }

  // A mutant run may happen in another runner process than the dry run: everything it needs
  // comes from the test ids ("FILE#name") and the configured file order.
  async mutantRun({ activeMutant, testFilter, timeout, hitLimit }) {
    const env = this.#env({
      __STRYKER_ACTIVE_MUTANT__: activeMutant.id,
      STRYKER_HIT_LIMIT: hitLimit,
    });
    const deadline = Date.now() + timeout;
    let ran = 0;
    for (const file of this.files) {
      const names = testFilter
        ?.filter((id) => id.startsWith(`${file}#`))
        .map((id) => id.slice(file.length + 1));
      if (names && !names.length) continue;
      const args = names ? [`--test-name-pattern=^(?:${names.map(escapeRegExp).join('|')})$`] : [];
      const r = await runFile(file, args, env, Math.max(1, deadline - Date.now()));
      ran += names ? names.length : 1;
      if (r.output.includes(HIT_LIMIT_MESSAGE)) {
        return { status: 'timeout', reason: `${file}: hit limit reached` };
      }
      if (r.timedOut) return { status: 'timeout', reason: `${file} timed out` };
      if (r.code !== 0) {
        const failed = failedNames(r.output).map((n) => `${file}#${n}`);
        return {
          status: 'killed',
          killedBy: failed.length ? failed : [file],
          failureMessage: failureOf(r.output),
          nrOfTests: ran,
        };
      }
    }
    return { status: 'survived', nrOfTests: ran };
  }
}

/** Stryker's plugin list (declareClassPlugin(PluginKind.TestRunner, 'node-test', ...)). */
export const strykerPlugins = [
  { kind: 'TestRunner', name: 'node-test', injectableClass: NodeTestRunner },
];

/** The runner's options, validated by Stryker. */
export const strykerValidationSchema = {
  $schema: 'http://json-schema.org/draft-07/schema',
  type: 'object',
  properties: {
    nodeTest: {
      type: 'object',
      properties: { testFiles: { type: 'array', items: { type: 'string' } } },
      additionalProperties: false,
    },
  },
};
