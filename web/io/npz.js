// npz.js - NumPy's .npz files (np.savez, np.savez_compressed): loadNpz, readNpz and writeNpz,
// DOM-free.
//
// An .npz is a zip archive with one .npy file per array, named '<name>.npy'. loadNpz reads stored
// and deflated members (zip64 too, which np.savez always asks for), checks every CRC-32, and
// returns the arrays in the archive's order with the members it skipped. Members whose names do
// not end in '.npy' are left out (np.load would return them as raw bytes); an archive without any
// .npy member is refused. Names are plain strings (the page shows them as text, never as markup).
//
// One member that cannot be used does not spoil the others (a saved cache dict beside X and the
// weights): it is skipped with why and what to save instead. Skipped: an object array (a pickle,
// never unpickled), a dtype the page does not read (complex, strings, structured...), more than
// MAX_NDIM axes, a name longer than MAX_NAME_LENGTH or with a control character, an earlier member
// of a name used twice (np.load reads the last one), a member damaged on its own (CRC, cut data),
// encrypted or compressed another way. The whole file is refused when it is not a zip, its
// directory is damaged, a member passes a ceiling (MAX_NPY_BYTES per member and MAX_ARRAY_BYTES
// per array, MAX_NPZ_BYTES for all: checked before inflating or allocating, so zip bombs and
// 10^9 x 10^9 headers stop), or when every .npy member is skipped.

import { zipSync } from 'fflate';
import { MAX_NAME_LENGTH, MAX_NDIM, MAX_NPY_BYTES, MAX_NPZ_BYTES } from './limits.js';
import { asBytes, checkedCount, readNpy, readNpyHeader, unreadDtype, writeNpy } from './npy.js';
import { checkPromise, memberBytes, quoted, zipEntries } from './zip.js';

const SAVEZ = "np.savez('mha_check.npz', "; // the start of a save line, as the page's own

