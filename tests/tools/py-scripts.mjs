// py-scripts.mjs - writes web/model/scripts/sources.js: the text of every web/model/scripts/*.py
// as a JS string, the one way the page's bundle and the Node tests read the NumPy scripts (Node
// cannot import a .py file). The .py files are the source; sources.js is built from them, not
// committed (like web/mha.wasm): make runs this when a .py is newer (make bundle, npm start).
//   node tests/tools/py-scripts.mjs
// tests/model/scripts-py.test.mjs fails when sources.js is not what the .py files give.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCRIPTS_DIR = join(ROOT, 'web', 'model', 'scripts');
export const SOURCES_JS = join(SCRIPTS_DIR, 'sources.js');

/** The .py files of the folder, sorted by name. */
export function pyFiles(dir = SCRIPTS_DIR) {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.py'))
    .sort();
}

/** A JS template literal whose value is `text`. */
function templateLiteral(text) {
  return `\`${text.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${')}\``;
}

/** The text of sources.js for the .py files of `dir`. */
export function sourcesModule(dir = SCRIPTS_DIR) {
  const entries = pyFiles(dir).map((name) => {
    const text = readFileSync(join(dir, name), 'utf8');
    if (text.includes('\r')) throw new Error(`${name}: CR line ends`);
    return `  '${name}': ${templateLiteral(text)},\n`;
  });
  return `// sources.js - built by tests/tools/py-scripts.mjs from web/model/scripts/*.py (make runs it
// when a .py changes); not committed. Edit the .py files; web/model/numpy-scripts.js renders them.
export const SOURCES = Object.freeze({
${entries.join('')}});
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeFileSync(SOURCES_JS, sourcesModule());
