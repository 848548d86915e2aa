// text.js - an array from what NumPy prints, DOM-free: parseNumpyText(text) reads the output of
// print(a) ([[1. 2.] [3. 4.]], entries separated by spaces) and repr(a) (array([[1., 2.], ...]),
// with commas, maybe ', dtype=float32' or ', shape=(2, 0)' before the closing parenthesis), over
// any number of lines; a 0-d array(3.5), a scalar np.float64(3.5) or a bare number; entries in
// fixed or scientific notation, nan, inf, -inf, -0., integers, True/False. Nested brackets give
// the shape; ragged nesting is an error, and so is summarised output ('...').
// It reads Python lists too ([0.6508, 0.6112], a.tolist(), a list of losses), and NumPy 2's
// scalar reprs as their entries: [np.float64(0.6508), np.float64(0.6112)], np.int64(3),
// np.float32(0.5), np.float16(...), np.uint8(...), np.True_, np.False_ (mixed freely).
//
// resolution[i] is what entry i's printed digits carry. An array (print(a), repr(a)) is printed
// with floatmode='maxprec': at most `precision` fractional digits, trailing zeros trimmed per
// entry. With D the most fractional digits any entry shows (mantissa digits in scientific
// notation): fixed notation -> 0.5e-D for every entry; scientific -> 0.5 * 10^(e - D) with e the
// entry's exponent; an integer array (no '.', no 'e' anywhere) -> 0; nan, inf and booleans -> 0.
// A list (commas outside array(...), or any scalar repr) prints each entry on its own (Python's
// repr(float), NumPy's scalar repr: the shortest digits that identify it), so D is each entry's
// own: 0.5 * 10^(e - d_i) with d_i its fractional digits; its integers and booleans -> 0.
// printedDtype: repr's dtype=..., else the least precise of np.float16(...), np.float32(...)
// entries (np.float64 says nothing the default does not), else null.

import { MAX_ARRAY_BYTES, MAX_NDIM } from './limits.js';

const MAX_ENTRIES = MAX_ARRAY_BYTES / 8;
const SUMMARISED =
  "This array was printed in summarised form ('...'), so its middle entries are missing. In " +
  'your notebook run np.set_printoptions(threshold=np.inf) and print it again, or save it with ' +
  "np.save('name.npy', a) and load the file here.";
const PASTE = 'paste exactly what print(a) or repr(a) shows';

// one token: punctuation | a number (not glued to letters, digits or dots) | a word (nan, inf,
// True, array, dtype, float32, np.float64...)
const TOKEN =
  /\s*(?:([[\](),=])|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])|([-+]?[A-Za-z_][\w.]*))/y;
const SPACE = /\s*/y;
const WORD_VALUES = { nan: NaN, inf: Infinity, True: 1, False: 0, 'np.True_': 1, 'np.False_': 0 };
// NumPy 2's scalar reprs that hold a number: np.float64(0.5), np.int64(3), np.uint8(7)...
const SCALAR_CALL = /^np\.(float(16|32|64)|u?int(8|16|32|64))$/;

/** A pull lexer over `text`: peek() and next() give {type: punct|'num'|'word'|'end', raw, at}. */
function lexer(text) {
  let pos = 0;
  let ahead = null;
  const read = () => {
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) {
      SPACE.lastIndex = pos;
      const at = pos + SPACE.exec(text)[0].length;
      if (at >= text.length) return { type: 'end', raw: '', at };
      throw unexpected(text, { raw: text[at], at });
    }
    pos = TOKEN.lastIndex;
    const at = pos - m[0].trimStart().length;
    if (m[1]) return { type: m[1], raw: m[1], at };
    return { type: m[2] ? 'num' : 'word', raw: m[2] ?? m[3], at };
  };
  return {
    text,
    peek: () => (ahead ??= read()),
    next() {
      const t = ahead ?? read();
      ahead = null;
      return t;
    },
  };
}

function unexpected(text, token) {
  if (token.type === 'end') {
    return new Error(`The text ends early (a bracket or parenthesis is never closed): ${PASTE}.`);
  }
  const before = text.slice(0, token.at);
  const line = before.split('\n').length;
  const column = token.at - before.lastIndexOf('\n');
  const shown = JSON.stringify(token.raw.slice(0, 20));
  return new Error(`Unexpected ${shown} at line ${line}, column ${column}: ${PASTE}.`);
}

