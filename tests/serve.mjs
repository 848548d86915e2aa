// serve.mjs - a small static file server for the companion page (npm start / make serve) and the
// browser tests. Serves one directory on 127.0.0.1 only; never lists directories.
//   node tests/serve.mjs [dir=web] [port=$PORT or 8000]      (port 0 picks a free port)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
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
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      res.end(body);
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
