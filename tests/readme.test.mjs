// The README's API examples cannot rot: the first ```js block of "## JS API" runs as a module
// (importing the package by its name, which resolves to this repository through package.json's
// exports map), and the first ```c block of "## C API" compiles against the native library
// (`make lib`) and runs. Both must succeed, print sane values, and agree with each other: they
// use the same seeds, so the wasm and the native build must print the same numbers. It also runs
// `make demo`, which the C API section documents.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './helpers.mjs';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** The first ```lang block of the `## heading` section (up to the next `## `). */
function firstBlock(heading, lang) {
  const start = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `README.md has no "## ${heading}" section`);
  const rest = readme.slice(start + 1);
  const next = rest.indexOf('\n## ');
  const section = next < 0 ? rest : rest.slice(0, next);
  const m = section.match(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm'));
  assert.ok(m, `no \`\`\`${lang} block under "## ${heading}"`);
  return m[1];
}

function run(file, args, opts = {}) {
  const r = spawnSync(file, args, {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    ...opts,
  });
  if (r.error) throw r.error;
  assert.equal(
    r.status,
    0,
    `${file} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`,
  );
  return r.stdout;
}

// Both examples print: Y[0], dX[0], the scores shape, one gradient-check row per tensor, the loss
// before the first and the last training step, and the version.
function parseOutput(out, what) {
  const num = (re) => {
    const m = out.match(re);
    assert.ok(m, `${what}: no match for ${re} in:\n${out}`);
    return Number(m[1]);
  };
  const rows = [...out.matchAll(/^(\w+)\s+checked\s+(\d+)\s+max rel (\S+)$/gm)].map((m) => ({
    tensor: m[1],
    checked: Number(m[2]),
    maxRel: Number(m[3]),
  }));
  const loss = out.match(/^loss (\S+) -> (\S+)$/m);
  assert.ok(loss, `${what}: no loss line in:\n${out}`);
  const shape = out.match(/^scores: \(([\d, ]+)\)$/m);
  assert.ok(shape, `${what}: no scores shape in:\n${out}`);
  return {
    Y0: num(/Y\[0\] = (-?\d+\.\d+)/),
    dX0: num(/dX\[0\] = (-?\d+\.\d+)/),
    scores: shape[1].split(', ').map(Number),
    rows,
    loss0: Number(loss[1]),
    loss9: Number(loss[2]),
    version: out.match(/^mha-wasm (\d+\.\d+\.\d+)$/m)?.[1],
  };
}

function assertSane(r, what) {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(r.version, pkg.version, `${what}: version`);
  assert.ok(Number.isFinite(r.Y0) && Number.isFinite(r.dX0), `${what}: Y[0], dX[0]`);
  assert.deepEqual(r.scores, [2, 4, 6, 6], `${what}: scores shape`);
  // the course's gradient check: every entry of 12 tensors, all within 1e-7
  assert.deepEqual(
    r.rows.map((x) => x.tensor),
    ['Wq', 'Wk', 'Wv', 'Wo', 'X', 'Q', 'K', 'V', 'scores', 'att', 'headout', 'concat'],
    `${what}: report rows`,
  );
  assert.equal(
    r.rows.reduce((a, x) => a + x.checked, 0),
    21568,
    `${what}: entries checked`,
  );
  for (const x of r.rows) assert.ok(x.maxRel <= 1e-7, `${what}: ${x.tensor} max rel ${x.maxRel}`);
  assert.ok(r.loss9 < r.loss0, `${what}: training lowers the loss (${r.loss0} -> ${r.loss9})`);
}

let jsResult;

test('README "## JS API": the example is a complete program that runs', (t) => {
  const code = firstBlock('JS API', 'js');
  for (const call of [
    'loadMHA(',
    'createLayer(',
    '.forward(',
    '.backward(',
    '.gradcheck(',
    '.train(',
    '.free()',
  ]) {
    assert.ok(code.includes(call), `the JS example does not call ${call}`);
  }
  // Written inside the repository: `import ... from 'mha-wasm'` resolves to this package through
  // its own exports map (a './web/mha.js' import is pointed at the file as well).
  const dir = join(repoRoot, 'build', 'readme');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'example.mjs');
  writeFileSync(
    file,
    code.replaceAll("'./web/mha.js'", `'${pathToFileURL(join(repoRoot, 'web', 'mha.js')).href}'`),
  );
  const out = run(process.execPath, [file]);
  jsResult = parseOutput(out, 'JS example');
  assertSane(jsResult, 'JS example');
  t.diagnostic(
    `JS example: Y[0] = ${jsResult.Y0}, loss ${jsResult.loss0} -> ${jsResult.loss9}, max rel ${Math.max(...jsResult.rows.map((x) => x.maxRel)).toExponential(1)}`,
  );
});

