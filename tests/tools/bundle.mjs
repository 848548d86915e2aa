// bundle.mjs - the page's scripts (make bundle): web/app.bundle.js and web/chunks/*.js, classic
// scripts that also run from file:// (where Chromium refuses module scripts and fetch).
//
//   node tests/tools/bundle.mjs            (make bundle: after web/mha.wasm and the scripts' text)
//   import { bundlePage } from './bundle.mjs'; await bundlePage({ minify: false, dir })
//                                          a readable build into another folder (bench_page's
//                                          profile)
//
// esbuild bundles web/app.js with code splitting: each `import('./lessonN.js')` of
// web/lessons/index.js starts a chunk, and code two chunks share gets a chunk of its own. Each
// chunk, an ES module, is turned into a classic script that registers its module with the
// page's loader (RUNTIME below) under the chunk's name; a static import becomes a `require` of
// the chunk registered before it, an `import('./x.js')` the loader's `load`, which adds the
// chunk's <script> and those of the chunks it needs, once each, then runs it.
// web/app.bundle.js holds the loader, the wasm (base64), the compute worker (bundled on its own,
// as a string), the two colour ramps sampled from d3-scale-chromatic, and the first chunk with
// every chunk it imports statically: the first view needs one script; another view's chunks come
// when it is first opened.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { LUT_SIZE } from '../../web/components/scales.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const web = join(root, 'web');
const out = join(root, 'build', 'bundle');
const CHUNKS = 'chunks'; // web/chunks/: the chunks loaded later

const COMMON = {
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  logLevel: 'warning',
  logOverride: { 'empty-import-meta': 'silent' },
};

// The loader, the first thing web/app.bundle.js runs. `define(name, deps, factory)` registers a
// chunk; `require(name)` runs it once (its static imports first); `load(name)` returns a promise
// of its exports, adding the <script>s of the chunks not registered yet (from the same folder
// as the bundle: over http and from file:// alike); a script that fails to load rejects it with
// the chunk's name. (Its minified copy is what the bundle carries.)
const RUNTIME = `
(() => {
  const defined = new Map();
  const done = new Map();
  const loading = new Map();
  const base = document.currentScript ? new URL('.', document.currentScript.src).href : '';
  function require(name) {
    if (done.has(name)) return done.get(name).exports;
    const chunk = defined.get(name);
    if (!chunk) throw new Error('mha-wasm: the script ' + name + ' is not loaded');
    const module = { exports: {} };
    done.set(name, module);
    chunk.factory((dep) => require(dep.replace(/^\\.\\//, '')), module, module.exports);
    return module.exports;
  }
  function script(name) {
    if (defined.has(name)) return Promise.resolve();
    if (!loading.has(name)) {
      loading.set(name, new Promise((resolve, reject) => {
        const s = document.createElement('script');
        s.src = base + '${CHUNKS}/' + name;
        s.onload = () => defined.has(name) ? resolve() : reject(new Error('mha-wasm: ' + name + ' did not register'));
        s.onerror = () => { loading.delete(name); s.remove(); reject(new Error('mha-wasm: the script ${CHUNKS}/' + name + ' could not be loaded')); };
        document.head.append(s);
      }));
    }
    return loading.get(name);
  }
  async function load(name) {
    name = name.replace(/^\\.\\//, '');
    const need = [];
    const visit = (n) => { if (need.includes(n)) return; need.push(n); for (const d of globalThis.MHA_CHUNK_DEPS[n] ?? []) visit(d); };
    visit(name);
    await Promise.all(need.map(script));
    return require(name);
  }
  globalThis.MHA_CHUNKS = { define: (name, factory) => defined.set(name, { factory }), require, load };
})();
`;

