// Shared helpers of the Node test suites (tests/*.test.mjs).
//
//   referenceDir()   the directory of the NumPy fixtures (build/reference/), generated on demand
//   loadFixture(n)   one parsed build/reference/mha-<n>.json (loadPageFixture: page.json)
//   loadMHA()        the JS API over web/mha.wasm (one instance per test file)
//   maxRelErr(a, b)  normwise relative error of a against the reference b
//   bit helpers      compare float64 values by their 64-bit patterns
//   reference*       an independent plain-JS float64 layer (forward, backward, MSE, training)
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { loadMHA as loadWasm } from '../web/mha.js';

/** The repository root (the parent of tests/). */
/**
 * Lesson 4's twelve gradients in the order the lesson derives them (dL/dY back to dX), written
 * from the course, not read from the module: tests compare the module's mha.gradOrder with it.
 */
export const LESSON4_ORDER = Object.freeze([
  'dWo',
  'dconcat',
  'dheadout',
  'dV',
  'datt',
  'dscores',
  'dQ',
  'dK',
  'dWq',
  'dWk',
  'dWv',
  'dX',
]);

/** Debian's python3 with python3-numpy (CI installs it); PYTHON overrides. */
export const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The raw text of c/mha.h (tests parse its declarations and status codes). */
export function readHeader() {
  return readFileSync(join(repoRoot, 'c', 'mha.h'), 'utf8');
}

let fixtureDir = null;

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** True if build/reference/.done exists and is newer than every tests/reference/*.py. */
function fixturesCurrent(done) {
  if (!existsSync(done)) return false;
  const made = statSync(done).mtimeMs;
  const src = join(repoRoot, 'tests', 'reference');
  return readdirSync(src)
    .filter((f) => f.endsWith('.py'))
    .every((f) => statSync(join(src, f)).mtimeMs <= made);
}

/**
 * Runs `make TARGET` in the repository root unless isCurrent() (then, or after, returns).
 * node --test runs several test files at once, so the make is serialised with a lock directory
 * (build/.TARGET.lock): one process makes, the others wait until isCurrent().
 */
function makeOnce(target, isCurrent) {
  if (isCurrent()) return;
  mkdirSync(join(repoRoot, 'build'), { recursive: true });
  const lock = join(repoRoot, 'build', `.${target}.lock`);
  const deadline = Date.now() + 5 * 60 * 1000;
  let owned = false;
  while (!isCurrent()) {
    try {
      mkdirSync(lock);
      owned = true;
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `make ${target}: waited 5 minutes for ${lock} (remove it if no make is running)`,
      );
    }
    sleep(100);
  }
  if (owned) {
    try {
      if (!isCurrent()) {
        execFileSync('make', ['--no-print-directory', target], {
          cwd: repoRoot,
          stdio: ['ignore', 'ignore', 'inherit'],
        });
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  if (!isCurrent()) throw new Error(`make ${target} did not make what the tests need`);
}

/**
 * The directory holding the NumPy fixtures (mha-*.json, page.json, rng-*.f64, rng-manifest.json).
 * If build/reference/.done is missing (a fresh clone) or older than a script in tests/reference/,
 * it runs `make --no-print-directory reference` first (after removing the stale .done), which
 * needs /usr/bin/python3 with NumPy and takes ~15 s once; several test files asking at once wait
 * for one make (makeOnce).
 */
export function referenceDir() {
  if (fixtureDir) return fixtureDir;
  const dir = join(repoRoot, 'build', 'reference');
  const done = join(dir, '.done');
  if (!fixturesCurrent(done)) rmSync(done, { force: true });
  makeOnce('reference', () => fixturesCurrent(done));
  fixtureDir = dir;
  return dir;
}

/** Names of the layer fixtures ('course', 'legacy', ...), from the mha-*.json files present. */
export function fixtureNames() {
  return readdirSync(referenceDir())
    .filter((f) => /^mha-.+\.json$/.test(f))
    .map((f) => f.slice(4, -5))
    .sort();
}

const fixtureCache = new Map();

/** The parsed fixture build/reference/mha-<name>.json (see tests/reference/README.md). */
export function loadFixture(name) {
  if (!fixtureCache.has(name)) {
    const text = readFileSync(join(referenceDir(), `mha-${name}.json`), 'utf8');
    fixtureCache.set(name, JSON.parse(text));
  }
  return fixtureCache.get(name);
}

let pageFixture = null;

/** The parsed build/reference/page.json (page_reference.py: the figures of web/model/). */
export function loadPageFixture() {
  pageFixture ??= JSON.parse(readFileSync(join(referenceDir(), 'page.json'), 'utf8'));
  return pageFixture;
}

/** A fixture array {shape, data} as a Float64Array (JSON numbers round-trip float64 exactly). */
export function f64(arr) {
  return Float64Array.from(arr.data ?? arr);
}

/** Load web/mha.wasm through web/mha.js (made first with `make wasm` when it is missing). */
export function loadMHA() {
  makeOnce('wasm', () => existsSync(join(repoRoot, 'web', 'mha.wasm')));
  return loadWasm();
}

// ------------------------------------------------------------------------------------------------
// numeric comparison

/**
 * Normwise (tensor-level) relative error of `a` against the reference `b`:
 *
 *     maxRelErr(a, b) = max_i |a_i - b_i| / max_i |b_i|
 *
 * i.e. the largest absolute difference measured in units of the reference's largest entry, not
 * an elementwise relative error (which blows up on entries that are tiny or exactly 0, e.g. the
 * masked attention weights). If b is all zeros the result is the max abs difference (0 if a == b).
 * Any NaN, or an infinity that is not matched exactly, gives Infinity (so it fails every bound).
 * Lengths must agree.
 */
export function maxRelErr(a, b) {
  if (a.length !== b.length) {
    throw new Error(`maxRelErr: lengths differ (${a.length} vs ${b.length})`);
  }
  let diff = 0;
  let ref = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i],
      y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) return Infinity;
    if (x === y) {
      if (!Number.isFinite(y)) continue;
    } else if (!Number.isFinite(x) || !Number.isFinite(y)) {
      return Infinity;
    }
    const d = Math.abs(x - y);
    if (d > diff) diff = d;
    if (Number.isFinite(y) && Math.abs(y) > ref) ref = Math.abs(y);
  }
  return ref === 0 ? diff : diff / ref;
}

