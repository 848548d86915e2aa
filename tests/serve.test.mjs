// tests/serve.mjs (npm start, the browser suites): the types, and compression as the browser
// asks for it (brotli, gzip, none), each decoded back to the file's bytes; what is not there is
// a 404; nothing outside the served folder.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { pickEncoding, serve } from './serve.mjs';

let dir;
let server;
let url;
// a page-like script (repetitive text compresses well) and a few other types
const script = Buffer.from('const x = 1;\n'.repeat(4000));
const wasm = Buffer.concat([Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), Buffer.alloc(5000)]);
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, ...new Array(200).fill(7)]);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mha-serve-'));
  writeFileSync(join(dir, 'app.js'), script);
  writeFileSync(join(dir, 'mha.wasm'), wasm);
  writeFileSync(join(dir, 'shot.png'), png);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  ({ server, url } = await serve(dir, 0));
});
after(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** GET path with the given Accept-Encoding: { status, headers, body (raw bytes) }. */
function get(path, accept) {
  return new Promise((ok, fail) => {
    const headers = accept === undefined ? {} : { 'accept-encoding': accept };
    request(new URL(path, url), { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        ok({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on('error', fail)
      .end();
  });
}

test('pickEncoding: brotli first, then gzip; q=0 refuses a coding; * stands for any', () => {
  assert.equal(pickEncoding('gzip, deflate, br, zstd'), 'br');
  assert.equal(pickEncoding('gzip, deflate'), 'gzip');
  assert.equal(pickEncoding('br;q=0, gzip;q=0.5'), 'gzip');
  assert.equal(pickEncoding('identity'), null);
  assert.equal(pickEncoding(''), null);
  assert.equal(pickEncoding(undefined), null);
  assert.equal(pickEncoding('*'), 'br');
  assert.equal(pickEncoding('*;q=0, gzip'), 'gzip');
  assert.equal(pickEncoding('BR'), 'br');
});

test('the script: brotli, gzip or plain as asked, each the same bytes once decoded', async () => {
  const br = await get('/app.js', 'gzip, deflate, br');
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.ok(br.body.length < script.length / 20, `${br.body.length} of ${script.length} bytes`);
  assert.ok(brotliDecompressSync(br.body).equals(script));
  const gz = await get('/app.js', 'gzip');
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gunzipSync(gz.body).equals(script));
  const plain = await get('/app.js');
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  assert.ok(plain.body.equals(script));
  // asked again: the same bytes (compressed once, kept while the file is unchanged)
  assert.ok((await get('/app.js', 'br')).body.equals(br.body));
});

test('a changed file is compressed again; wasm has its type, PNG is sent as it is', async () => {
  const changed = Buffer.from('let y = 2;\n'.repeat(3000));
  writeFileSync(join(dir, 'app.js'), changed);
  assert.ok(brotliDecompressSync((await get('/app.js', 'br')).body).equals(changed));
  writeFileSync(join(dir, 'app.js'), script);
  const w = await get('/mha.wasm', 'gzip, br');
  assert.equal(w.headers['content-type'], 'application/wasm');
  assert.ok(brotliDecompressSync(w.body).equals(wasm));
  const p = await get('/shot.png', 'gzip, br');
  assert.equal(p.headers['content-type'], 'image/png');
  assert.equal(p.headers['content-encoding'], undefined);
  assert.ok(p.body.equals(png));
  const page = await get('/', 'br');
  assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(brotliDecompressSync(page.body).toString(), '<!doctype html><title>t</title>');
});

test('missing files and paths outside the folder: 404', async () => {
  assert.equal((await get('/nope.js', 'br')).status, 404);
  assert.equal((await get('/../../etc/passwd', 'br')).status, 404);
  assert.equal((await get('/%2e%2e/%2e%2e/etc/passwd')).status, 404);
});
