// npz.js - NumPy's .npz files (np.savez, np.savez_compressed): readNpz and writeNpz, DOM-free.
//
// An .npz is a zip archive with one .npy file per array, named '<name>.npy'. readNpz reads stored
// and deflated members (zip64 too, which np.savez always asks for), checks every CRC-32, and
// returns { [name]: readNpy result } in the archive's order. Members whose names do not end in
// '.npy' are left out (np.load would return them as raw bytes); an archive without any .npy member
// is refused. Names are plain strings (the page shows them as text, never as markup); a name
// longer than MAX_NAME_LENGTH, with a control character, or twice in one archive is refused.
// Ceilings, checked before inflating: MAX_NPY_BYTES per member, MAX_NPZ_BYTES for all of them.

import { zipSync } from 'fflate';
import { MAX_NAME_LENGTH, MAX_NPY_BYTES, MAX_NPZ_BYTES } from './limits.js';
import { asBytes, readNpy, writeNpy } from './npy.js';
import { checkPromise, memberBytes, quoted, zipEntries } from './zip.js';

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

/** The archive's .npy members, names checked, sizes within the ceilings. */
function npyMembers(entries) {
  const members = entries.filter((e) => e.name.endsWith('.npy'));
  if (members.length === 0) {
    const names = entries.slice(0, 5).map((e) => quoted(e.name));
    throw new Error(
      `This zip holds no .npy arrays (${entries.length ? `members: ${names.join(', ')}` : 'it is empty'}` +
        "): save the arrays with np.savez('name.npz', X=X, Wq=Wq).",
    );
  }
  const seen = new Set();
  let total = 0;
  for (const m of members) {
    const name = m.name.slice(0, -4);
    checkName(name, 'The .npz array name');
    if (seen.has(name)) throw new Error(`The .npz holds two arrays named ${quoted(name)}.`);
    seen.add(name);
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

/**
 * Read an .npz file: { [name]: { data, shape, dtype, fortranOrder } } in the archive's order
 * (name without '.npy'). Throws an Error with a one-line message on anything it cannot read.
 */
export function readNpz(input) {
  const bytes = asBytes(input, 'readNpz');
  const result = {};
  for (const member of npyMembers(zipEntries(bytes))) {
    const name = member.name.slice(0, -4);
    const raw = memberBytes(bytes, member, MAX_NPY_BYTES);
    try {
      put(result, name, readNpy(raw));
    } catch (e) {
      throw new Error(`In the .npz, array ${quoted(name)}: ${e.message}`, { cause: e });
    }
  }
  return result;
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