/** A chunk (an ES module from esbuild) as a classic script registering it under `name`. */
async function classic(name, code, minify) {
  // import('./x.js') -> the loader's load; then the rest to CommonJS (require, module.exports)
  const dynamic = code.replace(/\bimport\("\.\/([\w.-]+\.js)"\)/g, 'MHA_CHUNKS.load("$1")');
  if (/\bimport\(["'`]\./.test(dynamic)) throw new Error(`bundle: ${name}: an import() not read`);
  const { code: cjs } = await esbuild.transform(dynamic, {
    format: 'cjs',
    minify,
    target: 'es2022',
    logLevel: 'warning',
    logOverride: { 'empty-import-meta': 'silent' },
  });
  // (in parentheses: V8 compiles the function as it parses the script, not a second time later)
  return `MHA_CHUNKS.define(${JSON.stringify(name)},(function(require,module,exports){${cjs}}));\n`;
}

// The page's bundle carries the two colour ramps sampled from d3-scale-chromatic (below:
// MHA_COLOUR_RAMPS), so scales.js never loads d3 there: in its place a module that says so,
// and the page's first script has d3's 40 KB less to read.
const RAMPS_SAMPLED = {
  name: 'ramps-sampled',
  setup(build) {
    build.onResolve({ filter: /^d3-scale-chromatic$/ }, () => ({ path: 'd3', namespace: 'ramps' }));
    build.onLoad({ filter: /.*/, namespace: 'ramps' }, () => ({
      contents:
        "throw new Error('mha-wasm: the bundle samples its colour ramps (MHA_COLOUR_RAMPS); " +
        "d3-scale-chromatic is not in it');",
      loader: 'js',
    }));
  },
};

/** The static imports of each chunk, by chunk name (from esbuild's metafile). */
function staticDeps(metafile) {
  const deps = {};
  for (const [path, output] of Object.entries(metafile.outputs)) {
    if (!path.endsWith('.js')) continue;
    deps[basename(path)] = output.imports
      .filter((i) => i.kind === 'import-statement')
      .map((i) => basename(i.path));
  }
  return deps;
}

/**
 * Build the page's scripts into `dir` (default web/): app.bundle.js and chunks/; minify: false
 * keeps the code readable (names a profile can show).
 */
export async function bundlePage({ minify = true, dir = web } = {}) {
  const worker = await esbuild.build({
    ...COMMON,
    minify,
    entryPoints: [join(web, 'jobs', 'worker-main.js')],
    format: 'iife',
    write: false,
  });
  const page = await esbuild.build({
    ...COMMON,
    plugins: [RAMPS_SAMPLED],
    minify,
    entryPoints: { app: join(web, 'app.js') },
    format: 'esm',
    splitting: true,
    outdir: out,
    chunkNames: '[name]-[hash]',
    metafile: true,
    write: false,
  });
  const deps = staticDeps(page.metafile);
  const code = new Map(page.outputFiles.map((f) => [basename(f.path), f.text]));
  // the first script: app.js and every chunk it needs before it runs, in an order that defines
  // each before anything runs (require runs a chunk's imports when it runs)
  const first = [];
  const visit = (n) => {
    if (first.includes(n)) return;
    first.push(n);
    for (const d of deps[n]) visit(d);
  };
  visit('app.js');
  const later = [...code.keys()].filter((n) => !first.includes(n));
  const { code: runtime } = await esbuild.transform(RUNTIME, { minify: true, target: 'es2022' });

  const wasm = readFileSync(join(web, 'mha.wasm')).toString('base64');
  // the two colour ramps the page uses, sampled here as d3-scale-chromatic gives them (scales.js)
  const d3 = await import('d3-scale-chromatic');
  const sample = (f) => Array.from({ length: LUT_SIZE }, (_, i) => f(i / (LUT_SIZE - 1)));
  const ramps = { viridis: sample(d3.interpolateViridis), puor: sample(d3.interpolatePuOr) };
  const head = [
    '/* mha-wasm companion page: generated by make bundle from web/*.js and web/mha.wasm */\n',
    '/* bundles fflate 0.8.3 (MIT, (c) Arjun Barrett); its colour ramps are sampled from ' +
      'd3-scale-chromatic 3.1.1 (ISC, (c) Mike Bostock) */\n',
    `globalThis.MHA_WASM_BASE64 = ${JSON.stringify(wasm)};\n`,
    `globalThis.MHA_WORKER_SOURCE = ${JSON.stringify(worker.outputFiles[0].text)};\n`,
    `globalThis.MHA_CHUNK_DEPS = ${JSON.stringify(deps)};\n`,
    `globalThis.MHA_COLOUR_RAMPS = ${JSON.stringify(ramps)};\n`,
    runtime,
  ];
  const parts = await Promise.all(first.map((n) => classic(n, code.get(n), minify)));
  writeFileSync(
    join(dir, 'app.bundle.js'),
    [...head, ...parts, 'MHA_CHUNKS.require("app.js");\n'].join(''),
  );
  rmSync(join(dir, CHUNKS), { recursive: true, force: true });
  mkdirSync(join(dir, CHUNKS));
  for (const n of later) {
    writeFileSync(join(dir, CHUNKS, n), await classic(n, code.get(n), minify));
  }
  const size = (s) => `${(Buffer.byteLength(s) / 1024).toFixed(0)} KB`;
  return `bundle: web/app.bundle.js (${first.length} chunks, ${size(
    [...head, ...parts].join(''),
  )}), web/${CHUNKS}/: ${later.map((n) => `${n} ${size(code.get(n))}`).join(', ')}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await bundlePage());
