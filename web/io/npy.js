// npy.js - NumPy's .npy file format: readNpy and writeNpy (DOM-free; Node and the browser).
//
// A .npy file is  \x93NUMPY  major minor  header-length  header  data:
//   version 1.0: a 2-byte little-endian header length, latin-1 header
//   version 2.0: a 4-byte length, latin-1 header;  version 3.0: a 4-byte length, UTF-8 header
// The header is a Python dict literal, e.g. {'descr': '<f8', 'fortran_order': False,
// 'shape': (2, 3), }, padded with spaces to a newline so that the data starts at a multiple of 64
// bytes. It is parsed here by a tiny parser of Python literals (strings, True/False/None, whole
// numbers, tuples, lists, dicts); it is never evaluated.
//
// readNpy reads every plain numeric dtype (float64/32/16, int8..int64, uint8..uint64, bool) in
// either byte order ('<' little, '>' big; '|', '=' and none read as little: np.save never writes
// '=' or none, and '|' only for one-byte dtypes), in C or Fortran order, and returns
// the entries as float64 in C order. Conversions are exact except int64/uint64 beyond 2^53, which
// round to the nearest float64 as NumPy's astype(np.float64) does; NaN payloads are not kept.
// Bytes after the data are ignored, as np.load ignores them (np.save may be called several times
// on one open file; np.load then reads the first array).
// It refuses object arrays (pickles: never unpickled), structured dtypes, strings, complex numbers,
// datetimes, arrays with more than MAX_NDIM dimensions or more than MAX_ARRAY_BYTES of float64.
// readNpyHeader reads the header alone and unreadDtype names what a refused dtype holds: readNpz
// uses them to skip such a member of an .npz with why, reading the others.

import { MAX_ARRAY_BYTES, MAX_HEADER_BYTES, MAX_NDIM } from './limits.js';

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93 N U M P Y
const ARRAY_ALIGN = 64; // NumPy aligns the data to 64 bytes
const GROWTH_AXIS_MAX_DIGITS = 21; // NumPy's spare header room for a growing first axis
const MAX_LITERAL_DEPTH = 16;
const SAVE_FLOAT64 = "np.save('x.npy', np.asarray(x, dtype=np.float64))";

// ------------------------------------------------------------------------------------------------
// bytes in

/** The file's bytes as a Uint8Array (a Uint8Array, Node Buffer, other view or ArrayBuffer). */
export function asBytes(input, what = 'readNpy') {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) {
    return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }
  const got = input === null ? 'null' : typeof input;
  throw new Error(`${what} expects the file's bytes (a Uint8Array or ArrayBuffer), not ${got}.`);
}

function startsWith(bytes, prefix) {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** The header text and where the data starts, from the magic string and version. */
function readPreamble(bytes) {
  if (!startsWith(bytes, MAGIC)) {
    const zip = bytes[0] === 0x50 && bytes[1] === 0x4b; // 'PK'
    throw new Error(
      zip
        ? 'This is a zip archive (an .npz file), not a .npy file: load it as .npz.'
        : "This is not a .npy file: it does not start with NumPy's magic bytes " +
            "'\\x93NUMPY'. Save the array with np.save('name.npy', a).",
    );
  }
  if (bytes.length < 10) throw new Error('The .npy file ends inside its preamble (truncated).');
  const major = bytes[6];
  const minor = bytes[7];
  if (!(minor === 0 && major >= 1 && major <= 3)) {
    throw new Error(
      `Unsupported .npy format version ${major}.${minor} (this page reads 1.0, 2.0 and 3.0).`,
    );
  }
  const start = major === 1 ? 10 : 12;
  if (bytes.length < start) throw new Error('The .npy file ends inside its preamble (truncated).');
  const view = new DataView(bytes.buffer, bytes.byteOffset, start);
  const length = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  if (length > MAX_HEADER_BYTES) {
    throw new Error(
      `The .npy header claims ${length} bytes, more than the ${MAX_HEADER_BYTES} this page ` +
        'reads: the file is damaged or was not written by np.save.',
    );
  }
  if (start + length > bytes.length) {
    throw new Error(
      `The .npy header runs past the end of the file (it claims ${length} bytes; ` +
        `${bytes.length - start} follow): the file is truncated or damaged.`,
    );
  }
  const raw = bytes.subarray(start, start + length);
  return { header: decodeHeader(raw, major), dataStart: start + length };
}

/** Header bytes to text: latin-1 for versions 1.0 and 2.0, UTF-8 for 3.0. */
function decodeHeader(raw, major) {
  if (major === 3) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {
      throw new Error('The .npy header (format 3.0) is not valid UTF-8: the file is damaged.');
    }
  }
  let text = '';
  for (let i = 0; i < raw.length; i += 4096) {
    text += String.fromCharCode(...raw.subarray(i, i + 4096));
  }
  return text;
}

