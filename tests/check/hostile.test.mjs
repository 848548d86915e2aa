// Hostile input to the notebook check's readers and writers (web/check.js, issue 11): every
// case throws an Error with its own one-line message (asserted by regex), never allocates what a
// header merely promises (the 10^9 x 10^9 shape is refused by its limit message, the zip bomb by
// its promised size), and returns fast: each case's time is measured and reported, not asserted.
// In an .npz, a member that cannot be used (damaged, a dtype not read, a bad name) is skipped
// with its reason and the others load (issue 18); alone, it refuses the file with that reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync, zipSync } from 'fflate';
import { loadNpz, parseNumpyText, readNpy, readNpz, writeNpy, writeNpz } from '../../web/check.js';
import { crc32 } from '../../web/io/crc32.js';
import { MAX_NAME_LENGTH, MAX_NPY_BYTES, MAX_NPZ_BYTES } from '../../web/io/limits.js';
import { assertSentences } from './students.mjs';

const latin1 = (text) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

/** A .npy file with header dict `dict` (padded as NumPy pads), version `major`, then `data`. */
function npy(dict, data = new Uint8Array(0), major = 1) {
  const text = latin1(dict);
  const start = major === 1 ? 10 : 12;
  const hlen = text.length + 1;
  const pad = 64 - ((start + hlen) % 64);
  const out = new Uint8Array(start + hlen + pad);
  out.set(latin1('\x93NUMPY'));
  out[6] = major;
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, hlen + pad, true);
  else view.setUint32(8, hlen + pad, true);
  out.set(text, start);
  out.fill(0x20, start + text.length, out.length - 1);
  out[out.length - 1] = 0x0a;
  return concat(out, data);
}

/** A .npy file whose header is exactly `text`: no padding, no closing line end. */
function rawNpy(text) {
  const out = npy('');
  const bytes = concat(out.subarray(0, 10), latin1(text));
  new DataView(bytes.buffer).setUint16(8, text.length, true);
  return bytes;
}

const header = (descr, shape, fortran = 'False') =>
  `{'descr': ${descr}, 'fortran_order': ${fortran}, 'shape': ${shape}, }`;
const esc = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const f8 = (...values) => new Uint8Array(Float64Array.from(values).buffer);

/**
 * A zip archive built field by field, so that every field can lie: members
 * [{ name, data (uncompressed), method 0|8, flags, central: { field overrides }, local: {...} }],
 * end: overrides of the end record; zip64: add zip64 end record + locator (fields overridable).
 */
function makeZip(members, { end = {}, zip64 = null, comment = '' } = {}) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const m of members) {
    const name = new TextEncoder().encode(m.name);
    const packed = m.method === 8 ? deflateSync(m.data) : m.data;
    const f = {
      flags: 0,
      method: m.method ?? 0,
      crc: crc32(m.data),
      compressedSize: packed.length,
      size: m.data.length,
      offset,
      ...m.central,
    };
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true);
    lv.setUint16(6, f.flags, true);
    lv.setUint16(8, f.method, true);
    lv.setUint32(14, f.crc, true);
    lv.setUint32(18, f.compressedSize, true);
    lv.setUint32(22, f.size, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    locals.push(local, packed);
    offset += local.length + packed.length;
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true);
    cv.setUint16(6, 20, true);
    cv.setUint16(8, f.flags, true);
    cv.setUint16(10, f.method, true);
    cv.setUint32(16, f.crc, true);
    cv.setUint32(20, f.compressedSize, true);
    cv.setUint32(24, f.size, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(42, f.offset, true);
    central.set(name, 46);
    centrals.push(central);
  }
  const cd = concat(...centrals);
  const e = { disk: 0, cdDisk: 0, count: members.length, size: cd.length, offset, ...end };
  const tail = [];
  if (zip64) {
    const z = { at: offset + cd.length, count: members.length, size: cd.length, offset, ...zip64 };
    const rec = new Uint8Array(56);
    const rv = new DataView(rec.buffer);
    rv.setUint32(0, 0x06064b50, true);
    rv.setBigUint64(4, 44n, true);
    rv.setBigUint64(32, BigInt(z.count), true);
    rv.setBigUint64(40, BigInt(z.size), true);
    rv.setBigUint64(48, BigInt(z.offset), true);
    const loc = new Uint8Array(20);
    const lv = new DataView(loc.buffer);
    lv.setUint32(0, 0x07064b50, true);
    lv.setBigUint64(8, BigInt(z.at), true);
    lv.setUint32(16, 1, true);
    tail.push(rec, loc);
  }
  const text = latin1(comment);
  const eocd = new Uint8Array(22 + text.length);
  const ev = new DataView(eocd.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(4, e.disk, true);
  ev.setUint16(6, e.cdDisk, true);
  ev.setUint16(8, e.count, true);
  ev.setUint16(10, e.count, true);
  ev.setUint32(12, e.size, true);
  ev.setUint32(16, e.offset, true);
  ev.setUint16(20, text.length, true);
  eocd.set(text, 22);
  return concat(...locals, cd, ...tail, eocd);
}

const goodNpy = writeNpy(Float64Array.of(1, 2, 3), [3]);
const member = (name, extra = {}) => ({ name, data: goodNpy, ...extra });

const times = [];
/**
 * Assert fn throws an Error whose message matches `pattern`, one line, and is word for word the
 * message approved in tests/sentences/hostile.json under `key` (default: the label); record the
 * time taken.
 */
