// bench_chromium.mjs - the "mha-wasm in Chromium" peer of the benchmark (tests/bench/bench.mjs
// starts it in its own Node process; not a test). The same web/mha.js + web/mha.wasm as the Node
// peer, loaded by a page in headless Chromium (Debian's /usr/bin/chromium through playwright-core),
// so the table shows what a student's browser does with the module: Chromium's V8 is newer than
// Node's and compiles the SIMD kernels differently.
//
// The page is served from 127.0.0.1 with cross-origin isolation (COOP/COEP), which gives
// performance.now() a 5 µs resolution instead of 100 µs. One train step is layer.train(X, target,
// {steps: 1}), timed inside the page exactly as the Node peer times it.
//
// Protocol: that of bench_tfjs.mjs (info / load NAME B T C H LR DIR / run NAME MIN_S MIN_REPS /
// quit).
// "cpu" is the CPU time (user + system, from /proc) of every process of this browser over the
// timed steps, 10 ms resolution: the renderer's main thread plus its compiler and GC threads.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../browser/browser.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEB = path.join(ROOT, 'web');
let dataDir = null; // set by the first load command

// ------------------------------------------------------------------------------------------------
// CPU time of this process's descendants (the browser's processes), from /proc

const TICKS = 100; // USER_HZ on Linux
function descendantsCpu() {
  const parent = new Map(),
    ticks = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on
    parent.set(Number(d), Number(f[1]));
    ticks.set(Number(d), Number(f[11]) + Number(f[12])); // utime + stime
  }
  let total = 0;
  for (const [pid, t] of ticks) {
    for (let p = parent.get(pid); p; p = parent.get(p)) {
      if (p === process.pid) {
        total += t;
        break;
      }
    }
  }
  return total / TICKS;
}

// ------------------------------------------------------------------------------------------------
// the page's server: mha.js, mha.wasm and the inputs, cross-origin isolated

function startServer() {
  const files = {
    '/mha.js': [path.join(WEB, 'mha.js'), 'text/javascript'],
    '/mha.wasm': [path.join(WEB, 'mha.wasm'), 'application/wasm'],
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x').pathname;
    const headers = {
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-embedder-policy': 'require-corp',
      'cross-origin-resource-policy': 'same-origin',
      'cache-control': 'no-store',
    };
    let file = files[url];
    const m = /^\/data\/([A-Za-z0-9]+)\.(X|target|W)\.f64$/.exec(url);
    if (m && dataDir) {
      file = [path.join(dataDir, `${m[1]}.${m[2]}.f64`), 'application/octet-stream'];
    }
    if (url === '/') {
      res.writeHead(200, { ...headers, 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><meta charset="utf-8"><title>mha-wasm bench</title>');
      return;
    }
    if (!file) {
      res.writeHead(404, headers);
      res.end();
      return;
    }
    fs.readFile(file[0], (err, body) => {
      if (err) {
        res.writeHead(404, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, 'content-type': file[1] });
      res.end(body);
    });
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () =>
      ok({ server, url: `http://127.0.0.1:${server.address().port}/` }),
    ),
  );
}

const { server, url } = await startServer();
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: CHROMIUM_ARGS,
});
const page = await (await browser.newContext()).newPage();
await page.goto(url);
const pageInfo = await page.evaluate(async () => {
  const { loadMHA } = await import('/mha.js');
  globalThis.bench = { mha: await loadMHA(), cases: new Map() };
  return {
    mha_version: globalThis.bench.mha.version,
    isolated: globalThis.crossOriginIsolated,
    ua: navigator.userAgent,
  };
});

// one size's case in the page, { name, B, T, C, h, lr, dir }: its inputs are read from dir
async function load({ dir, ...layerCase }) {
  dataDir = path.resolve(dir);
  await page.evaluate(async ({ name, B, T, C, h, lr }) => {
    const get = async (what) =>
      new Float64Array(await (await fetch(`/data/${name}.${what}.f64`)).arrayBuffer());
    const [X, target, W] = await Promise.all([get('X'), get('target'), get('W')]);
    const old = globalThis.bench.cases.get(name);
    if (old) old.layer.free();
    globalThis.bench.cases.set(name, {
      B,
      T,
      lr,
      X,
      target,
      W,
      layer: globalThis.bench.mha.createLayer({ C, heads: h, seed: 0 }),
    });
  }, layerCase);
}

// one run of case job.name: at least job.minTime seconds and job.minReps timed steps
async function run(job) {
  // reset the weights and take the untimed warm-up step (its loss is the first loss)
  const first = await page.evaluate((name) => {
    const c = globalThis.bench.cases.get(name);
    c.layer.params.set(c.W);
    return c.layer.train(c.X, c.target, { B: c.B, T: c.T, steps: 1, lr: c.lr })[0];
  }, job.name);
  const cpu0 = descendantsCpu();
  const res = await page.evaluate(({ name, minTime, minReps }) => {
    const c = globalThis.bench.cases.get(name);
    const mem = globalThis.bench.mha.exports.memory;
    const opts = { B: c.B, T: c.T, steps: 1, lr: c.lr };
    const memoryBefore = mem.buffer.byteLength;
    const times = [];
    let total = 0,
      loss;
    while (total < minTime || times.length < minReps) {
      const t0 = performance.now();
      loss = c.layer.train(c.X, c.target, opts)[0];
      const dt = (performance.now() - t0) / 1000;
      times.push(dt);
      total += dt;
    }
    return {
      last_loss: loss,
      times,
      memory_before: memoryBefore,
      memory_after: mem.buffer.byteLength,
    };
  }, job);
  return { first_loss: first, ...res, cpu: descendantsCpu() - cpu0 };
}

const reply = (obj) => process.stdout.write(`@@ ${JSON.stringify(obj)}\n`);
const rl = readline.createInterface({ input: process.stdin, terminal: false });
try {
  for await (const line of rl) {
    const cmd = line.trim().split(/\s+/);
    if (!cmd[0]) continue;
    if (cmd[0] === 'quit') break;
    try {
      if (cmd[0] === 'info') {
        reply({ chromium: browser.version(), executable: CHROMIUM, ...pageInfo });
      } else if (cmd[0] === 'load') {
        const [name, B, T, C, h, lr, dir] = cmd.slice(1);
        const nums = { B: Number(B), T: Number(T), C: Number(C), h: Number(h), lr: Number(lr) };
        await load({ name, ...nums, dir });
        reply({ ok: true });
      } else if (cmd[0] === 'run') {
        reply(await run({ name: cmd[1], minTime: Number(cmd[2]), minReps: Number(cmd[3]) }));
      } else throw new Error(`unknown command ${cmd[0]}`);
    } catch (e) {
      reply({ error: String(e?.message ?? e) });
    }
  }
} finally {
  rl.close();
  await browser.close();
  server.close();
}