/** max_i |a_i - b_i| (NaN anywhere gives Infinity). */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) {
    throw new Error(`maxAbsDiff: lengths differ (${a.length} vs ${b.length})`);
  }
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (Number.isNaN(d)) return Infinity;
    if (d > m) m = d;
  }
  return m;
}

// ------------------------------------------------------------------------------------------------
// bit patterns

function asFloat64Array(a) {
  return a instanceof Float64Array ? a : Float64Array.from(a);
}

/** The 64-bit patterns of the float64 values of `a` (a copy-free view for a Float64Array). */
export function bits(a) {
  const f = asFloat64Array(a);
  return new BigUint64Array(f.buffer, f.byteOffset, f.length);
}

/** The bit pattern of one double as '0x...' (16 hex digits). */
export function hexBits(x) {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x, true);
  return `0x${dv.getBigUint64(0, true).toString(16).padStart(16, '0')}`;
}

/** The double whose bit pattern is the hex string `hex` ('0x3fe8c43f79a2db24'). */
export function fromHexBits(hex) {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setBigUint64(0, BigInt(hex), true);
  return dv.getFloat64(0, true);
}

/**
 * Number of positions where the float64 bit patterns of a and b differ (+0 vs -0 and different
 * NaN payloads count as differences). Lengths must agree.
 */
export function bitMismatches(a, b) {
  if (a.length !== b.length) {
    throw new Error(`bitMismatches: lengths differ (${a.length} vs ${b.length})`);
  }
  const x = bits(a),
    y = bits(b);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}