// ------------------------------------------------------------------------------------------------
// the header: a Python literal, parsed (never evaluated)

function headerError(p, what) {
  return new Error(`The .npy header is damaged: ${what} at character ${p.i + 1}.`);
}

function skipSpace(p) {
  while (p.i < p.s.length && /\s/.test(p.s[p.i])) p.i++;
}

const ESCAPES = { n: '\n', t: '\t', r: '\r', 0: '\0', '\\': '\\', "'": "'", '"': '"' };

/** A quoted Python string ('...' or "..."), simple backslash escapes. */
function parseString(p) {
  const quote = p.s[p.i++];
  let out = '';
  while (p.i < p.s.length && p.s[p.i] !== quote) {
    if (p.s[p.i] === '\n') throw headerError(p, 'a string runs over a line end');
    let c = p.s[p.i++];
    if (c === '\\' && p.i < p.s.length) {
      const e = p.s[p.i++];
      c = Object.hasOwn(ESCAPES, e) ? ESCAPES[e] : `\\${e}`;
    }
    out += c;
  }
  if (p.i >= p.s.length) throw headerError(p, 'a string is not closed');
  p.i++;
  return out;
}

/** A whole number (Python 2 headers may end it with 'L'); too long ones become unsafe numbers. */
function parseInteger(p) {
  const m = /^[-+]?\d+L?/.exec(p.s.slice(p.i, p.i + 64));
  if (!m || /^[\d.eE]/.test(p.s[p.i + m[0].length] ?? '')) {
    throw headerError(p, 'a number that is not a whole number');
  }
  p.i += m[0].length;
  return Number(m[0].replace('L', ''));
}

/** Items up to `close` (tuple ')', list ']'), comma-separated, trailing comma allowed. */
function parseItems(p, close, depth) {
  const items = [];
  let singleComma = false;
  for (;;) {
    skipSpace(p);
    if (p.s[p.i] === close) break;
    items.push(parseValue(p, depth));
    skipSpace(p);
    if (p.s[p.i] === ',') {
      p.i++;
      singleComma = true;
    } else if (p.s[p.i] !== close) {
      throw headerError(p, `expected ',' or '${close}'`);
    }
  }
  p.i++;
  return { items, singleComma };
}

function parseDict(p, depth) {
  const entries = new Map();
  for (;;) {
    skipSpace(p);
    if (p.s[p.i] === '}') break;
    if (p.s[p.i] !== "'" && p.s[p.i] !== '"') throw headerError(p, 'a dict key is not a string');
    const key = parseString(p);
    skipSpace(p);
    if (p.s[p.i++] !== ':') throw headerError(p, "expected ':' after a dict key");
    entries.set(key, parseValue(p, depth));
    skipSpace(p);
    if (p.s[p.i] === ',') p.i++;
    else if (p.s[p.i] !== '}') throw headerError(p, "expected ',' or '}'");
  }
  p.i++;
  return { kind: 'dict', entries };
}

const NAMES = { True: true, False: false, None: null };

/** One Python literal: string, number, True/False/None, tuple, list or dict. */
function parseValue(p, depth) {
  if (depth > MAX_LITERAL_DEPTH) throw headerError(p, 'nesting too deep');
  skipSpace(p);
  const c = p.s[p.i];
  if (c === "'" || c === '"') return parseString(p);
  if (c === '(' || c === '[') {
    p.i++;
    const { items, singleComma } = parseItems(p, c === '(' ? ')' : ']', depth + 1);
    // (x) without a comma is just x in Python; (x,) is a tuple
    if (c === '(' && items.length === 1 && !singleComma) return items[0];
    return { kind: c === '(' ? 'tuple' : 'list', items };
  }
  if (c === '{') {
    p.i++;
    return parseDict(p, depth + 1);
  }
  if (c !== undefined && /[-+\d]/.test(c)) return parseInteger(p);
  const word = /^[A-Za-z_]\w*/.exec(p.s.slice(p.i, p.i + 64))?.[0];
  if (word && Object.hasOwn(NAMES, word)) {
    p.i += word.length;
    return NAMES[word];
  }
  throw headerError(p, c === undefined ? 'it ends early' : `unexpected ${JSON.stringify(c)}`);
}

const HEADER_KEYS = ['descr', 'fortran_order', 'shape'];

