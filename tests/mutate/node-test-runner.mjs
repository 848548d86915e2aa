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
//   mutant run  only the tests reaching the mutant, file by file (the files that killed the
//               most mutants so far first), stopping at the first failing file (killed); a
//               run past Stryker's timeout, or a mutant hit more often than the hit limit (an
//               endless loop), is a timeout.
// A mutant run takes one of two paths per file, both through tests/mutate/warm-worker.mjs, which
// runs the tests it is given in that order (those that killed the most mutants first) and stops
// at the first failure:
//   warm    a worker that imported the file once runs the tests again with the mutant switched
//           on: no process start, no module loading. After a failure the failed test runs once
//           more with no mutant: if it fails again (the mutant left something behind in the
//           modules), the worker is replaced by a fresh one.
//   static  a mutant that the file's module-level code reaches gets a fresh worker, started with
//           the mutant on (it must be on while the modules load), used once.
// (A file the worker's node:test stand-in cannot run goes through `node --test-name-pattern`.)
// A test must therefore pass when run alone (tests/mutate/README.md), and again in one process.
//
// Options (stryker.config.mjs): nodeTest.testFiles, the files in the order to try them.
// The plugin object is written out plainly (kind, name, injectableClass, with typed-inject's
// string tokens), so nothing beyond @stryker-mutator/core itself is needed.

