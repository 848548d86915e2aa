#!/usr/bin/env node
// bench.mjs - the benchmark of mha-wasm (`npm run bench` / `make bench`); never part of the tests.
//
// One train step = forward + MSE loss + backward + SGD update, timed warm and repeatedly for four
// peers that do the same work on the same inputs:
//   mha-wasm   web/mha.wasm through web/mha.js in this process: layer.train(X, target, {steps: 1})
//   native     the same C built with the host compiler (tests/bench/bench_native.c, mha_train)
//   NumPy      the layer as the NumPy course writes it, float64, OpenBLAS with one thread
//              (tests/bench/bench_numpy.py under Debian's /usr/bin/python3)
//   tfjs       TensorFlow.js + @tensorflow/tfjs-backend-wasm, float32, tf.variableGrads
//              (tests/bench/bench_tfjs.mjs in its own Node process)
//   chromium   the same web/mha.js + web/mha.wasm in a page of headless Chromium, whose V8 is newer
//              than Node's (tests/bench/bench_chromium.mjs in its own Node process)
// The peers other than mha-wasm are long-lived child processes that wait on stdin, so only one
// peer runs at a time. Each round runs every peer once on every size, in an order rotated from
// round to round; a run resets the weights, takes one untimed warm-up step (its loss is compared
// across peers) and then times steps until BENCH_MIN_TIME seconds and BENCH_MIN_REPS steps.
// The table reports, per peer and size, the median over rounds of each round's median step time;
// a second table gives the process CPU time per step, which a loaded machine inflates less.
// The report also gives the first loss of every peer, checked against mha-wasm's (same inputs, same
// work), and the steady-state checks (wasm memory at L, native malloc count).
//
// Environment:
//   BENCH_ROUNDS=3         rounds (>= 1; 3 or more for a meaningful median)
//   BENCH_SIZES=S,M,L      sizes to run
//   BENCH_PEERS=wasm,native,numpy,tfjs,chromium
//   BENCH_MIN_TIME=0.3     seconds of timed steps per run (at least)
//   BENCH_MIN_REPS=2       timed steps per run (at least)
//   BENCH_WARMUP=2         seconds (and >= 200 steps) of untimed warm-up per peer at size S before
//                          the rounds: tfjs's JavaScript needs a few hundred steps to be optimised
//   BENCH_LR=0.1           SGD learning rate
//   BENCH_SEED=42          seed of the inputs and weights (np.random.default_rng(seed))
//   BENCH_CFLAGS=-O3       optimisation flags of the native build
//   BENCH_PAGE=1           0 leaves out the page timings (tests/bench/bench_page.mjs: first render,
//                          lesson 4's gradient check in the page, the wasm's gzipped size)
//   BENCH_PAGE_LOADS=11    fresh page loads each over http and from file://
//   BENCH_CHECK=1          0 leaves out the gradient check over workers: lesson 4's full check at
//                          course size in this thread (layer.gradcheck) and through the page's
//                          compute engine on BENCH_CHECK_WORKERS worker threads (Node's
//                          worker_threads running web/jobs/worker-main.js, as the page's workers)
//   BENCH_CHECK_WORKERS=1,2,4
//   CC=cc, PYTHON=/usr/bin/python3
// Writes build/bench/{S,M,L}.{X,target,W}.f64 (the inputs), build/bench/bench_native,
// build/bench/tfjs.cjs and build/bench/results.json.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = path.join(ROOT, 'build', 'bench');
const BENCH = path.join(ROOT, 'tests', 'bench');

const ALL_SIZES = {
  S: { B: 2, T: 6, C: 64, h: 4 },
  M: { B: 1, T: 128, C: 256, h: 8 },
  L: { B: 1, T: 512, C: 768, h: 12 },
};
const ALL_PEERS = ['wasm', 'native', 'numpy', 'tfjs', 'chromium'];
const PEER_LABEL = {
  wasm: 'mha-wasm',
  native: 'native C',
  numpy: 'NumPy',
  tfjs: 'tfjs-wasm',
  chromium: 'mha-wasm/Chromium',
};

// First losses must agree with mha-wasm's: the float64 peers to TOL64; tfjs's float32 Y, with the
// loss summed in float64, to TOL32. tfjs's own loss (its Mean kernel adds the n = B*T*C float32
// squares one after the other in float32) is held to the worst-case bound of that sum, n * 2^-24.
const TOL64 = 1e-12;
const TOL32 = 1e-5;
const seqSumBound32 = ({ B, T, C }) => Math.max(TOL32, B * T * C * 2 ** -24);

function envList(name, all, dflt = all) {
  const v = process.env[name];
  const list = v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : dflt;
  for (const x of list) {
    if (!all.includes(x)) {
      fail(`${name}: unknown entry ${JSON.stringify(x)} (one of ${all.join(',')})`);
    }
  }
  return all.filter((x) => list.includes(x));
}
function envNum(name, dflt, min) {
  const v =
    process.env[name] === undefined || process.env[name] === '' ? dflt : Number(process.env[name]);
  if (!Number.isFinite(v) || v < min) {
    fail(`${name} must be a number >= ${min}, got ${process.env[name]}`);
  }
  return v;
}
function fail(msg) {
  console.error(`bench: ${msg}`);
  process.exit(2);
}

