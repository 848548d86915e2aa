// The notebook check's file formats (web/check.js, issue 11): every file NumPy wrote
// (tests/reference/notebook_formats.py -> build/reference/notebook-formats/) reads back bit for
// bit, and every file the writers write is read by NumPy (python3 + NumPy, spawned) bit for bit.
// Partly unreadable .npz files (issue 18) give every member np.load reads as numbers and skip the
// others with why; lists as Python and NumPy 1 and 2 print them read as 1-D arrays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PYTHON, referenceDir } from '../helpers.mjs';
import { loadNpz, parseNumpyText, readNpy, readNpz, writeNpy, writeNpz } from '../../web/check.js';

const dir = join(referenceDir(), 'notebook-formats');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const readFixture = (file) => new Uint8Array(readFileSync(join(dir, file)));

/** Each entry's 64 bits as 16 hex digits (NaN payloads included). */
function bitsOf(f64) {
  return Array.from(new BigUint64Array(Float64Array.from(f64).buffer), (b) =>
    b.toString(16).padStart(16, '0'),
  );
}

/** sha256 of the little-endian float64 bytes (every NaN made np.nan's first if asked). */
function sha256Of(f64, nanCanonical = false) {
  const copy = Float64Array.from(f64, (v) => (nanCanonical && Number.isNaN(v) ? NaN : v));
  const bytes = new Uint8Array(copy.buffer);
  if (nanCanonical) {
    const bits = new BigUint64Array(copy.buffer);
    copy.forEach((v, i) => {
      if (Number.isNaN(v)) bits[i] = 0x7ff8000000000000n;
    });
  }
  return createHash('sha256').update(bytes).digest('hex');
}

/** Assert an array read by the page equals the manifest's record of it, bit for bit. */
function assertSameArray(got, want, label) {
  assert.deepEqual(got.shape, want.shape, `${label}: shape`);
  assert.ok(got.data instanceof Float64Array, `${label}: data is a Float64Array`);
  if (want.bits) assert.deepEqual(bitsOf(got.data), want.bits, `${label}: bits`);
  assert.equal(sha256Of(got.data, want.nan_canonical), want.sha256, `${label}: sha256`);
}

/** Run python3 + NumPy over `files` in `tmp`: np.load each, report shape/dtype/bits as JSON. */
function numpyReads(tmp, files) {
  const script = String.raw`
import hashlib, io, json, sys
import numpy as np
from numpy.lib import format as npformat
def describe(a):
    f = np.ascontiguousarray(a.astype('<f8'))
    return {'dtype': a.dtype.str, 'shape': list(a.shape),
            'sha256': hashlib.sha256(f.tobytes()).hexdigest()}
out = []
for path in sys.argv[1:]:
    raw = open(path, 'rb').read()
    if path.endswith('.npy'):
        a = np.load(path)
        with open(path, 'rb') as f:
            version = npformat.read_magic(f)
        buf = io.BytesIO()
        np.save(buf, a)
        out.append({**describe(a), 'version': list(version), 'same_as_np_save': buf.getvalue() == raw})
    else:
        with np.load(path) as z:
            out.append({'members': [{'name': n, **describe(z[n])} for n in z.files]})
print(json.dumps(out))
`;
  const paths = files.map((f) => join(tmp, f));
  return JSON.parse(execFileSync(PYTHON, ['-c', script, ...paths], { encoding: 'utf8' }));
}

/** A reproducible float64 array: special values first, then a simple LCG's values. */
function sampleData(n, seed) {
  const special = [0, -0, 1, -1.5, NaN, Infinity, -Infinity, 5e-324, -Number.MAX_VALUE, 1 / 3];
  const data = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    data[i] = i < special.length ? special[(i + seed) % special.length] : (s / 2 ** 32 - 0.5) * 8;
  }
  return data;
}

const WRITE_SHAPES = [[], [1], [5], [3, 4], [2, 3, 4], [2, 1, 3, 2], [0], [2, 0, 3], [300, 400]];
WRITE_SHAPES.push([1, 2, 1, 2, 1, 2, 1, 2]);

// ------------------------------------------------------------------------------------------------
// .npy

