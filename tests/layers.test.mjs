// The page's layers: no import goes up (engine -> model -> jobs -> components -> lessons -> app),
// and the engine (web/mha.js, web/io/, web/check.js, web/check/), model and jobs layers are
// DOM-free (they load and run in Node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importEdges, layerOf, LAYERS } from './tools/layers.mjs';

const root = new URL('..', import.meta.url).pathname;

test('no module of web/ imports from a layer above its own', () => {
  const edges = importEdges(root);
  assert.ok(edges.length > 40, `only ${edges.length} imports found: is the parser broken?`);
  const bad = edges.filter(
    (e) => e.up || !LAYERS.includes(e.toLayer) || !LAYERS.includes(e.fromLayer),
  );
  assert.deepEqual(
    bad.map((e) => `web/${e.from} (${e.fromLayer}) -> web/${e.to} (${e.toLayer})`),
    [],
  );
});

test('the layer checker sees an upward import (a fixture tree with one)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mha-layers-'));
  try {
    mkdirSync(join(dir, 'web', 'model'), { recursive: true });
    mkdirSync(join(dir, 'web', 'components'), { recursive: true });
    writeFileSync(join(dir, 'web', 'components', 'chart.js'), 'export const x = 1;\n');
    writeFileSync(
      join(dir, 'web', 'model', 'maths.js'),
      "import { x } from '../components/chart.js';\nexport const y = x;\n",
    );
    const edges = importEdges(dir);
    assert.deepEqual(edges, [
      {
        from: 'model/maths.js',
        to: 'components/chart.js',
        fromLayer: 'model',
        toLayer: 'components',
        up: true,
      },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(layerOf('mha.js'), 'engine');
  assert.equal(layerOf('app.js'), 'app');
  assert.equal(layerOf('boot.js'), 'app'); // app.js's first import: starts the wasm
  assert.equal(layerOf('lessons/playground/views.js'), 'lessons');
});

test('engine (mha.js, the check), model and jobs modules load in Node, DOM-free', async () => {
  const web = join(root, 'web');
  const dirs = ['model', 'jobs', 'check', 'io'].filter((d) => readdirSync(web).includes(d));
  const files = dirs.flatMap((d) =>
    readdirSync(join(web, d))
      .filter((f) => f.endsWith('.js'))
      .map((f) => join(web, d, f)),
  );
  files.push(join(web, 'mha.js'), join(web, 'check.js'));
  assert.ok(
    files.some((f) => f.includes(join('web', 'check', ''))),
    'web/check/ not found',
  );
  assert.ok(
    files.some((f) => f.includes(join('web', 'io', ''))),
    'web/io/ not found',
  );
  for (const file of files) {
    const text = readFileSync(file, 'utf8').replace(/\/\/.*|\/\*[\s\S]*?\*\//g, '');
    assert.doesNotMatch(text, /\b(document|HTMLElement|Node\.|window\.)\b/, `${file} uses the DOM`);
    await import(file); // throws if a module reaches for the DOM at load time
  }
});