/** Index of the first bit-pattern difference, or -1. */
export function firstBitMismatch(a, b) {
  if (a.length !== b.length) return 0;
  const x = bits(a),
    y = bits(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

/** True iff a and b have the same length and identical float64 bit patterns everywhere. */
export function bitEqual(a, b) {
  return a.length === b.length && firstBitMismatch(a, b) === -1;
}

/**
 * Read a raw little-endian float64 file (rng-*.f64) as a Float64Array. Copies into a fresh,
 * 8-byte-aligned buffer (a Buffer from readFileSync may sit at any offset of a shared pool).
 */
export function readF64File(path) {
  const buf = readFileSync(path);
  if (buf.length % 8 !== 0) throw new Error(`${path}: ${buf.length} bytes is not a multiple of 8`);
  const out = new Float64Array(buf.length / 8);
  new Uint8Array(out.buffer).set(buf);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    throw new Error('readF64File: big-endian hosts are not supported');
  }
  return out;
}

/** Short formatting of a figure for t.diagnostic. */
export function fmt(x) {
  return typeof x === 'number' ? x.toExponential(2) : String(x);
}

// ------------------------------------------------------------------------------------------------
// An independent plain-JS float64 layer (the course's NumPy lines as loops): tests compare the
// C/WASM results with it where no NumPy fixture exists (other dY, accumulation, training loops).
// It shares no code with c/ or web/. Arrays are flat row-major; dims = { B, T, C, heads, causal }.

/** out (M,N) = a (M,K) @ b (K,N), each entry summed in k order from 0. */
function refMatmul(a, b, M, K, N) {
  const out = new Float64Array(M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      out[i * N + j] = s;
    }
  }
  return out;
}

/** The transpose of a (M,N). */
function refTranspose(a, M, N) {
  const out = new Float64Array(M * N);
  for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) out[j * M + i] = a[i * N + j];
  return out;
}

/** (B,T,C) -> (B,h,T,hs) and back. */
function refSplit(x, B, T, C, h) {
  const hs = C / h,
    out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) {
        out[((b * h + Math.floor(c / hs)) * T + t) * hs + (c % hs)] = x[(b * T + t) * C + c];
      }
    }
  }
  return out;
}
function refMerge(x, B, T, C, h) {
  const hs = C / h,
    out = new Float64Array(B * T * C);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < C; c++) {
        out[(b * T + t) * C + c] = x[((b * h + Math.floor(c / hs)) * T + t) * hs + (c % hs)];
      }
    }
  }
  return out;
}

/**
 * Forward pass: Y = merge(softmax(mask(Q K^T / sqrt(hs))) V) Wo with Q = split(X Wq), ...
 * W = { Wq, Wk, Wv, Wo } (C,C). Returns every intermediate (scores unmasked, like the C cache).
 */
export function referenceForward(X, W, { B, T, C, heads, causal = false }) {
  const h = heads,
    hs = C / h;
  const proj = (Wx) => refSplit(refMatmul(X, Wx, B * T, C, C), B, T, C, h);
  const Q = proj(W.Wq),
    K = proj(W.Wk),
    V = proj(W.Wv);
  const scores = new Float64Array(B * h * T * T);
  const att = new Float64Array(B * h * T * T);
  const headout = new Float64Array(B * h * T * hs);
  for (let bh = 0; bh < B * h; bh++) {
    for (let i = 0; i < T; i++) {
      const row = (bh * T + i) * T;
      let max = -Infinity;
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let d = 0; d < hs; d++) s += Q[(bh * T + i) * hs + d] * K[(bh * T + j) * hs + d];
        scores[row + j] = s / Math.sqrt(hs);
        if (!(causal && j > i)) max = Math.max(max, scores[row + j]);
      }
      let sum = 0;
      for (let j = 0; j < T; j++) {
        att[row + j] = causal && j > i ? 0 : Math.exp(scores[row + j] - max);
        sum += att[row + j];
      }
      for (let j = 0; j < T; j++) att[row + j] /= sum;
      for (let d = 0; d < hs; d++) {
        let s = 0;
        for (let j = 0; j < T; j++) s += att[row + j] * V[(bh * T + j) * hs + d];
        headout[(bh * T + i) * hs + d] = s;
      }
    }
  }
  const concat = refMerge(headout, B, T, C, h);
  const Y = refMatmul(concat, W.Wo, B * T, C, C);
  return { X, Q, K, V, scores, att, headout, concat, Y };
}

