// mha.rng: NumPy's random streams bit for bit (c/rng.c), against raw float64 files written by
// NumPy itself (tests/reference/rng_streams.py -> build/reference/rng-*.f64 + rng-manifest.json)
// and against the seed-42 table of /work/shared/docs/numpy-rng.md, Part D.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  loadMHA,
  referenceDir,
  readF64File,
  bitMismatches,
  firstBitMismatch,
  hexBits,
  fromHexBits,
} from './helpers.mjs';

const mha = await loadMHA();
const dir = referenceDir();
const manifest = JSON.parse(readFileSync(join(dir, 'rng-manifest.json'), 'utf8'));
const KIND = { default: 'default_rng', legacy: 'legacy' };

// The next m values of entry e's function (standard_normal, random or normal) from generator r.
function drawFrom(r, e, m) {
  if (e.fn === 'standard_normal') return r.standardNormal(m);
  if (e.fn === 'random') return r.random(m);
  return r.normal(e.loc, e.scale, m);
}

// Draw n values of entry e's stream from a fresh generator, in calls of the given sizes (the
// last size repeats); the stream must not depend on how it is cut into calls.
function draw(e, n, sizes = [n], seed = e.seed) {
  const r = mha.rng(seed, KIND[e.kind]);
  const out = new Float64Array(n);
  try {
    for (let at = 0, i = 0; at < n; i++) {
      const m = Math.min(sizes[Math.min(i, sizes.length - 1)], n - at);
      const part = drawFrom(r, e, m);
      assert.equal(part.length, m);
      out.set(part, at);
      at += m;
    }
  } finally {
    r.free();
  }
  return out;
}

test(`manifest: NumPy 1.24.2, every generator/function/seed combination, >= 100k standard normals each`, (t) => {
  assert.equal(manifest.numpy_version, '1.24.2');
  // the C library probe ran (rng_streams.py): 'glibc-fma' or 'other (...)'
  assert.match(manifest.libm, /^(glibc-fma|other \(.+\))$/);
  const files = manifest.files;
  const seen = new Set(files.map((e) => `${e.kind}/${e.fn}/${e.seed}`));
  for (const kind of ['default', 'legacy']) {
    for (const fn of ['standard_normal', 'random', 'normal']) {
      for (const seed of [0, 1, 42, 12345, 2 ** 32 - 1]) {
        assert.ok(seen.has(`${kind}/${fn}/${seed}`), `${kind}/${fn}/${seed}`);
      }
    }
  }
  for (const fn of ['standard_normal', 'random', 'normal']) {
    assert.ok(seen.has(`default/${fn}/${2 ** 40 + 7}`));
  }
  for (const e of files) {
    assert.equal(e.seed, e.seed_hi * 2 ** 32 + e.seed_lo);
    if (e.fn === 'standard_normal') assert.ok(e.n >= 100000, `${e.file}: only ${e.n} draws`);
  }
  t.diagnostic(`${files.length} streams in the manifest`);
});

// NumPy's normal streams depend on the C library's log/exp/log1p. c/npmath.c reproduces glibc
// >= 2.29 with FMA (current x86-64 Linux); rng_streams.py probes the C library's log and log1p
// (through ctypes: what NumPy's random module calls, not np.log) and records the result. Strict
// is the default: every stream must match exactly. Only when the probe found another libm may a
// normal differ in its last bits (about one legacy normal in 20,000, by 1-2 ulps after sqrt and
// the product; numpy-rng.md section C), so only that is tolerated, never in the uniform streams.
const exactLibm = !String(manifest.libm ?? '').startsWith('other');

function ulpApart(a, b) {
  const x = new BigInt64Array(Float64Array.of(a, b).buffer);
  const d = x[0] - x[1];
  return d >= -2n && d <= 2n;
}

test('every manifest stream equals NumPy bit for bit (0 mismatches)', (t) => {
  t.diagnostic(
    `NumPy's libm here: ${manifest.libm}${exactLibm ? ' (exact match required)' : ' (differences of at most 2 ulps in normals tolerated)'}`,
  );
  let total = 0,
    bad = 0;
  const perKind = {};
  for (const e of manifest.files) {
    const ref = readF64File(join(dir, e.file));
    assert.equal(ref.length, e.n, `${e.file}: file length`);
    const got = draw(e, e.n);
    const m = bitMismatches(got, ref);
    const first = m ? ` (first at ${firstBitMismatch(got, ref)})` : '';
    t.diagnostic(`${e.file}: ${e.n} draws, ${m} mismatches${first}`);
    if (exactLibm || e.fn === 'random') {
      assert.equal(m, 0, `${e.file}: ${m} of ${e.n} differ${first}`);
    } else {
      for (let i = 0; i < e.n; i++) {
        if (!Object.is(got[i], ref[i])) {
          assert.ok(ulpApart(got[i], ref[i]), `${e.file}[${i}] differs by more than 2 ulps`);
        }
      }
      assert.ok(m * 1000 <= e.n, `${e.file}: ${m} of ${e.n} differ`);
    }
    total += e.n;
    bad += m;
    const k = `${e.kind} ${e.fn}`;
    perKind[k] = (perKind[k] ?? 0) + e.n;
  }
  t.diagnostic(`total: ${total} draws in ${manifest.files.length} files, ${bad} mismatches`);
  for (const [k, v] of Object.entries(perKind)) t.diagnostic(`  ${k}: ${v} draws`);
});