/** {descr, fortranOrder, shape} from the header text. */
function parseHeader(text) {
  const p = { s: text, i: 0 };
  const dict = parseValue(p, 0);
  skipSpace(p);
  if (dict?.kind !== 'dict' || p.i < text.length) {
    throw new Error(
      "The .npy header is not NumPy's dict {'descr': ..., 'fortran_order': ..., 'shape': ...}: " +
        'the file is damaged or was not written by np.save.',
    );
  }
  for (const key of HEADER_KEYS) {
    if (!dict.entries.has(key)) {
      throw new Error(`The .npy header has no '${key}' entry: the file is damaged.`);
    }
  }
  for (const key of dict.entries.keys()) {
    if (!HEADER_KEYS.includes(key)) {
      // the key's escapes shown as escapes: the message stays one line whatever the key holds
      const shown = JSON.stringify(key).slice(1, -1);
      throw new Error(`The .npy header has an unknown entry '${shown}': the file is damaged.`);
    }
  }
  const fortranOrder = dict.entries.get('fortran_order');
  if (typeof fortranOrder !== 'boolean') {
    throw new Error("The .npy header's 'fortran_order' is not True or False: the file is damaged.");
  }
  const shape = parseShape(dict.entries.get('shape'));
  return { descr: dict.entries.get('descr'), fortranOrder, shape };
}

/** The shape tuple as whole numbers >= 0 (any number of them: see checkNdim). */
function parseShape(value) {
  if (value?.kind !== 'tuple') {
    throw new Error("The .npy header's 'shape' is not a tuple: the file is damaged.");
  }
  for (const n of value.items) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
      const shown = typeof n === 'number' ? String(n) : 'a non-number';
      throw new Error(
        `The .npy header's shape has ${shown} as a length; lengths are whole numbers ` +
          '>= 0 (the file is damaged).',
      );
    }
    if (!Number.isSafeInteger(n)) {
      throw new Error(
        `The .npy header's shape has an absurd length ${n.toPrecision(3)}: the file is damaged.`,
      );
    }
  }
  return value.items.slice();
}

// ------------------------------------------------------------------------------------------------
// dtypes

// The kinds of dtype this page does not read, by the descr's type character (after the byte order).
const UNREAD_KINDS = {
  O: 'object',
  S: 'bytes',
  a: 'bytes',
  U: 'text',
  V: 'void',
  c: 'complex',
  M: 'datetime',
  m: 'timedelta',
};
const UNREAD_WHAT = {
  bytes: 'byte strings',
  text: 'text strings',
  void: 'raw bytes (void)',
  complex: 'complex numbers',
  datetime: 'datetimes',
  timedelta: 'timedeltas',
};

/**
 * What a header's descr holds when this page does not read it: 'structured' (a list of fields),
 * 'object', 'bytes', 'text', 'void', 'complex', 'datetime', 'timedelta' or 'other' (float128,
 * int3...); null for the dtypes it reads. readNpz uses it to say why it skips a member.
 */
export function unreadDtype(descr) {
  if (typeof descr !== 'string') return 'structured';
  if (numericType(descr)) return null;
  return UNREAD_KINDS[descr.replace(/^[<>|=]/, '')[0]] ?? 'other';
}

/** Tell why a dtype is refused, with what to save instead. */
function refuseDescr(descr) {
  const kind = unreadDtype(descr);
  if (kind === 'structured') {
    throw new Error(
      'This .npy file holds a structured (record) array with named fields; save one numeric ' +
        "field at a time: np.save('x.npy', np.asarray(a['field'], dtype=np.float64)).",
    );
  }
  if (kind === 'object') {
    throw new Error(
      'Object arrays (dtype=object) hold pickled Python objects; they are never unpickled here ' +
        `— save a numeric array: ${SAVE_FLOAT64}`,
    );
  }
  const shown = JSON.stringify(descr.slice(0, 40));
  throw new Error(
    `This .npy file holds ${UNREAD_WHAT[kind] ?? 'a dtype this page does not read'} (dtype ${shown}); ` +
      `it reads floats, integers and booleans. Save a float64 array: ${SAVE_FLOAT64}`,
  );
}