/** Backward pass of referenceForward's result `f` for dY = dL/dY: every gradient of lesson 4. */
export function referenceBackward(f, W, dY, { B, T, C, heads }) {
  const h = heads,
    hs = C / h,
    BT = B * T;
  const dWo = refMatmul(refTranspose(f.concat, BT, C), dY, C, BT, C);
  const dconcat = refMatmul(dY, refTranspose(W.Wo, C, C), BT, C, C);
  const dheadout = refSplit(dconcat, B, T, C, h);
  const dV = new Float64Array(B * h * T * hs);
  const datt = new Float64Array(B * h * T * T);
  const dscores = new Float64Array(B * h * T * T);
  const dQ = new Float64Array(B * h * T * hs);
  const dK = new Float64Array(B * h * T * hs);
  const at = (bh, i, j) => (bh * T + i) * T + j; // (B,h,T,T)
  const ah = (bh, i, d) => (bh * T + i) * hs + d; // (B,h,T,hs)
  for (let bh = 0; bh < B * h; bh++) {
    for (let j = 0; j < T; j++) {
      for (let d = 0; d < hs; d++) {
        let s = 0;
        for (let i = 0; i < T; i++) s += f.att[at(bh, i, j)] * dheadout[ah(bh, i, d)];
        dV[ah(bh, j, d)] = s;
      }
    }
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        let s = 0;
        for (let d = 0; d < hs; d++) s += dheadout[ah(bh, i, d)] * f.V[ah(bh, j, d)];
        datt[at(bh, i, j)] = s;
      }
      let dot = 0;
      for (let j = 0; j < T; j++) dot += datt[at(bh, i, j)] * f.att[at(bh, i, j)];
      for (let j = 0; j < T; j++) {
        dscores[at(bh, i, j)] = f.att[at(bh, i, j)] * (datt[at(bh, i, j)] - dot);
      }
    }
    for (let i = 0; i < T; i++) {
      for (let d = 0; d < hs; d++) {
        let q = 0,
          k = 0;
        for (let j = 0; j < T; j++) {
          q += dscores[at(bh, i, j)] * f.K[ah(bh, j, d)];
          k += dscores[at(bh, j, i)] * f.Q[ah(bh, j, d)];
        }
        dQ[ah(bh, i, d)] = q / Math.sqrt(hs);
        dK[ah(bh, i, d)] = k / Math.sqrt(hs);
      }
    }
  }
  const Xt = refTranspose(f.X, BT, C);
  const g = { dWo, dconcat, dheadout, dV, datt, dscores, dQ, dK };
  const dX = new Float64Array(BT * C);
  for (const [name, d] of [
    ['q', dQ],
    ['k', dK],
    ['v', dV],
  ]) {
    const merged = refMerge(d, B, T, C, h);
    const Wx = W[`W${name}`];
    g[`dW${name}`] = refMatmul(Xt, merged, C, BT, C);
    const part = refMatmul(merged, refTranspose(Wx, C, C), BT, C, C);
    for (let i = 0; i < dX.length; i++) dX[i] += part[i];
  }
  g.dX = dX;
  return g;
}

/** mean((Y - target)^2) and its gradient 2 (Y - target) / n. */
export function referenceMse(Y, target) {
  const n = Y.length;
  let s = 0;
  const dY = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const d = Y[i] - target[i];
    s += d * d;
    dY[i] = (2 * d) / n;
  }
  return { loss: s / n, dY };
}

/** `steps` steps of W -= lr * dW on the MSE loss; returns { losses, W } (W copied first). */
export function referenceTrain(X, target, W0, dims, { lr, steps }) {
  const W = Object.fromEntries(['Wq', 'Wk', 'Wv', 'Wo'].map((k) => [k, Float64Array.from(W0[k])]));
  const losses = [];
  for (let s = 0; s < steps; s++) {
    const f = referenceForward(X, W, dims);
    const { loss, dY } = referenceMse(f.Y, target);
    losses.push(loss);
    const g = referenceBackward(f, W, dY, dims);
    for (const k of ['Wq', 'Wk', 'Wv', 'Wo']) {
      for (let i = 0; i < W[k].length; i++) W[k][i] -= lr * g[`d${k}`][i];
    }
  }
  return { losses: Float64Array.from(losses), W };
}

// npm's own CLI script, run with this node (npm test says where it is), else the PATH's npm.
export function npmCli() {
  const fromNpm = process.env.npm_execpath;
  if (fromNpm && /npm-cli\.js$/.test(fromNpm) && existsSync(fromNpm)) return fromNpm;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, 'npm');
    if (dir && existsSync(p)) return realpathSync(p);
  }
  throw new Error('npm not found on PATH');
}

/** A TCP port of 127.0.0.1 that is free right now. */
export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}
