// The npm package: package.json's metadata, one version everywhere (package.json = mha.version =
// the header's MHA_VERSION_*), `npm pack` ships exactly the files a user needs, and the packed
// tarball, installed into an empty project on a PATH without emscripten (or anything but node),
// works through its public entry: forward, backward and a gradient check, equal bit for bit to the
// repository's own module, with its types resolving through the exports map.
//
// Needs web/mha.wasm (`make wasm`, which CI runs before the Node suites). No network: the tarball
// has no dependencies and is installed with --offline into a throwaway npm cache.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { loadMHA, npmCli, readHeader, repoRoot } from './helpers.mjs';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

// The files a user needs, and nothing else (npm adds package.json itself).
const EXPECTED_FILES = [
  'LICENSE',
  'README.md',
  'c/mha.h',
  'package.json',
  'web/mha.d.ts',
  'web/mha.js',
  'web/mha.wasm',
];

function run(file, args, opts) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw r.error;
  return r;
}

function ok(r, what) {
  assert.equal(r.status, 0, `${what} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

let work; // the temporary directory of this file
let npm;

before(() => {
  assert.ok(
    existsSync(join(repoRoot, 'web', 'mha.wasm')),
    'web/mha.wasm is missing: run `make wasm` first',
  );
  work = mkdtempSync(join(tmpdir(), 'mha-package-'));
  npm = npmCli();
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('package.json: exports map, types, files, engines, license, keywords', () => {
  assert.equal(pkg.name, 'mha-wasm');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.license, 'MIT');
  assert.match(pkg.engines?.node ?? '', />=\s*\d+/);
  assert.ok(
    Array.isArray(pkg.keywords) && pkg.keywords.length >= 3 && pkg.keywords.includes('webassembly'),
  );
  assert.deepEqual(pkg.exports, {
    '.': { types: './web/mha.d.ts', default: './web/mha.js' },
    './mha.wasm': './web/mha.wasm',
    './mha.h': './c/mha.h',
    './package.json': './package.json',
  });
  assert.equal(pkg.types, './web/mha.d.ts');
  assert.deepEqual([...pkg.files].sort(), [
    'LICENSE',
    'README.md',
    'c/mha.h',
    'web/mha.d.ts',
    'web/mha.js',
    'web/mha.wasm',
  ]);
  for (const f of pkg.files) {
    assert.ok(existsSync(join(repoRoot, f)), `${f} (in "files") does not exist`);
  }
  assert.match(
    readFileSync(join(repoRoot, 'LICENSE'), 'utf8'),
    /^MIT License\n\nCopyright \(c\) \d{4} the mha-wasm authors\n/,
  );
});

test('one version: package.json = mha.version (from C) = MHA_VERSION_* in c/mha.h', async (t) => {
  const header = readHeader();
  const [maj, min, pat] = ['MAJOR', 'MINOR', 'PATCH'].map((p) => {
    const m = header.match(new RegExp(`#define MHA_VERSION_${p} (\\d+)`));
    assert.ok(m, `MHA_VERSION_${p} not found in c/mha.h`);
    return m[1];
  });
  const mha = await loadMHA();
  assert.equal(mha.version, `${maj}.${min}.${pat}`);
  assert.equal(pkg.version, mha.version);
  t.diagnostic(`version ${pkg.version} (package.json, mha.version, MHA_VERSION_*)`);
});

let packed; // the `npm pack --dry-run --json` entry