import { fork, spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const HOOK = new URL('./stryker-hook.mjs', import.meta.url).href;
const WORKER = new URL('./warm-worker.mjs', import.meta.url);
// the dry run's static mutants per test file, for the runner processes that did not do it
const STATIC_FILE = '.stryker-static-mutants.json';
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

/** One test file imported once in a worker process (warm-worker.mjs). */
class WarmWorker {
  constructor(file, env) {
    this.child = fork(WORKER, [file], { env, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    this.pending = null;
    this.ready = new Promise((done) => {
      this.pending = done;
    });
    this.child.on('message', (m) => this.#settle(m));
    this.child.on('exit', (code) => this.#settle({ exited: code ?? 'signal' }));
  }

  #settle(m) {
    const done = this.pending;
    this.pending = null;
    if (done) done(m);
    else if (m.exited !== undefined) this.dead = true;
  }

  /** Resolves the worker's greeting once its file is loaded, or { timedOut } past timeoutMs. */
  loaded(timeoutMs) {
    let timer;
    const late = new Promise((done) => {
      timer = setTimeout(() => done({ ready: false, timedOut: true }), timeoutMs);
    });
    return Promise.race([this.ready, late]).finally(() => clearTimeout(timer));
  }

  /** Resolves the worker's answer, { timedOut: true } past timeoutMs, or { exited } if it died. */
  run(request, timeoutMs) {
    return new Promise((done) => {
      const timer = setTimeout(() => {
        this.pending = null;
        this.kill();
        done({ timedOut: true });
      }, timeoutMs);
      this.pending = (m) => {
        clearTimeout(timer);
        done(m);
      };
      this.child.send(request);
    });
  }

  kill() {
    this.dead = true;
    try {
      this.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
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
    this.workers = new Map(); // file -> WarmWorker, or null when the file cannot run warm
    this.staticMutants = null; // file -> Set of mutant ids its module-level code reaches
    this.kills = new Map(); // file -> mutants it killed in this process: tried first
    this.testKills = new Map(); // "FILE#test" -> mutants it killed: run first in its file
  }

  async dispose() {
    for (const w of this.workers.values()) w?.kill();
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
    const statics = {};
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
      statics[file] = Object.keys(report.coverage.static ?? {});
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
    writeFileSync(STATIC_FILE, JSON.stringify(statics));
    return { status: 'complete', tests, mutantCoverage: { static: {}, perTest } };
  }

  // A mutant run may happen in another runner process than the dry run: everything it needs
  // comes from the test ids ("FILE#name") and the configured file order.
  async mutantRun({ activeMutant, testFilter, timeout, hitLimit }) {
    const deadline = Date.now() + timeout;
    let ran = 0;
    for (const file of this.#byKills()) {
      const names = testFilter
        ?.filter((id) => id.startsWith(`${file}#`))
        .map((id) => id.slice(file.length + 1));
      if (names && !names.length) continue;
      ran += names ? names.length : 1;
      const left = Math.max(1, deadline - Date.now());
      const t0 = Date.now();
      const request = { mutant: activeMutant.id, names: this.#byTestKills(file, names), hitLimit };
      const r = await this.#runFile(file, request, left);
      if (process.env.MUTATE_TRACE) {
        const path = this.#isStatic(file, activeMutant.id) ? 'static' : 'warm';
        const line = [activeMutant.id, file, path, names?.length ?? 'all'];
        appendFileSync(
          process.env.MUTATE_TRACE,
          `${[...line, r?.status ?? 'pass', Date.now() - t0].join('\t')}\n`,
        );
      }
      if (r?.status === 'killed') {
        this.kills.set(file, (this.kills.get(file) ?? 0) + 1);
        for (const id of r.killedBy) this.testKills.set(id, (this.testKills.get(id) ?? 0) + 1);
      }
      if (r) return { ...r, nrOfTests: ran };
    }
    return { status: 'survived', nrOfTests: ran };
  }

  /** One file's part of a mutant run: a verdict (killed, timeout) or null when it passed. */
  async #runFile(file, request, left) {
    const { mutant, names } = request;
    if (!names) return this.#runCold(file, names, request, left);
    if (!this.#isStatic(file, mutant)) {
      const warm = await this.#worker(file);
      if (warm) return this.#runWarm(file, warm, request, left);
      return this.#runCold(file, names, request, left);
    }
    // a static mutant: a fresh worker with the mutant on from its first line, used once
    const env = { __STRYKER_ACTIVE_MUTANT__: mutant, STRYKER_HIT_LIMIT: request.hitLimit };
    const fresh = new WarmWorker(file, this.#env(env));
    const hello = await fresh.loaded(left);
    if (!hello.ready) {
      fresh.kill();
      if (hello.timedOut) return { status: 'timeout', reason: `${file} timed out loading` };
      const reason = String(hello.reason ?? `exited ${hello.exited}`);
      if (reason.includes(HIT_LIMIT_MESSAGE)) {
        return { status: 'timeout', reason: `${file}: hit limit reached` };
      }
      if (reason.startsWith('import failed') || hello.exited !== undefined) {
        return { status: 'killed', killedBy: [file], failureMessage: reason };
      }
      return this.#runCold(file, names, request, left); // a file the shim cannot run
    }
    const r = await this.#runWarm(file, fresh, request, left, { once: true });
    fresh.kill();
    return r;
  }

  /** A file's tests, those that killed the most mutants so far first. */
  #byTestKills(file, names) {
    if (!names) return names;
    const k = (n) => this.testKills.get(`${file}#${n}`) ?? 0;
    return [...names].sort((a, b) => k(b) - k(a));
  }

  /** The files, those that killed the most mutants so far first (then in configured order). */
  #byKills() {
    const k = (f) => this.kills.get(f) ?? 0;
    return [...this.files].sort((a, b) => k(b) - k(a));
  }

  #isStatic(file, id) {
    if (!this.staticMutants) {
      const saved = existsSync(STATIC_FILE) ? JSON.parse(readFileSync(STATIC_FILE, 'utf8')) : {};
      this.staticMutants = new Map(Object.entries(saved).map(([f, ids]) => [f, new Set(ids)]));
    }
    // no dry run seen: every mutant counts as static (the cold path is always right)
    return this.staticMutants.get(file)?.has(id) ?? true;
  }

  /** The file's warm worker (started on first use), or null if the file cannot run warm. */
  async #worker(file) {
    let w = this.workers.get(file);
    if (w === null) return null;
    if (!w || w.dead) {
      w = new WarmWorker(file, this.#env({}));
      const hello = await w.loaded(120000);
      if (!hello.ready) {
        this.log.debug(`warm worker: ${file} runs cold: ${hello.reason ?? hello.exited}`);
        w.kill();
        this.workers.set(file, null);
        return null;
      }
      this.workers.set(file, w);
    }
    return w;
  }

  /** A verdict (killed, timeout) or null when the file's tests passed. */
  async #runWarm(file, worker, request, timeoutMs, { once = false } = {}) {
    const r = await worker.run(request, timeoutMs);
    if (r.timedOut) return { status: 'timeout', reason: `${file} timed out` };
    if (r.exited !== undefined) {
      worker.kill();
      const reason = `${file}: the test process exited (${r.exited})`;
      return { status: 'killed', killedBy: [file], failureMessage: reason };
    }
    if (!r.failed.length) return null;
    if (r.hitLimit) {
      worker.kill();
      return { status: 'timeout', reason: `${file}: hit limit reached` };
    }
    // the worker is kept if the failed test passes again with no mutant: the mutant left
    // nothing behind that this test sees; otherwise a fresh worker replaces it
    if (!once) {
      const again = await worker.run({ mutant: undefined, names: r.failed }, timeoutMs);
      if (again.timedOut || again.exited !== undefined || again.failed.length) worker.kill();
    }
    const killedBy = r.failed.map((n) => `${file}#${n}`);
    return { status: 'killed', killedBy, failureMessage: r.message };
  }

  async #runCold(file, names, { mutant, hitLimit }, timeoutMs) {
    const env = this.#env({ __STRYKER_ACTIVE_MUTANT__: mutant, STRYKER_HIT_LIMIT: hitLimit });
    const args = names ? [`--test-name-pattern=^(?:${names.map(escapeRegExp).join('|')})$`] : [];
    const r = await runFile(file, args, env, timeoutMs);
    if (r.output.includes(HIT_LIMIT_MESSAGE)) {
      return { status: 'timeout', reason: `${file}: hit limit reached` };
    }
    if (r.timedOut) return { status: 'timeout', reason: `${file} timed out` };
    if (r.code === 0) return null;
    const failed = failedNames(r.output).map((n) => `${file}#${n}`);
    return {
      status: 'killed',
      killedBy: failed.length ? failed : [file],
      failureMessage: failureOf(r.output),
    };
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