const HIGH = 4294967296; // 2^32
// Each reader turns one entry at byte offset o of DataView v into a number (le: little-endian).
const READERS = {
  f8: (v, o, le) => v.getFloat64(o, le),
  f4: (v, o, le) => v.getFloat32(o, le),
  f2: (v, o, le) => halfToNumber(v.getUint16(o, le)),
  i1: (v, o) => v.getInt8(o),
  i2: (v, o, le) => v.getInt16(o, le),
  i4: (v, o, le) => v.getInt32(o, le),
  // hi * 2^32 is exact and the sum is rounded once: the float64 nearest the int64, as NumPy's
  i8: (v, o, le) =>
    le
      ? v.getInt32(o + 4, true) * HIGH + v.getUint32(o, true)
      : v.getInt32(o, false) * HIGH + v.getUint32(o + 4, false),
  u1: (v, o) => v.getUint8(o),
  u2: (v, o, le) => v.getUint16(o, le),
  u4: (v, o, le) => v.getUint32(o, le),
  u8: (v, o, le) =>
    le
      ? v.getUint32(o + 4, true) * HIGH + v.getUint32(o, true)
      : v.getUint32(o, false) * HIGH + v.getUint32(o + 4, false),
  b1: (v, o) => (v.getUint8(o) === 0 ? 0 : 1),
};

/** An IEEE half (1 sign, 5 exponent, 10 fraction bits) as a number, exactly. */
export function halfToNumber(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24; // zero or subnormal
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

/** {key, read, size, littleEndian} for a descr such as '<f8', '>i2', '|b1', '=u4', '?'; or null. */
function numericType(descr) {
  const m = /^([<>|=]?)([fiub?])(\d*)$/.exec(descr);
  const key = m && (m[2] === '?' && m[3] === '' ? 'b1' : m[2] + m[3]);
  if (!m || !Object.hasOwn(READERS, key)) return null;
  return { key, read: READERS[key], size: Number(key.slice(1)), littleEndian: m[1] !== '>' };
}

/** The reader of a descr this page reads; throws why not for any other. */
function parseDescr(descr) {
  const type = typeof descr === 'string' ? numericType(descr) : null;
  if (!type) refuseDescr(descr);
  return type;
}

// The dtypes a typed array converts exactly, for files in the machine's own (little) byte order.
const TYPED = {
  f8: Float64Array,
  f4: Float32Array,
  i1: Int8Array,
  i2: Int16Array,
  i4: Int32Array,
  u1: Uint8Array,
  u2: Uint16Array,
  u4: Uint32Array,
};
const HOST_LITTLE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** `count` entries of `type` from bytes[start...] as float64: a typed-array copy or DataView. */
function decode(bytes, start, count, type) {
  const Typed = TYPED[type.key];
  if (Typed && HOST_LITTLE && (type.littleEndian || type.size === 1)) {
    const copy = new Uint8Array(count * type.size); // aligned, its own buffer (Buffer.slice shares)
    copy.set(bytes.subarray(start, start + copy.length));
    return Typed === Float64Array
      ? new Float64Array(copy.buffer)
      : new Float64Array(new Typed(copy.buffer));
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, count * type.size);
  const data = new Float64Array(count);
  for (let i = 0; i < count; i++) data[i] = type.read(view, i * type.size, type.littleEndian);
  return data;
}

// ------------------------------------------------------------------------------------------------
// data

function shapeText(shape) {
  return `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
}

/** Refuse a shape of more than MAX_NDIM dimensions. */
export function checkNdim(shape) {
  if (shape.length > MAX_NDIM) {
    throw new Error(
      `The array has ${shape.length} dimensions; this page reads at most ${MAX_NDIM}.`,
    );
  }
}

/**
 * The header of a .npy file, read and checked as a Python literal (never evaluated), without its
 * data: { descr (verbatim), fortranOrder, shape (any number of axes), dataStart }. Throws an
 * Error with a one-line message when the preamble or the header is damaged.
 */
export function readNpyHeader(input) {
  const bytes = asBytes(input);
  const { header, dataStart } = readPreamble(bytes);
  return { ...parseHeader(header), dataStart };
}

/** The number of entries, refused (before any allocation) beyond MAX_ARRAY_BYTES of float64. */
export function checkedCount(shape) {
  if (shape.includes(0)) return 0;
  let count = 1;
  for (const n of shape) count *= n;
  if (count * 8 > MAX_ARRAY_BYTES) {
    const mib = MAX_ARRAY_BYTES / 2 ** 20;
    throw new Error(
      `The array's shape ${shapeText(shape)} means ${count.toPrecision(3)} entries ` +
        `(${(count * 8).toPrecision(3)} bytes as float64), over this page's limit of ${mib} ` +
        'MiB per array: save a smaller array.',
    );
  }
  return count;
}

