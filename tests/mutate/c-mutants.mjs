// C mutation testing: the one-line bugs of tests/mutate/c-mutants.json, applied one at a time to
// temporary COPIES of the repository (c/ itself is never edited); after each, the wasm (SIMD and
// scalar) and the native ASan tests are rebuilt and the C and Node suites of suites.mjs run until
// one fails. A mutant is killed when a suite fails (or times out) and survives when all pass.
//
//   node tests/mutate/c-mutants.mjs [--jobs 2] [--only id,id,...] [--keep] [--out FILE]
//                                   [--suites FILE,FILE,...] [--no-c-tests]
//   --suites / --no-c-tests run other Node suites / no C tests: to see which tests kill a mutant.
//
// Needs what `make wasm reference` needs (emcc, gcc, python3-numpy) and build/reference (made
// first if missing). Prints each mutant's result, the score and the survivors; writes the results
// as JSON to build/mutation/c-mutants.json. Exit status 1 if a mutant's `find` snippet does not
// occur exactly once in its file (refresh the list when c/ changes), or the unmutated baseline
// fails; surviving mutants do not change the exit status.

import { spawn, execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_SUITES, C_SUITES } from './suites.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LIST = join(repoRoot, 'tests', 'mutate', 'c-mutants.json');
const WASM_TARGETS = ['web/mha.wasm', 'build/mha-scalar.wasm'];
const ENV = {
  ...process.env,
  NODE_PATH: process.env.NODE_PATH ?? '/usr/share/nodejs',
  ASAN_OPTIONS: 'allocator_may_return_null=1:detect_leaks=1',
};

/** Runs a command; resolves { code, output, ms, timedOut } (never rejects). */
function run(cmd, args, { cwd, timeoutMs = 0 } = {}) {
  return new Promise((done) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd, env: ENV, detached: true });
    let output = '';
    const keep = (d) => {
      output = (output + d).slice(-20000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer =
      timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            try {
              // the suite's process group: only what this script started
              process.kill(-child.pid, 'SIGKILL');
            } catch {
              /* already gone */
            }
          }, timeoutMs)
        : null;
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      done({ code, output, ms: Date.now() - t0, timedOut });
    });
  });
}

/** Line number (1-based) of offset `at` in `text`. */
const lineOf = (text, at) => text.slice(0, at).split('\n').length;

/** The mutants of the list, each checked against the working tree: { ...m, line, error? }. */
export function loadMutants(only) {
  const { mutants } = JSON.parse(readFileSync(LIST, 'utf8'));
  const ids = new Set();
  return mutants
    .filter((m) => !only || only.includes(m.id))
    .map((m) => {
      if (ids.has(m.id)) return { ...m, error: `duplicate id ${m.id}` };
      ids.add(m.id);
      const path = join(repoRoot, m.file);
      if (!existsSync(path)) return { ...m, error: `${m.file} does not exist` };
      const text = readFileSync(path, 'utf8');
      const at = text.indexOf(m.find);
      if (at < 0) {
        return { ...m, error: `snippet not found in ${m.file}: ${JSON.stringify(m.find)}` };
      }
      if (text.indexOf(m.find, at + 1) >= 0) {
        return { ...m, error: `snippet occurs more than once in ${m.file}` };
      }
      if (m.find === m.replace) return { ...m, error: 'replace equals find' };
      return { ...m, line: lineOf(text, at) };
    });
}

/** A copy of the repository's files (tracked and new, not ignored) plus the NumPy fixtures. */
function copyRepo(dest) {
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && existsSync(join(repoRoot, f)) && f !== 'node_modules');
  for (const f of files) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    cpSync(join(repoRoot, f), join(dest, f), { preserveTimestamps: true });
  }
  cpSync(join(repoRoot, 'build', 'reference'), join(dest, 'build', 'reference'), {
    recursive: true,
    preserveTimestamps: true,
  });
  symlinkSync(realpathSync(join(repoRoot, 'node_modules')), join(dest, 'node_modules'));
}