/** True if `name` holds a control character (C0, DEL or C1). */
function hasControl(name) {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** Refuse a name the page should not show: too long, or with control characters. */
function checkName(name, what) {
  if (name.length > MAX_NAME_LENGTH) {
    throw new Error(
      `${what} ${quoted(name)} is ${name.length} characters long; names of at most ` +
        `${MAX_NAME_LENGTH} are accepted.`,
    );
  }
  if (hasControl(name)) {
    throw new Error(`${what} ${quoted(name)} contains control characters: rename it.`);
  }
}

/** Set result[name] = value as an own property, even for names like '__proto__'. */
function put(result, name, value) {
  Object.defineProperty(result, name, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** The archive's .npy members, their sizes within the ceilings (else the file is refused). */
function npyMembers(entries) {
  const members = entries.filter((e) => e.name.endsWith('.npy'));
  if (members.length === 0) {
    const names = entries.slice(0, 5).map((e) => quoted(e.name));
    throw new Error(
      `This zip holds no .npy arrays (${entries.length ? `members: ${names.join(', ')}` : 'it is empty'}` +
        "): save the arrays with np.savez('name.npz', X=X, Wq=Wq).",
    );
  }
  let total = 0;
  for (const m of members) {
    checkPromise(m, MAX_NPY_BYTES);
    total += m.size;
  }
  if (total > MAX_NPZ_BYTES) {
    throw new Error(
      `The .npz arrays would take ${(total / 2 ** 20).toFixed(0)} MiB uncompressed, over this ` +
        `page's ${(MAX_NPZ_BYTES / 2 ** 20).toFixed(0)} MiB limit: save fewer or smaller arrays.`,
    );
  }
  return members;
}

/** Why a member's name cannot be used ({ reason, fix }), or null. */
function nameSkip(name) {
  if (name.length > MAX_NAME_LENGTH) {
    return {
      reason: `its name is ${name.length} characters long (names of at most ${MAX_NAME_LENGTH} are read)`,
      fix: 'save it under a shorter name',
    };
  }
  if (hasControl(name)) {
    return {
      reason: 'its name contains control characters',
      fix: `save it under a plain name, e.g. ${SAVEZ}att=att)`,
    };
  }
  return null;
}

const DUPLICATE = {
  reason: 'a later member has the same name (np.load reads the last one, and so does this page)',
  fix: 'save each array under its own name',
};

/** The member's name where a save line needs a Python name: itself if it is one, else 'a'. */
const ident = (name) => (/^[A-Za-z_]\w*$/.test(name) ? name : 'a');

/** An object array: one pickled object (shape (): a dict, mostly) or several (a list). */
function objectSkip(a, shape) {
  if (shape.length === 0) {
    return {
      reason: 'an object array (a pickled Python object, never unpickled here)',
      fix: `save a dict as its arrays: ${SAVEZ}**${a})`,
    };
  }
  const n = shape.reduce((x, y) => x * y, 1);
  return {
    reason: `an object array of ${n} Python object${n === 1 ? '' : 's'} (pickled, never unpickled here)`,
    fix: `save a list of arrays as one array each: ${SAVEZ}*${a}), or stack arrays of one shape: ${SAVEZ}${a}=np.stack(${a}))`,
  };
}

/** Why a member of a dtype this page does not read (kind: unreadDtype's) is skipped. */
function dtypeSkip(kind, { descr, shape }, name) {
  const a = ident(name);
  const dtype = typeof descr === 'string' ? `dtype ${quoted(descr.slice(0, 40))}` : '';
  if (kind === 'object') return objectSkip(a, shape);
  if (kind === 'complex') {
    return {
      reason: `complex numbers (${dtype})`,
      fix: `save the real part: ${SAVEZ}${a}=${a}.real)`,
    };
  }
  if (kind === 'text' || kind === 'bytes') {
    return { reason: `strings (${dtype}), not numbers`, fix: 'nothing to check: leave it out' };
  }
  if (kind === 'structured') {
    return {
      reason: 'a structured array (named fields)',
      fix: `save each field as its own array: ${SAVEZ}f=${a}['f'])`,
    };
  }
  return {
    reason: `a dtype this page does not read (${dtype})`,
    fix: `save it as float64: ${SAVEZ}${a}=np.asarray(${a}, dtype=np.float64))`,
  };
}

/** A member whose .npy cannot be read (damaged header or data): skipped. */
function unreadable(error) {
  return {
    reason: `not a readable .npy (${error.message.replace(/\.$/, '')})`,
    fix: 'save the file again with np.savez',
  };
}

/** Read one member: { array } or { skip: { reason, fix } }; throws when it passes a ceiling. */
function readMember(bytes, member, name) {
  let raw;
  let header;
  try {
    raw = memberBytes(bytes, member, MAX_NPY_BYTES);
  } catch (e) {
    if (e.skip) return { skip: e.skip };
    throw e; // a zip bomb: the file
  }
  try {
    header = readNpyHeader(raw);
  } catch (e) {
    return { skip: unreadable(e) };
  }
  const kind = unreadDtype(header.descr);
  if (kind) return { skip: dtypeSkip(kind, header, name) };
  const ndim = header.shape.length;
  if (ndim > MAX_NDIM) {
    return {
      skip: {
        reason: `${ndim} dimensions (this page reads at most ${MAX_NDIM})`,
        fix: `save it with at most ${MAX_NDIM} axes (reshape it)`,
      },
    };
  }
  try {
    checkedCount(header.shape); // a header promising too many entries: the file, before allocating
  } catch (e) {
    throw new Error(`In the .npz, array ${quoted(name)}: ${e.message}`, { cause: e });
  }
  try {
    return { array: readNpy(raw) };
  } catch (e) {
    return { skip: unreadable(e) }; // data shorter than its header says
  }
}

/** The one-line error of an archive whose every .npy member is skipped. */
function noneReadable(skipped) {
  const n = skipped.length;
  const shown = skipped.slice(0, 4).map((s) => `${quoted(s.name)}: ${s.reason}; ${s.fix}.`);
  if (n > 4) shown.push(`(${n - 4} more)`);
  const all = n === 1 ? 'its one array is skipped' : `all ${n} are skipped`;
  return `No array in this .npz can be read (${all}): ${shown.join(' ')}`;
}

/** loadNpz, with `what` naming the function in the message for input that is not bytes. */
function load(input, what) {
  const bytes = asBytes(input, what);
  const members = npyMembers(zipEntries(bytes));
  const last = new Map(members.map((m, i) => [m.name, i]));
  const arrays = {};
  const skipped = [];
  members.forEach((member, i) => {
    const name = member.name.slice(0, -4);
    let skip = last.get(member.name) === i ? nameSkip(name) : DUPLICATE;
    if (!skip) {
      const got = readMember(bytes, member, name);
      if (got.array) put(arrays, name, got.array);
      skip = got.skip;
    }
    if (skip) skipped.push({ name, ...skip });
  });
  if (skipped.length === members.length) throw new Error(noneReadable(skipped));
  return { arrays, skipped };
}

/**
 * Read an .npz file: { arrays: { [name]: { data, shape, dtype, fortranOrder } } in the archive's
 * order (name without '.npy'), skipped: [{ name, reason, fix }] } for the members that cannot be
 * used (see the top of this file: why, and what to save instead). Throws an Error with a one-line
 * message when the file as a whole cannot be read, or none of its arrays can.
 */
export function loadNpz(input) {
  return load(input, 'loadNpz');
}

/**
 * Read an .npz file: { [name]: { data, shape, dtype, fortranOrder } } in the archive's order
 * (name without '.npy'), without the members loadNpz skips. Throws an Error with a one-line
 * message when the file cannot be read or none of its arrays can.
 */
export function readNpz(input) {
  return load(input, 'readNpz').arrays;
}

/**
 * The bytes of an .npz holding `arrays` ({ [name]: { data, shape } }), each written by writeNpy;
 * members stored (as np.savez) or, with { compress: true }, deflated (as np.savez_compressed).
 */
export function writeNpz(arrays, { compress = false } = {}) {
  if (arrays === null || typeof arrays !== 'object' || Object.keys(arrays).length === 0) {
    throw new Error(
      'writeNpz expects an object { name: { data, shape } } with at least one array.',
    );
  }
  const files = Object.create(null);
  for (const [name, array] of Object.entries(arrays)) {
    checkName(name, 'writeNpz: the name');
    if (name === '') throw new Error('writeNpz: an array name is empty.');
    try {
      files[`${name}.npy`] = writeNpy(array?.data, array?.shape);
    } catch (e) {
      throw new Error(`writeNpz: array ${quoted(name)}: ${e.message}`, { cause: e });
    }
  }
  // a fixed time stamp (1980-01-01, zip's first) makes the same arrays give the same bytes
  return zipSync(files, { level: compress ? 6 : 0, mtime: new Date(1980, 0, 1) });
}
