// zip.js - reading the zip archives of .npz files, DOM-free: the central directory (zip64
// included) and each member's bytes, inflated with a ceiling (zip bombs) and CRC-checked.
//
// A zip ends with an end-of-central-directory record (EOCD, maybe followed by a comment); it
// points at the central directory, one record per member with its sizes, CRC-32 and the offset of
// its local header, after which the member's bytes follow. Archives over 4 GiB or 65,535 members
// (and NumPy, which always asks for it) use zip64: 64-bit sizes and offsets in an extra field
// (id 0x0001) and a zip64 EOCD found through a locator just before the EOCD.
// Sizes and CRC are taken from the central directory (the local header may hold zeros: members
// written to a stream put them in a data descriptor after the data).
// A damaged member (bad CRC, cut data) spoils only itself: its error carries `skip` (see
// memberError) and readNpz reads the others; a damaged directory or a zip bomb spoils the file.

import { Inflate } from 'fflate';
import { crc32 } from './crc32.js';

const SIG_LOCAL = 0x04034b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_END = 0x06054b50;
const SIG_END64 = 0x06064b50;
const SIG_LOCATOR64 = 0x07064b50;
const END_BYTES = 22; // the EOCD without its comment
const CENTRAL_BYTES = 46; // a central directory record without name, extra field and comment
const LOCAL_BYTES = 30; // a local header without name and extra field
// Deflate turns one input byte into at most 1032 output bytes, so inflating the input in steps
// of (bytes still promised) / 1032 (at least 16 KiB) never overshoots the promise by more than
// 16.5 MiB before the overshoot is caught.
const MAX_EXPANSION = 1032;
const MIN_STEP = 16384;
const MAX_STEP = 2 ** 20;

/** A member name for a message: control characters escaped, cut after 60 characters. */
export function quoted(name) {
  const cut = name.length > 60 ? `${name.slice(0, 60)}…` : name;
  return `'${JSON.stringify(cut).slice(1, -1)}'`;
}

function damaged(what) {
  return new Error(`The .npz (zip) file is damaged: ${what}.`);
}

const SAVE_AGAIN = 'save the file again (it was damaged in transfer or on disk)';

/**
 * An error of one member only, which readNpz skips (reading the others): `skip` is what the page
 * shows for it, { reason, fix }. Archive-level damage and the ceilings are plain Errors.
 */
function memberError(message, reason, fix) {
  return Object.assign(new Error(message), { skip: { reason, fix } });
}

/** A member's own damage (its header, its data, its CRC): the member is skipped. */
function damagedMember(what) {
  return memberError(`The .npz (zip) file is damaged: ${what}.`, `damaged: ${what}`, SAVE_AGAIN);
}

/** A little-endian unsigned 64-bit field as a number; beyond 2^53 it cannot be a real offset. */
function u64(view, at) {
  const high = view.getUint32(at + 4, true);
  if (high >= 2 ** 21) throw damaged('a 64-bit size or offset is absurdly large');
  return high * 2 ** 32 + view.getUint32(at, true);
}

/** The position of the EOCD: the last signature whose comment fits in the file. */
function findEnd(view) {
  const last = view.byteLength - END_BYTES;
  for (let at = last; at >= 0 && at >= last - 0xffff; at--) {
    if (
      view.getUint32(at, true) === SIG_END &&
      at + END_BYTES + view.getUint16(at + 20, true) <= view.byteLength
    ) {
      return at;
    }
  }
  const npy = view.byteLength >= 6 && view.getUint32(0, true) === 0x4d554e93; // \x93NUM
  throw new Error(
    npy
      ? 'This is a .npy file, not an .npz: load it as .npy.'
      : 'This is not an .npz file (a zip archive): it has no zip end record, so it is not a ' +
          "zip or it is truncated. Save arrays with np.savez('name.npz', X=X, Wq=Wq).",
  );
}

/** {count, offset, size} of the central directory, from the EOCD or the zip64 EOCD. */
function centralDirectory(view, end) {
  if (view.getUint16(end + 4, true) !== 0 || view.getUint16(end + 6, true) !== 0) {
    throw new Error('This .npz is split over several files (a multi-disk zip); join it first.');
  }
  let count = view.getUint16(end + 10, true);
  let size = view.getUint32(end + 12, true);
  let offset = view.getUint32(end + 16, true);
  let limit = end;
  const locator = end - 20;
  if (locator >= 0 && view.getUint32(locator, true) === SIG_LOCATOR64) {
    const at = u64(view, locator + 8);
    if (at + 56 > locator || view.getUint32(at, true) !== SIG_END64) {
      throw damaged('the zip64 end record is missing');
    }
    count = u64(view, at + 32);
    size = u64(view, at + 40);
    offset = u64(view, at + 48);
    limit = at;
  }
  if (offset + size > limit) throw damaged('the central directory lies outside the file');
  if (count * CENTRAL_BYTES > size) throw damaged('the central directory is too short');
  return { count, offset, size };
}