/** An entry's value and what its digits say: fractional digits, exponent (sci) or integer. */
function entryOf(token) {
  const { raw } = token;
  if (token.type === 'word') {
    const word = raw.replace(/^[-+]/, '');
    if (!Object.hasOwn(WORD_VALUES, word) || (raw !== word && word !== 'inf' && word !== 'nan')) {
      return null;
    }
    const value = WORD_VALUES[word];
    return { value: raw[0] === '-' ? -value : value, digits: 0, exponent: null, exact: true };
  }
  const [mantissa, exponent] = raw.toLowerCase().split('e');
  const dot = mantissa.indexOf('.');
  return {
    value: Number(raw),
    digits: dot < 0 ? 0 : mantissa.length - dot - 1,
    exponent: exponent === undefined ? null : Number(exponent),
    exact: dot < 0 && exponent === undefined, // an integer
  };
}

/** The state of a parse: entries, and per bracket depth the kind of items and their count. */
function newState() {
  return {
    values: [],
    exponents: [],
    digits: [],
    exact: [],
    maxDigits: 0,
    integers: 0,
    kinds: [],
    lengths: [],
    commas: false, // a comma between items: a list, or repr's array(...)
    scalars: new Set(), // the dtypes of NumPy 2 scalar reprs among the entries
  };
}

const RAGGED =
  'The nested brackets are ragged (rows of different lengths, or numbers next to rows): ' +
  'every row of an array has the same length.';

function addEntry(st, entry) {
  if (st.values.length >= MAX_ENTRIES) {
    throw new Error(`The text holds more than ${MAX_ENTRIES} entries, over this page's limit.`);
  }
  st.values.push(entry.value);
  st.exponents.push(entry.exponent);
  st.digits.push(entry.digits);
  st.exact.push(entry.exact);
  st.maxDigits = Math.max(st.maxDigits, entry.digits);
  if (entry.exact && Number.isFinite(entry.value)) st.integers++; // an integer or a boolean
}

function setKind(st, depth, kind) {
  if (st.kinds[depth] !== undefined && st.kinds[depth] !== kind) throw new Error(RAGGED);
  st.kinds[depth] = kind;
}

/** A NumPy 2 scalar repr's entry, its name `call` read: (number) or (nan), (inf), (-inf). */
function scalarEntry(lx, st, call) {
  if (lx.next().type !== '(') throw unexpected(lx.text, call);
  const t = lx.next();
  const entry = t.type === 'num' || /^[-+]?(nan|inf)$/.test(t.raw) ? entryOf(t) : null;
  if (!entry) throw unexpected(lx.text, t);
  const close = lx.next();
  if (close.type !== ')') throw unexpected(lx.text, close);
  st.scalars.add(call.raw.slice(3));
  return entry;
}

/** A value: a number, or a bracketed list of values (the '[' not yet read). */
function parseValue(lx, st, depth) {
  const t = lx.next();
  if (t.type === '[') {
    setKind(st, depth, 'list');
    parseList(lx, st, depth + 1);
    return;
  }
  if (t.type === 'word' && SCALAR_CALL.test(t.raw)) {
    setKind(st, depth, 'num');
    addEntry(st, scalarEntry(lx, st, t));
    return;
  }
  const entry = t.type === 'num' || t.type === 'word' ? entryOf(t) : null;
  if (!entry) throw unexpected(lx.text, t);
  setKind(st, depth, 'num');
  addEntry(st, entry);
}

/** Items after a '[' up to its ']': separated by commas (repr) or only by spaces (print). */
function parseList(lx, st, depth) {
  if (depth > MAX_NDIM) {
    throw new Error(`The array has more than ${MAX_NDIM} levels of brackets; at most ${MAX_NDIM}.`);
  }
  let count = 0;
  let separated = true; // a comma may follow an item, never start the list or repeat
  for (;;) {
    const t = lx.peek();
    if (t.type === ']') break;
    if (t.type === ',') {
      if (separated) throw unexpected(lx.text, t);
      lx.next();
      separated = true;
      st.commas = true;
      continue;
    }
    parseValue(lx, st, depth);
    count++;
    separated = false;
  }
  lx.next();
  if (st.lengths[depth] !== undefined && st.lengths[depth] !== count) throw new Error(RAGGED);
  st.lengths[depth] = count;
}

/** The keyword arguments of array(...): ', dtype=float32', ', shape=(2, 0)'. */
function parseKeywords(lx) {
  const keywords = {};
  while (lx.peek().type === ',') {
    lx.next();
    const key = lx.next();
    if (key.type !== 'word' || lx.next().type !== '=') throw unexpected(lx.text, key);
    if (key.raw === 'shape') {
      if (lx.next().type !== '(') throw unexpected(lx.text, key);
      const shape = [];
      for (let t = lx.next(); t.type !== ')'; t = lx.next()) {
        if (t.type === 'num' && /^\d+$/.test(t.raw)) shape.push(Number(t.raw));
        else if (t.type !== ',') throw unexpected(lx.text, t);
      }
      keywords.shape = shape;
    } else {
      const value = lx.next();
      if (value.type !== 'word') throw unexpected(lx.text, value);
      keywords[key.raw] = value.raw;
    }
  }
  return keywords;
}

