// The TypeScript types (web/mha.d.ts) stay honest: the typed usage file tests/types/usage.ts,
// importing the package by its name through its `exports` map, type-checks with `tsc --noEmit`
// (typescript is a pinned devDependency); compiled to JS it runs against the real module; and
// tests/types/bad-usage.ts, a file of wrong calls, FAILS the check with exactly the errors it
// marks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';

const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const typesDir = join(repoRoot, 'tests', 'types');

function runTsc(args) {
  const r = spawnSync(process.execPath, [tsc, '--pretty', 'false', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test('typescript is a pinned devDependency and installed', (t) => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  const range = pkg.devDependencies?.typescript;
  assert.match(
    range ?? '',
    /^\d+\.\d+\.\d+$/,
    `typescript must be pinned to an exact version, got ${range}`,
  );
  assert.ok(existsSync(tsc), `${tsc} is missing: run npm ci`);
  const version = execFileSync(process.execPath, [tsc, '--version'], { encoding: 'utf8' }).trim();
  assert.equal(version, `Version ${range}`);
  t.diagnostic(`tsc: ${version}`);
});

test(`tests/types/usage.ts, the whole API through the package name, type-checks (tsc --noEmit -p tests/types)`, (t) => {
  const r = runTsc(['--noEmit', '-p', typesDir, '--listFiles']);
  assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  // the types came from the package's own entry (exports "." -> types), not from somewhere else
  const files = r.out.split('\n').map((l) => l.trim());
  assert.ok(
    files.includes(join(repoRoot, 'web', 'mha.d.ts')),
    `web/mha.d.ts was not used:\n${r.out}`,
  );
  assert.ok(files.includes(join(typesDir, 'usage.ts')));
  t.diagnostic('tsc --noEmit -p tests/types: 0 errors (web/mha.d.ts via the exports map)');
});

test(`usage.ts compiled to JS runs against the real module: the types describe what the API returns`, (t) => {
  // compiled inside the repository, so `import 'mha-wasm'` resolves to the package itself
  const outDir = join(repoRoot, 'build', 'types-usage');
  rmSync(outDir, { recursive: true, force: true });
  const r = runTsc(['-p', typesDir, '--noEmit', 'false', '--outDir', outDir]);
  assert.equal(r.status, 0, `tsc failed:\n${r.out}`);
  const out = execFileSync(process.execPath, [join(outDir, 'usage.js')], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  assert.match(out, /^usage\.ts: ok \(mha-wasm \d+\.\d+\.\d+, 12 gradient-check rows pass\)$/m);
  t.diagnostic(out.trim());
});

test('tests/types/bad-usage.ts FAILS the check, with exactly the errors it marks', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-types-'));
  try {
    // the options of tests/types/tsconfig.json, on the wrong file
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: join(typesDir, 'tsconfig.json'),
        files: [join(typesDir, 'bad-usage.ts')],
      }),
    );
    const r = runTsc(['--noEmit', '-p', join(dir, 'tsconfig.json')]);
    assert.notEqual(r.status, 0, `tsc accepted bad-usage.ts:\n${r.out}`);

    const source = readFileSync(join(typesDir, 'bad-usage.ts'), 'utf8').split('\n');
    const expected = new Map(); // line -> TS code
    source.forEach((line, i) => {
      const m = line.match(/\/\/ expect-error (TS\d+)/);
      if (m) expected.set(i + 1, m[1]);
    });
    assert.ok(expected.size >= 8, `only ${expected.size} marked lines`);

    const errors = [...r.out.matchAll(/bad-usage\.ts\((\d+),\d+\): error (TS\d+): (.*)/g)].map(
      (m) => ({ line: Number(m[1]), code: m[2], message: m[3] }),
    );
    const unexpected = errors.filter((e) => expected.get(e.line) !== e.code);
    assert.deepEqual(unexpected, [], `errors on lines not marked with them:\n${r.out}`);
    const missed = [...expected].filter(
      ([line, code]) => !errors.some((e) => e.line === line && e.code === code),
    );
    assert.deepEqual(
      missed,
      [],
      `marked lines tsc accepted: ${missed.map(([l, c]) => `line ${l} (${c})`).join(', ')}\n${r.out}`,
    );
    // nothing else went wrong (a missing module or a broken config would show as other output)
    assert.equal(errors.length, expected.size, r.out);
    for (const e of errors) t.diagnostic(`line ${e.line}: ${e.code} ${e.message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`every member of the runtime objects is declared in web/mha.d.ts, and nothing more (no _helpers)`, async (t) => {
  const dts = readFileSync(join(repoRoot, 'web', 'mha.d.ts'), 'utf8');
  const block = (name) => {
    const m = dts.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`));
    assert.ok(m, `interface ${name} not found in web/mha.d.ts`);
    // member names at the start of a line of the interface's own indentation (two spaces, so not
    // the parameters of a signature Prettier wrapped): `name(`, `name:`, `readonly name:`
    return new Set(
      [...m[1].matchAll(/^ {2}(?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[(:]/gm)].map((x) => x[1]),
    );
  };
  const { loadMHA } = await import('../web/mha.js');
  const mha = await loadMHA();
  const layer = mha.createLayer({ C: 4, heads: 2 });
  const rng = mha.rng(1);
  const members = (obj) => {
    const names = new Set(Object.keys(obj));
    for (
      let p = Object.getPrototypeOf(obj);
      p && p !== Object.prototype;
      p = Object.getPrototypeOf(p)
    ) {
      for (const k of Object.getOwnPropertyNames(p)) names.add(k);
    }
    return [...names].filter((k) => k !== 'constructor').sort();
  };
  for (const [name, obj] of [
    ['MHA', mha],
    ['Layer', layer],
    ['Rng', rng],
  ]) {
    const declared = block(name);
    const runtime = members(obj);
    assert.deepEqual(
      runtime.filter((k) => !declared.has(k)),
      [],
      `${name}: members without types`,
    );
    assert.deepEqual(
      [...declared].filter((k) => !runtime.includes(k)).sort(),
      [],
      `${name}: types without members`,
    );
    t.diagnostic(`${name}: ${runtime.length} members, all typed`);
  }
  // the raw exports: every mha_* function the module exports is typed
  const raw = block('MHAExports');
  const rawMissing = Object.keys(mha.exports).filter((k) => k.startsWith('mha_') && !raw.has(k));
  assert.deepEqual(rawMissing, [], 'raw exports without types');
  rng.free();
  layer.free();
});
