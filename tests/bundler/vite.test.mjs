// The package as a bundler user meets it: `npm pack`, the tarball unpacked (offline, nothing is
// downloaded) into a tiny Vite app whose main.js does `import { loadMHA } from 'mha-wasm'` and a
// forward pass; `vite build` with the repository's pinned vite must print no warning at all (in
// particular not `Module "node:fs/promises" has been externalized for browser compatibility`);
// then dist/, served over http (tests/serve.mjs) and opened in Debian's Chromium, must show the
// same Y, bit for bit, as the Node API computes for the same input.
//
// Needs web/mha.wasm (`make wasm`) and /usr/bin/chromium (or MHA_CHROMIUM); fails, never skips.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';
import { loadMHA, npmCli, repoRoot } from '../helpers.mjs';
import { serve } from '../serve.mjs';

// The forward pass the app runs, and the Node side repeats.
const INPUT = { B: 2, T: 3, C: 8, heads: 2, seed: 42, xSeed: 7 };

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <link rel="icon" href="data:," />
    <title>mha-wasm in a Vite app</title>
  </head>
  <body>
    <p>Y of one forward pass: <output id="result">computing...</output></p>
    <script type="module" src="./main.js"></script>
  </body>
</html>
`;

const MAIN_JS = `import { loadMHA } from 'mha-wasm';

const { B, T, C, heads, seed, xSeed } = ${JSON.stringify(INPUT)};
const out = document.getElementById('result');

async function main() {
  const mha = await loadMHA();
  const layer = mha.createLayer({ C, heads, seed });
  const X = mha.standardNormal(B * T * C, { seed: xSeed });
  const { Y } = layer.forward(X, { B, T });
  layer.free();
  out.textContent = JSON.stringify({ version: mha.version, Y: Array.from(Y) });
  out.dataset.done = 'ok';
}

main().catch((err) => {
  out.textContent = String(err && err.stack ? err.stack : err);
  out.dataset.done = 'error';
});
`;

function run(file, args, opts) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw r.error;
  assert.equal(
    r.status,
    0,
    `${file} ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`,
  );
  return r;
}

let work; // this file's temporary directory
let browser;
let server;

before(() => {
  assert.ok(
    existsSync(join(repoRoot, 'web', 'mha.wasm')),
    'web/mha.wasm is missing: run `make wasm` first',
  );
  assert.ok(
    existsSync(CHROMIUM),
    `Chromium not found at ${CHROMIUM}: this test needs Debian's chromium (apt-get install chromium)`,
  );
  work = mkdtempSync(join(tmpdir(), 'mha-vite-'));
});

after(async () => {
  await browser?.close();
  server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** `npm pack` into work/; returns the tarball's path. */
function pack() {
  const r = run(
    process.execPath,
    [npmCli(), 'pack', '--json', '--ignore-scripts', '--pack-destination', work],
    { cwd: repoRoot },
  );
  const [{ filename }] = JSON.parse(r.stdout);
  return join(work, filename);
}

/** The app: package.json, index.html, main.js; the tarball unpacked as node_modules/mha-wasm. */
function makeApp(tarball) {
  const app = join(work, 'app');
  const installed = join(app, 'node_modules', 'mha-wasm');
  mkdirSync(installed, { recursive: true });
  const manifest = {
    name: 'vite-consumer',
    version: '1.0.0',
    private: true,
    type: 'module',
    dependencies: { 'mha-wasm': `file:${relative(app, tarball)}` },
  };
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(app, 'index.html'), INDEX_HTML);
  writeFileSync(join(app, 'main.js'), MAIN_JS);
  // what `npm install <tarball>` puts there, without npm or a network: the package/ folder
  run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  return app;
}

const listing = (dir) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath ?? d.path, d.name))
    .map((f) => `${relative(dir, f)} (${statSync(f).size} B)`)
    .sort();

/** What the Node API computes for INPUT. */
async function nodeResult() {
  const { B, T, C, heads, seed, xSeed } = INPUT;
  const mha = await loadMHA();
  const layer = mha.createLayer({ C, heads, seed });
  const X = mha.standardNormal(B * T * C, { seed: xSeed });
  const { Y } = layer.forward(X, { B, T });
  layer.free();
  return { version: mha.version, Y: Array.from(Y) };
}

test('a Vite app of the packed package: no build warning; Y in Chromium = Y in Node', async (t) => {
  const tarball = pack();
  const app = makeApp(tarball);
  t.diagnostic(`app: ${app} (mha-wasm from ${relative(work, tarball)}, unpacked offline)`);

  // 1. the build: the repository's pinned vite, at log level "warn", so any output is a warning
  const vite = realpathSync(join(repoRoot, 'node_modules', '.bin', 'vite'));
  const build = run(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: app,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  const printed = `${build.stdout}${build.stderr}`.trim();
  assert.equal(printed, '', `vite build printed warnings:\n${printed}`);
  const dist = join(app, 'dist');
  const files = listing(dist);
  assert.ok(
    files.some((f) => /\.wasm /.test(f)),
    `no .wasm in dist/: ${files.join(', ')}`,
  );
  // a Node module in the browser path would also leave an empty stand-in chunk behind
  assert.ok(
    !files.some((f) => f.includes('browser-external')),
    `dist/ holds an externalized Node module: ${files.join(', ')}`,
  );
  t.diagnostic(`vite build: 0 warnings; dist/: ${files.join(', ')}`);

  // 2. the built page in Chromium over http
  let url;
  ({ server, url } = await serve(dist, 0));
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const page = await browser.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(e.stack || e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  await page.waitForSelector('#result[data-done]', { timeout: 30_000 });
  const [done, text] = await page
    .locator('#result')
    .evaluate((el) => [el.dataset.done, el.textContent]);
  assert.equal(done, 'ok', `the page failed: ${text}`);
  assert.deepEqual(errors, []);
  assert.ok(
    requests.every((r) => r.startsWith(url)),
    `requests outside the server: ${requests}`,
  );
  assert.ok(
    requests.some((r) => r.endsWith('.wasm')),
    `the page never fetched the wasm: ${requests}`,
  );

  // 3. the same numbers as the Node API
  const inPage = JSON.parse(text);
  const inNode = await nodeResult();
  assert.equal(inPage.version, inNode.version);
  assert.equal(inPage.Y.length, INPUT.B * INPUT.T * INPUT.C);
  assert.deepEqual(inPage.Y, inNode.Y, 'Y in the Vite-built page differs from the Node API');
  t.diagnostic(
    `Chromium, dist/ over http: Y[0] = ${inPage.Y[0]} = Node's, all ${inPage.Y.length} entries identical; requests: ${requests.map((r) => r.slice(url.length - 1)).join(', ')}`,
  );
});
