// serve.mjs - a small static file server for the companion page (npm start / make serve) and the
// browser tests. Serves one directory on 127.0.0.1 only; never lists directories. Text and wasm
// are sent compressed when the browser accepts it (brotli, else gzip; Vary: Accept-Encoding),
// each file compressed once per version of it.
//   node tests/serve.mjs [dir=web] [port=$PORT or 8000]      (port 0 picks a free port)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** The types worth compressing (PNG is compressed already). */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.txt']);

/**
 * The encoding to send for an Accept-Encoding header: 'br', 'gzip' or null. A coding with q=0 is
 * refused; otherwise brotli (smaller) is preferred.
 */
export function pickEncoding(accept = '') {
  const offered = new Map(
    String(accept)
      .split(',')
      .map((part) => {
        const [name, ...params] = part.trim().toLowerCase().split(';');
        const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
        return [name, q ? Number(q.slice(2)) : 1];
      }),
  );
  const ok = (name) => (offered.get(name) ?? offered.get('*') ?? 0) > 0;
  if (ok('br')) return 'br';
  return ok('gzip') ? 'gzip' : null;
}

const ENCODE = {
  br: (body) => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }),
  gzip: (body) => gzipSync(body, { level: 9 }),
};

/**
 * Start serving `dir`; resolves to { server, url }. Two hooks, for the browser suite's engines
 * that have no request log or init scripts of their own (tests/browser/webkit.mjs):
 *   onRequest(url)            called with every request's URL (path and query)
 *   rewrite(path, body)       the body served for a file of `dir` (path as requested, with
 *                             index.html for a trailing '/'), or a file that is not there (body
 *                             null); returns the body to send, or null for a 404
 */
export function serve(dir, port = 0, { onRequest, rewrite } = {}) {
  const root = resolve(dir);
  const packed = new Map(); // `${encoding} ${path}` -> { source, body }: the last version sent
  const compressed = (key, encoding, body) => {
    const hit = packed.get(key);
    if (hit && hit.source.equals(body)) return hit.body;
    const out = ENCODE[encoding](body);
    packed.set(key, { source: Buffer.from(body), body: out });
    return out;
  };
  const server = createServer(async (req, res) => {
    try {
      onRequest?.(req.url);
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
      if (file !== root && !file.startsWith(root + sep)) {
        throw Object.assign(new Error('outside'), { code: 'ENOENT' });
      }
      const body = rewrite
        ? await rewrite(file.slice(root.length), await readOrNull(file))
        : await readFile(file);
      if (body === null) throw Object.assign(new Error('not found'), { code: 'ENOENT' });
      const headers = {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      };
      const encoding =
        COMPRESSIBLE.has(extname(file)) && pickEncoding(req.headers['accept-encoding']);
      if (COMPRESSIBLE.has(extname(file))) headers.vary = 'Accept-Encoding';
      if (!encoding) {
        res.writeHead(200, headers);
        res.end(body);
        return;
      }
      const sent = compressed(`${encoding} ${file}`, encoding, Buffer.from(body));
      res.writeHead(200, { ...headers, 'content-encoding': encoding });
      res.end(sent);
    } catch (err) {
      res.writeHead(err.code === 'ENOENT' || err.code === 'EISDIR' ? 404 : 500, {
        'content-type': 'text/plain',
      });
      res.end(err.code === 'ENOENT' || err.code === 'EISDIR' ? 'not found' : 'error');
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () =>
      ok({ server, url: `http://127.0.0.1:${server.address().port}/` }),
    );
  });
}

/** The file's bytes, or null when there is no such file. */
async function readOrNull(file) {
  try {
    return await readFile(file);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'EISDIR') return null;
    throw err;
  }
}

// The command line (npm start runs it through make serve): the URL, or one clear line saying why
// there is none (a port in use, a bad PORT), never a stack trace.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir = 'web', portText = process.env.PORT || '8000'] = process.argv.slice(2);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    console.error(`serve: PORT must be a whole number from 0 to 65535, got "${portText}"`);
    process.exit(2);
  }
  try {
    const { url } = await serve(dir, port);
    console.log(`mha-wasm companion: ${url}  (Ctrl+C to stop)`);
  } catch (err) {
    const why = {
      EADDRINUSE: `port ${port} is already in use (another npm start?)`,
      EACCES: `no permission to listen on port ${port}`,
    }[err.code];
    if (!why) throw err;
    const other = port === 65535 ? 8000 : port + 1;
    console.error(`serve: ${why}: stop that server, or pick another port: PORT=${other} npm start`);
    process.exit(1);
  }
}
