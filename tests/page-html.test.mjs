// web/index.html's scripts and its Content-Security-Policy: the page's only inline script (the
// loader that adds app.bundle.js once the page is painted) is allowed by its sha256 in the CSP,
// and nothing else inline is; no external script is loaded by the HTML itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const html = readFileSync(new URL('../web/index.html', import.meta.url), 'utf8');
const csp = html.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/)?.[1] ?? '';
const scriptSrc = csp
  .split(';')
  .map((d) => d.trim().split(/\s+/))
  .find((d) => d[0] === 'script-src');
const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => ({
  attrs: m[1].trim(),
  text: m[2],
}));

test('one script in index.html, inline, allowed by its sha256 and nothing looser', () => {
  assert.ok(scriptSrc, 'the CSP has a script-src');
  assert.equal(scripts.length, 1, 'one <script>');
  assert.equal(scripts[0].attrs, '', 'inline: no src, no type');
  const hash = createHash('sha256').update(scripts[0].text, 'utf8').digest('base64');
  assert.ok(
    scriptSrc.includes(`'sha256-${hash}'`),
    `script-src allows the loader: its sha256 is 'sha256-${hash}' (update the CSP after editing it)`,
  );
  const hashes = scriptSrc.filter((s) => s.startsWith("'sha256-"));
  assert.equal(hashes.length, 1, 'no hash of a script that is not there');
  for (const loose of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'blob:']) {
    assert.ok(!scriptSrc.includes(loose), `script-src without ${loose}`);
  }
});

test('the loader adds app.bundle.js, and only that', () => {
  const sources = [...scripts[0].text.matchAll(/\.src = '([^']*)'/g)].map((m) => m[1]);
  assert.deepEqual(sources, ['app.bundle.js']);
});