function refuses(fn, pattern, label, key = label) {
  const t0 = performance.now();
  let error = null;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  times.push([label, performance.now() - t0]);
  assert.ok(error instanceof Error, `${label}: no Error thrown`);
  assert.match(error.message, pattern, label);
  assert.doesNotMatch(error.message, /\n/, `${label}: the message is one line`);
  assertSentences('hostile', key, error.message);
}

// ------------------------------------------------------------------------------------------------
// .npy

const NPY_CASES = [
  ['empty file', () => new Uint8Array(0), /not a \.npy file.*np\.save\('name\.npy', a\)/],
  ['wrong magic', () => latin1('\x93NUMPZ\x01\x00'), /not a \.npy file: it does not start/],
  ['a text file', () => latin1('1,2,3\n4,5,6\n'), /not a \.npy file/],
  ['an .npz given as .npy', () => writeNpz({ X: { data: [1], shape: [1] } }), /zip archive.*\.npz/],
  ['magic only', () => latin1('\x93NUMPY'), /ends inside its preamble/],
  ['version 4.0', () => latin1('\x93NUMPY\x04\x00\x10\x00'), /Unsupported .* version 4\.0/],
  ['version 1.1', () => latin1('\x93NUMPY\x01\x01\x10\x00'), /Unsupported .* version 1\.1/],
  ['v2 without its length', () => latin1('\x93NUMPY\x02\x00\x10\x00'), /ends inside its preamble/],
  [
    'header of 10^9 bytes (v2)',
    () => latin1('\x93NUMPY\x02\x00\x00\xca\x9a\x3b'),
    /claims 1000000000 bytes, more than the 65536/,
  ],
  [
    'header past the end',
    () => npy(header("'<f8'", '(3,)')).subarray(0, 40),
    /header runs past the end of the file \(it claims 118 bytes; 30 follow\)/,
  ],
  ['header a list', () => npy("['descr', '<f8']"), /not NumPy's dict/],
  ['header a number', () => npy('42'), /not NumPy's dict/],
  ['header empty', () => npy(''), /damaged: it ends early/],
  [
    'header unclosed',
    () => npy("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)"),
    /damaged: expected ',' or '\}'/,
  ],
  ['header junk after dict', () => npy(`${header("'<f8'", '(1,)')} x`), /not NumPy's dict/],
  ['missing shape', () => npy("{'descr': '<f8', 'fortran_order': False}"), /no 'shape' entry/],
  ['missing descr', () => npy("{'fortran_order': False, 'shape': ()}"), /no 'descr' entry/],
  [
    'unknown key',
    () => npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}"),
    /unknown entry 'x'/,
  ],
  [
    'fortran_order not a bool',
    () => npy(header("'<f8'", '()', "'yes'")),
    /'fortran_order' is not True or False/,
  ],
  ['negative shape', () => npy(header("'<f8'", '(-1, 3)')), /has -1 as a length/],
  ['non-integer shape', () => npy(header("'<f8'", '(2.5,)')), /not a whole number/],
  ['shape a string', () => npy(header("'<f8'", "'2, 3'")), /'shape' is not a tuple/],
  ['shape a list', () => npy(header("'<f8'", '[2, 3]')), /'shape' is not a tuple/],
  ['shape of a string', () => npy(header("'<f8'", "('a',)")), /a non-number as a length/],
  [
    'shape 10^9 x 10^9 (refused before allocating)',
    () => npy(header("'<f8'", '(1000000000, 1000000000)')),
    /shape \(1000000000, 1000000000\) means 1\.00e\+18 entries .* over this page's limit of 256 MiB/,
  ],
  [
    'shape 2^25 + 1 (just over 256 MiB)',
    () => npy(header("'<u1'", `(${2 ** 25 + 1},)`)),
    /over this page's limit of 256 MiB/,
  ],
  ['shape beyond 2^53', () => npy(header("'<f8'", '(99999999999999999999,)')), /absurd length/],
  [
    'nine dimensions',
    () => npy(header("'<f8'", `(${'1, '.repeat(9)})`)),
    /9 dimensions.*at most 8/,
  ],
  [
    'data shorter than the header says',
    () => npy(header("'<f8'", '(2, 3)'), f8(1, 2, 3, 4, 5)),
    /truncated: .*shape \(2, 3\) of '<f8', 48 bytes of data, but only 40 follow/,
  ],
  [
    'object array',
    () => npy(header("'|O'", '(2,)'), latin1('\x80\x04\x95cos\nsystem\n')),
    /^Object arrays \(dtype=object\) hold pickled Python objects; they are never unpickled here — save a numeric array: np\.save\('x\.npy', np\.asarray\(x, dtype=np\.float64\)\)$/,
  ],
  ["object array 'O'", () => npy(header("'O'", '(2,)')), /Object arrays \(dtype=object\)/],
  [
    'structured dtype',
    () => npy(header("[('a', '<f8'), ('b', '<i4')]", '(2,)')),
    /structured \(record\) array with named fields/,
  ],
  ['unicode strings', () => npy(header("'<U5'", '(2,)')), /text strings \(dtype "<U5"\)/],
  ['byte strings', () => npy(header("'|S3'", '(2,)')), /byte strings/],
  ['void', () => npy(header("'|V8'", '(2,)')), /raw bytes \(void\)/],
  ['complex', () => npy(header("'<c16'", '(2,)')), /complex numbers/],
  ['datetime', () => npy(header("'<M8[ns]'", '(2,)')), /datetimes/],
  ['timedelta', () => npy(header("'<m8[s]'", '(2,)')), /timedeltas/],
  ['float128', () => npy(header("'<f16'", '(2,)')), /a dtype this page does not read/],
  ['int3', () => npy(header("'<i3'", '(2,)')), /a dtype this page does not read/],
  ['descr a number', () => npy(header('8', '(2,)')), /structured|does not read/],
  [
    'code in the header (never evaluated)',
    () => npy(header("__import__('os').system('rm -rf /')", '()')),
    /damaged: unexpected "_" at character 11/,
  ],
  ['nesting 10,000 deep', () => npy(header("'<f8'", `${'('.repeat(1e4)}`)), /nesting too deep/],
  // the first bytes: 'PK' alone says zip; either letter alone is just not a .npy
  ['starts with PX', () => latin1('PX\x03\x04'), /^This is not a \.npy file/],
  ['starts with XK', () => latin1('XK\x03\x04'), /^This is not a \.npy file/],
  ['version 0.0', () => latin1('\x93NUMPY\x00\x00\x10\x00'), /Unsupported .* version 0\.0/],
  // header strings, parsed as Python's: escapes, line ends, quotes never closed
  [
    'a key with escapes',
    () => npy(`${header("'<f8'", '()').slice(0, -2)}'a\\nb\\tc\\rd\\0e\\\\f\\'g\\"h\\qi': 1}`),
    /^The \.npy header has an unknown entry 'a\\nb\\tc\\rd\\u0000e\\\\f'g\\"h\\\\qi': the file/,
  ],
  [
    'a latin-1 key in a version 1.0 header',
    () => npy(`${header("'<f8'", '()').slice(0, -2)}'caf\xe9': 1}`),
    /unknown entry 'café'/,
  ],
  [
    'a string over a line end',
    () => npy("{'descr': '<f8\n', 'fortran_order': False, 'shape': ()}"),
    /damaged: a string runs over a line end at character 15\.$/,
  ],
  ['a string never closed', () => rawNpy("{'descr': '<f8"), /a string is not closed at/],
  ['a backslash at the end', () => rawNpy("{'descr': '<f8\\"), /a string is not closed at/],
  ['a sign alone', () => npy(header("'<f8'", '(-, 3)')), /a number that is not a whole number/],
  ['a word after a stray #', () => npy(header("'<f8'", '()', '#True')), /unexpected "#"/],
  ['fortran_order None', () => npy(header("'<f8'", '()', 'None')), /not True or False/],
  ['fortran_order Truex', () => npy(header("'<f8'", '()', 'Truex')), /unexpected "T"/],
  ['header None', () => npy('None'), /not NumPy's dict/],
  ['shape None', () => npy(header("'<f8'", 'None')), /'shape' is not a tuple/],
  ['shape (3) is 3, not a tuple', () => npy(header("'<f8'", '(3)')), /'shape' is not a tuple/],
  ['shape (True,)', () => npy(header("'<f8'", '(True,)')), /a non-number as a length/],
  // 15 nested tuples stay within the nesting limit (16 levels with the dict); 16 do not
  [
    'shape nested 15 deep',
    () => npy(header("'<f8'", `${'('.repeat(15)}3${',)'.repeat(15)}`)),
    /a non-number as a length/,
  ],
  [
    'shape nested 16 deep',
    () => npy(header("'<f8'", `${'('.repeat(16)}3${',)'.repeat(16)}`)),
    /nesting too deep/,
  ],
  // descr: its type character, size and byte order exactly
  ['descr <f', () => npy(header("'<f'", '(2,)')), /a dtype this page does not read \(dtype "<f"\)/],
  ['descr |?1', () => npy(header("'|?1'", '(2,)')), /a dtype this page does not read/],
  ['descr <f8x', () => npy(header("'<f8x'", '(2,)')), /a dtype this page does not read/],
  ['descr x<f8', () => npy(header("'x<f8'", '(2,)')), /a dtype this page does not read/],
  ['descr |a3', () => npy(header("'|a3'", '(2,)')), /holds byte strings \(dtype "\|a3"\)/],
  [
    'descr of 50 characters (shown to 40)',
    () => npy(header(`'<U${'9'.repeat(48)}'`, '(2,)')),
    new RegExp(`\\(dtype "<U${'9'.repeat(38)}"\\)`),
  ],
  [
    'v3 header not UTF-8',
    () => npy(`${header("'<f8'", '()')}\xff`, f8(1), 3),
    /\(format 3\.0\) is not valid UTF-8/,
  ],
];

test(`readNpy refuses all ${NPY_CASES.length} hostile .npy files with their own message`, () => {
  for (const [label, make, pattern] of NPY_CASES) {
    refuses(() => readNpy(make()), pattern, label, `readNpy: ${label}`);
  }
});

test('readNpy: non-bytes input; trailing bytes are ignored as np.load ignores them', () => {
  refuses(
    () => readNpy('x.npy'),
    /readNpy expects the file's bytes .* not string/,
    'readNpy: a string',
  );
  refuses(() => readNpy(null), /not null/, 'readNpy: null');
  refuses(() => readNpy({ length: 3 }), /not object/, 'readNpy: an object');
  // any view of the bytes, or their ArrayBuffer
  const own = goodNpy.buffer.slice(goodNpy.byteOffset, goodNpy.byteOffset + goodNpy.byteLength);
  for (const bytes of [own, new DataView(own), new Uint16Array(own), Buffer.from(own)]) {
    assert.deepEqual(Array.from(readNpy(bytes).data), [1, 2, 3], bytes.constructor.name);
  }
  const longer = concat(goodNpy, latin1('extra bytes after the data'));
  assert.deepEqual(Array.from(readNpy(longer).data), [1, 2, 3]);
  const nan = readNpy(writeNpy([NaN, Infinity, -Infinity], [3])).data;
  assert.deepEqual(Array.from(nan), [NaN, Infinity, -Infinity]); // data, not errors
});

test('readNpy: a header read as Python reads it: (x) is x, ((3,)) is (3,), a 64 KiB header', () => {
  const read = (bytes) => {
    const a = readNpy(bytes);
    return [Array.from(a.data), a.shape];
  };
  assert.deepEqual(read(npy(header("('<f8')", '((3,))'), f8(1, 2, 3))), [[1, 2, 3], [3]]);
  assert.deepEqual(read(npy(header('"<f8"', '(1, 2,)'), f8(4, 5))), [
    [4, 5],
    [1, 2],
  ]);
  assert.deepEqual(read(npy(header("'<f8'", '(2L,)'), f8(6, 7))), [[6, 7], [2]], "Python 2's 2L");
  // a version-2.0 header of exactly MAX_HEADER_BYTES (65536) bytes reads; one byte more is refused
  const sized = (size) => {
    const text = header("'<f8'", '(1,)');
    const bytes = concat(
      latin1('\x93NUMPY\x02\x00\0\0\0\0'),
      latin1(text.padEnd(size - 1)),
      latin1('\n'),
      f8(8),
    );
    new DataView(bytes.buffer).setUint32(8, size, true);
    return bytes;
  };
  assert.deepEqual(read(sized(65536)), [[8], [1]]);
  assert.throws(() => readNpy(sized(65537)), /claims 65537 bytes, more than the 65536/);
});

const WRITE_NPY_CASES = [
  ['shape and data disagree', () => writeNpy([1, 2, 3, 4, 5], [2, 3]), /holds 6 .* data has 5/],
  ['negative length', () => writeNpy([], [-1]), /whole numbers >= 0/],
  ['fractional length', () => writeNpy([1], [0.5]), /whole numbers >= 0/],
  ['nine dimensions', () => writeNpy([1], new Array(9).fill(1)), /at most 8 lengths/],
  ['shape not an array', () => writeNpy([1], 1), /shape must be an array/],
  ['data of strings', () => writeNpy(['1'], [1]), /must be a Float64Array/],
  ['data missing', () => writeNpy(undefined, [1]), /must be a Float64Array/],
  ['BigInt64Array', () => writeNpy(new BigInt64Array(1), [1]), /must be a Float64Array/],
  ['10^9 x 10^9 (before allocating)', () => writeNpy([], [1e9, 1e9]), /limit of 256 MiB/],
];

test(`writeNpy refuses all ${WRITE_NPY_CASES.length} bad arguments with their own message`, () => {
  for (const [label, fn, pattern] of WRITE_NPY_CASES) refuses(fn, pattern, `writeNpy: ${label}`);
});

// ------------------------------------------------------------------------------------------------
// .npz

/** A zip whose member promises `size` bytes but inflates to far more (a zip bomb). */
function zipBomb(promised) {
  const zeros = new Uint8Array(64 * 2 ** 20); // 64 MiB of zeros deflate to ~64 kB
  return makeZip([{ name: 'X.npy', data: zeros, method: 8, central: { size: promised } }]);
}

const NPZ_CASES = [
  ['random bytes', () => latin1('not a zip at all, just text'), /not an \.npz file .* no zip end/],
  ['empty file', () => new Uint8Array(0), /not an \.npz file/],
  ['a .npy given as .npz', () => goodNpy, /This is a \.npy file, not an \.npz/],
  ['truncated zip', () => writeNpz({ X: { data: [1], shape: [1] } }).subarray(0, 100), /no zip/],
  ['empty zip', () => makeZip([]), /holds no \.npy arrays \(it is empty\)/],
  [
    'no .npy member',
    () => zipSync({ 'README.txt': latin1('hello'), 'X.npy.txt': latin1('x') }),
    /holds no \.npy arrays \(members: 'README\.txt', 'X\.npy\.txt'\)/,
  ],
  ['multi-disk', () => makeZip([member('X.npy')], { end: { disk: 1 } }), /split over several/],
  [
    'central directory outside the file',
    () => makeZip([member('X.npy')], { end: { offset: 0xfffffff0 } }),
    /central directory lies outside the file/,
  ],
  [
    'count larger than the directory',
    () => makeZip([member('X.npy')], { end: { count: 60000 } }),
    /central directory is too short/,
  ],
  [
    'central record missing',
    () => makeZip([member('X.npy')], { end: { offset: 10 } }),
    /central directory record is missing/,
  ],
  [
    'zip64 locator to nowhere',
    () => makeZip([member('X.npy')], { zip64: { at: 3 } }),
    /zip64 end record is missing/,
  ],
  [
    'zip64 absurd offset',
    () => makeZip([member('X.npy')], { zip64: { at: 2 ** 60 } }),
    /absurdly large/,
  ],
  [
    'zip bomb: inflates past its promised size',
    () => zipBomb(1000),
    /member 'X\.npy' inflates past the 1000 bytes its header promises \(a damaged file or a zip bomb\)/,
  ],
  [
    'a member promising 2 GiB',
    () => makeZip([member('X.npy', { method: 8, central: { size: 2 ** 31 } })]),
    /'X\.npy' would be 2048 MiB uncompressed, over this page's 256 MiB limit/,
  ],
  [
    'members promising 600 MiB in all',
    () =>
      makeZip(['a', 'b', 'c'].map((n) => member(`${n}.npy`, { central: { size: 200 * 2 ** 20 } }))),
    /would take 600 MiB uncompressed, over this page's 512 MiB limit/,
  ],
  [
    'name not UTF-8',
    () => {
      const z = makeZip([member('Xy.npy')]);
      z[31] = 0xff; // the local name's 'y' (the central one is found by its signature below)
      z[Buffer.from(z).lastIndexOf('Xy.npy') + 1] = 0xff;
      return z;
    },
    /member name is not valid UTF-8/,
  ],
  [
    'a 10^9 x 10^9 .npy inside',
    () => makeZip([{ name: 'X.npy', data: npy(header("'<f8'", '(1000000000, 1000000000)')) }]),
    /array 'X': .* over this page's limit of 256 MiB/,
  ],
];

test(`readNpz refuses all ${NPZ_CASES.length} hostile .npz files with their own message`, () => {
  for (const [label, make, pattern] of NPZ_CASES) {
    const bytes = make();
    refuses(() => readNpz(bytes), pattern, label, `readNpz: ${label}`);
  }
});

// A member that cannot be used spoils only itself (issue 18): [label, the member (makeZip's
// form), its name, what its skip reason says]. Alone in its .npz it is refused with that reason;
// beside good members it is skipped and they load.
const MEMBER_CASES = [
  [
    'local header missing',
    member('X.npy', { central: { offset: 5 } }),
    'X',
    /^damaged: the local header of 'X\.npy' is missing$/,
  ],
  [
    'data past the end',
    member('X.npy', { central: { compressedSize: 1e6, size: 1e6 } }),
    'X',
    /^damaged: the data of 'X\.npy' runs past the end of the file \(truncated\?\)$/,
  ],
  [
    'stored size mismatch',
    member('X.npy', { central: { size: 10 } }),
    'X',
    /^damaged: 'X\.npy' is stored with 152 bytes but promises 10$/,
  ],
  [
    'corrupt CRC (stored)',
    member('X.npy', { central: { crc: 12345 } }),
    'X',
    /^damaged: its CRC-32 check fails$/,
  ],
  [
    'corrupt CRC (deflated)',
    member('X.npy', { method: 8, central: { crc: 1 } }),
    'X',
    /^damaged: its CRC-32 check fails$/,
  ],
  [
    'invalid deflate data',
    { name: 'X.npy', data: latin1('\x07\xff\xff\xff'), central: { method: 8 } },
    'X',
    /^damaged: 'X\.npy' is not valid deflate data/,
  ],
  [
    'deflate data shorter than promised',
    member('X.npy', { method: 8, central: { size: 200 } }),
    'X',
    /^damaged: 'X\.npy' inflates to 152 bytes, not 200$/,
  ],
  ['encrypted', member('X.npy', { central: { flags: 1 } }), 'X', /^encrypted/],
  [
    'bzip2',
    member('X.npy', { central: { method: 12 } }),
    'X',
    /^compressed with zip method 12, which this page does not read$/,
  ],
  [
    'name of 201 characters',
    member(`${'W'.repeat(MAX_NAME_LENGTH + 1)}.npy`),
    'W'.repeat(MAX_NAME_LENGTH + 1),
    /^its name is 201 characters long \(names of at most 200 are read\)$/,
  ],
  [
    'name with a control character',
    member('X\u0000evil.npy'),
    'X\u0000evil',
    /^its name contains control characters$/,
  ],
  ['name with a newline', member('a\nb.npy'), 'a\nb', /^its name contains control characters$/],
  [
    'name with a C1 control',
    member('a\u0085b.npy'),
    'a\u0085b',
    /^its name contains control characters$/,
  ],
  [
    'an object array (one object: a dict)',
    { name: 'cache.npy', data: npy(header("'|O'", '()'), latin1('\x80\x04\x95cos\nsystem\n')) },
    'cache',
    /^an object array \(a pickled Python object, never unpickled here\)$/,
  ],
  [
    'an object array (a list of 2)',
    { name: 'grads.npy', data: npy(header("'|O'", '(2,)'), latin1('\x80')) },
    'grads',
    /^an object array of 2 Python objects \(pickled, never unpickled here\)$/,
  ],
  [
    'an object array of 10^9 x 10^9 (never allocated)',
    { name: 'o.npy', data: npy(header("'O'", '(1000000000, 1000000000)')) },
    'o',
    /^an object array of 1000000000000000000 Python objects/,
  ],
  [
    'complex',
    { name: 'z.npy', data: npy(header("'<c16'", '(2,)'), new Uint8Array(32)) },
    'z',
    /^complex numbers \(dtype '<c16'\)$/,
  ],
  [
    'text strings',
    { name: 's.npy', data: npy(header("'<U5'", '(2,)'), new Uint8Array(40)) },
    's',
    /^strings \(dtype '<U5'\), not numbers$/,
  ],
  [
    'structured',
    { name: 'r.npy', data: npy(header("[('a', '<f8'), ('b', '<i4')]", '(2,)')) },
    'r',
    /^a structured array \(named fields\)$/,
  ],
  [
    'float128',
    { name: 'q.npy', data: npy(header("'<f16'", '(2,)')) },
    'q',
    /^a dtype this page does not read \(dtype '<f16'\)$/,
  ],
  [
    'nine dimensions',
    { name: 'n.npy', data: npy(header("'<f8'", `(${'1, '.repeat(9)})`), f8(1)) },
    'n',
    /^9 dimensions \(this page reads at most 8\)$/,
  ],
  [
    'a truncated .npy',
    { name: 'X.npy', data: goodNpy.subarray(0, 140) },
    'X',
    /^not a readable \.npy \(The \.npy file is truncated: .* only 12 follow the header\)$/,
  ],
  [
    'a header that is code (never evaluated)',
    { name: 'X.npy', data: npy(header("__import__('os').system('rm -rf /')", '()')) },
    'X',
    /^not a readable \.npy \(The \.npy header is damaged: unexpected "_" at character 11\)$/,
  ],
  [
    'not a .npy at all',
    { name: 'X.npy', data: latin1('PK\x03\x04 a zip inside a zip') },
    'X',
    /^not a readable \.npy \(This is a zip archive/,
  ],
];

/** The reason pattern's source as a part of the whole-file message (no ^ and $ anchors). */
const inner = (pattern) => pattern.source.replace(/^\^/, '').replace(/\$$/, '');

test(`readNpz: a member that cannot be used, alone, refuses the file with its reason (${MEMBER_CASES.length})`, () => {
  for (const [label, bad, , pattern] of MEMBER_CASES) {
    const bytes = makeZip([bad]);
    const expected = new RegExp(
      `^No array in this \\.npz can be read \\(its one array is skipped\\): '.*': ${inner(pattern)}`,
    );
    refuses(() => readNpz(bytes), expected, label, `readNpz member: ${label}`);
  }
});

test(`loadNpz: the same ${MEMBER_CASES.length} members beside good ones are skipped, the others load`, () => {
  for (const [label, bad, name, pattern] of MEMBER_CASES) {
    const t0 = performance.now();
    const { arrays, skipped } = loadNpz(makeZip([member('Wq.npy'), bad, member('Wk.npy')]));
    times.push([`${label} (beside good members)`, performance.now() - t0]);
    assert.deepEqual(Object.keys(arrays), ['Wq', 'Wk'], label);
    assert.deepEqual(Array.from(arrays.Wk.data), [1, 2, 3], label);
    assert.equal(skipped.length, 1, label);
    assert.equal(skipped[0].name, name, label);
    assert.match(skipped[0].reason, pattern, label);
    assert.doesNotMatch(`${skipped[0].reason} ${skipped[0].fix}`, /\n/, `${label}: one line`);
    assert.ok(skipped[0].fix.length > 10, `${label}: what to save instead`);
    assertSentences('hostile', `skipped: ${label}`, [skipped[0].reason, skipped[0].fix]);
  }
});

test('loadNpz: a name used twice loads the last (as np.load); ceilings refuse the file', () => {
  const second = writeNpy(Float64Array.of(7, 8), [2]);
  const twice = makeZip([member('X.npy'), member('Wq.npy'), { name: 'X.npy', data: second }]);
  const { arrays, skipped } = loadNpz(twice);
  assert.deepEqual(Object.keys(arrays), ['Wq', 'X']);
  assert.deepEqual(Array.from(arrays.X.data), [7, 8]);
  assert.deepEqual(
    skipped.map((s) => s.name),
    ['X'],
  );
  assert.match(skipped[0].reason, /^a later member has the same name \(np\.load reads the last/);
  const only = loadNpz(makeZip([member('X.npy'), member('X.npy')])); // the last X loads
  assert.deepEqual(Object.keys(only.arrays), ['X']);
  assert.equal(only.skipped.length, 1);
  // a zip bomb, a member over 256 MiB, a header promising 10^18 entries: the whole file, even
  // beside good members (nothing of it is loaded)
  const huge = { name: 'H.npy', data: npy(header("'<f8'", '(1000000000, 1000000000)')) };
  const ceilings = [
    [
      'a 10^9 x 10^9 .npy beside good members',
      [member('Wq.npy'), huge],
      /array 'H': .* limit of 256 MiB/,
    ],
    [
      'a member promising 2 GiB beside good members',
      [member('Wq.npy'), member('B.npy', { method: 8, central: { size: 2 ** 31 } })],
      /'B\.npy' would be 2048 MiB uncompressed/,
    ],
  ];
  for (const [label, members, pattern] of ceilings) {
    refuses(() => loadNpz(makeZip(members)), pattern, label, `loadNpz: ${label}`);
  }
  const zeros = new Uint8Array(64 * 2 ** 20);
  const bomb = makeZip([
    member('Wq.npy'),
    { name: 'B.npy', data: zeros, method: 8, central: { size: 1000 } },
  ]);
  refuses(
    () => loadNpz(bomb),
    /'B\.npy' inflates past .* \(a damaged file or a zip bomb\)/,
    'loadNpz: a bomb',
  );
  refuses(() => loadNpz('x.npz'), /loadNpz expects the file's bytes/, 'loadNpz: a string');
});

test('readNpz: markup names are plain strings, other members left out, a comment is fine', () => {
  const names = ['<img src=x onerror=alert(1)>', '"><script>alert(1)</script>', "'; DROP"];
  const zip = makeZip([...names.map((n) => member(`${n}.npy`)), member('notes.txt')], {
    comment: 'PK\x05\x06 looks like an end record',
  });
  const got = readNpz(zip);
  assert.deepEqual(Object.keys(got), names);
  assert.deepEqual(Array.from(got[names[0]].data), [1, 2, 3]);
  refuses(() => readNpz(42), /readNpz expects the file's bytes/, 'readNpz: a number');
  assert.deepEqual(Object.keys(readNpz(makeZip([member(`${'n'.repeat(200)}.npy`)]))), [
    'n'.repeat(200),
  ]);
});

const WRITE_NPZ_CASES = [
  ['no arrays', () => writeNpz({}), /at least one array/],
  ['null', () => writeNpz(null), /at least one array/],
  ['control character', () => writeNpz({ 'a\u0007': { data: [1], shape: [1] } }), /control/],
  ['long name', () => writeNpz({ ['x'.repeat(201)]: { data: [1], shape: [1] } }), /201 char/],
  ['empty name', () => writeNpz({ '': { data: [1], shape: [1] } }), /name is empty/],
  ['not an array', () => writeNpz({ X: 3 }), /array 'X': writeNpy: shape must be an array/],
  ['bad shape', () => writeNpz({ X: { data: [1, 2], shape: [3] } }), /array 'X': .*holds 3/],
];

test(`writeNpz refuses all ${WRITE_NPZ_CASES.length} bad arguments with their own message`, () => {
  for (const [label, fn, pattern] of WRITE_NPZ_CASES) refuses(fn, pattern, `writeNpz: ${label}`);
});

// ------------------------------------------------------------------------------------------------
// text

const TEXT_CASES = [
  ['empty', '  \n ', /The text is empty/],
  ['ragged rows', '[[1, 2], [3]]', /ragged/],
  [
    'a word before np.float32',
    '[xnp.float32(1.0)]',
    /^Unexpected "xnp\.float32" at line 1, column 2/,
  ],
  [
    'a word after np.float32',
    '[np.float32x(1.0)]',
    /^Unexpected "np\.float32x" at line 1, column 2/,
  ],
  [
    'a long word (shown to 20)',
    '[abcdefghijklmnopqrstuvwxyz]',
    /^Unexpected "abcdefghijklmnopqrst" at/,
  ],
  ['a sign on True', '[-True]', /^Unexpected "-True" at line 1, column 2/],
  ['a word on line 2', '[1, 2,\n 3, x]', /^Unexpected "x" at line 2, column 5/],
  ['a number next to rows', '[[1, 2], 3]', /ragged/],
  ['ragged depth', '[[1], [[2]]]', /ragged/],
  ['ragged print', '[[1. 2.]\n [3.]]', /ragged/],
  ['summarised', '[   0.    1.    2. ... 1997. 1998. 1999.]', /summarised form \('\.\.\.'\)/],
  ['summarised (unicode ellipsis)', '[0. 1. … 9.]', /summarised form/],
  ['unclosed', 'array([[1., 2.],\n       [3., 4.]', /ends early/],
  ['extra bracket', '[1, 2]]', /Unexpected "\]" at line 1, column 7/],
  ['double comma', '[1,, 2]', /Unexpected "," at line 1, column 4/],
  ['leading comma', '[, 1]', /Unexpected ","/],
  ['letters', '[1, two, 3]', /Unexpected "two" at line 1, column 5/],
  ['markup', '<img src=x onerror=alert(1)>', /Unexpected "<" at line 1, column 1/],
  ['a quote', "array(['a', 'b'], dtype='<U1')", /Unexpected "'" at line 1, column 8/],
  ['line and column', '[[1., 2.],\n [3., x]]', /Unexpected "x" at line 2, column 7/],
  ['complex', 'array([1.+2.j, 3.-1.j])', /Complex numbers/],
  ['nine levels', `${'['.repeat(9)}1${']'.repeat(9)}`, /more than 8 levels of brackets/],
  ['10,000 levels', '['.repeat(1e4), /more than 8 levels/],
  ['shape= that does not fit', 'array([], shape=(2, 3), dtype=float64)', /does not match/],
  ['bad shape=', 'array([], shape=(-2, 0))', /Unexpected "-2"/],
  ['two arrays', '[1, 2] [3, 4]', /Unexpected "\[" at line 1, column 8/],
  ['glued number', '[1.5.2]', /Unexpected/],
  ['a call', 'print(a)', /Unexpected "print"/],
];

test(`parseNumpyText refuses all ${TEXT_CASES.length} bad texts with their own message`, () => {
  for (const [label, text, pattern] of TEXT_CASES) {
    refuses(() => parseNumpyText(text), pattern, label, `parseNumpyText: ${label}`);
  }
  refuses(() => parseNumpyText(null), /expects the printed text/, 'parseNumpyText: null');
  refuses(() => parseNumpyText(3.5), /expects the printed text/, 'parseNumpyText: a number');
});

test('every hostile case returned (times measured, not asserted)', (t) => {
  assert.ok(times.length > 100, `${times.length} cases timed`);
  const slowest = times.reduce((a, b) => (b[1] > a[1] ? b : a));
  t.diagnostic(`${times.length} cases; slowest: ${slowest[0]} in ${slowest[1].toFixed(1)} ms`);
});

test('readNpz at each limit: a 200-character name, 8 axes, 512 MiB in all, C1 bounds', () => {
  // the limits themselves: an .npy of the largest array is its 12-byte version-2 preamble, the
  // largest header and 256 MiB of data; an .npz holds two of them
  assert.equal(MAX_NPY_BYTES, 2 ** 28 + 2 ** 16 + 12);
  assert.equal(MAX_NPZ_BYTES, 2 * MAX_NPY_BYTES);
  const load = (members) => loadNpz(makeZip(members));
  const names = (r) => [Object.keys(r.arrays), r.skipped.map((s) => s.name)];
  // names: 200 characters are read; U+007E and U+00A0 are not control characters, U+007F (DEL)
  // and U+009F (the last C1) are
  const long = 'W'.repeat(200);
  const marks = ['a~', 'a\x7f', 'a\x9f', 'a\xa0', 'a\x1f', 'a b'];
  const r = load([member(`${long}.npy`), ...marks.map((m) => member(`${m}.npy`))]);
  assert.deepEqual(names(r), [
    [long, 'a~', 'a\xa0', 'a b'],
    ['a\x7f', 'a\x9f', 'a\x1f'],
  ]);
  // the arrays object is a plain one: its entries can be replaced and deleted
  assert.equal(delete r.arrays[long], true);
  // 8 axes read; the sum of the promised sizes may be exactly MAX_NPZ_BYTES
  const eight = { name: 'E.npy', data: writeNpy(Float64Array.of(5), [1, 1, 1, 1, 1, 1, 1, 1]) };
  const small = member('Wq.npy');
  const left = MAX_NPZ_BYTES - MAX_NPY_BYTES - small.data.length - eight.data.length;
  const promised = (name, size) => member(name, { central: { size } });
  const edge = load([small, eight, promised('A.npy', MAX_NPY_BYTES), promised('B.npy', left)]);
  assert.deepEqual(
    names(edge),
    [
      ['Wq', 'E'],
      ['A', 'B'],
    ],
    'A, B: stored sizes that lie',
  );
  assert.deepEqual(edge.arrays.E.shape, [1, 1, 1, 1, 1, 1, 1, 1]);
  refuses(
    () => load([small, eight, promised('A.npy', MAX_NPY_BYTES), promised('B.npy', left + 1)]),
    /^The \.npz arrays would take 512 MiB uncompressed, over this page's 512 MiB limit/,
    'one byte over MAX_NPZ_BYTES in all',
    'loadNpz: one byte over MAX_NPZ_BYTES in all',
  );
});

test('readNpz: its messages list 5 member names, 4 skipped arrays, one object, a cause', () => {
  const txt = (n) => ({ name: `f${n}.txt`, data: latin1('x') });
  refuses(
    () => readNpz(makeZip([1, 2, 3, 4, 5, 6].map(txt))),
    /\(members: 'f1\.txt', 'f2\.txt', 'f3\.txt', 'f4\.txt', 'f5\.txt'\): save/,
    'six members, none .npy',
    'readNpz: six members, none .npy',
  );
  const text = (name) => ({ name: `${name}.npy`, data: npy(header("'<U3'", '(1,)')) });
  const four = makeZip(['a', 'b', 'c', 'd'].map(text));
  const five = makeZip(['a', 'b', 'c', 'd', 'e'].map(text));
  const skip = "strings (dtype '<U3'), not numbers; nothing to check: leave it out.";
  const listed = (n) => ['a', 'b', 'c', 'd'].map((x) => `'${x}': ${skip}`).join(' ') + n;
  refuses(
    () => readNpz(four),
    new RegExp(`^No array in this \\.npz can be read \\(all 4 are skipped\\): ${esc(listed(''))}$`),
    'four skipped',
    'readNpz: four skipped',
  );
  refuses(
    () => readNpz(five),
    new RegExp(
      `^No array in this \\.npz can be read \\(all 5 are skipped\\): ${esc(listed(' (1 more)'))}$`,
    ),
    'five skipped',
    'readNpz: five skipped',
  );
  // one object in a 1-element object array: "1 Python object", singular
  const one = loadNpz(
    makeZip([member('Wq.npy'), { name: 'o.npy', data: npy(header("'|O'", '(1,)')) }]),
  );
  assert.match(one.skipped[0].reason, /^an object array of 1 Python object \(pickled/);
  // a member name that is not a Python name becomes `a` in the save line: ab-c, -ab and 1z
  for (const name of ['ab-c', '-ab', '1z']) {
    const z = loadNpz(
      makeZip([member('Wq.npy'), { name: `${name}.npy`, data: npy(header("'<c16'", '(1,)')) }]),
    );
    assert.equal(z.skipped[0].fix, "save the real part: np.savez('mha_check.npz', a=a.real)", name);
  }
  // a long descr is shown to 40 characters
  const descr = `<U${'7'.repeat(48)}`;
  const longDescr = loadNpz(
    makeZip([member('Wq.npy'), { name: 's.npy', data: npy(header(`'${descr}'`, '(1,)')) }]),
  );
  assert.equal(longDescr.skipped[0].reason, `strings (dtype '${descr.slice(0, 40)}'), not numbers`);
  // a header promising too many entries refuses the file, with the reader's error as its cause
  const huge = { name: 'H.npy', data: npy(header("'<f8'", '(1000000000, 1000000000)')) };
  let error = null;
  try {
    loadNpz(makeZip([member('Wq.npy'), huge]));
  } catch (e) {
    error = e;
  }
  assert.ok(error?.cause instanceof Error);
  assert.match(error.cause.message, /^The array's shape \(1000000000, 1000000000\) means/);
});

test('zip: a name of 60 characters shown whole, 61 cut to 60 and …; a 65,535-byte comment', () => {
  const name60 = `${'n'.repeat(56)}.txt`;
  const name61 = `${'m'.repeat(57)}.txt`;
  refuses(
    () =>
      readNpz(
        makeZip([
          { name: name60, data: latin1('x') },
          { name: name61, data: latin1('y') },
        ]),
      ),
    new RegExp(`\\(members: '${esc(name60)}', '${'m'.repeat(57)}\\.tx…'\\)`),
    'names of 60 and 61 characters',
    'readNpz: names of 60 and 61 characters',
  );
  // the end record is searched for up to 65,535 bytes of comment before it (the most a zip holds)
  const longest = makeZip([member('Wq.npy')], { comment: 'c'.repeat(0xffff) });
  assert.deepEqual(Object.keys(readNpz(longest)), ['Wq']);
});