function cSuitesFor(file) {
  return C_SUITES.filter((s) => !s.only || s.only.includes(file));
}

async function build(dir, targets) {
  return run('make', ['-s', '--no-print-directory', ...targets], { cwd: dir });
}

/**
 * Runs the C suites, then the Node suites, stopping at the first failure. Returns
 * { status: 'killed' | 'timeout' | 'survived', by?, output?, times }.
 */
async function runSuites(dir, cSuites, timeouts, nodeSuites = NODE_SUITES) {
  const times = {};
  for (const s of cSuites) {
    const r = await run(join(dir, s.target), s.args, { cwd: dir, timeoutMs: timeouts[s.target] });
    times[s.target] = r.ms;
    if (r.timedOut) return { status: 'timeout', by: s.target, times };
    if (r.code !== 0) return { status: 'killed', by: s.target, output: r.output, times };
  }
  for (const f of nodeSuites) {
    const r = await run(process.execPath, ['--test', '--test-reporter=dot', f], {
      cwd: dir,
      timeoutMs: timeouts[f],
    });
    times[f] = r.ms;
    if (r.timedOut) return { status: 'timeout', by: f, times };
    if (r.code !== 0) return { status: 'killed', by: f, output: r.output, times };
  }
  return { status: 'survived', times };
}

/** Tests one mutant in the copy `dir`, which is left as it was. */
async function testMutant(dir, m, timeouts, { nodeSuites, cTests }) {
  const path = join(dir, m.file);
  const original = readFileSync(path, 'utf8');
  const t0 = Date.now();
  try {
    writeFileSync(
      path,
      original.replace(m.find, () => m.replace),
    );
    const cSuites = cTests ? cSuitesFor(m.file) : [];
    const b = await build(dir, [...WASM_TARGETS, ...cSuites.map((s) => s.target)]);
    if (b.code !== 0) return { status: 'compile-error', output: b.output, ms: Date.now() - t0 };
    const r = await runSuites(dir, cSuites, timeouts, nodeSuites);
    return { ...r, ms: Date.now() - t0 };
  } finally {
    writeFileSync(path, original);
  }
}

function parseArgs(argv) {
  const o = {
    jobs: 2,
    only: null,
    keep: false,
    out: join(repoRoot, 'build/mutation/c-mutants.json'),
    nodeSuites: NODE_SUITES,
    cTests: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--jobs') o.jobs = Math.max(1, Number(argv[++i]));
    else if (a === '--only') o.only = argv[++i].split(',');
    else if (a === '--keep') o.keep = true;
    else if (a === '--out') o.out = resolve(argv[++i]);
    else if (a === '--suites') o.nodeSuites = argv[++i].split(',');
    else if (a === '--no-c-tests') o.cTests = false;
    else throw new Error(`c-mutants: unknown argument ${a}`);
  }
  return o;
}

const short = (s) => JSON.stringify(s.length > 70 ? `${s.slice(0, 67)}...` : s);

/** One line per mutant. */
export function describeMutant(m) {
  const where = m.line ? `${m.file}:${m.line}` : m.file;
  return `${where} ${m.id}: ${short(m.find)} -> ${short(m.replace)}`;
}