const matrix = manifest.npy.filter((e) => /^npy-(le|be|na)-/.test(e.file));
const crafted = manifest.npy.filter((e) => !matrix.includes(e));

test(`the .npy matrix covers 21 dtypes x orders, C/F, versions 1-3, ndim 0-4 (${matrix.length} files)`, () => {
  const combos = new Set(matrix.map((e) => /^npy-(.+)-v\d-\dd\.npy$/.exec(e.file)[1]));
  assert.equal(new Set(matrix.map((e) => e.descr)).size, 21);
  assert.deepEqual(new Set(matrix.map((e) => e.version[0])), new Set([1, 2, 3]));
  assert.deepEqual(new Set(matrix.map((e) => e.shape.length)), new Set([0, 1, 2, 3, 4]));
  assert.equal(combos.size, 42); // 21 dtype variants x C/F
  assert.equal(matrix.length, 21 * 3 * (5 + 3)); // C: ndim 0-4; F: ndim 2-4
});

test(`all ${matrix.length} dtype x order x version x ndim .npy files read back bit for bit`, () => {
  for (const e of matrix) {
    const got = readNpy(readFixture(e.file));
    assertSameArray(got, e, e.file);
    assert.equal(got.dtype, e.descr, `${e.file}: dtype`);
    assert.equal(got.fortranOrder, e.fortran_order, `${e.file}: fortranOrder`);
  }
});

test(`all ${crafted.length} crafted .npy headers (and every float16) read as np.load reads them`, () => {
  for (const e of crafted) {
    const got = readNpy(readFixture(e.file).buffer); // an ArrayBuffer works too
    assertSameArray(got, e, e.file);
    assert.equal(got.dtype, e.descr, `${e.file}: dtype`);
  }
});

test('readNpy takes a Uint8Array view into a larger buffer (a Node Buffer slice)', () => {
  const file = readFileSync(join(dir, matrix[0].file));
  const padded = Buffer.concat([Buffer.from('xyz'), file, Buffer.from('tail')]);
  const view = padded.subarray(3, 3 + file.length);
  assertSameArray(readNpy(view), matrix[0], 'view');
});

test(`writeNpy: ${WRITE_SHAPES.length} shapes (0-d to 8-d) read back in JS bit for bit`, () => {
  WRITE_SHAPES.forEach((shape, k) => {
    const data = sampleData(
      shape.reduce((a, b) => a * b, 1),
      k,
    );
    const back = readNpy(writeNpy(data, shape));
    assert.deepEqual(back.shape, shape);
    assert.deepEqual(bitsOf(back.data), bitsOf(data));
    assert.equal(back.dtype, '<f8');
    assert.equal(back.fortranOrder, false);
  });
  assert.deepEqual(bitsOf(readNpy(writeNpy([1.5, -2], [2])).data), bitsOf([1.5, -2]));
});