/** Entries of C order from a Fortran-order (first axis fastest) array of the same shape. */
function fortranToC(src, shape) {
  const n = shape.length;
  const stride = new Array(n); // stride[k]: the distance in src between neighbours along axis k
  stride[0] = 1;
  for (let k = 1; k < n; k++) stride[k] = stride[k - 1] * shape[k - 1];
  const out = new Float64Array(src.length);
  const index = new Array(n).fill(0);
  let f = 0;
  for (let c = 0; c < out.length; c++) {
    out[c] = src[f];
    for (let k = n - 1; k >= 0; k--) {
      index[k]++;
      f += stride[k];
      if (index[k] < shape[k]) break;
      f -= stride[k] * shape[k];
      index[k] = 0;
    }
  }
  return out;
}

/**
 * Read a .npy file: { data: Float64Array (C order), shape, dtype: the header's descr verbatim,
 * fortranOrder }. Throws an Error with a one-line message on anything it cannot read.
 */
export function readNpy(input) {
  const bytes = asBytes(input);
  const { descr, fortranOrder, shape, dataStart } = readNpyHeader(bytes);
  checkNdim(shape);
  const type = parseDescr(descr);
  const count = checkedCount(shape);
  const need = count * type.size;
  const have = bytes.length - dataStart;
  if (have < need) {
    throw new Error(
      `The .npy file is truncated: its header promises shape ${shapeText(shape)} of ` +
        `'${descr}', ${need} bytes of data, but only ${have} follow the header.`,
    );
  }
  let data = decode(bytes, dataStart, count, type);
  if (fortranOrder && shape.length > 1) data = fortranToC(data, shape);
  return { data, shape, dtype: descr, fortranOrder };
}

// ------------------------------------------------------------------------------------------------
// writing (as np.save does for a C-order float64 array)

/** The shape checked for writing: whole numbers >= 0, at most MAX_NDIM, matching data. */
function checkWriteShape(data, shape) {
  if (!Array.isArray(shape) || shape.length > MAX_NDIM) {
    throw new Error(`writeNpy: shape must be an array of at most ${MAX_NDIM} lengths.`);
  }
  if (!shape.every((n) => Number.isSafeInteger(n) && n >= 0)) {
    throw new Error(`writeNpy: shape [${shape.join(', ')}] must hold whole numbers >= 0.`);
  }
  const numeric = Array.isArray(data)
    ? data.every((v) => typeof v === 'number')
    : ArrayBuffer.isView(data) &&
      !(
        data instanceof DataView ||
        data instanceof BigInt64Array ||
        data instanceof BigUint64Array
      );
  if (!numeric) throw new Error('writeNpy: data must be a Float64Array (or an array of numbers).');
  const count = checkedCount(shape);
  if (count !== data.length) {
    throw new Error(
      `writeNpy: shape ${shapeText(shape)} holds ${count} entries but data has ${data.length}.`,
    );
  }
}

/** The header bytes NumPy writes: magic, version, length, dict, spaces, '\n' (64-aligned). */
function headerBytes(shape) {
  let dict = `{'descr': '<f8', 'fortran_order': False, 'shape': ${shapeText(shape)}, }`;
  // NumPy leaves room for the first axis to grow to 21 digits
  const growth = shape.length > 0 ? GROWTH_AXIS_MAX_DIGITS - `${shape[0]}`.length : 0;
  dict += ' '.repeat(Math.max(0, growth));
  const hlen = dict.length + 1; // with the final '\n'
  const padded = (lengthBytes) => hlen + ARRAY_ALIGN - ((8 + lengthBytes + hlen) % ARRAY_ALIGN);
  const major = padded(2) <= 0xffff ? 1 : 2; // format 2.0 only when 1.0's 2-byte length overflows
  const start = major === 1 ? 10 : 12;
  const out = new Uint8Array(start + padded(start - 8));
  out.set(MAGIC);
  out[6] = major;
  const view = new DataView(out.buffer);
  if (major === 1) view.setUint16(8, out.length - start, true);
  else view.setUint32(8, out.length - start, true);
  for (let i = 0; i < dict.length; i++) out[start + i] = dict.charCodeAt(i);
  out.fill(0x20, start + dict.length, out.length - 1);
  out[out.length - 1] = 0x0a;
  return out;
}

/**
 * The bytes of a .npy file holding `data` (C order) with `shape`, as np.save writes a float64
 * array: dtype '<f8', C order, format 1.0 (2.0 only if the header needed more than 65535 bytes).
 */
export function writeNpy(data, shape) {
  checkWriteShape(data, shape);
  const header = headerBytes(shape);
  const out = new Uint8Array(header.length + data.length * 8);
  out.set(header);
  const view = new DataView(out.buffer, header.length);
  for (let i = 0; i < data.length; i++) view.setFloat64(i * 8, data[i], true);
  return out;
}