/** A word that is an entry (np.True_) or starts one (np.float64): not a call of array(...). */
const entryWord = (raw) => SCALAR_CALL.test(raw) || Object.hasOwn(WORD_VALUES, raw);

/**
 * The whole text: array(value, keywords) | np.array(value, keywords) | value (a list, a number,
 * a scalar repr np.float64(3.5)). Returns { keywords, array: whether it is array(...) }.
 */
function parseTop(lx, st) {
  const first = lx.peek();
  let keywords = {};
  // array(...), a hand-typed np.array(...) (or np.asarray...: np. and a name)
  const call =
    first.type === 'word' && /^(array|np\.[A-Za-z_]\w*)$/.test(first.raw) && !entryWord(first.raw);
  if (call) {
    lx.next();
    if (lx.next().type !== '(') throw unexpected(lx.text, first);
    parseValue(lx, st, 0);
    if (/^(np\.)?array$/.test(first.raw)) keywords = parseKeywords(lx);
    const close = lx.next();
    if (close.type !== ')') throw unexpected(lx.text, close);
  } else {
    parseValue(lx, st, 0);
  }
  const end = lx.next();
  if (end.type !== 'end') throw unexpected(lx.text, end);
  return { keywords, array: call };
}

/** A list's resolution: each entry's own digits (see the top of this file). */
function listResolution(st) {
  return Float64Array.from(st.values, (v, i) =>
    st.exact[i] || !Number.isFinite(v)
      ? 0
      : Number(`5e${(st.exponents[i] ?? 0) - st.digits[i] - 1}`),
  );
}

/** Per-entry resolution from the printed digits (see the top of this file). */
function resolutionOf(st, list) {
  if (list) return listResolution(st);
  const resolution = new Float64Array(st.values.length);
  const finite = st.values.filter((v) => Number.isFinite(v)).length;
  if (st.integers === finite) return resolution; // an integer array (or no finite entry)
  st.values.forEach((v, i) => {
    // 0.5 * 10^(e - D), correctly rounded: the literal 5e(e - D - 1); nan and inf: 0
    const e = st.exponents[i] ?? 0;
    if (Number.isFinite(v)) resolution[i] = Number(`5e${e - st.maxDigits - 1}`);
  });
  return resolution;
}

/**
 * What the text says the array was computed in: repr's dtype=float32 (float16, float64), else
 * the least precise float scalar repr among the entries (np.float16, np.float32), else null.
 */
function printedDtype(keywords, st) {
  if (/^(float16|float32|float64)$/.test(keywords.dtype)) return keywords.dtype;
  return ['float16', 'float32'].find((d) => st.scalars.has(d)) ?? null;
}

/**
 * Read an array from NumPy's printed text: { data: Float64Array (C order), shape, dtype: 'text',
 * resolution: Float64Array, printedDtype: 'float32' | 'float16' | 'float64' | null (repr's
 * dtype=..., or np.float32(...) / np.float16(...) entries; null when the text does not say) }.
 * A list of NumPy 2 scalar reprs or of Python floats ([np.float64(0.65), 0.61]) is a 1-D array.
 * Throws an Error with a one-line message on anything it cannot read.
 */
export function parseNumpyText(text) {
  if (typeof text !== 'string') throw new Error('parseNumpyText expects the printed text.');
  if (text.includes('...') || text.includes('…')) throw new Error(SUMMARISED);
  if (text.trim() === '') throw new Error(`The text is empty: ${PASTE}.`);
  if (/[\d.]j\b/.test(text)) {
    throw new Error('Complex numbers (like 1.+2.j) are not read here: print a.real and a.imag.');
  }
  const st = newState();
  const { keywords, array } = parseTop(lexer(text), st);
  let shape = st.lengths.slice(1);
  if (keywords.shape) {
    if (keywords.shape.reduce((a, b) => a * b, 1) !== st.values.length) {
      throw new Error(`shape=(${keywords.shape.join(', ')}) does not match the entries printed.`);
    }
    shape = keywords.shape;
  }
  return {
    data: Float64Array.from(st.values),
    shape,
    dtype: 'text',
    resolution: resolutionOf(st, !array && (st.commas || st.scalars.size > 0)),
    printedDtype: printedDtype(keywords, st),
  };
}