/** Runs every mutant of the list; returns { results, baselineMs, ms, errors }. */
export async function runCMutants({
  jobs = 2,
  only = null,
  keep = false,
  nodeSuites = NODE_SUITES,
  cTests = true,
  log = console.log,
} = {}) {
  const t0 = Date.now();
  const mutants = loadMutants(only);
  const errors = mutants.filter((m) => m.error);
  for (const m of errors) log(`ERROR ${m.id}: ${m.error}`);
  const todo = mutants.filter((m) => !m.error);
  for (const f of nodeSuites) {
    if (!existsSync(join(repoRoot, f))) throw new Error(`c-mutants: suite ${f} does not exist`);
  }
  if (!existsSync(join(repoRoot, 'build/reference/.done'))) {
    execFileSync('make', ['--no-print-directory', 'reference'], { cwd: repoRoot, env: ENV });
  }
  const root = mkdtempSync(join(tmpdir(), 'mha-c-mutants-'));
  try {
    // Baseline: the unmutated copy must build and pass everything; its times set the timeouts.
    const first = join(root, 'w0');
    copyRepo(first);
    const allC = C_SUITES.map((s) => s.target);
    const b = await build(first, [...WASM_TARGETS, ...allC]);
    if (b.code !== 0) throw new Error(`c-mutants: baseline build failed:\n${b.output}`);
    const base = await runSuites(first, cTests ? C_SUITES : [], {}, nodeSuites);
    if (base.status !== 'survived') {
      throw new Error(`c-mutants: the unmutated code fails ${base.by}:\n${base.output}`);
    }
    const baselineMs = Date.now() - t0;
    log(
      `baseline: build + ${Object.keys(base.times).length} suites pass (${(baselineMs / 1000).toFixed(0)} s)`,
    );
    const timeouts = {};
    for (const [k, ms] of Object.entries(base.times)) timeouts[k] = Math.max(60000, 5 * ms);

    const dirs = [first];
    for (let j = 1; j < Math.min(jobs, todo.length); j++) {
      const d = join(root, `w${j}`);
      cpSync(first, d, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });
      dirs.push(d);
    }
    const results = [];
    let next = 0;
    await Promise.all(
      dirs.map(async (dir) => {
        while (next < todo.length) {
          const m = todo[next++];
          const r = await testMutant(dir, m, timeouts, { nodeSuites, cTests });
          const res = { ...m, ...r };
          results.push(res);
          const by = r.by ? ` by ${r.by}` : '';
          log(`${r.status.padEnd(13)} ${describeMutant(m)}${by} (${(r.ms / 1000).toFixed(0)} s)`);
        }
      }),
    );
    const order = new Map(todo.map((m, i) => [m.id, i]));
    results.sort((a, b2) => order.get(a.id) - order.get(b2.id));
    return { results, errors, baselineMs, ms: Date.now() - t0 };
  } finally {
    if (keep) log(`copies kept in ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

/** { killed, timeout, survived, compileErrors, score } of C mutant results. */
export function scoreOf(results) {
  const n = (s) => results.filter((r) => r.status === s).length;
  const killed = n('killed'),
    timeout = n('timeout'),
    survived = n('survived');
  const valid = killed + timeout + survived;
  return {
    killed,
    timeout,
    survived,
    compileErrors: n('compile-error'),
    score: valid ? (100 * (killed + timeout)) / valid : NaN,
  };
}

export function printSummary({ results, errors, ms }, log = console.log) {
  const s = scoreOf(results);
  log(
    `C mutants: ${results.length + errors.length} in the list; killed ${s.killed}, timeout ${s.timeout}, survived ${s.survived}, compile errors ${s.compileErrors}, list errors ${errors.length}; score ${s.score.toFixed(1)} % (${(ms / 1000).toFixed(0)} s)`,
  );
  for (const r of results.filter((x) => x.status === 'survived')) {
    log(`  SURVIVED ${describeMutant(r)} -- ${r.bug}`);
  }
  for (const r of results.filter((x) => x.status === 'compile-error')) {
    log(`  COMPILE ERROR ${describeMutant(r)}\n${r.output.slice(-2000)}`);
  }
  for (const m of errors) log(`  LIST ERROR ${m.id}: ${m.error}`);
  return s;
}

export function writeResults(out, run_) {
  mkdirSync(dirname(out), { recursive: true });
  const slim = run_.results.map(({ output, ...r }) => ({
    ...r,
    failure: output ? output.slice(-1500) : undefined,
  }));
  writeFileSync(
    out,
    `${JSON.stringify({ ...run_, results: slim, score: scoreOf(run_.results) }, null, 2)}\n`,
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const opts = parseArgs(process.argv.slice(2));
  const r = await runCMutants(opts);
  printSummary(r);
  writeResults(opts.out, r);
  console.log(`results: ${opts.out}`);
  process.exitCode = r.errors.length ? 1 : 0;
}
