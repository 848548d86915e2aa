// The API examples cannot rot: the first ```js block of the README's "## JS API" runs as a module
// (importing the package by its name, which resolves to this repository through package.json's
// exports map), and the first ```c block of docs/api.md's "## C API" compiles against the native
// library (`make lib`) and runs. Both must succeed, print sane values, and agree with each
// other: they use the same seeds, so the wasm and the native build must print the same numbers.
// It also runs `make demo`, which the C API section documents.
//
// "## The two commands" are the only ones: `npm start` and `make test`, CI's .ci/run is the
// second, and both install what a fresh machine lacks themselves (.ci/setup): one line when they
// do, nothing when nothing is missing. Checked without touching the machine's packages: the
// tools are named missing through the Makefile's variables (EMCC=...), apt-get is a stub on PATH
// that "installs" them, and `npm start` really builds and serves, on a PORT of its own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, npmCli, repoRoot } from './helpers.mjs';
import { loadManifest, studentsDir } from './check/students.mjs';
import { MISTAKES } from '../web/check/catalogue.js';
import { mistakesTable } from './tools/mistakes-table.mjs';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
/** A file of docs/ (the details the README links to). */
const doc = (name) => readFileSync(join(repoRoot, 'docs', name), 'utf8');

/** The first ```lang block of the `## heading` section (up to the next `## `) of `text`. */
function firstBlock(heading, lang, text = readme, file = 'README.md') {
  const start = text.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `${file} has no "## ${heading}" section`);
  const rest = text.slice(start + 1);
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

