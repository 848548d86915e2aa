// One home for the course's defaults: web/model/defaults.js. No other module of web/ writes the
// course's seed, sizes, sentence, lr, steps or ε as a literal default: they all read COURSE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COURSE } from '../../web/model/defaults.js';

const web = fileURLToPath(new URL('../../web/', import.meta.url));
const HOME = 'model/defaults.js';
// generated (the .py scripts' text, the bundle) or the engine's own API defaults (web/mha.js,
// below the model, documents them in its API)
const SKIP = new Set(['app.bundle.js', 'mha.js', 'model/scripts/sources.js']);

function jsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'vendor' ? [] : jsFiles(path);
    return name.endsWith('.js') ? [path] : [];
  });
}

/** A literal default of the course written in code: `seed = 42`, `C: 64`, `lr: 0.1`, … */
const LITERALS = [
  /\bseed\s*[:=]\s*42\b/i,
  /\bdefault_rng\(42\)/,
  /\bC\s*[:=]\s*64\b/,
  /\bhs\s*[:=]\s*16\b/,
  /\bheads\s*[:=]\s*4\b/,
  /\blr\s*[:=]\s*0\.1\b/,
  /\bsteps\s*[:=]\s*10\b/,
  /\beps\s*[:=]\s*1e-[35]\b/,
  /lanterns of Lantern Bay/,
];

/** The code of a module without its comments (a comment may say what the defaults are). */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

test('the course’s defaults are written once, in web/model/defaults.js', () => {
  const found = [];
  const files = jsFiles(web).map((f) => relative(web, f).split('\\').join('/'));
  assert.ok(files.length > 100, `only ${files.length} modules under web/`);
  for (const rel of files.filter((f) => f !== HOME && !SKIP.has(f))) {
    const lines = code(readFileSync(join(web, rel), 'utf8')).split('\n');
    lines.forEach((line, i) => {
      for (const re of LITERALS) if (re.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(found, []);
  // and the home holds every one of them
  const home = readFileSync(join(web, HOME), 'utf8');
  for (const re of [/seed: 42/, /C: 64/, /hs: 16/, /heads: 4/, /lr: 0\.1/, /steps: 10/]) {
    assert.match(home, re);
  }
  assert.equal(COURSE.sentence, 'The lanterns of Lantern Bay guide boats home');
});

test('the scan finds a literal default where one is written', () => {
  const planted = ['const seed = 42;', 'lesson1(mha, { C: 64 })', 'const lr = 0.1;'];
  for (const line of planted) {
    assert.ok(
      LITERALS.some((re) => re.test(code(line))),
      line,
    );
  }
  assert.ok(!LITERALS.some((re) => re.test(code('// seed = 42 in a comment'))));
});
