// tiers.mjs - the test tiers: which *.test.mjs files each command runs (docs/testing.md#tiers).
// The one list of them; tests/run.mjs runs a tier, tests/tiers.test.mjs checks the split, and
// tests/mutate/suites.mjs takes the test files from here.
//
//   npm test               tier 'node'     the Node tests: the wasm exports, the model, the
//                                          notebook check, the NumPy cross-checks; no browser
//   npm run test:browser   tier 'browser'  the real-browser suites (Chromium, Firefox, WebKit)
//   (make test-coretypes)  tier 'numpy'    the Node tests that read NumPy's numbers, run again
//                                          under each OpenBLAS kernel (tests/run.mjs coretypes)
//   make test              all of them, after lint, the C tests and a short fuzz run
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The folders whose tests drive a real browser, and the Debian packages each needs: a browser
 * test without its browser fails at once with one line naming the package (tests/run.mjs and
 * tests/browser/browser.mjs), never a stack of timeouts.
 */
export const BROWSER_FOLDERS = Object.freeze(['tests/browser/', 'tests/bundler/']);

// The first MiniBrowser of WebKitGTK where Debian puts it (/usr/lib/<triplet>/webkit2gtk-4.1/)
function miniBrowser() {
  if (process.env.MHA_MINIBROWSER) return process.env.MHA_MINIBROWSER;
  const lib = '/usr/lib';
  const found = (existsSync(lib) ? readdirSync(lib) : [])
    .map((d) => join(lib, d, 'webkit2gtk-4.1', 'MiniBrowser'))
    .find((f) => existsSync(f));
  return found ?? '/usr/lib/<triplet>/webkit2gtk-4.1/MiniBrowser';
}

/** The browsers of the browser tier: the files each needs (env overrides), and its packages. */
export const BROWSERS = Object.freeze({
  Chromium: { files: () => [process.env.MHA_CHROMIUM || '/usr/bin/chromium'], apt: 'chromium' },
  Firefox: { files: () => [process.env.MHA_FIREFOX || '/usr/bin/firefox-esr'], apt: 'firefox-esr' },
  WebKit: {
    files: () => [
      process.env.MHA_WEBKIT_DRIVER || '/usr/bin/WebKitWebDriver',
      process.env.MHA_XVFB || '/usr/bin/Xvfb',
      miniBrowser(),
    ],
    apt: 'webkit2gtk-driver xvfb',
  },
});

/**
 * One line saying which of `names` (keys of BROWSERS) are not installed and what to install,
 * or null when all are.
 */
export function missingBrowsers(names = Object.keys(BROWSERS)) {
  const gone = names.filter((n) => BROWSERS[n].files().some((f) => !existsSync(f)));
  if (!gone.length) return null;
  const files = gone.flatMap((n) => BROWSERS[n].files().filter((f) => !existsSync(f)));
  return (
    `${gone.join(', ')} not installed (no ${files.join(', ')}): ` +
    `apt-get install ${gone.map((n) => BROWSERS[n].apt).join(' ')} ` +
    '(or bash .ci/setup, which installs all that the tests need)'
  );
}

/**
 * For a browser test's module: unless `names` are all installed, print the one line of
 * missingBrowsers and exit 1 at once, before any test can start a browser and time out.
 */
export function requireBrowsers(names) {
  const line = missingBrowsers(names);
  if (!line) return;
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

/** Every *.test.mjs under `dir` (paths from the repository root), in folder order. */
export function testFiles(dir = 'tests') {
  const out = [];
  const entries = readdirSync(join(root, dir), { withFileTypes: true });
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...testFiles(path));
    else if (e.name.endsWith('.test.mjs')) out.push(path);
  }
  return out;
}

export const isBrowserTest = (path) => BROWSER_FOLDERS.some((d) => path.startsWith(d));

// What makes a file read NumPy's numbers: the fixtures of tests/reference/*.py
// (build/reference), or python3 run by the test itself. tests/helpers.mjs defines these for
// everyone and this file names them, so neither is followed; the other local modules a test
// imports are.
const NUMPY_USE = /\breferenceDir\(|\bloadFixture\(|\bloadPageFixture\(|\bPYTHON\b|python3/;
const NOT_FOLLOWED = new Set(['tests/helpers.mjs', 'tests/tiers.mjs']);

/** The local modules (under tests/) that `path` imports, '/'-separated from the root. */
function localImports(path) {
  const text = readFileSync(join(root, path), 'utf8');
  return [...text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+\.mjs)'/g)]
    .map((m) =>
      relative(root, normalize(join(root, dirname(path), m[1])))
        .split('\\')
        .join('/'),
    )
    .filter((p) => p.startsWith('tests/') && !NOT_FOLLOWED.has(p));
}

/** Whether the test file `path` (or a local module it imports) reads numbers NumPy computed. */
export function readsNumpy(path, seen = new Set()) {
  if (seen.has(path)) return false;
  seen.add(path);
  // (comments left out: a file that only speaks of NumPy does not read it)
  const code = readFileSync(join(root, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  if (NUMPY_USE.test(code)) return true;
  return localImports(path).some((p) => readsNumpy(p, seen));
}

/** The CPU's feature flags (Linux), for the OpenBLAS kernels it can run. */
function cpuFlags() {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m);
    return new Set(line ? line[1].trim().split(/\s+/) : []);
  } catch {
    return new Set();
  }
}

/**
 * OpenBLAS kernels to try, and why one is left out: each must run on this CPU (a kernel that
 * needs AVX-512 on a CPU without it stops with an illegal instruction, or falls back).
 */
export function coretypes(flags = cpuFlags()) {
  const has = (...f) => f.every((x) => flags.has(x));
  return [
    { core: 'Prescott', runs: has('pni'), needs: 'SSE3 (pni)' },
    { core: 'Haswell', runs: has('avx2', 'fma'), needs: 'AVX2 and FMA' },
    {
      core: 'SkylakeX',
      runs: has('avx512f', 'avx512bw', 'avx512dq', 'avx512vl'),
      needs: 'AVX-512 (F, BW, DQ, VL)',
    },
  ];
}

/** The tiers: name -> { command, what, files() }. */
export const TIERS = Object.freeze({
  node: {
    command: 'npm test',
    what: 'the Node tests (wasm exports, model, notebook check, NumPy cross-checks)',
    files: () => testFiles().filter((f) => !isBrowserTest(f)),
  },
  browser: {
    command: 'npm run test:browser',
    what: 'the browser suites (Chromium, Firefox, WebKit)',
    files: () => testFiles().filter(isBrowserTest),
  },
  numpy: {
    command: 'node tests/run.mjs numpy',
    what: "the Node tests that read NumPy's numbers",
    files: () => testFiles().filter((f) => !isBrowserTest(f) && readsNumpy(f)),
  },
});
