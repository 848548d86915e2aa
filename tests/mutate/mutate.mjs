// `npm run mutate`: mutation testing of the Node and C suites (tests/mutate/README.md).
//
//   npm run mutate                      both parts: StrykerJS on web/'s DOM-free modules, then the
//                                       C mutants of tests/mutate/c-mutants.json
//   npm run mutate -- --js-only | --c-only | --jobs N
//   npm run mutate -- web/check/analyses/ web/model/settings.js   the JS mutants of these
//                                       files or folders only (same as --js-only --mutate PATH
//                                       for each; globs work too)
//   npm run mutate -- --smoke           what CI runs: the dry run of every JS suite, then the
//                                       mutants of SMOKE_FILE; fails unless each is detected
//   npm run mutate -- --force           forget the last run (build/mutation/incremental.json)
//
// Incremental: a run keeps every result in build/mutation/incremental.json and the next run
// tests again only the mutants whose code or covering tests changed (Stryker's incremental
// mode), so after the first full run a change costs minutes, not hours.
//
// Prints each part's score, the combined score and every surviving mutant (file:line, mutation);
// survivors listed in tests/mutate/equivalent-mutants.json (with the reason they cannot be
// killed) are shown apart and left out of the "adjusted" scores. Reports: build/mutation/
// (stryker.html, stryker.json, c-mutants.json). CI runs only --smoke (make mutate-smoke).

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runCMutants, printSummary, writeResults, scoreOf } from './c-mutants.mjs';
import { MUTATE } from '../../stryker.config.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(repoRoot, 'build', 'mutation');
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** CI's smoke run: a small module whose every mutant the suites detect (100 % when measured). */
const SMOKE_FILE = 'web/io/crc32.js';