const ROUNDS = Math.floor(envNum('BENCH_ROUNDS', 3, 1));
const SIZES = envList('BENCH_SIZES', Object.keys(ALL_SIZES));
const PEERS = envList('BENCH_PEERS', ALL_PEERS);
const MIN_TIME = envNum('BENCH_MIN_TIME', 0.3, 0);
const MIN_REPS = Math.floor(envNum('BENCH_MIN_REPS', 2, 1));
const WARMUP = envNum('BENCH_WARMUP', 2, 0);
const LR = envNum('BENCH_LR', 0.1, 0);
const SEED = Math.floor(envNum('BENCH_SEED', 42, 0));
const CFLAGS = (process.env.BENCH_CFLAGS ?? '-O3').split(/\s+/).filter(Boolean);
const CC = process.env.CC || 'cc';
const PYTHON = process.env.PYTHON || '/usr/bin/python3';
const PAGE = process.env.BENCH_PAGE !== '0';
const CHECK = process.env.BENCH_CHECK !== '0';
const CHECK_WORKERS = (process.env.BENCH_CHECK_WORKERS ?? '1,2,4').split(',').map((w) => {
  const n = Number(w);
  if (!Number.isInteger(n) || n < 1 || n > 8) fail(`BENCH_CHECK_WORKERS: bad entry ${w}`);
  return n;
});
if (!PEERS.includes('wasm')) {
  fail('BENCH_PEERS must include wasm (the reference of the ratios and of the loss check)');
}
if (/\s/.test(OUT)) {
  fail(`the build directory ${OUT} contains whitespace; the peers' protocol cannot pass it`);
}

// ------------------------------------------------------------------------------------------------
// helpers

const log = (...a) => console.error(...a); // progress: stderr
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function sh(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      ...opts,
    }).trim();
  } catch (e) {
    return null;
  }
}
function firstLine(s) {
  return s ? s.split('\n')[0].trim() : 'unavailable';
}

function fmtTime(s) {
  if (s === undefined || !Number.isFinite(s)) return '-';
  if (s < 1e-3) return `${(s * 1e6).toPrecision(3)} µs`;
  if (s < 1) return `${(s * 1e3).toPrecision(3)} ms`;
  return `${s.toPrecision(3)} s`;
}
const fmtRatio = (r) => (Number.isFinite(r) ? `${r.toPrecision(3)}×` : '-');
const fmtG = (g) => (Number.isFinite(g) ? g.toPrecision(3) : '-');

function table(header, rows, align) {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (align[i] === 'l' ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(header), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)]
    .map((l) => l.trimEnd())
    .join('\n');
}

// FLOP of one train step (see FLOP_FORMULA)
function flops({ B, T, C }) {
  return 24 * B * T * C * C + 12 * B * T * T * C;
}
const FLOP_FORMULA = [
  'FLOP per train step = 24·B·T·C² + 12·B·T²·C, counting 2 FLOP per multiply-add of every matmul:',
  '  forward   8·B·T·C²   X@Wq, X@Wk, X@Wv, concat@Wo        (4 · 2·B·T·C²)',
  '            4·B·T²·C   Q@Kᵀ and att@V over all heads       (2 · 2·B·h·T²·hs, hs = C/h)',
  '  backward  2× the forward: 16·B·T·C² (dW and dX of the four projections) + ' +
    '8·B·T²·C (dV, datt, dQ, dK)',
  '  softmax, its backward, the 1/sqrt(hs) scaling, MSE, SGD and the head split/merge ' +
    'are not counted.',
  '  GFLOP/s = FLOP / (median step time) / 1e9.',
].join('\n');

// ------------------------------------------------------------------------------------------------
// machine and load

function machine() {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const info = fs.readFileSync('/proc/cpuinfo', 'utf8');
    const field = (k) => info.match(new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm'))?.[1].trim();
    const flags = new Set((field('flags') ?? '').split(/\s+/));
    const simd = ['sse2', 'avx', 'avx2', 'fma', 'avx512f'].filter((f) => flags.has(f)).join(' ');
    cpu =
      `${field('model name') ?? cpu} (family ${field('cpu family')} model ${field('model')}, ` +
      `${Math.round(Number(field('cpu MHz')))} MHz, ${simd}${flags.has('hypervisor') ? ', virtual machine' : ''})`;
  } catch {
    /* not Linux */
  }
  const mem = `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`;
  return { cpu, cores: os.cpus().length, mem, os: `${os.type()} ${os.release()} ${os.arch()}` };
}

function loadLine() {
  const up = sh('uptime', []);
  const la = os.loadavg();
  return {
    text: up ?? `load average: ${la.map((x) => x.toFixed(2)).join(', ')}`,
    load1: la[0],
    loads: la,
  };
}

// ------------------------------------------------------------------------------------------------
// builds: web/mha.wasm through make, the native peer and the tfjs bundle here