test(`the streams do not depend on how they are cut into calls (odd sizes, legacy cached normal)`, (t) => {
  // Legacy randn makes normals in pairs and caches the second; odd-sized calls exercise that.
  let total = 0;
  for (const e of manifest.files.filter((x) => x.seed === 42 || x.seed === 2 ** 32 - 1)) {
    const n = Math.min(e.n, 20000);
    const ref = readF64File(join(dir, e.file)).subarray(0, n);
    const got = draw(e, n, [1, 2, 3, 1001, 7]);
    assert.equal(bitMismatches(got, ref), 0, `${e.file} drawn in pieces`);
    // n = 0 draws nothing and does not advance the stream
    const r = mha.rng(e.seed, KIND[e.kind]);
    assert.equal(r.random(0).length, 0);
    assert.equal(r.standardNormal(0).length, 0);
    const one = drawFrom(r, e, 1);
    r.free();
    assert.equal(hexBits(one[0]), hexBits(ref[0]));
    total += n;
  }
  t.diagnostic(`${total} draws in pieces of 1, 2, 3, 1001, 7, 7, ...: identical`);
});

test('numpy-rng.md Part D: seed 42 five-value prefixes, as 64-bit patterns', (t) => {
  // produced by NumPy 1.24.2 (Debian python3-numpy, /usr/bin/python3), numpy-rng.md section D:
  //   import numpy as np; a=np.random.default_rng(42).random(5)
  //   print([hex(u) for u in a.view(np.uint64)])
  //   ... .standard_normal(5), .normal(1.0, 2.0, 5), and with np.random.seed(42): rand(5),
  //   randn(5), normal(1.0, 2.0, 5)
  const table = {
    'default_rng random': [
      '0x3fe8c43f79a2db24',
      '0x3fdc16959869e47e',
      '0x3feb79a2584ddb42',
      '0x3fe650d6c1c2c011',
      '0x3fb81c01b5339380',
    ],
    'default_rng standardNormal': [
      '0x3fd3807c1104fc6b',
      '0xbff0a3c65fca9a7e',
      '0x3fe803b239e77350',
      '0x3fee191b2d157f36',
      '0xbfff3770ac89d08f',
    ],
    'default_rng normal': [
      '0x3ff9c03e08827e36',
      '0xbff1478cbf9534fc',
      '0x400401d91cf3b9a8',
      '0x40070c8d968abf9b',
      '0xc0073770ac89d08f',
    ],
    'legacy random': [
      '0x3fd7f8771e5f51ec',
      '0x3fee6c4068bbd654',
      '0x3fe76c7e8f1e6751',
      '0x3fe32835d6632cb0',
      '0x3fc3f86b37222184',
    ],
    'legacy standardNormal': [
      '0x3fdfca2a28a9307c',
      '0xbfc1b2a505de052a',
      '0x3fe4b9dd50245e68',
      '0x3ff85e548e01aa2b',
      '0xbfcdf8bcdf57a640',
    ],
    'legacy normal': [
      '0x3fffe5151454983e',
      '0x3fe726ad7d10fd6b',
      '0x40025ceea8122f34',
      '0x40102f2a4700d516',
      '0x3fe103a190542ce0',
    ],
  };
  for (const [key, hex] of Object.entries(table)) {
    const [kind, fn] = key.split(' ');
    const r = mha.rng(42, kind);
    const got = fn === 'normal' ? r.normal(1.0, 2.0, 5) : r[fn](5);
    r.free();
    assert.deepEqual(Array.from(got, hexBits), hex, key);
  }
  // the decimals printed next to them (Python's shortest repr), drawn again
  const first = (kind, fn) => {
    const r = mha.rng(42, kind);
    const v = r[fn](1)[0];
    r.free();
    return v;
  };
  assert.equal(first('default_rng', 'random'), 0.7739560485559633);
  assert.equal(first('legacy', 'standardNormal'), 0.4967141530112327);
  assert.equal(fromHexBits(table['default_rng random'][0]), 0.7739560485559633);
  assert.deepEqual(
    Array.from(mha.standardNormal(3, { seed: 42 })),
    [0.30471707975443135, -1.0399841062404955, 0.7504511958064572],
  );
  t.diagnostic('30 seed-42 values identical to the numpy-rng.md table');
});