test('README "## C API": the example compiles against build/libmha.a (make lib), runs, and prints what the JS example prints', (t) => {
  const code = firstBlock('C API', 'c');
  assert.ok(/int main\(void\)/.test(code), 'the C example is not a complete program');
  run('make', ['--no-print-directory', '-s', 'lib']);
  const dir = join(repoRoot, 'build', 'readme');
  mkdirSync(dir, { recursive: true });
  const src = join(dir, 'example.c');
  const exe = join(dir, 'example');
  writeFileSync(src, code);
  rmSync(exe, { force: true });
  const cc = process.env.CC || 'cc';
  run(cc, [
    '-std=c11',
    '-Wall',
    '-Wextra',
    '-Werror',
    '-Ic',
    src,
    join('build', 'libmha.a'),
    '-lm',
    '-o',
    exe,
  ]);
  const out = run(exe, []);
  const c = parseOutput(out, 'C example');
  assertSane(c, 'C example');
  // Same seeds, same inputs: the native build prints the wasm's numbers (to the 6 decimals printed;
  // softmax's exp comes from each platform's libm, so the last bits, and with them the
  // finite-difference noise in the max rel column, may differ between the two builds).
  if (jsResult) {
    const close = (a, b, what) =>
      assert.ok(Math.abs(a - b) <= 1.5e-6, `${what}: C ${a} vs JS ${b}`);
    close(c.Y0, jsResult.Y0, 'Y[0]');
    close(c.dX0, jsResult.dX0, 'dX[0]');
    close(c.loss0, jsResult.loss0, 'loss before step 0');
    close(c.loss9, jsResult.loss9, 'loss before step 9');
    assert.deepEqual(
      c.rows.map((x) => x.checked),
      jsResult.rows.map((x) => x.checked),
    );
  }
  t.diagnostic(
    `C example: Y[0] = ${c.Y0}, loss ${c.loss0} -> ${c.loss9} (the same as the JS example), max rel ${Math.max(...c.rows.map((x) => x.maxRel)).toExponential(1)}`,
  );
});

test('`make demo` (README "## C API") prints the lesson-3 shape table and a passing lesson-4 gradient check', (t) => {
  const out = run('make', ['--no-print-directory', '-s', 'demo']);
  const shapes = {};
  for (const m of out.matchAll(/^ {2}(\w+)\s+\(([\d, ]+)\)\s+\S/gm)) shapes[m[1]] ??= m[2];
  assert.deepEqual(shapes, {
    X: '2, 6, 64',
    Q: '2, 4, 6, 16',
    K: '2, 4, 6, 16',
    V: '2, 4, 6, 16',
    scores: '2, 4, 6, 6',
    att: '2, 4, 6, 6',
    headout: '2, 4, 6, 16',
    concat: '2, 6, 64',
    Y: '2, 6, 64',
    Wq: '64, 64',
    Wk: '64, 64',
    Wv: '64, 64',
    Wo: '64, 64',
  });
  const rows = [
    ...out.matchAll(/^ {2}(\w+)\s+\([\d, ]+\)\s+(\d+)\/(\d+)\s+(\S+)\s+(\S+)\s+(pass|FAIL)$/gm),
  ];
  assert.equal(rows.length, 12, out);
  for (const [, name, checked, size, , maxRel, verdict] of rows) {
    assert.equal(checked, size, name);
    assert.ok(Number(maxRel) <= 1e-7 && verdict === 'pass', `${name}: ${maxRel} ${verdict}`);
  }
  assert.match(out, /^ {2}12 of 12 tensors pass \(21568 entries checked\)$/m);
  t.diagnostic(
    out
      .split('\n')
      .filter((l) => /tensors pass|Lesson/.test(l))
      .join(' | '),
  );
});