/** A path given on the command line as Stryker's mutate pattern: a folder means its .js files. */
function mutatePattern(path) {
  if (/[*?{]/.test(path) || path.endsWith('.js')) return path;
  return `${path.replace(/\/+$/, '')}/**/*.js`;
}

function parseArgs(argv) {
  const o = { js: true, c: true, jobs: 2, mutate: [], smoke: false, force: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--mutate') o.mutate.push(mutatePattern(argv[++i]));
    else if (a === '--js-only') o.c = false;
    else if (a === '--c-only') o.js = false;
    else if (a === '--jobs') o.jobs = Number(argv[++i]);
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--force') o.force = true;
    else if (!a.startsWith('-') && existsSync(a.replace(/[*?{].*$/, '') || '.')) {
      o.mutate.push(mutatePattern(a));
    } else throw new Error(`mutate: unknown argument ${a}`);
  }
  if (o.mutate.length) o.c = false; // paths name JS files: the JS part only
  if (o.smoke) Object.assign(o, { c: false, mutate: [SMOKE_FILE], incremental: false });
  return o;
}

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)} %` : 'n/a');

/**
 * StrykerJS, configured by stryker.config.mjs. Stryker 10's command line refuses Node < 22
 * (its package says engines >= 22); its engine runs on Node 20, so the Stryker class is loaded
 * from its file directly, which skips that check.
 */
async function runStryker({ mutate, force, incremental = true }) {
  const file = join(repoRoot, 'node_modules/@stryker-mutator/core/dist/src/stryker.js');
  const { Stryker } = await import(pathToFileURL(file).href);
  const options = { incremental, force };
  // paths given: those, still without what the config leaves out (its '!' patterns: the
  // generated web/model/scripts/sources.js, whose test compares it with the .py files)
  if (mutate.length) options.mutate = [...mutate, ...MUTATE.filter((p) => p.startsWith('!'))];
  await new Stryker(options).runMutationTest();
  return JSON.parse(readFileSync(join(OUT, 'stryker.json'), 'utf8'));
}

/**
 * The smoke run's verdict: Stryker's dry run passed (else it threw before this), at least one
 * mutant of SMOKE_FILE was made, and every one was detected. Throws otherwise.
 */
function checkSmoke(mutants, t) {
  const mine = mutants.filter((m) => m.file === SMOKE_FILE);
  if (!mine.length) throw new Error(`mutate --smoke: no mutant of ${SMOKE_FILE}`);
  if (t.errors) throw new Error(`mutate --smoke: ${t.errors} mutants ended in an error`);
  if (t.undetected) {
    throw new Error(`mutate --smoke: ${t.undetected} mutants of ${SMOKE_FILE} went undetected`);
  }
  console.log(`smoke: ${mine.length} mutants of ${SMOKE_FILE}, every one detected`);
}

/** Known equivalent mutants: { file, code (the source line, trimmed), mutator, replacement }. */
function loadEquivalents() {
  const path = join(repoRoot, 'tests', 'mutate', 'equivalent-mutants.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).mutants : [];
}

/** The JS mutants of Stryker's JSON report, each with its source line and equivalence reason. */
function jsMutants(report, equivalents) {
  const out = [];
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    for (const m of mutants) {
      const code = lines[m.location.start.line - 1].trim();
      const eq = equivalents.find(
        (e) =>
          e.file === file &&
          e.mutator === m.mutatorName &&
          e.replacement === m.replacement &&
          e.code === code,
      );
      out.push({ ...m, file, code, equivalent: eq?.reason });
    }
  }
  return out;
}

function tally(mutants) {
  const n = (pred) => mutants.filter(pred).length;
  const detected = n((m) => DETECTED.has(m.status));
  const undetected = n((m) => UNDETECTED.has(m.status));
  const equivalent = n((m) => UNDETECTED.has(m.status) && m.equivalent);
  return { detected, undetected, equivalent, errors: n((m) => /Error$/.test(m.status)) };
}

function printJs(mutants, ms) {
  const t = tally(mutants);
  const by = (s) => mutants.filter((m) => m.status === s).length;
  console.log(
    `\nJS (StrykerJS): ${mutants.length} mutants; killed ${by('Killed')}, timeout ${by('Timeout')}, survived ${by('Survived')}, no coverage ${by('NoCoverage')}, errors ${t.errors}; score ${pct(t.detected, t.detected + t.undetected)}, adjusted (without ${t.equivalent} equivalent) ${pct(t.detected, t.detected + t.undetected - t.equivalent)} (${(ms / 60000).toFixed(1)} min)`,
  );
  for (const m of mutants.filter((x) => UNDETECTED.has(x.status))) {
    const where = `${m.file}:${m.location.start.line}:${m.location.start.column}`;
    const tag = m.equivalent ? `EQUIVALENT (${m.equivalent})` : m.status.toUpperCase();
    console.log(`  ${tag} ${where} ${m.mutatorName}: ${m.code}  ->  ${m.replacement}`);
  }
  return t;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  process.chdir(repoRoot);
  const t0 = Date.now();
  // the builds the suites need (the Stryker sandbox and the C copies start from them)
  execFileSync('make', ['--no-print-directory', 'wasm', 'reference'], { stdio: 'inherit' });
  let js = null,
    c = null;
  if (opts.js) {
    const t = Date.now();
    const mutants = jsMutants(await runStryker(opts), loadEquivalents());
    js = printJs(mutants, Date.now() - t);
    if (opts.smoke) checkSmoke(mutants, js);
  }
  if (opts.c) {
    const run = await runCMutants({ jobs: opts.jobs });
    console.log('');
    printSummary(run);
    writeResults(join(OUT, 'c-mutants.json'), run);
    const s = scoreOf(run.results);
    c = {
      detected: s.killed + s.timeout,
      undetected: s.survived,
      equivalent: 0,
      listErrors: run.errors.length,
    };
  }
  if (js && c) {
    const d = js.detected + c.detected,
      u = js.undetected + c.undetected;
    console.log(
      `\ncombined: ${d} of ${d + u} mutants detected, score ${pct(d, d + u)}; adjusted (without equivalent mutants) ${pct(d, d + u - js.equivalent - c.equivalent)}`,
    );
  }
  console.log(`total time ${((Date.now() - t0) / 60000).toFixed(1)} min; reports in ${OUT}`);
  if (c?.listErrors) process.exitCode = 1;
}

await main();