test(`writeNpy: NumPy reads all ${WRITE_SHAPES.length} files bit for bit, byte-identical to np.save`, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'mha-npy-'));
  try {
    const files = WRITE_SHAPES.map((shape, k) => {
      const data = sampleData(
        shape.reduce((a, b) => a * b, 1),
        k,
      );
      writeFileSync(join(tmp, `w${k}.npy`), writeNpy(data, shape));
      return { file: `w${k}.npy`, shape, sha256: sha256Of(data) };
    });
    const seen = numpyReads(
      tmp,
      files.map((f) => f.file),
    );
    files.forEach((f, k) => {
      assert.deepEqual(seen[k].shape, f.shape, f.file);
      assert.equal(seen[k].dtype, '<f8', f.file);
      assert.equal(seen[k].sha256, f.sha256, `${f.file}: NumPy's values`);
      assert.deepEqual(seen[k].version, [1, 0], f.file);
      assert.equal(seen[k].same_as_np_save, true, `${f.file}: bytes differ from np.save's`);
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------------------------------
// .npz

const npzFiles = manifest.npz;
const npzArrays = npzFiles.reduce((n, f) => n + f.members.length, 0);
const has = (bytes, text) => Buffer.from(bytes).includes(Buffer.from(text, 'latin1'));

test(`all ${npzFiles.length} NumPy .npz files (${npzArrays} arrays) read back bit for bit`, () => {
  for (const f of npzFiles) {
    const got = readNpz(readFixture(f.file));
    assert.deepEqual(
      Object.keys(got),
      f.members.map((m) => m.name),
      `${f.file}: names in zip order`,
    );
    for (const m of f.members) {
      assertSameArray(got[m.name], m, `${f.file}/${m.name}`);
      assert.equal(got[m.name].dtype, m.descr, `${f.file}/${m.name}: dtype`);
    }
  }
});

test('the .npz fixtures exercise zip64 (extra fields, end records), streaming, deflate', () => {
  const file = (name) => readFixture(`npz-${name}.npz`);
  // np.savez's force_zip64: each local header carries a zip64 extra field (id 0x0001)
  const savez = file('savez');
  assert.equal(new DataView(savez.buffer).getUint16(30 + 'X.npy'.length, true), 0x0001);
  assert.ok(has(file('zip64'), 'PK\x06\x06') && has(file('zip64'), 'PK\x06\x07'));
  assert.ok(!has(savez, 'PK\x06\x06'));
  assert.equal(file('streamed')[6] & 8, 8); // sizes in a data descriptor after the data
  assert.equal(file('savez_compressed')[8], 8); // method 8: deflate
  assert.equal(file('savez')[8], 0); // method 0: stored
  // 2 MiB of zeros (deflated ~1000:1, so many output chunks per input chunk) and 480 kB of noise
  assert.ok(file('large-compressed').length < file('large-stored').length - 2 * 2 ** 20);
});

test('.npz names are returned as plain strings: markup, non-ASCII, a directory, __proto__', () => {
  const got = readNpz(readFixture('npz-names.npz'));
  assert.deepEqual(Object.keys(got), [
    '<img src=x onerror=alert(1)>',
    'Wq_ünïcödé',
    'dir/X',
    '__proto__',
  ]);
  assert.ok(Object.hasOwn(got, '__proto__'));
  assert.equal(Object.getPrototypeOf(got), Object.prototype);
  assert.deepEqual(got.__proto__.shape, []); // an own property, not the prototype
  assert.equal(got.__proto__.data[0], 2);
});

// ------------------------------------------------------------------------------------------------
// partly unreadable .npz (issue 18)

// what a skipped member's reason says, by why NumPy itself cannot give it as numbers
const SKIP_REASONS = {
  object: /^an object array (of \d+ Python objects )?\(.*never unpickled here\)$/,
  complex: /^complex numbers \(dtype '<c16'\)$/,
  text: /^strings \(dtype '<U\d+'\), not numbers$/,
  bytes: /^strings \(dtype '\|S\d+'\), not numbers$/,
  structured: /^a structured array \(named fields\)$/,
  duplicate: /^a later member has the same name \(np\.load reads the last one/,
  damaged: /^damaged: its CRC-32 check fails$/,
};
const partial = manifest.npz_partial;
const readable = partial.filter((f) => f.members.length > 0);

test(`${readable.length} partly unreadable .npz: what np.load reads loads bit for bit, the rest is skipped with why`, () => {
  let skips = 0;
  for (const f of readable) {
    const { arrays, skipped } = loadNpz(readFixture(f.file));
    assert.deepEqual(
      Object.keys(arrays),
      f.members.map((m) => m.name),
      `${f.file}: names`,
    );
    for (const m of f.members) assertSameArray(arrays[m.name], m, `${f.file}/${m.name}`);
    assert.deepEqual(
      skipped.map((s) => s.name),
      f.skipped.map((s) => s.name),
      `${f.file}: skipped`,
    );
    f.skipped.forEach(({ name, why }, i) => {
      assert.match(skipped[i].reason, SKIP_REASONS[why], `${f.file}/${name}: ${why}`);
      assert.ok(skipped[i].fix.length > 10, `${f.file}/${name}: what to save instead`);
      skips++;
    });
    // readNpz: the same arrays, without the skipped members
    assert.deepEqual(Object.keys(readNpz(readFixture(f.file))), Object.keys(arrays));
  }
  assert.equal(skips, 9); // cache twice, the 5 of the mixed file, a duplicate X, a damaged Wk
});

test('a saved dict, a list of arrays, complex and str members: what to save instead', () => {
  const fix = (file) =>
    Object.fromEntries(loadNpz(readFixture(file)).skipped.map((s) => [s.name, s.fix]));
  // the case: np.savez('f.npz', X=X, Wq=Wq, ..., cache=cache) with cache a dict
  const cache = loadNpz(readFixture('npz-partial-cache.npz'));
  assert.deepEqual(cache.skipped, [
    {
      name: 'cache',
      reason: 'an object array (a pickled Python object, never unpickled here)',
      fix: "save a dict as its arrays: np.savez('mha_check.npz', **cache)",
    },
  ]);
  assert.deepEqual(Object.keys(cache.arrays), ['X', 'Wq', 'Wk', 'Wv', 'Wo']);
  const mixed = fix('npz-partial-mixed.npz');
  assert.match(mixed.grads, /np\.savez\('mha_check\.npz', \*grads\).*np\.stack\(grads\)/);
  assert.equal(mixed.z, "save the real part: np.savez('mha_check.npz', z=z.real)");
  assert.equal(mixed.labels, 'nothing to check: leave it out');
  assert.match(
    loadNpz(readFixture('npz-partial-mixed.npz')).skipped[0].reason,
    /^an object array of 3 Python objects/,
  );
  // a name used twice: the last one, as np.load reads it (the manifest records np.load's X)
  assert.deepEqual(Object.keys(readNpz(readFixture('npz-partial-duplicate.npz'))), ['Wq', 'X']);
});

test('an .npz whose every member is skipped is refused, each member with its reason', () => {
  const none = partial.find((f) => f.members.length === 0);
  assert.deepEqual(
    none.skipped.map((s) => s.why),
    ['object', 'complex', 'text'],
  );
  for (const read of [loadNpz, readNpz]) {
    assert.throws(() => read(readFixture(none.file)), {
      message:
        "No array in this .npz can be read (all 3 are skipped): 'cache': an object array (a " +
        "pickled Python object, never unpickled here); save a dict as its arrays: np.savez('" +
        "mha_check.npz', **cache). 'z': complex numbers (dtype '<c16'); save the real part: " +
        "np.savez('mha_check.npz', z=z.real). 'labels': strings (dtype '<U3'), not numbers; " +
        'nothing to check: leave it out.',
    });
  }
});

/** The arrays writeNpz is tested with: shapes 0-d to 4-d, names NumPy and the page must keep. */
function npzSample() {
  const shapes = { X: [2, 6, 8], Wq: [8, 8], loss: [], v: [5], att: [1, 2, 3, 3], none: [0, 3] };
  Object.assign(shapes, { '<b>markup</b>': [2], ünïcödé: [1, 1], 'dir/sub': [3] });
  const arrays = {};
  Object.entries(shapes).forEach(([name, shape], k) => {
    arrays[name] = {
      data: sampleData(
        shape.reduce((a, b) => a * b, 1),
        k + 20,
      ),
      shape,
    };
  });
  return arrays;
}

test('writeNpz (stored and compressed): 9 arrays, 0-d to 4-d, read back in JS bit for bit', () => {
  const arrays = npzSample();
  for (const compress of [false, true]) {
    const bytes = writeNpz(arrays, { compress });
    assert.equal(bytes[8], compress ? 8 : 0, 'zip method of the first member');
    assert.deepEqual(writeNpz(arrays, { compress }), bytes, 'the same arrays give the same bytes');
    const back = readNpz(bytes);
    assert.deepEqual(Object.keys(back), Object.keys(arrays));
    for (const [name, a] of Object.entries(arrays)) {
      assert.deepEqual(back[name].shape, a.shape, name);
      assert.deepEqual(bitsOf(back[name].data), bitsOf(a.data), name);
    }
  }
  assert.ok(writeNpz(arrays, { compress: true }).length < writeNpz(arrays).length);
});

test('writeNpz (stored and compressed): np.load reads all 9 arrays of each bit for bit', () => {
  const arrays = npzSample();
  const tmp = mkdtempSync(join(tmpdir(), 'mha-npz-'));
  try {
    writeFileSync(join(tmp, 'stored.npz'), writeNpz(arrays));
    writeFileSync(join(tmp, 'compressed.npz'), writeNpz(arrays, { compress: true }));
    const seen = numpyReads(tmp, ['stored.npz', 'compressed.npz']);
    for (const { members } of seen) {
      assert.deepEqual(
        members.map((m) => m.name),
        Object.keys(arrays),
      );
      for (const m of members) {
        assert.deepEqual(m.shape, arrays[m.name].shape, m.name);
        assert.equal(m.dtype, '<f8', m.name);
        assert.equal(m.sha256, sha256Of(arrays[m.name].data), `${m.name}: NumPy's values`);
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------------------------------
// print(a) and repr(a)

const texts = manifest.text.filter((t) => t.error === null);
const summarised = manifest.text.filter((t) => t.error === 'summarised');
const fromBits = (hex) =>
  new Float64Array(BigUint64Array.from(hex, (h) => BigInt(`0x${h}`)).buffer);
const labels = new Set(manifest.text.map((t) => t.label)).size;

test(`parseNumpyText: all ${texts.length} print/repr texts (${labels} arrays) give the printed values bit for bit`, () => {
  for (const t of texts) {
    const got = parseNumpyText(t.text);
    const label = `${t.kind} ${t.label}`;
    assert.deepEqual(got.shape, t.shape, `${label}: shape`);
    assert.deepEqual(bitsOf(got.data), t.values, `${label}: values`);
    assert.equal(got.dtype, 'text');
    assert.equal(got.printedDtype, t.printed_dtype, `${label}: printedDtype`);
    assert.ok(got.resolution instanceof Float64Array && got.resolution.length === got.data.length);
  }
  assert.ok(texts.some((t) => t.shape.length === 4) && texts.some((t) => t.shape.length === 0));
});

/** Half an ulp of x in a dtype with `mantissa` fraction bits (0 for float64's own rounding). */
const halfUlp = (x, mantissa) =>
  x === 0 ? 0 : 2 ** (Math.floor(Math.log2(Math.abs(x))) - mantissa - 1);

test(`parseNumpyText: every array printed lies within resolution of its text (${texts.length} texts)`, () => {
  // |printed decimal - array| <= resolution (NumPy's rounding to D digits), and parsing the decimal
  // adds half a float64 ulp. float32/float16 print the shortest digits that identify the value in
  // their own dtype, which can miss by up to half of that dtype's ulp more (0.3 for 0.30000001...).
  const bits = { float32: 23, float16: 10 };
  let checked = 0;
  for (const t of texts) {
    const got = parseNumpyText(t.text);
    const original = fromBits(t.original);
    got.data.forEach((v, i) => {
      const o = original[i];
      if (!Number.isFinite(o)) {
        assert.ok(Object.is(v, o), `${t.kind} ${t.label}[${i}]: ${v} for ${o}`);
        assert.equal(got.resolution[i], 0);
        return;
      }
      const own = t.dtype in bits ? halfUlp(o, bits[t.dtype]) : 0;
      const bound = got.resolution[i] + own + halfUlp(v, 52);
      assert.ok(Math.abs(v - o) <= bound, `${t.kind} ${t.label}[${i}]: |${v} - ${o}| > ${bound}`);
      checked++;
    });
  }
  assert.ok(checked > 500, `only ${checked} entries checked`);
});

test('parseNumpyText: resolution as the contract defines it (fixed, scientific, integer)', () => {
  const res = (text) => Array.from(parseNumpyText(text).resolution);
  assert.deepEqual(res('[0.5  0.25 0.125]'), [5e-4, 5e-4, 5e-4]); // D = 3
  assert.deepEqual(res('array([1., 2.])'), [0.5, 0.5]); // D = 0
  assert.deepEqual(res('[ 1.2345e-03 -1.e+00]'), [5e-8, 5e-5]); // D = 4; e = -3, 0
  assert.deepEqual(res('array([[ 1.0e-03,  1.0e+05]])'), [5e-5, 5e3]);
  assert.deepEqual(res('[ nan  inf -inf  1.5]'), [0, 0, 0, 0.05]);
  assert.deepEqual(res('[[-3 10]\n [ 4 -5]]'), [0, 0, 0, 0]); // an integer array
  assert.deepEqual(res('[ True False]'), [0, 0]);
  assert.deepEqual(res('array(3.5)'), [0.05]);
  assert.deepEqual(res('7'), [0]);
});

test(`parseNumpyText: summarised output (${summarised.length} texts) gets the set_printoptions advice`, () => {
  assert.ok(summarised.length >= 2);
  for (const t of summarised) {
    assert.throws(() => parseNumpyText(t.text), {
      message:
        "This array was printed in summarised form ('...'), so its middle entries are missing. " +
        'In your notebook run np.set_printoptions(threshold=np.inf) and print it again, or save ' +
        "it with np.save('name.npy', a) and load the file here.",
    });
  }
});

const lists = texts.filter((t) => ['python', 'numpy1', 'numpy2'].includes(t.kind));

test(`parseNumpyText: ${lists.length} lists as Python, NumPy 1.24 and NumPy 2 print them are 1-D arrays`, () => {
  // the texts above (values, resolution) cover them; here: every form, and what they say
  assert.equal(lists.filter((t) => t.kind === 'numpy2').length, 8);
  const losses = lists.find((t) => t.kind === 'numpy2' && t.label === 'losses');
  assert.match(losses.text, /^\[np\.float64\(0\.\d+\), np\.float64\(/);
  assert.deepEqual(parseNumpyText(losses.text).shape, [10]);
  const f32 = lists.find((t) => t.kind === 'numpy2' && t.label === 'losses-float32');
  assert.equal(parseNumpyText(f32.text).printedDtype, 'float32'); // as repr's dtype=float32
  for (const t of lists.filter((x) => x.label === 'bool-list' || x.label === 'int64-list')) {
    assert.ok(
      parseNumpyText(t.text).resolution.every((r) => r === 0),
      `${t.kind} ${t.label}`,
    );
  }
});

/** Python's float() of each token, as 16 hex digits of its bits (python3, spawned). */
function pythonFloats(tokens) {
  const script =
    'import json, struct, sys\n' +
    "print(json.dumps(['%016x' % struct.unpack('<Q', struct.pack('<d', float(t)))[0] " +
    'for t in sys.argv[1:]]))';
  return JSON.parse(execFileSync(PYTHON, ['-c', script, ...tokens], { encoding: 'utf8' }));
}

test('parseNumpyText: NumPy 2 scalar reprs (typed by hand: no NumPy 2 here) equal float()', () => {
  // NumPy >= 2 prints a list of scalars with their type (NEP 51); these are written by hand
  const cases = [
    ['[np.float64(0.6508), np.float64(0.6112), np.float64(1e-05)]', ['0.6508', '0.6112', '1e-05']],
    [
      '[np.True_, np.False_, np.int64(3), np.int32(-2), np.uint8(255)]',
      ['1', '0', '3', '-2', '255'],
    ],
    ['[np.float32(0.5), np.float16(0.1), 0.25]', ['0.5', '0.1', '0.25']],
    ['[np.float64(nan), np.float64(-inf), np.float64(inf)]', ['nan', '-inf', 'inf']],
    ['[0.6508, 0.6112]', ['0.6508', '0.6112']],
    ['np.float32(1.5e+20)', ['1.5e+20']],
    ['np.False_', ['0']],
  ];
  const want = pythonFloats(cases.flatMap(([, tokens]) => tokens));
  let k = 0;
  for (const [text, tokens] of cases) {
    const got = parseNumpyText(text);
    assert.deepEqual(bitsOf(got.data), want.slice(k, k + tokens.length), text);
    assert.deepEqual(got.shape, text.startsWith('[') ? [tokens.length] : [], text);
    k += tokens.length;
  }
  // resolution: half a unit of each entry's own last digit (a list prints each on its own)
  const res = (text) => Array.from(parseNumpyText(text).resolution);
  assert.deepEqual(
    res('[np.float64(0.6508), np.float64(0.5), np.float64(1e-05)]'),
    [5e-5, 0.05, 5e-6],
  );
  assert.deepEqual(
    res('[np.float64(-2.5e-07), np.int64(3), np.True_, np.float64(nan)]'),
    [5e-9, 0, 0, 0],
  );
  assert.deepEqual(res('[0.6508, 0.5, 2]'), [5e-5, 0.05, 0]);
  assert.deepEqual(res('[[0.25, 1.5], [2.0, 3.125]]'), [0.005, 0.05, 0.05, 0.0005]);
  // an array (print or repr) keeps one D for all its entries
  assert.deepEqual(res('array([0.6508, 0.5   ])'), [5e-5, 5e-5]);
  // the dtype printed: the least precise float scalar; np.float64 and ints say nothing more
  const dtype = (text) => parseNumpyText(text).printedDtype;
  assert.equal(dtype('[np.float64(0.5), np.float32(0.25)]'), 'float32');
  assert.equal(dtype('[np.float32(0.5), np.float16(0.25)]'), 'float16');
  assert.equal(dtype('np.float32(0.5)'), 'float32');
  assert.equal(dtype('[np.float64(0.5), np.int64(2)]'), null);
  assert.equal(dtype('[0.5, 0.25]'), null);
});

test('parseNumpyText: hand-typed forms (NumPy 2 scalars, np.array, trailing commas, -0.)', () => {
  const read = (text) => {
    const r = parseNumpyText(text);
    return { shape: r.shape, data: Array.from(r.data) };
  };
  assert.deepEqual(read('np.float64(3.5)'), { shape: [], data: [3.5] });
  assert.deepEqual(read('np.array([[1, 2,], [3, 4]])'), { shape: [2, 2], data: [1, 2, 3, 4] });
  assert.deepEqual(read('  [1e3, -.5, +2.]  '), { shape: [3], data: [1000, -0.5, 2] });
  assert.ok(Object.is(read('-0.').data[0], -0));
  assert.deepEqual(read('array([[[[7]]]])'), { shape: [1, 1, 1, 1], data: [7] });
  assert.deepEqual(read('[[], []]'), { shape: [2, 0], data: [] });
});

test('parseNumpyText by hand: signs, inf and nan, 8 levels, shape=, scalars, a leading dot', () => {
  const read = (t) => {
    const a = parseNumpyText(t);
    return [[...a.data], a.shape, [...a.resolution], a.printedDtype];
  };
  // an array's print shares one resolution: half a unit of the most fractional digits printed
  assert.deepEqual(read('[1.5 -2 +3]'), [[1.5, -2, 3], [3], [0.05, 0.05, 0.05], null]);
  assert.deepEqual(read('[inf -inf nan +inf -nan]'), [
    [Infinity, -Infinity, NaN, Infinity, NaN],
    [5],
    [0, 0, 0, 0, 0],
    null,
  ]);
  assert.deepEqual(read('[[[[[[[[7.]]]]]]]]'), [[7], [1, 1, 1, 1, 1, 1, 1, 1], [0.5], null]);
  assert.deepEqual(read('array([], shape=(10, 0), dtype=float64)'), [[], [10, 0], [], 'float64']);
  assert.deepEqual(read('array([1, 2], shape=(2,))'), [[1, 2], [2], [0, 0], null]);
  // a list of NumPy 2 scalars: each entry its own digits, and their dtype
  assert.deepEqual(read('[np.float32(0.5), np.float32(1.25)]'), [
    [0.5, 1.25],
    [2],
    [0.05, 0.005],
    'float32',
  ]);
  // '.5' has one fractional digit and is no integer; '1.' has none
  assert.deepEqual(read('[.5 1.]'), [[0.5, 1], [2], [0.05, 0.05], null]);
  assert.deepEqual(read('[.5 2]'), [[0.5, 2], [2], [0.05, 0.05], null]);
  assert.deepEqual(read('[True, False]'), [[1, 0], [2], [0, 0], null]);
  assert.deepEqual(read('[1 2 3]'), [[1, 2, 3], [3], [0, 0, 0], null], 'integers are exact');
});
