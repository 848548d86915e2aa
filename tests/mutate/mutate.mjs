// `npm run mutate`: mutation testing of the Node and C suites (tests/mutate/README.md).
//
//   npm run mutate                      both parts: StrykerJS on web/'s DOM-free modules, then the
//                                       C mutants of tests/mutate/c-mutants.json
//   npm run mutate -- --js-only | --c-only | --jobs N
//   npm run mutate -- --js-only --mutate 'web/check/analyses/**/*.js'   (repeatable): the JS
//                                       mutants of these files only (a part of the tree in a
//                                       run that fits a working session)
//
// Prints each part's score, the combined score and every surviving mutant (file:line, mutation);
// survivors listed in tests/mutate/equivalent-mutants.json (with the reason they cannot be
// killed) are shown apart and left out of the "adjusted" scores. Reports: build/mutation/
// (stryker.html, stryker.json, c-mutants.json). Not part of CI: about 22 minutes on 2 cores.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runCMutants, printSummary, writeResults, scoreOf } from './c-mutants.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(repoRoot, 'build', 'mutation');
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

function parseArgs(argv) {
  const o = { js: true, c: true, jobs: 2, mutate: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--mutate') o.mutate.push(argv[++i]);
    else if (argv[i] === '--js-only') o.c = false;
    else if (argv[i] === '--c-only') o.js = false;
    else if (argv[i] === '--jobs') o.jobs = Number(argv[++i]);
    else throw new Error(`mutate: unknown argument ${argv[i]}`);
  }
  return o;
}

const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)} %` : 'n/a');

/**
 * StrykerJS, configured by stryker.config.mjs. Stryker 10's command line refuses Node < 22
 * (its package says engines >= 22); its engine runs on Node 20, so the Stryker class is loaded
 * from its file directly, which skips that check.
 */
async function runStryker(mutate) {
  const file = join(repoRoot, 'node_modules/@stryker-mutator/core/dist/src/stryker.js');
  const { Stryker } = await import(pathToFileURL(file).href);
  await new Stryker(mutate.length ? { mutate } : {}).runMutationTest();
  return JSON.parse(readFileSync(join(OUT, 'stryker.json'), 'utf8'));
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
    const mutants = jsMutants(await runStryker(opts.mutate), loadEquivalents());
    js = printJs(mutants, Date.now() - t);
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