// A bundler for the browser must meet no Node module on the way: web/mha.js reaches node:fs only
// at run time, in Node (tests/bundler/vite.test.mjs builds a real Vite app of the package).
test('web/mha.js: no import a bundler would resolve to a Node module', () => {
  const src = readFileSync(join(repoRoot, 'web', 'mha.js'), 'utf8');
  const imports = [
    ...src.matchAll(/\bimport\s*(?:[\w{}*\s,]+from\s*)?['"]([^'"]+)['"]/g),
    ...src.matchAll(/\bimport\s*\(\s*(?:\/\*.*?\*\/\s*)*['"`]([^'"`]+)['"`]/g),
  ].map((m) => m[1]);
  assert.deepEqual(imports, [], `web/mha.js imports ${imports.join(', ')}`);
});

test('npm pack --dry-run: exactly the files a user needs', (t) => {
  const out = ok(
    run(process.execPath, [npm, 'pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: repoRoot,
    }),
    'npm pack --dry-run',
  );
  [packed] = JSON.parse(out);
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(files, EXPECTED_FILES);
  assert.equal(packed.name, 'mha-wasm');
  assert.equal(packed.version, pkg.version);
  assert.equal(packed.entryCount, EXPECTED_FILES.length);
  const wasm = packed.files.find((f) => f.path === 'web/mha.wasm');
  assert.equal(wasm.size, statSync(join(repoRoot, 'web', 'mha.wasm')).size);
  for (const f of packed.files) t.diagnostic(`${String(f.size).padStart(7)} B  ${f.path}`);
  t.diagnostic(
    `${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1000).toFixed(1)} kB packed, ${(packed.unpackedSize / 1000).toFixed(1)} kB unpacked`,
  );
});

// What the consumer runs: the package's public entry only.
const CONSUMER = `
import { loadMHA } from 'mha-wasm';
import { readFileSync } from 'node:fs';

const resolved = {
  main: import.meta.resolve('mha-wasm'),
  wasm: import.meta.resolve('mha-wasm/mha.wasm'),
  header: import.meta.resolve('mha-wasm/mha.h'),
  packageJson: import.meta.resolve('mha-wasm/package.json'),
};
const pkg = JSON.parse(readFileSync(new URL(resolved.packageJson), 'utf8'));
let deepImport = 'allowed';
try { await import('mha-wasm/web/mha.js'); } catch (e) { deepImport = e.code; }

const mha = await loadMHA();                                  // default: mha.wasm beside mha.js
const mha2 = await loadMHA(readFileSync(new URL(resolved.wasm)));   // or the bytes, via the export
const B = 2, T = 3, C = 8, heads = 2;
const layer = mha.createLayer({ C, heads, seed: 42 });
const X = mha.standardNormal(B * T * C, { seed: 7 });
const G = mha.standardNormal(B * T * C, { seed: 8 });
const { Y, attention } = layer.forward(X, { B, T });
layer.zeroGrad();
const { dX } = layer.backward(G);
const dWq = Array.from(layer.grads.Wq);
const report = layer.gradcheck(X, { B, T, G });
layer.free();
console.log(JSON.stringify({
  version: mha.version, version2: mha2.version, packageVersion: pkg.version, resolved, deepImport,
  Y: Array.from(Y), attention: Array.from(attention), dX: Array.from(dX), dWq,
  report: report.map((r) => ({ tensor: r.tensor, checked: r.checked, size: r.size, maxRel: r.maxRel })),
  path: process.env.PATH,
}));
`;

const CONSUMER_TS = `
import { loadMHA, type GradcheckRow, type Layer } from 'mha-wasm';
const mha = await loadMHA();
const layer: Layer = mha.createLayer({ C: 8, heads: 2 });
const rows: GradcheckRow[] = layer.gradcheck(mha.standardNormal(24), { B: 1, T: 3 });
const worst: number = Math.max(...rows.map((r) => r.maxRel));
console.log(worst);
`;

test('the tarball in an empty project, no emcc on PATH: forward, backward, check', async (t) => {
  // 1. pack
  const dist = join(work, 'dist');
  mkdirSync(dist);
  const packOut = ok(
    run(process.execPath, [npm, 'pack', '--json', '--ignore-scripts', '--pack-destination', dist], {
      cwd: repoRoot,
    }),
    'npm pack',
  );
  const [{ filename }] = JSON.parse(packOut);
  const tarball = join(dist, filename);
  assert.ok(existsSync(tarball), tarball);

  // 2. a PATH with node and nothing else (no emcc, no compiler), a fresh HOME and npm cache
  const bin = join(work, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  const home = join(work, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.npmrc'), '');
  const env = {
    PATH: bin,
    HOME: home,
    npm_config_cache: join(work, 'npm-cache'),
    npm_config_userconfig: join(home, '.npmrc'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
  for (const dir of env.PATH.split(delimiter)) {
    for (const tool of ['emcc', 'emcc.py', 'clang', 'gcc', 'cc']) {
      assert.ok(!existsSync(join(dir, tool)), `${tool} on the consumer's PATH`);
    }
  }

  // 3. an empty project; install the tarball offline
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  ok(
    run(
      process.execPath,
      [npm, 'install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
      { cwd: app, env },
    ),
    'npm install <tarball>',
  );
  const installed = join(app, 'node_modules', 'mha-wasm');
  const listing = (dir) =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => relative(installed, join(d.parentPath ?? d.path, d.name)))
      .sort();
  assert.deepEqual(listing(installed), EXPECTED_FILES);
  assert.deepEqual(
    readFileSync(join(installed, 'web', 'mha.wasm')),
    readFileSync(join(repoRoot, 'web', 'mha.wasm')),
  );
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  assert.match(manifest.dependencies?.['mha-wasm'] ?? '', /mha-wasm-.*\.tgz$/);

  // 4. the program, through the package name only
  writeFileSync(join(app, 'main.mjs'), CONSUMER);
  const out = ok(run(process.execPath, ['main.mjs'], { cwd: app, env }), 'the consumer program');
  const r = JSON.parse(out);
  assert.equal(r.path, bin);
  assert.equal(r.version, pkg.version);
  assert.equal(r.version2, pkg.version);
  assert.equal(r.packageVersion, pkg.version);
  assert.equal(r.deepImport, 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'only the exports map is public');
  const inPackage = (url, path) =>
    assert.equal(realpathSync(new URL(url)), realpathSync(join(installed, path)));
  inPackage(r.resolved.main, 'web/mha.js');
  inPackage(r.resolved.wasm, 'web/mha.wasm');
  inPackage(r.resolved.header, 'c/mha.h');
  inPackage(r.resolved.packageJson, 'package.json');

  // forward, backward, gradient check: sane, and the same bits as the repository's own module
  const B = 2,
    T = 3,
    C = 8,
    heads = 2;
  assert.equal(r.Y.length, B * T * C);
  assert.equal(r.attention.length, B * heads * T * T);
  assert.equal(r.dX.length, B * T * C);
  assert.equal(r.dWq.length, C * C);
  for (const key of ['Y', 'attention', 'dX', 'dWq']) assert.ok(r[key].every(Number.isFinite), key);
  for (let row = 0; row < B * heads * T; row++) {
    const s = r.attention.slice(row * T, (row + 1) * T).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s - 1) < 1e-12, `attention row ${row} sums to ${s}`);
  }
  assert.equal(r.report.length, 12);
  for (const row of r.report) {
    assert.equal(row.checked, row.size, row.tensor);
    assert.ok(row.maxRel <= 1e-7, `${row.tensor}: max rel ${row.maxRel}`);
  }
  t.diagnostic(`installed ${filename} offline into an empty project, PATH=${bin} (node only)`);
  t.diagnostic(
    `gradient check through the package: ${r.report.map((x) => `${x.tensor} ${x.maxRel.toExponential(1)}`).join(', ')}`,
  );
  const mha = await loadMHA();
  const layer = mha.createLayer({ C, heads, seed: 42 });
  const X = mha.standardNormal(B * T * C, { seed: 7 });
  const G = mha.standardNormal(B * T * C, { seed: 8 });
  const { Y, attention } = layer.forward(X, { B, T });
  layer.zeroGrad();
  const { dX } = layer.backward(G);
  assert.deepEqual(r.Y, Array.from(Y));
  assert.deepEqual(r.attention, Array.from(attention));
  assert.deepEqual(r.dX, Array.from(dX));
  assert.deepEqual(r.dWq, Array.from(layer.grads.Wq));
  layer.free();

  // 5. the installed types resolve through the exports map ("types" condition) for a TS user
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  writeFileSync(join(app, 'check.ts'), CONSUMER_TS);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        types: [],
        noEmit: true,
        skipLibCheck: false,
      },
      files: ['check.ts'],
    }),
  );
  const tr = run(
    process.execPath,
    [tsc, '--pretty', 'false', '-p', join(app, 'tsconfig.json'), '--listFiles'],
    { cwd: app },
  );
  assert.equal(tr.status, 0, `tsc on the installed package failed:\n${tr.stdout}${tr.stderr}`);
  assert.ok(
    tr.stdout.split('\n').some((l) => l.trim() === join(installed, 'web', 'mha.d.ts')),
    `the installed mha.d.ts was not used:\n${tr.stdout}`,
  );
  t.diagnostic(
    `tsc on a TypeScript consumer of the installed package: 0 errors (types from ${relative(app, join(installed, 'web', 'mha.d.ts'))})`,
  );
});
