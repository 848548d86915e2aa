// layers.mjs - the page's layers and every import between them; exits 1 if any import goes up.
//   node tests/tools/layers.mjs [root=.]
// engine (web/mha.js, web/check.js, web/check/ and web/io/: the library) -> model (web/model/)
// -> jobs (web/jobs/) -> components (web/components/) -> lessons (web/lessons/)
// -> app (web/app.js, web/boot.js). A module may import from its own layer or any layer below
// it. ESLint enforces the same rule file by file (eslint.config.js); this tool shows the whole
// graph at once.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAYERS = ['engine', 'model', 'jobs', 'components', 'lessons', 'app'];

/** The layer of a file under web/ (path relative to web/, with forward slashes). */
export function layerOf(rel) {
  if (rel === 'app.js' || rel === 'boot.js') return 'app';
  const top = rel.split('/')[0];
  if (top === 'check' || top === 'io') return 'engine';
  if (rel.includes('/')) return LAYERS.includes(top) ? top : `unknown (${top}/)`;
  return 'engine';
}

function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const skip = ['vendor', 'chunks'].includes(name); // (chunks/: built by make bundle)
    if (statSync(path).isDirectory()) return skip ? [] : jsFiles(path);
    return name.endsWith('.js') && name !== 'app.bundle.js' ? [path] : [];
  });
}

/** Every relative import of web/: [{ from, to, fromLayer, toLayer, up }]. */
export function importEdges(root = '.') {
  const web = resolve(root, 'web');
  const edges = [];
  for (const file of jsFiles(web)) {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s*['"]([^'"]+)['"]/g)]
      .concat([...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)])
      .map((m) => m[1])
      .filter((s) => s.startsWith('.'));
    const from = relative(web, file).split('\\').join('/');
    for (const spec of specs) {
      const to = relative(web, resolve(dirname(file), spec))
        .split('\\')
        .join('/');
      const fromLayer = layerOf(from);
      const toLayer = layerOf(to);
      const up = LAYERS.indexOf(toLayer) > LAYERS.indexOf(fromLayer);
      edges.push({ from, to, fromLayer, toLayer, up });
    }
  }
  return edges;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const edges = importEdges(process.argv[2] ?? '.');
  const counts = new Map();
  for (const e of edges) {
    const key = `${e.fromLayer} -> ${e.toLayer}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  console.log(LAYERS.join('  ->  '), '(each imports only from itself and layers to its left)');
  for (const from of LAYERS) {
    const row = LAYERS.map((to) => counts.get(`${from} -> ${to}`) ?? 0);
    console.log(
      `  ${from.padEnd(10)} imports from ${LAYERS.map((l, i) => `${l} ${row[i]}`).join(', ')}`,
    );
  }
  const up = edges.filter((e) => e.up || e.toLayer.startsWith('unknown'));
  for (const e of up) {
    console.log(`UPWARD: web/${e.from} (${e.fromLayer}) imports web/${e.to} (${e.toLayer})`);
  }
  console.log(`${edges.length} imports, ${up.length} going up`);
  process.exit(up.length ? 1 : 0);
}