function build() {
  const targets = PAGE ? ['wasm', 'bundle'] : ['wasm'];
  log(`bench: make ${targets.join(' ')}`);
  try {
    execFileSync('make', ['--no-print-directory', ...targets], {
      cwd: ROOT,
      stdio: ['ignore', 2, 2],
    });
  } catch {
    fail(`\`make ${targets.join(' ')}\` failed`);
  }
  fs.mkdirSync(OUT, { recursive: true });

  // the emcc command make uses (printed, not run), with the export list abbreviated
  const wasmCmd = firstLine(
    sh('make', ['--no-print-directory', '-n', '-B', 'web/mha.wasm']),
  ).replace(/(-sEXPORTED_FUNCTIONS=)(\S+)/, (_, k, v) => `${k}<${v.split(',').length} functions>`);

  let nativeCmd = null;
  if (PEERS.includes('native')) {
    const src = fs
      .readdirSync(path.join(ROOT, 'c'))
      .filter((f) => f.endsWith('.c') && f !== 'demo.c')
      .sort()
      .map((f) => `c/${f}`);
    const args = [
      ...CFLAGS,
      '-std=c11',
      '-Wall',
      '-Wextra',
      '-ffp-contract=off',
      '-DNDEBUG',
      '-Ic',
      ...src,
      'tests/bench/bench_native.c',
      '-lm',
      '-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc',
      '-o',
      path.relative(ROOT, path.join(OUT, 'bench_native')),
    ];
    nativeCmd = `${CC} ${args.join(' ')}`;
    log(`bench: ${nativeCmd}`);
    try {
      execFileSync(CC, args, { cwd: ROOT, stdio: ['ignore', 2, 2] });
    } catch {
      fail('the native build failed');
    }
  }
  return { wasmCmd, nativeCmd };
}

async function buildTfjsBundle() {
  // tfjs-core's Node bundle registers no gradients; bundle its ES modules + gradients + the wasm
  // backend into one CommonJS file (see bench_tfjs.mjs)
  const out = path.join(OUT, 'tfjs.cjs');
  log(
    'bench: esbuild tfjs-core + register_all_gradients + tfjs-backend-wasm -> build/bench/tfjs.cjs',
  );
  const esbuild = await import('esbuild');
  await esbuild.build({
    stdin: {
      contents: [
        "export * from '@tensorflow/tfjs-core';",
        "import '@tensorflow/tfjs-core/dist/register_all_gradients';",
        "export * as wasm from '@tensorflow/tfjs-backend-wasm';",
      ].join('\n'),
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    mainFields: ['module', 'main'],
    outfile: out,
    logLevel: 'warning',
  });
  return out;
}

// ------------------------------------------------------------------------------------------------
// peers

// A child process speaking the line protocol of bench_native.c / bench_numpy.py / bench_tfjs.mjs
class ChildPeer {
  constructor(name, cmd, args, env) {
    this.name = name;
    this.pending = [];
    this.exited = false;
    this.proc = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.proc.on('error', (e) => this.#die(`cannot start: ${e.message}`));
    this.proc.on('exit', (code, sig) => this.#die(`exited (${sig ?? code})`));
    this.proc.stdin.on('error', () => {});
    readline.createInterface({ input: this.proc.stdout }).on('line', (line) => {
      if (!line.startsWith('@@ ')) {
        log(`[${name}] ${line}`);
        return;
      }
      const p = this.pending.shift();
      if (!p) return;
      try {
        p.resolve(JSON.parse(line.slice(3)));
      } catch {
        p.reject(new Error(`${name}: unreadable reply: ${line}`));
      }
    });
  }

  #die(why) {
    this.exited = true;
    for (const p of this.pending.splice(0)) p.reject(new Error(`${this.name}: ${why}`));
  }

  async call(cmd) {
    if (this.exited) throw new Error(`${this.name}: not running`);
    const reply = await new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.proc.stdin.write(`${cmd}\n`);
    });
    if (reply.error) throw new Error(`${this.name}: ${reply.error}`);
    return reply;
  }

  info() {
    return this.call('info');
  }
  load(name, { B, T, C, h }) {
    return this.call(`load ${name} ${B} ${T} ${C} ${h} ${LR} ${OUT}`);
  }
  run(name, minTime, minReps, check = false) {
    return this.call(`run ${name} ${minTime} ${minReps} ${check ? 1 : 0}`);
  }
  close() {
    if (!this.exited && !this.closed) {
      this.closed = true;
      this.proc.stdin.write('quit\n');
      this.proc.stdin.end();
    }
  }
}

// mha-wasm in this process, with the same interface
class WasmPeer {
  constructor(mha) {
    this.name = 'wasm';
    this.mha = mha;
    this.cases = new Map();
  }

  async info() {
    return { mha_version: this.mha.version };
  }

  async load(name, { B, T, C, h }, data) {
    const layer = this.mha.createLayer({ C, heads: h, seed: 0 });
    this.cases.set(name, { B, T, layer, ...data });
  }

  async run(name, minTime, minReps) {
    const { B, T, layer, X, target, W } = this.cases.get(name);
    const mem = this.mha.exports.memory;
    const opts = { B, T, steps: 1, lr: LR };
    layer.params.set(W); // reset the weights
    const first = layer.train(X, target, opts)[0]; // warm-up
    const memBefore = mem.buffer.byteLength;
    const times = [];
    let total = 0,
      loss;
    const cpu0 = process.cpuUsage();
    while (total < minTime || times.length < minReps) {
      const t0 = performance.now();
      loss = layer.train(X, target, opts)[0];
      const dt = (performance.now() - t0) / 1000;
      times.push(dt);
      total += dt;
    }
    const cpu = process.cpuUsage(cpu0);
    return {
      first_loss: first,
      last_loss: loss,
      times,
      cpu: (cpu.user + cpu.system) / 1e6,
      memory_before: memBefore,
      memory_after: mem.buffer.byteLength,
    };
  }