test('numpy-rng.md Part D: first value for other seeds, as 64-bit patterns', () => {
  // produced by NumPy 1.24.2: np.random.default_rng(s).random(), .standard_normal();
  // np.random.seed(s); np.random.rand(), np.random.randn()
  const table = [
    [0, '0x3fe461fd79fb3850', '0x3fc017ed89db8441', '0x3fe18fe1565f12a8', '0x3ffc398ef3e5cfa5'],
    [1, '0x3fe060d7be6f245c', '0x3fd61e0d28bbb3a1', '0x3fdab07d0ffa3c06', '0x3ff9fd5190657c50'],
    [12345, '0x3fcd1958c6d97fe0', '0xbff6c7fcc2ecc744', '0x3fedbf6a3f8f84b7', '0xbfca33dc4f5d203d'],
    [
      2 ** 32 - 1,
      '0x3fd01fd7ea4c363e',
      '0xbf9bed210a08635e',
      '0x3fb8fe69a3924820',
      '0x3fe4bfc38c486d8a',
    ],
  ];
  for (const [seed, dr, dn, lr, ln] of table) {
    const got = [];
    for (const [kind, fn] of [
      ['default_rng', 'random'],
      ['default_rng', 'standardNormal'],
      ['legacy', 'random'],
      ['legacy', 'standardNormal'],
    ]) {
      const r = mha.rng(seed, kind);
      got.push(hexBits(r[fn](1)[0]));
      r.free();
    }
    assert.deepEqual(got, [dr, dn, lr, ln], `seed ${seed}`);
  }
});

test(`BigInt seeds: 42n == 42, and the two-word seed 2**40+7 (number or BigInt) matches NumPy`, (t) => {
  const e = manifest.files.find(
    (x) => x.kind === 'default' && x.fn === 'standard_normal' && x.seed === 2 ** 40 + 7,
  );
  assert.ok(e, 'manifest entry for 2**40+7');
  assert.equal(e.seed_hi, 256);
  assert.equal(e.seed_lo, 7);
  const ref = readF64File(join(dir, e.file)).subarray(0, 10000);
  const asNumber = draw(e, 10000, [10000], 2 ** 40 + 7);
  const asBigInt = draw(e, 10000, [10000], (BigInt(e.seed_hi) << 32n) | BigInt(e.seed_lo));
  assert.equal(bitMismatches(asNumber, ref), 0);
  assert.equal(bitMismatches(asBigInt, ref), 0);
  // a BigInt seed gives the same stream as the number
  const a = mha.rng(42n),
    b = mha.rng(42);
  assert.equal(bitMismatches(a.standardNormal(1000), b.standardNormal(1000)), 0);
  a.free();
  b.free();
  const la = mha.rng(2n ** 32n - 1n, 'legacy'),
    lb = mha.rng(2 ** 32 - 1, 'legacy');
  assert.equal(bitMismatches(la.standardNormal(999), lb.standardNormal(999)), 0);
  la.free();
  lb.free();
  // layers seeded with BigInts: the same weights
  const l1 = mha.createLayer({ C: 8, heads: 2, seed: 2n ** 40n + 7n }),
    l2 = mha.createLayer({ C: 8, heads: 2, seed: 2 ** 40 + 7 });
  assert.equal(bitMismatches(l1.params, l2.params), 0);
  // the layer's weights are the stream scaled: W = scale * standard_normal, scale = 1/sqrt(8)
  const z = mha.standardNormal(4 * 64, { seed: 2n ** 40n + 7n });
  assert.equal(
    bitMismatches(
      l1.params,
      z.map((v) => v * (1 / Math.sqrt(8))),
    ),
    0,
  );
  l1.free();
  l2.free();
  // seeds above 2^53 only as BigInt: 2^64-1 is the largest
  const big = mha.rng(2n ** 64n - 1n);
  assert.equal(big.random(3).length, 3);
  big.free();
  assert.throws(() => mha.rng(2n ** 64n), /seed/);
  t.diagnostic(
    '2**40+7 as number and as (256n << 32n) | 7n: 10000 standard normals each, 0 mismatches',
  );
});