/** The zip64 extra field's values (id 0x0001) for the 32-bit fields that hold 0xFFFFFFFF. */
function applyZip64(view, at, length, entry) {
  for (let p = at; p + 4 <= at + length;) {
    const id = view.getUint16(p, true);
    const size = view.getUint16(p + 2, true);
    if (p + 4 + size > at + length) throw damaged('an extra field runs past its record');
    if (id === 0x0001) {
      let q = p + 4;
      for (const key of ['size', 'compressedSize', 'offset']) {
        if (entry[key] !== 0xffffffff) continue;
        if (q + 8 > p + 4 + size) throw damaged('a zip64 extra field is too short');
        entry[key] = u64(view, q);
        q += 8;
      }
    }
    p += 4 + size;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One central directory record at `at`: the member's entry and the next record's position. */
function readCentral(view, bytes, at, end) {
  if (at + CENTRAL_BYTES > end || view.getUint32(at, true) !== SIG_CENTRAL) {
    throw damaged('a central directory record is missing');
  }
  const nameLength = view.getUint16(at + 28, true);
  const extraLength = view.getUint16(at + 30, true);
  const next = at + CENTRAL_BYTES + nameLength + extraLength + view.getUint16(at + 32, true);
  if (next > end) throw damaged('a central directory record runs past its end');
  const entry = {
    flags: view.getUint16(at + 8, true),
    method: view.getUint16(at + 10, true),
    crc: view.getUint32(at + 16, true),
    compressedSize: view.getUint32(at + 20, true),
    size: view.getUint32(at + 24, true),
    offset: view.getUint32(at + 42, true),
  };
  const nameBytes = bytes.subarray(at + CENTRAL_BYTES, at + CENTRAL_BYTES + nameLength);
  try {
    entry.name = utf8.decode(nameBytes);
  } catch {
    throw damaged('a member name is not valid UTF-8');
  }
  applyZip64(view, at + CENTRAL_BYTES + nameLength, extraLength, entry);
  return { entry, next };
}

/**
 * The members of the zip archive `bytes`, in the central directory's order:
 * [{ name, flags, method, crc, compressedSize, size, offset }]. Throws on anything malformed.
 */
export function zipEntries(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cd = centralDirectory(view, findEnd(view));
  const entries = [];
  let at = cd.offset;
  for (let i = 0; i < cd.count; i++) {
    const { entry, next } = readCentral(view, bytes, at, cd.offset + cd.size);
    entries.push(entry);
    at = next;
  }
  return entries;
}

/** Where a member's data starts, from its local header (name and extra field lengths). */
function dataStart(view, entry) {
  const at = entry.offset;
  if (at + LOCAL_BYTES > view.byteLength || view.getUint32(at, true) !== SIG_LOCAL) {
    throw damagedMember(`the local header of ${quoted(entry.name)} is missing`);
  }
  const start = at + LOCAL_BYTES + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  if (start + entry.compressedSize > view.byteLength) {
    throw damagedMember(
      `the data of ${quoted(entry.name)} runs past the end of the file (truncated?)`,
    );
  }
  return start;
}

/** Inflate `data` into exactly `size` bytes, stopping the moment the output passes `size`. */
function inflateExactly(data, size, name) {
  const out = new Uint8Array(size);
  let filled = 0;
  const inflater = new Inflate((chunk) => {
    if (filled + chunk.length > size) {
      throw new Error(
        `The .npz member ${quoted(name)} inflates past the ${size} bytes its header promises ` +
          '(a damaged file or a zip bomb): refused.',
      );
    }
    out.set(chunk, filled);
    filled += chunk.length;
  });
  try {
    let p = 0;
    do {
      const room = Math.ceil((size - filled) / MAX_EXPANSION);
      const step = Math.min(MAX_STEP, Math.max(MIN_STEP, room));
      inflater.push(data.subarray(p, p + step), p + step >= data.length);
      p += step;
    } while (p < data.length);
  } catch (e) {
    if (e.message.startsWith('The .npz')) throw e;
    throw damagedMember(`${quoted(name)} is not valid deflate data (${e.message})`);
  }
  if (filled !== size) {
    throw damagedMember(`${quoted(name)} inflates to ${filled} bytes, not ${size}`);
  }
  return out;
}

/** Refuse a member whose uncompressed size (as its header promises it) is over `ceiling`. */
export function checkPromise(entry, ceiling) {
  if (entry.size > ceiling) {
    const mib = (x) => `${(x / 2 ** 20).toFixed(0)} MiB`;
    throw new Error(
      `The .npz member ${quoted(entry.name)} would be ${mib(entry.size)} uncompressed, over ` +
        `this page's ${mib(ceiling)} limit: save smaller arrays.`,
    );
  }
}

/**
 * The uncompressed bytes of one member (stored or deflated), refused before inflating when it
 * promises more than `ceiling` bytes, and CRC-checked. An error that concerns this member only
 * (damage, encryption, another compression method) carries `skip: { reason, fix }`; a ceiling
 * passed (a zip bomb) does not.
 */
export function memberBytes(bytes, entry, ceiling) {
  const { name, size, compressedSize } = entry;
  if (entry.flags & 1) {
    throw memberError(
      `The .npz member ${quoted(name)} is encrypted: save it without a password.`,
      'encrypted (password-protected)',
      'save it without a password',
    );
  }
  if (entry.method !== 0 && entry.method !== 8) {
    throw memberError(
      `The .npz member ${quoted(name)} uses zip compression method ${entry.method}; this page reads ` +
        'stored and deflated members, as np.savez and np.savez_compressed write them.',
      `compressed with zip method ${entry.method}, which this page does not read`,
      'save it with np.savez or np.savez_compressed',
    );
  }
  checkPromise(entry, ceiling);
  const start = dataStart(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), entry);
  const data = bytes.subarray(start, start + compressedSize);
  if (entry.method === 0 && compressedSize !== size) {
    throw damagedMember(
      `${quoted(name)} is stored with ${compressedSize} bytes but promises ${size}`,
    );
  }
  const out = entry.method === 0 ? data : inflateExactly(data, size, name);
  if (crc32(out) !== entry.crc) {
    throw memberError(
      `The .npz member ${quoted(name)} is corrupt: its CRC-32 check fails (the file was damaged ` +
        'in transfer or on disk).',
      'damaged: its CRC-32 check fails',
      SAVE_AGAIN,
    );
  }
  return out;
}