test('docs/api.md "## C API": the example links build/libmha.a and prints the JS numbers', (t) => {
  const code = firstBlock('C API', 'c', doc('api.md'), 'docs/api.md');
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

test('`make demo`: the lesson-3 shape table and a passing lesson-4 gradient check', (t) => {
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

// ------------------------------------------------------------------------------------------------
// the two commands, and the setup they run

/** The commands of the first ```sh block of "## The two commands" (comments dropped). */
function twoCommands() {
  return firstBlock('The two commands', 'sh')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
}

test('README "## The two commands": npm start and make test, and CI runs the second', () => {
  assert.deepEqual(twoCommands(), ['npm start', 'make test']);
  const ci = readFileSync(join(repoRoot, '.ci', 'run'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
  assert.equal(ci.at(-1), 'make test', '.ci/run must end with the README test command');
  assert.ok(!ci.some((l) => /setup/.test(l)), '.ci/run needs no setup step of its own');
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.match(pkg.scripts.start, /^make .*\bserve$/);
  // each runs the setup first: the first command make would run
  for (const [target, need] of [
    ['serve', 'build'],
    ['test', 'test'],
  ]) {
    const first = run('make', ['-n', '--no-print-directory', target]).split('\n')[0];
    assert.match(first, new RegExp(`bash \\.ci/setup ${need}$`), `make ${target}: ${first}`);
  }
});

/** A temporary directory with stub tools: apt-get (and sudo) log their arguments, and apt-get
 *  "installs" emscripten by making `emcc` (a wrapper of the real one) in the directory, and
 *  firefox-esr by making an empty `firefox-esr` there. */
function stubMachine() {
  const dir = mkdtempSync(join(tmpdir(), 'mha-setup-'));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const script = (name, body) => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  script(
    'apt-get',
    `echo "apt-get $*" >> '${dir}/calls'
case " $* " in *" emscripten "*) printf '#!/bin/sh\\nexec emcc "$@"\\n' > '${dir}/emcc'; chmod +x '${dir}/emcc';; esac
case " $* " in *" firefox-esr "*) printf '#!/bin/sh\\n' > '${dir}/firefox-esr'; chmod +x '${dir}/firefox-esr';; esac`,
  );
  script('sudo', `echo "sudo" >> '${dir}/calls'; exec "$@"`);
  const env = {
    ...process.env,
    PATH: `${bin}${delimiter}${process.env.PATH}`,
    EMCC: join(dir, 'emcc'),
    SETUP_LOG: join(dir, 'setup.log'),
  };
  const calls = () =>
    existsSync(join(dir, 'calls'))
      ? readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n')
      : [];
  return { dir, bin, env, calls, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const SETUP_LINE =
  /^setup: emcc missing: installing emscripten \(apt-get\) with bash \.ci\/setup \(log: .+\) \.\.\. done in \d+ s$/;

test('.ci/setup: emcc, firefox-esr or WebKit missing: one line, the install; else silent', (t) => {
  const m = stubMachine();
  try {
    const setup = (args, env = m.env) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync('bash', ['.ci/setup', ...args], { cwd: repoRoot, env, encoding: 'utf8' });
      return { ...r, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
    };
    const first = setup(['build']);
    assert.equal(first.status, 0, `${first.stdout}${first.stderr}`);
    assert.equal(first.stderr, '');
    const lines = first.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1, `more than one line:\n${first.stdout}`);
    assert.match(lines[0], SETUP_LINE);
    const root = process.getuid?.() === 0;
    assert.deepEqual(
      m.calls().filter((c) => c !== 'sudo'),
      ['apt-get update -qq', 'apt-get install -y -qq emscripten'],
    );
    assert.equal(m.calls().includes('sudo'), !root, 'sudo exactly when not root');
    // emcc is there now: silent, nothing installed again
    const again = setup(['build']);
    assert.equal(again.status, 0);
    assert.equal(`${again.stdout}${again.stderr}`, '');
    assert.equal(m.calls().filter((c) => c.startsWith('apt-get')).length, 2);
    // everything `make test` needs there (stubs for the tools, the real node_modules): silent
    const lib = join(m.dir, 'lib');
    mkdirSync(lib);
    writeFileSync(join(lib, 'libclang_rt.fuzzer-x86_64.a'), '');
    writeFileSync(join(lib, 'libblas.so.3'), '');
    for (const [name, body] of [
      ['python3', 'exit 0'],
      ['clang', `echo '${lib}/libclang_rt.builtins-x86_64.a'`],
      ['chromium', 'exit 0'],
      ['firefox-esr', 'exit 0'],
      ['WebKitWebDriver', 'exit 0'],
      ['Xvfb', 'exit 0'],
      ['MiniBrowser', 'exit 0'],
      ['cc', 'exit 0'],
    ]) {
      writeFileSync(join(m.bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(m.bin, name), 0o755);
    }
    const all = {
      ...m.env,
      CC: join(m.bin, 'cc'),
      PYTHON: join(m.bin, 'python3'),
      FUZZ_CC: join(m.bin, 'clang'),
      MHA_CHROMIUM: join(m.bin, 'chromium'),
      MHA_FIREFOX: join(m.bin, 'firefox-esr'),
      MHA_WEBKIT_DRIVER: join(m.bin, 'WebKitWebDriver'),
      MHA_XVFB: join(m.bin, 'Xvfb'),
      MHA_MINIBROWSER: join(m.bin, 'MiniBrowser'),
      MHA_OPENBLAS: join(lib, 'libblas.so.3'),
    };
    const quiet = setup(['test'], all);
    assert.equal(quiet.status, 0);
    assert.equal(`${quiet.stdout}${quiet.stderr}`, '', 'nothing missing: nothing printed');
    // the browser suite's second engine: firefox-esr, installed like chromium
    const noFirefox = { ...all, MHA_FIREFOX: join(m.dir, 'firefox-esr') };
    const firefox = setup(['test'], noFirefox);
    assert.equal(firefox.status, 0, `${firefox.stdout}${firefox.stderr}`);
    assert.match(
      firefox.stdout,
      /^setup: firefox missing: installing firefox-esr \(apt-get\) with bash \.ci\/setup \(log: .+\) \.\.\. done in \d+ s\n$/,
    );
    assert.equal(m.calls().at(-1), 'apt-get install -y -qq firefox-esr');
    const firefoxAgain = setup(['test'], noFirefox);
    assert.equal(`${firefoxAgain.stdout}${firefoxAgain.stderr}`, '', 'firefox-esr there: silent');
    // the third engine, WebKit: its driver, the X server or the MiniBrowser missing
    for (const gone of ['MHA_WEBKIT_DRIVER', 'MHA_XVFB', 'MHA_MINIBROWSER']) {
      const webkit = setup(['--dry-run', 'test'], { ...all, [gone]: join(m.dir, 'gone') });
      assert.equal(webkit.status, 0, webkit.stderr);
      assert.match(
        webkit.stdout,
        /^setup: webkit missing: installing webkit2gtk-driver xvfb \(apt-get\) with bash \.ci\/setup \(log: .+\) \.\.\. dry run: nothing installed\n$/,
        gone,
      );
    }
    // and on this machine as it is (--dry-run: never installs here)
    const here = setup(['--dry-run', 'test'], process.env);
    assert.equal(here.status, 0, here.stderr);
    t.diagnostic(`missing emcc: "${lines[0]}"; missing firefox-esr: "${firefox.stdout.trim()}"`);
    t.diagnostic(
      `nothing missing: silent, ${quiet.ms.toFixed(0)} ms; this machine: ${here.stdout.trim() || `nothing missing, ${here.ms.toFixed(0)} ms`}`,
    );
  } finally {
    m.cleanup();
  }
});

/** `npm start` in its own process group; resolves when it prints the URL or exits. */
function npmStart(env) {
  const child = spawn(process.execPath, [npmCli(), 'start'], {
    cwd: repoRoot,
    env,
    detached: true,
  });
  const out = { text: '', child };
  child.stdout.on('data', (d) => (out.text += d));
  child.stderr.on('data', (d) => (out.text += d));
  out.stop = () => {
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  out.ready = new Promise((ok, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`npm start: no URL in 120 s:\n${out.text}`)),
      120e3,
    );
    child.stdout.on('data', () => {
      const m = out.text.match(/^mha-wasm companion: (http:\S+)/m);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      ok({ exit: code });
    });
  });
  return out;
}

test('npm start without emcc: one setup line, the URL on PORT; port taken: one line', async (t) => {
  const m = stubMachine();
  const port = await freePort();
  const env = { ...m.env, PORT: String(port), npm_config_update_notifier: 'false' };
  const first = npmStart(env);
  let second;
  try {
    const url = await first.ready;
    assert.equal(url, `http://127.0.0.1:${port}/`, first.text);
    const setupLines = first.text.split('\n').filter((l) => l.startsWith('setup:'));
    assert.equal(setupLines.length, 1, first.text);
    assert.match(setupLines[0], SETUP_LINE);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /app\.bundle\.js/);
    // the same port again: a one-line reason and a non-zero exit, no stack trace
    second = npmStart(env);
    const { exit } = await second.ready;
    assert.notEqual(exit, 0);
    const said = second.text.split('\n').filter((l) => l.startsWith('serve:'));
    assert.deepEqual(said.length, 1, second.text);
    assert.match(
      said[0],
      new RegExp(`^serve: port ${port} is already in use.*PORT=${port + 1} npm start$`),
    );
    assert.doesNotMatch(second.text, /^\s+at /m, 'a stack trace');
    t.diagnostic(
      `npm start: ${first.text
        .trim()
        .split('\n')
        .filter((l) => /^(setup|mha-wasm)/.test(l))
        .join(' | ')}`,
    );
    t.diagnostic(`again on ${port}: ${said[0]}`);
  } finally {
    first.stop();
    second?.stop();
    m.cleanup();
  }
});

test('docs/notebook-check.md: the example blames X @ Wq.T; all mistakes listed', () => {
  const nbDoc = doc('notebook-check.md');
  const code = firstBlock('Check your notebook', 'js', nbDoc, 'docs/notebook-check.md');
  const dir = join(repoRoot, 'build', 'readme');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'check.mjs');
  const web = (f) => `'${pathToFileURL(join(repoRoot, 'web', f)).href}'`;
  writeFileSync(
    file,
    code
      .replaceAll("'./web/mha.js'", web('mha.js'))
      .replaceAll("'./web/check.js'", web('check.js')),
  );
  // a student's notebook written by tests/reference/notebook_students.py: q = X @ Wq.T, ...
  const run1 = loadManifest().find((r) => r.name === 'weights-transposed');
  const npz = join(studentsDir(), 'weights-transposed.npz');
  const out = run(process.execPath, [file, npz, String(run1.heads)]);
  const lines = out.trim().split('\n');
  assert.match(lines[0], /^Q\s+differs\s+weights-transposed: You computed Q = X @ Wq\.T/);
  assert.ok(
    lines.some((l) => /^dX\s+differs\s+follows-from/.test(l)),
    out,
  );
  const section = nbDoc.slice(nbDoc.indexOf('\n## Check your notebook\n'));
  // the table is generated from the records: exactly, in their order
  assert.ok(section.includes(`\n${mistakesTable()}\n`), 'docs/notebook-check.md holds it');
  for (const m of MISTAKES) assert.ok(section.includes(`| \`${m.id}\` |`), m.id);
});

test('README is a front door: at most 200 lines, short table cells, every link resolves', (t) => {
  const lines = readme.split('\n');
  assert.ok(lines.length <= 200, `README.md has ${lines.length} lines`);
  const cells = lines.filter((l) => l.startsWith('|')).flatMap((l) => l.split('|'));
  const longest = Math.max(...cells.map((c) => c.trim().length));
  assert.ok(longest <= 200, `a README table cell of ${longest} characters`);
  // the README and every document of docs/: each relative link names a file that exists, and a
  // #fragment a heading of it (GitHub's slug: lower case, spaces to '-', punctuation dropped)
  const slug = (h) =>
    h
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
  const files = ['README.md', ...readdirSync(join(repoRoot, 'docs')).map((f) => `docs/${f}`)];
  let links = 0;
  for (const file of files.filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [path, fragment] = target.split('#');
      const full = path ? join(repoRoot, dirname(file), path) : join(repoRoot, file);
      assert.ok(existsSync(full), `${file}: the link ${target} names no file`);
      if (fragment) {
        const headings = readFileSync(full, 'utf8').match(/^#+ .*$/gm) ?? [];
        const slugs = headings.map((h) => slug(h.replace(/^#+ /, '')));
        assert.ok(slugs.includes(fragment), `${file}: no heading #${fragment} in ${path}`);
      }
      links++;
    }
  }
  t.diagnostic(
    `README.md: ${lines.length} lines, longest table cell ${longest} characters; ${links} links in ${files.length} files resolve`,
  );
});
