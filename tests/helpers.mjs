// Shared helpers of the Node test suites (tests/*.test.mjs).
//
//   referenceDir()   the directory of the NumPy fixtures (build/reference/), generated on demand
//   loadFixture(n)   one parsed build/reference/mha-<n>.json
//   loadMHA()        the JS API over web/mha.wasm (one instance per test file)
//   maxRelErr(a, b)  normwise relative error of a against the reference b
//   bit helpers      compare float64 values by their 64-bit patterns
//
// Nothing here is a test by itself; node --test only runs files named *.test.mjs.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMHA as loadWasm } from '../web/mha.js';

/** The repository root (the parent of tests/). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The raw text of c/mha.h (tests parse its declarations and status codes). */
export function readHeader() {
  return readFileSync(join(repoRoot, 'c', 'mha.h'), 'utf8');
}

let fixtureDir = null;

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The directory holding the NumPy fixtures (mha-*.json, rng-*.f64, rng-manifest.json).
 * If build/reference/.done is missing (a fresh clone), it runs `make --no-print-directory
 * reference` in the repository root first, which needs /usr/bin/python3 with NumPy and takes
 * ~8 s once. node --test may run several test files at once, so the generation is serialised
 * with a lock directory (build/.reference.lock); the others wait for .done.
 */
export function referenceDir() {
  if (fixtureDir) return fixtureDir;
  const dir = join(repoRoot, 'build', 'reference');
  const done = join(dir, '.done');
  if (!existsSync(done)) {
    mkdirSync(join(repoRoot, 'build'), { recursive: true });
    const lock = join(repoRoot, 'build', '.reference.lock');
    const deadline = Date.now() + 5 * 60 * 1000;
    let owned = false;
    while (!existsSync(done)) {
      try {
        mkdirSync(lock);
        owned = true;
        break;
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `referenceDir: waited 5 minutes for ${lock} (remove it if no make is running)`,
        );
      }
      sleep(100);
    }
    if (owned) {
      try {
        if (!existsSync(done)) {
          execFileSync('make', ['--no-print-directory', 'reference'], {
            cwd: repoRoot,
            stdio: ['ignore', 'ignore', 'inherit'],
          });
        }
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
    }
    if (!existsSync(done)) throw new Error(`make reference did not produce ${done}`);
  }
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

/** A fixture array {shape, data} as a Float64Array (JSON numbers round-trip float64 exactly). */
export function f64(arr) {
  return Float64Array.from(arr.data ?? arr);
}

/** Load web/mha.wasm through web/mha.js. */
export function loadMHA() {
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