  close() {
    for (const { layer } of this.cases.values()) layer.free();
    this.cases.clear();
  }
}

// ------------------------------------------------------------------------------------------------
// the inputs: one NumPy-identical stream per size, written as raw float64 for the peers

function makeInputs(mha, name, { B, T, C }) {
  // rng = np.random.default_rng(SEED); X = rng.standard_normal(n); target = ...; W = ... / sqrt(C)
  const n = B * T * C;
  const rng = mha.rng(SEED);
  let X, target, W;
  try {
    X = rng.standardNormal(n);
    target = rng.standardNormal(n);
    W = rng.standardNormal(4 * C * C);
  } finally {
    rng.free();
  }
  const scale = 1 / Math.sqrt(C);
  for (let i = 0; i < W.length; i++) W[i] *= scale;
  for (const [what, a] of [
    ['X', X],
    ['target', target],
    ['W', W],
  ]) {
    fs.writeFileSync(
      path.join(OUT, `${name}.${what}.f64`),
      new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
    );
  }
  return { X, target, W };
}

// ------------------------------------------------------------------------------------------------

async function main() {
  const t00 = performance.now();
  const mach = machine();
  const load0 = loadLine();
  const { wasmCmd, nativeCmd } = build();
  const tfjsBundle = PEERS.includes('tfjs') ? await buildTfjsBundle() : null;

  const { loadMHA } = await import(pathToFileURL(path.join(ROOT, 'web', 'mha.js')).href);
  const mha = await loadMHA();

  const peers = {};
  peers.wasm = new WasmPeer(mha);
  if (PEERS.includes('native')) {
    peers.native = new ChildPeer('native', path.join(OUT, 'bench_native'), [], {});
  }
  if (PEERS.includes('numpy')) {
    peers.numpy = new ChildPeer('numpy', PYTHON, [path.join(BENCH, 'bench_numpy.py')], {
      OPENBLAS_NUM_THREADS: '1',
      OMP_NUM_THREADS: '1',
      MKL_NUM_THREADS: '1',
    });
  }
  if (PEERS.includes('tfjs')) {
    peers.tfjs = new ChildPeer(
      'tfjs',
      process.execPath,
      [path.join(BENCH, 'bench_tfjs.mjs'), tfjsBundle],
      {},
    );
  }
  if (PEERS.includes('chromium')) {
    peers.chromium = new ChildPeer(
      'chromium',
      process.execPath,
      [path.join(BENCH, 'bench_chromium.mjs')],
      {},
    );
  }
  const order = PEERS.filter((p) => peers[p]);

  const results = {
    config: {
      rounds: ROUNDS,
      sizes: SIZES,
      peers: order,
      minTime: MIN_TIME,
      minReps: MIN_REPS,
      lr: LR,
      seed: SEED,
    },
    runs: [],
  };
  try {
    const info = {};
    for (const p of order) info[p] = await peers[p].info();
    if (info.numpy && info.numpy.openblas_threads !== 1) {
      throw new Error(
        `NumPy: OpenBLAS reports ${info.numpy.openblas_threads} threads (libraries: ` +
          `${info.numpy.libraries.join(', ') || 'none'}); expected 1. Debian's NumPy uses the ` +
          'reference BLAS unless OpenBLAS is installed: apt-get install libopenblas0-pthread',
      );
    }
    if (info.tfjs && (info.tfjs.backend !== 'wasm' || info.tfjs.threads)) {
      throw new Error(`tfjs: backend ${info.tfjs.backend}, threads ${info.tfjs.threads}`);
    }
    if (info.chromium && info.chromium.mha_version !== mha.version) {
      throw new Error(`Chromium loaded mha-wasm ${info.chromium.mha_version}, Node ${mha.version}`);
    }

    const loaded = SIZES.includes('S') ? SIZES : ['S', ...SIZES]; // S is also the warm-up size
    log(`bench: inputs (seed ${SEED}) -> build/bench/{${loaded.join(',')}}.{X,target,W}.f64`);
    for (const s of loaded) {
      const data = makeInputs(mha, s, ALL_SIZES[s]);
      for (const p of order) await peers[p].load(s, ALL_SIZES[s], data);
    }

    // warm-up: every peer trains at S for a while (JIT tiers: V8's for mha-wasm's wasm and for
    // tfjs's JavaScript, which takes a few hundred steps); each run later starts with a warm-up
    // step
    if (WARMUP > 0) {
      for (const p of order) {
        const t0 = performance.now();
        const res = await peers[p].run('S', WARMUP, 200);
        log(
          `bench: warm-up S ${PEER_LABEL[p].padEnd(9)} ${res.times.length + 1} steps, ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
      }
    }

    // rounds, alternating: per round every peer once per size, order rotated each round
    const perRound = {}; // perRound[size][peer] = [median of round 1, ...]
    const firstLoss = {}; // firstLoss[size][peer] = [first loss of round 1, ...]
    const tfjsF64 = {}; // tfjsF64[size] = tfjs's first loss summed in float64 (round 1)
    const best = {}; // best[size][peer] = fastest timed step of all rounds
    const cpuRound = {}; // cpuRound[size][peer] = [process CPU time per timed step, round 1, ...]
    const inflation = {}; // inflation[size][peer] = [wall / CPU time of timed steps, round 1, ...]
    const reps = {};
    const memL = [],
      memLChromium = [];
    for (const s of SIZES) {
      perRound[s] = {};
      firstLoss[s] = {};
      reps[s] = {};
      best[s] = {};
      cpuRound[s] = {};
      inflation[s] = {};
      for (const p of order) {
        perRound[s][p] = [];
        firstLoss[s][p] = [];
        reps[s][p] = [];
        best[s][p] = Infinity;
        cpuRound[s][p] = [];
        inflation[s][p] = [];
      }
    }
    let nativeAllocs = 0,
      nativeSteps = 0;
    const tfjsTensors = [];
    // the bookkeeping of one run (peer p at size s in round r, counted from 0); returns its median
    const record = (r, s, p, res) => {
      const med = median(res.times);
      best[s][p] = res.times.reduce((a, t) => Math.min(a, t), best[s][p]);
      if (p === 'tfjs' && r === 0) tfjsF64[s] = res.first_loss_f64;
      perRound[s][p].push(med);
      cpuRound[s][p].push(res.cpu / res.times.length);
      inflation[s][p].push(res.times.reduce((a, t) => a + t, 0) / res.cpu);
      firstLoss[s][p].push(res.first_loss);
      reps[s][p].push(res.times.length);
      if (p === 'native') {
        nativeAllocs += res.allocs;
        nativeSteps += res.times.length;
      }
      if (p === 'tfjs') tfjsTensors.push([res.tensors_before, res.tensors_after]);
      if (p === 'wasm' && s === 'L') {
        memL.push([res.memory_before, res.memory_after, res.times.length]);
      }
      if (p === 'chromium' && s === 'L') {
        memLChromium.push([res.memory_before, res.memory_after, res.times.length]);
      }
      results.runs.push({ round: r + 1, size: s, peer: p, median: med, ...res });
      return med;
    };
    for (let r = 0; r < ROUNDS; r++) {
      const rot = order.map((_, i) => order[(i + r) % order.length]);
      for (const s of SIZES) {
        for (const p of rot) {
          const t0 = performance.now();
          const res = await peers[p].run(s, MIN_TIME, MIN_REPS, r === 0);
          const med = record(r, s, p, res);
          log(
            `bench: round ${r + 1}/${ROUNDS} ${s} ${PEER_LABEL[p].padEnd(9)} ${fmtTime(med).padStart(9)} ` +
              `(${res.times.length} steps, ${((performance.now() - t0) / 1000).toFixed(1)} s)  first loss ${res.first_loss}`,
          );
        }
        if (r === 0) checkLosses(s, firstLoss[s], tfjsF64[s]); // stop early on different work
      }
    }
    for (const s of SIZES) checkLosses(s, firstLoss[s], tfjsF64[s]);
    const checkRows = CHECK ? await benchCheckWorkers(mha) : null;
    const load1 = loadLine();

    // ---------------------------------------------------------------------------------------------
    // report (stdout)
    const out = [];
    const say = (s = '') => out.push(s);
    say(
      'mha-wasm benchmark: one train step = forward + MSE loss + backward + SGD update ' +
        '(non-causal)',
    );
    say();
    say(`machine   ${mach.cpu}, ${mach.cores} logical cores, ${mach.mem} RAM, ${mach.os}`);
    say(`load      before: ${load0.text}`);
    say(`          after:  ${load1.text}`);
    const maxLoad = Math.max(load0.load1, load1.load1);
    if (maxLoad > 0.5) {
      say(
        `WARNING   1-minute load average ${maxLoad.toFixed(2)} > 0.5: other processes share this machine's ${mach.cores} cores; times are inflated and noisy.`,
      );
    }
    say();
    say('versions');
    say(`  node        ${process.version} (V8 ${process.versions.v8})`);
    say(
      `  mha-wasm    ${mha.version}; web/mha.wasm ${(fs.statSync(path.join(ROOT, 'web', 'mha.wasm')).size / 1024).toFixed(1)} KB, ` +
        `SIMD ${/-msimd128\b/.test(wasmCmd) ? 'on (-msimd128)' : 'off (no -msimd128)'}`,
    );
    say(`              ${wasmCmd}`);
    say(`  emcc        ${firstLine(sh('emcc', ['--version']))}`);
    if (nativeCmd) {
      say(`  cc          ${firstLine(sh(CC, ['--version']))}`);
      say(`              ${nativeCmd}`);
    }
    if (info.numpy) {
      const n = info.numpy;
      say(`  NumPy       ${n.numpy}, Python ${n.python} (${n.executable}), float64`);
      say(
        `  OpenBLAS    ${n.openblas_config ?? 'not loaded'}; threads ${n.openblas_threads} (OPENBLAS_NUM_THREADS=${n.OPENBLAS_NUM_THREADS})`,
      );
      say(`              ${n.openblas_library ?? n.libraries.join(', ')}`);
    }
    if (info.tfjs) {
      const t = info.tfjs;
      say(
        `  tfjs        tfjs-core ${t.tfjs_core}, tfjs-backend-wasm ${t.tfjs_backend_wasm}: ${t.binary}, ` +
          `threads ${t.threads ? 'on' : 'off'} (XNNPACK pool ${t.xnnpack_threads}), float32, prod mode ${t.prod ? 'on' : 'off'}`,
      );
    }
    if (info.chromium) {
      const c = info.chromium;
      say(
        `  Chromium    ${c.chromium} headless (${c.executable}), mha-wasm ${c.mha_version} in a page, ` +
          `cross-origin isolated ${c.isolated ? 'yes (5 µs timer)' : 'NO (100 µs timer)'}`,
      );
    }
    say();
    say(`warm-up: every peer first trains ${WARMUP} s (and >= 200 steps) at S, untimed.`);
    say(
      `rounds ${ROUNDS}, alternating (peer order rotated each round); per run: weights reset, 1 untimed warm-up step, then ` +
        `>= ${MIN_TIME} s and >= ${MIN_REPS} timed steps; time = median over rounds of each run's median step.`,
    );
    say(
      `inputs: np.random.default_rng(${SEED}): X, target = standard_normal(B·T·C) each, then Wq|Wk|Wv|Wo = standard_normal(4·C·C)/sqrt(C); lr = ${LR}.`,
    );
    say();

    const T = (s, p) => (perRound[s][p]?.length ? median(perRound[s][p]) : NaN);
    const CPU = (s, p) => (cpuRound[s][p]?.length ? median(cpuRound[s][p]) : NaN);
    const header = [
      'size',
      'B,T,C,h',
      'GFLOP',
      'mha-wasm',
      'native',
      'NumPy',
      'tfjs-wasm',
      'wasm/NumPy',
      'tfjs/wasm',
      'wasm/native',
      'wasm GFLOP/s',
      'native GFLOP/s',
    ];
    const summary = (time) =>
      table(
        header,
        SIZES.map((s) => {
          const z = ALL_SIZES[s],
            f = flops(z);
          const tw = time(s, 'wasm'),
            tn = time(s, 'native'),
            tp = time(s, 'numpy'),
            tt = time(s, 'tfjs');
          return [
            s,
            `${z.B},${z.T},${z.C},${z.h}`,
            (f / 1e9).toPrecision(3),
            fmtTime(tw),
            fmtTime(tn),
            fmtTime(tp),
            fmtTime(tt),
            fmtRatio(tw / tp),
            fmtRatio(tt / tw),
            fmtRatio(tw / tn),
            fmtG(f / tw / 1e9),
            fmtG(f / tn / 1e9),
          ];
        }),
        ['l', 'l'],
      );
    const chromeHeader = [
      'size',
      'mha-wasm/Chromium',
      'Chromium/NumPy',
      'tfjs/Chromium',
      'Chromium GFLOP/s',
      'Node/Chromium',
    ];
    const chromeSummary = (time) =>
      table(
        chromeHeader,
        SIZES.map((s) => {
          const f = flops(ALL_SIZES[s]),
            tc = time(s, 'chromium');
          return [
            s,
            fmtTime(tc),
            fmtRatio(tc / time(s, 'numpy')),
            fmtRatio(time(s, 'tfjs') / tc),
            fmtG(f / tc / 1e9),
            fmtRatio(time(s, 'wasm') / tc),
          ];
        }),
        ['l'],
      );
    say(
      "wall-clock time per train step (median over rounds of each run's median step); " +
        'mha-wasm = in Node',
    );
    say(summary(T));
    say(
      '  ratios of times: wasm/NumPy > 1 means mha-wasm is slower than NumPy; ' +
        'tfjs/wasm > 1 means tfjs is slower than mha-wasm.',
    );
    if (order.includes('chromium')) {
      say();
      say(
        "the same module in headless Chromium (the companion page's engine; " +
          'tfjs and NumPy as above)',
      );
      say(chromeSummary(T));
    }
    say();
    say(
      "CPU time per train step (the process's CPU time over a run's timed steps / steps, " +
        'median over rounds): a mean, not',
    );
    say(
      'inflated by waiting for a shared CPU, so the better comparison on a loaded machine ' +
        'once a step outlasts a scheduler',
    );
    say("time slice (M, L); Node's CPU time includes its GC and JIT threads");
    say(summary(CPU));
    say();
    say(FLOP_FORMULA);
    say();

    say(
      "per peer: wall-clock median over rounds; the rounds' medians; timed steps per run; " +
        'fastest single step; GFLOP/s',
    );
    say(
      'of the median; CPU time per step; wall/CPU = wall-clock over CPU time of the timed steps ' +
        '(median over rounds),',
    );
    say('how much waiting for the CPU inflated the wall-clock times (about 1 on an idle machine).');
    const drows = [];
    for (const s of SIZES) {
      for (const p of order) {
        const f = flops(ALL_SIZES[s]);
        drows.push([
          s,
          PEER_LABEL[p],
          fmtTime(T(s, p)),
          perRound[s][p].map(fmtTime).join(', '),
          reps[s][p].join(','),
          fmtTime(best[s][p]),
          fmtG(f / T(s, p) / 1e9),
          fmtTime(CPU(s, p)),
          fmtRatio(median(inflation[s][p])),
        ]);
      }
    }
    say(
      table(
        ['size', 'peer', 'median', 'rounds', 'steps', 'fastest', 'GFLOP/s', 'CPU/step', 'wall/CPU'],
        drows,
        ['l', 'l', 'r', 'l', 'l'],
      ),
    );
    say();

    say('same work: first loss (weights W0, before any update) of every run');
    const lrows = [];
    for (const s of SIZES) {
      const ref = firstLoss[s].wasm[0];
      for (const p of order) {
        const vals = firstLoss[s][p];
        const rel = Math.max(...vals.map((v) => Math.abs(v - ref) / Math.abs(ref)));
        const same = vals.every((v) => v === vals[0]);
        lrows.push([
          s,
          PEER_LABEL[p],
          vals[0].toPrecision(17),
          p === 'wasm' ? 'reference' : rel.toExponential(2),
          p === 'tfjs'
            ? `<= ${seqSumBound32(ALL_SIZES[s]).toPrecision(2)} (n·2⁻²⁴)`
            : `<= ${TOL64}`,
          same ? 'identical in every round' : 'varies between rounds',
        ]);
        if (p === 'tfjs') {
          lrows.push([
            s,
            'tfjs, Σ in f64',
            tfjsF64[s].toPrecision(17),
            (Math.abs(tfjsF64[s] - ref) / Math.abs(ref)).toExponential(2),
            `<= ${TOL32}`,
            'its float32 Y, the mean taken in float64',
          ]);
        }
      }
    }
    say(
      table(['size', 'peer', 'first loss', 'rel. diff', 'bound', ''], lrows, [
        'l',
        'l',
        'r',
        'r',
        'l',
        'l',
      ]),
    );
    if (order.includes('tfjs')) {
      say(
        "  tfjs-wasm's own loss comes from its Mean kernel, which adds the n = B·T·C float32 " +
          'squares one after the other in',
      );
      say(
        '  float32 (worst-case relative error n·2⁻²⁴); the "Σ in f64" row takes the mean of ' +
          'the same float32 Y in float64.',
      );
    }
    say();

    say('steady state (no allocation per call)');
    if (memL.length) {
      const grew = memL.filter(([a, b]) => a !== b);
      const steps = memL.reduce((a, [, , n]) => a + n, 0);
      say(
        `  mha-wasm at L: wasm memory ${(mha.exports.memory.buffer.byteLength / 2 ** 20).toFixed(1)} MiB ` +
          `(${mha.exports.memory.buffer.byteLength} bytes) after L; ${
            grew.length
              ? `GREW during ${grew.length} of ${memL.length} runs`
              : `unchanged over ${steps} timed steps in ${memL.length} runs`
          }.`,
      );
    } else {
      say(
        `  mha-wasm: wasm memory ${(mha.exports.memory.buffer.byteLength / 2 ** 20).toFixed(1)} MiB (L not run).`,
      );
    }
    if (memLChromium.length) {
      const grew = memLChromium.filter(([a, b]) => a !== b);
      say(
        `  mha-wasm/Chromium at L: wasm memory ${(memLChromium[memLChromium.length - 1][1] / 2 ** 20).toFixed(1)} MiB; ${
          grew.length
            ? `GREW during ${grew.length} of ${memLChromium.length} runs`
            : `unchanged over the timed steps of ${memLChromium.length} runs`
        }.`,
      );
    }
    if (peers.native) {
      say(
        `  native: ${nativeAllocs} malloc/calloc/realloc calls in ${nativeSteps} timed mha_train steps (counted with -Wl,--wrap).`,
      );
    }
    if (tfjsTensors.length) {
      const leak = tfjsTensors.filter(([a, b]) => a !== b).length;
      say(
        `  tfjs: ${leak ? `tensor count CHANGED in ${leak} runs` : `tensor count constant (${tfjsTensors[0][0]}) across every run`}.`,
      );
    }
    say();
    if (checkRows) {
      say(checkRows.text);
      say();
      results.gradcheckWorkers = checkRows.rows;
    }
    if (PAGE) {
      for (const p of order) peers[p].close(); // idle peers (a browser among them) off the CPU
      await new Promise((resolve) => setTimeout(resolve, 1000));
      log('bench: the page (tests/bench/bench_page.mjs)');
      const { benchPage } = await import(pathToFileURL(path.join(BENCH, 'bench_page.mjs')).href);
      const page = await benchPage({ log });
      say(page.text);
      say();
      results.page = {
        runs: page.runs,
        floor: page.floor,
        blank: page.blank,
        wasmBytes: page.wasmBytes,
        wasmGzipBytes: page.wasmGzipBytes,
        bundleBytes: page.bundleBytes,
        chromium: page.chromium,
      };
    }
    say(`total wall time ${((performance.now() - t00) / 1000).toFixed(0)} s`);
    console.log(out.join('\n'));

    results.machine = mach;
    results.load = { before: load0, after: load1 };
    results.info = info;
    results.flopFormula = FLOP_FORMULA;
    results.summary = Object.fromEntries(
      SIZES.map((s) => [
        s,
        {
          ...ALL_SIZES[s],
          flop: flops(ALL_SIZES[s]),
          ...Object.fromEntries(
            order.map((p) => [
              p,
              {
                median: T(s, p),
                rounds: perRound[s][p],
                fastest: best[s][p],
                cpuPerStep: cpuRound[s][p],
                firstLoss: firstLoss[s][p],
              },
            ]),
          ),
        },
      ]),
    );
    results.wasmMemoryBytes = mha.exports.memory.buffer.byteLength;
    fs.writeFileSync(path.join(OUT, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
    log('bench: results -> build/bench/results.json');
  } finally {
    for (const p of order) peers[p].close();
  }
}

// ------------------------------------------------------------------------------------------------
// the gradient check over workers

/** Two gradient-check reports hold the same numbers, bit for bit. */
function sameReport(a, b) {
  return (
    a.length === b.length &&
    b.every((row, i) =>
      Object.keys(row).every((k) =>
        typeof row[k] === 'number' ? Object.is(a[i][k], row[k]) : true,
      ),
    )
  );
}

/**
 * Lesson 4's full check at course size (B, T, C, h = 2, 6, 64, 4; every one of its 21,568
 * entries): layer.gradcheck in this thread, then compute.gradcheck on 1, 2, 4 workers (split by
 * tensor), ROUNDS rounds in rotated order; median wall time from submit to report.
 */
async function benchCheckWorkers(mha) {
  const web = (f) => pathToFileURL(path.join(ROOT, 'web', f)).href;
  const { courseData } = await import(web('model/course.js'));
  const { layerWith } = await import(web('model/layers.js'));
  const { Scheduler } = await import(web('jobs/scheduler.js'));
  const { createCompute } = await import(web('jobs/compute.js'));
  const { nodeSpawner } = await import(
    pathToFileURL(path.join(ROOT, 'tests', 'jobs', 'compute-node-worker.mjs')).href
  );
  const wasm = fs.readFileSync(path.join(ROOT, 'web', 'mha.wasm'));
  const d = courseData(mha);
  const args = { C: d.C, heads: 4, W: d.W, X: d.X, opts: { B: d.B, T: d.T, G: d.dY } };
  const direct = () => {
    const layer = layerWith(mha, d.C, 4, d.W);
    try {
      return layer.gradcheck(d.X, args.opts);
    } finally {
      layer.free();
    }
  };
  const expected = direct();
  const runs = [{ label: 'layer.gradcheck, this thread', run: async () => direct(), times: [] }];
  for (const n of CHECK_WORKERS) {
    const compute = createCompute({
      mha,
      scheduler: new Scheduler(),
      workers: n,
      wasm,
      spawner: nodeSpawner(),
    });
    await compute.forward({ ...args, B: d.B, T: d.T }).promise; // the workers are up
    const run = async () => {
      const job = compute.gradcheck({ ...args, reuse: false }); // a run each round
      const report = await job.promise;
      return Object.assign(report, { busyMs: job.busyMs });
    };
    runs.push({ label: `${n} worker${n > 1 ? 's' : ''}`, n, compute, run, times: [], busy: [] });
  }
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < runs.length; i++) {
        const x = runs[(i + r) % runs.length];
        const t0 = performance.now();
        const report = await x.run();
        x.times.push((performance.now() - t0) / 1000);
        if (report.busyMs !== undefined) x.busy.push(report.busyMs / 1000);
        x.same = (x.same ?? true) && sameReport(report, expected);
        log(`bench: gradient check ${x.label}: ${fmtTime(x.times.at(-1))}`);
      }
    }
  } finally {
    for (const x of runs) x.compute?.terminate();
  }
  const base = median(runs[0].times);
  const rows = runs.map((x) => [
    x.label,
    fmtTime(median(x.times)),
    fmtRatio(base / median(x.times)),
    x.times.map(fmtTime).join(', '),
    x.busy ? fmtTime(median(x.busy)) : '-',
    x.same ? 'identical' : 'DIFFERS',
  ]);
  const entries = expected.reduce((a, r) => a + r.checked, 0);
  const text = [
    `gradient check at course size over 1, 2, 4 workers: lesson 4's full check (B,T,C,h = 2,6,64,4; ` +
      `all ${entries.toLocaleString('en')} entries), median of ${ROUNDS} rounds, submit to report;`,
    `workers are Node worker_threads running web/jobs/worker-main.js (the page's worker), split by ` +
      `tensor; this machine has ${os.cpus().length} logical cores.`,
    table(
      ['run', 'time', 'speed-up', 'rounds', 'busy (summed)', 'report vs layer.gradcheck'],
      rows,
      ['l', 'r', 'r', 'l', 'r', 'l'],
    ),
  ].join('\n');
  if (runs.some((x) => !x.same)) {
    console.error('bench: a gradient check over workers differs from layer.gradcheck');
    process.exit(1);
  }
  return {
    text,
    rows: runs.map((x) => ({ label: x.label, workers: x.n ?? 0, times: x.times, busy: x.busy })),
  };
}

// Every peer's first loss (round 1) against mha-wasm's; different values mean different work.
function checkLosses(size, fl, tfjsF64) {
  const ref = fl.wasm[0];
  const bad = [];
  const check = (label, v, tol) => {
    const rel = Math.abs(v - ref) / Math.abs(ref);
    if (!(rel <= tol)) {
      bad.push(`${label} ${v} vs mha-wasm ${ref} (relative ${rel.toExponential(2)} > ${tol})`);
    }
  };
  for (const [p, vals] of Object.entries(fl)) {
    for (const v of vals) {
      check(PEER_LABEL[p], v, p === 'tfjs' ? seqSumBound32(ALL_SIZES[size]) : TOL64);
    }
  }
  if (fl.tfjs) check('tfjs (its Y, mean in float64)', tfjsF64, TOL32);
  if (bad.length) {
    console.error(
      `bench: the peers do not compute the same first loss at ${size}:\n  ${bad.join('\n  ')}`,
    );
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`bench: ${e.stack ?? e}`);
  process.exit(1);
});
